"""Server-initiated requests: sampling, elicitation and roots, in both eras.

A legacy server asks by a JSON-RPC request; a modern one by an entry of an
``input_required`` result (MRTR). Both are served here, identically, by the
host's handlers, behind the gates the host configured in ``Limits``:

* sampling: a depth gate (a request arriving while a depth-n handler has a
  call in flight is depth n+1), a concurrency cap, a token ceiling (the host
  grants min(asked, cap)), and a conversation size bound (refused, never
  trimmed);
* elicitation: the prompt, URL and id bounded (refused, never trimmed), the
  form's schema bounded, the answer validated against it before it is sent,
  and ``timeouts.elicitation`` on the person answering;
* roots: at most 64, ``file://`` only, asked afresh every time.

Threads:
    Each request runs its handler on its own daemon thread,
    ``mcpclient-handler-<binding>``, never on the reader or the event lane.
    A handler that overruns its deadline is abandoned: the server gets its
    answer (``cancel``, or an error) at the deadline, the thread is renamed
    ``mcpclient-abandoned-<binding>`` and its late answer dropped.

Locks:
    ``_lock`` guards the sampling counters and the in-flight depths.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mcpclient._internal.canonical import compact
from mcpclient._internal.convert import json_depth
from mcpclient._internal.deadline import now
from mcpclient._internal.limits import clean_text, utf8_len
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session import watcher
from mcpclient._internal.session.rpc import RpcSession
from mcpclient.calls import CancelToken
from mcpclient.definition import Limits, Timeouts
from mcpclient.errors import FailureClass, InteractionError
from mcpclient.events import (
    ElicitationRequested,
    ElicitationResolved,
    Event,
    SamplingRequested,
    SamplingResolved,
)
from mcpclient.handlers import (
    ElicitAction,
    ElicitMode,
    ElicitRequest,
    ElicitResult,
    HandlerContext,
    Handlers,
    Root,
    SampleMessage,
    SampleOutcome,
    SampleRequest,
    SampleResult,
    SampleRole,
)

__all__ = ["Interactions", "RefusedError", "current_depth"]

_log = logging.getLogger(__name__)
#: The package logger: where a host looks for what the library did on its behalf.
_public_log = logging.getLogger("mcpclient")
#: Bound on ``ElicitationResolved.problem``, in UTF-8 bytes.
MAX_PROBLEM_BYTES = 512

MAX_ROOTS = 64
_ELICITATION_SINCE = "2025-06-18"  # versions compare as dates
_URL_ELICITATION_SINCE = "2025-11-25"
_DENIED = -1  # the code the spec's examples use for a refused sampling request
#: The spec's own words for a sampling request the user (the host) refused.
_USER_REJECTED = "User rejected sampling request"
_INVALID_PARAMS = -32602
_INTERNAL = -32603

_context = threading.local()


def current_depth() -> int:
    """The handler depth of the calling thread (0 outside any handler)."""
    return int(getattr(_context, "depth", 0))


class RefusedError(Exception):
    """A request the gates or the handler refused.

    ``code``/``message`` answer a legacy server; ``failure_class`` is what an
    MRTR round reports when it cannot continue; ``answer`` (elicitation) is
    the result to send instead of an error.
    """

    def __init__(
        self,
        code: int,
        message: str,
        failure_class: FailureClass,
        answer: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.failure_class = failure_class
        self.answer = answer
        self.after: Callable[[], None] = _nothing


def _nothing() -> None:
    return None


#: A served request: the wire answer, and what to do once it has been sent
#: (emit the ``*Resolved`` event: events follow the wire, never precede it).
Served = tuple[dict[str, Any], Callable[[], None]]


def with_form_defaults(schema: Any, content: Any) -> Any:
    """``content`` with each field the answer left out filled from the form's ``default``.

    SEP-1034: a form field's default is what the person is shown pre-filled,
    so an accepted answer that omits the field means the default. Only the
    form's own top-level fields with a primitive default (string, number,
    boolean) are filled; the answer itself is never changed in place.
    """
    if not isinstance(content, dict) or not isinstance(schema, dict):
        return content
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return content
    filled = dict(content)
    for name, field in properties.items():
        if name in filled or not isinstance(field, dict) or "default" not in field:
            continue
        default = field["default"]
        if isinstance(default, str | bool | int | float):
            filled[name] = default
    return filled


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
        self._schemas = SchemaCache(64)
        self._lock = threading.Lock()
        self._sampling = 0
        self._outbound: collections.Counter[int] = collections.Counter()
        self._closed = False

    def close(self) -> None:
        """Refuse new requests (handlers still running are not waited for)."""
        with self._lock:
            self._closed = True

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
            RefusedError: refused by a gate, the handler failed, or time ran out.
        """
        future: concurrent.futures.Future[Served] = concurrent.futures.Future()
        depth = self.arrival_depth()
        started = now()

        def body() -> None:
            self.bind_depth(depth)
            try:
                future.set_result(self.serve(method, params, cancel, deadline, depth))
            except BaseException as exc:
                future.set_exception(exc)

        thread = threading.Thread(
            target=body, name=f"mcpclient-handler-{self._binding}", daemon=True
        )
        thread.start()
        try:
            return future.result(timeout=max(0.0, deadline - now()))
        except concurrent.futures.TimeoutError:
            cancel.cancel("the handler ran out of time")
            thread.name = f"mcpclient-abandoned-{self._binding}"
            raise self.timed_out(method, params, now() - started) from None

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
            version = self._version()
            if version is not None and version < _ELICITATION_SINCE:
                raise RefusedError(
                    -32601,
                    "elicitation does not exist in this protocol version",
                    FailureClass.UNSUPPORTED_PROTOCOL,
                )
            if (
                version is not None
                and version < _URL_ELICITATION_SINCE
                and params.get("mode") == "url"
            ):
                raise RefusedError(
                    _INVALID_PARAMS,
                    "url mode elicitation was not declared",
                    FailureClass.ELICITATION_INVALID,
                )
            return self._elicit(params, ctx)
        if method == "roots/list":
            return self._roots(ctx), _nothing
        raise RefusedError(
            -32601, f"method not found: {method[:100]}", FailureClass.UNSUPPORTED_PROTOCOL
        )

    # -- legacy server-to-client requests ---------------------------------------

    def serve_request(
        self,
        session: RpcSession,
        request_id: Any,
        method: str,
        params: dict[str, Any],
        token: CancelToken,
    ) -> None:
        """Serve a legacy server request on a handler thread; never blocks the caller.

        The server gets exactly one answer: the handler's, or, at the deadline,
        the timeout refusal (the handler is then abandoned).
        """
        deadline = self.deadline_for(method)
        depth = self.arrival_depth()
        started = now()
        once = threading.Lock()

        def reply(answer: dict[str, Any] | None, refused: RefusedError | None) -> bool:
            if not once.acquire(blocking=False):
                return False  # already answered (the deadline won)
            if refused is not None and answer is None:
                error = {"code": refused.code, "message": refused.message[:300]}
                session.respond(request_id, error=error)
            else:
                session.respond(request_id, answer)
            return True

        def body() -> None:
            self.bind_depth(depth)
            try:
                answer, after = self.serve(method, params, token, deadline, depth)
            except RefusedError as refused:
                if reply(refused.answer, refused):
                    refused.after()
            except Exception:  # never die silently
                _log.exception("serving %s for binding %s failed", method, self._binding)
                reply(None, RefusedError(_INTERNAL, "internal error", FailureClass.SERVER_PROTOCOL))
            else:
                if reply(answer, None):
                    after()
            finally:
                timer.cancel()

        thread = threading.Thread(
            target=body, name=f"mcpclient-handler-{self._binding}", daemon=True
        )

        def on_deadline() -> None:  # watcher thread: answer now, abandon the handler
            token.cancel("the handler ran out of time")
            refused = self.timed_out(method, params, now() - started)
            if reply(refused.answer, refused):
                thread.name = f"mcpclient-abandoned-{self._binding}"
                refused.after()

        timer = watcher.schedule(deadline, on_deadline)
        thread.start()

    # -- sampling ---------------------------------------------------------

    def _sample(self, params: dict[str, Any], ctx: HandlerContext) -> Served:
        handler = self._handlers.sampling
        if handler is None:
            raise RefusedError(
                -32601, "sampling is not supported", FailureClass.UNSUPPORTED_PROTOCOL
            )
        limits = self._limits
        started = time.monotonic()
        asked = params.get("maxTokens")
        granted = (
            min(asked, limits.max_sampling_tokens)
            if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0
            else 0
        )
        raw_messages = params.get("messages")
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
            request = self._sample_request(params, granted, ctx.depth)
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
                    result = self._call(
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
        answer = {
            "role": "assistant",
            "content": {"type": "text", "text": result.text},
            "model": result.model,
            "stopReason": result.stop_reason,
        }
        return answer, resolved

    def _sample_request(self, params: dict[str, Any], granted: int, depth: int) -> SampleRequest:
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
        if params.get("tools") is not None or params.get("toolChoice") is not None:
            raise RefusedError(
                _INVALID_PARAMS,
                "this client does not offer tools in sampling",
                FailureClass.SAMPLING_DENIED,
            )
        raw_messages = params.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            raise RefusedError(
                _INVALID_PARAMS, "messages are required", FailureClass.SAMPLING_DENIED
            )
        system = params.get("systemPrompt")
        system_prompt = system if isinstance(system, str) else ""
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

    # -- elicitation ------------------------------------------------------

    def _elicit(self, params: dict[str, Any], ctx: HandlerContext) -> Served:
        handler = self._handlers.elicitation
        if handler is None:
            raise RefusedError(
                -32601, "elicitation is not supported", FailureClass.UNSUPPORTED_PROTOCOL
            )
        request = self._elicit_request(params)
        self._emit(ElicitationRequested(binding=self._binding, mode=request.mode, at=time.time()))
        started = time.monotonic()
        action: ElicitAction | None = None
        problem = ""  # why the server is told "cancel" instead of the handler's answer

        def resolved() -> None:
            self._emit(
                ElicitationResolved(
                    binding=self._binding,
                    mode=request.mode,
                    action=action,
                    duration=time.monotonic() - started,
                    problem=problem,
                    at=time.time(),
                )
            )

        try:
            result = self._call(
                handler, "elicit", (request, ctx), FailureClass.ELICITATION_CANCELLED
            )
            if not isinstance(result, ElicitResult):
                raise RefusedError(
                    0,
                    "the elicitation handler did not return an ElicitResult",
                    FailureClass.ELICITATION_INVALID,
                    answer={"action": "cancel"},
                )
            answer: dict[str, Any] = {"action": str(result.action)}
            if result.action is ElicitAction.ACCEPT and request.mode is ElicitMode.FORM:
                content = result.content if result.content is not None else {}
                content = with_form_defaults(request.schema, content)
                failed = self._check_answer(request, content)
                if failed is not None:
                    # Names the field and the rule only: the answer may hold secrets.
                    _public_log.warning(
                        "binding %s: the elicitation answer %s; the server is told cancel",
                        self._binding,
                        failed,
                    )
                    raise RefusedError(
                        0,
                        f"the answer {failed}",
                        FailureClass.ELICITATION_INVALID,
                        answer={"action": "cancel"},
                    )
                answer["content"] = content
        except RefusedError as refused:
            problem = clean_text(refused.message, MAX_PROBLEM_BYTES)
            if refused.answer == {"action": "cancel"}:
                action = ElicitAction.CANCEL  # what the server is told instead
            refused.after = resolved
            raise
        action = result.action
        return answer, resolved

    def _elicit_request(self, params: dict[str, Any]) -> ElicitRequest:
        limits = self._limits
        mode_text = params.get("mode", "form")
        if mode_text not in ("form", "url"):
            raise RefusedError(
                _INVALID_PARAMS, "unknown elicitation mode", FailureClass.ELICITATION_INVALID
            )
        mode = ElicitMode.FORM if mode_text == "form" else ElicitMode.URL
        message = params.get("message")
        if not isinstance(message, str):
            raise RefusedError(
                _INVALID_PARAMS, "message is required", FailureClass.ELICITATION_INVALID
            )
        for label, value in (
            ("message", message),
            ("url", params.get("url")),
            ("elicitationId", params.get("elicitationId")),
        ):
            if isinstance(value, str) and utf8_len(value) > limits.max_elicit_message_bytes:
                # A prompt is the one server text we never trim: a cut prompt
                # could change what a person agrees to.
                raise RefusedError(
                    _INVALID_PARAMS,
                    f"the elicitation {label} is longer than this host shows",
                    FailureClass.ELICITATION_INVALID,
                )
        if mode is ElicitMode.URL:
            url = params.get("url")
            if not isinstance(url, str) or not url:
                raise RefusedError(
                    _INVALID_PARAMS, "url mode needs a url", FailureClass.ELICITATION_INVALID
                )
            elicitation_id = params.get("elicitationId")
            return ElicitRequest(
                binding=self._binding,
                mode=mode,
                message=message,
                url=url,
                elicitation_id=elicitation_id if isinstance(elicitation_id, str) else "",
            )
        schema = params.get("requestedSchema")
        if not isinstance(schema, dict):
            raise RefusedError(
                _INVALID_PARAMS,
                "form mode needs a requestedSchema",
                FailureClass.ELICITATION_INVALID,
            )
        try:
            size = utf8_len(compact(schema))
        except (TypeError, ValueError):
            size = limits.max_elicit_schema_bytes + 1
        if (
            size > limits.max_elicit_schema_bytes
            or json_depth(schema, limits.max_schema_depth) > limits.max_schema_depth
        ):
            raise RefusedError(
                _INVALID_PARAMS,
                "the elicitation form is larger or deeper than this host accepts",
                FailureClass.ELICITATION_INVALID,
            )
        return ElicitRequest(binding=self._binding, mode=mode, message=message, schema=schema)

    def _check_answer(self, request: ElicitRequest, content: Any) -> str | None:
        """Why ``content`` does not satisfy the form (field and rule, no values), or None."""
        if not isinstance(content, dict):
            return "is not an object"
        schema = request.schema
        validator = self._schemas.get(compact(schema), lambda: schema)
        if isinstance(validator, str):
            return None  # a form we cannot check is not grounds to refuse a person's answer
        failed = validator.violation(content)
        if failed is None:
            return None
        path, rule = failed
        # A path may hold a key the answer chose: made safe for a log line.
        return clean_text(f"fails the form's {rule!r} rule at {path}", MAX_PROBLEM_BYTES - 32)

    # -- roots --------------------------------------------------------------

    def _roots(self, ctx: HandlerContext) -> dict[str, Any]:
        handler = self._handlers.roots
        if handler is None:
            raise RefusedError(-32601, "roots are not supported", FailureClass.UNSUPPORTED_PROTOCOL)
        roots = self._call(handler, "roots", (ctx,), FailureClass.SERVER_PROTOCOL)
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

    # -- helpers ----------------------------------------------------------------

    @staticmethod
    def _call(handler: Any, method: str, args: tuple[Any, ...], failure: FailureClass) -> Any:
        """Run a host handler; its exception becomes a refusal (a sampling denial passes)."""
        fn = handler if callable(handler) else getattr(handler, method)
        try:
            return fn(*args)
        except RefusedError:
            raise
        except InteractionError as exc:
            if method == "sample" and exc.failure_class is FailureClass.SAMPLING_DENIED:
                raise  # the sampling gate answers it as a denial
            raise Interactions._handler_failed(method, exc, failure) from exc
        except Exception as exc:
            raise Interactions._handler_failed(method, exc, failure) from exc

    @staticmethod
    def _handler_failed(method: str, exc: Exception, failure: FailureClass) -> RefusedError:
        answer = {"action": "cancel"} if method == "elicit" else None
        refused = RefusedError(
            _INTERNAL, f"the host's {method} handler failed: {type(exc).__name__}", failure, answer
        )
        refused.__cause__ = exc
        return refused
