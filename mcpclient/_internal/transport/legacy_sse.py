"""The deprecated HTTP+SSE transport (2024-11-05), on the Streamable HTTP machinery.

A GET opens the event stream; its first ``endpoint`` event names the URL to
POST every client message to (on the configured origin only); every server
message, responses included, arrives on that stream.

Threads:
    The event stream is read on ``mcpclient-listen-<binding>`` for as long
    as the connection lasts; POSTs go through the pool and the send lane of
    :class:`~mcpclient._internal.transport.streamable_http.StreamableHTTPConnection`.

Locks:
    The connection's ``_lock`` (it also publishes the stream thread to
    ``close()``). The endpoint is written once, before ``_endpoint_ready``
    is set, and only read after.

Shutdown:
    The connection's ``close()`` aborts the event stream and joins its thread.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from urllib.parse import urljoin

from mcpclient._core.deadline import now
from mcpclient._internal.transport import http
from mcpclient._internal.transport.base import Outbound, RequestFailure
from mcpclient._internal.transport.http_errors import request_failure
from mcpclient._internal.transport.sse import iter_events
from mcpclient._internal.transport.streamable_http import (
    _JSON,
    _SSE,
    _STREAM_IDLE,
    StreamableHTTPConnection,
)
from mcpclient.errors import ConnectionLostError, DeadlineExceededError, Error, ProtocolError
from mcpclient.transports import LegacySSETransport

__all__ = ["LegacySSEConnection"]

_log = logging.getLogger(__name__)


class LegacySSEConnection(StreamableHTTPConnection):
    """The deprecated HTTP+SSE transport (2024-11-05).

    A GET opens the event stream; its first ``endpoint`` event names the URL
    to POST every client message to, which must be on the configured origin
    (credentials never go elsewhere). Every server message, responses
    included, arrives on the stream as a ``message`` event.
    """

    def __init__(
        self,
        params: LegacySSETransport,
        *,
        binding: str,
        max_body_bytes: int,
        max_frame_bytes: int,
        pool_size: int,
        schedule: http.Schedule,
    ) -> None:
        super().__init__(
            params,
            binding=binding,
            max_body_bytes=max_body_bytes,
            max_frame_bytes=max_frame_bytes,
            pool_size=pool_size,
            schedule=schedule,
        )
        self._endpoint: str | None = None
        self._endpoint_ready = threading.Event()
        self._endpoint_error: Error | None = None

    def start(self, deadline: float) -> None:
        """Open the event stream and wait for its ``endpoint`` event.

        Raises:
            ProtocolError: the endpoint is missing or on another origin.
            ConnectionLostError, DeadlineExceededError: as classified.
        """
        thread = threading.Thread(
            target=self._event_loop,
            args=(deadline,),
            name=f"mcpclient-listen-{self._binding}",
            daemon=True,
        )
        with self._lock:
            self._stream_thread = thread
        thread.start()
        if not self._endpoint_ready.wait(max(0.0, deadline - now())):
            raise DeadlineExceededError(
                "the SSE stream named no endpoint in time", binding=self._binding, op="connect"
            )
        if self._endpoint_error is not None:
            raise self._endpoint_error

    def _event_loop(self, deadline: float) -> None:
        session = self._factory.new_session()
        try:
            response = http.request(
                session,
                "GET",
                self._url,
                headers={"Accept": _SSE},
                deadline=deadline,
                op="connect",
                idle_timeout=_STREAM_IDLE,
                abort_handle=self._stream_handle,
            )
            chunks = http.response_chunks(response, deadline=math.inf, op="SSE stream")
            for event in iter_events(chunks, max_event_bytes=self._max_frame):
                if event.event == "endpoint" and self._endpoint is None:
                    self._set_endpoint(event.data)
                elif event.data and event.event in ("", "message"):
                    self._inbound.put(event.data)  # decoded once, by the SSE parser
            raise ConnectionLostError("the server ended the SSE stream", binding=self._binding)
        except Error as exc:
            if not self._endpoint_ready.is_set():
                self._endpoint_error = exc
                self._endpoint_ready.set()
            elif not self._closed:
                self._inbound.put(RequestFailure(-1, exc))
        except BaseException:  # never die silently
            _log.exception("SSE stream of binding %s crashed", self._binding)
        finally:
            session.close()
            self._endpoint_ready.set()

    def _set_endpoint(self, data: str) -> None:
        endpoint = urljoin(self._url, data.strip())
        if not self._factory.is_same_origin(endpoint):
            self._endpoint_error = ProtocolError(
                "the SSE endpoint is on another origin; nothing will be sent there",
                binding=self._binding,
                op="connect",
            )
        else:
            self._endpoint = endpoint
        self._endpoint_ready.set()

    def _exchange(self, session: http.HttpSession, frame: bytes, meta: Outbound) -> None:
        endpoint = self._endpoint
        handle = self._track(meta)
        try:
            if endpoint is None:
                raise ConnectionLostError("no SSE endpoint", binding=self._binding, op=meta.method)
            response = http.request(
                session,
                "POST",
                endpoint,
                body=frame,
                headers={"Content-Type": _JSON, **meta.headers},
                deadline=min(meta.bound, now() + 30.0),
                op=meta.method,
                abort_handle=handle,
            )
            response.close()  # answers come on the event stream
        except Error as exc:
            if meta.request_id is not None:
                self._inbound.put(request_failure(meta.request_id, exc))
        finally:
            self._untrack(meta, handle)

    def open_server_stream(self, on_lost: Callable[[Error], None] | None = None) -> None:
        """The event stream is always open on this transport."""
