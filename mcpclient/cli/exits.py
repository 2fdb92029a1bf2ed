"""Exit codes of the ``mcpclient`` command, and the failure class each stands for.

A shell script branches on these, so they are part of the command's stable
interface (docs/cli.md): adding a failure class to the library maps it here,
never renumbers a code.
"""

from __future__ import annotations

import enum

from mcpclient.errors import FailureClass

__all__ = ["ExitCode", "describe", "exit_code_for"]


class ExitCode(enum.IntEnum):
    """The process exit status of one command."""

    OK = 0
    #: The command line (or a configuration it names) is wrong.
    USAGE = 1
    #: The tool ran and answered ``isError``.
    TOOL_ERROR = 2
    #: Authorization is required, was denied, expired or failed.
    AUTH = 3
    #: The server could not be reached or started, went away, or a deadline passed.
    UNREACHABLE = 4
    #: The server name, tool, prompt or resource does not exist.
    NOT_FOUND = 5
    #: The arguments are not what the tool (or prompt) accepts.
    INVALID_ARGUMENTS = 6
    #: The server spoke the protocol wrongly, or lacks what the command needs.
    PROTOCOL = 7
    #: Interrupted (Ctrl-C): the call in flight was cancelled on the wire.
    INTERRUPTED = 130


_FC = FailureClass
_BY_CLASS: dict[FailureClass, ExitCode] = {
    _FC.INVALID_CONFIG: ExitCode.USAGE,
    _FC.REMOTE_TOOL_ERROR: ExitCode.TOOL_ERROR,
    _FC.AUTH_REQUIRED: ExitCode.AUTH,
    _FC.AUTH_DENIED: ExitCode.AUTH,
    _FC.AUTH_EXPIRED: ExitCode.AUTH,
    _FC.AUTH_FAILED: ExitCode.AUTH,
    _FC.STARTUP_TIMEOUT: ExitCode.UNREACHABLE,
    _FC.TRANSPORT_CLOSED: ExitCode.UNREACHABLE,
    _FC.REMOTE_HTTP: ExitCode.UNREACHABLE,
    _FC.DEADLINE: ExitCode.UNREACHABLE,
    _FC.INDETERMINATE: ExitCode.UNREACHABLE,
    _FC.NOT_PROCESSED: ExitCode.UNREACHABLE,
    _FC.SHUTDOWN: ExitCode.UNREACHABLE,
    _FC.NOT_FOUND: ExitCode.NOT_FOUND,
    _FC.TOOL_UNAVAILABLE: ExitCode.NOT_FOUND,
    _FC.TOOL_SCHEMA_CHANGED: ExitCode.NOT_FOUND,
    _FC.INVALID_ARGUMENTS: ExitCode.INVALID_ARGUMENTS,
    _FC.CANCELLED: ExitCode.INTERRUPTED,
    # Everything else is the server (or its catalog, or an interaction it
    # started) not holding up its side of the protocol.
    _FC.UNSUPPORTED_PROTOCOL: ExitCode.PROTOCOL,
    _FC.FRAMING: ExitCode.PROTOCOL,
    _FC.SERVER_PROTOCOL: ExitCode.PROTOCOL,
    _FC.CATALOG_INVALID: ExitCode.PROTOCOL,
    _FC.CATALOG_STALE: ExitCode.PROTOCOL,
    _FC.CATALOG_OVER_LIMIT: ExitCode.PROTOCOL,
    _FC.LIMIT_EXCEEDED: ExitCode.PROTOCOL,
    _FC.ELICITATION_DECLINED: ExitCode.PROTOCOL,
    _FC.ELICITATION_CANCELLED: ExitCode.PROTOCOL,
    _FC.ELICITATION_INVALID: ExitCode.PROTOCOL,
    _FC.ELICITATION_TIMEOUT: ExitCode.PROTOCOL,
    _FC.SAMPLING_DENIED: ExitCode.PROTOCOL,
    _FC.SAMPLING_OVER_BUDGET: ExitCode.PROTOCOL,
}


def exit_code_for(failure_class: FailureClass) -> ExitCode:
    """The exit code of a command that failed with ``failure_class``."""
    return _BY_CLASS.get(failure_class, ExitCode.PROTOCOL)


_TEXT = {
    ExitCode.OK: "success",
    ExitCode.USAGE: "usage: a wrong command line or configuration (invalid_config,"
    " untrusted_project)",
    ExitCode.TOOL_ERROR: "the tool answered isError (remote_tool_error)",
    ExitCode.AUTH: "authorization required, denied, expired or failed (auth_*)",
    ExitCode.UNREACHABLE: "unreachable, gone, or out of time (transport_closed, remote_http,"
    " startup_timeout, deadline, indeterminate, shutdown)",
    ExitCode.NOT_FOUND: "no such server, tool, prompt or resource (not_found,"
    " tool_unavailable, tool_schema_changed)",
    ExitCode.INVALID_ARGUMENTS: "arguments the tool or prompt refuses (invalid_arguments)",
    ExitCode.PROTOCOL: "the server broke the protocol (server_protocol, unsupported_protocol,"
    " framing, limit_exceeded, catalog_*, elicitation_*, sampling_*)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C); the call was cancelled on the wire",
}


def describe() -> str:
    """The exit code table as ``--help`` shows it."""
    return "\n".join(f"  {int(code):>3}  {_TEXT[code]}" for code in ExitCode)
