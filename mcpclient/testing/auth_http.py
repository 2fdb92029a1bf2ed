"""The HTTP plumbing of the test authorization server.

A ``ThreadingHTTPServer`` (one daemon thread per connection, HTTP/1.0, every
connection closed after its answer, 10 s socket timeouts, 64 KiB bodies) that
hands each request to the server's ``handle`` and writes the :class:`Reply`,
and the parsing of query strings and request bodies (standard library code;
the reply types come from :mod:`.auth_base`).

Threads:
    One daemon thread per connection, spawned by the ``serve_forever`` loop
    that :class:`~mcpclient.testing.auth_server.AuthServer` runs on its
    ``authserver-<port>`` thread.

Locks:
    None here (the server's ``handle`` takes its own).

Shutdown:
    ``shutdown()`` then ``server_close()`` (from ``AuthServer.close``);
    connection threads are daemons and are not joined (``block_on_close``).
"""

from __future__ import annotations

import json
import socket
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol, cast
from urllib.parse import parse_qsl

from .auth_base import OAuthError, Reply
from .listener import Listener

MAX_BODY = 65536
SOCKET_TIMEOUT = 10.0


class Answerer(Protocol):
    """What the listener needs of its server: an answer to one request."""

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Reply: ...


def first_values(query: str) -> dict[str, str]:
    """The query parameters, the first value of each."""
    values: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, value)
    return values


def parse_form(body: bytes, headers: list[tuple[str, str]]) -> dict[str, str]:
    """A token request's form; RFC 6749 §3.2: form-encoded, no repeated parameter."""
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OAuthError("invalid_request", "malformed form body") from exc
    form: dict[str, str] = {}
    for key, value in pairs:
        if key in form:
            raise OAuthError("invalid_request", f"parameter {key} repeated")
        form[key] = value
    return form


def parse_json(body: bytes) -> Any:
    """A registration request's JSON body."""
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise OAuthError("invalid_client_metadata", "the body is not JSON") from exc


class AuthHTTPServer(Listener):
    """The listener: each request on its own daemon thread, answered by ``auth.handle``."""

    block_on_close = False

    def __init__(self, address: tuple[str, int], auth: Answerer) -> None:
        """Bind and listen on ``address`` (IPv6 when the host has a colon)."""
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.auth = auth
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers
    server_version = "mcpclient-testing-auth"
    timeout = SOCKET_TIMEOUT

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the access log."""

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._send(Reply.text(413 if length > MAX_BODY else 400, "bad body length"))
            return
        body = self.rfile.read(length) if length else b""
        auth = cast(AuthHTTPServer, self.server).auth
        self._send(auth.handle(self.command, self.path, self.headers.items(), body))

    do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server's naming

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        if reply.content_type is not None:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()
