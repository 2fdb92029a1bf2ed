"""A bare MCP server over stdio or HTTP: the least work that still lets a real client talk.

It answers ``initialize`` (legacy era only), ``ping``, ``tools/list`` and
``tools/call`` for ``echo(text)``, ``blob(n)`` and ``slow(ms)``; every other
request gets -32601 (so a client probing ``server/discover`` falls back to the
handshake), and notifications are ignored. It validates nothing and uses only
the standard library, so what a client measures against it is the client's
own cost.

Over HTTP (``--http``) it is a minimal asyncio HTTP/1.1 keep-alive server on
127.0.0.1 (a free port, printed as ``PORT <n>`` once it serves): a POST gets
its JSON-RPC answer as ``application/json`` (a notification gets 202), with
no session id, so there is no GET stream and no DELETE (both get 405). With
``--floor`` it does no MCP at all: every POST is answered with a
tools/call-shaped result echoing ``arguments.text`` (or ``n`` bytes), like the
stdio floor's child; that is the HTTP floor's server.

Run: ``python benchmarks/bare_server.py [--http [--floor]]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]


def _tool(name: str, description: str, prop: str, kind: str) -> dict[str, object]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {prop: {"type": kind}},
            "required": [prop],
        },
    }


TOOLS = [
    _tool("echo", "Echo the text back.", "text", "string"),
    _tool("blob", "Return n bytes of text.", "n", "integer"),
    _tool("slow", "Sleep ms milliseconds.", "ms", "integer"),
]


def _text_result(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _call(params: dict[str, object]) -> dict[str, object]:
    name = params.get("name")
    args = params.get("arguments") or {}
    assert isinstance(args, dict)
    if name == "echo":
        return _text_result(str(args.get("text", "")))
    if name == "blob":
        return _text_result("x" * int(args.get("n", 0)))
    if name == "slow":
        time.sleep(int(args.get("ms", 0)) / 1000)
        return _text_result("ok")
    return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


def _answer(method: str, params: dict[str, object]) -> dict[str, object] | None:
    if method == "tools/call":
        return _call(params)
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else LATEST,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-bare", "version": "1.0"},
        }
    return None


_dumps = json.JSONEncoder(separators=(",", ":")).encode


def reply_to(message: dict[str, object]) -> bytes | None:
    """The encoded answer to one JSON-RPC message; ``None`` for a notification or response."""
    if "id" not in message or "method" not in message:
        return None
    method = str(message["method"])
    params = message.get("params") or {}
    assert isinstance(params, dict)
    result = _answer(method, params)
    if result is None:
        reply = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return _dumps(reply).encode()


def floor_reply(message: dict[str, object]) -> bytes:
    """The HTTP floor: a tools/call-shaped answer to any message, no MCP logic."""
    params = message.get("params")
    args = params.get("arguments") if isinstance(params, dict) else None
    if not isinstance(args, dict):
        args = {}
    text = "x" * args["n"] if "n" in args else args.get("text", "")
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}).encode()


def main() -> None:
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    loads = json.loads
    for line in stdin:
        if not line.strip():
            continue
        data = reply_to(loads(line))
        if data is None:
            continue  # a notification (or a response): nothing to answer
        stdout.write(data)
        stdout.write(b"\n")
        stdout.flush()


# -- HTTP ----------------------------------------------------------------------------

_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 404: "Not Found"}
_REASONS.update({405: "Method Not Allowed", 411: "Length Required", 431: "Too Large"})
_MAX_HEAD = 64 * 1024


def _http_response(status: int, body: bytes = b"", *, close: bool = False) -> bytes:
    head = [f"HTTP/1.1 {status} {_REASONS[status]}", f"Content-Length: {len(body)}"]
    if body:
        head.append("Content-Type: application/json")
    if status == 405:
        head.append("Allow: POST")
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class _HTTPConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: requests with a Content-Length body, in order."""

    def __init__(self, answer: Callable[[dict[str, object]], bytes | None], path: str) -> None:
        self._answer = answer
        self._path = path
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._head: tuple[str, str, bool] | None = None  # method, target, close after
        self._need = 0  # bytes of buffer the current request needs (head + body)
        self._body_at = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while self._transport is not None:
            if self._head is None and not self._parse_head():
                return
            if len(self._buffer) < self._need:
                return
            assert self._head is not None
            method, target, close = self._head
            body = bytes(self._buffer[self._body_at : self._need])
            del self._buffer[: self._need]
            self._head = None
            self._transport.write(self._respond(method, target, body, close))
            if close:
                self._transport.close()
                return

    def _parse_head(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > _MAX_HEAD:
                self._fail(431)
            return False
        lines = self._buffer[:end].decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            self._fail(400)
            return False
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._fail(411)  # every client here sends a Content-Length
            return False
        connection = headers.get("connection", "").lower()
        close = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
        self._head = (method, target, close)
        self._body_at = end + 4
        self._need = self._body_at + int(headers.get("content-length") or 0)
        return True

    def _respond(self, method: str, target: str, body: bytes, close: bool) -> bytes:
        if target.split("?", 1)[0] != self._path:
            return _http_response(404, close=close)
        if method != "POST":
            return _http_response(405, close=close)
        try:
            message = json.loads(body)
        except ValueError:
            return _http_response(400, close=close)
        data = self._answer(message)
        if data is None:
            return _http_response(202, close=close)
        return _http_response(200, data, close=close)

    def _fail(self, status: int) -> None:
        assert self._transport is not None
        self._transport.write(_http_response(status, close=True))
        self._transport.close()


async def serve_http(floor: bool, path: str = "/mcp") -> None:
    """Serve on 127.0.0.1 (a free port) until killed; print ``PORT <n>`` once listening."""
    answer = floor_reply if floor else reply_to
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _HTTPConnection(answer, path), "127.0.0.1", 0)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if "--http" in sys.argv[1:]:
            asyncio.run(serve_http(floor="--floor" in sys.argv[1:]))
        else:
            main()
