"""Remote MCP passthrough: let the provider call an HTTP server itself.

``to_openai_mcp_tool`` builds the OpenAI Responses API's ``{"type": "mcp"}``
tool; ``to_anthropic_mcp_server`` an entry of the Anthropic Messages API's
``mcp_servers``. Both carry the server's tool filter over as an explicit
allow list, and both refuse a stdio server, which a provider cannot reach.

A filter with globs or exclusions is turned into an allow list only when the
server's tools are given (``tools=``: a ``Client``, a ``Catalog``, or names):
the providers take exact names only.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import attrs

from mcpclient.catalog import ToolSpec
from mcpclient.definition import Definition, ToolFilter
from mcpclient.errors import ConfigError
from mcpclient.transports import LegacySSETransport, StreamableHTTPTransport

__all__ = ["RemoteServer", "to_anthropic_mcp_server", "to_openai_mcp_tool"]

_GLOB = frozenset("*?[")


class RemoteServer(Protocol):
    """What the passthrough reads of a configured server (``mcpclient.config.ServerConfig``).

    ``url`` is None for a stdio server; ``transport`` names its kind
    (``"stdio"``, ``"http"``, ``"sse"``); ``headers`` is a mapping or
    ``(name, value)`` pairs; ``tool_filter`` has ``allow`` and ``deny`` (or
    ``include`` and ``exclude``) glob sequences, deny winning and an empty
    allow allowing all, and may have ``permits(name)``, which is then used.
    """

    @property
    def name(self) -> str:
        """The server's name."""

    @property
    def url(self) -> str | None:
        """The server's URL (None for stdio)."""

    @property
    def transport(self) -> Any:
        """The transport kind."""

    @property
    def headers(self) -> Any:
        """Static HTTP headers."""

    @property
    def tool_filter(self) -> Any:
        """The tool filter (``allow``/``include``, ``deny``/``exclude`` globs)."""


def _tool_names(tools: Any) -> list[str]:
    catalog = getattr(tools, "catalog", None)
    if callable(catalog):
        tools = catalog()
    tools = getattr(tools, "tools", tools)
    names = []
    for item in tools if isinstance(tools, Iterable) and not isinstance(tools, str) else ():
        names.append(item.raw_name if isinstance(item, ToolSpec) else str(item))
    return names


@attrs.frozen
class _Filter:
    """A tool filter read from either shape: exact names or globs, allow and deny."""

    allow: tuple[str, ...]
    deny: tuple[str, ...]
    permits: Callable[[str], bool] | None
    globs: bool

    @classmethod
    def of(cls, tool_filter: Any, *, globs: bool) -> _Filter:
        allow = getattr(tool_filter, "allow", None) or getattr(tool_filter, "include", None)
        deny = getattr(tool_filter, "deny", None) or getattr(tool_filter, "exclude", None)
        permits = getattr(tool_filter, "permits", None)
        # mcpclient.ToolFilter matches exact names; a subclass (config's) matches globs.
        if type(tool_filter) is not ToolFilter and tool_filter is not None:
            globs = True
        return cls(
            tuple(allow or ()), tuple(deny or ()), permits if callable(permits) else None, globs
        )

    def allows(self, tool: str) -> bool:
        if self.permits is not None:
            return bool(self.permits(tool))
        if self.globs:
            if any(fnmatch.fnmatchcase(tool, p) for p in self.deny):
                return False
            return not self.allow or any(fnmatch.fnmatchcase(tool, p) for p in self.allow)
        return tool not in self.deny and (not self.allow or tool in self.allow)


def _pairs(headers: Any) -> dict[str, str]:
    if isinstance(headers, Mapping):
        return {str(k): str(v) for k, v in headers.items()}
    return {str(k): str(v) for k, v in headers or ()}


