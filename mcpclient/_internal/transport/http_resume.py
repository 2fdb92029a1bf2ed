"""A request's SSE response stream over Streamable HTTP, and its resumption.

A POST answered with ``text/event-stream`` carries the request's messages
(and any the server sends meanwhile) as events. When the stream ends before
the answer and the server gave its events ids, the request is resumed with a
GET carrying ``Last-Event-ID`` after the server's ``retry:`` pause; otherwise
it fails. :class:`ResponseStreams` is the part of
:class:`~mcpclient._internal.transport.streamable_http.StreamableHTTPConnection`
that does this; it works on the connection's own state, declared below.

Threads:
    A resumption runs on a thread of its own, ``mcpclient-http-<binding>``,
    started by the session's reader (through the ``resume`` callback of the
    :class:`RequestFailure` that says the stream ended) and ending with the
    resumed stream. A response stream itself is read on the worker that sent
    its POST.

Locks:
    The connection's ``_lock`` guards the abort handles a resumption
    registers and the closed flag; it is never held across I/O.

Shutdown:
    The connection's ``close()`` sets its closed event (a resumption still
    pausing returns at once) and aborts every registered handle (a resumed
    stream being read ends); no resumption starts once it is closed.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

from mcpclient._core.deadline import now
from mcpclient._internal.transport import http
from mcpclient._internal.transport.base import (
    Answer,
    Outbound,
    RequestFailure,
    SendKind,
    StreamEndedError,
)
from mcpclient._internal.transport.http_errors import HTTPSendError, request_failure
from mcpclient._internal.transport.sse import iter_events
from mcpclient.errors import DeadlineExceededError, Error, error_for

__all__ = ["STREAM_ATTEMPTS", "STREAM_RETRY", "STREAM_RETRY_MAX", "ResponseStreams"]

_log = logging.getLogger(__name__)

STREAM_RETRY = 1.0  # default wait before re-opening a stream (the server's retry: wins)
STREAM_RETRY_MAX = 30.0
STREAM_ATTEMPTS = 5  # consecutive failed re-opens before giving up on a stream


def _named(exc: Error, binding: str, op: str) -> Error:
    """``exc`` labelled with this binding and operation (the SSE reader knows neither)."""
    if exc.binding and exc.op:
        return exc
    return error_for(exc.failure_class, exc.message, binding=binding, op=op)


class ResponseStreams:
    """Reads a request's response stream and resumes it (a mixin of the connection).

    Thread safety: as the connection's; see the module's Threads and Locks.
    """

    # The connection's state this part works on (set by its __init__).
    _binding: str
    _url: str
    _factory: http.HttpClientFactory
    _max_frame: int
    _inbound: queue.SimpleQueue[bytes | bytearray | str | Answer | RequestFailure | None]
    _lock: threading.Lock
    _handles: dict[int, http.AbortHandle]
    _closed: bool
    _closed_event: threading.Event

    def _get_headers(self, last_id: str | None) -> dict[str, str]:  # pragma: no cover
        """The headers of a GET that opens or resumes a stream (the connection's)."""
        raise NotImplementedError

    def _read_stream(self, response: Any, meta: Outbound, *, quiet: int) -> None:
        """Read a request's SSE response stream to its end, then settle what is left.

        The session learns that the stream ended after every message it
        carried: an answered request is done; an unanswered one is resumed
        with a GET carrying ``Last-Event-ID`` when the server gave the events
        ids, and fails otherwise. ``quiet`` counts the resumptions in a row
        that brought no message (bounded, so a server that only ever primes
        cannot keep a call alive past its attempts).
        """
        assert meta.request_id is not None
        last_id: str | None = None
        retry = STREAM_RETRY
        cut: Error | None = None
        chunks = http.response_chunks(response, deadline=meta.bound, op=meta.method)
        # A call's events are its own answer: one it cannot use fails it at
        # once. A stream's (subscriptions/listen) are notifications only.
        request_id = meta.request_id if meta.kind is not SendKind.STREAM else None
        try:
            for event in iter_events(chunks, max_event_bytes=self._max_frame):
                if event.id is not None:
                    last_id = event.id
                if event.retry is not None:
                    retry = min(max(event.retry / 1000.0, 0.0), STREAM_RETRY_MAX)
                if event.data and event.event in ("", "message"):
                    quiet = -1
                    data = event.data  # decoded once, by the SSE parser
                    self._inbound.put(
                        data if request_id is None else Answer(request_id, data, final=False)
                    )
        except Error as exc:
            cut = _named(exc, self._binding, meta.method)
        quiet += 1
        resumable = (
            last_id is not None
            and quiet < STREAM_ATTEMPTS
            and not isinstance(cut, DeadlineExceededError)
            and not (isinstance(cut, HTTPSendError) and cut.aborted)
        )
        if resumable:
            assert last_id is not None
            resume_id, pause, count = last_id, retry, quiet
            self._inbound.put(
                RequestFailure(
                    meta.request_id,
                    StreamEndedError(
                        "the response stream ended", binding=self._binding, op=meta.method
                    ),
                    resume=lambda: self._start_resume(meta, resume_id, pause, count),
                )
            )
            return
        if cut is not None and meta.kind is not SendKind.STREAM:
            raise cut
        # A stream (subscriptions/listen) that ends, even cut, is only that:
        # the session lets the client open it again, and a server that is gone
        # shows itself then.
        self._inbound.put(
            RequestFailure(
                meta.request_id,
                StreamEndedError(
                    "the server ended the response stream without answering",
                    binding=self._binding,
                    op=meta.method,
                ),
            )
        )

    def _start_resume(self, meta: Outbound, last_id: str, pause: float, quiet: int) -> None:
        """Resume a response stream on a thread of its own (called by the session's reader)."""
        with self._lock:
            if self._closed:
                return
        threading.Thread(
            target=self._resume,
            args=(meta, last_id, pause, quiet),
            name=f"mcpclient-http-{self._binding}",
            daemon=True,
        ).start()

    def _resume(self, meta: Outbound, last_id: str, pause: float, quiet: int) -> None:
        """GET the rest of a response stream from ``Last-Event-ID`` after the server's pause."""
        assert meta.request_id is not None
        handle = http.AbortHandle()
        with self._lock:
            self._handles[meta.request_id] = handle
        session = self._factory.new_session()
        try:
            if self._closed_event.wait(max(0.0, min(pause, meta.bound - now()))):
                return
            response = http.request(
                session,
                "GET",
                self._url,
                headers=self._get_headers(last_id),
                deadline=meta.bound,
                op=meta.method,
                pass_statuses=(404, 405),
                abort_handle=handle,
            )
            if response.status_code in (404, 405):
                response.close()
                raise StreamEndedError(
                    f"the response stream ended and the server refused to resume it"
                    f" (HTTP {response.status_code})",
                    binding=self._binding,
                    op=meta.method,
                )
            self._read_stream(response, meta, quiet=quiet)
        except Error as exc:
            # The POST was delivered (its stream had begun): a resumption the
            # server refuses, or a server gone by now, says nothing about it.
            self._inbound.put(request_failure(meta.request_id, exc, delivered=True))
        except BaseException:  # never die silently
            _log.exception("resuming a stream of binding %s crashed", self._binding)
        finally:
            session.close()
            with self._lock:
                if self._handles.get(meta.request_id) is handle:
                    del self._handles[meta.request_id]
