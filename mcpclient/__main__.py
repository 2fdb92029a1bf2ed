"""Command line: ``python -m mcpclient demo``.

The demo starts the bundled scriptable server (``mcpclient.testing.server``)
as a child process, connects to it over stdio, prints the catalog, and calls
a tool that reports progress. It needs nothing but this package.
"""

from __future__ import annotations

import argparse
import sys

import mcpclient


def demo(era: str) -> int:
    """Connect to the bundled server, print its catalog, call two tools."""
    definition = mcpclient.Definition(
        "demo",
        mcpclient.StdioTransport(
            sys.executable, ["-m", "mcpclient.testing.server", "--era", era], shutdown_grace=0.5
        ),
    )

    def on_event(event: mcpclient.Event) -> None:
        if isinstance(event, mcpclient.StateChanged):
            print(f"  [state] {event.from_state} -> {event.to_state}")

    def on_progress(progress: mcpclient.Progress) -> None:
        total = f"/{progress.total:g}" if progress.total else ""
        print(f"  [progress] {progress.progress:g}{total} {progress.message}")

    with mcpclient.connect(definition, mcpclient.Handlers(event=on_event)) as client:
        status = client.status()
        catalog = client.catalog()
        print(f"connected: {status.server.name} {status.server.version}")
        where = f"{status.transport_kind}, {status.redacted_origin}"
        print(f"protocol:  {status.protocol_version}  ({where})")
        print(f"catalog:   generation {catalog.generation}, digest {catalog.digest[:16]}…")
        for tool in catalog.tools:
            print(f"  tool   {tool.model_name:<28} {tool.description[:50]}")
        for prompt in catalog.prompts:
            print(f"  prompt {prompt.name}")
        for resource in catalog.resources:
            print(f"  resource {resource.uri}")
        result = client.call_tool("echo", {"message": "hello from mcpclient"})
        print(f"echo ->    {result.text}")
        result = client.call_tool(
            "progress",
            {"steps": 3, "interval": 0.1},
            mcpclient.CallOpts(timeout=10, progress=on_progress),
        )
        print(f"progress -> {result.text}")
    print("closed cleanly")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run a sub-command."""
    parser = argparse.ArgumentParser(prog="python -m mcpclient")
    commands = parser.add_subparsers(dest="command", required=True)
    demo_parser = commands.add_parser("demo", help="run against the bundled demo server")
    demo_parser.add_argument("--era", choices=("modern", "legacy", "dual"), default="dual")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.era)
    return 2  # pragma: no cover - argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
