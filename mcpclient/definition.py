"""Binding configuration: what to connect to and within which bounds.

Everything here is a frozen, validated value with no I/O. Constructors check
types and per-field ranges (a zero or negative duration or limit is refused:
there is no "unlimited"); :meth:`Definition.validate` adds the cross-field
rules and is what :func:`mcpclient.connect` runs first.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs

from mcpclient._core import checks
from mcpclient.compat import PROFILE_DEFAULT, Profile, Tolerance
from mcpclient.errors import ConfigError
from mcpclient.transports import LegacySSETransport, StdioTransport, StreamableHTTPTransport

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUTS",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "SKILLS_EXTENSION",
    "TASKS_EXTENSION",
    "UI_EXTENSION",
    "UI_MIME_TYPE",
    "ClientCapabilities",
    "Definition",
    "Extension",
    "Keepalive",
    "Limits",
    "LogLevel",
    "Name",
    "ReconnectPolicy",
    "RetryPolicy",
    "Timeouts",
    "ToolFilter",
]

MAX_NAME_BYTES = 32
MAX_RETRY_ATTEMPTS = 64
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")

#: Protocol versions of the legacy (initialize-handshake) era, oldest first.
LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Protocol versions of the modern (stateless) era.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)


class Name(str):
    """A binding name: 1-32 bytes of ``[a-z0-9_-]``, first byte ``[a-z0-9]``.

    It is a ``str`` that has been checked. 32 bytes (not 64) leaves every
    model name at least 25 bytes of the tool's own name inside the 64-byte
    limit inference providers impose.

    Raises:
        ConfigError: the text is not a valid binding name.
    """

    __slots__ = ()

    def __new__(cls, value: str) -> Name:
        """Validate ``value`` and return it as a Name."""
        if isinstance(value, Name):
            return value
        if not isinstance(value, str):
            raise ConfigError(
                f"Definition.name must be a str, got {type(value).__name__}", op="validate"
            )
        problem = name_problem(value)
        if problem:
            raise ConfigError(f"Definition.name {problem}", op="validate")
        return super().__new__(cls, value)


def name_problem(value: str) -> str:
    """Describe what is wrong with binding name ``value``, or ``""``."""
    if not value:
        return "must not be empty"
    raw = value.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_NAME_BYTES:
        return f"must be at most {MAX_NAME_BYTES} bytes, got {len(raw)}"
    for index, char in enumerate(value):
        ok = "a" <= char <= "z" or "0" <= char <= "9" or (index > 0 and char in "-_")
        if not ok:
            # The character as Python writes it ('A', 'é', '\x00'): a person
            # reads that, not its UTF-8 byte value.
            return f"has {char!r} at index {index}; allowed are [a-z0-9], and - _ after the first"
    return ""


class LogLevel(enum.StrEnum):
    """The eight MCP log severities, lowest first."""

    DEBUG = "debug"
    INFO = "info"
    NOTICE = "notice"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"
    ALERT = "alert"
    EMERGENCY = "emergency"


@attrs.frozen(kw_only=True)
class Timeouts:
    """Per-binding time budgets, in seconds.

    Attributes:
        startup: connect + negotiate + discover; also each refresh fetch and
            each reconnect attempt.
        request: one call, unless its CallOpts say otherwise; also the
            sampling handler's budget.
        elicitation: a server-initiated elicitation (a person answering).
        auth: an interactive authorization flow (a person logging in).
        idle: the default ``CallOpts.idle_timeout`` of every call: a call that
            goes this long without a progress report or its result fails
            early. ``None`` (the default): off, only the deadline applies.

    Thread safety: immutable.
    """

    startup: float = attrs.field(default=30.0, validator=checks.positive_number)
    request: float = attrs.field(default=60.0, validator=checks.positive_number)
    elicitation: float = attrs.field(default=300.0, validator=checks.positive_number)
    auth: float = attrs.field(default=300.0, validator=checks.positive_number)
    idle: float | None = attrs.field(default=None, validator=checks.optional_positive_number)


def _limit(default: int) -> Any:
    return attrs.field(default=default, validator=checks.positive_int)


_KIB = 1024
_MIB = 1024 * 1024


@attrs.frozen(kw_only=True)
class Limits:
    """Bounds on everything a server can make this binding hold or do.

    Every field is a positive integer; there is no "unlimited".

    Thread safety: immutable.
    """

    #: In-flight requests on one connection.
    max_concurrent_requests: int = _limit(8)
    #: List-pagination round trips per family per catalog fetch.
    max_catalog_pages: int = _limit(64)
    #: Tools accepted from one server.
    max_catalog_items: int = _limit(1024)
    #: One wire frame: a stdio line, an SSE event, one JSON-RPC message.
    max_frame_bytes: int = _limit(16 * _MIB)
    #: A whole HTTP response body.
    max_body_bytes: int = _limit(16 * _MIB)
    #: One tool input or output schema document.
    max_schema_bytes: int = _limit(256 * _KIB)
    #: Nesting depth of schemas, structured content and elicitation forms.
    max_schema_depth: int = _limit(32)
    #: One text item of a result; also server text such as descriptions.
    max_text_result_bytes: int = _limit(1 * _MIB)
    #: The text of one MCP Apps view (a ``text/html;profile=mcp-app`` resource): views of
    #: real servers pass 1 MiB, and a cut one is unusable, so they get a bound of their own.
    max_app_view_bytes: int = _limit(8 * _MIB)
    #: The structured content of one tool result.
    max_structured_bytes: int = _limit(1 * _MIB)
    #: One binary (image, audio, blob) item, decoded.
    max_binary_item_bytes: int = _limit(8 * _MIB)
    #: Binary items kept per result.
    max_binary_items: int = _limit(16)
    #: One server log message.
    max_log_message_bytes: int = _limit(8 * _KIB)
    #: One elicitation prompt (message, and URL and id in url mode); refused, not trimmed.
    max_elicit_message_bytes: int = _limit(4 * _KIB)
    #: The schema of one elicitation form.
    max_elicit_schema_bytes: int = _limit(16 * _KIB)
    #: Prompts accepted from one server.
    max_prompt_count: int = _limit(256)
    #: Resources (and, separately, resource templates) accepted from one server.
    max_resource_count: int = _limit(4096)
    #: Nested sampling depth.
    max_sampling_depth: int = _limit(2)
    #: Concurrent sampling requests.
    max_sampling_concurrency: int = _limit(2)
    #: Server-to-client requests served at once, of every kind (sampling, elicitation,
    #: roots, client-hosted tasks, MRTR input): handler calls in flight, an abandoned
    #: one included until it returns. One past it is refused at once (JSON-RPC -32000).
    max_inbound_requests: int = _limit(8)
    #: Tokens per sampling completion (the host grants min(asked, this)).
    max_sampling_tokens: int = _limit(8192)
    #: Multi round-trip (input_required) rounds per call.
    max_input_rounds: int = _limit(10)
    #: Input requests per multi round-trip round.
    max_input_requests: int = _limit(16)
    #: The tail of a stdio child's stderr kept for diagnostics.
    max_stderr_bytes: int = _limit(8 * _KIB)


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """Bounds of a retry loop with full-jitter exponential backoff.

    Attributes:
        attempts: total tries including the first (1..64).
        base_delay: the delay ceiling before the second try, in seconds.
        max_delay: the cap on one delay.
        max_total: the cap on the whole loop's span.

    Thread safety: immutable.
    """

    attempts: int = attrs.field(default=5, validator=checks.positive_int)
    base_delay: float = attrs.field(default=0.2, validator=checks.positive_number)
    max_delay: float = attrs.field(default=30.0, validator=checks.positive_number)
    max_total: float = attrs.field(default=120.0, validator=checks.positive_number)

    def __attrs_post_init__(self) -> None:
        if self.attempts > MAX_RETRY_ATTEMPTS:
            raise checks.fail(self, "attempts", f"must be at most {MAX_RETRY_ATTEMPTS}")


@attrs.frozen(kw_only=True)
class ReconnectPolicy:
    """Whether and how hard a binding rebuilds a lost connection.

    ``disabled=True`` leaves a binding whose connection was lost degraded
    until its owner closes it or calls ``Client.reconnect()``.

    Thread safety: immutable.
    """

    disabled: bool = attrs.field(default=False, validator=checks.is_bool)
    retry: RetryPolicy = attrs.field(factory=RetryPolicy, validator=checks.instance_of(RetryPolicy))


#: The keepalive an HTTP binding gets by default (``Definition(keepalive=None)``).
DEFAULT_HTTP_KEEPALIVE_INTERVAL = 30.0


@attrs.frozen(kw_only=True)
class Keepalive:
    """How an idle binding is kept alive with MCP ``ping`` requests.

    A ping is sent only when the binding has been idle (no request sent and
    no response received) for ``interval`` seconds; it must be answered
    within ``timeout``. After ``failures`` consecutive failed pings the
    connection is treated as lost and the binding's reconnect path starts.

    Example:
        >>> Definition("api", StreamableHTTPTransport("https://example.com/mcp"),
        ...            keepalive=Keepalive(interval=15.0))  # doctest: +SKIP

    Attributes:
        interval: idle seconds before a ping (default 30).
        timeout: seconds a ping may take (at most ``interval``; None: 10 or
            ``interval`` if shorter, see :attr:`ping_timeout`).
        failures: consecutive failed pings that count as a lost connection (default 3).

    Thread safety: immutable.
    """

    interval: float = attrs.field(
        default=DEFAULT_HTTP_KEEPALIVE_INTERVAL, validator=checks.positive_number
    )
    timeout: float | None = attrs.field(default=None, validator=checks.optional_positive_number)
    failures: int = attrs.field(default=3, validator=checks.positive_int)

    @property
    def ping_timeout(self) -> float:
        """The seconds a ping may take: ``timeout``, or min(10 s, ``interval``) when None."""
        return min(10.0, self.interval) if self.timeout is None else self.timeout

    def __attrs_post_init__(self) -> None:
        if self.timeout is not None and self.timeout > self.interval:
            raise checks.fail(self, "timeout", "must be at most interval")
        if self.failures > MAX_RETRY_ATTEMPTS:
            raise checks.fail(self, "failures", f"must be at most {MAX_RETRY_ATTEMPTS}")


def _check_keepalive(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None or value is False or isinstance(value, Keepalive):
        return
    raise ConfigError(
        f"Definition.{attribute.name} must be a Keepalive, None (the transport's default)"
        " or False (off)",
        binding="",
        op="validate",
    )


def _names(value: object) -> object:
    return checks.to_tuple(value)


def _check_names(inst: ToolFilter, attr: Any, value: Any) -> None:
    checks.tuple_of(str)(inst, attr, value)
    seen: set[str] = set()
    name: str
    for index, name in enumerate(value):
        if not name:
            raise checks.fail(inst, f"{attr.name}[{index}]", "must not be empty")
        if name in seen:
            raise checks.fail(inst, attr.name, f"lists {name!r} twice")
        seen.add(name)


@attrs.frozen(kw_only=True)
class ToolFilter:
    """Which tools a binding shows and lets the host call, by exact raw name.

    Deny wins; an empty ``allow`` permits every tool not denied. Matching is
    exact and case-sensitive.

    Thread safety: immutable.
    """

    allow: tuple[str, ...] = attrs.field(default=(), converter=_names, validator=_check_names)
    deny: tuple[str, ...] = attrs.field(default=(), converter=_names, validator=_check_names)

    def permits(self, raw_name: str) -> bool:
        """Whether the tool named ``raw_name`` may be shown and called."""
        if raw_name in self.deny:
            return False
        return not self.allow or raw_name in self.allow


@attrs.frozen(kw_only=True)
class ClientCapabilities:
    """The optional client capabilities to advertise.

    Each needs its handler in :class:`~mcpclient.Handlers`; asking for one
    without its handler is ``invalid_config``.

    Thread safety: immutable.
    """

    elicitation: bool = attrs.field(default=False, validator=checks.is_bool)
    sampling: bool = attrs.field(default=False, validator=checks.is_bool)
    roots: bool = attrs.field(default=False, validator=checks.is_bool)


#: The Skills extension (SEP-2640): ``skills/list``, ``skills/get``, verified loading.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The MCP Apps extension (SEP-1865): tools with interactive ``ui://`` views.
UI_EXTENSION = "io.modelcontextprotocol/ui"
#: The Tasks extension of the 2026-07-28 era (SEP-2663).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The MIME type of an MCP App view; advertised with :data:`UI_EXTENSION` by default.
UI_MIME_TYPE = "text/html;profile=mcp-app"

MAX_EXTENSION_ID_BYTES = 256
MAX_EXTENSION_SETTINGS_BYTES = 16 * 1024
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
# SEP-2133: the ``_meta`` key grammar with a mandatory vendor prefix.
_EXTENSION_ID = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def _check_extension_id(inst: Any, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    if len(value.encode("utf-8", "surrogatepass")) > MAX_EXTENSION_ID_BYTES:
        raise checks.fail(inst, attr.name, f"must be at most {MAX_EXTENSION_ID_BYTES} bytes")
    if not _EXTENSION_ID.fullmatch(value):
        raise checks.fail(
            inst,
            attr.name,
            f"must be '<vendor-prefix>/<name>' (e.g. {SKILLS_EXTENSION!r}); got {value[:80]!r}",
        )


@attrs.frozen
class Extension:
    """One protocol extension (SEP-2133) the host opts in to, with its client settings.

    Extensions are off by default; each one listed in
    :attr:`Definition.extensions` is declared to the server (in ``initialize``
    capabilities, or in every modern request's client capabilities) and used
    only when the server declares it too (see :attr:`Status.extensions`).
    ``settings`` is the JSON object advertised for it (``{}``: supported, no
    settings); :data:`UI_EXTENSION` with no ``mimeTypes`` advertises
    :data:`UI_MIME_TYPE`.

    Example:
        >>> Extension(SKILLS_EXTENSION)
        Extension(identifier='io.modelcontextprotocol/skills', settings={})

    Thread safety: immutable.
    """

    identifier: str = attrs.field(validator=_check_extension_id)
    _settings: Any = checks.json_field(default={}, optional=False, alias="settings")

    def __attrs_post_init__(self) -> None:
        # The converter made it compact JSON text (or the validator refused it).
        text = self._settings
        if not isinstance(text, str) or not text.startswith("{"):
            raise checks.fail(self, "settings", "must be a JSON object")
        if len(text) > MAX_EXTENSION_SETTINGS_BYTES:
            raise checks.fail(
                self, "settings", f"must be at most {MAX_EXTENSION_SETTINGS_BYTES} bytes"
            )

    @property
    def settings(self) -> dict[str, Any]:
        """The advertised settings (a fresh copy)."""
        value: dict[str, Any] = checks.decode_json(self._settings)
        return value

    def __repr__(self) -> str:
        return f"Extension(identifier={self.identifier!r}, settings={self.settings!r})"


def _to_extensions(value: Any) -> Any:
    """``Definition.extensions`` from a mapping of id -> settings, or ids and Extensions."""
    try:
        if isinstance(value, Mapping):
            return tuple(
                Extension(key, {} if settings is None else settings)
                for key, settings in value.items()
            )
        if isinstance(value, str) or not isinstance(value, Iterable):
            return value
        return tuple(Extension(item) if isinstance(item, str) else item for item in value)
    except ConfigError as exc:
        raise checks.fail("Definition", "extensions", f"has a bad entry: {exc.message}") from None


def _check_extensions(inst: Any, attr: Any, value: Any) -> None:
    checks.tuple_of(Extension)(inst, attr, value)
    seen: set[str] = set()
    for ext in value:
        if ext.identifier in seen:
            raise checks.fail(inst, attr.name, f"lists {ext.identifier!r} twice")
        seen.add(ext.identifier)


#: The default time budgets.
DEFAULT_TIMEOUTS = Timeouts()
#: The default bounds.
DEFAULT_LIMITS = Limits()


def _log_level(value: Any) -> LogLevel:
    try:
        return LogLevel(value)
    except ValueError:
        raise ConfigError(
            f"Definition.log_level must be one of {', '.join(LogLevel)}; got {value!r}",
            op="validate",
        ) from None


def _revalidate(value: Any) -> None:
    attrs.validate(value)
    post_init = getattr(value, "__attrs_post_init__", None)
    if post_init is not None:
        post_init()
    if isinstance(value, ReconnectPolicy):
        _revalidate(value.retry)


_TRANSPORTS = (StdioTransport, StreamableHTTPTransport, LegacySSETransport)


def _check_protocol(inst: Definition, attr: Any, value: object) -> None:
    checks.is_str(inst, attr, value)
    if value not in ("auto", "legacy", *LEGACY_VERSIONS, *MODERN_VERSIONS):
        raise checks.fail(
            inst,
            attr.name,
            f"must be 'auto', 'legacy' or one of {', '.join(LEGACY_VERSIONS + MODERN_VERSIONS)};"
            f" got {value!r}",
        )


def _to_name(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, Name) and not name_problem(value):
        return Name(value)
    return value


def _check_name_field(inst: Definition, attr: Any, value: Any) -> None:
    Name(value)


@attrs.frozen
class Definition:
    """Everything needed to mount one MCP server as a binding.

    Example:
        >>> defn = Definition("everything", StdioTransport("npx", ["-y", "server"]))
        >>> defn.validate()

    Attributes:
        name: the binding name (see :class:`Name`).
        transport: where the server lives.
        timeouts, limits: budgets and bounds.
        capabilities: optional client capabilities to advertise.
        tool_filter: which tools are visible and callable.
        allow_parallel_calls: let tool calls run concurrently (bounded by
            ``limits.max_concurrent_requests``); by default they are serialized.
        compat: the compatibility profile; ``None`` means ``PROFILE_DEFAULT``.
        reconnect: how a lost connection is rebuilt.
        refresh: retries of a failed catalog refresh.
        log_level: the minimum server log severity requested (only when a log
            handler is installed and the server advertises logging).
        protocol: ``"auto"`` (modern 2026-07-28 first, then the legacy
            handshake), ``"legacy"`` (handshake only), or one pinned version.
        telemetry: record OpenTelemetry spans and metrics for this binding's
            calls and inject the trace context into their requests (only
            with the ``otel`` extra installed; ``mcpclient.telemetry.disable()``
            turns it off process-wide).
        extensions: the protocol extensions the host opts in to (none by
            default): :class:`Extension` values, identifiers, or a mapping of
            identifier to settings, e.g. ``{SKILLS_EXTENSION: {}}``.
        keepalive: pings an idle binding (:class:`Keepalive`); ``None``
            means the transport's default (off for stdio, on for HTTP, see
            :attr:`effective_keepalive`), ``False`` off.

    Thread safety: immutable.
    """

    name: Name = attrs.field(converter=_to_name, validator=_check_name_field)
    transport: StdioTransport | StreamableHTTPTransport | LegacySSETransport = attrs.field(
        validator=checks.instance_of(*_TRANSPORTS)
    )
    timeouts: Timeouts = attrs.field(
        factory=Timeouts, kw_only=True, validator=checks.instance_of(Timeouts)
    )
    limits: Limits = attrs.field(factory=Limits, kw_only=True, validator=checks.instance_of(Limits))
    capabilities: ClientCapabilities = attrs.field(
        factory=ClientCapabilities, kw_only=True, validator=checks.instance_of(ClientCapabilities)
    )
    tool_filter: ToolFilter = attrs.field(
        factory=ToolFilter, kw_only=True, validator=checks.instance_of(ToolFilter)
    )
    allow_parallel_calls: bool = attrs.field(default=False, kw_only=True, validator=checks.is_bool)
    compat: Profile | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional_instance_of(Profile)
    )
    reconnect: ReconnectPolicy = attrs.field(
        factory=ReconnectPolicy, kw_only=True, validator=checks.instance_of(ReconnectPolicy)
    )
    refresh: RetryPolicy = attrs.field(
        factory=RetryPolicy, kw_only=True, validator=checks.instance_of(RetryPolicy)
    )
    log_level: LogLevel = attrs.field(default=LogLevel.INFO, kw_only=True, converter=_log_level)
    protocol: str = attrs.field(default="auto", kw_only=True, validator=_check_protocol)
    telemetry: bool = attrs.field(default=True, kw_only=True, validator=checks.is_bool)
    extensions: tuple[Extension, ...] = attrs.field(
        default=(), kw_only=True, converter=_to_extensions, validator=_check_extensions
    )
    keepalive: Keepalive | Literal[False] | None = attrs.field(
        default=None, kw_only=True, validator=_check_keepalive
    )

    @property
    def effective_keepalive(self) -> Keepalive | None:
        """The keepalive in force: ``keepalive``, or the transport's default when it is None.

        The default is off for stdio (a pipe is never cut for idleness) and
        ``Keepalive()`` (a ping after 30 idle seconds) for the HTTP transports.
        ``False`` turns it off.
        """
        if isinstance(self.keepalive, Keepalive):
            return self.keepalive
        if self.keepalive is False or isinstance(self.transport, StdioTransport):
            return None
        return Keepalive()

    def uses_extension(self, identifier: str) -> bool:
        """Whether the host opted in to the extension ``identifier``."""
        return any(ext.identifier == identifier for ext in self.extensions)

    @property
    def profile(self) -> Profile:
        """The effective compatibility profile (``compat`` or ``PROFILE_DEFAULT``)."""
        return self.compat if self.compat is not None else PROFILE_DEFAULT

    def validate(self) -> None:
        """Check the whole definition, in a fixed order, without changing it.

        Raises:
            ConfigError: the first violation, naming the field.
        """
        problem = name_problem(self.name) if isinstance(self.name, str) else "must be a str"
        if problem:
            raise ConfigError(f"Definition.name {problem}", binding="", op="validate")
        binding = str(self.name)
        # The order of origin-client.md §3: transport, profile, transport vs
        # profile, timeouts, limits, tool filter, log level, refresh,
        # reconnect; then our additions (capabilities, protocol). Values are
        # validated at construction; their validators run again here so a
        # value built with validators disabled is still caught.
        self._check_field(binding, "transport", _TRANSPORTS, required=True)
        self._check_field(binding, "compat", (Profile,), required=False)
        if isinstance(self.transport, LegacySSETransport) and not self.profile.permits(
            Tolerance.LEGACY_SSE
        ):
            raise _invalid(
                binding,
                f"Definition.transport is LegacySSETransport but profile {self.profile} does not"
                " permit legacy_sse",
            )
        self._check_field(binding, "timeouts", (Timeouts,))
        self._check_field(binding, "limits", (Limits,))
        self._check_field(binding, "tool_filter", (ToolFilter,))
        if not isinstance(self.log_level, LogLevel):
            raise _invalid(binding, "Definition.log_level must be a LogLevel")
        self._check_field(binding, "refresh", (RetryPolicy,))
        self._check_field(binding, "reconnect", (ReconnectPolicy,))
        self._check_field(binding, "capabilities", (ClientCapabilities,))
        if not isinstance(self.allow_parallel_calls, bool):
            raise _invalid(binding, "Definition.allow_parallel_calls must be a bool")
        if not isinstance(self.telemetry, bool):
            raise _invalid(binding, "Definition.telemetry must be a bool")
        try:
            _check_keepalive(self, attrs.fields(Definition).keepalive, self.keepalive)
            if isinstance(self.keepalive, Keepalive):
                _revalidate(self.keepalive)
        except ConfigError as exc:
            raise _invalid(binding, exc.message) from None
        try:
            _check_protocol(self, attrs.fields(Definition).protocol, self.protocol)
        except ConfigError as exc:
            raise _invalid(binding, exc.message) from None
        if isinstance(self.transport, LegacySSETransport) and self.protocol in MODERN_VERSIONS:
            raise _invalid(binding, "Definition.protocol pins a modern version; SSE is legacy only")
        try:
            _check_extensions(self, attrs.fields(Definition).extensions, self.extensions)
            for ext in self.extensions:
                _revalidate(ext)
        except ConfigError as exc:
            raise _invalid(binding, exc.message) from None

    def _check_field(
        self, binding: str, field: str, kinds: tuple[type, ...], *, required: bool = True
    ) -> None:
        value = getattr(self, field)
        if value is None and not required:
            return
        if not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise _invalid(binding, f"Definition.{field} must be a {names}")
        try:
            _revalidate(value)
        except ConfigError as exc:
            raise _invalid(binding, f"Definition.{field}: {exc.message}") from None


def _invalid(binding: str, message: str) -> ConfigError:
    return ConfigError(message, binding=binding, op="validate")
