"""``servers``, ``config validate [FILE]`` and ``config convert FILE --to DIALECT``.

These read host configuration files (Claude Desktop, VS Code, Cursor, Codex,
...) through :mod:`mcpclient.config`, imported on first use.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from mcpclient.cli.context import Context, Reply
from mcpclient.cli.envelope import CliError
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.optional import config_module
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.target import load_quietly
from mcpclient.cli.trust import own_paths
from mcpclient.errors import ConfigError

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``servers`` and ``config`` to the sub-command table."""
    p = commands.add_parser(
        "servers",
        parents=[common],
        help="every server of every discovered host configuration",
        description="List every server in every discovered host configuration file (or in"
        " --config FILE), with its host, scope and file; a project file's servers (this"
        " directory's .mcp.json, .cursor/mcp.json...) are marked untrusted until consented to.",
    )
    p.set_defaults(func=run_servers)
    p = commands.add_parser(
        "config",
        parents=[common],
        help="validate or convert host configuration files",
        description="Validate or convert host configuration files.",
    )
    actions = p.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    v = actions.add_parser(
        "validate",
        parents=[common],
        help="check a configuration file (default: every discovered one)",
        description="Check FILE (default: every discovered configuration file); exit 1 when"
        " one is invalid.",
    )
    v.add_argument("file", metavar="FILE", nargs="?")
    v.set_defaults(func=run_validate)
    c = actions.add_parser(
        "convert",
        parents=[common],
        help="rewrite a configuration file in another host's dialect",
        description="Print the servers of FILE in the configuration dialect DIALECT.",
    )
    c.add_argument("file", metavar="FILE")
    c.add_argument("--to", dest="dialect", metavar="DIALECT", required=True)
    c.set_defaults(func=run_convert)


def _error_json(exc: ConfigError) -> dict[str, str]:
    return {"class": str(exc.failure_class), "message": exc.message}


def _transport_of(server: Any) -> tuple[str, dict[str, str] | None]:
    try:
        return str(server.definition().transport.kind), None
    except ConfigError as exc:
        return "", _error_json(exc)


def _located(path: str, message: str) -> str:
    """``message``, prefixed with the file's path unless it names it already."""
    return message if path in message else f"{path}: {message}"


def _missing(path: str) -> CliError:
    return CliError(
        f"no configuration file {path}", error_class="not_found", exit_code=ExitCode.NOT_FOUND
    )


def _files(ctx: Context, file: str | None) -> list[tuple[str, str, str, Any]]:
    """(host, scope, path, source) of ``file``, of ``--config``, or of each discovered file."""
    chosen = file if file is not None else getattr(ctx.args, "config", None)
    if chosen is not None:
        # Present but not a regular file (a FIFO, /dev/zero): load says so, classified.
        if not os.path.lexists(chosen):
            raise _missing(chosen)
        return [("file", "file", chosen, chosen)]
    return [(e.host, e.scope, str(e.path), e) for e in config_module().discover()]


def _trust_of(ctx: Context, files: list[tuple[str, str, str, Any]]) -> dict[str, tuple[bool, bool]]:
    """path → (a project file, trusted) for each discovered file (none for ``--config``)."""
    trust = ctx.trust()
    entries = [source for _, _, _, source in files if not isinstance(source, str)]
    own = own_paths(entries)
    out: dict[str, tuple[bool, bool]] = {}
    for entry in entries:
        project = trust.is_project(entry, own)
        out[str(entry.path)] = (project, not project or trust.stored(entry.path))
    return out


