"""What a command function receives, and what it returns."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

import mcpclient
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.inputs import answers_of
from mcpclient.cli.output import Output
from mcpclient.cli.session import Interrupt, Session
from mcpclient.cli.target import Target, is_url, resolve
from mcpclient.cli.trust import ProjectTrust, terminal_consent

__all__ = ["Context", "Reply"]


@attrs.frozen
class Reply:
    """A command's outcome: the envelope's ``result`` and how to show it to a person.

    ``exit_code`` other than OK (with ``error_class`` and ``message``) is an
    outcome that still has a result, such as a tool's ``isError`` answer.
    """

    result: Any
    human: Callable[[Output], None] | None = None
    exit_code: ExitCode = ExitCode.OK
    error_class: str = ""
    message: str = ""
    #: The command already wrote its documents (``watch``'s NDJSON): none is added on success.
    streamed: bool = False


def display_of(server: str | None, command: list[str] | None) -> str | None:
    """How the envelope names SERVER before it is resolved (never a credential)."""
    if command:
        return f"stdio:{os.path.basename(command[0])}"
    if server is None:
        return None
    if is_url(server):
        parts = urlsplit(server)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}"
    return server


@attrs.define
class Context:
    """One run of the command: its arguments, writer, Ctrl-C token and environment."""

    args: argparse.Namespace
    out: Output
    interrupt: Interrupt
    environ: Mapping[str, str]
    #: The words after ``--`` (a stdio server), or None.
    command: list[str] | None = None

    @property
    def timeout(self) -> float | None:
        """``--timeout``, or None."""
        value: float | None = getattr(self.args, "timeout", None)
        return value

    @property
    def answers(self) -> dict[str, str]:
        """The ``--input id=value`` answers."""
        return answers_of(getattr(self.args, "input", None) or ())

    def target(self, server: str | None = None) -> Target:
        """The SERVER of this command (``server`` overrides ``args.server``)."""
        name = server if server is not None else getattr(self.args, "server", None)
        return resolve(
            name,
            self.command if server is None else None,
            config_file=getattr(self.args, "config", None),
            headers=getattr(self.args, "header", None) or (),
            env=getattr(self.args, "env", None) or (),
            environ=self.environ,
            answers=self.answers,
            trust_project=self.trust_project,
        )

    @property
    def trust_project(self) -> bool:
        """``--trust-project``: a project file's servers may start (consent, remembered)."""
        return bool(getattr(self.args, "trust_project", False))

    def trust(self) -> ProjectTrust:
        """This command's rule for project files (the prompt only where stdin is a terminal)."""
        return ProjectTrust(self.environ, flag=self.trust_project, consent=terminal_consent())

    def session(
        self, target: Target | None = None, handlers: mcpclient.Handlers | None = None
    ) -> Session:
        """A session (connect on ``with``) to ``target`` or this command's SERVER."""
        return Session(
            target if target is not None else self.target(),
            self.out,
            timeout=self.timeout,
            interrupt=self.interrupt,
            handlers=handlers,
        )
