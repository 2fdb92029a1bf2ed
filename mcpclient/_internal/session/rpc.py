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
    watcher (``watcher.py``).

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

import concurrent.futures
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from mcpclient._internal.deadline import now
from mcpclient._internal.session import watcher
from mcpclient._internal.session.failures import AuthRejectedError, RemoteError, ResendableError
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
from mcpclient._internal.session.request_table import Pending, ProgressHandler, RequestTable
from mcpclient._internal.session.writer import FrameWriter
from mcpclient._internal.transport.base import (
    FrameTransport,
    MessageTransport,
    Outbound,
    SendKind,
)
from mcpclient._internal.wire.interactions import cancelled_params, with_progress_token
from mcpclient.calls import CancelToken
from mcpclient.errors import Error, FailureClass, ShutdownError

__all__ = [
    "METHOD_NOT_FOUND",
    "AuthRejectedError",
    "JSONArguments",
    "RemoteError",
    "ResendableError",
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
        #: transports); a call's own headers come down with it (``headers=``).
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

    def close(self, timeout: float | None = None) -> None:
        """Fail pending calls with ``shutdown`` and close the transport. Idempotent."""
        self._table.fail_all(
            FailureClass.SHUTDOWN,
            "the binding was closed while the call was in flight",
            ShutdownError("the binding is closed", binding=self._binding, op="close"),
        )
        self._reader.cancel_inbound()
        writer = self._writer
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

    def call(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        deadline: float,
        op: str,
        cancel: CancelToken | None = None,
        progress: ProgressHandler | None = None,
        indeterminate_on_loss: bool = False,
        deadline_class: FailureClass = FailureClass.DEADLINE,
        cancel_on_wire: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send a request and block for its result, at most until ``deadline``.

        The calling thread is the request's deadline watcher: it waits on the
        request's Future with the time left, and at the absolute ``deadline``
        the table expires the request (a ``notifications/cancelled`` goes
        out) exactly as the watcher would.

        ``headers``: the call's own HTTP headers (``Mcp-Name``,
        ``Mcp-Param-*``), computed when it was prepared; sent after the era's
        on a modern HTTP session, ignored otherwise.

        Raises:
            RemoteError: the server answered with a JSON-RPC error.
            DeadlineExceededError, RequestCancelledError, ConnectionLostError,
            IndeterminateError, ShutdownError, LimitExceededError: as classified.
        """
        table = self._table
        request_id = next(table.ids)
        entry = Pending(
            table,
            request_id,
            method,
            op,
            deadline,
            deadline_class,
            indeterminate_on_loss,
            cancel_on_wire,
        )
        handle = None
        try:
            if self._start(entry, params, cancel, progress, headers) and cancel is not None:
                # Armed after the send: a cancel that already fired runs at once
                # inside add_callback, so the server sees the request first.
                handle = cancel.add_callback(table.canceller(request_id, cancel, op))
            table.wait(entry)
        except KeyboardInterrupt:
            # Whenever it lands, the request leaves the table (and, once sent,
            # is cancelled on the wire): nobody else would ever expire it.
            table.cancel(request_id, "interrupted", op=op)
            raise
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        return entry.outcome()

    def submit(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        deadline: float,
        op: str,
        cancel: CancelToken | None = None,
        progress: ProgressHandler | None = None,
        indeterminate_on_loss: bool = False,
        deadline_class: FailureClass = FailureClass.DEADLINE,
        cancel_on_wire: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[concurrent.futures.Future[Any], int]:
        """Send a request; return its Future (completed by the deadline) and id.

        Nobody waits on the Future here, so the process-wide watcher expires
        the request at its absolute ``deadline`` (``math.inf``: never, for a
        stream such as ``subscriptions/listen``). Cancelling the Future
        cancels the request (on the wire too). ``headers``: as for :meth:`call`.
        """
        table = self._table
        entry = table.new(
            method,
            op,
            deadline,
            deadline_class=deadline_class,
            indeterminate=indeterminate_on_loss,
            on_wire=cancel_on_wire,
        )
        request_id = entry.request_id
        if not self._start(entry, params, cancel, progress, headers):
            return entry, request_id
        # Arm the deadline and the cancel after the send (see call()).
        if deadline != math.inf:
            table.watch(entry)
        if cancel is not None:
            handle = cancel.add_callback(table.canceller(request_id, cancel, op))
            entry.add_done_callback(lambda _f: cancel.remove_callback(handle))
        return entry, request_id

    def _start(
        self,
        entry: Pending,
        params: dict[str, Any] | None,
        cancel: CancelToken | None,
        progress: ProgressHandler | None,
        headers: Mapping[str, str] | None,
    ) -> bool:
        """Enter a request in the table and send it; False: it was completed at once."""
        request_id = entry.request_id
        if progress is not None:
            entry.token = f"{self._token_prefix}-{request_id}"
            entry.progress = progress
            params = with_progress_token(params, entry.token)
        method = entry.method
        frame = encode_request(request_id, method, params)
        if not self._table.enter(entry, cancel):
            return False
        # A request without a deadline lasts as long as its stream.
        deadline = entry.deadline
        kind = SendKind.STREAM if deadline == math.inf else SendKind.REQUEST
        self._send(frame, request_id, method, deadline, params, kind=kind, headers=headers)
        return True

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (queued; never blocks)."""
        frame = encode_notification(method, params)
        self._send(frame, None, method, None, params, kind=SendKind.NOTIFICATION)

    def respond(
        self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        """Answer a server request (queued; never blocks)."""
        self._reader.answered(request_id)
        frame = encode_response(request_id, result, error)
        self._send(frame, None, "response", None, None, kind=SendKind.RESPONSE)

    def cancel(self, request_id: int, reason: str, *, op: str = "") -> None:
        """Cancel a pending request: fail it now and tell the server."""
        self._table.cancel(request_id, reason, op=op)

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
        deadline: float | None,
        params: dict[str, Any] | None,
        *,
        kind: SendKind,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Send one frame; ``deadline`` is a request's (None: a notification or an answer).

        Over HTTP the message carries the era's headers and then the call's
        own (``headers``), merged here: nothing is asked of the layers above.
        """
        writer = self._writer
        if writer is not None:
            writer.send(frame)
            return
        assert isinstance(self._transport, MessageTransport)
        era = self.era_headers
        sent = era.for_message(method, params, headers) if era is not None else {}
        if deadline is None:
            deadline = now() + _SEND_SECONDS
        self._transport.send(frame, Outbound(request_id, method, deadline, sent, kind))

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
