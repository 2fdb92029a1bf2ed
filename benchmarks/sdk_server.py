"""The official SDK's server (``mcp`` 2.3.0) with the benchmark tools, over stdio.

Tools (all ``structured_output=False``, so a result is one text block and
``blob(n)`` puts n bytes of text on the wire, not 2n):

- ``echo(text)``: returns ``text``;
- ``blob(n)``: returns ``n`` bytes of ASCII text;
- ``slow(ms)``: sleeps ``ms`` milliseconds, then returns ``"ok"``.

The SDK serves both protocol eras on one stdio connection: the client's first
request decides (``initialize``: legacy; ``server/discover``: 2026-07-28).

With ``--http`` it serves streamable HTTP over uvicorn on 127.0.0.1 with the
SDK's defaults (``/mcp``, stateful, SSE replies in the legacy era, plain JSON
for quick results in the 2026-07-28 era; no access log), on a free port it
prints as ``PORT <n>`` once uvicorn has started.

Run: ``python benchmarks/sdk_server.py [--http]``. A benchmark dependency only;
``mcpclient`` never imports ``mcp``.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("bench-sdk", version="2.3.0-bench")


@server.tool(description="Echo the text back.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Return n bytes of text.", structured_output=False)
def blob(n: int) -> str:
    return "x" * n


@server.tool(description="Sleep ms milliseconds.", structured_output=False)
async def slow(ms: int) -> str:
    await anyio.sleep(ms / 1000)
    return "ok"


async def serve_http() -> None:
    """uvicorn on 127.0.0.1, a free port, until killed; ``PORT <n>`` once it serves."""
    import uvicorn

    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted
    # connections only when the socket's proto says TCP (with 0, every reply
    # that ends in a second small write waits ~40 ms for a delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    http = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(http.serve, [sock])
        while not http.started:
            await anyio.sleep(0.01)
        print(f"PORT {sock.getsockname()[1]}", flush=True)


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        anyio.run(serve_http)
    else:
        server.run("stdio")
