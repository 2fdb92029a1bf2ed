"""The HTTP front end of the scriptable test server (``--transport http``).

Maps HTTP requests, responses and SSE streams onto :class:`ServerCore`:
Streamable HTTP at ``/mcp`` (2026-07-28 and 2025-03-26 … 2025-11-25) and the
deprecated HTTP+SSE transport (2024-11-05) at ``/sse`` + ``/messages``. The
behavior, knobs and record format are documented in
:mod:`mcpclient.testing.server`. Standard library only.

Structure: every POSTed request gets an :class:`_Exchange`, the
:class:`~mcpclient.testing.core.Channel` its answer and request-scoped messages
go to; the exchange decides between a JSON body and an SSE stream and feeds a
:class:`_Stream` that the HTTP handler thread drains onto the socket. Each
legacy session (and each HTTP+SSE connection) runs its own ``ServerCore``, as if
it were a separate stdio process; all modern requests share one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import itertools
import json
import os
import re
import secrets
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NoReturn, TextIO, cast
from urllib.parse import parse_qs, urlsplit

from .catalog import LOG_LEVELS
from .core import (
    CLIENT_CAPABILITIES_KEY,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVEL_KEY,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_KEY,
    SUBSCRIPTION_ID_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    Channel,
    InboundRequest,
    ServerConfig,
    ServerCore,
    TransportAction,
)
from .oauth_guard import GuardConfig, ResourceGuard
from .tools import DEFAULT_OVERSIZED_BYTES, text_result

__all__ = ["HttpOptions", "serve_http"]

HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
#: Codes of the bodies answered 400/404 for a missing or unknown session.
SESSION_REQUIRED = -32000
SESSION_NOT_FOUND = -32001

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"

#: Events kept per stream for ``Last-Event-ID`` resumption; POST streams kept per session.
MAX_STREAM_EVENTS = 1000
MAX_SESSION_STREAMS = 64
#: How often an idle handler checks for a closed client or a shutdown.
POLL_SECONDS = 0.05
TRICKLE_INTERVAL = 0.2
DEFAULT_RETRY_MS = 100

_BASE64_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_EVENT_ID = re.compile(r"(\d+)-(\d+)")
_STATUSES = frozenset(status.value for status in HTTPStatus)


@dataclasses.dataclass(frozen=True)
class HttpOptions:
    """The HTTP-only flags (see :mod:`mcpclient.testing.server`)."""

    host: str = "127.0.0.1"
    port: int = 0
    session_404_storm: int = 0
    redirect_to: str | None = None
    endpoint_url: str | None = None
    oauth: GuardConfig | None = None
    #: Every ``GET /mcp`` is answered with this status (an app with only a POST route: 404).
    get_status: int | None = None
    #: Legacy sessions without ``Mcp-Session-Id``: requests naming none use the latest one.
    no_session_id: bool = False


def _json_bytes(message: Any) -> bytes:
    try:
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates echoed back: escape them instead
        return json.dumps(message, separators=(",", ":")).encode("ascii")


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def _valid_id(rid: object) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def _is_request(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and "id" in message
        and _valid_id(message["id"])
    )


def _meta_of(params: Any) -> dict[str, Any]:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _wants_progress(params: Any) -> bool:
    return _valid_id(_meta_of(params).get("progressToken"))


# ------------------------------------------------------------------------ streams


class _Reader:
    """One HTTP writer's position in a :class:`_Stream`."""

    __slots__ = ("pos", "stop_at")

    def __init__(self, pos: int) -> None:
        self.pos = pos
        # Absolute index where this writer ends its response (detached or superseded).
        self.stop_at: int | None = None


