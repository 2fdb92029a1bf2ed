"""One adapter per client under test, all with the same small surface.

Sync adapters (``is_async = False``): ``connect(target)``, ``call(name, args)``
returning the first text block, ``close()``; the harness drives concurrency
with OS threads. Async adapters (``is_async = True``) have the same methods as
coroutines; the harness drives them with asyncio tasks on one loop.

``connect`` means spawn (or, for HTTP, connect) + negotiate + discover
(``tools/list``). Every adapter takes the transport (``stdio`` or ``http``)
at construction, so :meth:`options` can report what it sets for it, and
connects to ``target.argv`` (stdio) or ``target.url`` (HTTP).
"""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import sys
import threading
from contextlib import AsyncExitStack
from typing import Any
from urllib.parse import urlsplit

from benchlib import CATALOG_BUILTIN_TOOLS, MIB, Target

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


def _unsupported(client: str, transport: str) -> NotImplementedError:
    return NotImplementedError(f"{client}: transport {transport!r} is not wired up")


class McpclientAdapter:
    """``mcpclient``: ``connect`` then ``call_tool``; era ``legacy`` or ``modern`` (auto).

    Over stdio a ``StdioTransport``, over HTTP a ``StreamableHTTPTransport(url)``
    (plain http to 127.0.0.1 needs no extra setting).
    """

    is_async = False
    name = "mcpclient"

    def __init__(
        self,
        era: str,
        *,
        transport: str = "stdio",
        parallel: bool = False,
        result_bytes: int = 0,
        catalog_items: int = 0,
    ) -> None:
        import mcpclient

        if transport not in ("stdio", "http"):
            raise _unsupported(self.name, transport)
        self._mcpclient = mcpclient
        self.era = era
        self.transport = transport
        self.parallel = parallel
        self.result_bytes = result_bytes
        self.catalog_items = catalog_items
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
        # One frame (a stdio line, an SSE event) and, over HTTP, one response
        # body hold the whole result plus its JSON-RPC envelope.
        if self.result_bytes + 64 * 1024 > defaults.max_frame_bytes:
            kwargs["max_frame_bytes"] = self.result_bytes + MIB
        if self.transport == "http" and self.result_bytes + 64 * 1024 > defaults.max_body_bytes:
            kwargs["max_body_bytes"] = self.result_bytes + MIB
        # The catalog phase's listing: the generated tools plus the server's built-ins.
        listed = self.catalog_items + CATALOG_BUILTIN_TOOLS
        if self.catalog_items and listed > defaults.max_catalog_items:
            kwargs["max_catalog_items"] = listed
        return kwargs

    def connect(self, target: Target) -> None:
        m = self._mcpclient
        if target.transport != self.transport:
            raise _unsupported(self.name, target.transport)
        if target.transport == "http":
            transport: Any = m.StreamableHTTPTransport(target.url)
        else:
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

    def tool_count(self) -> int:
        """Tools in the catalog the connect built."""
        return len(self.client.catalog().tools)

    def call(self, name: str, args: dict[str, Any]) -> str:
        return str(self.client.call_tool(name, args).text)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class RawAdapter:
    """``raw``: the minimal sync JSON-RPC client (legacy era).

    ``raw_client.py`` over stdio; ``raw_http_client.py`` (``requests.Session``
    POSTs, one session per calling thread) over HTTP.
    """

    is_async = False
    name = "raw"

    def __init__(self, era: str, *, transport: str = "stdio", **_ignored: Any) -> None:
        if era != "legacy":
            raise ValueError("the raw client speaks the legacy era only")
        self.era = era
        self.transport = transport
        self.client: Any = None
        self._version = ""

    def options(self) -> dict[str, Any]:
        return {}

    def connect(self, target: Target) -> None:
        if target.transport == "stdio":
            from raw_client import RawClient

            self.client = RawClient(list(target.argv))
        elif target.transport == "http":
            from raw_http_client import RawHTTPClient

            self.client = RawHTTPClient(target.url)
        else:
            raise _unsupported(self.name, target.transport)
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
    """``sdk``: the official async ``ClientSession`` over ``stdio_client`` or
    ``streamable_http_client``.

    Era ``legacy`` runs ``initialize()``; ``modern`` runs ``discover()``
    (2026-07-28). Over HTTP, ``max_sse_event_size=None``: with the SDK's 1 MiB
    default, a 1 MiB result answered as SSE (the legacy era) fails.
    """

    is_async = True
    name = "sdk"

    def __init__(self, era: str, *, transport: str = "stdio", **_ignored: Any) -> None:
        if transport not in ("stdio", "http"):
            raise _unsupported(self.name, transport)
        self.era = era
        self.transport = transport
        self.session: Any = None
        self._stack: AsyncExitStack | None = None
        self._version = ""
        self._tools: list[Any] = []

    def options(self) -> dict[str, Any]:
        opts = {"handshake": "initialize()" if self.era == "legacy" else "discover()"}
        if self.transport == "http":
            opts["max_sse_event_size"] = "None"
        return opts

    async def _streams(self, stack: AsyncExitStack, target: Target) -> Any:
        if target.transport == "http":
            from mcp.client.streamable_http import streamable_http_client

            client = streamable_http_client(target.url, max_sse_event_size=None)
            return await stack.enter_async_context(client)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=target.argv[0], args=list(target.argv[1:]))
        return await stack.enter_async_context(stdio_client(params))

    async def connect(self, target: Target) -> None:
        from mcp import ClientSession

        if target.transport != self.transport:
            raise _unsupported(self.name, target.transport)
        stack = AsyncExitStack()
        try:
            read, write = await self._streams(stack, target)
            session = await stack.enter_async_context(ClientSession(read, write))
            if self.era == "legacy":
                self._version = (await session.initialize()).protocol_version
            else:
                await session.discover()
                self._version = str(session.protocol_version)
            self._tools = await self._list_tools(session)
            if not self._tools:
                raise RuntimeError("sdk discovered no tools")
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self.session = stack, session

    @staticmethod
    async def _list_tools(session: Any) -> list[Any]:
        """Every page of ``tools/list``, following ``nextCursor`` until there is none."""
        from mcp import types

        tools: list[Any] = []
        params = None
        while True:
            result = await session.list_tools(params=params)
            tools += result.tools
            if not result.next_cursor:
                return tools
            params = types.PaginatedRequestParams(cursor=result.next_cursor)

    def protocol_version(self) -> str:
        return self._version

    def tool_count(self) -> int:
        """Tools the connect listed (every page)."""
        return len(self._tools)

    async def call(self, name: str, args: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, args)
        return str(result.content[0].text)

    async def close(self) -> None:
        stack, self._stack, self.session = self._stack, None, None
        self._tools = []
        if stack is not None:
            await stack.aclose()