def _server(server: Any, op: str) -> tuple[str, str, dict[str, str], _Filter]:
    """(name, url, headers, filter) of a Definition or a RemoteServer."""
    if isinstance(server, Definition):
        transport = server.transport
        if not isinstance(transport, StreamableHTTPTransport | LegacySSETransport):
            raise ConfigError(
                f"{op}() needs an HTTP server; {server.name!r} runs over stdio, which a"
                " provider cannot reach",
                binding=str(server.name),
                op=op,
            )
        headers = transport.header_mapping
        auth = transport.auth
        if auth is not None:
            if callable(auth):
                token = auth()
                if token:
                    headers["Authorization"] = f"Bearer {token}"
            else:
                headers.update(auth.headers_for("POST", transport.url))
        tool_filter = _Filter.of(server.tool_filter, globs=False)
        return str(server.name), transport.url, headers, tool_filter
    name, url = getattr(server, "name", None), getattr(server, "url", None)
    kind = str(getattr(server, "transport", "") or "")
    if not isinstance(name, str):
        raise ConfigError(f"{op}() needs a Definition or a ServerConfig", op=op)
    if url is None or kind.lower() == "stdio":
        raise ConfigError(
            f"{op}() needs an HTTP server; {name!r} runs over stdio, which a provider cannot reach",
            binding=name,
            op=op,
        )
    headers = _pairs(getattr(server, "headers", None))
    tool_filter = _Filter.of(getattr(server, "tool_filter", None), globs=True)
    return name, str(url), headers, tool_filter


def _allowed(name: str, tool_filter: _Filter, *, tools: Any, op: str) -> list[str] | None:
    """The exact allow list the filter means (None: every tool)."""
    if tools is not None:
        listed = _tool_names(tools)
        allowed = [tool for tool in listed if tool_filter.allows(tool)]
        return None if not tool_filter.allow and not tool_filter.deny else allowed
    if not tool_filter.allow and not tool_filter.deny:
        return None
    patterned = tool_filter.globs and any(_GLOB & set(p) for p in tool_filter.allow)
    if not tool_filter.deny and not patterned:
        return list(tool_filter.allow)
    raise ConfigError(
        f"{op}(): the tool filter of {name!r} has exclusions or globs, and the provider"
        " takes exact tool names only; pass tools= (the server's Client or Catalog)",
        binding=name,
        op=op,
    )


def _label(name: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" for ch in name)


def to_openai_mcp_tool(
    server: Definition | RemoteServer,
    *,
    tools: Any = None,
    require_approval: str | Mapping[str, Any] = "always",
) -> dict[str, Any]:
    """The OpenAI Responses API tool that lets the model call ``server`` itself.

    Returns ``{"type": "mcp", "server_label", "server_url", "headers",
    "allowed_tools", "require_approval"}`` (``headers`` and ``allowed_tools``
    only when there are any). The headers carry the server's credentials:
    the dict is a secret.

    Raises:
        ConfigError: a stdio server, or a filter that needs ``tools=``.
    """
    op = "to_openai_mcp_tool"
    name, url, headers, tool_filter = _server(server, op)
    tool: dict[str, Any] = {"type": "mcp", "server_label": _label(name), "server_url": url}
    if headers:
        tool["headers"] = headers
    allowed = _allowed(name, tool_filter, tools=tools, op=op)
    if allowed is not None:
        tool["allowed_tools"] = allowed
    tool["require_approval"] = require_approval
    return tool


def to_anthropic_mcp_server(
    server: Definition | RemoteServer, *, tools: Any = None
) -> dict[str, Any]:
    """The Anthropic Messages API ``mcp_servers`` entry for ``server``.

    Returns ``{"type": "url", "url", "name", "authorization_token",
    "tool_configuration": {"enabled": true, "allowed_tools": [...]}}``. The
    connector sends one bearer token, taken from the ``Authorization``
    header; other headers cannot be expressed and are refused.

    Raises:
        ConfigError: a stdio server, a URL that is not https://, headers other
            than a bearer token, or a filter that needs ``tools=``.
    """
    op = "to_anthropic_mcp_server"
    name, url, headers, tool_filter = _server(server, op)
    token = None
    others = []
    for key, value in headers.items():
        if key.lower() == "authorization" and value[:7].lower() == "bearer ":
            token = value[7:].strip()
        else:
            others.append(key)
    if others:
        raise ConfigError(
            f"{op}(): the Anthropic MCP connector sends a bearer token only; {name!r} needs"
            f" header(s) {', '.join(sorted(others))}",
            binding=name,
            op=op,
        )
    if not url.lower().startswith("https://"):
        raise ConfigError(
            f"{op}(): the Anthropic MCP connector needs an https:// URL; {name!r} has another",
            binding=name,
            op=op,
        )
    entry: dict[str, Any] = {"type": "url", "url": url, "name": name}
    if token:
        entry["authorization_token"] = token
    configuration: dict[str, Any] = {"enabled": True}
    allowed = _allowed(name, tool_filter, tools=tools, op=op)
    if allowed is not None:
        configuration["allowed_tools"] = allowed
    entry["tool_configuration"] = configuration
    return entry
