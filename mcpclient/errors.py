"""Failure classes and the error hierarchy.

Every error the library raises is a :class:`Error` whose subclass is fixed by
its :class:`FailureClass` (DESIGN.md §7), so a caller may catch either the
family (``except mcpclient.DeadlineExceededError``) or the root and branch on
``err.failure_class``.
"""

from __future__ import annotations

import enum
from typing import Any

from mcpclient._core.limits import normalize_message

__all__ = [
    "AuthError",
    "CallDeniedError",
    "CatalogError",
    "ConfigError",
    "ConfigFileError",
    "ConnectionLostError",
    "DeadlineExceededError",
    "Error",
    "FailureClass",
    "ForkedError",
    "HookFailedError",
    "IndeterminateError",
    "InteractionError",
    "InvalidArgumentsError",
    "LimitExceededError",
    "NotProcessedError",
    "ProtocolError",
    "RequestCancelledError",
    "ShutdownError",
    "SkillError",
    "ToolUnavailableError",
    "error_for",
]


class FailureClass(enum.IntEnum):
    """What kind of failure occurred. ``str()`` gives the stable identifier."""

    INVALID_CONFIG = 1
    UNSUPPORTED_PROTOCOL = 2
    STARTUP_TIMEOUT = 3
    AUTH_REQUIRED = 4
    AUTH_DENIED = 5
    AUTH_EXPIRED = 6
    AUTH_FAILED = 7
    TRANSPORT_CLOSED = 8
    FRAMING = 9
    REMOTE_HTTP = 10
    SERVER_PROTOCOL = 11
    DEADLINE = 12
    CANCELLED = 13
    CATALOG_INVALID = 14
    CATALOG_STALE = 15
    CATALOG_OVER_LIMIT = 16
    NOT_FOUND = 17
    TOOL_UNAVAILABLE = 18
    TOOL_SCHEMA_CHANGED = 19
    REMOTE_TOOL_ERROR = 20
    LIMIT_EXCEEDED = 21
    ELICITATION_DECLINED = 22
    ELICITATION_CANCELLED = 23
    ELICITATION_INVALID = 24
    ELICITATION_TIMEOUT = 25
    SAMPLING_DENIED = 26
    SAMPLING_OVER_BUDGET = 27
    INDETERMINATE = 28
    SHUTDOWN = 29
    INVALID_ARGUMENTS = 30
    SKILL_INVALID = 31
    FORKED = 32
    NOT_PROCESSED = 33
    HOOK_FAILED = 34
    CALL_DENIED = 35

    def __str__(self) -> str:
        return self.name.lower()


class Error(Exception):
    """The root of every error mcpclient raises.

    Attributes:
        failure_class: what kind of failure occurred.
        binding: the binding the failure belongs to ("" when none).
        op: the operation that failed, e.g. ``"call_tool"``.
        message: bounded (1024 bytes), normalized, one-line text. It never
            carries credentials.
        code: the JSON-RPC error code when the failure is the server's error
            response (``-32602``, ``-32601``, a server's own code...), else ``None``.

    The cause, if any, is in ``__cause__``. Errors pickle.
    """

    #: Classes this exception type may carry; the first is the default.
    classes: tuple[FailureClass, ...] = ()

    failure_class: FailureClass
    binding: str
    op: str
    message: str
    code: int | None

    def __init__(
        self,
        message: str,
        *,
        failure_class: FailureClass | None = None,
        binding: str = "",
        op: str = "",
        code: int | None = None,
    ) -> None:
        cls = type(self)
        if failure_class is None:
            if not cls.classes:
                raise TypeError(f"{cls.__name__} needs an explicit failure_class")
            failure_class = cls.classes[0]
        if cls.classes and failure_class not in cls.classes:
            raise TypeError(f"{cls.__name__} cannot carry failure class {failure_class}")
        self.failure_class = FailureClass(failure_class)
        self.binding = binding
        self.op = op
        self.message = normalize_message(str(message))
        self.code = code
        super().__init__(self.message)

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.binding, self.op) if part)
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.message} [{self.failure_class}]"

    def __repr__(self) -> str:
        code = "" if self.code is None else f", code={self.code}"
        return (
            f"{type(self).__name__}(failure_class={self.failure_class!s}, "
            f"binding={self.binding!r}, op={self.op!r}, message={self.message!r}{code})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (type(self), self.message, int(self.failure_class), self.binding, self.op),
            {"code": self.code},
        )


