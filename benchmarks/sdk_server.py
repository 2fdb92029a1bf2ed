"""The official SDK's server (``mcp`` 2.3.0) with the benchmark tools, over stdio.

Tools (all ``structured_output=False``, so a result is one text block and
``blob(n)`` puts n bytes of text on the wire, not 2n):

- ``echo(text)``: returns ``text``;
- ``blob(n)``: returns ``n`` bytes of ASCII text;
- ``slow(ms)``: sleeps ``ms`` milliseconds, then returns ``"ok"``.

The SDK serves both protocol eras on one stdio connection: the client's first
request decides (``initialize``: legacy; ``server/discover``: 2026-07-28).

Run: ``python benchmarks/sdk_server.py`` (stdio). A benchmark dependency only;
``mcpclient`` never imports ``mcp``.
"""

from __future__ import annotations

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


if __name__ == "__main__":
    server.run("stdio")
