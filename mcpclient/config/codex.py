"""Codex's ``config.toml`` (``~/.codex/`` or ``$CODEX_HOME``, and a project's ``.codex/``).

``[mcp_servers.<name>]`` tables: ``command``, ``args``, ``env``, ``env_vars``
(names passed through from the environment), ``cwd`` for stdio; ``url``
(Streamable HTTP) with ``bearer_token_env_var``, ``http_headers`` and
``env_http_headers`` (header → variable name); ``startup_timeout_sec`` (or
``startup_timeout_ms``), ``tool_timeout_sec``, ``enabled_tools`` and
``disabled_tools``, ``enabled``; the approval settings
``default_tools_approval_mode`` and ``[mcp_servers.<name>.tools.<tool>]``
``approval_mode`` (``auto`` | ``prompt`` | ``approve``; per tool first, then
the server's default, then ``auto``: openai/codex pull request 17843): a
server default of ``approve`` reads as ``trust``, a tool's ``approve`` as a
name in ``auto_approve``. Codex expands no variables in the file; the
variables it names (``bearer_token_env_var``, ``env_http_headers``,
``env_vars``) are read from ``env=``, and an unset one is a problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpclient.config import refs
from mcpclient.config.dialect import Dialect, ReadOptions
from mcpclient.config.reading import Context, Entry, servers_table
from mcpclient.config.values import ServerConfig

__all__ = ["DIALECT"]

_KNOWN = frozenset(
    {
        "command",
        "args",
        "env",
        "env_vars",
        "cwd",
        "url",
        "bearer_token_env_var",
        "bearer_token",
        "http_headers",
        "env_http_headers",
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
        "enabled_tools",
        "disabled_tools",
        "enabled",
        "required",
        "oauth",
        "scopes",
        "default_tools_approval_mode",
        "tools",
    }
)
_APPROVAL_MODES = ("auto", "prompt", "approve")
_HOST_ONLY = ("required", "oauth", "scopes")


def _from_env(ctx: Context, e: Entry, variable: str, path: list[str | int]) -> str | None:
    if ctx.expander.references:
        return refs.marker(refs.ENV, variable)
    value = ctx.env.get(variable)
    if value is None:
        ctx.expander.missing.append((tuple(path), refs.ENV, variable))
        if ctx.expander.strict:
            ctx.problems.error(path, f"environment variable {variable} is not set")
        else:
            ctx.problems.warn(path, f"environment variable {variable} is not set; left out")
    return value


def _read_entry(ctx: Context, name: str, raw: object, path: list[str | int]) -> Any:
    e = Entry(ctx, name, raw, path)
    if not e.ok:
        return None
    e.unknown(_KNOWN)
    e.ignored(_HOST_ONLY)
    fields: dict[str, Any] = {}
    if e.has("bearer_token"):
        e.error("bearer_token", "Codex refuses an inline bearer token; use bearer_token_env_var")
    if e.has("url") and e.has("command"):
        # Codex's McpServerTransportConfig is an untagged enum of Stdio
        # {command...} and StreamableHttp {url...}: an entry with both matches
        # neither (codex-rs/core/src/config_types.rs), so Codex refuses it.
        e.error(None, "sets both command (stdio) and url (Streamable HTTP); Codex refuses it")
        return None
    if e.has("url"):
        fields["transport"] = "http"
        fields["url"] = e.take_str("url")
        headers = e.take_str_map("http_headers", "headers") or []
        for header, variable in e.take_str_map("env_http_headers", "headers") or []:
            value = _from_env(ctx, e, variable, e.at("env_http_headers", header))
            if value is not None:
                headers.append((header, value))
        token_var = e.take_str("bearer_token_env_var", "headers")
        if token_var:
            token = _from_env(ctx, e, token_var, e.at("bearer_token_env_var"))
            if token is not None:
                headers.append(("Authorization", f"Bearer {token}"))
        fields["headers"] = headers or None
        for key in ("command", "args", "env", "env_vars", "cwd"):
            if e.has(key):
                e.warn(key, "a remote server does not use this, ignored")
    else:
        fields["transport"] = "stdio"
        fields["command"] = e.take_str("command")
        fields["args"] = e.take_str_list("args")
        env = e.take_str_map("env") or []
        for variable in e.take_str_list("env_vars", "env") or ():
            # A name passed through: unset, the child simply does not get it (no problem).
            value = refs.marker(refs.ENV, variable) if ctx.expander.references else None
            value = value or ctx.env.get(variable)
            if value is not None and variable not in dict(env):
                env.append((variable, value))
        fields["env"] = env or None
        fields["cwd"] = e.take_str("cwd")
    if e.has("startup_timeout_sec"):
        fields["startup_timeout"] = e.take_seconds("startup_timeout_sec", "startup_timeout")
        if e.has("startup_timeout_ms"):
            e.warn("startup_timeout_ms", "startup_timeout_sec is also set and wins; ignored")
    else:
        fields["startup_timeout"] = e.take_seconds(
            "startup_timeout_ms", "startup_timeout", scale=0.001
        )
    fields["tool_timeout"] = e.take_seconds("tool_timeout_sec", "tool_timeout")
    fields["tool_filter"] = e.tool_filter(
        e.take_str_list("enabled_tools", "tool_filter"),
        e.take_str_list("disabled_tools", "tool_filter"),
        "enabled_tools",
    )
    enabled = e.take_bool("enabled", "disabled")
    fields["disabled"] = enabled is False
    _read_approval(e, fields)
    return e.build(**fields)


def _read_approval(e: Entry, fields: dict[str, Any]) -> None:
    """``default_tools_approval_mode`` → ``trust``; each tool's ``approve`` → ``auto_approve``."""
    default = e.take_str("default_tools_approval_mode", "trust", expand=False)
    if default is not None and default not in _APPROVAL_MODES:
        e.error("default_tools_approval_mode", f"must be one of {', '.join(_APPROVAL_MODES)}")
    elif default is not None:
        fields["trust"] = default == "approve"
    tools = e.raw.get("tools")
    if tools is None:
        return
    if not isinstance(tools, dict):
        e.error("tools", "must be a table of tool names")
        return
    approved: list[str] = []
    for tool, settings in tools.items():
        mode = settings.get("approval_mode") if isinstance(settings, dict) else None
        if mode is not None and mode not in _APPROVAL_MODES:
            e.error(
                "tools", f"tool {tool!r}: approval_mode must be one of {', '.join(_APPROVAL_MODES)}"
            )
        elif mode == "approve":
            approved.append(str(tool))
    if approved:
        e.note("auto_approve", "tools")
        fields["auto_approve"] = tuple(approved)


