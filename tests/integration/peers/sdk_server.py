"""A peer server built with the official MCP Python SDK (``mcp`` 2.3.0), over stdio.

Run it as ``python tests/integration/peers/sdk_server.py``. The SDK serves both
protocol eras on one stdio connection: the client's first request decides
(``initialize`` → the legacy handshake era, a request carrying the modern
``_meta`` envelope such as ``server/discover`` → 2026-07-28).

Tools: ``echo`` {message} (text), ``add`` {a, b} (output schema, structured
``{"sum": a + b}``), ``image`` (a 1x1 PNG), ``audio`` (a tiny WAV),
``embedded`` (an embedded text resource), ``link`` (a resource link),
``boom`` (a tool error: ``isError``), ``slow`` {seconds} (sleeps, reporting
progress every tenth of the way when asked). Prompt ``greet`` {name} with
completions of ``name``. Resources ``test://static/text`` (text) and
``test://static/blob`` (binary), template ``test://items/{item_id}``.

This file is a test dependency only; ``mcpclient`` never imports ``mcp``.
"""

from __future__ import annotations

import base64
from typing import Any, TypedDict

import anyio
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    EmbeddedResource,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    TextResourceContents,
)

#: A valid 1x1 transparent PNG.
PNG_BYTES = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
#: A valid WAV header with no samples (44 bytes).
WAV_BYTES = (
    b"RIFF"
    + (36).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")  # PCM
    + (1).to_bytes(2, "little")  # mono
    + (8000).to_bytes(4, "little")
    + (8000).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (8).to_bytes(2, "little")
    + b"data"
    + (0).to_bytes(4, "little")
)
BLOB_BYTES = bytes(range(256))
GREET_NAMES = ("Alice", "Albert", "Bob")

server: MCPServer[Any] = MCPServer(
    "sdk-peer", version="2.3.0-peer", instructions="A test peer built on the official SDK."
)


class Sum(TypedDict):
    """The structured result of ``add``."""

    sum: int


@server.tool(description="Echo the message back.", structured_output=False)
def echo(message: str) -> str:
    return message


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> Sum:
    return {"sum": a + b}


@server.tool(description="A 1x1 PNG image.")
def image() -> Image:
    return Image(data=PNG_BYTES, format="png")


@server.tool(description="A tiny WAV file.")
def audio() -> Audio:
    return Audio(data=WAV_BYTES, format="wav")


@server.tool(description="An embedded text resource.")
def embedded() -> EmbeddedResource:
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri="test://static/text", text="embedded text", mime_type="text/plain"
        ),
    )


@server.tool(description="A link to a resource.")
def link() -> ResourceLink:
    return ResourceLink(
        type="resource_link",
        uri="test://static/blob",
        name="blob",
        description="the binary resource",
        mime_type="application/octet-stream",
    )


@server.tool(description="Always fails (a tool error, not a protocol error).")
def boom() -> str:
    raise ToolError("boom: this tool always fails")


@server.tool(description="Sleep, reporting progress.", structured_output=False)
async def slow(seconds: float, ctx: Context) -> str:
    steps = 10
    for step in range(steps):
        await anyio.sleep(seconds / steps)
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return f"slept {seconds:g}"


@server.prompt(description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.resource("test://static/text", name="text", mime_type="text/plain")
def text_resource() -> str:
    return "static text"


@server.resource("test://static/blob", name="blob", mime_type="application/octet-stream")
def blob_resource() -> bytes:
    return BLOB_BYTES


@server.resource("test://items/{item_id}", name="item", mime_type="text/plain")
def item(item_id: str) -> str:
    return f"item {item_id}"


@server.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "name":
        values = [n for n in GREET_NAMES if n.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)
    if isinstance(ref, ResourceTemplateReference) and argument.name == "item_id":
        return Completion(values=[v for v in ("1", "2", "3") if v.startswith(argument.value)])
    return None


if __name__ == "__main__":
    server.run("stdio")
