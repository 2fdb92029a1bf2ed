"""The HTTP floor of a large result: a raw socket reading the response to its last byte.

What the SDK server and the loopback cost for one ``blob(n)`` call, with no
client work at all: the request is prebuilt bytes written to one keep-alive
socket, and the response is received into a preallocated buffer until its
last byte is in, with nothing decoded (no dechunking, no SSE parsing, no
JSON). What a client spends above this floor is its *own share*.

The end of the response is found the way the bytes themselves say it: the
status line and headers are located once (``\\r\\n\\r\\n``); a
``Content-Length`` body (the 2026-07-28 era's JSON) ends after that many
bytes; a chunked body (the legacy era's SSE stream) ends with the zero-length
chunk ``0\\r\\n\\r\\n`` (a chunk of JSON-RPC text, which ends in ``}`` and a
blank line, never looks like that).

The handshake is done once, untimed: legacy: ``initialize`` and
``notifications/initialized``, then the session id and protocol version are
echoed; 2026-07-28: no handshake, every request carries the protocol version
and client capabilities in ``_meta`` and the ``Mcp-Method``/``Mcp-Name``
headers the SDK server checks.
"""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

__all__ = ["SocketFloor"]

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
_END_CHUNKED = b"\r\n0\r\n\r\n"


class SocketFloor:
    """One keep-alive socket to an MCP endpoint; ``blob(n)`` is the timed call."""

    def __init__(self, url: str, era: str) -> None:
        if era not in ("legacy", "modern"):
            raise ValueError(f"unknown era {era!r}")
        parts = urlsplit(url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._path = parts.path or "/"
        self.era = era
        self._sock: socket.socket | None = None
        self._headers: dict[str, str] = {}
        self._next_id = 0
        self._buffer = bytearray(64 * 1024)

    # -- setup (untimed) -------------------------------------------------------

    def connect(self) -> None:
        sock = socket.create_connection((self._host, self._port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        if self.era == "legacy":
            head, _ = self._exchange(
                self._request(
                    "initialize",
                    {
                        "protocolVersion": LEGACY_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "socket-floor", "version": "1.0"},
                    },
                )
            )
            session_id = _header(head, "mcp-session-id")
            if session_id:
                self._headers["Mcp-Session-Id"] = session_id
            self._headers["MCP-Protocol-Version"] = LEGACY_VERSION
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            self._exchange(self._frame(note))
        else:
            self._headers["MCP-Protocol-Version"] = MODERN_VERSION

    def _request(self, method: str, params: dict[str, Any], name: str = "") -> bytes:
        self._next_id += 1
        if self.era == "modern":
            params = {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        extra = {"Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        return self._frame(message, extra if self.era == "modern" else {})

    def _frame(self, message: dict[str, Any], extra: dict[str, str] | None = None) -> bytes:
        body = json.dumps(message, separators=(",", ":")).encode()
        headers = {
            "Host": f"{self._host}:{self._port}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(body)),
            **self._headers,
            **(extra or {}),
        }
        head = f"POST {self._path} HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        return head.encode("ascii") + b"\r\n" + body

    # -- the timed part ----------------------------------------------------------

    def blob_request(self, n: int) -> bytes:
        """The prebuilt request of one ``blob(n)`` call (build it before timing)."""
        return self._request("tools/call", {"name": "blob", "arguments": {"n": n}}, name="blob")

    def send(self, request: bytes) -> int:
        """Write ``request``, read its response to the last byte; the bytes received."""
        _, size = self._exchange(request)
        return size

    def _exchange(self, request: bytes) -> tuple[bytes, int]:
        """One request on the socket; returns the response head and its total size."""
        sock = self._sock
        assert sock is not None, "connect() first"
        sock.sendall(request)
        buf = self._buffer
        view = memoryview(buf)
        got = 0
        head_end = -1
        body_end = -1  # the total size when Content-Length says it; -1 while chunked
        while True:
            if got == len(buf):  # grow (a first call of a size only; later calls fit)
                view.release()
                buf.extend(bytes(len(buf)))
                view = memoryview(buf)
            n = sock.recv_into(view[got:])
            if not n:
                raise ConnectionError("the server closed the connection mid-response")
            got += n
            if head_end < 0:
                head_end = buf.find(b"\r\n\r\n", 0, got)
                if head_end < 0:
                    continue
                head_end += 4
                head = bytes(buf[:head_end])
                if not head.startswith((b"HTTP/1.1 2", b"HTTP/1.0 2")):
                    status = head.split(b"\r\n", 1)[0]
                    raise RuntimeError(f"the server answered {status!r}")
                length = _header(head, "content-length")
                if length is not None:
                    body_end = head_end + int(length)
                elif _header(head, "transfer-encoding") != "chunked":
                    raise RuntimeError("a response with neither a length nor chunks")
            if body_end >= 0:
                if got >= body_end:
                    break
            elif got - head_end >= 5 and buf[got - 7 : got] == _END_CHUNKED:
                break
        view.release()
        self._buffer = buf
        return bytes(buf[:head_end]), got

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


def _header(head: bytes, name: str) -> str | None:
    """A response header's value (the first), by lower-case name; ``None`` if absent."""
    for line in head.split(b"\r\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name.encode():
            return value.strip().decode("latin-1")
    return None
