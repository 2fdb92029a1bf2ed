"""The HTTP front end's channels, and the sessions that own them.

A channel is where a core's outbound messages go: an :class:`Exchange` per
POSTed request (a JSON body or an SSE stream), a legacy session's standalone
GET stream, an HTTP+SSE connection's one stream. Each :class:`LegacySession`
(and each :class:`SseSession`) runs its own ``ServerCore``. Channels and
sessions see the process-wide front end only through :class:`FrontEnd`, so this
module does not depend on :mod:`.http_front`.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from .config import SUBSCRIPTION_ID_KEY
from .core import ServerCore
from .http_common import StatusOverride, json_bytes, valid_id
from .http_stream import Stream
from .inbound import Channel

__all__ = [
    "MAX_SESSION_STREAMS",
    "Collector",
    "Discard",
    "Exchange",
    "FrontEnd",
    "HttpChannel",
    "LegacySession",
    "SessionChannel",
    "SseChannel",
    "SseSession",
]

#: POST streams kept per session for ``Last-Event-ID`` resumption.
MAX_SESSION_STREAMS = 64

_EVENT_ID = re.compile(r"(\d+)-(\d+)")


class FrontEnd(Protocol):
    """What channels, sessions and the HTTP hostile actions use of the process-wide front end.

    Implemented by :class:`mcpclient.testing.http_front.FrontEnd`.
    """

    def make_core(self, channel: Channel) -> ServerCore:
        """A core for one session, with the HTTP hostile actions."""

    def write_stderr(self, data: bytes) -> None:
        """Write diagnostics to the server's stderr."""

    def end_session(self, session: LegacySession) -> None:
        """Forget a legacy session and end its standalone stream."""

    def end_sse_session(self, session: SseSession) -> None:
        """Forget an HTTP+SSE connection."""

    def expire(self, session: LegacySession | SseSession) -> None:
        """Forget ``session``: later requests naming it get 404."""

    def set_override(self, override: StatusOverride) -> None:
        """Answer the next HTTP request with ``override``."""

    def set_hold_accepts(self, seconds: float) -> None:
        """Hold every later 202 answer ``seconds``."""

    def set_storm(self, count: int, method: str | None = None) -> None:
        """Answer the next ``count`` HTTP requests (of ``method`` only) 404 (session not found)."""

    def last_request(self) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
        """The latest HTTP request: method, path with query, headers."""


class HttpChannel:
    """A channel the HTTP hostile actions can drive (an exchange or an HTTP+SSE session)."""

    front: FrontEnd
    session: LegacySession | SseSession | None = None

    def translate(self, message: Any) -> Any:
        """Map core-internal request ids back to the client's (modern exchanges)."""
        return message

    def start_sse(self) -> bool:
        """Answer with an SSE stream if still undecided; False when a JSON body went out."""
        raise NotImplementedError

    def write_raw(self, data: bytes) -> None:
        """Write bytes verbatim onto the SSE stream."""
        raise NotImplementedError

    def send_final_bytes(self, data: bytes, *, json_body: bool) -> None:
        """Send ``data`` as the answer: a JSON body if possible and asked, else one SSE event."""
        raise NotImplementedError

    def drop_stream(self, retry_ms: int) -> bool:
        """Send a priming ``retry`` event and close the stream; True if it can be resumed."""
        raise NotImplementedError

    def write_stderr(self, data: bytes) -> None:
        """Write diagnostics to the server's stderr."""
        self.front.write_stderr(data)

    def exit_process(self, code: int) -> None:
        """End the process at once."""
        os._exit(code)