class _Stream:
    """One SSE stream's wire bytes, appended by the core, drained by HTTP writers.

    ``number`` None: events carry no ``id`` (modern, HTTP+SSE). Otherwise event
    ids are ``<number>-<seq>`` and a writer may re-attach after a given event
    (``Last-Event-ID`` resumption); the last :data:`MAX_STREAM_EVENTS` entries
    are kept.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, number: int | None = None, event_name: str | None = None) -> None:
        """Create an empty, open stream."""
        self.number = number
        self._event_name = event_name
        self._cond = threading.Condition()
        self._entries: list[tuple[int | None, bytes]] = []  # (seq or None for raw bytes, wire)
        self._base = 0  # absolute index of _entries[0]
        self._seq = 0
        self._finished = False
        self._readers: set[_Reader] = set()

    @property
    def finished(self) -> bool:
        """True once the stream ended (no more entries are accepted)."""
        with self._cond:
            return self._finished

    def add_event(
        self,
        data: bytes,
        *,
        event: str | None = None,
        retry: int | None = None,
        final: bool = False,
    ) -> bool:
        """Append one event (``data`` split into ``data:`` lines); False once finished.

        ``event`` overrides the stream's event name (``""``: none); ``final`` ends
        the stream after this event.
        """
        with self._cond:
            if self._finished:
                return False
            self._seq += 1
            lines: list[bytes] = []
            if self.number is not None:
                lines.append(f"id: {self.number}-{self._seq}".encode())
            name = self._event_name if event is None else event
            if name:
                lines.append(b"event: " + name.encode())
            if retry is not None:
                lines.append(b"retry: %d" % retry)
            lines.extend(b"data: " + part for part in data.split(b"\n"))
            self._append(self._seq, b"\n".join(lines) + b"\n\n")
            if final:
                self._finished = True
            self._cond.notify_all()
            return True

    def add_raw(self, data: bytes) -> None:
        """Append bytes verbatim (not an event; not counted for resumption)."""
        with self._cond:
            if self._finished or not data:
                return
            self._append(None, data)
            self._cond.notify_all()

    def _append(self, seq: int | None, wire: bytes) -> None:
        self._entries.append((seq, wire))
        excess = len(self._entries) - MAX_STREAM_EVENTS
        if excess > 0:
            del self._entries[:excess]
            self._base += excess

    def finish(self) -> None:
        """End the stream: writers end their responses once drained."""
        with self._cond:
            self._finished = True
            self._cond.notify_all()

    def attach(self, *, after: int | None = None, live: bool = False) -> _Reader:
        """Add a writer, superseding any other, from the start, after event ``after``, or live."""
        with self._cond:
            end = self._base + len(self._entries)
            if live:
                pos = end
            elif after is None:
                pos = self._base
            else:
                pos = end
                for index, (seq, _wire) in enumerate(self._entries):
                    if seq is not None and seq > after:
                        pos = self._base + index
                        break
            for other in self._readers:
                other.stop_at = other.pos
            reader = _Reader(pos)
            self._readers = {reader}
            self._cond.notify_all()
            return reader

    def detach(self) -> None:
        """Make the current writers end their responses after what is queued now."""
        with self._cond:
            end = self._base + len(self._entries)
            for reader in self._readers:
                reader.stop_at = end
            self._readers = set()
            self._cond.notify_all()

    def release(self, reader: _Reader) -> None:
        """Forget a writer that went away."""
        with self._cond:
            self._readers.discard(reader)

    def _ended(self, reader: _Reader, end: int) -> bool:
        if reader.stop_at is not None and reader.pos >= reader.stop_at:
            return True
        return self._finished and reader.pos >= end

    def read(self, reader: _Reader, timeout: float) -> bytes | None:
        """Return the next bytes for ``reader``, b"" at its end, or None after ``timeout``."""
        with self._cond:
            for attempt in (0, 1):
                end = self._base + len(self._entries)
                limit = end if reader.stop_at is None else min(end, reader.stop_at)
                start = max(reader.pos, self._base)
                if start < limit:
                    first, last = start - self._base, limit - self._base
                    reader.pos = limit
                    return b"".join(wire for _seq, wire in self._entries[first:last])
                if self._ended(reader, end):
                    self._readers.discard(reader)
                    return b""
                if attempt == 0:
                    self._cond.wait(timeout)
            return None


# ------------------------------------------------------------------------ channels


class _HttpChannel:
    """A channel the HTTP hostile actions can drive (an exchange or an HTTP+SSE session)."""

    front: HttpFrontEnd
    session: _LegacySession | _SseSession | None = None

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


class _Exchange(_HttpChannel):
    """The channel of one POSTed request (or batch): JSON body or SSE stream.

    The answer is a JSON body when the final response is the first message;
    anything else first (a notification, a server request, raw bytes), or
    ``force_sse``, makes it an SSE stream that the final response ends.

    Thread safety: every method may be called from any thread.
    """

    def __init__(
        self,
        front: HttpFrontEnd,
        *,
        request_id: Any,
        stream_number: int | None = None,
        internal_id: str | None = None,
        force_sse: bool = False,
        batch: bool = False,
        session: _LegacySession | None = None,
        on_final: Callable[[Any], None] | None = None,
    ) -> None:
        """Bind the exchange; the HTTP handler then waits on :attr:`decided`."""
        self.front = front
        self.session = session
        self.stream = _Stream(stream_number)
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
            and _valid_id(message.get("id"))
            and message.get("id") == self._request_id
        )

    def send(self, message: Any) -> None:
        """Send a message: the first final response may become the JSON body."""
        message = self.translate(message)
        final = self._is_final(message)
        data = _json_bytes(message)
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


class _Collector:
    """Channel for a POST that holds no request: keeps what the core answers synchronously."""

    def __init__(self, front: HttpFrontEnd) -> None:
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


class _Discard(_Collector):
    """Channel that drops everything (the shared modern core has no unsolicited output)."""

    def send(self, message: Any) -> None:
        pass


class _SessionChannel(_Collector):
    """A legacy session core's default channel: unsolicited messages go to the GET stream."""

    def __init__(self, front: HttpFrontEnd, stream: _Stream) -> None:
        super().__init__(front)
        self.stream = stream

    def send(self, message: Any) -> None:
        self.stream.add_event(_json_bytes(message))


