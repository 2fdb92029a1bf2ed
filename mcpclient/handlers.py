"""What a host installs to serve a server's requests, and the values they see.

A server may ask the host for an LLM completion (sampling), for a person's
answer (elicitation), for filesystem roots, and may send logs. Handlers are
plain callables (or objects with ``sample``/``elicit``/``roots`` methods),
called request-first with a :class:`HandlerContext`. They run on handler
threads, never on the reader, and serve both protocol eras identically.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs

from mcpclient._core import checks
from mcpclient.calls import CancelToken, Progress
from mcpclient.definition import LogLevel

__all__ = [
    "ElicitAction",
    "ElicitMode",
    "ElicitRequest",
    "ElicitResult",
    "ElicitationHandler",
    "HandlerContext",
    "Handlers",
    "LogMessage",
    "Progress",
    "Root",
    "RootsProvider",
    "SampleMessage",
    "SampleOutcome",
    "SampleRequest",
    "SampleResult",
    "SampleRole",
    "SamplingHandler",
    "log_to_python",
]


class _Identified(enum.IntEnum):
    def __str__(self) -> str:
        return self.name.lower()


class ElicitAction(_Identified):
    """How a person answered an elicitation."""

    ACCEPT = 1
    DECLINE = 2
    CANCEL = 3


class ElicitMode(_Identified):
    """The kind of elicitation: a form to fill in, or a URL to visit."""

    FORM = 1
    URL = 2


class SampleRole(_Identified):
    """Who said a sampling message."""

    USER = 1
    ASSISTANT = 2


class SampleOutcome(_Identified):
    """How a sampling request ended."""

    COMPLETED = 1
    DENIED = 2
    FAILED = 3


_str = attrs.field(default="", validator=checks.is_str)


@attrs.frozen(kw_only=True)
class HandlerContext:
    """What a handler knows about the request it serves.

    Attributes:
        deadline: the ``time.monotonic()`` instant by which it must answer.
        cancelled: cancelled when the request is withdrawn or the binding closes.
        depth: 1 for a request the binding was not already serving; n+1 for
            one that arrived while a depth-n handler had a call in flight.
    """

    deadline: float = attrs.field(validator=checks.finite_number)
    cancelled: CancelToken = attrs.field(validator=checks.instance_of(CancelToken))
    depth: int = attrs.field(default=1, validator=checks.positive_int)


@attrs.frozen(kw_only=True)
class ElicitRequest:
    """A server asking a person for input.

    ``schema`` (form mode) is a fresh copy of the requested JSON Schema on
    each access. ``url`` (url mode) is bounded but not vetted: whether to show
    or open it is the host's decision; the library never opens or fetches it.
    """

    binding: str = attrs.field(validator=checks.is_str)
    mode: ElicitMode = attrs.field(validator=checks.instance_of(ElicitMode))
    message: str = _str
    _schema: Any = checks.json_field()
    url: str = _str
    elicitation_id: str = _str

    @property
    def schema(self) -> Any:
        """The form's JSON Schema (form mode), or ``None``."""
        return checks.decode_json(self._schema)


@attrs.frozen
class ElicitResult:
    """A handler's answer to an elicitation; ``content`` only with ACCEPT."""

    action: ElicitAction = attrs.field(validator=checks.instance_of(ElicitAction))
    _content: Any = checks.json_field(kw_only=True)

    @property
    def content(self) -> Any:
        """The form's answer (a fresh copy), or ``None``."""
        return checks.decode_json(self._content)


@attrs.frozen
class SampleMessage:
    """One message of a sampling conversation."""

    role: SampleRole = attrs.field(validator=checks.instance_of(SampleRole))
    text: str = attrs.field(validator=checks.is_str)


@attrs.frozen(kw_only=True)
class SampleRequest:
    """A server asking the host for an LLM completion.

    ``max_tokens`` is what the host grants: min(what the server asked,
    ``Limits.max_sampling_tokens``). A server never raises the ceiling.
    """

    binding: str = attrs.field(validator=checks.is_str)
    system_prompt: str = _str
    messages: tuple[SampleMessage, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(SampleMessage)
    )
    max_tokens: int = attrs.field(default=1, validator=checks.positive_int)


@attrs.frozen
class SampleResult:
    """A handler's completion: the model it used, the text, why it stopped."""

    model: str = attrs.field(validator=checks.is_str)
    text: str = attrs.field(validator=checks.is_str)
    stop_reason: str = attrs.field(default="endTurn", validator=checks.is_str)


