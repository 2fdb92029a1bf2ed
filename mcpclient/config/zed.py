"""Zed's ``settings.json`` ``context_servers`` (``~/.config/zed/`` and a project's ``.zed/``).

An entry is ``{"command": "prog", "args": [...], "env": {...}}`` (the older
form nests them: ``"command": {"path", "args", "env"}``) or ``{"url",
"headers"}``; ``"enabled": false`` turns it off; ``"source": "extension"``
servers come from a Zed extension and are skipped with a warning (their
command is the extension's). The file may hold comments; no expansion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpclient.config.dialect import Dialect, ReadOptions, lose_client_settings
from mcpclient.config.reading import Context, Entry, kind_of, servers_table
from mcpclient.config.values import ServerConfig

__all__ = ["DIALECT"]

_KNOWN = frozenset({"source", "command", "args", "env", "url", "headers", "enabled", "settings"})
_COMMAND_KEYS = frozenset({"path", "args", "env"})


def _read_entry(ctx: Context, name: str, raw: object, path: list[str | int]) -> Any:
    e = Entry(ctx, name, raw, path)
    if not e.ok:
        return None
    e.unknown(_KNOWN)
    source = e.take_str("source", expand=False)
    if source == "extension" or (source is None and e.has("settings") and not e.has("command")):
        e.warn("source", "a Zed extension's server: its command is the extension's; skipped")
        return None
    fields: dict[str, Any] = {"disabled": e.take_bool("enabled", "disabled") is False}
    if e.has("url"):
        fields["transport"] = "http"
        fields["url"] = e.take_str("url")
        fields["headers"] = e.take_str_map("headers")
    else:
        fields["transport"] = "stdio"
        command = e.raw.get("command")
        if isinstance(command, dict):
            inner = Entry(ctx, name, command, e.at("command"))
            inner.unknown(_COMMAND_KEYS)
            fields["command"] = inner.take_str("path", "command")
            fields["args"] = inner.take_str_list("args")
            fields["env"] = inner.take_str_map("env")
            e.origins.update(inner.origins)
        elif command is not None and not isinstance(command, str):
            e.error("command", f"must be a string or an object, got {kind_of(command)}")
        else:
            fields["command"] = e.take_str("command")
        if not isinstance(command, dict):
            fields["args"] = e.take_str_list("args")
            fields["env"] = e.take_str_map("env")
    if e.has("settings"):
        e.ignored(["settings"], "extension settings")
    return e.build(**fields)


def _read(ctx: Context, document: Any, options: ReadOptions) -> dict[str, ServerConfig]:
    table = servers_table(ctx, document, ["context_servers"])
    out: dict[str, ServerConfig] = {}
    for name, raw in (table or {}).items():
        server = _read_entry(ctx, name, raw, ["context_servers", name])
        if server is not None:
            out[name] = server
    return out


def _write(servers: Sequence[ServerConfig], lost: list[str]) -> Any:
    table: dict[str, Any] = {}
    for s in servers:
        entry: dict[str, Any] = {"source": "custom"}
        if s.transport == "sse":
            lost.append(f"server {s.name!r}: Zed cannot express an explicit SSE transport")
        if s.is_remote:
            entry["url"] = s.url
            if s.headers:
                entry["headers"] = dict(s.headers)
        else:
            entry["command"] = s.command
            entry["args"] = list(s.args)
            if s.env:
                entry["env"] = dict(s.env)
            if s.cwd:
                lost.append(f"server {s.name!r}: Zed cannot express a working directory")
        if s.disabled:
            entry["enabled"] = False
        lose_client_settings(lost, s, "Zed")
        table[s.name] = entry
    return {"context_servers": table}


DIALECT = Dialect("zed", "Zed", "none", "jsonc", _read, _write)
