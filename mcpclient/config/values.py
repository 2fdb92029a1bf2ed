"""The values ``mcpclient.config`` returns: a server's settings, a found file, a tool filter.

Everything here is frozen and holds no I/O. A :class:`ServerConfig` never
shows a secret: its ``repr`` hides environment values, header values and
arguments, and shows only the URL's origin.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from mcpclient._core import checks
from mcpclient.compat import PROFILE_LEGACY
from mcpclient.config import refs
from mcpclient.definition import MAX_NAME_BYTES, Definition, Timeouts
from mcpclient.definition import ToolFilter as _ExactToolFilter
from mcpclient.errors import ConfigError
from mcpclient.transports import LegacySSETransport, StdioTransport, StreamableHTTPTransport

__all__ = ["TRANSPORTS", "ConfigFile", "LoadedConfig", "ServerConfig", "ToolFilter"]

#: The transport kinds a :class:`ServerConfig` may name.
TRANSPORTS: tuple[str, ...] = ("stdio", "http", "sse")
_GLOB_CHARS = frozenset("*?[")
_NOT_NAME = re.compile(r"[^a-z0-9_-]+")


@attrs.frozen(kw_only=True)
class ToolFilter(_ExactToolFilter):
    """:class:`mcpclient.ToolFilter` with shell-style globs (``fnmatch``, case-sensitive).

    ``allow`` is what a config calls include/enabled tools, ``deny`` its
    exclude/disabled tools. Deny wins; an empty ``allow`` permits every tool
    not denied. A name without ``* ? [`` matches only itself, so a filter of
    plain names behaves exactly like :class:`mcpclient.ToolFilter`. It is a
    subclass, so :meth:`ServerConfig.definition` carries it on the
    :class:`~mcpclient.Definition` and the client applies the globs.

    Thread safety: immutable.
    """

    def permits(self, raw_name: str) -> bool:
        """Whether the tool named ``raw_name`` may be shown and called."""
        if any(fnmatch.fnmatchcase(raw_name, pattern) for pattern in self.deny):
            return False
        return not self.allow or any(fnmatch.fnmatchcase(raw_name, p) for p in self.allow)

    def allows(self, raw_name: str) -> bool:
        """The same as :meth:`permits`."""
        return self.permits(raw_name)

    @property
    def is_empty(self) -> bool:
        """True when the filter permits every tool."""
        return not self.allow and not self.deny

    @property
    def is_exact(self) -> bool:
        """True when no pattern is a glob (every pattern is a plain tool name)."""
        return not any(_GLOB_CHARS & set(p) for p in (*self.allow, *self.deny))


@attrs.frozen
class ConfigFile:
    """One configuration file :func:`~mcpclient.config.discover` found.

    Attributes:
        host: the dialect that reads it (``"cursor"``, ``"claude-code"``...).
        scope: the host's name for the scope (``"project"``, ``"user"``,
            ``"local"``, ``"global"``, ``"workspace"``).
        path: the file.
        project: for Claude Code's ``local`` scope, the project directory whose
            entry in ``~/.claude.json`` holds the servers; else None.

    Pass it to :func:`~mcpclient.config.load` as the source.

    Thread safety: immutable.
    """

    host: str = attrs.field(validator=checks.is_str)
    scope: str = attrs.field(validator=checks.is_str)
    path: Path = attrs.field(converter=Path)
    project: str | None = attrs.field(default=None, kw_only=True)


def _pairs(value: object) -> object:
    if isinstance(value, Mapping):
        return tuple(value.items())
    return tuple(value) if isinstance(value, list | tuple) else value


def _hidden(value: tuple[tuple[str, str], ...]) -> str:
    return "{" + ", ".join(f"{name!r}: '***'" for name, _ in value) + "}"


def _url_repr(value: str | None) -> str:
    if value is None:
        return "None"
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)", value)
    origin = match.group(1) if match else "?"
    if "@" in origin:
        origin = origin.split("://", 1)[0] + "://***@" + origin.rsplit("@", 1)[1]
    return repr(origin + ("/..." if len(value) > len(origin) else ""))


def _check_transport(inst: ServerConfig, attr: Any, value: Any) -> None:
    if value not in TRANSPORTS:
        raise checks.fail(inst, attr.name, f"must be one of {', '.join(TRANSPORTS)}")


def binding_name(name: str) -> str:
    """A valid binding :class:`~mcpclient.Name` made from a config's server name.

    Lower-cased; each run of other characters becomes ``-``; leading ``-`` and
    ``_`` dropped; cut to 32 bytes; ``"server"`` when nothing is left.
    """
    text = _NOT_NAME.sub("-", name.lower()).lstrip("-_")
    text = text[:MAX_NAME_BYTES].rstrip("-") or "server"
    return text


@attrs.frozen(kw_only=True, repr=False)
class ServerConfig:
    """One server as a host's configuration file describes it, after expansion.

    Attributes:
        name: the server's name in the file (any text; see :attr:`binding_name`).
        transport: ``"stdio"``, ``"http"`` (Streamable HTTP) or ``"sse"``
            (the deprecated HTTP+SSE transport).
        command, args, env, cwd: the stdio child (``env`` and ``headers`` are
            ``(name, value)`` pairs in file order; see :attr:`env_mapping`).
        url, headers: the HTTP endpoint and its static headers (a bearer
            token from ``bearer_token_env_var`` or an auth key is an
            ``Authorization`` header here).
        startup_timeout, tool_timeout: seconds, converted from the
            dialect's unit; None when the file sets none.
        tool_filter: which tools to show (globs; deny wins).
        disabled: the file turns this server off; a ``Host`` lists it and
            does not connect it.
        trust: Gemini CLI's ``trust`` (skip confirmations); None elsewhere.
        auto_approve: tools the host runs without asking (Cline's
            ``autoApprove``); ``()`` elsewhere.
        dialect: the dialect the entry was read as.
        source: the file it came from (``"<dict>"`` or ``"<string>"`` else).
        origins: ``(field, "file:/json/pointer")`` pairs: where each field set
            from the file came from; see :meth:`origin`.
        unresolved: ``(location, kind, name)`` of each reference loaded
            with ``strict=False`` that had no value (``kind`` is ``"env"``,
            ``"input"`` or ``"file"``); its text is ``""``. A caller that
            would send it (the CLI) refuses the server instead.
        sse_fallback: the host connects this URL over Streamable HTTP and
            falls back to the deprecated HTTP+SSE transport when the server
            is a legacy one (Cursor, Windsurf, VS Code); :meth:`definition`
            then uses ``compat=PROFILE_LEGACY``, whose fallback does the same.

    Thread safety: immutable.
    """

    name: str = attrs.field(validator=checks.is_str)
    transport: str = attrs.field(validator=_check_transport)
    command: str | None = attrs.field(default=None, validator=checks.is_optional_str)
    args: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    env: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_pairs)
    cwd: str | None = attrs.field(default=None, validator=checks.is_optional_str)
    url: str | None = attrs.field(default=None, validator=checks.is_optional_str)
    headers: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_pairs)
    startup_timeout: float | None = attrs.field(
        default=None, validator=checks.optional_positive_number
    )
    tool_timeout: float | None = attrs.field(
        default=None, validator=checks.optional_positive_number
    )
    tool_filter: ToolFilter = attrs.field(
        factory=ToolFilter, validator=checks.instance_of(ToolFilter)
    )
    disabled: bool = attrs.field(default=False, validator=checks.is_bool)
    trust: bool | None = attrs.field(
        default=None, validator=attrs.validators.optional(checks.is_bool)
    )
    auto_approve: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    dialect: str = attrs.field(default="", validator=checks.is_str)
    source: str = attrs.field(default="", validator=checks.is_str)
    origins: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_pairs)
    unresolved: tuple[tuple[str, str, str], ...] = attrs.field(default=(), converter=tuple)
    sse_fallback: bool = attrs.field(default=False, validator=checks.is_bool)

    def __attrs_post_init__(self) -> None:
        if self.transport == "stdio" and not self.command:
            raise checks.fail(self, "command", "is required for a stdio server")
        if self.transport != "stdio" and not self.url:
            raise checks.fail(self, "url", f"is required for an {self.transport} server")

    def __repr__(self) -> str:
        parts = [
            f"name={self.name!r}",
            f"dialect={self.dialect!r}",
            f"transport={self.transport!r}",
        ]
        if self.transport == "stdio":
            parts += [f"command={self.command!r}", f"args=<{len(self.args)} args>"]
            if self.env:
                parts.append(f"env={_hidden(self.env)}")
            if self.cwd:
                parts.append(f"cwd={self.cwd!r}")
        else:
            parts.append(f"url={_url_repr(self.url)}")
            if self.headers:
                parts.append(f"headers={_hidden(self.headers)}")
        if self.disabled:
            parts.append("disabled=True")
        if not self.tool_filter.is_empty:
            parts.append(f"tool_filter={self.tool_filter!r}")
        return f"ServerConfig({', '.join(parts)})"

    def _refuse_references(self) -> None:
        texts = [self.command or "", self.url or "", self.cwd or "", *self.args]
        texts += [v for _, v in (*self.env, *self.headers)]
        if any(refs.has_markers(text) for text in texts):
            raise ConfigError(
                f"server {self.name!r} was loaded with references=True: it holds variable"
                " references, not values, and cannot connect",
                op="definition",
            )

    @property
    def transport_note(self) -> str:
        """How the host reaches this server, for people (``"http, falling back to sse"``)."""
        if self.transport == "http" and self.sse_fallback:
            return "http, falling back to sse as the host does"
        return self.transport

    @property
    def env_mapping(self) -> dict[str, str]:
        """The child's extra environment as a fresh dict."""
        return dict(self.env)

    @property
    def header_mapping(self) -> dict[str, str]:
        """The static HTTP headers as a fresh dict."""
        return dict(self.headers)

    @property
    def binding_name(self) -> str:
        """:attr:`name` made a valid binding name (see :func:`binding_name`)."""
        return binding_name(self.name)

    @property
    def is_remote(self) -> bool:
        """True for an HTTP or SSE server."""
        return self.transport != "stdio"

    def origin(self, field: str) -> str:
        """Where ``field`` was set: ``"file:/json/pointer"``, or ``""`` (a default)."""
        for name, where in self.origins:
            if name == field:
                return where
        return ""

    def definition(self, *, name: str | None = None, **fields: Any) -> Definition:
        """Build the :class:`~mcpclient.Definition` that connects this server.

        Args:
            name: the binding name; defaults to :attr:`binding_name`.
            fields: other :class:`~mcpclient.Definition` fields (``limits``,
                ``capabilities``...). ``timeouts`` given here is the base that
                the file's timeouts override.

        An SSE server gets ``compat=PROFILE_LEGACY`` unless ``compat`` is given,
        and so does an HTTP server of a host that falls back to HTTP+SSE
        (:attr:`sse_fallback`): the definition carries the host's transport
        semantics, while :class:`~mcpclient.Definition`'s own default stays
        Streamable HTTP only. A disabled server still builds (not connecting
        it is the caller's job).

        Raises:
            ConfigError: the settings make no valid transport (a relative
                command path, plain ``http://`` to a remote host...), or the
                server was loaded with ``references=True`` and still holds
                a variable reference instead of its value.
        """
        self._refuse_references()
        transport: StdioTransport | StreamableHTTPTransport | LegacySSETransport
        if self.transport == "stdio":
            assert self.command is not None
            transport = StdioTransport(
                self.command, self.args, env=dict(self.env) or None, cwd=self.cwd
            )
        elif self.transport == "http":
            assert self.url is not None
            transport = StreamableHTTPTransport(self.url, headers=dict(self.headers) or None)
            if self.sse_fallback:
                fields.setdefault("compat", PROFILE_LEGACY)
        else:
            assert self.url is not None
            transport = LegacySSETransport(self.url, headers=dict(self.headers) or None)
            fields.setdefault("compat", PROFILE_LEGACY)
        timeouts = fields.pop("timeouts", None) or Timeouts()
        changes: dict[str, float] = {}
        if self.startup_timeout is not None:
            changes["startup"] = self.startup_timeout
        if self.tool_timeout is not None:
            changes["request"] = self.tool_timeout
        if changes:
            timeouts = attrs.evolve(timeouts, **changes)
        fields.setdefault("tool_filter", self.tool_filter)
        return Definition(
            name if name is not None else self.binding_name,
            transport,
            timeouts=timeouts,
            **fields,
        )