def _check_root_uri(inst: Root, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    if not isinstance(value, str) or not value.startswith("file://"):
        raise checks.fail(inst, attr.name, "must be a file:// URI")


@attrs.frozen
class Root:
    """A filesystem root the host exposes: a ``file://`` URI and a display name."""

    uri: str = attrs.field(validator=_check_root_uri)
    name: str = attrs.field(default="", validator=checks.is_str)


@attrs.frozen(kw_only=True)
class LogMessage:
    """A server log message, bounded.

    ``text`` is the message as text (a string ``data`` as sent, anything else
    as JSON), bounded to ``Limits.max_log_message_bytes``. ``data`` is the
    server's raw JSON value (a fresh copy on each access), or ``None`` when it
    sent none or its JSON was over ``Limits.max_log_message_bytes`` (then
    dropped, with a logged warning).
    """

    binding: str = attrs.field(validator=checks.is_str)
    level: LogLevel = attrs.field(validator=checks.instance_of(LogLevel))
    logger: str = _str
    text: str = _str
    _data: Any = checks.json_field()

    @property
    def data(self) -> Any:
        """The server's raw log value (a fresh copy), or ``None``."""
        return checks.decode_json(self._data)


class ElicitationHandler(Protocol):
    """An object serving elicitations (a plain callable works too)."""

    def elicit(self, request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        """Ask a person; return their answer."""


class SamplingHandler(Protocol):
    """An object serving sampling requests (a plain callable works too)."""

    def sample(self, request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        """Run a completion; return it."""


class RootsProvider(Protocol):
    """An object listing roots (a plain callable works too)."""

    def roots(self, ctx: HandlerContext) -> Sequence[Root]:
        """Return the current roots."""


def _handler(method: str) -> Any:
    def check(inst: object, attr: Any, value: object) -> None:
        if value is None or callable(value) or callable(getattr(value, method, None)):
            return
        raise checks.fail(inst, attr.name, f"must be callable or have a {method}() method")

    return attrs.field(default=None, validator=check)


@attrs.frozen(kw_only=True)
class Handlers:
    """The host's handlers. ``None`` means "not installed".

    Attributes:
        elicitation: ``(ElicitRequest, HandlerContext) -> ElicitResult``.
        sampling: ``(SampleRequest, HandlerContext) -> SampleResult``.
        roots: ``(HandlerContext) -> Sequence[Root]``.
        log: ``(LogMessage) -> None``.
        event: ``(Event) -> None``, an :data:`~mcpclient.events.Event`
            (typed ``Any`` here: the events module builds on this one's
            enums, so this one does not import it back).

    Thread safety: immutable; handlers are called from library threads.
    """

    elicitation: (
        ElicitationHandler | Callable[[ElicitRequest, HandlerContext], ElicitResult] | None
    ) = _handler("elicit")
    sampling: SamplingHandler | Callable[[SampleRequest, HandlerContext], SampleResult] | None = (
        _handler("sample")
    )
    roots: RootsProvider | Callable[[HandlerContext], Sequence[Root]] | None = _handler("roots")
    log: Callable[[LogMessage], None] | None = attrs.field(
        default=None, validator=checks.is_optional_callable
    )
    event: Callable[[Any], None] | None = attrs.field(
        default=None, validator=checks.is_optional_callable
    )


# Python logging levels of the MCP severities. ``notice`` (normal but
# significant) sits between INFO and WARNING, at 25; ``alert`` and
# ``emergency`` are CRITICAL, as ``critical`` is.
_LOG_LEVELS: dict[LogLevel, int] = {
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.INFO: logging.INFO,
    LogLevel.NOTICE: logging.INFO + 5,
    LogLevel.WARNING: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
    LogLevel.CRITICAL: logging.CRITICAL,
    LogLevel.ALERT: logging.CRITICAL,
    LogLevel.EMERGENCY: logging.CRITICAL,
}


def log_to_python(logger: str = "mcpclient.server") -> Callable[[LogMessage], None]:
    """A ready :attr:`Handlers.log` that forwards server logs to Python logging.

    Each message is logged to ``<logger>.<binding>`` at the level
    of its severity: debug, info, warning, error and critical as named;
    ``notice`` at 25, between INFO and WARNING (given the level name
    ``NOTICE`` if nothing named 25 before); ``alert`` and ``emergency`` at
    CRITICAL. Its text is the message (never %-formatted). The record carries ``mcp_binding``,
    ``mcp_level`` (the MCP severity, a str), ``mcp_logger`` (the server's
    logger name, ``""`` when none) and ``mcp_data`` (its raw JSON value, or
    ``None``) as attributes.

    Example:
        >>> handlers = Handlers(log=log_to_python())

    The handler never raises: a failure inside logging is left to
    logging's own error handling. Thread safety: called from library
    threads; Python logging is thread-safe.
    """
    if not isinstance(logger, str) or not logger:
        raise TypeError("log_to_python(logger=...) must be a non-empty str")
    notice = _LOG_LEVELS[LogLevel.NOTICE]
    if logging.getLevelName(notice) == f"Level {notice}":
        logging.addLevelName(notice, "NOTICE")
    loggers: dict[str, logging.Logger] = {}

    def forward(message: LogMessage) -> None:
        try:
            binding = message.binding
            target = loggers.get(binding)
            if target is None:
                # One per binding, kept: getLogger takes logging's module lock.
                target = loggers[binding] = logging.getLogger(f"{logger}.{binding}")
            level = _LOG_LEVELS.get(message.level, logging.INFO)
            if not target.isEnabledFor(level):
                return  # the raw data is not decoded for a record nobody keeps
            target.log(
                level,
                "%s",
                message.text,
                extra={
                    "mcp_binding": binding,
                    "mcp_level": str(message.level),
                    "mcp_logger": message.logger,
                    "mcp_data": message.data,
                },
            )
        except Exception:  # a log handler must never break the binding
            return

    return forward
