"""Server-initiated requests: sampling, elicitation and roots, in both eras.

A legacy server asks by a JSON-RPC request; a modern one by an entry of an
``input_required`` result (MRTR). Both are served here, identically, by the
host's handlers, behind the gates the host configured in ``Limits``:

* sampling: a depth gate (a request arriving while a depth-n handler has a
  call in flight is depth n+1), a concurrency cap, a token ceiling (the host
  grants min(asked, cap)), and a conversation size bound (refused, never
  trimmed);
* elicitation (served by :mod:`elicitation`): the prompt, URL and id
  bounded (refused, never trimmed), the form's schema bounded, the answer
  validated against it before it is sent, and ``timeouts.elicitation`` on
  the person answering;
* roots: at most 64, ``file://`` only, asked afresh every time.

Every request, of any kind, is first admitted by the binding's one
:class:`~.inbound_pool.InboundPool`: at most ``Limits.max_inbound_requests``
handler calls at once; one past that is refused at once (legacy: the JSON-RPC
error :data:`~.inbound_pool.BUSY_CODE`; an MRTR round: the call fails
``limit_exceeded``), never queued and never given a thread.

Threads:
    Each request runs its handler on a thread of the pool,
    ``mcpclient-handler-<binding>``, never on the reader or the event lane.
    A handler that overruns its deadline is abandoned: the server gets its
    answer (``cancel``, or an error) at the deadline, the thread is renamed
    ``mcpclient-abandoned-<binding>`` until the handler returns (its slot in
    the pool stays taken meanwhile) and its late answer dropped.

Locks:
    ``_lock`` guards the sampling counters and the in-flight depths; the
    pool has its own.

Shutdown:
    :meth:`Interactions.close` refuses new requests and closes the pool;
    running handlers are not waited for.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._core.limits import utf8_len
from mcpclient._internal.client.inbound.elicitation import Elicitation, refuse_unsupported
from mcpclient._internal.client.inbound.inbound_pool import BUSY_CODE, InboundPool, Ticket
from mcpclient._internal.client.inbound.refusals import INTERNAL as _INTERNAL
from mcpclient._internal.client.inbound.refusals import INVALID_PARAMS as _INVALID_PARAMS
from mcpclient._internal.client.inbound.refusals import RefusedError, Served, call_handler
from mcpclient._internal.client.inbound.refusals import nothing as _nothing
from mcpclient._internal.wire.interactions import (
    SamplingParams,
    read_sampling_params,
    sampling_answer,
)
from mcpclient._internal.wire.tasks import related_task_of
from mcpclient.calls import CancelToken
from mcpclient.definition import Limits, Timeouts
from mcpclient.errors import FailureClass, InteractionError
from mcpclient.events import (
    ElicitationResolved,
    Event,
    SamplingRequested,
    SamplingResolved,
)
from mcpclient.handlers import (
    ElicitAction,
    ElicitMode,
    HandlerContext,
    Handlers,
    Root,
    SampleMessage,
    SampleOutcome,
    SampleRequest,
    SampleResult,
    SampleRole,
)

__all__ = ["Interactions", "RefusedError", "Responder", "current_depth"]

_log = logging.getLogger(__name__)
MAX_ROOTS = 64
_DENIED = -1  # the code the spec's examples use for a refused sampling request
#: The spec's own words for a sampling request the user (the host) refused.
_USER_REJECTED = "User rejected sampling request"

_context = threading.local()


def _related_task(params: dict[str, Any]) -> dict[str, Any] | None:
    """The related-task ``_meta`` entry of a server request (2025-11-25 tasks), or None."""
    return related_task_of(params)


class Responder(Protocol):
    """Where a server request's one answer goes: the session, or a client-hosted task."""

    def respond(
        self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
    ) -> None: ...


def current_depth() -> int:
    """The handler depth of the calling thread (0 outside any handler)."""
    return int(getattr(_context, "depth", 0))


def _text_of(content: Any) -> str | None:
    """The text of a sampling content block (or a list of text blocks), else None."""
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        parts.append(text)
    return "".join(parts)


#: Seconds past a handler's deadline that a blocking caller waits for the
#: watcher to settle it before it does so itself.
_LATE = 0.5


class Serving(concurrent.futures.Future[Served]):
    """The Future of :meth:`Interactions.start`: its ``deadline``, and ``expire``
    (what the watcher runs at the deadline; a no-op once settled)."""

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self.deadline = deadline
        self.expire: Callable[[], None] = _nothing


