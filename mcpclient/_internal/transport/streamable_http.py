"""The Streamable HTTP transport, both eras, as a stream of frames.

The session speaks frames; this transport turns each outbound message into
a POST and each response (a JSON body, or the events of an SSE stream) back
into inbound frames, in one queue that the session's reader drains. A
request that fails at the HTTP level comes back as a :class:`RequestFailure`
for that request id, never as a dead connection.

Era differences are driven from above: the session hands every message down
with its headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``), so nothing here parses JSON-RPC. Legacy sessions: the
``Mcp-Session-Id`` of the first response that carries one is echoed on every
later request (a changed id is an error; a 404 to a request carrying it means
the session is gone); :meth:`open_server_stream` opens the optional GET
stream for server messages (405: none); :meth:`close` sends ``DELETE``.
Reading a request's SSE response stream and resuming it is in
:mod:`http_resume`; the deprecated HTTP+SSE transport, a subclass of this
one, in :mod:`legacy_sse`.

Threads:
    I/O workers, ``mcpclient-http-<binding>``, on-demand threads
    (``threads.py``) up to the pool size, each exiting after 5 idle seconds:
    each owns a ``requests.Session`` and sends a request and reads its
    response. One send lane, ``mcpclient-send-<binding>`` (on demand too,
    exiting after 5 idle seconds), carries what must never wait behind a
    full pool, one at a time in the order sent: notifications and answers to
    server requests (:class:`SendKind` of each message says which is which),
    each within a bounded deadline of its own. A stream (``subscriptions/listen``) holds a
    thread of its own, ``mcpclient-listen-<binding>``, for as long as it
    lasts; so does the legacy GET stream. A resumed response stream runs
    on a thread of its own too (see :mod:`http_resume`).

Locks:
    ``_lock`` guards both job queues and the pool's and lane's thread
    state (it is their on-demand lock), the abort handles of everything in
    flight, the session id and the closed flag. No lock is held across I/O.

Shutdown:
    :meth:`drain` (the session calls it first) waits, bounded, until the lane
    has sent what it accepted. :meth:`close` refuses new messages, aborts
    everything in flight (which unblocks its worker or the lane; what is
    still queued is dropped), sends
    ``DELETE`` for a legacy session within the close budget, ends the
    inbound queue so the reader sees EOF, and joins the workers and the
    lane within what is left of the budget.
"""

from __future__ import annotations

import collections
import logging
import math
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mcpclient._core.deadline import now
from mcpclient._core.threads import OnDemandThreads
from mcpclient._internal.transport import http
from mcpclient._internal.transport.base import (
    Answer,
    Disposition,
    Outbound,
    RequestFailure,
    SendKind,
    SessionExpiredError,
    StreamEndedError,
)
from mcpclient._internal.transport.http_errors import request_failure
from mcpclient._internal.transport.http_resume import STREAM_ATTEMPTS as _STREAM_ATTEMPTS
from mcpclient._internal.transport.http_resume import STREAM_RETRY as _STREAM_RETRY
from mcpclient._internal.transport.http_resume import STREAM_RETRY_MAX as _STREAM_RETRY_MAX
from mcpclient._internal.transport.http_resume import ResponseStreams
from mcpclient._internal.transport.sse import iter_events
from mcpclient.errors import (
    ConnectionLostError,
    Error,
    FailureClass,
    ProtocolError,
)
from mcpclient.transports import LegacySSETransport, StreamableHTTPTransport

__all__ = ["Outbound", "RequestFailure", "StreamableHTTPConnection"]

_log = logging.getLogger(__name__)

Job = tuple[bytes, Outbound]  # one message to POST and what the session said about it
_IDLE_SECONDS = 5.0
_STREAM_IDLE = 300.0  # a long-lived stream silent this long is cut (and re-opened)
_JSON = "application/json"
_SSE = "text/event-stream"


