"""``watch SERVER``: events, server logs and progress as they happen, one line each.

With ``--json`` every line is one envelope (NDJSON) whose ``result`` is the
event (``{"type": "StateChanged", ...}``); a failure ends the stream with a
failure envelope. Watching ends at Ctrl-C (exit 130), after ``--duration``
seconds (exit 0), or when the binding fails for good (exit 4).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import attrs

import mcpclient
from mcpclient.cli.context import Context, Reply
from mcpclient.cli.envelope import CliError, render, success
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.output import Output, scrub
from mcpclient.cli.values import event_json

__all__ = ["register"]

#: How often the main thread looks at the binding's state between events.
_POLL = 0.2


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``watch`` to the sub-command table."""
    p = commands.add_parser(
        "watch",
        parents=[common],
        help="print events, server logs and progress as they happen",
        description="Connect to SERVER and print each event (state changes, catalog"
        " changes, resource updates), server log message and progress report on one line"
        " (NDJSON envelopes with --json) until Ctrl-C, --duration, or a permanent failure.",
    )
    p.add_argument("server", metavar="SERVER")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop (exit 0) after SECONDS")
    p.add_argument(
        "--subscribe",
        action="append",
        default=[],
        metavar="URI",
        help="subscribe to updates of resource URI (repeatable)",
    )
    p.add_argument(
        "--log-level",
        choices=[str(level) for level in mcpclient.LogLevel],
        default="debug",
        help="the lowest server log severity to ask for (default debug)",
    )
    p.set_defaults(func=run_watch)


def event_line(event: Any) -> str:
    """One event as a plain line (server text scrubbed)."""
    stamp = time.strftime("%H:%M:%S", time.localtime(getattr(event, "at", time.time())))
    if isinstance(event, mcpclient.ServerLog):
        logger = f" [{scrub(event.logger, one_line=True)}]" if event.logger else ""
        return f"{stamp} log {event.level}{logger} {scrub(event.text, one_line=True)}"
    if isinstance(event, mcpclient.RequestProgress):
        total = f"/{event.total:g}" if event.total else ""
        message = f" {scrub(event.message, one_line=True)}" if event.message else ""
        return f"{stamp} progress {event.progress:g}{total}{message}"
    if isinstance(event, mcpclient.StateChanged):
        return f"{stamp} state {event.from_state} -> {event.to_state}"
    fields = event_json(event)
    kind = fields.pop("type")
    fields.pop("binding", None)
    fields.pop("at", None)
    body = " ".join(f"{key}={scrub(str(value), one_line=True)}" for key, value in fields.items())
    return f"{stamp} {kind} {body}".rstrip()


class _Printer:
    """Writes each event as it arrives (on the binding's event lane)."""

    def __init__(self, out: Output, server: str) -> None:
        self.out = out
        self.server = server

    def __call__(self, event: Any) -> None:
        if self.out.json_mode:
            self.out.document(render(success("watch", self.server, event_json(event))))
        else:
            self.out.line(event_line(event))


def run_watch(ctx: Context) -> Reply:
    """Watch until Ctrl-C, ``--duration``, or a permanent failure."""
    target = ctx.target()
    target = attrs.evolve(
        target,
        definition=attrs.evolve(
            target.definition, log_level=mcpclient.LogLevel(ctx.args.log_level)
        ),
    )
    printer = _Printer(ctx.out, target.display)
    # A log handler is what asks the server for its logs; each also arrives as
    # a ServerLog event, which the printer shows, so the handler itself is quiet.
    handlers = mcpclient.Handlers(event=printer, log=lambda message: None)
    until = None if ctx.args.duration is None else time.monotonic() + ctx.args.duration
    with ctx.session(target, handlers) as session:
        for uri in ctx.args.subscribe:
            session.client.subscribe(uri, session.opts())
        token = ctx.interrupt.token
        while not token.cancelled:
            left = _POLL if until is None else min(_POLL, until - time.monotonic())
            if left <= 0:
                break
            token.wait(left)
            status = session.client.status()
            if status.state == mcpclient.State.FAILED:
                failure = status.failure
                message = failure.message if failure else "the binding failed"
                raise CliError(
                    message,
                    error_class=str(failure.failure_class) if failure else "transport_closed",
                    exit_code=ExitCode.UNREACHABLE,
                )
        if token.cancelled:
            raise mcpclient.RequestCancelledError("interrupted (Ctrl-C)", op="watch")
    return Reply(None, None, streamed=True)