class _SseChannel(_HttpChannel):
    """The one channel of an HTTP+SSE (2024-11-05) connection: every message is an event."""

    def __init__(self, front: HttpFrontEnd, session: _SseSession) -> None:
        self.front = front
        self.session = session
        self.stream = session.stream

    def send(self, message: Any) -> None:
        self.stream.add_event(_json_bytes(message))

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
        self.front.end_sse_session(cast("_SseSession", self.session))
        return False


# ------------------------------------------------------------------------ sessions


class _LegacySession:
    """One Streamable HTTP session (2025-03-26 … 2025-11-25), with its own core.

    Stream 0 is the standalone GET stream; each POST that answers gets the next
    number. Thread safety: guarded by a lock.
    """

    def __init__(self, front: HttpFrontEnd, sid: str) -> None:
        self.id = sid
        self.front = front
        self.version: str | None = None
        self.established = False
        self.standalone = _Stream(0)
        self._lock = threading.Lock()
        self._streams: OrderedDict[int, _Stream] = OrderedDict()
        self._next_number = 1
        self.core = front.make_core(_SessionChannel(front, self.standalone))

    def new_exchange(self, request_id: Any, **kwargs: Any) -> _Exchange:
        """Create an exchange whose stream is numbered and kept for resumption."""
        with self._lock:
            number = self._next_number
            self._next_number += 1
        exchange = _Exchange(
            self.front, request_id=request_id, stream_number=number, session=self, **kwargs
        )
        with self._lock:
            self._streams[number] = exchange.stream
            while len(self._streams) > MAX_SESSION_STREAMS:
                self._streams.popitem(last=False)
        return exchange

    def find_stream(self, event_id: str) -> tuple[_Stream, int] | None:
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


class _SseSession:
    """One HTTP+SSE (2024-11-05) connection: its GET stream and its own core."""

    def __init__(self, front: HttpFrontEnd, sid: str) -> None:
        self.id = sid
        self.stream = _Stream(None, event_name="message")
        self.reader = self.stream.attach()
        self.channel = _SseChannel(front, self)
        self.core = front.make_core(self.channel)


@dataclasses.dataclass(frozen=True)
class _StatusOverride:
    code: int
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...]


# ------------------------------------------------------------------------ front end


