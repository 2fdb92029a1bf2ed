"""``list SERVER`` and ``status SERVER``: what a server offers, and how the binding is."""

from __future__ import annotations

import argparse
from typing import Any

from mcpclient.catalog import Catalog
from mcpclient.cli.context import Context, Reply
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.values import catalog_json, status_json

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``list`` and ``status`` to the sub-command table."""
    p = commands.add_parser(
        "list",
        parents=[common],
        help="tools, prompts, resources and templates of a server",
        description="Connect to SERVER and print its catalog: tools, prompts, resources and"
        " resource templates.",
    )
    p.add_argument("server", metavar="SERVER")
    p.set_defaults(func=run_list)
    p = commands.add_parser(
        "status",
        parents=[common],
        help="connect and show the binding's status",
        description="Connect to SERVER and print the binding's status: state, protocol"
        " version, server identity, transport and catalog generation.",
    )
    p.add_argument("server", metavar="SERVER")
    p.set_defaults(func=run_status)


def _one_line(text: str, width: int = 60) -> str:
    text = scrub(text, one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def show_catalog(out: Output, catalog: Catalog) -> None:
    """The catalog as a person reads it."""
    server = catalog.server
    out.line(
        f"{out.paint('server', 'bold')}  {scrub(server.name, one_line=True)}"
        f" {scrub(server.version, one_line=True)}  (protocol {catalog.protocol_version})"
    )
    sections: list[tuple[str, list[tuple[str, str]]]] = [
        ("tools", [(t.raw_name, t.description) for t in catalog.tools]),
        (
            "prompts",
            [
                (
                    p.name
                    + "("
                    + ", ".join(a.name + ("*" if a.required else "") for a in p.arguments)
                    + ")",
                    p.description,
                )
                for p in catalog.prompts
            ],
        ),
        ("resources", [(r.uri, r.name or r.description) for r in catalog.resources]),
        (
            "templates",
            [(t.uri_template, t.name or t.description) for t in catalog.resource_templates],
        ),
    ]
    for title, rows in sections:
        out.line(out.paint(f"{title} ({len(rows)})", "bold"))
        width = min(max((len(name) for name, _ in rows), default=0), 32)
        for name, about in rows:
            shown = scrub(name, one_line=True)
            pad = " " * max(width - len(shown), 0)
            out.line(f"  {out.paint(shown, 'cyan')}{pad}  {_one_line(about)}".rstrip())
    for warning in catalog.warnings:
        out.line(out.paint(f"warning: {_one_line(warning, 200)}", "yellow"))


def run_list(ctx: Context) -> Reply:
    """Connect and return the adopted catalog."""
    with ctx.session() as session:
        catalog = session.client.catalog()
    return Reply(catalog_json(catalog), lambda out: show_catalog(out, catalog))


def run_status(ctx: Context) -> Reply:
    """Connect and return the status snapshot."""
    with ctx.session() as session:
        status = session.client.status()
    result = status_json(status)

    def human(out: Output) -> None:
        rows = [
            ("state", result["state"]),
            ("server", f"{result['server']['name']} {result['server']['version']}"),
            ("protocol", result["protocol_version"]),
            ("transport", result["transport"]),
            ("origin", result["origin"]),
            ("catalog", f"generation {result['catalog_generation']}"),
            ("profile", result["compat_profile"]),
        ]
        for key, value in rows:
            out.line(f"{out.paint(f'{key:<10}', 'bold')}{scrub(str(value), one_line=True)}")

    return Reply(result, human)
