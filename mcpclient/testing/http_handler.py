"""The HTTP request handler of the test server: maps HTTP requests onto the cores."""

from __future__ import annotations

import base64
import binascii
import json
import re
import select
import socket
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from .catalog import LOG_LEVELS
from .config import (
    CLIENT_CAPABILITIES_KEY,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVEL_KEY,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ServerConfig,
)
from .http_channels import Collector, Exchange, LegacySession
from .http_common import (
    HEADER_MISMATCH,
    MCP_PATH,
    MESSAGES_PATH,
    MISSING_CLIENT_CAPABILITY,
    POLL_SECONDS,
    SESSION_NOT_FOUND,
    SESSION_REQUIRED,
    SSE_PATH,
    is_request,
    json_bytes,
    jsonrpc_error,
    meta_of,
    wants_progress,
)
from .http_front import HttpFrontEnd
from .http_stream import Reader, Stream
from .listener import Listener

__all__ = ["Server"]

_BASE64_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_STATUSES = frozenset(status.value for status in HTTPStatus)


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
    version = meta_of(params).get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        return None  # the core answers -32602 for the missing _meta
    checks: list[tuple[str, str]] = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    if isinstance(params, dict):
        key = {
            "tools/call": "name",
            "prompts/get": "name",
            "resources/read": "uri",
            "tasks/get": "taskId",
            "tasks/update": "taskId",
            "tasks/cancel": "taskId",
        }.get(method)
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


class Server(Listener):
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], front: HttpFrontEnd, family: int) -> None:
        self.address_family = family
        self.front = front
        super().__init__(address, _Handler)


def _no_headers() -> list[tuple[str, str]]:
    return []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcpclient-testing"

    @property
    def front(self) -> HttpFrontEnd:
        return cast(Server, self.server).front

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
        self._send_body(status, json_bytes(message), "application/json", headers)

    def _send_error_message(self, status: int, rid: Any, code: int, text: str) -> None:
        self._send_json(status, jsonrpc_error(rid, code, text))

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

    def _drain(self, stream: Stream, reader: Reader, on_gone: Callable[[], None]) -> None:
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
        exchange: Exchange,
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
        if front.take_storm(body):
            self._send_error_message(404, None, SESSION_NOT_FOUND, "Session not found")
            return True
        if self.command == "POST" and front.options.redirect_to is not None:
            self._send_body(307, b"", None, [("Location", front.options.redirect_to)])
            return True
        return False

    def _header(self, name: str) -> str | None:
        values = self.headers.get_all(name)
        return values[0] if values else None

    def _legacy_session(self) -> LegacySession | None:
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
        if not is_request(message):
            params = message.get("params") if isinstance(message, dict) else None
            if (
                isinstance(message, dict)
                and message.get("method") == "notifications/cancelled"
                and isinstance(params, dict)
            ):
                internal = front.internal_id(params.get("requestId"))
                if internal is not None:
                    message = {**message, "params": {**params, "requestId": internal}}
            collector = Collector(front)
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
        exchange = Exchange(
            front,
            request_id=rid,
            internal_id=internal,
            force_sse=wants_progress(params) or method == "subscriptions/listen",
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
            force_sse=wants_progress(message.get("params")),
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
        has_request = is_request(message) or (batch and any(is_request(m) for m in message))
        if not has_request:
            collector = Collector(self.front)
            session.core.handle(message, collector)
            self._answer_collected(collector.messages)
            return
        exchange = session.new_exchange(
            None if batch else message["id"],
            force_sse=not batch and wants_progress(message.get("params")),
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
