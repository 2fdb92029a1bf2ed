"""The command line: sub-commands, the options every command takes, ``--help`` text.

Options every command takes (before or after the sub-command): ``--json``,
``--timeout``, ``--quiet``, ``--config``, ``--header``, ``--env``, ``--input``
and ``--trust-project``. A stdio
SERVER is written last, after ``--``; :func:`parse` puts a placeholder where
SERVER stands so the other positional arguments keep their places.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from mcpclient._core.version import VERSION
from mcpclient.cli.coerce import positive_seconds
from mcpclient.cli.commands import calls, catalog, config, demo, doctor, export, watch
from mcpclient.cli.envelope import usage_error
from mcpclient.cli.exits import describe

__all__ = ["STDIO", "build", "parse"]

#: Stands for SERVER when the server is the command after ``--``.
STDIO = "\x00stdio"

#: Sub-commands that take SERVER (one or more); only these accept ``-- command``.
SERVER_COMMANDS = frozenset(
    {"list", "status", "call", "read", "prompt", "watch", "export", "doctor"}
)
#: Every sub-command.
COMMANDS = SERVER_COMMANDS | {"demo", "servers", "config"}
#: Top-level options followed by a value (skipped when looking for the sub-command).
_VALUED = frozenset({"--timeout", "--config", "--header", "--env", "--input"})

EPILOG = f"""\
SERVER is one of:
  NAME or HOST:NAME   a server of the discovered host configurations (mcpclient servers);
                      a project file's (./.mcp.json...) starts only with consent:
                      a yes on a terminal, or --trust-project
  URL                 http(s)://...: Streamable HTTP, falling back to HTTP+SSE
  -- COMMAND ARGS...  a stdio server, started without a shell (always last)

--json prints one JSON document (NDJSON for watch), the envelope:
  {{"ok": true, "schema": 1, "command": "call", "server": "stdio:python",
   "exit_code": 0, "result": ...}}
  {{"ok": false, "schema": 1, "command": "call", "server": "stdio:python",
   "exit_code": 4, "error": {{"class": "deadline", "message": "..."}}}}
error.class is a failure class of mcpclient.errors (or usage, not_found,
invalid_arguments); an isError answer has class remote_tool_error and a result.

exit codes:
{describe()}

Full reference: docs/cli.md.
"""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are usage failures (exit 1), not ``SystemExit(2)``."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage failure."""
        raise usage_error(message)


def _common(top: bool) -> argparse.ArgumentParser:
    # The sub-commands' copies default to SUPPRESS so that an option given
    # before the sub-command is not overwritten by the sub-command's default.
    def default(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("options of every command")
    g.add_argument(
        "--json", action="store_true", default=default(False), help="print the JSON envelope"
    )
    g.add_argument(
        "--timeout",
        type=positive_seconds,
        default=default(None),
        metavar="SECONDS",
        help="the whole command's deadline (connect and call)",
    )
    g.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        default=default(False),
        help="no spinner, progress or notes on stderr",
    )
    g.add_argument(
        "--config",
        metavar="FILE",
        default=default(None),
        help="take server names from this configuration file only",
    )
    g.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        default=default(None),
        help="an HTTP header for an HTTP SERVER, a URL or a configured one (repeatable)",
    )
    g.add_argument(
        "--env",
        action="append",
        metavar="NAME=VALUE",
        default=default(None),
        help="an environment variable for a stdio SERVER, a command or a configured one"
        " (repeatable)",
    )
    g.add_argument(
        "--input",
        action="append",
        metavar="ID=VALUE",
        default=default(None),
        help="the answer to a VS Code ${input:ID} of a configured SERVER (repeatable;"
        " on a terminal an unanswered one is asked for, without echo)",
    )
    g.add_argument(
        "--trust-project",
        action="store_true",
        default=default(False),
        help="let the servers of this directory's project files (.mcp.json, .cursor/mcp.json,"
        " .vscode/mcp.json...) start without asking; remembered until the file changes",
    )
    return p


def build() -> Parser:
    """The whole parser."""
    parser = Parser(
        prog="mcpclient",
        description="Look at and drive any MCP server.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_common(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"mcpclient {VERSION}")
    commands = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)
    common = _common(top=False)
    for family in (demo, config, catalog, calls, watch, export, doctor):
        family.register(commands, common)
    for sub in commands.choices.values():
        sub.epilog = EPILOG
        sub.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def subcommand_index(words: Sequence[str]) -> int | None:
    """Where the sub-command is in ``words`` (None: there is none)."""
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUED
            continue
        return index
    return None


def parse(words: Sequence[str], stdio: Sequence[str] | None) -> argparse.Namespace:
    """Parse the words before ``--``; ``stdio`` is the command after it (or None).

    Raises:
        CliError: ``usage``.
    """
    words = list(words)
    if stdio is not None:
        at = subcommand_index(words)
        if at is None or words[at] not in SERVER_COMMANDS:
            raise usage_error("'-- command' names a stdio SERVER; this command takes none")
        words.insert(at + 1, STDIO)
    parser = build()
    args, extra = parser.parse_known_args(words)
    if extra:
        # argparse fills a trailing nargs="*" positional before an option
        # (``call SRV TOOL --args - b=1``); the key=value words after it come
        # back unrecognized and belong to it.
        if hasattr(args, "pairs") and not any(word.startswith("-") for word in extra):
            args.pairs = [*args.pairs, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for name in ("server",):
        if getattr(args, name, None) == STDIO:
            setattr(args, name, None)
    servers = getattr(args, "servers", None)
    if servers is not None:
        args.servers = [None if s == STDIO else s for s in servers]
    return args
