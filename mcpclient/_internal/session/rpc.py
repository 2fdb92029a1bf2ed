"""JSON-RPC 2.0 over a framed transport: the request table and its threads.

Threads:
    ``mcpclient-reader-<binding>`` is the sole receiver. It decodes each
    frame once, completes pending requests, answers ``ping`` and unknown
    server methods, and hands everything else to callbacks that only queue
    work (the reader never runs user code and never blocks on anything but
    the transport). ``mcpclient-writer-<binding>`` is the sole sender of
    queued frames; a caller may write a frame itself when the pipe takes it
    whole at once and nothing is queued (saves a thread hand-off per call).
    A caller blocked in :meth:`RpcSession.call` enforces its own absolute
    deadline (its wait ends there, and it expires the request itself); the
    requests nobody waits on (:meth:`RpcSession.submit`) are expired by the
    process-wide watcher (``watcher.py``).

Locks:
    ``_lock`` guards the request table, the progress-token map, the inbound
    request map and the closed/lost state. ``_write_lock`` serializes frame
    writes (writer thread and the direct-write fast path); callers only ever
    *try* to take it, so no caller blocks behind a stuck pipe. No lock is
    held while a request is completed or a callback runs.

Request table:
    Each pending request is a :class:`_Pending` keyed by id. It is completed
    exactly once, by whoever takes it out of the table under ``_lock`` (the
    reader with the answer, the deadline, a cancel, a loss, close), outside
    the lock. A :meth:`~RpcSession.call` waits on a lock acquired when the
    entry is made and released by that completion (the cheapest hand-off
    between two threads; a ``concurrent.futures.Future`` costs a Condition,
    an RLock and a lock per waiter). :meth:`~RpcSession.submit` gets a Future
    instead, which its holder may cancel: completing a cancelled Future is
    tolerated (``InvalidStateError``).

Shutdown:
    :meth:`close` fails every pending call at once (``shutdown``; a sent
    ``tools/call`` is ``indeterminate``), closes the transport (which ends
    the reader with EOF and unblocks a writer stuck in a full pipe), and
    stops the writer. A lost transport fails every pending call at once with
    a classified error; no caller waits for its deadline.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

import mcpclient.errors as errors_module
from mcpclient._internal import jsonio
from mcpclient._internal.deadline import now
from mcpclient._internal.session import watcher
from mcpclient._internal.transport.base import (
    AuthChallenge,
    FrameTransport,
    MessageTransport,
    Outbound,
    RequestFailure,
    SendKind,
    SessionExpiredError,
    StreamEndedError,
)
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    AuthError,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    IndeterminateError,
    LimitExceededError,
    RequestCancelledError,
    ShutdownError,
    error_for,
)

__all__ = ["AuthRejectedError", "RemoteError", "ResendableError", "RpcSession"]

_log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
_WRITER_IDLE = 1.0  # seconds an idle writer thread waits for more before it exits
# A caller whose deadline passed expired its request; if another thread took
# the request first, it completes it at once. Waiting longer means that thread
# died between the two steps: the caller then reports its deadline anyway.
_TAKEN_GRACE = 1.0
# lock.acquire() refuses a timeout past threading.TIMEOUT_MAX; wait in slices.
_MAX_WAIT = 3600.0
# A notification or an answer over HTTP is one POST the server accepts at
# once (202). Its own bound, so one the server holds cannot hold up the ones
# behind it on the send lane for longer than this.
_SEND_SECONDS = 30.0
INVALID_REQUEST = -32600

NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestHandler = Callable[[Any, str, dict[str, Any], CancelToken], None]
LossHandler = Callable[[Error], None]
ProgressHandler = Callable[[dict[str, Any]], None]


_PUBLIC_ERRORS = frozenset(
    cls for cls in vars(errors_module).values() if isinstance(cls, type) and issubclass(cls, Error)
)


class ResendableError(ConnectionLostError):
    """The connection is gone, and the server provably never processed this request."""


class AuthRejectedError(AuthError):
    """The server answered 401/403: it never ran the request (DESIGN.md §7).

    ``challenge`` is what an auth provider needs to recover; the client then
    sends the request again. Callers never see this class (the client turns it
    into a plain :class:`AuthError` when nothing can recover).
    """

    def __init__(self, message: str, *, challenge: AuthChallenge, binding: str, op: str) -> None:
        super().__init__(message, failure_class=FailureClass.AUTH_REQUIRED, binding=binding, op=op)
        self.challenge = challenge


class RemoteError(Exception):
    """A JSON-RPC error response from the server (translated by the caller)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class JSONArguments(dict[str, Any]):
    """Tool arguments already encoded as JSON text (``encoded``), checked once.

    The session splices ``encoded`` into the frame instead of encoding the
    arguments a second time. It is the caller's own copy, never mutated after
    it was encoded; it still reads as the plain dict (HTTP header hooks, MRTR
    retries that copy the params).
    """

    __slots__ = ("encoded",)
    encoded: bytes  # set once, right after the dict is filled (no __init__: a frame less)


