"""Submitted tool calls: a Future per call, and no thread per call.

``Client.submit_tool_call`` runs the local checks on the caller's thread and
hands the call here. It becomes an :class:`~mcpclient._internal.client.calls.gate.Entry`
in the binding's gates (call serialization, then a request slot) and is sent
when its turn comes; the session's Future of the request is chained to the
:class:`Submission` the caller holds (the result converted and validated on
the way, exactly as a blocking ``call_tool`` does).

Threads:
    None of its own, on any path. A submission is sent by the thread that
    frees its turn: the submitter's thread when the gates are free, else
    whoever releases them (the reader completing the call ahead of it, a
    blocking caller leaving, the deadline watcher or a canceller taking a
    queued call out). Each later step runs on the thread that ends the step
    before it: the reader or the watcher (an answer, an expiry), a handler
    thread once its slot is free (an ``input_required`` round's entry, a URL
    elicitation), the auth flow's thread (an authorization), the watcher (the
    connection back after a reconnect, a resend on a new session). No step
    blocks. The caller's done-callbacks never run on a library thread: a
    completion there hands them to the binding's event lane.

Locks:
    None of its own: the gates' lock orders the queue, and each step of a
    submission is taken once, by one thread, after the one before it ended
    (admission, the answer, each round's entries, the resend), so its fields
    are never touched by two threads at once.

Shutdown:
    ``close()`` closes the gates, which fail every queued submission with
    ``ShutdownError`` (never sent); a sent one is failed by its session, one
    waiting for the connection by the state, one in a handler or an auth
    flow when that ends (each within the call's deadline).

The steps are the blocking ``call_tool``'s (``mrtr.py``, ``Connection``'s
version rule, the auth rounds of ``AuthRecovery``), taken one callback at a
time. One difference: after an authorization, the refused request itself is
sent again (a round's answers included), where the blocking path starts its
exchange over.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import attrs

from mcpclient._internal.client.calls.gate import Entry, Gate, leave_entry, queue_entry, starting
from mcpclient._internal.client.calls.mrtr import (
    check_url_answer,
    entry_answer,
    next_round,
    result_kind,
    round_entries,
    start_entry,
    url_entries,
)
from mcpclient._internal.client.calls.tools import PreparedCall, check_structured
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.inbound.refusals import Served
from mcpclient._internal.client.lifecycle.connection import Connection, URLElicitationRequiredError
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session import protocol as proto
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.failures import not_processed_again
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.rpc import AuthRejectedError, RemoteError
from mcpclient._internal.wire import ConversionError, to_tool_result
from mcpclient._internal.wire.interactions import retry_params
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog
from mcpclient.content import ToolResult
from mcpclient.definition import Definition
from mcpclient.errors import NotProcessedError, ProtocolError

__all__ = ["Host", "Submission", "submit"]

_T = TypeVar("_T")
_log = logging.getLogger(__name__)
_Callback = Callable[[concurrent.futures.Future[ToolResult]], object]
_METHOD = "tools/call"


class Host(Protocol):
    """What a submission needs of its client (the binding's call path)."""

    _binding: str
    _definition: Definition
    _schemas: SchemaCache
    _interactions: Interactions
    _lane: EventLane

    def _when_serving(
        self,
        ctx: CallContext,
        done: Callable[[tuple[Connection, Catalog] | None, BaseException | None], object],
    ) -> None: ...

    def _join_auth(
        self,
        rejected: AuthRejectedError,
        rounds: int,
        ctx: CallContext,
        done: Callable[[BaseException | None], object],
    ) -> None: ...


class Submission(concurrent.futures.Future[ToolResult]):
    """The Future of a submitted tool call.

    It stays PENDING until the call is over, so :meth:`cancel` always
    reaches the call: a queued call leaves the queue unsent, a sent one is
    cancelled on the wire.
    """

    def __init__(self, token: CancelToken, lane: EventLane) -> None:
        super().__init__()
        self._token = token
        self._lane = lane

    def cancel(self) -> bool:
        """Cancel the call: unsent if still queued, else on the wire."""
        # Cancel the future first: once it is CANCELLED, the call cannot
        # settle it, so cancel() succeeds whenever it is still pending.
        if not super().cancel():
            return False
        self._token.cancel("the future was cancelled")
        return True

    def add_done_callback(self, fn: _Callback) -> None:
        """As ``Future.add_done_callback``; never run on a library thread.

        A completion by the reader, the watcher or a gate's admission loop
        runs ``fn`` on the binding's event lane (in order), so a callback that
        blocks, or makes another call and waits for it, stalls nothing.
        """
        if self.done():
            fn(self)  # what Future does: at once, on the caller's thread
            return
        super().add_done_callback(lambda future: self._deliver(fn, future))

    def _deliver(
        self,
        fn: _Callback,
        future: concurrent.futures.Future[ToolResult],
    ) -> None:
        if (
            starting() or threading.current_thread().name.startswith("mcpclient-")
        ) and self._lane.post(lambda: _run_callback(fn, future)):
            return
        _run_callback(fn, future)


def _run_callback(
    fn: _Callback,
    future: concurrent.futures.Future[ToolResult],
) -> None:
    try:
        fn(future)
    except Exception:
        # What Future does with a raising callback: log it, carry on.
        _log.exception("exception calling callback for %r", future)


def submit(
    host: Host,
    prepared: PreparedCall,
    ctx: CallContext,
    *,
    gates: tuple[Gate, ...],
) -> Submission:
    """Queue a prepared tool call in ``gates``; return its Future at once.

    It is sent on this thread when the gates are free, else when its turn
    comes (see the module docstring). ``ctx.cancel`` (the caller's) cancels
    it too: the call itself runs under a token of its own, the one its
    Future cancels.
    """
    token = CancelToken()
    future = Submission(token, host._lane)
    # The one value that changes below the public method: the call's own token.
    call = _Call(host, prepared, attrs.evolve(ctx, cancel=token), token=token, future=future)
    outer = ctx.cancel
    if outer is not None:
        call.outer = outer
        call.outer_handle = outer.add_callback(lambda: token.cancel(outer.reason))
    assert ctx.deadline is not None  # a call's context (only a stream's has none)
    call.entry = Entry(
        gates,
        deadline=ctx.deadline,
        op=ctx.op,
        deadline_class=ctx.deadline_class,
        on_admit=call.admitted,
        on_fail=call.done,
    )
    queue_entry(call.entry, token)
    return future


class _Call:
    """One submission's steps: admitted → served → sent → answered (→ rounds) → converted."""

    __slots__ = (
        "auth_rounds",
        "conn",
        "ctx",
        "entry",
        "future",
        "host",
        "outer",
        "outer_handle",
        "params",
        "prepared",
        "released",
        "resent",
        "rounds",
        "token",
        "url_retried",
        "version_retried",
    )

    def __init__(
        self,
        host: Host,
        prepared: PreparedCall,
        ctx: CallContext,
        *,
        token: CancelToken,
        future: Submission,
    ) -> None:
        self.host = host
        self.prepared = prepared
        self.ctx = ctx  # its cancel is ``token``
        self.token = token
        self.future = future
        self.entry: Entry | None = None
        self.conn: Connection | None = None
        self.outer: CancelToken | None = None
        self.outer_handle = 0
        self.released = False
        self.params: dict[str, Any] | None = prepared.params  # a round's retry changes them
        self.rounds = 0  # input_required rounds answered
        self.auth_rounds = 0  # times the server refused it with a 401/403
        self.version_retried = False  # this send was already retried in a common version
        self.url_retried = False  # the -32042 URL elicitations were done once
        self.resent = False  # sent again on a new session after an HTTP 404

    def admitted(self) -> None:
        """Its turn came (on whichever thread freed it): send it once the binding serves."""
        try:
            self.host._when_serving(self.ctx, self._served)
        except BaseException as exc:
            self._fail(exc)

    def _served(
        self, served: tuple[Connection, Catalog] | None, refused: BaseException | None
    ) -> None:
        if served is None:
            assert refused is not None
            self._fail(refused)
            return
        self.conn = served[0]
        self._send()

    def _send(self, protocol: proto.Protocol | None = None) -> None:
        """Submit the request (in ``protocol``, a version retry's era); never blocks."""
        try:
            conn = self.conn
            assert conn is not None
            protocol = protocol or conn.protocol
            assert protocol is not None
            request = conn.session.submit(
                _METHOD, protocol.params(self.params, tasks=False), self.ctx
            )
        except BaseException as exc:
            self._fail(exc)
            return
        request.add_done_callback(self._answered)

    def _again(self) -> None:
        """Send the request anew (a round's retry, after URL elicitations or authorization)."""
        self.version_retried = False
        self._send()

    def _answered(self, request: concurrent.futures.Future[Any]) -> None:
        """The request is over (on the thread that completed it)."""
        try:
            exc = request.exception()
            if exc is None:
                self._result(request.result())
                return
            if isinstance(exc, RemoteError):
                # call_tool's rule for a refused version (Connection.request).
                conn = self.conn
                assert conn is not None and conn.protocol is not None
                try:
                    retry = conn.version_to_retry(
                        exc, conn.protocol, retried=self.version_retried, op=self.ctx.op
                    )
                except URLElicitationRequiredError as needed:
                    self._url_elicitations(needed)
                    return
                self.version_retried = True
                self._send(retry)
                return
            if isinstance(exc, URLElicitationRequiredError):
                self._url_elicitations(exc)
                return
            if isinstance(exc, AuthRejectedError):
                self._authorize(exc)
                return
            if isinstance(exc, NotProcessedError):
                self._resend(exc)
                return
        except BaseException as unexpected:
            exc = unexpected
        self._fail(exc)

    def _result(self, result: Any) -> None:
        conn = self.conn
        assert conn is not None and conn.protocol is not None
        binding, op = self.host._binding, self.ctx.op
        if conn.protocol.modern:
            kind = result_kind(result, _METHOD, accept_task=False, binding=binding, op=op)
            if kind == "input_required":
                limits = self.host._definition.limits
                self.rounds = next_round(self.rounds, limits, binding=binding, op=op)
                entries, state = round_entries(result, limits, binding=binding, op=op)
                self._next_entry(entries, state, {})
                return
        self._release()
        self._convert(result)

    def _next_entry(
        self,
        entries: list[tuple[str, str, dict[str, Any]]],
        state: str | None,
        responses: dict[str, Any],
    ) -> None:
        """Serve a round's entries one after another (as the blocking round does), then retry."""
        if len(responses) == len(entries):
            self.params = retry_params(self.params, responses, state)
            self._again()
            return
        key, method, params = entries[len(responses)]

        def answered(future: concurrent.futures.Future[Served]) -> None:
            try:
                responses[key] = entry_answer(future, binding=self.host._binding, op=self.ctx.op)
            except BaseException as exc:
                self._fail(exc)
                return
            self._next_entry(entries, state, responses)

        self._start_entry(method, params, answered)

    def _url_elicitations(self, exc: URLElicitationRequiredError) -> None:
        """2025-11-25's -32042: do the URL elicitations, then send the call once more."""
        if self.url_retried or not exc.elicitations:
            self._fail(exc)
            return
        self.url_retried = True
        self._next_url(exc, url_entries(exc))

    def _next_url(self, exc: URLElicitationRequiredError, entries: list[dict[str, Any]]) -> None:
        if not entries:
            self._again()
            return

        def answered(future: concurrent.futures.Future[Served]) -> None:
            binding, op = self.host._binding, self.ctx.op
            try:
                check_url_answer(
                    entry_answer(future, binding=binding, op=op), exc, binding=binding, op=op
                )
            except BaseException as failure:
                self._fail(failure)
                return
            self._next_url(exc, entries[1:])

        self._start_entry("elicitation/create", entries[0], answered)

    def _start_entry(
        self,
        method: str,
        params: dict[str, Any],
        answered: Callable[[concurrent.futures.Future[Served]], None],
    ) -> None:
        try:
            future = start_entry(method, params, self.ctx, interactions=self.host._interactions)
        except BaseException as exc:
            self._fail(exc)
            return
        future.add_done_callback(answered)

    def _authorize(self, rejected: AuthRejectedError) -> None:
        """A 401/403: join the binding's auth flow, then send the request again."""
        self.auth_rounds += 1

        def authorized(failure: BaseException | None) -> None:
            if failure is not None:
                self._fail(failure)
            else:
                self._again()

        self.host._join_auth(rejected, self.auth_rounds, self.ctx, authorized)

    def _resend(self, exc: NotProcessedError) -> None:
        """The server forgot the session before it ran the call (HTTP 404): send it once
        more on the new session, inside the one deadline. Once: a second 404 is the caller's."""
        if self.resent:
            self._fail(not_processed_again(exc))
            return
        self.resent = True
        self.version_retried = False
        self.host._when_serving(self.ctx, self._served)

    def _convert(self, result: Any) -> None:
        host = self.host
        try:
            try:
                converted = to_tool_result(result, host._definition.limits)
            except ConversionError as exc:
                raise ProtocolError(str(exc), binding=host._binding, op=self.ctx.op) from None
            checked = check_structured(self.prepared, converted, host._schemas)
        except BaseException as exc:
            self.done(exc)
            return
        self._settle(lambda future: future.set_result(checked))

    def _release(self) -> None:
        # Once, by the step that ends the call's turn.
        if not self.released:
            self.released = True
            assert self.entry is not None
            leave_entry(self.entry)

    def _fail(self, exc: BaseException) -> None:
        self._release()
        self.done(exc)

    def done(self, exc: BaseException) -> None:
        """Fail the caller's Future (also a queued call's ``on_fail``)."""
        self._settle(lambda future: future.set_exception(exc))

    def _settle(self, complete: Callable[[Submission], None]) -> None:
        # Completes the caller's Future, tolerating one the caller cancelled.
        outer = self.outer
        if outer is not None:
            self.outer = None
            outer.remove_callback(self.outer_handle)
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            complete(self.future)  # raises if the caller cancelled it meanwhile
