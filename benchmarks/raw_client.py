"""A minimal synchronous MCP client: what a naive thread-based client costs.

No MCP library: ``subprocess.Popen``, one reader thread that routes responses
by id, and one lock per call that the reader releases when the answer
arrives. Legacy era only (the ``initialize`` handshake). It validates nothing
and has no deadlines beyond a per-call timeout; it is a yardstick, not a
client to ship.

Example::

    with RawClient([sys.executable, "benchmarks/bare_server.py"]) as client:
        client.initialize()
        client.list_tools()
        print(client.call_tool("echo", {"text": "hi"}))
"""

from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
import threading
from typing import Any

__all__ = ["RawClient", "RawError"]

PROTOCOL_VERSION = "2025-11-25"


class RawError(Exception):
    """A JSON-RPC error answer, a lost connection or a timeout."""


class _Call:
    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.reply: dict[str, Any] | None = None


class RawClient:
    """One server child process; ``request`` may be called from many threads."""

    def __init__(self, argv: list[str], *, timeout: float = 60.0) -> None:
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin = self._proc.stdin
        self._stdout = self._proc.stdout
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._pending: dict[int, _Call] = {}
        self._pending_lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, name="raw-reader", daemon=True)
        self._reader.start()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- wire ---------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            self._stdin.write(data)
            self._stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one request and block until its answer arrives."""
        call = _Call()
        request_id = next(self._ids)
        with self._pending_lock:
            if self._closed:
                raise RawError("the connection is closed")
            self._pending[request_id] = call
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        if not call.done.acquire(timeout=self._timeout):
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise RawError(f"{method} timed out")
        reply = call.reply
        if reply is None:
            raise RawError("the connection was lost")
        if "error" in reply:
            raise RawError(str(reply["error"]))
        return reply.get("result")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def _read_loop(self) -> None:
        readline = self._stdout.readline
        while True:
            line = readline()
            if not line:
                break
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "method" in message:
                if "id" in message:  # a server request: answer "not supported"
                    error = {"code": -32601, "message": "not supported"}
                    self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                continue
            with self._pending_lock:
                call = self._pending.pop(message.get("id"), None)
            if call is not None:
                call.reply = message
                call.done.release()
        with self._pending_lock:  # EOF: fail everything still waiting
            self._closed = True
            calls, self._pending = list(self._pending.values()), {}
        for call in calls:
            call.done.release()

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
        self.notify("notifications/initialized")
        return dict(result)

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.request("tools/list", {})["tools"])

    def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Call a tool; return its first text block."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return str(result["content"][0]["text"])

    def close(self, timeout: float = 5.0) -> None:
        """Close stdin, wait for the child to exit (kill it after ``timeout``)."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout)
        self._stdout.close()