class LoadedConfig(Mapping[str, ServerConfig]):
    """What :func:`~mcpclient.config.load` returns: server name → :class:`ServerConfig`.

    A read-only mapping in file order, plus what was read and how.

    Attributes:
        dialect: the dialect the source was read as.
        reason: why (``"given"``, ``"file name"``, ``"keys: serverUrl"``...).
        source: the file, or ``"<dict>"`` / ``"<string>"``.
        warnings: every warning issued while loading (also issued through
            :mod:`warnings` as :class:`~mcpclient.config.ConfigWarning`).

    Thread safety: immutable after construction.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        dialect: str,
        reason: str,
        source: str,
        warnings: tuple[str, ...] = (),
    ) -> None:
        self._servers = dict(servers)
        self.dialect = dialect
        self.reason = reason
        self.source = source
        self.warnings = warnings

    def __getitem__(self, name: str) -> ServerConfig:
        return self._servers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._servers)

    def __len__(self) -> int:
        return len(self._servers)

    def __repr__(self) -> str:
        return (
            f"<LoadedConfig {self.dialect} from {self.source}: {len(self)} servers"
            f" ({', '.join(self._servers)})>"
        )

    def enabled(self) -> dict[str, ServerConfig]:
        """The servers not marked disabled, in file order."""
        return {name: s for name, s in self._servers.items() if not s.disabled}
