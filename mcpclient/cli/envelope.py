"""The ``--json`` envelope: one stable JSON document per command (NDJSON for ``watch``).

Success::

    {"ok": true, "command": "call", "server": "stdio:python", "exit_code": 0,
     "result": {...}}

Failure::

    {"ok": false, "command": "call", "server": "stdio:python", "exit_code": 4,
     "error": {"class": "deadline", "message": "..."}}

``error.class`` is a library failure class (``str(FailureClass)``) or one of
the CLI's own: ``usage``, ``not_found`` (an unknown server name),
``invalid_arguments`` (a ``key=value`` that does not fit the schema),
``untrusted_project`` (a project file's server without consent); Ctrl-C
is ``cancelled`` (exit 130). A tool that answered ``isError`` is a failure with class
``remote_tool_error`` whose ``result`` still holds the tool's answer. The JSON
Schema of the envelope is in docs/cli.md.
"""

from __future__ import annotations

import json
from typing import Any

from mcpclient.cli.exits import ExitCode, exit_code_for
from mcpclient.errors import Error

__all__ = ["CliError", "ServerName", "failure", "failure_of", "render", "success", "usage_error"]

#: How the envelope names the server(s): one name, several (``export``), or none.
ServerName = str | list[str | None] | None

#: Bumped only if a field changes meaning or goes away; additions keep it.
SCHEMA_VERSION = 1


class CliError(Exception):
    """A failure the command itself detected (bad usage, unknown server, bad key=value).

    Attributes:
        error_class: the envelope's ``error.class``.
        exit_code: the process exit status.
    """

    def __init__(self, message: str, *, error_class: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.message = message
        self.error_class = error_class
        self.exit_code = exit_code


def usage_error(message: str) -> CliError:
    """A wrong command line (exit 1)."""
    return CliError(message, error_class="usage", exit_code=ExitCode.USAGE)


def failure_of(exc: BaseException) -> tuple[str, str, ExitCode]:
    """The envelope class, message and exit code of an exception."""
    if isinstance(exc, CliError):
        return exc.error_class, exc.message, exc.exit_code
    if isinstance(exc, Error):
        return str(exc.failure_class), exc.message, exit_code_for(exc.failure_class)
    if isinstance(exc, KeyboardInterrupt):
        return "cancelled", "interrupted (Ctrl-C)", ExitCode.INTERRUPTED
    raise TypeError(f"not a failure the command reports: {exc!r}")


def success(command: str, server: ServerName, result: Any) -> dict[str, Any]:
    """The document of a command that succeeded."""
    return {
        "ok": True,
        "schema": SCHEMA_VERSION,
        "command": command,
        "server": server,
        "exit_code": int(ExitCode.OK),
        "result": result,
    }


def failure(
    command: str,
    server: ServerName,
    error_class: str,
    message: str,
    exit_code: ExitCode,
    *,
    result: Any = None,
) -> dict[str, Any]:
    """The document of a command that failed (``result`` only for an ``isError`` answer)."""
    doc: dict[str, Any] = {
        "ok": False,
        "schema": SCHEMA_VERSION,
        "command": command,
        "server": server,
        "exit_code": int(exit_code),
        "error": {"class": error_class, "message": message},
    }
    if result is not None:
        doc["result"] = result
    return doc


def render(doc: dict[str, Any]) -> str:
    """The document as one line of ASCII JSON (so no raw control character can appear)."""
    return json.dumps(doc, ensure_ascii=True, sort_keys=False, allow_nan=False)