class FloorClient:
    """The floor, no MCP at all.

    stdio: one ``python -c`` child, driven single-threaded (``pipelined`` for
    16 in flight). HTTP: keep-alive ``http.client`` POSTs to the floor's HTTP
    server (``bare_server.py --http --floor``, started by the worker), one
    connection per calling thread (16 threads for 16 in flight).
    """

    is_async = False
    name = "floor"

    def __init__(self, era: str = "", *, transport: str = "stdio", **_ignored: Any) -> None:
        self.era = era
        self.transport = transport
        self.proc: subprocess.Popen[bytes] | None = None
        self._next = 0
        self._http: _FloorHTTP | None = None

    def options(self) -> dict[str, Any]:
        return {}

    def connect(self, target: Target | None = None) -> None:
        if self.transport == "http":
            assert target is not None and target.url
            self._http = _FloorHTTP(target.url)
        else:
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
        if self._http is not None:
            return self._http.call(name, args)
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
        floor_http, self._http = self._http, None
        if floor_http is not None:
            floor_http.close()
        proc, self.proc = self.proc, None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            proc.wait(5)
            proc.stdout.close()


class _FloorHTTP:
    """The HTTP floor: one keep-alive ``http.client.HTTPConnection`` per calling thread."""

    HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._host, self._port, self._path = parts.hostname or "", parts.port, parts.path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[http.client.HTTPConnection] = []
        self._ids = itertools.count(1)  # next() on a count is atomic in CPython

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self._host, self._port)
            with self._lock:
                self._connections.append(conn)
            self._local.conn = conn
        return conn

    def call(self, name: str, args: dict[str, Any]) -> str:
        params = {"name": name, "arguments": args}
        message = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": "tools/call",
            "params": params,
        }
        conn = self._connection()
        conn.request("POST", self._path, json.dumps(message).encode(), self.HEADERS)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"the floor's server answered HTTP {response.status}")
        return str(json.loads(body)["result"]["content"][0]["text"])

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()


ADAPTERS: dict[str, type[Any]] = {
    "mcpclient": McpclientAdapter,
    "sdk": SdkAdapter,
    "raw": RawAdapter,
    "floor": FloorClient,
}

#: What each client's import phase imports (in a fresh interpreter), per transport.
#: mcpclient resolves its public names on first use and imports its HTTP stack
#: (requests, urllib3) on the first HTTP connect, so each row names what a script
#: connecting over that transport touches, and the HTTP row imports that module too.
IMPORTS: dict[str, dict[str, str]] = {
    "mcpclient": {
        "stdio": "from mcpclient import Definition, StdioTransport, connect",
        "http": (
            "from mcpclient import Definition, StreamableHTTPTransport, connect\n"
            "import mcpclient._internal.transport.streamable_http"
        ),
    },
    "sdk": {
        "stdio": (
            "from mcp import ClientSession\n"
            "from mcp.client.stdio import StdioServerParameters, stdio_client"
        ),
        "http": (
            "from mcp import ClientSession\n"
            "from mcp.client.streamable_http import streamable_http_client"
        ),
    },
    "raw": {"stdio": "import raw_client", "http": "import raw_http_client"},
}

#: The protocol eras each client can speak (the bare server is legacy only).
ERAS: dict[str, tuple[str, ...]] = {
    "mcpclient": ("legacy", "modern"),
    "sdk": ("legacy", "modern"),
    "raw": ("legacy",),
}
