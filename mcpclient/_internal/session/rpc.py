"""JSON-RPC 2.0 over a framed transport: one connection's session.

:class:`RpcSession` ties together the request table (``request_table.py``:
every pending request a Future, completed once), the frames it sends
(``frames.py``), the reader (``reader.py``) and, over a pipe, the writer
(``writer.py``). HTTP failures of one request are classified in
``failures.py``.

Threads:
    ``mcpclient-reader-<binding>``, the sole receiver (see ``reader.py``).
    Over a pipe, ``mcpclient-writer-<binding>`` only while frames have to
    wait (see ``writer.py``); a caller writes its frame itself when the pipe
    takes it whole at once. Over HTTP the transport sends. A caller blocked
    in :meth:`RpcSession.call` waits on its request's Future with the time
    it has left and then expires the request itself; the requests nobody
    waits on (:meth:`RpcSession.submit`) are expired by the process-wide
    watcher (``watcher.py``). A stream (:meth:`RpcSession.open_stream`) has
    no deadline: nobody expires it.

Locks:
    None of its own: the table's lock guards the pending requests and the
    failure, the reader's the server's unanswered requests, the writer's
    the pipe. No lock is held while a request is completed or a callback
    runs.

Shutdown:
    :meth:`close` fails every pending call at once (``shutdown``; a sent
    ``tools/call`` is ``indeterminate``), closes the transport (which ends
    the reader with EOF and unblocks a writer stuck in a full pipe), and
    stops the writer. A lost transport fails every pending call at once with
    a classified error; no caller waits for its deadline.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, cast

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.failures import AuthRejectedError, RemoteError
from mcpclient._internal.session.frames import (
    JSONArguments,
    encode_notification,
    encode_request,
    encode_response,
)
from mcpclient._internal.session.headers import EraHeaders
from mcpclient._internal.session.reader import (
    METHOD_NOT_FOUND,
    NotificationHandler,
    Reader,
    RequestHandler,
)
from mcpclient._internal.session.request_table import Pending, RequestTable
from mcpclient._internal.session.writer import FrameWriter
from mcpclient._internal.transport.base import (
    FrameTransport,
    MessageTransport,
    Outbound,
    SendKind,
)
from mcpclient._internal.wire.interactions import cancelled_params, with_progress_token
from mcpclient.errors import Error, FailureClass, RequestCancelledError, ShutdownError

__all__ = [
    "METHOD_NOT_FOUND",
    "AuthRejectedError",
    "JSONArguments",
    "RemoteError",
    "RpcSession",
]

_log = logging.getLogger(__name__)

# The frame encoder under its old name (the call-path tests and profiles use it).
_encode_request = encode_request

# A notification or an answer over HTTP is one POST the server accepts at
# once (202). Its own bound, so one the server holds cannot hold up the ones
# behind it on the send lane for longer than this.
_SEND_SECONDS = 30.0

LossHandler = Callable[[Error], None]

#: The longest :meth:`RpcSession.close` waits for messages it accepted to be sent.
DRAIN_GRACE = 0.5


class RpcSession:
    """One JSON-RPC connection: ids, the request table, deadlines, cancellation.

    Thread safety: every public method may be called from any thread.
    """

    def __init__(
        self,
        transport: FrameTransport,
        *,
        binding: str,
        post: Callable[[Callable[[], None]], Any],
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
        on_lost: LossHandler | None = None,
    ) -> None:
        self._transport = transport
        self._binding = binding
        self._on_lost = on_lost
        self._token_prefix = os.urandom(4).hex()
        self._table = RequestTable(binding, send_cancel=self._send_cancelled)
        self._reader = Reader(
            transport,
            self._table,
            binding=binding,
            respond=self.respond,
            lose=self._lost,
            post=post,
            on_notification=on_notification,
            on_request=on_request,
        )
        self._reader_thread = threading.Thread(
            target=self._read_loop, name=f"mcpclient-reader-{binding}", daemon=True
        )
        self._started = False
        #: The era's headers on every message, set once the era is known (HTTP
        #: transports); a call's own headers come down in its context.
        self.era_headers: EraHeaders | None = None
        #: Modern Streamable HTTP: a call is cancelled by closing its stream.
        self.cancel_by_abort = False
        self._sends_messages = isinstance(transport, MessageTransport)
        self._writer: FrameWriter | None = None
        if not self._sends_messages:
            self._writer = FrameWriter(transport, binding=binding, on_error=self._lost)

    @property
    def sends_messages(self) -> bool:
        """Whether the transport takes whole messages with headers (HTTP)."""
        return self._sends_messages

    @property
    def _lock(self) -> threading.Lock:
        # The table's lock: the one the reader takes for every answer.
        return self._table.lock

    # -- lifecycle -------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread (the writer starts when a frame first has to wait)."""
        self._started = True
        watcher.acquire()
        self._reader_thread.start()

    def _read_loop(self) -> None:
        self._reader.run()

    @property
    def failure(self) -> Error | None:
        """Why the connection is unusable, or ``None`` while it works."""
        return self._table.failure

    def idle_since(self) -> float | None:
        """When a request other than ``ping`` last went out or was answered.

        ``None`` while one is in flight (the keepalive's idle clock).
        """
        return self._table.idle_since()

    def close(self, timeout: float | None = None) -> None:
        """Fail pending calls with ``shutdown``, send what was accepted, close. Idempotent.

        What the session accepted before (a ``notifications/cancelled`` of a
        call cancelled a moment ago, an answer to a server request) is sent
        first, waiting at most :data:`DRAIN_GRACE` and never more than half
        of ``timeout``; then the transport is closed and anything left is
        dropped.
        """
        first = self._table.fail_all(
            FailureClass.SHUTDOWN,
            "the binding was closed while the call was in flight",
            ShutdownError("the binding is closed", binding=self._binding, op="close"),
        )
        self._reader.cancel_inbound()
        writer = self._writer
        if first and self._started:
            grace = DRAIN_GRACE if timeout is None else min(DRAIN_GRACE, max(0.0, timeout) / 2)
            if writer is not None:
                writer.drain(grace)
            else:
                cast(MessageTransport, self._transport).drain(grace)
        if writer is not None:
            writer.stop()
        try:
            self._transport.close(timeout)
        finally:
            if self._started:
                if writer is not None:
                    writer.join(1.0)
                self._reader_thread.join(1.0)
                watcher.release()
                self._started = False

    def lose(self, exc: Error) -> None:
        """Declare the connection lost (a transport-side stream saw it end)."""
        self._lost(exc)

    def forget(self) -> None:
        """After fork, in the child: drop all state without touching the transport.

        Takes no lock: one held by a parent thread at fork time stays held
        forever in the child. The child has no other threads, so plain
        replacement is safe.
        """
        self._table.forget(ShutdownError("the binding was inherited through fork"))
        self._reader.forget()
        if self._writer is not None:
            self._writer.forget()
        self._started = False

    # -- outbound --------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None, ctx: CallContext) -> Any:
        """Send a request and block for its result, at most until ``ctx.deadline``.

        The calling thread is the request's deadline watcher: it waits on the
        request's Future with the time left, and at the absolute deadline the
        table expires the request (a ``notifications/cancelled`` goes out,
        unless ``ctx.cancel_on_wire`` is false) exactly as the watcher would.
        ``ctx`` reaches the request's table entry whole; its ``headers`` (the
        call's own, computed when it was prepared) are sent after the era's
        on a modern HTTP session, ignored otherwise.

        Raises:
            RemoteError: the server answered with a JSON-RPC error.
            DeadlineExceededError, RequestCancelledError, ConnectionLostError,
            IndeterminateError, ShutdownError, LimitExceededError: as classified.
        """
        table = self._table
        request_id = next(table.ids)
        entry = Pending(table, request_id, method, ctx)
        cancel = ctx.cancel
        handle = None
        try:
            if self._start(entry, params, SendKind.REQUEST) and cancel is not None:
                # Armed after the send: a cancel that already fired runs at once
                # inside add_callback, so the server sees the request first.
                handle = cancel.add_callback(table.canceller(request_id, cancel))
            table.wait(entry)
        except KeyboardInterrupt:
            # Whenever it lands, the request leaves the table (and, once sent,
            # is cancelled on the wire): nobody else would ever expire it.
            table.cancel(request_id, "interrupted")
            raise
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        return entry.outcome()

    def submit(self, method: str, params: dict[str, Any] | None, ctx: CallContext) -> Pending:
        """Send a request; return its Future (``request_id`` names it), completed by the deadline.

        Nobody waits on the Future here, so the process-wide watcher expires
        the request at ``ctx.deadline``. Cancelling the Future, or
        ``ctx.cancel``, cancels the request (on the wire too). ``ctx``: as
        for :meth:`call`.
        """
        table = self._table
        entry = table.new(method, ctx)
        if self._start(entry, params, SendKind.REQUEST):
            # Armed after the send (see call()).
            table.watch(entry)
            cancel = ctx.cancel
            if cancel is not None:
                handle = cancel.add_callback(table.canceller(entry.request_id, cancel))
                entry.add_done_callback(lambda _f: cancel.remove_callback(handle))
        return entry

    def open_stream(self, method: str, params: dict[str, Any] | None, *, op: str) -> Pending:
        """Open a stream (``subscriptions/listen``); return its Future (``request_id`` names it).

        A stream is a request whose answer only ends it: it has no deadline
        and lasts until it is cancelled (:meth:`cancel`), the server ends it
        or the connection is lost. Nobody waits on it and the watcher holds
        nothing for it. Over HTTP it goes out as :attr:`SendKind.STREAM`,
        with no deadline: a thread of its own for as long as it lasts.
        """
        # No deadline: the table neither waits for nor watches a stream.
        entry = self._table.new(method, CallContext(op=op, deadline=None))
        self._start(entry, params, SendKind.STREAM)
        return entry

    def _start(self, entry: Pending, params: dict[str, Any] | None, kind: SendKind) -> bool:
        """Enter a request in the table and send it; False: it was completed at once."""
        request_id = entry.request_id
        ctx = entry.ctx
        cancel = ctx.cancel
        if cancel is not None and cancel.cancelled:
            # Never sent, so the server never runs a call its caller was told
            # was cancelled; the token is armed only after the send (call()).
            entry.complete(
                exc=RequestCancelledError(
                    "the call was cancelled before it was sent", binding=self._binding, op=ctx.op
                )
            )
            return False
        if ctx.progress is not None or ctx.idle_timeout is not None:
            # The session owns the progress token; the table routes it (and
            # an idle timeout counts each report as a sign of life).
            entry.token = f"{self._token_prefix}-{request_id}"
            params = with_progress_token(params, entry.token)
        method = entry.method
        frame = encode_request(request_id, method, params)
        if not self._table.enter(entry):
            return False
        self._send(frame, request_id, method, params, kind=kind, ctx=ctx)
        return True

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (queued; never blocks)."""
        frame = encode_notification(method, params)
        self._send(frame, None, method, params, kind=SendKind.NOTIFICATION)

    def respond(
        self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        """Answer a server request (queued; never blocks)."""
        self._reader.answered(request_id)
        frame = encode_response(request_id, result, error)
        self._send(frame, None, "response", None, kind=SendKind.RESPONSE)

    def cancel(self, request_id: int, reason: str) -> None:
        """Cancel a pending request (a stream, too): fail it now and tell the server."""
        self._table.cancel(request_id, reason)

    def _send_cancelled(self, request_id: int, reason: str) -> None:
        if self._table.failure is not None:
            return
        if self.cancel_by_abort and isinstance(self._transport, MessageTransport):
            self._transport.abort(request_id)
        else:
            self.notify("notifications/cancelled", cancelled_params(request_id, reason))

    def _send(
        self,
        frame: bytes,
        request_id: int | None,
        method: str,
        params: dict[str, Any] | None,
        *,
        kind: SendKind,
        ctx: CallContext | None = None,
    ) -> None:
        """Send one frame of ``kind``; ``ctx`` is a request's or a stream's.

        Over HTTP the message carries the era's headers and then the call's
        own (``ctx.headers``), merged here: nothing is asked of the layers
        above. Its deadline is a request's own; a stream has none; a
        notification or an answer gets a bound of its own.
        """
        writer = self._writer
        if writer is not None:
            writer.send(frame)
            return
        # Not isinstance(): a runtime Protocol check costs microseconds per call.
        transport = cast(MessageTransport, self._transport)
        era = self.era_headers
        own = ctx.headers if ctx is not None else None
        sent = era.for_message(method, params, own) if era is not None else {}
        deadline: float | None
        if kind is SendKind.REQUEST:
            assert ctx is not None
            deadline = ctx.deadline
        elif kind is SendKind.STREAM:
            deadline = None
        else:
            deadline = now() + _SEND_SECONDS
        transport.send(frame, Outbound(request_id, method, deadline, sent, kind))

    # -- loss --------------------------------------------------------------

    def _lost(self, exc: Error) -> None:
        if self._table.failure is not None:
            return  # closed or lost already
        failure_class = exc.failure_class
        if failure_class not in (FailureClass.LIMIT_EXCEEDED, FailureClass.FRAMING):
            failure_class = FailureClass.TRANSPORT_CLOSED
        first = self._table.fail_all(failure_class, exc.message, exc)
        self._reader.cancel_inbound()
        if not first:
            return
        if self._writer is not None:
            self._writer.stop()
        if self._on_lost is not None:
            self._on_lost(exc)
