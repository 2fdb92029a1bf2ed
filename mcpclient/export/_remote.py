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
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from mcpclient.catalog import ToolSpec
from mcpclient.definition import Definition
from mcpclient.errors import ConfigError
from mcpclient.transports import LegacySSETransport, StreamableHTTPTransport

__all__ = ["RemoteServer", "to_anthropic_mcp_server", "to_openai_mcp_tool"]

_GLOB = frozenset("*?[")


class RemoteServer(Protocol):
    """What the passthrough reads of a configured server (``mcpclient.config.ServerConfig``).

    ``url`` is None for a stdio server; ``transport`` names its kind
    (``"stdio"``, ``"http"``, ``"sse"``); ``tool_filter`` has ``include`` and
    ``exclude`` glob sequences (exclude wins; an empty include allows all).
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
    def headers(self) -> Mapping[str, str]:
        """Static HTTP headers."""

    @property
    def tool_filter(self) -> Any:
        """The tool filter (``include``, ``exclude`` globs)."""


def _tool_names(tools: Any) -> list[str]:
    catalog = getattr(tools, "catalog", None)
    if callable(catalog):
        tools = catalog()
    tools = getattr(tools, "tools", tools)
    names = []
    for item in tools if isinstance(tools, Iterable) and not isinstance(tools, str) else ():
        names.append(item.raw_name if isinstance(item, ToolSpec) else str(item))
    return names


def _server(server: Any, op: str) -> tuple[str, str, dict[str, str], list[str], list[str], bool]:
    """(name, url, headers, include, exclude, globs) of a Definition or a RemoteServer."""
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
        allow, deny = list(server.tool_filter.allow), list(server.tool_filter.deny)
        return str(server.name), transport.url, headers, allow, deny, False
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
    headers = dict(getattr(server, "headers", None) or {})
    tool_filter = getattr(server, "tool_filter", None)
    include = list(getattr(tool_filter, "include", None) or ())
    exclude = list(getattr(tool_filter, "exclude", None) or ())
    return name, str(url), headers, include, exclude, True


def _allowed(
    name: str, include: list[str], exclude: list[str], *, globs: bool, tools: Any, op: str
) -> list[str] | None:
    """The exact allow list the filter means (None: every tool)."""
    if not include and not exclude:
        return None
    patterned = globs and any(_GLOB & set(p) for p in (*include, *exclude))
    if not exclude and not patterned:
        return list(include)
    if tools is None:
        raise ConfigError(
            f"{op}(): the tool filter of {name!r} has exclusions or globs, and the provider"
            " takes exact tool names only; pass tools= (the server's Client or Catalog)",
            binding=name,
            op=op,
        )

    def matches(tool: str, patterns: list[str]) -> bool:
        if globs:
            return any(fnmatch.fnmatchcase(tool, p) for p in patterns)
        return tool in patterns

    return [
        tool
        for tool in _tool_names(tools)
        if (not include or matches(tool, include)) and not matches(tool, exclude)
    ]


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
    name, url, headers, include, exclude, globs = _server(server, op)
    tool: dict[str, Any] = {"type": "mcp", "server_label": _label(name), "server_url": url}
    if headers:
        tool["headers"] = headers
    allowed = _allowed(name, include, exclude, globs=globs, tools=tools, op=op)
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
    name, url, headers, include, exclude, globs = _server(server, op)
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
    allowed = _allowed(name, include, exclude, globs=globs, tools=tools, op=op)
    if allowed is not None:
        configuration["allowed_tools"] = allowed
    entry["tool_configuration"] = configuration
    return entry