class Exchange(HttpChannel):
    """The channel of one POSTed request (or batch): JSON body or SSE stream.

    The answer is a JSON body when the final response is the first message;
    anything else first (a notification, a server request, raw bytes), or
    ``force_sse``, makes it an SSE stream that the final response ends.

    Thread safety: every method may be called from any thread.
    """

    def __init__(
        self,
        front: FrontEnd,
        *,
        request_id: Any,
        stream_number: int | None = None,
        internal_id: str | None = None,
        force_sse: bool = False,
        batch: bool = False,
        session: LegacySession | None = None,
        on_final: Callable[[Any], None] | None = None,
    ) -> None:
        """Bind the exchange; the HTTP handler then waits on :attr:`decided`."""
        self.front = front
        self.session = session
        self.stream = Stream(stream_number)
        self.reader = self.stream.attach()
        self.mode: str | None = "sse" if force_sse else None  # "json", "sse", "aborted"
        self.body: bytes | None = None
        self.final_message: Any = None
        self.decided = threading.Event()
        self.flushed = threading.Event()
        if force_sse:
            self.decided.set()
        self._request_id = request_id
        self._internal_id = internal_id
        self._batch = batch
        self._on_final = on_final
        self._final_seen = False
        self._lock = threading.Lock()

    def translate(self, message: Any) -> Any:
        """Replace this request's internal id (``id``, ``_meta`` subscriptionId) by the client's."""
        internal = self._internal_id
        if internal is None or not isinstance(message, dict):
            return message
        out = message
        if out.get("id") == internal:
            out = {**out, "id": self._request_id}
        for key in ("params", "result"):
            part = out.get(key)
            if isinstance(part, dict):
                meta = part.get("_meta")
                if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID_KEY) == internal:
                    meta = {**meta, SUBSCRIPTION_ID_KEY: self._request_id}
                    out = {**out, key: {**part, "_meta": meta}}
        return out

    def _is_final(self, message: Any) -> bool:
        if self._batch:
            return isinstance(message, list) or (
                isinstance(message, dict) and "method" not in message and message.get("id") is None
            )
        return (
            isinstance(message, dict)
            and "method" not in message
            and ("result" in message or "error" in message)
            and valid_id(message.get("id"))
            and message.get("id") == self._request_id
        )

    def send(self, message: Any) -> None:
        """Send a message: the first final response may become the JSON body."""
        message = self.translate(message)
        final = self._is_final(message)
        data = json_bytes(message)
        with self._lock:
            first_final = final and not self._final_seen
            self._final_seen = self._final_seen or final
        if first_final and self._on_final is not None:
            self._on_final(message)
        with self._lock:
            if self.mode is None:
                if final:
                    self.mode, self.body, self.final_message = "json", data, message
                    self.decided.set()
                    return
                self.mode = "sse"
                self.decided.set()
            elif self.mode != "sse":
                return
            if first_final:
                self.final_message = message
        self.stream.add_event(data, final=final)

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        """Send raw bytes as one SSE event's data (forces SSE; a trailing newline is dropped)."""
        data = b"".join(chunks)
        if data.endswith(b"\n"):
            data = data[:-1]
        if self.start_sse():
            self.stream.add_event(data)

    def close_output(self) -> None:
        """Close the connection without an HTTP response, or end the SSE stream at once."""
        with self._lock:
            if self.mode is None:
                self.mode = "aborted"
                self.decided.set()
                return
        self.stream.finish()

    def exit_process(self, code: int) -> None:
        """End the process, first letting an already produced answer reach the wire.

        Returns at once in that case (the caller may be the very handler thread
        that writes the answer); the exit follows within a second.
        """
        if not self._final_seen or self.flushed.is_set():
            os._exit(code)

        def later() -> None:
            self.flushed.wait(1.0)
            os._exit(code)

        threading.Thread(target=later, name="testing-http-exit", daemon=True).start()

    def start_sse(self) -> bool:
        """Switch an undecided exchange to SSE; False when a JSON body was chosen."""
        with self._lock:
            if self.mode is None:
                self.mode = "sse"
                self.decided.set()
            return self.mode == "sse"

    def write_raw(self, data: bytes) -> None:
        """Append bytes verbatim to the SSE stream."""
        if self.start_sse():
            self.stream.add_raw(data)

    def send_final_bytes(self, data: bytes, *, json_body: bool) -> None:
        """Answer with ``data``: the JSON body when undecided and asked, else a final event."""
        with self._lock:
            self._final_seen = True
            if self.mode is None and json_body:
                self.mode, self.body = "json", data
                self.decided.set()
                return
        if self.start_sse():
            self.stream.add_event(data, final=True)

    def drop_stream(self, retry_ms: int) -> bool:
        """Priming event (id, ``retry``, empty data), then end the HTTP response.

        Resumable (legacy) streams stay open for a GET with ``Last-Event-ID``;
        others end for good.
        """
        if not self.start_sse():
            return False
        self.stream.add_event(b"", retry=retry_ms)
        if self.stream.number is None:
            self.stream.finish()
            return False
        self.stream.detach()
        return True

    def abandon(self) -> None:
        """The HTTP handler gave up on this exchange (client gone or shutdown)."""
        self.stream.release(self.reader)