def _rebuild(cls: type[Error], message: str, failure_class: int, binding: str, op: str) -> Error:
    return cls(message, failure_class=FailureClass(failure_class), binding=binding, op=op)


class ConfigError(Error, ValueError):
    """A definition or argument the library refuses before doing any I/O."""

    classes: tuple[FailureClass, ...] = (FailureClass.INVALID_CONFIG,)


class ConfigFileError(ConfigError):
    """A configuration file (``mcpclient.config``) has one or more problems.

    Attributes:
        problems: every problem found, each ``"<file>:<json/pointer>: <what>"``;
            the message names the first few, ``problems`` holds them all. No
            problem quotes a value read from the file (values may be secrets).
    """

    problems: tuple[str, ...]

    def __init__(
        self,
        message: str,
        *,
        problems: tuple[str, ...] = (),
        failure_class: FailureClass | None = None,
        binding: str = "",
        op: str = "",
    ) -> None:
        super().__init__(message, failure_class=failure_class, binding=binding, op=op)
        self.problems = tuple(problems)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_file_error,
            (self.message, self.problems, self.binding, self.op),
            {"code": self.code},
        )


def _rebuild_file_error(
    message: str, problems: tuple[str, ...], binding: str, op: str
) -> ConfigFileError:
    return ConfigFileError(message, problems=problems, binding=binding, op=op)


class InvalidArgumentsError(Error, ValueError):
    """The caller's tool arguments fail the tool's input schema; nothing was sent."""

    classes: tuple[FailureClass, ...] = (FailureClass.INVALID_ARGUMENTS,)


class DeadlineExceededError(Error, TimeoutError):
    """A call or the startup ran out of time."""

    classes: tuple[FailureClass, ...] = (FailureClass.DEADLINE, FailureClass.STARTUP_TIMEOUT)


class RequestCancelledError(Error):
    """The caller cancelled the call (CancelToken, Future.cancel, KeyboardInterrupt)."""

    classes: tuple[FailureClass, ...] = (FailureClass.CANCELLED,)


class ShutdownError(Error):
    """The binding is closing or closed."""

    classes: tuple[FailureClass, ...] = (FailureClass.SHUTDOWN,)


class ForkedError(ShutdownError):
    """The client or host was inherited through ``os.fork()``; it belongs to the parent.

    The child never uses the parent's pipes, sockets or threads: every call
    on the inherited object fails at once with this error. Connect after the
    fork, in the process that uses the connection (gunicorn's ``post_fork``
    hook, lazily on a worker's first request, or the spawn start method).
    """

    classes: tuple[FailureClass, ...] = (FailureClass.FORKED,)


class ConnectionLostError(Error, ConnectionError):
    """The connection to the server broke or spoke a broken frame."""

    classes: tuple[FailureClass, ...] = (FailureClass.TRANSPORT_CLOSED, FailureClass.FRAMING)


class IndeterminateError(ConnectionLostError):
    """A ``tools/call`` was sent and its outcome is unknown; it is never re-sent."""

    classes: tuple[FailureClass, ...] = (FailureClass.INDETERMINATE,)


class NotProcessedError(ConnectionLostError):
    """The server said it did not process the request, and it was not sent again.

    Over Streamable HTTP a 404 to a request that carried the session id is
    the server's statement that the session is gone and the request was not
    processed. The client sends such a request once more on the next session
    (even a ``tools/call``); when the server answers 404 there too, the call
    fails with this error. By the server's word the request ran on neither
    session. Internal requests (a catalog refresh) are not re-sent: the
    reconnect redoes them.
    """

    classes: tuple[FailureClass, ...] = (FailureClass.NOT_PROCESSED,)


