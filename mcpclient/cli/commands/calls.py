"""``call``, ``read`` and ``prompt``: one request to a server, its answer printed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import mcpclient
from mcpclient.cli.coerce import merge_arguments, parse_json_object, parse_pairs, positive_seconds
from mcpclient.cli.context import Context, Reply
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.values import prompt_json, resource_json, tool_result_json
from mcpclient.content import Content, ResourceContent, ResourceLink, Text, Unsupported

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``call``, ``read`` and ``prompt`` to the sub-command table."""
    p = commands.add_parser(
        "call",
        parents=[common],
        help="call a tool",
        description="Call TOOL on SERVER. Each key=value is coerced by the tool's input"
        " schema: numbers, booleans and null as JSON, arrays and objects as JSON text,"
        " strings as given. --args takes a JSON object (or - to read it from stdin);"
        " key=value pairs are laid over it. Exit 2 when the tool answers isError.",
    )
    p.add_argument("server", metavar="SERVER")
    p.add_argument("tool", metavar="TOOL")
    p.add_argument("pairs", metavar="key=value", nargs="*")
    p.add_argument("--args", dest="args_json", metavar="JSON", help="a JSON object, or - (stdin)")
    p.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="fail early when the tool reports no progress for this long (it asks for"
        " progress; the --timeout deadline still holds)",
    )
    p.set_defaults(func=run_call)
    p = commands.add_parser(
        "read",
        parents=[common],
        help="read a resource",
        description="Read the resource URI from SERVER and print its contents.",
    )
    p.add_argument("server", metavar="SERVER")
    p.add_argument("uri", metavar="URI")
    p.set_defaults(func=run_read)
    p = commands.add_parser(
        "prompt",
        parents=[common],
        help="render a prompt",
        description="Render the prompt NAME of SERVER with the given key=value arguments"
        " (prompt arguments are strings).",
    )
    p.add_argument("server", metavar="SERVER")
    p.add_argument("name", metavar="NAME")
    p.add_argument("pairs", metavar="key=value", nargs="*")
    p.set_defaults(func=run_prompt)


def describe(item: Content | ResourceContent) -> str:
    """One content item as text: its text, or a one-line description of what it is."""
    if isinstance(item, Text):
        return scrub(item.text)
    if isinstance(item, Unsupported):
        return f"[unsupported {item.kind}, {item.bytes} bytes]"
    if isinstance(item, ResourceLink):
        name = f" ({scrub(item.name, one_line=True)})" if item.name else ""
        return f"[resource link {scrub(item.uri, one_line=True)}{name}]"
    text = getattr(item, "text", "")
    data = getattr(item, "data", b"")
    if text and not data:
        return scrub(text)
    kind = type(item).__name__.lower()
    mime = scrub(getattr(item, "mime_type", "") or "", one_line=True)
    uri = scrub(getattr(item, "uri", "") or "", one_line=True)
    parts = [kind, *(p for p in (uri, mime) if p), f"{len(data)} bytes"]
    return "[" + ", ".join(parts) + "]"


def _read_args(ctx: Context) -> dict[str, Any] | None:
    source = ctx.args.args_json
    if source is None:
        return None
    if source == "-":
        return parse_json_object(sys.stdin.read(), "--args - (stdin)")
    return parse_json_object(source, "--args")


def run_call(ctx: Context) -> Reply:
    """Call the tool; an ``isError`` answer is exit 2 with the answer as the result."""
    pairs = parse_pairs(ctx.args.pairs)
    base = _read_args(ctx)
    out = ctx.out

    def on_progress(progress: mcpclient.Progress) -> None:
        out.progress(progress.progress, progress.total, progress.message)

    with ctx.session() as session:
        tool = session.client.catalog().tool_by_raw_name(ctx.args.tool)
        schema = tool.input_schema if tool is not None else None
        arguments = merge_arguments(schema, base, pairs)
        try:
            opts = session.opts(on_progress, idle_timeout=ctx.args.idle_timeout)
            result = session.client.call_tool(ctx.args.tool, arguments, opts)
        finally:
            out.done()

    def human(out: Output) -> None:
        for item in result.content:
            out.line(describe(item))
        if result.structured is not None and not result.text:
            out.line(json.dumps(result.structured, indent=2, ensure_ascii=True))
        for warning in result.warnings:
            out.note(f"warning: {scrub(warning, one_line=True)}", "yellow")

    if result.is_error:
        return Reply(
            tool_result_json(result),
            human,
            exit_code=ExitCode.TOOL_ERROR,
            error_class=str(mcpclient.FailureClass.REMOTE_TOOL_ERROR),
            message=scrub(result.text, one_line=True)[:1024] or "the tool answered isError",
        )
    return Reply(tool_result_json(result), human)


def run_read(ctx: Context) -> Reply:
    """Read the resource."""
    with ctx.session() as session:
        resource = session.client.read_resource(ctx.args.uri, session.opts())

    def human(out: Output) -> None:
        for item in resource.contents:
            out.line(describe(item))

    return Reply(resource_json(resource), human)


def run_prompt(ctx: Context) -> Reply:
    """Render the prompt (its arguments are strings, as the protocol has them)."""
    arguments = dict(parse_pairs(ctx.args.pairs))
    with ctx.session() as session:
        prompt = session.client.get_prompt(ctx.args.name, arguments, session.opts())

    def human(out: Output) -> None:
        if prompt.description:
            out.line(out.paint(scrub(prompt.description, one_line=True), "dim"))
        for message in prompt.messages:
            out.line(f"{out.paint(message.role + ':', 'bold')} {describe(message.content)}")

    return Reply(prompt_json(prompt), human)
