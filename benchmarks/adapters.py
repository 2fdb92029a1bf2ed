"""One adapter per client under test, all with the same small surface.

Sync adapters (``is_async = False``): ``connect(target)``, ``call(name, args)``
returning the first text block, ``close()``; the harness drives concurrency
with OS threads. Async adapters (``is_async = True``) have the same methods as
coroutines; the harness drives them with asyncio tasks on one loop.

``connect`` means spawn (or, for HTTP, connect) + negotiate + discover
(``tools/list``). To add the HTTP transport, give each ``connect`` an
``http`` branch that uses ``target.url``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import AsyncExitStack
from typing import Any

from benchlib import MIB, Target

#: The floor's child: read a line, json.loads, write a tools/call-shaped answer.
FLOOR_CHILD = r"""
import json, sys
r, w = sys.stdin.buffer, sys.stdout.buffer
for line in r:
    m = json.loads(line)
    a = (m.get("params") or {}).get("arguments") or {}
    t = "x" * a["n"] if "n" in a else a.get("text", "")
    res = {"content": [{"type": "text", "text": t}], "isError": False}
    w.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": res}).encode() + b"\n")
    w.flush()
"""


def _unsupported(client: str, target: Target) -> NotImplementedError:
    return NotImplementedError(f"{client}: transport {target.transport!r} is not wired up yet")


class McpclientAdapter:
    """``mcpclient``: ``connect`` then ``call_tool``; era ``legacy`` or ``modern`` (auto)."""

    is_async = False
    name = "mcpclient"

    def __init__(self, era: str, *, parallel: bool = False, result_bytes: int = 0) -> None:
        import mcpclient

        self._mcpclient = mcpclient
        self.era = era
        self.parallel = parallel
        self.result_bytes = result_bytes
        self.client: Any = None

    def options(self) -> dict[str, Any]:
        """The non-default settings this adapter applies (reported with results)."""
        limits = dict(self._limits_kwargs())
        opts: dict[str, Any] = {"protocol": "legacy" if self.era == "legacy" else "auto"}
        if self.parallel:
            opts["allow_parallel_calls"] = True
        if limits:
            opts["limits"] = limits
        return opts

    def _limits_kwargs(self) -> dict[str, int]:
        defaults = self._mcpclient.DEFAULT_LIMITS
        kwargs: dict[str, int] = {}
        if self.parallel:
            kwargs["max_concurrent_requests"] = 16
        if self.result_bytes > defaults.max_text_result_bytes:
            kwargs["max_text_result_bytes"] = self.result_bytes
        if self.result_bytes + 64 * 1024 > defaults.max_frame_bytes:
            kwargs["max_frame_bytes"] = self.result_bytes + MIB
        return kwargs

    def connect(self, target: Target) -> None:
        m = self._mcpclient
        if target.transport != "stdio":
            raise _unsupported(self.name, target)
        transport = m.StdioTransport(target.argv[0], list(target.argv[1:]))
        definition = m.Definition(
            "bench",
            transport,
            protocol="legacy" if self.era == "legacy" else "auto",
            allow_parallel_calls=self.parallel,
            limits=m.Limits(**self._limits_kwargs()),
        )
        self.client = m.connect(definition)
        if not self.client.catalog().tools:
            raise RuntimeError("mcpclient discovered no tools")

    def protocol_version(self) -> str:
        return str(self.client.status().protocol_version)

    def call(self, name: str, args: dict[str, Any]) -> str:
        return str(self.client.call_tool(name, args).text)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class RawAdapter:
    """``raw``: the minimal sync JSON-RPC client in ``raw_client.py`` (legacy era)."""

    is_async = False
    name = "raw"

    def __init__(self, era: str, **_ignored: Any) -> None:
        if era != "legacy":
            raise ValueError("the raw client speaks the legacy era only")
        self.era = era
        self.client: Any = None
        self._version = ""

    def options(self) -> dict[str, Any]:
        return {}

    def connect(self, target: Target) -> None:
        from raw_client import RawClient

        if target.transport != "stdio":
            raise _unsupported(self.name, target)
        self.client = RawClient(list(target.argv))
        self._version = self.client.initialize()["protocolVersion"]
        if not self.client.list_tools():
            raise RuntimeError("raw discovered no tools")

    def protocol_version(self) -> str:
        return self._version

    def call(self, name: str, args: dict[str, Any]) -> str:
        return str(self.client.call_tool(name, args))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class SdkAdapter:
    """``sdk``: the official async ``ClientSession`` over ``stdio_client``.

    Era ``legacy`` runs ``initialize()``; ``modern`` runs ``discover()``
    (2026-07-28).
    """

    is_async = True
    name = "sdk"

    def __init__(self, era: str, **_ignored: Any) -> None:
        self.era = era
        self.session: Any = None
        self._stack: AsyncExitStack | None = None
        self._version = ""

    def options(self) -> dict[str, Any]:
        return {"handshake": "initialize()" if self.era == "legacy" else "discover()"}

    async def connect(self, target: Target) -> None:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        if target.transport != "stdio":
            raise _unsupported(self.name, target)
        stack = AsyncExitStack()
        try:
            params = StdioServerParameters(command=target.argv[0], args=list(target.argv[1:]))
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            if self.era == "legacy":
                self._version = (await session.initialize()).protocol_version
            else:
                await session.discover()
                self._version = str(session.protocol_version)
            if not (await session.list_tools()).tools:
                raise RuntimeError("sdk discovered no tools")
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self.session = stack, session

    def protocol_version(self) -> str:
        return self._version

    async def call(self, name: str, args: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, args)
        return str(result.content[0].text)

    async def close(self) -> None:
        stack, self._stack, self.session = self._stack, None, None
        if stack is not None:
            await stack.aclose()


class FloorClient:
    """The floor: one ``python -c`` child, driven single-threaded (no MCP at all)."""

    is_async = False
    name = "floor"

    def __init__(self, era: str = "", **_ignored: Any) -> None:
        self.era = era
        self.proc: subprocess.Popen[bytes] | None = None
        self._next = 0

    def options(self) -> dict[str, Any]:
        return {}

    def connect(self, target: Target | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FLOOR_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.call("echo", {"text": "hello"})  # the first answer: the child is up

    def protocol_version(self) -> str:
        return ""  # no protocol at all

    def _frame(self, name: str, args: dict[str, Any]) -> bytes:
        self._next += 1
        params = {"name": name, "arguments": args}
        message = {"jsonrpc": "2.0", "id": self._next, "method": "tools/call", "params": params}
        return json.dumps(message).encode() + b"\n"

    def call(self, name: str, args: dict[str, Any]) -> str:
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(self._frame(name, args))
        proc.stdin.flush()
        return str(json.loads(proc.stdout.readline())["result"]["content"][0]["text"])

    def pipelined(self, total: int, depth: int) -> int:
        """``total`` echo calls, ``depth`` in flight, from this one thread; returns bad count."""
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        stdin, readline = proc.stdin, proc.stdout.readline
        sent = received = bad = 0
        expected: dict[int, str] = {}
        while received < total:
            while sent < total and sent - received < depth:
                text = f"p{sent}"
                expected[self._next + 1] = text
                stdin.write(self._frame("echo", {"text": text}))
                sent += 1
            stdin.flush()
            reply = json.loads(readline())
            if reply["result"]["content"][0]["text"] != expected.pop(reply["id"]):
                bad += 1
            received += 1
        return bad

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            proc.wait(5)
            proc.stdout.close()


ADAPTERS: dict[str, type[Any]] = {
    "mcpclient": McpclientAdapter,
    "sdk": SdkAdapter,
    "raw": RawAdapter,
    "floor": FloorClient,
}

#: What each client's import phase imports (in a fresh interpreter).
IMPORTS: dict[str, str] = {
    "mcpclient": "import mcpclient",
    "sdk": (
        "from mcp import ClientSession\n"
        "from mcp.client.stdio import StdioServerParameters, stdio_client"
    ),
    "raw": "import raw_client",
}

#: The protocol eras each client can speak (the bare server is legacy only).
ERAS: dict[str, tuple[str, ...]] = {
    "mcpclient": ("legacy", "modern"),
    "sdk": ("legacy", "modern"),
    "raw": ("legacy",),
}