class HttpFrontEnd:
    """Process-wide HTTP state: the cores, sessions, one-shot knobs and the record file.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, config: ServerConfig, options: HttpOptions) -> None:
        """Create the shared modern core; the front end records, not the cores."""
        self.config = dataclasses.replace(config, record_path=None)
        self.options = options
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._err_lock = threading.Lock()
        self._record_lock = threading.Lock()
        self._sessions: dict[str, _LegacySession] = {}
        self._sse_sessions: dict[str, _SseSession] = {}
        self._storm = options.session_404_storm
        self._override: _StatusOverride | None = None
        self._hold_accepts = 0.0
        #: The latest legacy session, for requests without a session id (``--no-session-id``).
        self.sessionless: _LegacySession | None = None
        self._ids = itertools.count(1)
        self._modern_ids: dict[str, str] = {}
        self._record: TextIO | None = None
        if config.record_path is not None:
            self._record = open(config.record_path, "a", encoding="utf-8")  # noqa: SIM115
        self.modern = self.make_core(_Discard(self))
        #: The OAuth protection (``--oauth-*``), None when the server is open.
        self.guard = ResourceGuard(options.oauth) if options.oauth is not None else None

    def make_core(self, channel: Channel) -> ServerCore:
        """A core for one session (or the modern one), with the HTTP hostile actions."""
        core = ServerCore(self.config, channel)
        core.transport_actions.update(TRANSPORT_ACTIONS)
        return core

    # -- knobs

    def set_override(self, override: _StatusOverride) -> None:
        with self._lock:
            self._override = override

    def take_override(self) -> _StatusOverride | None:
        with self._lock:
            override, self._override = self._override, None
            return override

    def set_hold_accepts(self, seconds: float) -> None:
        with self._lock:
            self._hold_accepts = seconds

    def hold_accepts(self) -> float:
        with self._lock:
            return self._hold_accepts

    def set_storm(self, count: int) -> None:
        with self._lock:
            self._storm = count

    def take_storm(self) -> bool:
        with self._lock:
            if self._storm <= 0:
                return False
            self._storm -= 1
            return True

    # -- sessions

    def new_session(self) -> _LegacySession:
        session = _LegacySession(self, secrets.token_hex(16))
        with self._lock:
            self._sessions[session.id] = session
            if self.options.no_session_id:
                self.sessionless = session
        return session

    def session(self, sid: str) -> _LegacySession | None:
        with self._lock:
            return self._sessions.get(sid)

    def end_session(self, session: _LegacySession) -> None:
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]
        session.close()

    def new_sse_session(self) -> _SseSession:
        session = _SseSession(self, secrets.token_hex(16))
        with self._lock:
            self._sse_sessions[session.id] = session
        return session

    def sse_session(self, sid: str) -> _SseSession | None:
        with self._lock:
            return self._sse_sessions.get(sid)

    def end_sse_session(self, session: _SseSession) -> None:
        with self._lock:
            if self._sse_sessions.get(session.id) is session:
                del self._sse_sessions[session.id]

    def expire(self, session: _LegacySession | _SseSession) -> None:
        """Forget ``session``: later requests naming it get 404."""
        if isinstance(session, _LegacySession):
            self.end_session(session)
        else:
            self.end_sse_session(session)

    # -- modern request ids (the shared core must not see two clients' equal ids)

    def track_modern(self, rid: Any) -> str:
        internal = f"http-{next(self._ids)}"
        with self._lock:
            self._modern_ids[json.dumps(rid)] = internal
        return internal

    def untrack_modern(self, rid: Any, internal: str) -> None:
        key = json.dumps(rid)
        with self._lock:
            if self._modern_ids.get(key) == internal:
                del self._modern_ids[key]

    def internal_id(self, rid: Any) -> str | None:
        with self._lock:
            return self._modern_ids.get(json.dumps(rid))

    def cancel_modern(self, internal: str) -> None:
        """Cancel a modern request whose client closed its response stream."""
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": internal, "reason": "response stream closed"},
        }
        self.modern.handle(cancel, _Collector(self))

    # -- output

    def write_stderr(self, data: bytes) -> None:
        with self._err_lock:
            try:
                sys.stderr.buffer.write(data)
                sys.stderr.buffer.flush()
            except (OSError, ValueError):
                pass

    def record(
        self, method: str, path: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> None:
        """Append one request to the record file (see the server docstring), flushed."""
        with self._record_lock:
            if self._record is None:
                return
            entry: dict[str, Any] = {
                "method": method,
                "path": path,
                "headers": [[name, value] for name, value in headers],
            }
            if body:
                try:
                    entry["body"] = json.loads(body.decode("utf-8"))
                except (ValueError, RecursionError):
                    entry["body"] = {"_invalid": body.decode("utf-8", "replace")}
            try:
                line = json.dumps(entry)
            except (ValueError, RecursionError):
                entry["body"] = {"_unserializable": body[:1000].decode("utf-8", "replace")}
                line = json.dumps(entry)
            self._record.write(line + "\n")
            self._record.flush()

    def close(self) -> None:
        with self._record_lock:
            if self._record is not None:
                self._record.close()
                self._record = None

    # -- routing

    def route(self, message: Any, session_header: str | None) -> str:
        """``"init"``, ``"modern"`` or ``"legacy"`` for a POSTed message on ``/mcp``."""
        era = self.config.era
        if era == "modern":
            return "modern"
        if _is_request(message) and message["method"] == "initialize":
            return "init"
        if era == "legacy":
            return "legacy"
        if _is_request(message):
            method = message["method"]
            if method in ("server/discover", "subscriptions/listen"):
                return "modern"
            return "modern" if PROTOCOL_VERSION_KEY in _meta_of(message.get("params")) else "legacy"
        if isinstance(message, list) or session_header is not None:
            return "legacy"
        return "modern"


# ------------------------------------------------------------------------ header checks


def _header_value_matches(value: str, expected: str) -> bool:
    """Compare a header (raw bytes as Latin-1) with a value, decoding the Base64 sentinel."""
    sentinel = _BASE64_SENTINEL.fullmatch(value)
    if sentinel is not None:
        try:
            decoded = base64.b64decode(sentinel.group(1), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return False
        return decoded == expected
    return value.isascii() and value == expected


def _modern_header_problem(headers: Any, method: str, params: Any) -> str | None:
    """Why the modern request's headers disagree with its body (-32020), or None."""
    version = _meta_of(params).get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        return None  # the core answers -32602 for the missing _meta
    checks: list[tuple[str, str]] = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    if isinstance(params, dict):
        key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
        if key is not None and isinstance(params.get(key), str):
            checks.append(("Mcp-Name", params[key]))
    for name, expected in checks:
        values = headers.get_all(name) or []
        if len(values) != 1:
            return f"Header mismatch: expected exactly one {name} header, got {len(values)}"
        if not _header_value_matches(values[0], expected):
            return f"Header mismatch: {name} {values[0]!r} does not match the body ({expected!r})"
    return None


