"""The ``mcpServers`` family: Claude Desktop, Claude Code, Cursor, Windsurf, Cline, FastMCP.

They share one shape, ``{"mcpServers": {name: {command, args, env} | {url...}}}``,
and differ in the keys they add (a :class:`Family` row each):

* claude-desktop: stdio only (a URL entry is reported and listed disabled); no expansion.
* claude-code: ``type`` stdio/http/sse, ``url``, ``headers``; ``${VAR}``, ``${VAR:-default}``.
* cursor: ``url``, ``headers``, ``envFile``; ``${env:VAR}``, ``${workspaceFolder}``...
* windsurf: ``serverUrl`` (or ``url``), ``disabled``, ``disabledTools``; ``${env:VAR}``
  and ``${file:/path}``.
* cline: ``type`` stdio/streamableHttp/sse, ``disabled``, ``autoApprove``, ``timeout`` (s);
  ``${env:VAR}`` in ``env``, ``url`` and ``headers`` only.
* fastmcp: ``transport`` stdio/http/streamable-http/sse, ``cwd``, ``auth``, ``timeout`` (ms).

Timeout units, per host (each pinned by a test):

* FastMCP: ``timeout`` is milliseconds (fastmcp ``src/fastmcp/mcp_config.py``,
  ``timeout: int | None``, "Maximum response time in milliseconds").
* Cline: ``timeout`` is seconds, at least 1, default 60 (Cline
  ``src/services/mcp/McpHub.ts`` schema; it multiplies by 1000 for the SDK).
* Claude Code: ``timeout`` is milliseconds, a value under 1000 is ignored
  (the host's ``MCP_TIMEOUT``/``MCP_TOOL_TIMEOUT`` environment variables,
  also milliseconds, are not read here).
* Claude Desktop, Cursor, Windsurf: no timeout key in the file.

A URL entry of Cursor, Windsurf and an untyped-or-``http`` one of VS Code is
Streamable HTTP with the host's fallback to HTTP+SSE (``sse_fallback``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs

from mcpclient.config.dialect import Dialect, ReadOptions, lose
from mcpclient.config.reading import Context, Entry, servers_table
from mcpclient.config.values import ServerConfig

__all__ = ["DIALECTS", "Family"]


@attrs.frozen
class Family:
    """How one host of the family spells its keys."""

    name: str
    title: str
    syntax: str
    format: str
    #: the key naming the transport kind ("type", "transport") or None
    kind_key: str | None
    #: raw kind value → our transport
    kinds: dict[str, str]
    #: keys that hold a remote server's URL, in preference order
    url_keys: tuple[str, ...]
    #: the transport of a URL entry with no kind key (None: infer from the URL)
    url_default: str | None
    stdio_only: bool = False
    cwd: bool = False
    headers: bool = True
    env_file: bool = False
    disabled: bool = False
    disabled_tools: bool = False
    auto_approve: bool = False
    #: the key of a per-tool timeout, if any, and its unit in seconds
    timeout_key: str | None = None
    timeout_scale: float = 1.0
    #: a timeout under this many seconds is ignored by the host (and here, with a warning)
    timeout_min: float = 0.0
    #: the top-level keys whose strings are expanded (None: all)
    expand_keys: frozenset[str] | None = None
    #: an HTTP entry falls back to HTTP+SSE, as the host does
    sse_fallback: bool = False
    fastmcp_auth: bool = False
    #: keys the host defines that mcpclient does not act on
    host_only: tuple[str, ...] = ()
    #: more spellings of the kind key (Cline's older ``transportType``)
    kind_aliases: tuple[str, ...] = ()


_CLAUDE_KINDS = {"stdio": "stdio", "http": "http", "sse": "sse"}

FAMILIES: tuple[Family, ...] = (
    Family("claude-desktop", "Claude Desktop", "none", "json", None, {}, (), None, True),
    Family(
        "claude-code",
        "Claude Code",
        "posix",
        "json",
        "type",
        _CLAUDE_KINDS,
        ("url",),
        "http",
        host_only=("headersHelper", "oauth"),
        # A per-server tool-call timeout in milliseconds, under 1000 ignored
        # (Claude Code 2.1.162+, as reported in dev.to/quintetkit "I set a 500ms
        # timeout and got 28 hours"; not found in Claude Code's own docs).
        timeout_key="timeout",
        timeout_scale=0.001,
        timeout_min=1.0,
    ),
    Family(
        "cursor",
        "Cursor",
        "editor",
        "jsonc",
        "type",
        {**_CLAUDE_KINDS, "streamableHttp": "http", "streamable-http": "http"},
        ("url",),
        "http",
        env_file=True,
        host_only=("auth",),
        # Cursor tries Streamable HTTP and falls back to SSE for a url entry
        # (docs.cursor.com/context/model-context-protocol, "Remote servers").
        sse_fallback=True,
    ),
    # Windsurf interpolates ${env:VAR} and ${file:/path} in command, args,
    # env, serverUrl, url and headers (docs.windsurf.com/windsurf/cascade/mcp,
    # "Config interpolation"); serverUrl speaks Streamable HTTP or SSE.
    Family(
        "windsurf",
        "Windsurf",
        "windsurf",
        "json",
        None,
        {},
        ("serverUrl", "url"),
        "http",
        disabled=True,
        disabled_tools=True,
        sse_fallback=True,
    ),
    # Cline's McpHub (src/services/mcp/McpHub.ts) expands ${env:VAR} in a
    # server's env, url and headers only; its timeout is seconds.
    Family(
        "cline",
        "Cline",
        "env",
        "json",
        "type",
        {"stdio": "stdio", "streamableHttp": "http", "sse": "sse"},
        ("url",),
        "sse",
        cwd=True,
        disabled=True,
        auto_approve=True,
        timeout_key="timeout",
        expand_keys=frozenset({"env", "url", "headers"}),
        kind_aliases=("transportType",),
        host_only=("alwaysAllow",),
    ),
    Family(
        "fastmcp",
        "FastMCP MCPConfig",
        "none",
        "json",
        "transport",
        {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"},
        ("url",),
        None,
        cwd=True,
        # fastmcp src/fastmcp/mcp_config.py: "Maximum response time in milliseconds".
        timeout_key="timeout",
        timeout_scale=0.001,
        fastmcp_auth=True,
        kind_aliases=("type",),
        host_only=(
            "include_tags",
            "exclude_tags",
            "tools",
            "keep_alive",
            "sse_read_timeout",
        ),
    ),
)


def _known(f: Family) -> frozenset[str]:
    keys = {"command", "args", "env", *f.url_keys, *f.host_only, *f.kind_aliases}
    if f.name == "fastmcp":
        keys |= {"description", "icon"}  # labels for people, nothing to act on
    for flag, key in (
        (f.kind_key, f.kind_key),
        (f.cwd, "cwd"),
        (f.headers and not f.stdio_only, "headers"),
        (f.env_file, "envFile"),
        (f.disabled, "disabled"),
        (f.disabled_tools, "disabledTools"),
        (f.auto_approve, "autoApprove"),
        (f.timeout_key, f.timeout_key),
        (f.fastmcp_auth, "auth"),
    ):
        if flag and key:
            keys.add(key)
    if f.stdio_only:
        keys |= {"url", "type"}  # read only to report them
    return frozenset(keys)


def _kind(f: Family, e: Entry) -> str | None:
    """The transport the entry asks for, or None (error recorded)."""
    raw_kind = None
    for key in (f.kind_key, *f.kind_aliases):
        if key and e.has(key):
            raw_kind = e.take_str(key, "transport", expand=False)
            if raw_kind is not None and raw_kind not in f.kinds:
                e.error(key, f"must be one of {', '.join(f.kinds)}")
                return None
            break
    if raw_kind is not None:
        return f.kinds[raw_kind]
    url_key = next((k for k in f.url_keys if e.has(k)), None)
    if url_key is None:
        return "stdio"
    if f.url_default is not None:
        return f.url_default
    # FastMCP infers the transport from the URL: a path ending in /sse is SSE.
    url = e.raw.get(url_key)
    path = urlsplit(url).path if isinstance(url, str) else ""
    return "sse" if path.rstrip("/").endswith("/sse") else "http"


def _read_entry(f: Family, ctx: Context, name: str, raw: object, path: list[str | int]) -> Any:
    e = Entry(ctx, name, raw, path)
    if not e.ok:
        return None
    e.expand_keys = f.expand_keys
    e.unknown(_known(f))
    e.ignored(f.host_only)
    if f.stdio_only and (e.has("url") or e.has("type")):
        url = e.take_str("url", expand=False)
        if url is None:
            e.warn("type", f"{f.title} runs stdio servers only and skips this entry; skipped")
            return None
        e.warn("url", f"{f.title} runs stdio servers only and skips this entry; listed as disabled")
        return e.build(transport="http", url=url, disabled=True)
    kind = _kind(f, e)
    fields: dict[str, Any] = {"transport": kind}
    if kind == "stdio":
        fields["command"] = e.take_str("command")
        fields["args"] = e.take_str_list("args")
        env = e.take_str_map("env") or []
        if f.env_file:
            env = e.take_env_file(env)
        fields["env"] = env or None
        if f.cwd:
            fields["cwd"] = e.take_str("cwd")
        for key in (*f.url_keys, "headers"):
            if e.has(key):
                e.warn(key, "a stdio server does not use this, ignored")
    else:
        url_key = next((k for k in f.url_keys if e.has(k)), f.url_keys[0] if f.url_keys else "url")
        fields["url"] = e.take_str(url_key, "url")
        headers = e.take_str_map("headers") if f.headers else None
        headers = list(headers or [])
        if f.fastmcp_auth and e.has("auth"):
            auth = e.take_str("auth", "headers")
            if auth == "oauth":
                e.ignored(["auth"], "OAuth is configured in code (mcpclient.auth)")
            elif auth:
                headers.append(("Authorization", f"Bearer {auth}"))
        fields["headers"] = headers or None
        fields["sse_fallback"] = f.sse_fallback and kind == "http"
        for key in ("command", "args", "env", "envFile", "cwd"):
            if e.has(key):
                e.warn(key, "a remote server does not use this, ignored")
    if f.disabled:
        fields["disabled"] = bool(e.take_bool("disabled"))
    if f.disabled_tools:
        fields["tool_filter"] = e.tool_filter(
            None, e.take_str_list("disabledTools", "tool_filter", expand=False), "disabledTools"
        )
    if f.auto_approve:
        fields["auto_approve"] = e.take_str_list("autoApprove", expand=False)
    if f.timeout_key:
        timeout = e.take_seconds(f.timeout_key, "tool_timeout", scale=f.timeout_scale)
        if timeout is not None and timeout < f.timeout_min:
            e.warn(f.timeout_key, f"{f.title} ignores a timeout under {f.timeout_min:g} s; ignored")
            timeout = None
        fields["tool_timeout"] = timeout
    return e.build(**fields)


def _reader(f: Family) -> Any:
    def read(ctx: Context, document: Any, options: ReadOptions) -> dict[str, ServerConfig]:
        if not isinstance(document, dict):
            ctx.problems.error([], "the file must hold a JSON object")
            return {}
        base: list[str | int] = ["mcpServers"]
        if options.project is not None:
            base = ["projects", options.project, "mcpServers"]
        elif not options.shared:
            ctx.problems.unknown_keys(document, frozenset({"mcpServers", "$schema"}), [])
        if "mcpServers" not in document and options.project is None and "servers" in document:
            ctx.problems.error(["servers"], f"{f.title} reads mcpServers, not servers")
        table = servers_table(ctx, document, base)
        out: dict[str, ServerConfig] = {}
        for name, raw in (table or {}).items():
            server = _read_entry(f, ctx, name, raw, [*base, name])
            if server is not None:
                out[name] = server
        return out

    return read


def _writer(f: Family) -> Any:
    def write(servers: Sequence[ServerConfig], lost: list[str]) -> Any:
        table: dict[str, Any] = {}
        for s in servers:
            entry = write_entry(f, s, lost)
            if entry is not None:
                table[s.name] = entry
        return {"mcpServers": table}

    return write


def write_entry(f: Family, s: ServerConfig, lost: list[str]) -> dict[str, Any] | None:
    """One server in family ``f``'s shape; what ``f`` cannot hold goes to ``lost``."""
    entry: dict[str, Any] = {}
    if s.is_remote:
        if f.stdio_only:
            lose(lost, s, "a remote (URL) server", f.title)
            return None
        back = {v: k for k, v in reversed(f.kinds.items())}
        if s.transport not in back and f.kinds:
            lose(lost, s, f"the {s.transport} transport", f.title)
        if f.kind_key and s.transport in back:
            inferred = f.url_default or (
                "sse" if (s.url or "").rstrip("/").endswith("/sse") else "http"
            )
            if s.transport != inferred or f.name in ("claude-code", "cline"):
                entry[f.kind_key] = back[s.transport]
        elif not f.kind_key and s.transport == "sse":
            lose(lost, s, "an explicit SSE transport (the host negotiates it)", f.title)
        entry[f.url_keys[0]] = s.url
        if s.headers:
            entry["headers"] = dict(s.headers)
    else:
        if f.kind_key == "type" and f.name == "claude-code":
            entry["type"] = "stdio"
        entry["command"] = s.command
        if s.args:
            entry["args"] = list(s.args)
        if s.env:
            entry["env"] = dict(s.env)
        if s.cwd:
            if f.cwd:
                entry["cwd"] = s.cwd
            else:
                lose(lost, s, "a working directory (cwd)", f.title)
    if s.disabled:
        if f.disabled:
            entry["disabled"] = True
        else:
            # Written enabled it would start; left out it stays off.
            lost.append(f"server {s.name!r}: {f.title} cannot mark a server disabled; left out")
            return None
    if not s.tool_filter.is_empty:
        if f.disabled_tools and not s.tool_filter.allow:
            entry["disabledTools"] = list(s.tool_filter.deny)
        else:
            lose(lost, s, "this tool filter", f.title)
    if s.auto_approve:
        if f.auto_approve:
            entry["autoApprove"] = list(s.auto_approve)
        else:
            lose(lost, s, "auto-approved tools", f.title)
    if s.tool_timeout is not None:
        if f.timeout_key:
            entry[f.timeout_key] = _number(round(s.tool_timeout / f.timeout_scale, 6))
        else:
            lose(lost, s, "a tool timeout", f.title)
    if s.startup_timeout is not None:
        lose(lost, s, "a startup timeout", f.title)
    if s.trust is not None:
        lose(lost, s, "trust", f.title)
    return entry


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


DIALECTS: tuple[Dialect, ...] = tuple(
    Dialect(
        f.name, f.title, f.syntax, f.format, _reader(f), _writer(f), expand_fields=f.expand_keys
    )
    for f in FAMILIES
)
