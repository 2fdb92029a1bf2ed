"""A minimal synchronous MCP client over streamable HTTP: what a naive one costs.

No MCP library: ``requests.Session`` POSTs with its defaults, one session per
calling thread (a ``Session`` is not meant to be shared between threads).
Legacy era only (the ``initialize`` handshake). The answer to a request is its
JSON body, or, when the server answers with an SSE stream
(``text/event-stream``, as the SDK server does in the legacy era), the
``data:`` of the event carrying the response, read once the stream ends. The
``Mcp-Session-Id`` the server assigns is echoed on every later request, and
``close`` sends ``DELETE`` for it. It validates nothing; it is a yardstick,
not a client to ship.

Example::

    with RawHTTPClient("http://127.0.0.1:8000/mcp") as client:
        client.initialize()
        client.list_tools()
        print(client.call_tool("echo", {"text": "hi"}))
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from typing import Any

import requests

__all__ = ["RawHTTPClient", "RawHTTPError"]

PROTOCOL_VERSION = "2025-11-25"


class RawHTTPError(Exception):
    """A JSON-RPC error answer, an HTTP error status or a reply that never came."""


class RawHTTPClient:
    """One MCP endpoint; ``request`` may be called from many threads."""

    def __init__(self, url: str, *, timeout: float = 60.0) -> None:
        self._url = url
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._sessions: list[requests.Session] = []
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }

    def __enter__(self) -> RawHTTPClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- wire ---------------------------------------------------------------

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            with self._lock:
                self._sessions.append(session)
            self._local.session = session
        return session

    def _post(self, message: dict[str, Any]) -> requests.Response:
        data = json.dumps(message, separators=(",", ":")).encode()
        response = self._session().post(
            self._url, data=data, headers=self._headers, timeout=self._timeout
        )
        if response.status_code >= 400:
            raise RawHTTPError(f"HTTP {response.status_code} from the server")
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id and "Mcp-Session-Id" not in self._headers:
            self._headers = {**self._headers, "Mcp-Session-Id": session_id}
        return response

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one request and block until its answer arrives."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        response = self._post(message)
        if response.headers.get("Content-Type", "").startswith("text/event-stream"):
            reply = _from_sse(response.content, request_id)
        else:
            reply = response.json()
        if "error" in reply:
            raise RawHTTPError(str(reply["error"]))
        return reply.get("result")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._post(message).close()

    # -- MCP ----------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw-bench", "version": "1.0"},
            },
        )
        self._headers = {**self._headers, "MCP-Protocol-Version": result["protocolVersion"]}
        self.notify("notifications/initialized")
        return dict(result)

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.request("tools/list", {})["tools"])

    def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Call a tool; return its first text block."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return str(result["content"][0]["text"])

    def close(self) -> None:
        """``DELETE`` the server's session (if it made one), then close every HTTP session."""
        if "Mcp-Session-Id" in self._headers:
            with contextlib.suppress(requests.RequestException):
                self._session().delete(self._url, headers=self._headers, timeout=5).close()
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.close()


def _from_sse(body: bytes, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response for ``request_id`` among the events of an SSE body."""
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(
            line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
        )
        if not data:
            continue
        message = json.loads(data)
        if message.get("id") == request_id and "method" not in message:
            return dict(message)
    raise RawHTTPError("the SSE stream ended without the response")
