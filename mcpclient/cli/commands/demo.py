"""``demo``: the bundled scriptable server, started, listed and called.

The demo starts ``mcpclient.testing.server`` as a child process, connects to
it over stdio, prints the catalog, and calls a tool that reports progress. It
needs nothing but this package.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import mcpclient
from mcpclient.cli.context import Context, Reply

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``demo`` to the sub-command table."""
    p = commands.add_parser(
        "demo",
        parents=[common],
        help="run against the bundled demo server",
        description="Start the bundled testing server over stdio, print its catalog and"
        " call two tools.",
    )
    p.add_argument("--era", choices=("modern", "legacy", "dual"), default="dual")
    p.set_defaults(func=run_demo)


def run_demo(ctx: Context) -> Reply:
    """Connect to the bundled server, print its catalog, call two tools."""
    quiet = ctx.out.json_mode
    say = (lambda text: None) if quiet else ctx.out.line
    definition = mcpclient.Definition(
        "demo",
        mcpclient.StdioTransport(
            sys.executable,
            ["-m", "mcpclient.testing.server", "--era", ctx.args.era],
            shutdown_grace=0.5,
        ),
    )

    def on_event(event: mcpclient.Event) -> None:
        if isinstance(event, mcpclient.StateChanged):
            say(f"  [state] {event.from_state} -> {event.to_state}")

    def on_progress(progress: mcpclient.Progress) -> None:
        total = f"/{progress.total:g}" if progress.total else ""
        say(f"  [progress] {progress.progress:g}{total} {progress.message}")

    timeout = ctx.timeout
    with mcpclient.connect(
        definition,
        mcpclient.Handlers(event=on_event),
        timeout=timeout,
        cancel=ctx.interrupt.token,
    ) as client:
        status = client.status()
        catalog = client.catalog()
        say(f"connected: {status.server.name} {status.server.version}")
        where = f"{status.transport_kind}, {status.redacted_origin}"
        say(f"protocol:  {status.protocol_version}  ({where})")
        say(f"catalog:   generation {catalog.generation}, digest {catalog.digest[:16]}…")
        for tool in catalog.tools:
            say(f"  tool   {tool.model_name:<28} {tool.description[:50]}")
        for prompt in catalog.prompts:
            say(f"  prompt {prompt.name}")
        for resource in catalog.resources:
            say(f"  resource {resource.uri}")
        opts = mcpclient.CallOpts(timeout=timeout, cancel=ctx.interrupt.token)
        echo = client.call_tool("echo", {"message": "hello from mcpclient"}, opts)
        say(f"echo ->    {echo.text}")
        progress = client.call_tool(
            "progress",
            {"steps": 3, "interval": 0.1},
            mcpclient.CallOpts(
                timeout=10 if timeout is None else timeout,
                progress=on_progress,
                cancel=ctx.interrupt.token,
            ),
        )
        say(f"progress -> {progress.text}")
    say("closed cleanly")
    result = {
        "server": {"name": status.server.name, "version": status.server.version},
        "protocol_version": status.protocol_version,
        "transport": status.transport_kind,
        "tools": [tool.raw_name for tool in catalog.tools],
        "echo": echo.text,
        "progress": progress.text,
    }
    return Reply(result, None)