class StreamableHTTPConnection(ResponseStreams):
    """One Streamable HTTP "connection": a pool of POSTs and an inbound queue.

    Thread safety: :meth:`send`, :meth:`abort` and :meth:`close` from any
    thread; :meth:`read_frame` from the session's reader only.
    """

    def __init__(
        self,
        params: StreamableHTTPTransport | LegacySSETransport,
        *,
        binding: str,
        max_body_bytes: int,
        max_frame_bytes: int,
        pool_size: int,
        schedule: http.Schedule,
    ) -> None:
        self._binding = binding
        self._url = params.url
        self._factory = http.HttpClientFactory.from_transport(
            params, schedule=schedule, binding=binding
        )
        self._max_body = max_body_bytes
        self._max_frame = max_frame_bytes
        self._inbound: queue.SimpleQueue[
            bytes | bytearray | str | Answer | RequestFailure | None
        ] = queue.SimpleQueue()
        self._jobs: collections.deque[Job] = collections.deque()
        self._lane_jobs: collections.deque[Job] = collections.deque()
        self._pool: OnDemandThreads[Job] = OnDemandThreads(
            "http",
            binding,
            take=lambda: None if self._closed or not self._jobs else self._jobs.popleft(),
            serve=self._serve_jobs,
            idle=_IDLE_SECONDS,
            limit=max(1, pool_size),
        )
        self._lock = self._pool.lock
        self._send_lane: OnDemandThreads[Job] = OnDemandThreads(
            "send",
            binding,
            take=self._take_lane_job,
            serve=self._serve_lane,
            idle=_IDLE_SECONDS,
            lock=self._lock,
        )
        # Notifications and answers accepted for the lane and not yet sent
        # (queued or in flight); close() waits, bounded, for none (drain).
        self._lane_unsent = 0
        self._lane_done = threading.Condition(self._lock)
        self._handles: dict[int, http.AbortHandle] = {}
        # Notifications and answers in flight (they have no request id).
        self._side_handles: set[http.AbortHandle] = set()
        self._streams: set[threading.Thread] = set()
        self._session_id: str | None = None
        self._closed = False
        self._stream_thread: threading.Thread | None = None
        self._closed_event = threading.Event()
        #: The negotiated version, once known: sent on GET and DELETE too.
        self.protocol_version: str | None = None
        self._stream_handle = http.AbortHandle()

    # -- the session's side ------------------------------------------------

    def read_frame(self) -> bytes | bytearray | str | Answer | RequestFailure | None:
        """The next inbound frame or request failure; ``None`` once closed."""
        return self._inbound.get()

    def write_frame(self, data: bytes) -> None:  # pragma: no cover - the session calls send()
        """Not used: every message goes through :meth:`send` with its metadata."""
        raise NotImplementedError

    def try_write_frame(self, data: bytes) -> bool:  # pragma: no cover
        """Not used (see :meth:`send`)."""
        return False

    def loss_reason(self) -> str:
        """Why the stream ended."""
        return "the HTTP transport was closed"

    def send(self, frame: bytes, meta: Outbound) -> None:
        """Queue one message; never blocks. Requests go to the pool, the rest to the lane."""
        with self._lock:
            if self._closed:
                if meta.request_id is not None:
                    self._inbound.put(
                        RequestFailure(
                            meta.request_id,
                            ConnectionLostError(
                                "the transport is closed", binding=self._binding, op=meta.method
                            ),
                            disposition=Disposition.NOT_SENT,  # refused before any I/O
                        )
                    )
                return
            if meta.kind is SendKind.STREAM:
                # A stream (subscriptions/listen) holds its thread for as long
                # as it lasts: it gets its own, never a pool worker.
                stream = threading.Thread(
                    target=self._stream_exchange,
                    args=(frame, meta),
                    name=f"mcpclient-listen-{self._binding}",
                    daemon=True,
                )
                self._streams.add(stream)
            elif meta.method == "notifications/initialized":
                # Must reach the server before the requests that follow it:
                # sent on the caller's thread, outside the lock, below.
                stream = None
            elif meta.kind is not SendKind.REQUEST:
                # Notifications and answers: one lane, in the order sent.
                stream = None
                self._lane_jobs.append((frame, meta))
                self._lane_unsent += 1
                self._send_lane.wake()
            else:
                stream = None
                self._jobs.append((frame, meta))
                self._pool.wake()
        if meta.method == "notifications/initialized":
            session = self._factory.new_session()
            try:
                self._exchange(session, frame, meta)
            finally:
                session.close()
            return
        if stream is not None:
            stream.start()

    def _stream_exchange(self, frame: bytes, meta: Outbound) -> None:
        session = self._factory.new_session()
        try:
            self._exchange(session, frame, meta)
        except BaseException as exc:  # never die silently
            _log.exception("stream of binding %s crashed", self._binding)
            self._fail_held(meta, exc)
        finally:
            session.close()
            with self._lock:
                self._streams.discard(threading.current_thread())

    def abort(self, request_id: int) -> None:
        """Close the response stream of a request (how a modern HTTP call is cancelled)."""
        with self._lock:
            handle = self._handles.get(request_id)
        if handle is not None:
            handle.abort()

    @property
    def session_id(self) -> str | None:
        """The legacy session id, once the server assigned one."""
        return self._session_id

    # -- workers -------------------------------------------------------------

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the lane to send what it accepted; False if time ran out."""
        with self._lane_done:
            return self._lane_done.wait_for(
                lambda: self._lane_unsent == 0 or self._closed, max(0.0, timeout)
            )

    def _take_lane_job(self) -> Job | None:
        if self._closed:
            # Dropped: close() aborts what is sent, not only what is in flight.
            self._lane_unsent -= len(self._lane_jobs)
            self._lane_jobs.clear()
            self._lane_done.notify_all()
            return None
        return self._lane_jobs.popleft() if self._lane_jobs else None

    def _serve_lane(self, jobs: Iterator[Job]) -> None:
        """The send lane's loop: :meth:`_serve_jobs`, counting each message once it is done."""

        def counted() -> Iterator[Job]:
            for job in jobs:
                try:
                    yield job
                finally:  # sent, failed, or the thread is going down with it
                    with self._lane_done:
                        self._lane_unsent -= 1
                        self._lane_done.notify_all()

        self._serve_jobs(counted())

    def _serve_jobs(self, jobs: Iterator[Job]) -> None:
        """A pool worker's or the send lane's loop, on a ``requests.Session`` of its own."""
        session = self._factory.new_session()
        try:
            for frame, meta in jobs:
                try:
                    self._exchange(session, frame, meta)
                except BaseException as exc:
                    self._fail_held(meta, exc)  # now, not at its deadline
                    raise  # logged, and a new thread serves what is queued
        finally:
            session.close()

    def _fail_held(self, meta: Outbound, exc: BaseException) -> None:
        """A thread crashed holding a request (a bug, not an HTTP failure): fail it now."""
        if meta.request_id is not None:
            # Its exchange ended before its answer, and the connection is
            # fine: the session fails the request (indeterminate for a
            # tools/call) without taking the binding down.
            failed = StreamEndedError(
                f"the HTTP exchange failed: {exc!r}", binding=self._binding, op=meta.method
            )
            self._inbound.put(RequestFailure(meta.request_id, failed))

    def _headers(self, meta: Outbound) -> dict[str, str]:
        headers = {"Content-Type": _JSON, "Accept": f"{_JSON}, {_SSE}", **meta.headers}
        session_id = self._session_id
        if session_id is not None:
            headers["Mcp-Session-Id"] = session_id
        return headers

    def _track(self, meta: Outbound) -> http.AbortHandle:
        """A new abort handle for one exchange, registered so that close() aborts it."""
        handle = http.AbortHandle()
        with self._lock:
            if meta.request_id is not None:
                self._handles[meta.request_id] = handle
            else:
                self._side_handles.add(handle)
            if self._closed:
                handle.abort()  # close() took its snapshot of the handles already
        return handle

    def _untrack(self, meta: Outbound, handle: http.AbortHandle) -> None:
        # A resumption may have registered its own handle meanwhile.
        with self._lock:
            if meta.request_id is None:
                self._side_handles.discard(handle)
            elif self._handles.get(meta.request_id) is handle:
                del self._handles[meta.request_id]

    def _exchange(self, session: http.HttpSession, frame: bytes, meta: Outbound) -> None:
        handle = self._track(meta)
        sent_session = self._session_id
        try:
            response = http.request(
                session,
                "POST",
                self._url,
                body=frame,
                headers=self._headers(meta),
                deadline=meta.bound,
                op=meta.method,
                pass_statuses=(400, 404),
                idle_timeout=_STREAM_IDLE if meta.kind is SendKind.STREAM else None,
                abort_handle=handle,
            )
            self._note_session(response.headers.get("Mcp-Session-Id"))
            if response.status_code == 404 and sent_session is not None:
                response.close()
                raise SessionExpiredError(
                    "the server no longer knows this session (HTTP 404)",
                    binding=self._binding,
                    op=meta.method,
                )
            self._read_response(response, meta)
        except Error as exc:
            if meta.request_id is not None:
                self._inbound.put(request_failure(meta.request_id, exc))
            elif isinstance(exc, SessionExpiredError):
                self._inbound.put(request_failure(-1, exc))
            else:
                _log.debug("binding %s: a notification was not delivered: %s", self._binding, exc)
        finally:
            self._untrack(meta, handle)

    def _note_session(self, session_id: str | None) -> None:
        if session_id is None:
            return
        if not session_id.isascii() or not session_id.isprintable() or len(session_id) > 1024:
            raise ProtocolError("the server sent an unusable session id", binding=self._binding)
        with self._lock:
            if self._session_id is None:
                self._session_id = session_id
                return
            changed = self._session_id != session_id
        if changed:
            raise ProtocolError(
                "the server changed the session id mid-session", binding=self._binding
            )

    def _read_response(self, response: Any, meta: Outbound) -> None:
        if response.status_code == 202 or meta.request_id is None:
            response.close()
            return
        kind = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if kind == _SSE:
            self._read_stream(response, meta, quiet=0)
            return
        body = http.read_body(
            response, max_bytes=self._max_body, deadline=meta.bound, op=meta.method
        )
        status = response.status_code
        if kind != _JSON or not body or body.isspace():  # isspace stops at the first byte
            text = f"the server answered {meta.method} with HTTP {status} and no JSON-RPC message"
            if status >= 400:
                raise http.HTTPStatusError(
                    text, status=status, binding=self._binding, op=meta.method
                )
            raise ProtocolError(text, binding=self._binding, op=meta.method)
        # The whole answer to this request: what it cannot answer with fails
        # the request at once (the session decodes it).
        self._inbound.put(Answer(meta.request_id, body, final=True, status=status))
        if status >= 400:
            # An error body usually answers the request by its id (-32022 and
            # friends: the session handles it). If it named no id, this
            # failure, queued right behind it, settles the request instead.
            self._inbound.put(
                RequestFailure(
                    meta.request_id,
                    ProtocolError(
                        f"the server answered {meta.method} with HTTP {status}",
                        failure_class=FailureClass.REMOTE_HTTP,
                        binding=self._binding,
                        op=meta.method,
                    ),
                )
            )

    # -- the legacy GET stream ------------------------------------------------

    def open_server_stream(self, on_lost: Callable[[Error], None] | None = None) -> None:
        """Open the optional GET stream for server messages (legacy sessions)."""
        with self._lock:
            if self._closed or self._stream_thread is not None:
                return
            self._stream_thread = threading.Thread(
                target=self._stream_loop,
                args=(on_lost,),
                name=f"mcpclient-listen-{self._binding}",
                daemon=True,
            )
            self._stream_thread.start()

    def _stream_loop(self, on_lost: Callable[[Error], None] | None) -> None:
        """Read the GET stream; re-open it (with ``Last-Event-ID``) whenever it ends."""
        session = self._factory.new_session()
        last_id: str | None = None
        retry = _STREAM_RETRY
        failures = 0
        try:
            while not self._closed and failures < _STREAM_ATTEMPTS:
                try:
                    headers = self._get_headers(last_id)
                    response = http.request(
                        session,
                        "GET",
                        self._url,
                        headers=headers,
                        deadline=now() + 30.0,
                        op="GET stream",
                        pass_statuses=(404, 405),
                        idle_timeout=_STREAM_IDLE,
                        abort_handle=self._stream_handle,
                    )
                    # A 404 proves a lost session only to a GET that named one;
                    # without a session id it is a server (an app with only a
                    # POST route) that offers no stream, like 405.
                    if response.status_code == 405 or (
                        response.status_code == 404 and "Mcp-Session-Id" not in headers
                    ):
                        response.close()
                        return  # the server offers no stream
                    if response.status_code == 404:
                        response.close()
                        raise SessionExpiredError(
                            "the server no longer knows this session (HTTP 404)",
                            binding=self._binding,
                            op="GET stream",
                        )
                    chunks = http.response_chunks(response, deadline=math.inf, op="GET stream")
                    for event in iter_events(chunks, max_event_bytes=self._max_frame):
                        failures = 0
                        if event.id is not None:
                            last_id = event.id
                        if event.retry is not None:
                            retry = min(max(event.retry / 1000.0, 0.0), _STREAM_RETRY_MAX)
                        if event.data and event.event in ("", "message"):
                            self._inbound.put(event.data)  # decoded once, by the SSE parser
                except SessionExpiredError as exc:
                    if not self._closed and on_lost is not None:
                        on_lost(exc)
                    return
                except Error as exc:
                    failures += 1
                    _log.debug("binding %s: GET stream ended: %s", self._binding, exc)
                if self._stream_handle.aborted or self._closed_event.wait(retry):
                    return
        except BaseException:  # never die silently
            _log.exception("GET stream of binding %s crashed", self._binding)
        finally:
            session.close()

    def _get_headers(self, last_id: str | None) -> dict[str, str]:
        """The headers of a GET that opens or resumes a stream of this session."""
        headers = {"Accept": _SSE, **self._version_header()}
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        return headers

    def _version_header(self) -> dict[str, str]:
        version = self.protocol_version
        return {"MCP-Protocol-Version": version} if version else {}

    # -- shutdown ------------------------------------------------------------------

    def signal_group(self, sig: int) -> None:
        """Nothing to signal: there is no child process (interpreter-exit hook)."""

    def wait_exit(self, timeout: float) -> bool:
        """Nothing to wait for (interpreter-exit hook)."""
        return True

    def kill_now(self) -> None:
        """At interpreter exit: abort everything in flight, send nothing more."""
        with self._lock:
            self._closed = True
            handles = [*self._handles.values(), *self._side_handles]
        for handle in handles:
            handle.abort()
        self._stream_handle.abort()
        self._inbound.put(None)

    def forget_after_fork(self) -> None:
        """In a forked child: mark closed without touching the parent's sockets."""
        self._lock = threading.Lock()
        self._pool.forget(self._lock)
        self._send_lane.forget(self._lock)
        self._lane_done = threading.Condition(self._lock)
        self._closed = True
        self._handles = {}
        self._side_handles = set()

    def close(self, timeout: float | None = None) -> None:
        """Abort everything in flight, end a legacy session, end the inbound queue."""
        budget = 5.0 if timeout is None else max(0.0, timeout)
        deadline = now() + min(budget, 2.0)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            handles = [*self._handles.values(), *self._side_handles]
            session_id = self._session_id
            stream = self._stream_thread
            self._pool.stop()
            self._send_lane.stop()
            self._lane_done.notify_all()
        self._closed_event.set()
        for handle in handles:
            handle.abort()
        self._stream_handle.abort()
        if session_id is not None:
            session = self._factory.new_session()
            try:
                response = http.request(
                    session,
                    "DELETE",
                    self._url,
                    headers={"Mcp-Session-Id": session_id, **self._version_header()},
                    deadline=deadline,
                    op="DELETE",
                    pass_statuses=(404, 405),
                )
                response.close()
            except Error as exc:
                _log.debug("binding %s: DELETE failed: %s", self._binding, exc)
            finally:
                session.close()
        self._inbound.put(None)
        if stream is not None and stream is not threading.current_thread():
            stream.join(max(0.0, min(1.0, deadline - now())))
        # Everything in flight was aborted: the workers end at once.
        self._pool.join(max(0.0, min(1.0, deadline - now())))
        self._send_lane.join(max(0.0, min(1.0, deadline - now())))
