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

With ``MCPCLIENT_SDK_PEER_CATALOG_CONTROLS=1`` in its environment (off by
default, so the catalog above stays exact) the peer also has tool ``set_extra``
{present}: it lists (``present=true``) or unlists the echo-like tool ``extra``
{message} at runtime, then announces the change (a tools ``list_changed``
notification in the legacy era, an event on the ``subscriptions/listen``
streams in the modern one).

With ``MCPCLIENT_SDK_PEER_EXTRAS=1`` in its environment (off by default, so
the catalog above stays exact) the peer also has: tool ``structured_plain``
(structured content ``{"kind": "plain", "n": 7}`` and a text block, but no
output schema), tool ``touch`` {uri} (a resource update for ``uri``: published
to ``subscriptions/listen`` streams in the modern era, and sent as
``notifications/resources/updated`` in the legacy era when ``uri`` is
subscribed), prompt ``brief`` {topic, tone?}, and legacy
``resources/subscribe``/``resources/unsubscribe`` handlers (so the legacy era
advertises ``resources.subscribe`` too; the modern era always does).

With ``MCPCLIENT_SDK_PEER_INTERACTIONS=1`` in its environment (off by
default) the peer also has tools that ask the client through the SDK's
``Resolve``/``Elicit``/``Sample`` resolvers, which follow the era: a
server-to-client request in the legacy era, an ``input_required`` round (MRTR,
sealed ``requestState``) in the modern one: ``ask_name`` (elicits a form with a
required string ``name``; answers ``Hello, <name>!`` or ``no name (<action>)``)
and ``ask_model`` {prompt} (samples the client, ``maxTokens`` 64; answers
``<model>: <text>``).

Over Streamable HTTP: ``python tests/integration/peers/sdk_server.py --http
[--port N] [--stateless] [--json-response]`` serves ``/mcp`` with uvicorn on
127.0.0.1 (port 0, the default, picks a free one) and prints ``listening on
http://127.0.0.1:PORT/mcp`` as its first stdout line. The SDK routes each POST
by its ``MCP-Protocol-Version`` header: 2026-07-28 (the modern probe) is served
per request, a handshake version (or none) by the legacy transport, with
``Mcp-Session-Id`` sessions unless ``--stateless``. SIGTERM/SIGINT stop it.
``--http --sse`` serves the deprecated HTTP+SSE transport instead (GET
``/sse``, POST ``/messages/``) and prints ``listening on
http://127.0.0.1:PORT/sse``.

This file is a test dependency only; ``mcpclient`` never imports ``mcp``.
"""

from __future__ import annotations

import base64
import os
from typing import Annotated, Any, TypedDict

import anyio
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Audio, Context, Elicit, Image, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Sample
from mcp_types import (
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    EmbeddedResource,
    EmptyResult,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    SamplingMessage,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel

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


def extra(message: str) -> str:
    """Listed only while ``set_extra`` says so."""
    return f"extra: {message}"


async def set_extra(present: bool, ctx: Context) -> str:
    """List (``present``) or unlist the tool ``extra``, then announce the change."""
    listed = any(tool.name == "extra" for tool in await server.list_tools())
    if present == listed:
        return "unchanged"
    if present:
        server.add_tool(
            extra, name="extra", description="Added at runtime.", structured_output=False
        )
    else:
        server.remove_tool("extra")
    # Legacy era: a plain notification (dropped by the SDK on a modern connection);
    # modern era: the subscription bus feeds every subscriptions/listen stream.
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return "added" if present else "removed"


if os.environ.get("MCPCLIENT_SDK_PEER_CATALOG_CONTROLS") == "1":
    server.add_tool(
        set_extra,
        name="set_extra",
        description="List (present=true) or unlist the tool `extra`, then announce it.",
        structured_output=False,
    )


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


#: URIs a legacy client subscribed to (the extras' ``resources/subscribe``).
SUBSCRIBED: set[str] = set()


def _install_extras() -> None:
    @server.tool(description="Structured content without an output schema.")
    def structured_plain() -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text="plain structured")],
            structured_content={"kind": "plain", "n": 7},
        )

    @server.tool(description="Announce an update of a resource.", structured_output=False)
    async def touch(uri: str, ctx: Context) -> str:
        await ctx.notify_resource_updated(uri)  # modern: the listen streams
        if uri in SUBSCRIBED:  # legacy: a plain notification (dropped by the SDK when modern)
            await ctx.session.send_resource_updated(uri)
        return f"touched {uri}"

    @server.prompt(description="A brief on a topic.")
    def brief(topic: str, tone: str = "neutral") -> str:
        return f"Write a {tone} brief about {topic}."

    async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        SUBSCRIBED.add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        SUBSCRIBED.discard(str(params.uri))
        return EmptyResult()

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


if os.environ.get("MCPCLIENT_SDK_PEER_EXTRAS") == "1":
    _install_extras()


class NameForm(BaseModel):
    """The form ``ask_name`` elicits."""

    name: str


def who() -> Elicit[NameForm]:
    return Elicit("What is your name?", NameForm)


async def ask_name(person: Annotated[ElicitationResult[NameForm], Resolve(who)]) -> str:
    if isinstance(person, AcceptedElicitation):
        return f"Hello, {person.data.name}!"
    return f"no name ({person.action})"


def completion(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=64)


async def ask_model(
    prompt: str, answer: Annotated[CreateMessageResult, Resolve(completion)]
) -> str:
    content = answer.content
    text = content.text if isinstance(content, TextContent) else repr(content)
    return f"{answer.model}: {text}"


def _install_interactions() -> None:
    server.add_tool(
        ask_name, name="ask_name", description="Ask for a name.", structured_output=False
    )
    server.add_tool(
        ask_model, name="ask_model", description="Sample the client.", structured_output=False
    )


if os.environ.get("MCPCLIENT_SDK_PEER_INTERACTIONS") == "1":
    _install_interactions()


def serve_http(argv: list[str]) -> None:
    """Serve Streamable HTTP on 127.0.0.1 with uvicorn (see the module docstring)."""
    import argparse

    import loopback

    parser = argparse.ArgumentParser(prog="sdk_server.py --http")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--sse", action="store_true")
    args = parser.parse_args(argv)
    if args.sse:
        app = server.sse_app(host="127.0.0.1")
        path = "/sse"
    else:
        app = server.streamable_http_app(
            stateless_http=args.stateless, json_response=args.json_response, host="127.0.0.1"
        )
        path = "/mcp"
    loopback.serve(app, args.port, path)


if __name__ == "__main__":
    import sys

    if "--http" in sys.argv[1:]:
        serve_http(sys.argv[1:])
    else:
        server.run("stdio")
