"""A peer built on the official SDK's low-level ``Server`` (``mcp`` 2.3.0).

Run it as ``python tests/integration/peers/lowlevel_server.py`` (stdio) or with
``--http [--port N] [--stateless]`` (Streamable HTTP on 127.0.0.1, the first
stdout line ``listening on http://127.0.0.1:PORT/mcp``; SIGTERM/SIGINT stop it).

It registers only the handlers a minimal low-level server writes: ``tools/list``
and ``tools/call`` (tool ``echo`` {message}), ``resources/list`` and
``resources/read`` (resource ``test://lowlevel/readme``), and no
``resources/templates/list`` handler. The SDK derives the ``resources``
capability from the ``resources/list`` handler, so the server declares
resources and answers ``resources/templates/list`` with -32601 "Method not
found": what issue 14's defect 6 is about. Both protocol eras are served, as
the SDK does (the client's first request decides).

This file is a test dependency only; ``mcpclient`` never imports ``mcp``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

README_URI = "test://lowlevel/readme"
README_TEXT = "a low-level server with no resource templates"


async def list_tools(
    _ctx: Any, _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    schema = {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    }
    return types.ListToolsResult(
        tools=[types.Tool(name="echo", description="Echo the message.", input_schema=schema)]
    )


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "echo":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"unknown tool {params.name}")],
            is_error=True,
        )
    message = str((params.arguments or {}).get("message", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)])


async def list_resources(
    _ctx: Any, _params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[types.Resource(uri=README_URI, name="readme", mime_type="text/plain")]
    )


async def read_resource(
    _ctx: Any, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=str(params.uri), text=README_TEXT, mime_type="text/plain"
            )
        ]
    )


server: Server[Any] = Server(
    "lowlevel-peer",
    version="2.3.0-lowlevel",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def serve_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(argv: list[str]) -> None:
    """Serve Streamable HTTP on 127.0.0.1 with uvicorn (see the module docstring)."""
    import argparse

    import loopback

    parser = argparse.ArgumentParser(prog="lowlevel_server.py --http")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args(argv)
    app = server.streamable_http_app(stateless_http=args.stateless, host="127.0.0.1")
    loopback.serve(app, args.port, "/mcp")


if __name__ == "__main__":
    import sys

    if "--http" in sys.argv[1:]:
        serve_http(sys.argv[1:])
    else:
        anyio.run(serve_stdio)
