"""The ``mcpclient`` command: parse, run one sub-command, print its outcome, exit.

Exit codes and the ``--json`` envelope are documented in ``--help`` and in
docs/cli.md (see :mod:`mcpclient.cli.exits` and :mod:`mcpclient.cli.envelope`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from mcpclient.cli.context import Context, Reply, display_of
from mcpclient.cli.envelope import CliError, ServerName, failure, failure_of, render, success
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.output import Output, library_warnings, scrub
from mcpclient.cli.parser import COMMANDS, parse, subcommand_index
from mcpclient.cli.session import Interrupt
from mcpclient.cli.target import split_stdio
from mcpclient.errors import Error

__all__ = ["main"]


def _command_name(words: Sequence[str], args: object = None) -> str:
    name = getattr(args, "command_name", None)
    if name is None:
        at = subcommand_index(words)
        name = words[at] if at is not None and words[at] in COMMANDS else ""
    action = getattr(args, "config_action", None)
    return f"{name} {action}" if name == "config" and action else str(name)


def _server_of(args: object, command: list[str] | None) -> ServerName:
    servers = getattr(args, "servers", None)
    if servers is not None:
        return [display_of(s, command if s is None else None) for s in servers]
    return display_of(getattr(args, "server", None), command)


def _report_failure(
    out: Output, name: str, server: ServerName, exc: BaseException, interrupted: bool
) -> int:
    error_class, message, code = failure_of(exc)
    if interrupted:
        # Whatever the call failed with once Ctrl-C cancelled it, the outcome is the interrupt.
        code = ExitCode.INTERRUPTED
        error_class = "cancelled"
    if out.json_mode:
        out.done()
        out.document(render(failure(name, server, error_class, message, code)))
    else:
        where = f"mcpclient {name}" if name else "mcpclient"
        out.error(f"{where}: {scrub(message, one_line=True)} [{error_class}]")
        if code == ExitCode.USAGE and error_class == "usage":
            out.note("(mcpclient --help lists the commands; mcpclient COMMAND --help explains one)")
    return int(code)


def _report(out: Output, name: str, server: ServerName, reply: Reply) -> int:
    if reply.exit_code != ExitCode.OK:
        if out.json_mode:
            doc = failure(
                name,
                server,
                reply.error_class,
                reply.message,
                reply.exit_code,
                result=reply.result,
            )
            out.document(render(doc))
        else:
            if reply.human is not None:
                reply.human(out)
            out.error(
                f"mcpclient {name}: {scrub(reply.message, one_line=True)} [{reply.error_class}]"
            )
        return int(reply.exit_code)
    if out.json_mode:
        if not reply.streamed:
            out.document(render(success(name, server, reply.result)))
    elif reply.human is not None:
        reply.human(out)
    return int(ExitCode.OK)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit code.

    A reader that closes stdout early (``mcpclient ... | head -1``) ends the
    command quietly with exit 0, as it asked for no more.
    """
    stream = sys.stdout if stdout is None else stdout
    try:
        code = _run(argv, stdout, stderr, environ)
        stream.flush()
    except BrokenPipeError:
        _silence(stream)
        return 0
    return code


def _silence(stream: TextIO) -> None:
    """Point ``stream``'s descriptor at /dev/null: the exit flush must not fail again."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _run(
    argv: Sequence[str] | None,
    stdout: TextIO | None,
    stderr: TextIO | None,
    environ: Mapping[str, str] | None,
) -> int:
    words, command = split_stdio(sys.argv[1:] if argv is None else argv)
    env = os.environ if environ is None else environ
    out = Output(
        stdout,
        stderr,
        environ=env,
        json_mode="--json" in words,
        quiet="--quiet" in words or "-q" in words,
    )
    try:
        args = parse(words, command)
    except CliError as exc:
        return _report_failure(out, _command_name(words), None, exc, False)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    out.json_mode = bool(args.json)
    out.quiet = bool(args.quiet)
    out.live = out.live and not out.quiet
    name = _command_name(words, args)
    server = _server_of(args, command)
    interrupt = Interrupt()
    ctx = Context(args, out, interrupt, env, command)
    with interrupt, library_warnings(out):
        try:
            reply: Reply = args.func(ctx)
        except (Error, CliError, KeyboardInterrupt) as exc:
            out.done()
            return _report_failure(out, name, server, exc, interrupt.interrupted)
    return _report(out, name, server, reply)