def _bad_envelope(params: Any, config: ServerConfig) -> bool:
    """True when the core will reject the request's ``_meta`` (answered with HTTP 400)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return True
    level = meta.get(LOG_LEVEL_KEY)
    return (
        meta.get(PROTOCOL_VERSION_KEY) not in config.modern_versions
        or not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict)
        or (level is not None and level not in LOG_LEVELS)
    )


def _modern_status(message: Any, bad_envelope: bool) -> int:
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict):
        return 200
    code = error.get("code")
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
        PARSE_ERROR,
        INVALID_REQUEST,
    ):
        return 400
    if code == INVALID_PARAMS and bad_envelope:
        return 400
    return 200


# ------------------------------------------------------------------------ HTTP handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], front: HttpFrontEnd, family: int) -> None:
        self.address_family = family
        self.front = front
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn): slow, and not needed.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


def _no_headers() -> list[tuple[str, str]]:
    return []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcpclient-testing"

    @property
    def front(self) -> HttpFrontEnd:
        return cast(_Server, self.server).front

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the access log."""

    # -- plumbing

    def _read_body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size_line = self.rfile.readline(1024)
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    self._send_body(400, b"bad chunked body", "text/plain")
                    self.close_connection = True
                    return None
                if size == 0:
                    while self.rfile.readline(1024).strip():
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline(1024)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._send_body(400, b"bad Content-Length", "text/plain")
            self.close_connection = True
            return None
        return self.rfile.read(length) if length else b""

    def _send_body(
        self,
        status: int,
        body: bytes,
        content_type: str | None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.send_response(status)
        if content_type is not None and body:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _send_json(
        self, status: int, message: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        self._send_body(status, _json_bytes(message), "application/json", headers)

    def _send_error_message(self, status: int, rid: Any, code: int, text: str) -> None:
        self._send_json(status, _error(rid, code, text))

    def _not_allowed(self, allow: str) -> None:
        self._send_body(405, b"Method Not Allowed", "text/plain", [("Allow", allow)])

    def _not_found(self) -> None:
        self._send_body(404, b"Not Found", "text/plain")

    def _start_sse(self, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _client_gone(self) -> bool:
        """True when the client closed the connection (EOF pending on the socket)."""
        try:
            readable, _w, _x = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except (OSError, ValueError):
            return True

    def _drain(self, stream: _Stream, reader: _Reader, on_gone: Callable[[], None]) -> None:
        """Write ``stream`` as chunks until it ends, the client leaves or the server stops."""
        while True:
            chunk = stream.read(reader, POLL_SECONDS)
            if chunk is None:
                if self.front.stopping.is_set():
                    stream.release(reader)
                    break
                if self._client_gone():
                    stream.release(reader)
                    on_gone()
                    self.close_connection = True
                    return
                continue
            if not chunk:
                break
            try:
                self._write_chunk(chunk)
            except OSError:
                stream.release(reader)
                on_gone()
                self.close_connection = True
                return
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _serve_exchange(
        self,
        exchange: _Exchange,
        *,
        status_of: Callable[[Any], int],
        on_gone: Callable[[], None],
        headers: Callable[[], list[tuple[str, str]]] = _no_headers,
    ) -> None:
        """Wait for the exchange to pick JSON or SSE, then write the response."""
        try:
            while not exchange.decided.wait(POLL_SECONDS):
                if self.front.stopping.is_set() or self._client_gone():
                    exchange.abandon()
                    if not self.front.stopping.is_set():
                        on_gone()
                    self.close_connection = True
                    return
            if exchange.mode == "aborted":
                exchange.abandon()
                self.close_connection = True
                return
            if exchange.mode == "json":
                exchange.abandon()
                body = exchange.body or b""
                self._send_body(
                    status_of(exchange.final_message), body, "application/json", headers()
                )
                return
            self._start_sse(headers())
            self._drain(exchange.stream, exchange.reader, on_gone)
        except OSError:
            exchange.abandon()
            on_gone()
            self.close_connection = True
        finally:
            exchange.flushed.set()

    def _answer_collected(self, messages: list[Any]) -> None:
        if not messages:
            # ``hold_accepts``: a server slow to accept notifications and answers.
            until = time.monotonic() + self.front.hold_accepts()
            while time.monotonic() < until:
                if self.front.stopping.is_set() or self._client_gone():
                    self.close_connection = True
                    return
                time.sleep(POLL_SECONDS)
            self._send_body(202, b"", None)
        else:
            self._send_json(400, messages[0] if len(messages) == 1 else messages)

    def _preamble(self, body: bytes) -> bool:
        """Record the request, apply the OAuth guard and the one-shot knobs; True if answered."""
        front = self.front
        front.record(self.command, self.path, self.headers.items(), body)
        if front.guard is not None:
            answer = front.guard.handle(self.command, self.path, self.headers.items(), body)
            if answer is not None:
                self._send_body(answer.status, answer.body, answer.content_type, answer.headers)
                return True
        override = front.take_override()
        if override is not None:
            self._send_body(override.code, override.body, override.content_type, override.headers)
            return True
        if front.take_storm():
            self._send_error_message(404, None, SESSION_NOT_FOUND, "Session not found")
            return True
        if self.command == "POST" and front.options.redirect_to is not None:
            self._send_body(307, b"", None, [("Location", front.options.redirect_to)])
            return True
        return False

    def _header(self, name: str) -> str | None:
        values = self.headers.get_all(name)
        return values[0] if values else None

    def _legacy_session(self) -> _LegacySession | None:
        sid = self._header("Mcp-Session-Id")
        if sid is None and self.front.options.no_session_id and self.front.sessionless:
            return self.front.sessionless
        if sid is None:
            text = "Bad Request: Mcp-Session-Id header is required"
            self._send_error_message(400, None, SESSION_REQUIRED, text)
            return None
        session = self.front.session(sid)
        if session is None:
            self._send_error_message(404, None, SESSION_NOT_FOUND, "Session not found")
        return session

    # -- methods

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None or self._preamble(body):
            return
        url = urlsplit(self.path)
        modern_only = self.front.config.era == "modern"
        if url.path == MCP_PATH:
            self._post_mcp(body)
        elif url.path == MESSAGES_PATH and not modern_only:
            self._post_messages(body, url.query)
        elif url.path == SSE_PATH and not modern_only:
            self._not_allowed("GET")
        else:
            self._not_found()

    def do_GET(self) -> None:
        if self._preamble(b""):
            return
        url = urlsplit(self.path)
        modern_only = self.front.config.era == "modern"
        get_status = self.front.options.get_status
        if url.path == MCP_PATH and get_status is not None:
            phrase = HTTPStatus(get_status).phrase if get_status in _STATUSES else "Refused"
            self._send_body(get_status, phrase.encode(), "text/plain")
        elif url.path == MCP_PATH:
            self._get_mcp()
        elif url.path == SSE_PATH and not modern_only:
            self._get_sse()
        elif url.path == MESSAGES_PATH and not modern_only:
            self._not_allowed("POST")
        else:
            self._not_found()

    def do_DELETE(self) -> None:
        if self._preamble(b""):
            return
        url = urlsplit(self.path)
        if url.path != MCP_PATH:
            self._not_found()
        elif self.front.config.era == "modern":
            self._not_allowed("POST")
        else:
            session = self._legacy_session()
            if session is not None:
                self.front.end_session(session)
                self._send_body(200, b"", None)

    # -- Streamable HTTP

    def _post_mcp(self, body: bytes) -> None:
        try:
            message = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            self._send_error_message(400, None, PARSE_ERROR, f"Parse error: {exc}")
            return
        route = self.front.route(message, self._header("Mcp-Session-Id"))
        if route == "modern":
            self._post_modern(message)
        elif route == "init":
            self._post_initialize(message)
        else:
            self._post_legacy(message)

    def _post_modern(self, message: Any) -> None:
        front = self.front
        if not _is_request(message):
            params = message.get("params") if isinstance(message, dict) else None
            if (
                isinstance(message, dict)
                and message.get("method") == "notifications/cancelled"
                and isinstance(params, dict)
            ):
                internal = front.internal_id(params.get("requestId"))
                if internal is not None:
                    message = {**message, "params": {**params, "requestId": internal}}
            collector = _Collector(front)
            front.modern.handle(message, collector)
            self._answer_collected(collector.messages)
            return
        rid, method, params = message["id"], message["method"], message.get("params")
        problem = _modern_header_problem(self.headers, method, params)
        if problem is not None:
            self._send_error_message(400, rid, HEADER_MISMATCH, problem)
            return
        bad_envelope = _bad_envelope(params, front.config)
        internal = front.track_modern(rid)
        exchange = _Exchange(
            front,
            request_id=rid,
            internal_id=internal,
            force_sse=_wants_progress(params) or method == "subscriptions/listen",
        )
        try:
            front.modern.handle({**message, "id": internal}, exchange)
            self._serve_exchange(
                exchange,
                status_of=lambda final: _modern_status(final, bad_envelope),
                on_gone=lambda: front.cancel_modern(internal),
            )
        finally:
            front.untrack_modern(rid, internal)

    def _post_initialize(self, message: Any) -> None:
        front = self.front
        session = front.new_session()
        exchange = session.new_exchange(
            message["id"],
            force_sse=_wants_progress(message.get("params")),
            on_final=session.on_initialize_answer,
        )

        def headers() -> list[tuple[str, str]]:
            if front.options.no_session_id:
                return []
            if session.established or exchange.mode == "sse":
                return [("Mcp-Session-Id", session.id)]
            return []

        def on_gone() -> None:
            if not session.established:
                front.end_session(session)

        session.core.handle(message, exchange)
        self._serve_exchange(exchange, status_of=lambda _m: 200, on_gone=on_gone, headers=headers)

    def _post_legacy(self, message: Any) -> None:
        session = self._legacy_session()
        if session is None:
            return
        version = self._header("MCP-Protocol-Version")
        if version is not None and session.version is not None and version != session.version:
            text = f"Bad Request: MCP-Protocol-Version {version!r} is not the session's version"
            self._send_error_message(400, None, INVALID_REQUEST, text)
            return
        batch = isinstance(message, list)
        has_request = _is_request(message) or (batch and any(_is_request(m) for m in message))
        if not has_request:
            collector = _Collector(self.front)
            session.core.handle(message, collector)
            self._answer_collected(collector.messages)
            return
        exchange = session.new_exchange(
            None if batch else message["id"],
            force_sse=not batch and _wants_progress(message.get("params")),
            batch=batch,
        )
        session.core.handle(message, exchange)
        self._serve_exchange(exchange, status_of=lambda _m: 200, on_gone=lambda: None)

    def _get_mcp(self) -> None:
        if self.front.config.era == "modern":
            self._not_allowed("POST")
            return
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            self._send_body(406, b"Accept must include text/event-stream", "text/plain")
            return
        session = self._legacy_session()
        if session is None:
            return
        last = self._header("Last-Event-ID")
        found = session.find_stream(last) if last is not None else None
        if found is not None:
            stream, seq = found
            reader = stream.attach(after=seq)
        else:
            stream = session.standalone
            reader = stream.attach(live=True)
        self._start_sse()
        self._drain(stream, reader, on_gone=lambda: None)

    # -- HTTP+SSE (2024-11-05)

    def _get_sse(self) -> None:
        front = self.front
        session = front.new_sse_session()
        endpoint = front.options.endpoint_url or f"{MESSAGES_PATH}?session={session.id}"
        session.stream.add_event(endpoint.encode("utf-8"), event="endpoint")
        try:
            self._start_sse()
            self._drain(session.stream, session.reader, on_gone=lambda: None)
        finally:
            front.end_sse_session(session)

    def _post_messages(self, body: bytes, query: str) -> None:
        values = parse_qs(query).get("session")
        sid = values[0] if values else None
        if sid is None:
            self._send_error_message(400, None, SESSION_REQUIRED, "Bad Request: session required")
            return
        session = self.front.sse_session(sid)
        if session is None:
            self._send_error_message(404, None, SESSION_NOT_FOUND, "Session not found")
            return
        try:
            message = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            self._send_error_message(400, None, PARSE_ERROR, f"Parse error: {exc}")
            return
        self._send_body(202, b"Accepted", "text/plain")
        session.core.handle(message, session.channel)


# ------------------------------------------------------------------------ hostile actions

Result = dict[str, Any]


def _channel_of(request: InboundRequest) -> _HttpChannel | None:
    channel = request.channel
    return channel if isinstance(channel, _HttpChannel) else None


def _number(args: dict[str, Any], name: str, default: float) -> float | None:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        return None
    return float(value)


def _bad(action: str, text: str) -> Result:
    return text_result(f"hostile {action}: {text}", is_error=True)


def _done(action: str) -> Result:
    return text_result(f"hostile {action}: done")


def _expire_session(
    core: ServerCore, request: InboundRequest, args: dict[str, Any]
) -> Result | None:
    channel = _channel_of(request)
    if channel is None or channel.session is None:
        return _bad("expire_session", "this request belongs to no session")
    channel.front.expire(channel.session)
    return _done("expire_session")


def _session_404_storm(
    core: ServerCore, request: InboundRequest, args: dict[str, Any]
) -> Result | None:
    channel = _channel_of(request)
    count = _number(args, "count", 1)
    if channel is None or count is None:
        return _bad("session_404_storm", "count must be a number >= 0")
    channel.front.set_storm(int(count))
    return _done("session_404_storm")


def _drop_stream(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    retry = _number(args, "retry", DEFAULT_RETRY_MS)
    if channel is None or retry is None:
        return _bad("drop_stream", "retry must be a number >= 0")
    if channel.drop_stream(int(retry)):
        return _done("drop_stream")  # logged on the stream, for the resuming GET
    request.drop()  # not resumable: the request is lost
    return None


def _padded_response(channel: _HttpChannel, request: InboundRequest, size: int) -> bytes:
    """This call's response, serialized to exactly ``size`` bytes (cut short if too small)."""
    message = channel.translate(request.build_response(text_result("")))
    base = _json_bytes(message)
    if size < len(base):
        return base[:size]
    message["result"]["content"][0]["text"] = "x" * (size - len(base))
    return _json_bytes(message)


def _oversized(action: str, *, json_body: bool) -> Callable[..., Result | None]:
    def run(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
        channel = _channel_of(request)
        size = _number(args, "bytes", DEFAULT_OVERSIZED_BYTES)
        if channel is None or size is None:
            return _bad(action, "bytes must be a number >= 0")
        channel.send_final_bytes(_padded_response(channel, request, int(size)), json_body=json_body)
        request.drop()
        return None

    return run


def _trickle(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    seconds = _number(args, "seconds", 2.0)
    if channel is None or seconds is None:
        return _bad("trickle", "seconds must be a number >= 0")
    count = max(1, round(seconds / TRICKLE_INTERVAL))
    # One SSE comment line, a byte at a time: ":....\n".
    payload = b":" + b"." * (count - 2) + b"\n" if count >= 2 else b"\n"
    if not channel.start_sse():
        return _done("trickle")
    for index in range(count):
        channel.write_raw(payload[index : index + 1])
        if not request.sleep(TRICKLE_INTERVAL):
            return None
    return _done("trickle")


def _status(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    code = args.get("code")
    if channel is None or not isinstance(code, int) or isinstance(code, bool):
        return _bad("status", "code must be an integer")
    if not 200 <= code <= 599:
        return _bad("status", "code must be within 200..599")
    body = args.get("body")
    content_type: str | None
    if body is None:
        data, content_type = b"", None
    elif isinstance(body, str):
        data, content_type = body.encode("utf-8"), "text/plain; charset=utf-8"
    else:
        data, content_type = _json_bytes(body), "application/json"
    if isinstance(args.get("content_type"), str):
        content_type = args["content_type"]
    headers = args.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        return _bad("status", "headers must map names to strings")
    channel.front.set_override(
        _StatusOverride(code, data, content_type, tuple((k, v) for k, v in headers.items()))
    )
    return _done("status")


def _ping_flood(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    count = _number(args, "count", 20)
    if count is None:
        return _bad("ping_flood", "count must be a number >= 0")
    for index in range(1, int(count) + 1):
        # Fire and forget: the answers arrive as POSTs, in the record file.
        request.channel.send({"jsonrpc": "2.0", "id": f"ping-{index}", "method": "ping"})
    return _done("ping_flood")


def _hold_accepts(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    seconds = _number(args, "seconds", 0)
    if channel is None or seconds is None:
        return _bad("hold_accepts", "seconds must be a number >= 0")
    channel.front.set_hold_accepts(seconds)
    return _done("hold_accepts")


#: The ``hostile`` actions the HTTP front end adds (names in catalog.HTTP_HOSTILE_ACTIONS).
TRANSPORT_ACTIONS: dict[str, TransportAction] = {
    "expire_session": _expire_session,
    "session_404_storm": _session_404_storm,
    "drop_stream": _drop_stream,
    "oversized_body": _oversized("oversized_body", json_body=True),
    "oversized_event": _oversized("oversized_event", json_body=False),
    "trickle": _trickle,
    "status": _status,
    "ping_flood": _ping_flood,
    "hold_accepts": _hold_accepts,
}


# ------------------------------------------------------------------------ entry point


def serve_http(
    config: ServerConfig, options: HttpOptions, *, handle_sigterm: bool = True
) -> NoReturn:
    """Listen, print ``listening on http://HOST:PORT/mcp`` on stdout, serve until signalled.

    SIGTERM (unless ``handle_sigterm`` is False) and SIGINT end the open streams
    and exit with status 0.
    """
    front = HttpFrontEnd(config, options)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    try:
        httpd = _Server((options.host, options.port), front, family)
    except OSError as exc:
        sys.stderr.write(f"cannot listen on {options.host} port {options.port}: {exc}\n")
        sys.stderr.flush()
        os._exit(2)
    port = httpd.server_address[1]
    host = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    if front.guard is not None:
        front.guard.bind(f"http://{host}:{port}")
    sys.stdout.write(f"listening on http://{host}:{port}{MCP_PATH}\n")
    sys.stdout.flush()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    if handle_sigterm:
        signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(
        target=httpd.serve_forever,
        kwargs={"poll_interval": 0.1},
        name="testing-http-server",
        daemon=True,
    )
    thread.start()
    while not stop.wait(0.5):
        pass
    front.stopping.set()
    httpd.shutdown()
    time.sleep(2 * POLL_SECONDS)  # let stream writers end their responses
    httpd.server_close()
    front.close()
    os._exit(0)