class Interactions:
    """Serves a binding's server-initiated requests. Thread safety: any thread."""

    def __init__(
        self,
        binding: str,
        handlers: Handlers,
        limits: Limits,
        timeouts: Timeouts,
        emit: Callable[[Event], int],
        *,
        version: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._binding = binding
        self._version = version  # the negotiated protocol version, once known
        self._handlers = handlers
        self._limits = limits
        self._timeouts = timeouts
        self._emit = emit
        self._elicitation = Elicitation(binding, handlers, limits, emit)
        self._lock = threading.Lock()
        self._sampling = 0
        self._outbound: collections.Counter[int] = collections.Counter()
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []
        #: The one bounded pool every server request's handler runs in.
        self.pool = InboundPool(binding, limits.max_inbound_requests)

    def close(self) -> None:
        """Refuse new requests (handlers still running are not waited for), run the hooks."""
        with self._lock:
            self._closed = True
            hooks, self._close_hooks = self._close_hooks, []
        self.pool.close()
        for hook in hooks:
            hook()

    def busy(self, method: str) -> RefusedError:
        """The refusal of a request that found the pool full."""
        return RefusedError(
            BUSY_CODE,
            f"too many server requests at once: this client serves at most"
            f" {self.pool.limit} (Limits.max_inbound_requests); {method[:60]} refused",
            FailureClass.LIMIT_EXCEEDED,
        )

    def add_close_hook(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` at :meth:`close` (client-hosted tasks end with the binding)."""
        with self._lock:
            self._close_hooks.append(hook)

    # -- depth tracking ---------------------------------------------------

    @contextlib.contextmanager
    def outbound(self) -> Iterator[None]:
        """Mark a call made from a handler thread as in flight, at its depth."""
        depth = current_depth()
        if depth == 0:
            yield
            return
        with self._lock:
            self._outbound[depth] += 1
        try:
            yield
        finally:
            with self._lock:
                self._outbound[depth] -= 1
                if self._outbound[depth] <= 0:
                    del self._outbound[depth]

    def arrival_depth(self) -> int:
        """The depth of a request arriving now (1 + the deepest handler call in flight)."""
        with self._lock:
            return max(self._outbound, default=0) + 1

    # -- running handlers -------------------------------------------------

    def run(
        self, method: str, params: dict[str, Any], cancel: CancelToken, deadline: float
    ) -> Served:
        """Serve one request on a handler thread; block until answered or ``deadline``.

        Raises:
            RefusedError: refused by a gate (the pool full among them), the
                handler failed, or time ran out.
        """
        future = self.start(method, params, cancel, deadline)
        self.settle(future)
        return future.result()

    @staticmethod
    def settle(future: Serving) -> None:
        """Block until what :meth:`start` returned is settled (bounded by its deadline).

        The watcher settles it at the deadline; should the watcher have
        stopped meanwhile (its last binding closed), this caller does.
        """
        done, _ = concurrent.futures.wait([future], max(0.0, future.deadline - now()) + _LATE)
        if not done:
            future.expire()  # a no-op if the handler settles it this instant

    def start(
        self, method: str, params: dict[str, Any], cancel: CancelToken, deadline: float
    ) -> Serving:
        """Serve one request on a handler thread; never blocks the caller.

        The Future completes exactly once: with the handler's answer once its
        slot in the pool is free again (a callback may start the next
        request), at ``deadline`` on the watcher with the timeout refusal
        (``cancel`` fired, the handler abandoned), or at once with the busy
        refusal when the pool is full. A failure is a :class:`RefusedError`,
        or whatever the serving raised.
        """
        future = Serving(deadline)
        depth = self.arrival_depth()
        started = now()
        once = threading.Lock()  # who settles ``future``: the handler or the deadline
        outcome: list[Callable[[], None]] = []

        def body() -> None:
            self.bind_depth(depth)
            try:
                served = self.serve(method, params, cancel, deadline, depth)
            except BaseException as exc:
                outcome.append(functools.partial(future.set_exception, exc))
            else:
                outcome.append(functools.partial(future.set_result, served))

        def settle() -> None:  # the handler returned; its slot is free
            timer.cancel()
            if outcome and once.acquire(blocking=False):
                outcome[0]()

        ticket = Ticket(self._binding)

        def expire() -> None:  # the deadline: answer now, abandon the handler
            if not once.acquire(blocking=False):
                return
            cancel.cancel("the handler ran out of time")
            ticket.abandon()
            future.set_exception(self.timed_out(method, params, now() - started))

        future.expire = expire
        timer = watcher.schedule(deadline, expire)
        if not self.pool.submit(body, ticket, then=settle):
            timer.cancel()
            if once.acquire(blocking=False):
                future.set_exception(self.busy(method))
        return future

    def timed_out(self, method: str, params: dict[str, Any], budget: float) -> RefusedError:
        """The refusal for a handler that did not answer in time (its event included)."""
        if method == "elicitation/create":
            refused = RefusedError(
                0,
                "the elicitation was not answered in time",
                FailureClass.ELICITATION_TIMEOUT,
                answer={"action": "cancel"},
            )
            mode = ElicitMode.URL if params.get("mode") == "url" else ElicitMode.FORM
            event: Event = ElicitationResolved(
                binding=self._binding,
                mode=mode,
                action=ElicitAction.CANCEL,
                duration=budget,
                problem=refused.message,
                at=time.time(),
            )
        else:
            refused = RefusedError(
                _INTERNAL, f"the host did not answer {method[:60]} in time", FailureClass.DEADLINE
            )
            if method != "sampling/createMessage":
                return refused
            event = SamplingResolved(
                binding=self._binding,
                outcome=SampleOutcome.FAILED,
                duration=budget,
                at=time.time(),
            )

        def after() -> None:
            self._emit(event)

        refused.after = after
        return refused

    @staticmethod
    def bind_depth(depth: int) -> None:
        """Mark the calling (handler) thread as serving at ``depth``."""
        _context.depth = depth

    def deadline_for(self, method: str, cap: float | None = None) -> float:
        """When a handler for ``method`` must have answered (capped by ``cap``)."""
        budget = (
            self._timeouts.elicitation if method == "elicitation/create" else self._timeouts.request
        )
        deadline = now() + budget
        return deadline if cap is None else min(deadline, cap)

    def serve(
        self,
        method: str,
        params: dict[str, Any],
        cancel: CancelToken,
        deadline: float,
        depth: int,
    ) -> Served:
        """Serve one request on the calling thread (a handler thread).

        Raises:
            RefusedError: as :meth:`run`.
        """
        with self._lock:
            closed = self._closed
        if closed:
            raise RefusedError(_INTERNAL, "the binding is closing", FailureClass.SHUTDOWN)
        ctx = HandlerContext(deadline=deadline, cancelled=cancel, depth=depth)
        if method == "sampling/createMessage":
            return self._sample(params, ctx)
        if method == "elicitation/create":
            refuse_unsupported(self._version(), params)
            return self._elicitation.serve(params, ctx)
        if method == "roots/list":
            return self._roots(ctx), _nothing
        raise RefusedError(
            -32601, f"method not found: {method[:100]}", FailureClass.UNSUPPORTED_PROTOCOL
        )

    # -- legacy server-to-client requests ---------------------------------------

    def serve_request(
        self,
        session: Responder,
        request_id: Any,
        method: str,
        params: dict[str, Any],
        token: CancelToken,
    ) -> None:
        """Serve a legacy server request on a handler thread; never blocks the caller.

        The server gets exactly one answer: the handler's, or, at the deadline,
        the timeout refusal (the handler is then abandoned), or at once the
        busy refusal when the pool is full.
        """
        deadline = self.deadline_for(method)
        related = _related_task(params)

        def reply(answer: dict[str, Any] | None, refused: RefusedError | None) -> None:
            if refused is not None and answer is None:
                error = {"code": refused.code, "message": refused.message[:300]}
                session.respond(request_id, error=error)
            else:
                if related is not None and isinstance(answer, dict):
                    # 2025-11-25: a response tied to a task carries its related-task key.
                    answer = {**answer, "_meta": {**(answer.get("_meta") or {}), **related}}
                session.respond(request_id, answer)

        def answered(future: concurrent.futures.Future[Served]) -> None:
            try:
                answer, after = future.result()
            except RefusedError as refused:
                reply(refused.answer, refused)
                refused.after()
            except Exception:  # never die silently
                _log.exception("serving %s for binding %s failed", method, self._binding)
                reply(None, RefusedError(_INTERNAL, "internal error", FailureClass.SERVER_PROTOCOL))
            else:
                reply(answer, None)
                after()

        self.start(method, params, token, deadline).add_done_callback(answered)

    # -- sampling ---------------------------------------------------------

    def _sample(self, params: dict[str, Any], ctx: HandlerContext) -> Served:
        handler = self._handlers.sampling
        if handler is None:
            raise RefusedError(
                -32601, "sampling is not supported", FailureClass.UNSUPPORTED_PROTOCOL
            )
        limits = self._limits
        started = time.monotonic()
        wire = read_sampling_params(params)
        asked = wire.max_tokens
        granted = (
            min(asked, limits.max_sampling_tokens)
            if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0
            else 0
        )
        raw_messages = wire.messages
        count = len(raw_messages) if isinstance(raw_messages, list) else 0
        self._emit(
            SamplingRequested(
                binding=self._binding,
                messages=count,
                max_tokens=granted,
                depth=ctx.depth,
                at=time.time(),
            )
        )
        outcome, model = SampleOutcome.DENIED, ""

        def resolved() -> None:
            self._emit(
                SamplingResolved(
                    binding=self._binding,
                    outcome=outcome,
                    model=model[:256],
                    duration=time.monotonic() - started,
                    at=time.time(),
                )
            )

        try:
            request = self._sample_request(wire, granted, ctx.depth)
            with self._lock:
                if self._sampling >= limits.max_sampling_concurrency:
                    raise RefusedError(
                        _DENIED,
                        "too many sampling requests at once",
                        FailureClass.SAMPLING_DENIED,
                    )
                self._sampling += 1
            try:
                outcome = SampleOutcome.FAILED
                try:
                    result = call_handler(
                        handler, "sample", (request, ctx), FailureClass.SAMPLING_DENIED
                    )
                except InteractionError as exc:  # only sampling_denied gets here
                    # The host said no: the spec's "user rejected", not an internal error.
                    outcome = SampleOutcome.DENIED
                    raise RefusedError(
                        _DENIED, _USER_REJECTED, FailureClass.SAMPLING_DENIED
                    ) from exc
                if not isinstance(result, SampleResult):
                    raise RefusedError(
                        _INTERNAL,
                        "the sampling handler did not return a SampleResult",
                        FailureClass.SAMPLING_DENIED,
                    )
            finally:
                with self._lock:
                    self._sampling -= 1
        except RefusedError as refused:
            refused.after = resolved
            raise
        outcome, model = SampleOutcome.COMPLETED, result.model
        return sampling_answer(result.text, result.model, result.stop_reason), resolved

    def _sample_request(self, params: SamplingParams, granted: int, depth: int) -> SampleRequest:
        limits = self._limits
        if depth > limits.max_sampling_depth:
            raise RefusedError(
                _DENIED,
                f"sampling nested {depth} deep, over this host's limit of"
                f" {limits.max_sampling_depth}",
                FailureClass.SAMPLING_DENIED,
            )
        if granted <= 0:
            raise RefusedError(
                _INVALID_PARAMS,
                "maxTokens must be a positive integer",
                FailureClass.SAMPLING_DENIED,
            )
        if params.offers_tools or params.tool_choice:
            raise RefusedError(
                _INVALID_PARAMS,
                "this client does not offer tools in sampling",
                FailureClass.SAMPLING_DENIED,
            )
        raw_messages = params.messages
        if not isinstance(raw_messages, list) or not raw_messages:
            raise RefusedError(
                _INVALID_PARAMS, "messages are required", FailureClass.SAMPLING_DENIED
            )
        system_prompt = params.system_prompt
        total = utf8_len(system_prompt)
        messages = []
        for raw in raw_messages:
            role = raw.get("role") if isinstance(raw, Mapping) else None
            text = _text_of(raw.get("content")) if isinstance(raw, Mapping) else None
            if role not in ("user", "assistant") or text is None:
                raise RefusedError(
                    _INVALID_PARAMS,
                    "only text messages from user or assistant can be sampled here",
                    FailureClass.SAMPLING_DENIED,
                )
            total += utf8_len(text)
            messages.append(
                SampleMessage(SampleRole.USER if role == "user" else SampleRole.ASSISTANT, text)
            )
        if total > limits.max_text_result_bytes:
            raise RefusedError(
                _DENIED,
                "the sampling conversation is larger than this host accepts",
                FailureClass.SAMPLING_OVER_BUDGET,
            )
        return SampleRequest(
            binding=self._binding,
            system_prompt=system_prompt,
            messages=tuple(messages),
            max_tokens=granted,
        )

    # -- roots --------------------------------------------------------------

    def _roots(self, ctx: HandlerContext) -> dict[str, Any]:
        handler = self._handlers.roots
        if handler is None:
            raise RefusedError(-32601, "roots are not supported", FailureClass.UNSUPPORTED_PROTOCOL)
        roots = call_handler(handler, "roots", (ctx,), FailureClass.SERVER_PROTOCOL)
        try:
            items = list(roots)
        except TypeError:
            items = []
        if len(items) > MAX_ROOTS or not all(isinstance(r, Root) for r in items):
            raise RefusedError(
                _INTERNAL,
                f"the roots provider must return at most {MAX_ROOTS} Root values",
                FailureClass.SERVER_PROTOCOL,
            )
        return {
            "roots": [
                {"uri": root.uri, **({"name": root.name} if root.name else {})} for root in items
            ]
        }
