"""Submitted tool calls: a Future per call, and no thread per call.

``Client.submit_tool_call`` runs the local checks on the caller's thread and
hands the call here. It becomes an :class:`~mcpclient._internal.client.calls.gate.Entry`
in the binding's gates (call serialization, then a request slot) and is sent
when its turn comes; the session's Future of the request is chained to the
:class:`Submission` the caller holds (the result converted and validated on
the way, exactly as a blocking ``call_tool`` does).

Threads:
    None of its own on the common path. A submission is sent by the thread
    that frees its turn: the submitter's thread when the gates are free, else
    whoever releases them (the reader completing the call ahead of it, a
    blocking caller leaving, the deadline watcher or a canceller taking a
    queued call out). It is completed by the thread that completes its
    request (the reader, the watcher, a canceller, close). The caller's
    done-callbacks never run on a library thread: a completion there hands
    them to the binding's event lane. A call that needs blocking work after
    its first answer (an ``input_required`` round, URL elicitations, an
    authorization, a resend on a new session), or finds the binding
    reconnecting when its turn comes, finishes on an on-demand thread
    ``mcpclient-call-<binding>`` that holds its turn: there are never more of
    them than turns (one on a serialized binding).

Locks:
    None of its own: the gates' lock orders the queue, and each step of a
    submission is taken once, by one thread (admission, the answer, the
    continuation), in that order.

Shutdown:
    ``close()`` closes the gates, which fail every queued submission with
    ``ShutdownError`` (never sent); a sent one is failed by its session.
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
from mcpclient._internal.client.calls.mrtr import exchange
from mcpclient._internal.client.calls.tools import PreparedCall, check_structured
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.lifecycle.connection import Connection, URLElicitationRequiredError
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session import protocol as proto
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.failures import not_processed_again
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.rpc import AuthRejectedError, RemoteError
from mcpclient._internal.wire import ConversionError, to_tool_result
from mcpclient._internal.wire.interactions import result_type
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog
from mcpclient.content import ToolResult
from mcpclient.definition import Definition
from mcpclient.errors import Error, NotProcessedError, ProtocolError, ShutdownError
from mcpclient.status import State

__all__ = ["Host", "Submission", "submit"]

_T = TypeVar("_T")
_log = logging.getLogger(__name__)
_Callback = Callable[[concurrent.futures.Future[ToolResult]], object]
_METHOD = "tools/call"


class Host(Protocol):
    """What a submission needs of its client (``mcpclient.Client``)."""

    _binding: str
    _definition: Definition
    _schemas: SchemaCache
    _interactions: Interactions
    _lane: EventLane
    _state: State

    def _serving(
        self, op: str, deadline: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[Connection, Catalog]: ...

    def _authorized(
        self, send: Callable[[], _T], ctx: CallContext, rejected: AuthRejectedError | None = None
    ) -> _T: ...


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
    """One submission's steps: admitted → sent → answered → converted."""

    __slots__ = (
        "conn",
        "ctx",
        "entry",
        "future",
        "host",
        "outer",
        "outer_handle",
        "prepared",
        "released",
        "token",
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
        self.version_retried = False

    def admitted(self) -> None:
        """Its turn came (on whichever thread freed it): send it, never blocking."""
        try:
            try:
                conn, _ = self.host._serving(self.ctx.op)  # no wait
            except ShutdownError:
                raise
            except Error:
                if self.host._state is State.RECONNECTING:
                    # The blocking path waits for the new connection within the
                    # deadline; so does this call, on a thread holding its turn.
                    self._continue(None)
                    return
                raise
            self.conn = conn
            self._send(conn)
        except BaseException as exc:
            self._release()
            self.done(exc)

    def _send(self, conn: Connection, protocol: proto.Protocol | None = None) -> None:
        """Submit the request (in ``protocol``, a version retry's era); never blocks."""
        protocol = protocol or conn.protocol
        assert protocol is not None
        request = conn.session.submit(
            _METHOD, protocol.params(self.prepared.params, tasks=False), self.ctx
        )
        request.add_done_callback(self._answered)

    def _answered(self, request: concurrent.futures.Future[Any]) -> None:
        """The request is over (on the thread that completed it)."""
        try:
            exc = request.exception()
            if exc is None:
                result = request.result()
                conn = self.conn
                assert conn is not None and conn.protocol is not None
                if (
                    conn.protocol.modern
                    and isinstance(result, dict)
                    and result_type(result) != "complete"
                ):
                    self._continue(lambda: result)  # input_required: the rounds block
                    return
                self._release()
                self._convert(result)
                return
            if isinstance(exc, RemoteError):
                # call_tool's rule for a refused version (Connection.request), without blocking.
                conn = self.conn
                assert conn is not None and conn.protocol is not None
                retry = conn.version_to_retry(
                    exc, conn.protocol, retried=self.version_retried, op=self.ctx.op
                )
                self.version_retried = True
                self._send(conn, retry)
                return
            if isinstance(exc, URLElicitationRequiredError | AuthRejectedError | NotProcessedError):
                self._continue(_raising(exc))  # handlers, authorization or a resend
                return
        except BaseException as unexpected:
            exc = unexpected
        self._release()
        self.done(exc)

    def _continue(self, first: Callable[[], Any] | None) -> None:
        """Finish the call on a thread of its own (it holds its turn meanwhile)."""
        thread = threading.Thread(
            target=self._finish_blocking,
            args=(first,),
            name=f"mcpclient-call-{self.host._binding}",
            daemon=True,
        )
        try:
            thread.start()
        except BaseException as exc:  # no thread to be had
            self._release()
            self.done(exc)

    def _finish_blocking(self, first: Callable[[], Any] | None) -> None:
        try:
            try:
                result = self._blocking(first)
            finally:
                self._release()
        except BaseException as exc:
            self.done(exc)
            return
        self._convert(result)

    def _blocking(self, first: Callable[[], Any] | None) -> Any:
        """The rest of the call as ``call_tool`` does it: ``first`` is its first answer."""
        host = self.host
        ctx = self.ctx
        conn = self.conn
        if conn is None:
            conn, _ = host._serving(ctx.op, ctx.deadline, ctx.cancel)
        limits = host._definition.limits

        def send(conn: Connection, first: Callable[[], Any] | None = None) -> Any:
            return exchange(
                conn,
                _METHOD,
                self.prepared.params,
                ctx,
                interactions=host._interactions,
                limits=limits,
                first=first,
            )

        def authorized(conn: Connection, first: Callable[[], Any] | None = None) -> Any:
            try:
                return send(conn, first)
            except AuthRejectedError as exc:
                return host._authorized(lambda: send(conn), ctx, exc)

        try:
            return authorized(conn, first)
        except NotProcessedError:
            # The server forgot the session before it ran the call (HTTP 404):
            # send it once more on the new session, inside the one deadline.
            # Once: a second 404 is the caller's.
            conn, _ = host._serving(ctx.op, ctx.deadline, ctx.cancel)
            try:
                return authorized(conn)
            except NotProcessedError as again:
                raise not_processed_again(again) from again

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


def _raising(exc: BaseException) -> Callable[[], Any]:
    def replay() -> Any:
        raise exc

    return replay