class Collector:
    """Channel for a POST that holds no request: keeps what the core answers synchronously."""

    def __init__(self, front: FrontEnd) -> None:
        self.front = front
        self.messages: list[Any] = []

    def send(self, message: Any) -> None:
        self.messages.append(message)

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        pass

    def close_output(self) -> None:
        pass

    def write_stderr(self, data: bytes) -> None:
        self.front.write_stderr(data)

    def exit_process(self, code: int) -> None:
        os._exit(code)


class Discard(Collector):
    """Channel that drops everything (the shared modern core has no unsolicited output)."""

    def send(self, message: Any) -> None:
        pass


class SessionChannel(Collector):
    """A legacy session core's default channel: unsolicited messages go to the GET stream."""

    def __init__(self, front: FrontEnd, stream: Stream) -> None:
        super().__init__(front)
        self.stream = stream

    def send(self, message: Any) -> None:
        self.stream.add_event(json_bytes(message))


class SseChannel(HttpChannel):
    """The one channel of an HTTP+SSE (2024-11-05) connection: every message is an event."""

    def __init__(self, front: FrontEnd, session: SseSession) -> None:
        self.front = front
        self.session = session
        self.stream = session.stream

    def send(self, message: Any) -> None:
        self.stream.add_event(json_bytes(message))

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        data = b"".join(chunks)
        self.stream.add_event(data[:-1] if data.endswith(b"\n") else data)

    def close_output(self) -> None:
        self.stream.finish()

    def start_sse(self) -> bool:
        return True

    def write_raw(self, data: bytes) -> None:
        self.stream.add_raw(data)

    def send_final_bytes(self, data: bytes, *, json_body: bool) -> None:
        self.stream.add_event(data)

    def drop_stream(self, retry_ms: int) -> bool:
        self.stream.add_event(b"", event="", retry=retry_ms, final=True)
        self.front.end_sse_session(cast("SseSession", self.session))
        return False


# ------------------------------------------------------------------------ sessions


class LegacySession:
    """One Streamable HTTP session (2025-03-26 … 2025-11-25), with its own core.

    Stream 0 is the standalone GET stream; each POST that answers gets the next
    number. Thread safety: guarded by a lock.
    """

    def __init__(self, front: FrontEnd, sid: str) -> None:
        self.id = sid
        self.front = front
        self.version: str | None = None
        self.established = False
        self.standalone = Stream(0)
        self._lock = threading.Lock()
        self._streams: OrderedDict[int, Stream] = OrderedDict()
        self._next_number = 1
        self.core = front.make_core(SessionChannel(front, self.standalone))

    def new_exchange(self, request_id: Any, **kwargs: Any) -> Exchange:
        """Create an exchange whose stream is numbered and kept for resumption."""
        with self._lock:
            number = self._next_number
            self._next_number += 1
        exchange = Exchange(
            self.front, request_id=request_id, stream_number=number, session=self, **kwargs
        )
        with self._lock:
            self._streams[number] = exchange.stream
            while len(self._streams) > MAX_SESSION_STREAMS:
                self._streams.popitem(last=False)
        return exchange

    def find_stream(self, event_id: str) -> tuple[Stream, int] | None:
        """The stream an event id (``<stream>-<seq>``) belongs to, and its sequence number."""
        match = _EVENT_ID.fullmatch(event_id.strip())
        if match is None:
            return None
        number, seq = int(match.group(1)), int(match.group(2))
        with self._lock:
            stream = self.standalone if number == 0 else self._streams.get(number)
        return None if stream is None else (stream, seq)

    def on_initialize_answer(self, message: Any) -> None:
        """Establish the session from a successful InitializeResult, else end it."""
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.version = result["protocolVersion"]
            self.established = True
        else:
            self.front.end_session(self)

    def close(self) -> None:
        """End the standalone stream (the session is over)."""
        self.standalone.finish()


class SseSession:
    """One HTTP+SSE (2024-11-05) connection: its GET stream and its own core."""

    def __init__(self, front: FrontEnd, sid: str) -> None:
        self.id = sid
        self.stream = Stream(None, event_name="message")
        self.reader = self.stream.attach()
        self.channel = SseChannel(front, self)
        self.core = front.make_core(self.channel)
