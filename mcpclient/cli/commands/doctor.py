"""``doctor [SERVER...]``: does each server start, and how well does it speak.

For every SERVER (default: every enabled server of the discovered host
configurations): does it start, which protocol version it negotiated, how long
connecting and a ping took, its catalog's warnings and the tolerances the
compatibility profile applied. Exit 0 when every server is healthy, else the
exit code of the first that is not.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from mcpclient.cli.context import Context, Reply
from mcpclient.cli.envelope import CliError, failure_of
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.inputs import check_resolved
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.target import Target, configured_servers
from mcpclient.errors import ConfigError, Error

__all__ = ["register"]

#: Seconds each server gets to start and answer a ping without --timeout.
DEFAULT_BUDGET = 15.0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``doctor`` to the sub-command table."""
    p = commands.add_parser(
        "doctor",
        parents=[common],
        help="check that each configured server starts and answers",
        description="For each SERVER (default: every enabled configured server): does it"
        " start, which protocol version, how long connect and a ping take, catalog"
        " warnings and applied tolerances. --timeout is per server (default 15 s).",
    )
    p.add_argument("servers", metavar="SERVER", nargs="*")
    p.set_defaults(func=run_doctor)


def _targets(ctx: Context) -> list[tuple[str, Target | CliError | Error]]:
    if ctx.args.servers:
        out: list[tuple[str, Target | CliError | Error]] = []
        for server in ctx.args.servers:
            try:
                target = ctx.target() if server is None else ctx.target(server)
            except (CliError, Error) as exc:
                out.append((server or "stdio", exc))
                continue
            out.append((target.display, target))
        return out
    broken: list[tuple[str, ConfigError]] = []
    entries = configured_servers(
        getattr(ctx.args, "config", None), ctx.environ, broken, ctx.answers
    )
    found: list[tuple[str, Target | CliError | Error]] = list(broken)
    for entry in entries:
        if getattr(entry.server, "disabled", False):
            continue
        label = f"{entry.host}:{entry.name}"
        try:
            # An unset credential fails this server here: doctor never sends it empty.
            check_resolved(entry.name, entry.server)
            found.append((label, Target(entry.server.definition(), label)))
        except Error as exc:
            found.append((label, exc))
    return found


def _check(ctx: Context, target: Target) -> dict[str, Any]:
    budget = ctx.timeout if ctx.timeout is not None else DEFAULT_BUDGET
    started = time.monotonic()
    session = ctx.session(target)
    session.deadline = started + budget
    with session:
        connected = time.monotonic()
        session.client.ping(session.opts())
        pinged = time.monotonic()
        status = session.client.status()
        catalog = session.client.catalog()
    warnings = list(catalog.warnings)
    for tool in catalog.tools:
        warnings.extend(f"tool {tool.raw_name}: {w}" for w in tool.warnings)
    return {
        "ok": True,
        "protocol_version": status.protocol_version,
        "transport": status.transport_kind,
        "identity": {"name": status.server.name, "version": status.server.version},
        "connect_seconds": round(connected - started, 4),
        "ping_seconds": round(pinged - connected, 4),
        "tools": len(catalog.tools),
        "warnings": warnings,
        "applied_tolerances": [str(t) for t in catalog.applied_tolerances],
        "error": None,
    }


def run_doctor(ctx: Context) -> Reply:
    """Check each server in turn."""
    reports: list[dict[str, Any]] = []
    worst = ExitCode.OK
    first_error: tuple[str, str] = ("", "")
    for label, found in _targets(ctx):
        problem: CliError | Error | None = None if isinstance(found, Target) else found
        if isinstance(found, Target):
            try:
                report = _check(ctx, found)
            except (CliError, Error) as exc:
                if ctx.interrupt.interrupted:
                    raise
                problem = exc
        if problem is not None:
            error_class, message, code = failure_of(problem)
            report = {"ok": False, "error": {"class": error_class, "message": message}}
            if worst == ExitCode.OK:
                worst, first_error = code, (error_class, f"{label}: {message}")
        reports.append({"server": label, **report})
    result = {"servers": reports}

    def human(out: Output) -> None:
        if not reports:
            out.note("no configured servers to check")
        for r in reports:
            name = out.paint(scrub(r["server"], one_line=True), "bold")
            if not r["ok"]:
                problem = scrub(r["error"]["message"], one_line=True)
                out.line(f"{out.paint('FAIL', 'red')} {name}  {problem} [{r['error']['class']}]")
                continue
            out.line(
                f"{out.paint('ok', 'green')}   {name}  {r['protocol_version']} over"
                f" {r['transport']}  connect {r['connect_seconds'] * 1000:.0f} ms,"
                f" ping {r['ping_seconds'] * 1000:.0f} ms, {r['tools']} tools"
            )
            for tolerance in r["applied_tolerances"]:
                out.line(f"     tolerance {tolerance}")
            for warning in r["warnings"]:
                out.line(out.paint(f"     warning {scrub(warning, one_line=True)}", "yellow"))

    if worst != ExitCode.OK:
        return Reply(
            result, human, exit_code=worst, error_class=first_error[0], message=first_error[1]
        )
    return Reply(result, human)
