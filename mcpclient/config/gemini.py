"""Gemini CLI's ``settings.json`` (``~/.gemini/`` and a project's ``.gemini/``).

``mcpServers`` entries: ``command``/``args``/``env``/``cwd`` (stdio),
``httpUrl`` (Streamable HTTP) or ``url`` (SSE, unless ``type: "http"``),
``headers``, ``timeout`` in milliseconds, ``trust``, ``includeTools`` and
``excludeTools`` (exclude wins). ``$VAR`` and ``${VAR}`` expand everywhere.
The top-level ``mcp.allowed`` / ``mcp.excluded`` lists of server names mark
the other servers disabled. The file may hold comments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpclient.config.dialect import Dialect, ReadOptions
from mcpclient.config.reading import Context, Entry, kind_of, servers_table
from mcpclient.config.values import ServerConfig

__all__ = ["DIALECT"]

_KNOWN = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "httpUrl",
        "type",
        "headers",
        "timeout",
        "trust",
        "includeTools",
        "excludeTools",
        "description",
        "oauth",
        "authProviderType",
        "targetAudience",
        "targetServiceAccount",
        "tcp",
        "extension",
    }
)
# (``description`` is read and dropped silently: it is only a label for people)
_HOST_ONLY = (
    "oauth",
    "authProviderType",
    "targetAudience",
    "targetServiceAccount",
    "tcp",
    "extension",
)


def _names(ctx: Context, document: dict[str, Any], key: str) -> set[str] | None:
    mcp = document.get("mcp")
    if not isinstance(mcp, dict) or key not in mcp:
        return None
    value = mcp[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.problems.error(["mcp", key], f"must be an array of strings, got {kind_of(value)}")
        return None
    return set(value)


def _read_entry(
    ctx: Context, name: str, raw: object, path: list[str | int], off: bool
) -> ServerConfig | None:
    e = Entry(ctx, name, raw, path)
    if not e.ok:
        return None
    e.unknown(_KNOWN)
    e.ignored(_HOST_ONLY)
    fields: dict[str, Any] = {}
    if e.has("httpUrl"):
        fields["transport"] = "http"
        fields["url"] = e.take_str("httpUrl", "url")
    elif e.has("url"):
        kind = e.take_str("type", "transport", expand=False) if e.has("type") else "sse"
        if kind not in ("sse", "http"):
            e.error("type", "must be sse or http")
            return None
        fields["transport"] = kind
        fields["url"] = e.take_str("url")
    else:
        fields["transport"] = "stdio"
        fields["command"] = e.take_str("command")
        fields["args"] = e.take_str_list("args")
        fields["env"] = e.take_str_map("env")
        fields["cwd"] = e.take_str("cwd")
    if fields["transport"] != "stdio":
        fields["headers"] = e.take_str_map("headers")
    fields["tool_timeout"] = e.take_seconds("timeout", "tool_timeout", scale=0.001)
    fields["trust"] = e.take_bool("trust")
    fields["tool_filter"] = e.tool_filter(
        e.take_str_list("includeTools", "tool_filter", expand=False),
        e.take_str_list("excludeTools", "tool_filter", expand=False),
        "includeTools",
    )
    fields["disabled"] = off
    return e.build(**fields)


def _read(ctx: Context, document: Any, options: ReadOptions) -> dict[str, ServerConfig]:
    if not isinstance(document, dict):
        ctx.problems.error([], "the file must hold a JSON object")
        return {}
    allowed = _names(ctx, document, "allowed")
    excluded = _names(ctx, document, "excluded") or set()
    table = servers_table(ctx, document, ["mcpServers"])
    out: dict[str, ServerConfig] = {}
    for name, raw in (table or {}).items():
        off = name in excluded or (allowed is not None and name not in allowed)
        server = _read_entry(ctx, name, raw, ["mcpServers", name], off)
        if server is not None:
            out[name] = server
    return out


def _ms(seconds: float) -> int | float:
    value = seconds * 1000
    return round(value) if abs(value - round(value)) < 1e-6 else value


def _write(servers: Sequence[ServerConfig], lost: list[str]) -> Any:
    table: dict[str, Any] = {}
    excluded: list[str] = []
    for s in servers:
        entry: dict[str, Any] = {}
        if s.transport == "http":
            entry["httpUrl"] = s.url
        elif s.transport == "sse":
            entry["url"] = s.url
        else:
            entry["command"] = s.command
            if s.args:
                entry["args"] = list(s.args)
            if s.env:
                entry["env"] = dict(s.env)
            if s.cwd:
                entry["cwd"] = s.cwd
        if s.is_remote and s.headers:
            entry["headers"] = dict(s.headers)
        if s.tool_timeout is not None:
            entry["timeout"] = _ms(s.tool_timeout)
        if s.trust is not None:
            entry["trust"] = s.trust
        if s.tool_filter.allow:
            entry["includeTools"] = list(s.tool_filter.allow)
        if s.tool_filter.deny:
            entry["excludeTools"] = list(s.tool_filter.deny)
        if not s.tool_filter.is_exact:
            lost.append(f"server {s.name!r}: Gemini CLI matches tool names exactly, not globs")
        if s.disabled:
            excluded.append(s.name)
        if s.startup_timeout is not None:
            lost.append(f"server {s.name!r}: Gemini CLI cannot express a startup timeout")
        if s.auto_approve:
            lost.append(f"server {s.name!r}: Gemini CLI cannot express auto-approved tools")
        table[s.name] = entry
    document: dict[str, Any] = {"mcpServers": table}
    if excluded:
        document["mcp"] = {"excluded": excluded}
    return document


DIALECT = Dialect("gemini", "Gemini CLI", "shell", "jsonc", _read, _write)
