"""``doctor [SERVER...]``: does each server start, and how well does it speak.

For every SERVER (default: every enabled server of the discovered host
configurations, but a project file's only with consent: ``--trust-project``,
a remembered consent, or a yes on the terminal; the others are listed as
skipped): does it start, which protocol version it negotiated, how long
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
from mcpclient.cli.target import Configured, Target, configured_servers, consent_lines
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


#: Why a project file's server was not checked.
SKIPPED = (
    "the project file {path} is not trusted; not started (--trust-project, or a yes on a"
    " terminal, trusts it until it changes)"
)


def _targets(
    ctx: Context, skipped: list[dict[str, str]]
) -> list[tuple[str, Target | CliError | Error]]:
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
    trust = ctx.trust()
    entries = configured_servers(
        getattr(ctx.args, "config", None), ctx.environ, broken, ctx.answers, trust
    )
    found: list[tuple[str, Target | CliError | Error]] = list(broken)
    granted: dict[str, bool] = {}
    for entry in entries:
        if getattr(entry.server, "disabled", False):
            continue
        label = f"{entry.host}:{entry.name}"
        if not _consented(entry, entries, trust, granted):
            skipped.append(
                {"server": label, "path": entry.path, "reason": SKIPPED.format(path=entry.path)}
            )
            continue
        try:
            # An unset credential fails this server here: doctor never sends it empty.
            check_resolved(entry.name, entry.server)
            found.append((label, Target(entry.server.definition(), label)))
        except Error as exc:
            found.append((label, exc))
    return found


def _consented(
    entry: Configured, every: list[Configured], trust: Any, granted: dict[str, bool]
) -> bool:
    """Whether ``entry`` may start: not a project file's, or its file has consent (asked once)."""
    if entry.trusted:
        return True
    if entry.path not in granted:
        granted[entry.path] = trust.grant(entry.path, consent_lines(entry.path, every))
    return granted[entry.path]


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
    skipped: list[dict[str, str]] = []
    for label, found in _targets(ctx, skipped):
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
    result: dict[str, Any] = {"servers": reports, "skipped": skipped}

    def human(out: Output) -> None:
        if not reports and not skipped:
            out.note("no configured servers to check")
        for s in skipped:
            name = scrub(s["server"], one_line=True)
            out.line(f"{out.paint('skip', 'yellow')} {name}  {scrub(s['reason'], one_line=True)}")
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