def _read(ctx: Context, document: Any, options: ReadOptions) -> dict[str, ServerConfig]:
    table = servers_table(ctx, document, ["mcp_servers"])
    out: dict[str, ServerConfig] = {}
    for name, raw in (table or {}).items():
        server = _read_entry(ctx, name, raw, ["mcp_servers", name])
        if server is not None:
            out[name] = server
    return out


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _env_name(value: str) -> str | None:
    """The variable an env reference names, if ``value`` is exactly one."""
    ref = refs.only(value)
    return ref.name if ref is not None and ref.kind == refs.ENV and ref.default is None else None


_Tables = tuple[dict[str, str], dict[str, str], dict[str, str]]


def _references(s: ServerConfig, entry: dict[str, Any], lost: list[str]) -> _Tables | None:
    """``s``'s (env, http_headers, env_http_headers); references become Codex's own keys.

    None: ``s`` cannot be written (a reference in its command or URL).

    Codex expands nothing in its file; it names variables instead:
    ``env_vars`` (passed through), ``bearer_token_env_var`` and
    ``env_http_headers`` (codex-rs config: McpServerTransportConfig).
    """
    for key in ("command", "url", "cwd", "args"):
        values = s.args if key == "args" else (getattr(s, key) or "",)
        if any(refs.has_markers(v) for v in values):
            lost.append(f"server {s.name!r}: Codex cannot reference a variable in {key}; left out")
            return None
    env: dict[str, str] = {}
    passed: list[str] = []
    for name, value in s.env:
        if not refs.has_markers(value):
            env[name] = value
        elif _env_name(value) == name:
            passed.append(name)
        else:
            lost.append(f"server {s.name!r}: Codex cannot express env {name!r}; left out")
    headers: dict[str, str] = {}
    from_env: dict[str, str] = {}
    for name, value in s.headers:
        bearer = value[7:] if value.startswith("Bearer ") else ""
        if not refs.has_markers(value):
            headers[name] = value
        elif name.lower() == "authorization" and _env_name(bearer):
            entry["bearer_token_env_var"] = _env_name(bearer)
        elif _env_name(value):
            from_env[name] = str(_env_name(value))
        else:
            lost.append(f"server {s.name!r}: Codex cannot express header {name!r}; left out")
    if passed and not s.is_remote:
        entry["env_vars"] = passed
    return env, headers, from_env


def _write(servers: Sequence[ServerConfig], lost: list[str]) -> Any:
    table: dict[str, Any] = {}
    for s in servers:
        entry: dict[str, Any] = {}
        tables = _references(s, entry, lost)
        if tables is None:
            continue
        env, headers, env_http_headers = tables
        if s.transport == "sse":
            lost.append(
                f"server {s.name!r}: Codex has no SSE transport; written as Streamable HTTP"
            )
        if s.is_remote:
            entry["url"] = s.url
        else:
            entry["command"] = s.command
            if s.args:
                entry["args"] = list(s.args)
            if s.cwd:
                entry["cwd"] = s.cwd
        if s.startup_timeout is not None:
            entry["startup_timeout_sec"] = _number(s.startup_timeout)
        if s.tool_timeout is not None:
            entry["tool_timeout_sec"] = _number(s.tool_timeout)
        if s.tool_filter.allow:
            entry["enabled_tools"] = list(s.tool_filter.allow)
        if s.tool_filter.deny:
            entry["disabled_tools"] = list(s.tool_filter.deny)
        if not s.tool_filter.is_exact:
            lost.append(f"server {s.name!r}: Codex matches tool names exactly, not globs")
        if s.disabled:
            entry["enabled"] = False
        if s.trust is not None:
            entry["default_tools_approval_mode"] = "approve" if s.trust else "prompt"
        # sub-tables last, as TOML requires
        if env and not s.is_remote:
            entry["env"] = env
        if headers and s.is_remote:
            entry["http_headers"] = headers
        if env_http_headers and s.is_remote:
            entry["env_http_headers"] = env_http_headers
        if s.auto_approve:
            entry["tools"] = {t: {"approval_mode": "approve"} for t in s.auto_approve}
        table[s.name] = entry
    return {"mcp_servers": table}


DIALECT = Dialect("codex", "Codex", "none", "toml", _read, _write, own_references=True)
