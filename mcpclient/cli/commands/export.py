"""``export SERVER... --provider PROVIDER``: tools as a provider's declarations.

PROVIDER is one of ``mcpclient.export.PROVIDERS`` (``openai_chat``,
``openai_responses``, ``anthropic``, ``gemini``): the library's names, so
``run_tool_calls(provider=...)`` takes the same word.

Connects to every SERVER, gathers their tools, and prints them converted by
:mod:`mcpclient.export` (imported on first use) as a JSON array; each
change the conversion made (a name shortened, a schema keyword dropped or
converted) goes to stderr, or into the envelope's ``report`` with ``--json``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import attrs

from mcpclient.catalog import ToolSpec
from mcpclient.cli.context import Context, Reply
from mcpclient.cli.optional import export_module
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.target import Target
from mcpclient.cli.values import plain

__all__ = ["PROVIDERS", "register"]

#: Provider (as ``mcpclient.export.PROVIDERS`` names it) -> its converter in mcpclient.export.
PROVIDERS = {
    "openai_chat": "to_openai_chat",
    "openai_responses": "to_openai_responses",
    "anthropic": "to_anthropic",
    "gemini": "to_gemini",
}


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``export`` to the sub-command table."""
    p = commands.add_parser(
        "export",
        parents=[common],
        help="the servers' tools as an inference provider's tool declarations",
        description="Connect to each SERVER and print their tools as the tool declarations"
        " of PROVIDER (a JSON array on stdout; the conversion report on stderr).",
    )
    p.add_argument("servers", metavar="SERVER", nargs="+")
    p.add_argument("--provider", choices=sorted(PROVIDERS), required=True)
    p.set_defaults(func=run_export)


def _targets(ctx: Context) -> list[Target]:
    targets = [
        ctx.target() if server is None else ctx.target(server) for server in ctx.args.servers
    ]
    if len(targets) > 1:
        # Model names are binding-qualified: give unnamed servers distinct bindings.
        seen: set[str] = set()
        renamed = []
        for index, target in enumerate(targets, 1):
            name = str(target.definition.name)
            if name in seen:
                name = f"{name[:28]}{index}"
            seen.add(name)
            renamed.append(
                attrs.evolve(target, definition=attrs.evolve(target.definition, name=name))
            )
        targets = renamed
    return targets


def run_export(ctx: Context) -> Reply:
    """Connect to each server, gather its tools, convert them."""
    convert = getattr(export_module(), PROVIDERS[ctx.args.provider])
    tools: list[ToolSpec] = []
    for target in _targets(ctx):
        with ctx.session(target) as session:
            tools.extend(session.client.catalog().tools)
    converted = convert(tools)
    declarations = plain(converted.tools)
    report = [
        {"tool": c.tool, "path": c.path, "action": c.action, "detail": c.detail}
        for c in converted.report
    ]
    result = {"provider": ctx.args.provider, "tools": declarations, "report": report}

    def human(out: Output) -> None:
        out.line(json.dumps(declarations, indent=2, ensure_ascii=True))
        for change in converted.report:
            out.note(f"changed: {scrub(str(change), one_line=True)}", "dim")

    return Reply(result, human)