def run_servers(ctx: Context) -> Reply:
    """List the servers of every configuration file; a file that fails to load is reported."""
    rows: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    files = _files(ctx, None)
    trusts = _trust_of(ctx, files)
    for host, scope, path, source in files:
        project, trusted = trusts.get(path, (False, True))
        try:
            loaded, _ = load_quietly(source, ctx.environ, strict=False)
        except ConfigError as exc:
            problems.append({"host": host, "scope": scope, "path": path, "error": _error_json(exc)})
            continue
        for name, server in loaded.items():
            kind, problem = _transport_of(server)
            rows.append(
                {
                    "name": name,
                    "host": host,
                    "scope": scope,
                    "path": path,
                    "transport": kind,
                    "disabled": bool(getattr(server, "disabled", False)),
                    # The host's own fallback: a legacy HTTP+SSE server connects too.
                    "sse_fallback": bool(getattr(server, "sse_fallback", False)),
                    # A project file's server starts only with consent (mcpclient.cli.trust).
                    "project": project,
                    "trusted": trusted,
                    "error": problem,
                }
            )
    result = {"servers": rows, "problems": problems}

    def human(out: Output) -> None:
        if not rows and not problems:
            out.note("no host configuration with MCP servers was found")
        for row in rows:
            flags = " (disabled)" if row["disabled"] else ""
            if not row["trusted"]:
                flags += " (untrusted project: --trust-project or a yes on a terminal starts it)"
            if row["sse_fallback"]:
                flags += " (falls back to sse, as the host does)"
            out.line(
                f"{out.paint(scrub(row['name'], one_line=True), 'cyan')}  {row['host']}"
                f" {row['scope']}  {row['transport'] or '?'}{flags}  {scrub(row['path'])}"
            )
        for problem in problems:
            out.error(f"{scrub(problem['path'])}: {scrub(problem['error']['message'])}")

    return Reply(result, human)


def run_validate(ctx: Context) -> Reply:
    """Load each file strictly; exit 1 (invalid_config) when any is invalid."""
    reports: list[dict[str, Any]] = []
    for host, scope, path, source in _files(ctx, ctx.args.file):
        report: dict[str, Any] = {"path": path, "host": host, "scope": scope}
        try:
            loaded, notes = load_quietly(source, ctx.environ, strict=True)
            for server in loaded.values():
                server.definition()
            transports = {name: str(s.transport_note) for name, s in loaded.items()}
        except ConfigError as exc:
            problems = [str(p) for p in getattr(exc, "problems", ())]
            report.update(ok=False, servers=[], warnings=[], error=_error_json(exc))
            report["problems"] = problems
        else:
            report.update(ok=True, servers=list(loaded), warnings=notes, error=None, problems=[])
            report["transports"] = transports
        reports.append(report)
    result = {"files": reports}
    bad = [r for r in reports if not r["ok"]]

    def human(out: Output) -> None:
        if not reports:
            out.note("no host configuration file was found")
        for r in reports:
            if r["ok"]:
                names = (
                    ", ".join(
                        f"{scrub(n, one_line=True)} ({r['transports'][n]})" for n in r["servers"]
                    )
                    or "no servers"
                )
                out.line(f"{out.paint('ok', 'green')}       {scrub(r['path'])}: {names}")
                for note in r["warnings"]:
                    out.line(out.paint(f"  warning: {scrub(note, one_line=True)}", "yellow"))
                continue
            message = scrub(_located(r["path"], r["error"]["message"]), one_line=True)
            out.line(f"{out.paint('invalid', 'red')}  {message}")
            if len(r["problems"]) > 1:
                for problem in r["problems"]:
                    out.line(f"  {scrub(problem, one_line=True)}")

    if bad:
        first = bad[0]["error"]
        return Reply(
            result,
            human,
            exit_code=ExitCode.USAGE,
            error_class=first["class"],
            message=_located(bad[0]["path"], first["message"]),
        )
    return Reply(result, human)


def run_convert(ctx: Context) -> Reply:
    """Print FILE's servers in another dialect; what the dialect cannot hold goes to stderr."""
    if not os.path.lexists(ctx.args.file):
        raise _missing(ctx.args.file)
    # References, not values: a converted file never holds a secret's value,
    # and no variable has to be set to convert one.
    servers, _ = load_quietly(ctx.args.file, ctx.environ, strict=False, references=True)
    dumped = config_module().dump(servers, ctx.args.dialect)
    lost = [str(line) for line in dumped.lost]

    def human(out: Output) -> None:
        out.line(str(dumped.text).rstrip("\n"))
        for line in lost:
            out.note(f"not converted: {scrub(line, one_line=True)}", "yellow")

    return Reply({"dialect": dumped.dialect, "text": dumped.text, "lost": lost}, human)