class _Pending:
    """One request in the table; see "Request table" in the module docstring."""

    __slots__ = (
        "deadline",
        "deadline_class",
        "done",
        "error",
        "future",
        "indeterminate",
        "method",
        "on_wire",
        "op",
        "progress",
        "result",
        "token",
        "watch",
    )

    def __init__(
        self,
        method: str,
        op: str,
        deadline: float,
        future: concurrent.futures.Future[Any] | None,
        *,
        indeterminate: bool,
        deadline_class: FailureClass,
        on_wire: bool,
    ) -> None:
        # call(): a lock taken now and released by the completion; submit(): a Future.
        self.done: threading.Lock | None = None
        if future is None:
            self.done = threading.Lock()
            self.done.acquire()
        self.future = future
        self.result: Any = None
        self.error: BaseException | None = None
        self.method = method
        self.op = op
        self.deadline = deadline
        self.deadline_class = deadline_class
        self.indeterminate = indeterminate  # a loss makes it indeterminate (tools/call)
        self.on_wire = on_wire  # whether a cancellation may be sent for it
        self.watch: watcher.Timer | None = None
        self.token: str | None = None
        self.progress: ProgressHandler | None = None


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
        self._post = post  # runs a callable on the binding's event lane
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_lost = on_lost
        self._ids = itertools.count(1)
        self._token_prefix = os.urandom(4).hex()
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._tokens: dict[str, _Pending] = {}
        self._inbound: dict[Any, CancelToken] = {}
        self._failure: Error | None = None  # set once the connection is unusable
        self._write_lock = threading.Lock()  # serializes frame writes
        self._count_lock = threading.Lock()  # guards _queued
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._queued = 0  # frames queued and not yet written
        self._reader = threading.Thread(
            target=self._read_loop, name=f"mcpclient-reader-{binding}", daemon=True
        )
        # Made when a frame first has to wait (see _ensure_writer): most
        # bindings never need one, not even its Thread object (~2 KiB).
        self._writer: threading.Thread | None = None
        self._started = False
        #: Per-message HTTP headers, set once the era is known (HTTP transports).
        self.header_hook: Callable[[str, dict[str, Any] | None], dict[str, str]] | None = None
        #: Modern Streamable HTTP: a call is cancelled by closing its stream.
        self.cancel_by_abort = False
        self._sends_messages = isinstance(transport, MessageTransport)
        self._sends_frames = not self._sends_messages
        self._writer_started = False  # guarded by _count_lock

    @property
    def sends_messages(self) -> bool:
        """Whether the transport takes whole messages with headers (HTTP)."""
        return self._sends_messages

    # -- lifecycle -------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread (the writer starts when a frame first has to wait)."""
        self._started = True
        watcher.acquire()
        self._reader.start()

    def _ensure_writer(self) -> None:
        # Most frames are written directly by their caller; a binding whose
        # pipe never fills never needs a writer thread (~16 KiB each).
        with self._count_lock:
            if self._writer_started or not self._sends_frames:
                return
            self._writer_started = True
            writer = self._writer = threading.Thread(
                target=self._write_loop, name=f"mcpclient-writer-{self._binding}", daemon=True
            )
        writer.start()

    @property
    def failure(self) -> Error | None:
        """Why the connection is unusable, or ``None`` while it works."""
        return self._failure

    def close(self, timeout: float | None = None) -> None:
        """Fail pending calls with ``shutdown`` and close the transport. Idempotent."""
        self._fail_all(
            lambda p: self._classified(
                p, FailureClass.SHUTDOWN, "the binding was closed while the call was in flight"
            ),
            ShutdownError("the binding is closed", binding=self._binding, op="close"),
        )
        self._queue.put(None)
        try:
            self._transport.close(timeout)
        finally:
            if self._started:
                with self._count_lock:
                    writer = self._writer if self._writer_started else None
                if writer is not None and writer.ident is not None:
                    writer.join(1.0)
                self._reader.join(1.0)
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
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._pending = {}
        self._tokens = {}
        self._inbound = {}
        self._failure = ShutdownError("the binding was inherited through fork")
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
    ) -> Any:
        """Send a request and block for its result, at most until ``deadline``.

        The calling thread is the request's deadline watcher: its wait ends at
        the absolute ``deadline``, and it then expires the request (a
        ``notifications/cancelled`` goes out) exactly as the watcher would.

        Raises:
            RemoteError: the server answered with a JSON-RPC error.
            DeadlineExceededError, RequestCancelledError, ConnectionLostError,
            IndeterminateError, ShutdownError, LimitExceededError: as classified.
        """
        entry = _Pending(
            method,
            op,
            deadline,
            None,
            indeterminate=indeterminate_on_loss,
            deadline_class=deadline_class,
            on_wire=cancel_on_wire,
        )
        request_id = next(self._ids)
        handle = None
        try:
            self._start(entry, request_id, params, cancel, progress)
            if cancel is not None:
                # Armed after the send: a cancel that already fired runs at once
                # inside add_callback, so the server sees the request first.
                handle = cancel.add_callback(
                    lambda: self.cancel(
                        request_id, cancel.reason or "cancelled by the caller", op=op
                    )
                )
            self._wait(entry, request_id)
        except KeyboardInterrupt:
            # Whenever it lands, the request leaves the table (and, once sent,
            # is cancelled on the wire): nobody else would ever expire it.
            self.cancel(request_id, "interrupted", op=op)
            raise
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        error = entry.error
        if error is None:
            return entry.result
        entry.error = None  # no reference cycle through the traceback
        try:
            raise error
        finally:
            error = None

    def _wait(self, entry: _Pending, request_id: int) -> None:
        """Block until ``entry`` is completed; expire it at its deadline."""
        done = entry.done
        assert done is not None
        deadline = entry.deadline
        while True:
            left = deadline - now()
            if left <= 0:
                self._expire(request_id)
                # Completed now, by us or by whoever took it first.
                if done.acquire(True, _TAKEN_GRACE):
                    return
                entry.error = DeadlineExceededError(  # pragma: no cover - defensive
                    "the call did not complete by its deadline",
                    failure_class=entry.deadline_class,
                    binding=self._binding,
                    op=entry.op,
                )
                return  # pragma: no cover
            if done.acquire(True, min(left, _MAX_WAIT)):
                return

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
    ) -> tuple[concurrent.futures.Future[Any], int]:
        """Send a request; return its future (completed by the deadline) and id.

        Nobody waits on the future here, so the process-wide watcher expires
        the request at its absolute ``deadline`` (``math.inf``: never, for a
        stream such as ``subscriptions/listen``).
        """
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        entry = _Pending(
            method,
            op,
            deadline,
            future,
            indeterminate=indeterminate_on_loss,
            deadline_class=deadline_class,
            on_wire=cancel_on_wire,
        )
        request_id = next(self._ids)
        self._start(entry, request_id, params, cancel, progress)
        if future.done():
            return future, request_id
        # Arm the deadline and the cancel after the send (see call()).
        if deadline != math.inf:
            entry.watch = watcher.schedule(deadline, lambda: self._expire(request_id))
            if future.done():  # completed before the timer was attached
                entry.watch.cancel()
        if cancel is not None:
            handle = cancel.add_callback(
                lambda: self.cancel(request_id, cancel.reason or "cancelled by the caller", op=op)
            )
            future.add_done_callback(lambda _f: cancel.remove_callback(handle))
        return future, request_id

    def _start(
        self,
        entry: _Pending,
        request_id: int,
        params: dict[str, Any] | None,
        cancel: CancelToken | None,
        progress: ProgressHandler | None,
    ) -> None:
        """Enter a request in the table and send it, or complete it at once."""
        # Nothing is sent for a call that is already over: the server must
        # never run a call its caller was told was cancelled or timed out.
        if cancel is not None and cancel.cancelled:
            self._finish(
                entry,
                exc=RequestCancelledError(
                    "the call was cancelled before it was sent", binding=self._binding, op=entry.op
                ),
            )
            return
        if now() >= entry.deadline:
            self._finish(
                entry,
                exc=DeadlineExceededError(
                    "the call's deadline passed before it was sent",
                    failure_class=entry.deadline_class,
                    binding=self._binding,
                    op=entry.op,
                ),
            )
            return
        if progress is not None:
            entry.token = f"{self._token_prefix}-{request_id}"
            entry.progress = progress
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = entry.token
            params["_meta"] = meta
        method = entry.method
        frame = _encode_request(request_id, method, params)
        with self._lock:
            failure = self._failure
            if failure is None:
                self._pending[request_id] = entry
                if entry.token is not None:
                    self._tokens[entry.token] = entry
        if failure is not None:
            self._finish(entry, exc=self._relabel(failure, entry.op))
            return
        # A request without a deadline lasts as long as its stream.
        kind = SendKind.STREAM if entry.deadline == math.inf else SendKind.REQUEST
        self._send(frame, request_id, method, entry.deadline, params, kind=kind)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (queued; never blocks)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(jsonio.encode(message), None, method, None, params, kind=SendKind.NOTIFICATION)

    def respond(
        self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        """Answer a server request (queued; never blocks)."""
        with self._lock:
            self._inbound.pop(request_id, None)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result if result is not None else {}
        self._send(jsonio.encode(message), None, "response", None, None, kind=SendKind.RESPONSE)

    def cancel(self, request_id: int, reason: str, *, op: str = "") -> None:
        """Cancel a pending request: fail it now and tell the server."""
        entry = self._take(request_id)
        if entry is None:
            return
        self._finish(
            entry,
            exc=RequestCancelledError(
                f"the call was cancelled ({reason})", binding=self._binding, op=op
            ),
        )
        if entry.on_wire:
            self._send_cancelled(request_id, reason)

    def _expire(self, request_id: int) -> None:
        entry = self._take(request_id)
        if entry is None:
            return  # answered, cancelled or failed first
        self._finish(
            entry,
            exc=DeadlineExceededError(
                "the call did not complete by its deadline",
                failure_class=entry.deadline_class,
                binding=self._binding,
                op=entry.op,
            ),
        )
        if entry.on_wire:
            self._send_cancelled(request_id, "deadline exceeded")

    def _send_cancelled(self, request_id: int, reason: str) -> None:
        if self._failure is not None:
            return
        if self.cancel_by_abort and isinstance(self._transport, MessageTransport):
            self._transport.abort(request_id)
        else:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    def _send(
        self,
        frame: bytes,
        request_id: int | None,
        method: str,
        deadline: float | None,
        params: dict[str, Any] | None,
        *,
        kind: SendKind,
    ) -> None:
        """Send one frame; ``deadline`` is a request's (None: a notification or an answer)."""
        if self._sends_messages:
            assert isinstance(self._transport, MessageTransport)
            hook = self.header_hook
            headers = hook(method, params) if hook is not None else {}
            if deadline is None:
                deadline = now() + _SEND_SECONDS
            self._transport.send(frame, Outbound(request_id, method, deadline, headers, kind))
            return
        # Fast path: nothing is queued and the pipe takes the frame whole, so
        # writing it here keeps order and saves a hand-off to the writer.
        if self._write_lock.acquire(False):  # positional: no keyword parsing per frame
            try:
                # No _count_lock for this read: a frame this thread queued
                # earlier is already counted (it counts before it queues),
                # and another thread's concurrent send has no order to keep.
                if self._queued == 0 and self._failure is None:
                    try:
                        if self._transport.try_write_frame(frame):
                            return
                    except Error as exc:
                        self._lost(exc)
                        return
            finally:
                self._write_lock.release()
        with self._count_lock:
            self._queued += 1
        self._queue.put(frame)
        self._ensure_writer()

    def _write_loop(self) -> None:
        while True:
            try:
                frame = self._queue.get(timeout=_WRITER_IDLE)
            except queue.Empty:
                with self._count_lock:
                    if self._queued == 0:
                        # Idle: exit; the next frame that has to wait starts a
                        # new writer (threads exist only while they have work).
                        self._writer_started = False
                        return
                continue
            if frame is None:
                return
            with self._write_lock:
                try:
                    if self._failure is None:
                        self._transport.write_frame(frame)
                except Error as exc:
                    self._lost(exc)
                except Exception as exc:
                    _log.exception("writer of binding %s failed", self._binding)
                    self._lost(
                        ConnectionLostError(
                            f"writing to the server failed: {exc!r}", binding=self._binding
                        )
                    )
                finally:
                    with self._count_lock:
                        self._queued -= 1

    # -- inbound ---------------------------------------------------------

    def _read_loop(self) -> None:
        read_frame, decode = self._transport.read_frame, jsonio.decode  # once, not per frame
        try:
            while True:
                try:
                    frame = read_frame()
                except Error as exc:
                    self._lost(exc)
                    return
                if isinstance(frame, RequestFailure):
                    self._fail_request(frame)
                    continue
                if frame is None:
                    reason = self._transport.loss_reason()
                    self._lost(
                        ConnectionLostError(
                            f"the server closed the connection ({reason})", binding=self._binding
                        )
                    )
                    return
                try:
                    message = decode(frame)
                except jsonio.FrameError as exc:
                    # Line framing is intact, so one bad line does not poison
                    # the stream: drop it, say so, keep reading.
                    _log.warning("binding %s: dropped a malformed frame: %s", self._binding, exc)
                    continue
                try:
                    if isinstance(message, list):
                        for item in message:  # a 2025-03-26 batch
                            self._dispatch(item)
                    else:
                        self._dispatch(message)
                except Exception:
                    _log.exception("binding %s: failed to handle a message", self._binding)
        except BaseException as exc:  # never die silently
            _log.exception("reader of binding %s crashed", self._binding)
            self._lost(ConnectionLostError(f"the reader failed: {exc!r}", binding=self._binding))

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            _log.warning("binding %s: dropped a non-object message", self._binding)
            return
        method = message.get("method")
        if method is None:
            self._on_response(message)
        elif not isinstance(method, str):
            _log.warning("binding %s: dropped a message with a non-string method", self._binding)
        elif "id" in message:
            self._on_server_request(message["id"], method, message.get("params"))
        else:
            self._on_server_notification(method, message.get("params"))

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if type(request_id) is not int:  # decoded JSON: exact types (a bool is not an int here)
            return  # not one of ours: ids are ints we minted
        entry = self._take(request_id)
        if entry is None:
            return  # late (cancelled, expired) or unknown: dropped silently
        if "error" in message:
            error = message["error"]
            if isinstance(error, dict):
                code = error.get("code")
                text = error.get("message")
                exc: BaseException = RemoteError(
                    code if isinstance(code, int) and not isinstance(code, bool) else 0,
                    text if isinstance(text, str) else "",
                    error.get("data"),
                )
            else:
                exc = RemoteError(0, "malformed error object")
            self._finish(entry, exc=exc)
        elif "result" in message:
            self._finish(entry, result=message["result"])
        else:
            self._finish(entry, exc=RemoteError(0, "response has neither result nor error"))

    def _on_server_request(self, request_id: Any, method: str, params: Any) -> None:
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        if method == "ping":
            self.respond(request_id, {})
            return
        if self._on_request is None:
            self.respond(
                request_id,
                error={"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"[:200]},
            )
            return
        token = CancelToken()
        with self._lock:
            self._inbound[request_id] = token
        self._on_request(request_id, method, params if isinstance(params, dict) else {}, token)

    def _on_server_notification(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            params = {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            with self._lock:
                entry = self._tokens.get(token) if isinstance(token, str) else None
            if entry is not None and entry.progress is not None:
                callback = entry.progress
                self._post_lossy(lambda: callback(params))
            return
        if method == "notifications/cancelled":
            with self._lock:
                inbound = self._inbound.pop(params.get("requestId"), None)
            if inbound is not None:
                inbound.cancel("cancelled by the server")
            return
        if self._on_notification is not None:
            self._on_notification(method, params)

    def _post_lossy(self, fn: Callable[[], None]) -> None:
        self._post(fn)

    def _fail_request(self, failure: RequestFailure) -> None:
        """An HTTP-level failure of one request (or, with id -1, of the session)."""
        error = failure.error
        if failure.resume is not None or isinstance(error, StreamEndedError):
            # A response stream ended: everything it carried was read before
            # this, so an answered request is done and an unanswered one is
            # resumed (or fails without taking the binding down).
            with self._lock:
                pending = failure.request_id in self._pending
            if not pending:
                return
            if failure.resume is not None:
                failure.resume()
                return
        if failure.delivered:
            # The failure came through a resumption: the request reached the
            # server, whatever the resuming GET says (refused, 4xx/5xx, an
            # auth challenge). Never "not sent", never re-sent.
            self._fail_delivered(failure)
            return
        challenge = getattr(error, "challenge", None)
        if isinstance(error, AuthError) and isinstance(challenge, AuthChallenge):
            # A 401/403 proves the server did not run it: the client may
            # recover (authorize) and send it again, even a tools/call.
            entry = self._take(failure.request_id) if failure.request_id >= 0 else None
            if entry is not None:
                self._finish(
                    entry,
                    exc=AuthRejectedError(
                        error.message, challenge=challenge, binding=self._binding, op=entry.method
                    ),
                )
                return
        if isinstance(error, SessionExpiredError) and failure.request_id >= 0:
            # A 404 to a request that carried the session id proves the server
            # never processed it: it may be re-sent on the next session, even
            # a tools/call. Everything else in flight is treated as lost.
            entry = self._take(failure.request_id)
            if entry is not None:
                self._finish(
                    entry,
                    exc=ResendableError(error.message, binding=self._binding, op=entry.method),
                )
        if isinstance(error, SessionExpiredError) or failure.request_id < 0:
            self._lost(error)
            return
        entry = self._take(failure.request_id)
        if entry is None:
            self._lose_if_broken(error)
            return
        # An HTTP failure says whether the request may have been written;
        # one that provably was not is not indeterminate, even for tools/call.
        sent = getattr(error, "sent", True)
        if entry.indeterminate and sent and isinstance(error, ConnectionLostError):
            error = IndeterminateError(
                f"{error.message}; the server may or may not have run it",
                binding=self._binding,
                op=entry.method,
            )
        if type(error) not in _PUBLIC_ERRORS:
            # Transport-specific subclasses (HTTP send errors...) stay inside:
            # callers see the one public class their failure class fixes.
            public = error_for(
                error.failure_class, error.message, binding=self._binding, op=entry.method
            )
            public.__cause__ = error
            error = public
        self._finish(entry, exc=error)
        self._lose_if_broken(failure.error)

    def _fail_delivered(self, failure: RequestFailure) -> None:
        """Fail a request known to have reached the server as a sent-then-lost one."""
        error = failure.error
        entry = self._take(failure.request_id)
        if entry is None:
            self._lose_if_broken(error)
            return
        if entry.indeterminate and not isinstance(error, DeadlineExceededError):
            failed: Error = IndeterminateError(
                f"{error.message}; the server may or may not have run it",
                binding=self._binding,
                op=entry.method,
            )
        else:
            failed = error_for(
                error.failure_class, error.message, binding=self._binding, op=entry.method
            )
        failed.__cause__ = error
        self._finish(entry, exc=failed)
        self._lose_if_broken(error)

    def _lose_if_broken(self, error: Error) -> None:
        # The server could not be reached, or the connection broke (refused,
        # reset): the binding's connection is lost and the reconnect policy
        # applies. A stream we aborted ourselves (a cancel) is not a loss.
        if (
            isinstance(error, ConnectionLostError)
            and error.failure_class is FailureClass.TRANSPORT_CLOSED
            and not getattr(error, "aborted", False)
            and not isinstance(error, StreamEndedError)
        ):
            self._lost(error)

    # -- completion ------------------------------------------------------

    def _take(self, request_id: int) -> _Pending | None:
        with self._lock:
            entry = self._pending.pop(request_id, None)
            if entry is not None and entry.token is not None:
                self._tokens.pop(entry.token, None)
            return entry

    @staticmethod
    def _finish(entry: _Pending, *, result: Any = None, exc: BaseException | None = None) -> None:
        """Complete ``entry``: only its taker (or ``_start``) calls this, exactly once."""
        if entry.watch is not None:
            entry.watch.cancel()
        if isinstance(exc, Error) and exc.op != entry.op:
            # Whichever layer classified the failure (a pipe names its read or
            # write, HTTP and a lost session the wire method), the caller sees
            # the one op it called: the same failure, the same op, every path.
            exc.op = entry.op
        future = entry.future
        if future is None:
            entry.result = result
            entry.error = exc
            assert entry.done is not None
            entry.done.release()  # wakes the caller blocked in call()
            return
        try:
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(result)
        except concurrent.futures.InvalidStateError:
            pass  # the caller cancelled the future first

    def _classified(self, entry: _Pending, failure_class: FailureClass, message: str) -> Error:
        if entry.indeterminate:
            return IndeterminateError(
                f"{message}; the server may or may not have run it",
                binding=self._binding,
                op=entry.method,
            )
        return error_for(failure_class, message, binding=self._binding, op=entry.method)

    def _fail_all(self, build: Callable[[_Pending], Error], failure: Error) -> None:
        with self._lock:
            if self._failure is None:
                self._failure = failure
            pending = list(self._pending.values())
            self._pending.clear()
            self._tokens.clear()
            inbound = list(self._inbound.values())
            self._inbound.clear()
        for entry in pending:
            self._finish(entry, exc=build(entry))
        for token in inbound:
            token.cancel("the connection ended")

    def _lost(self, exc: Error) -> None:
        with self._lock:
            first = self._failure is None
        if not first:
            return
        failure_class = exc.failure_class
        if failure_class not in (FailureClass.LIMIT_EXCEEDED, FailureClass.FRAMING):
            failure_class = FailureClass.TRANSPORT_CLOSED
        self._fail_all(lambda p: self._classified(p, failure_class, exc.message), exc)
        self._queue.put(None)
        if self._on_lost is not None:
            self._on_lost(exc)

    def _relabel(self, failure: Error, op: str) -> Error:
        if isinstance(failure, ShutdownError):
            return ShutdownError(failure.message, binding=self._binding, op=op)
        if isinstance(failure, LimitExceededError):
            return LimitExceededError(failure.message, binding=self._binding, op=op)
        return ConnectionLostError(
            f"the connection is gone: {failure.message}", binding=self._binding, op=op
        )


def _encode_request(request_id: int, method: str, params: dict[str, Any] | None) -> bytes:
    """One request frame; :class:`JSONArguments` are spliced in, not encoded again."""
    arguments = params.get("arguments") if params is not None else None
    if type(arguments) is not JSONArguments:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return jsonio.encode(message)
    assert params is not None
    name = params.get("name")
    if len(params) == 2 and type(name) is str:  # a plain tools/call: no dict to encode
        return _TOOLS_CALL % (
            request_id,
            jsonio.encode(method),
            jsonio.encode(name),
            arguments.encoded,
        )
    rest = jsonio.encode({k: v for k, v in params.items() if k != "arguments"})
    return _SPLICED % (
        request_id,
        jsonio.encode(method),
        rest[:-1],  # the other params, their object left open
        b"," if len(rest) > 2 else b"",
        arguments.encoded,
    )


# The frames _encode_request fills in: ``arguments`` goes last, as checked.
_TOOLS_CALL = b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":{"name":%b,"arguments":%b}}'
_SPLICED = b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b%b"arguments":%b}}'