class HookFailedError(Error):
    """A call hook (:mod:`mcpclient.hooks`) raised or returned a wrong value.

    The hook's own exception is the ``__cause__``; the call was not sent
    when a ``before`` hook failed.
    """

    classes: tuple[FailureClass, ...] = (FailureClass.HOOK_FAILED,)


class CallDeniedError(Error, PermissionError):
    """A ``before`` hook denied the call; nothing was sent. ``str()`` carries its reason."""

    classes: tuple[FailureClass, ...] = (FailureClass.CALL_DENIED,)


class ProtocolError(Error):
    """The server spoke the protocol wrongly, lacks a capability, or failed over HTTP."""

    classes: tuple[FailureClass, ...] = (
        FailureClass.SERVER_PROTOCOL,
        FailureClass.UNSUPPORTED_PROTOCOL,
        FailureClass.REMOTE_HTTP,
    )


class LimitExceededError(ProtocolError):
    """The server sent more than a :class:`~mcpclient.Limits` bound allows."""

    classes: tuple[FailureClass, ...] = (
        FailureClass.LIMIT_EXCEEDED,
        FailureClass.CATALOG_OVER_LIMIT,
    )


class CatalogError(Error):
    """A catalog generation is invalid, or an adopt named a stale generation."""

    classes: tuple[FailureClass, ...] = (FailureClass.CATALOG_INVALID, FailureClass.CATALOG_STALE)


class ToolUnavailableError(Error, LookupError):
    """The tool (or prompt, resource) is not available to call."""

    classes: tuple[FailureClass, ...] = (
        FailureClass.TOOL_UNAVAILABLE,
        FailureClass.TOOL_SCHEMA_CHANGED,
        FailureClass.NOT_FOUND,
    )


class AuthError(Error, PermissionError):
    """Authorization is required, was denied, expired, or failed."""

    classes: tuple[FailureClass, ...] = (
        FailureClass.AUTH_REQUIRED,
        FailureClass.AUTH_DENIED,
        FailureClass.AUTH_EXPIRED,
        FailureClass.AUTH_FAILED,
    )


class InteractionError(Error):
    """An elicitation or sampling interaction did not produce an answer."""

    classes: tuple[FailureClass, ...] = (
        FailureClass.ELICITATION_DECLINED,
        FailureClass.ELICITATION_CANCELLED,
        FailureClass.ELICITATION_INVALID,
        FailureClass.ELICITATION_TIMEOUT,
        FailureClass.SAMPLING_DENIED,
        FailureClass.SAMPLING_OVER_BUDGET,
    )


class SkillError(Error):
    """A skill was refused: its listing is unusable or a file failed verification.

    Raised before anything of the skill is used: over the extension's limits,
    ``"dynamic"`` (unverifiable), or a file whose size, digest or frontmatter
    does not match its listing entry, or a read of a file the entry does not
    list (SEP-2640). Nothing further of the skill is read.
    """

    classes: tuple[FailureClass, ...] = (FailureClass.SKILL_INVALID,)


_EXCEPTION_FOR: dict[FailureClass, type[Error]] = {
    fc: cls
    for cls in (
        ConfigError,
        InvalidArgumentsError,
        DeadlineExceededError,
        RequestCancelledError,
        ShutdownError,
        ForkedError,
        ConnectionLostError,
        IndeterminateError,
        NotProcessedError,
        ProtocolError,
        LimitExceededError,
        CatalogError,
        ToolUnavailableError,
        AuthError,
        InteractionError,
        SkillError,
        HookFailedError,
        CallDeniedError,
    )
    for fc in cls.classes
}


def error_for(
    failure_class: FailureClass,
    message: str,
    *,
    binding: str = "",
    op: str = "",
    code: int | None = None,
) -> Error:
    """Build the one exception type that ``failure_class`` is raised as.

    ``remote_tool_error`` is never raised (a tool error is a result); asking
    for it builds a plain :class:`Error`.
    """
    cls = _EXCEPTION_FOR.get(failure_class) or Error
    return cls(message, failure_class=failure_class, binding=binding, op=op, code=code)
