"""VS Code's ``mcp.json``: top-level ``servers`` and ``inputs``, JSON with comments.

A server is ``{"type": "stdio", "command", "args", "env", "envFile", "cwd"}``
or ``{"type": "http" | "sse", "url", "headers"}`` (``type`` may be left out:
a ``command`` means stdio, a ``url`` means http). Strings expand
``${env:VAR}``, ``${workspaceFolder}``, ``${userHome}`` and ``${input:id}``;
the ``inputs`` entries (``{"type": "promptString", "id", "description",
"password"}``) are answered by the ``inputs=`` argument of ``load``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from mcpclient.config.dialect import Dialect, ReadOptions, lose_client_settings
from mcpclient.config.reading import Context, Entry, kind_of, servers_table
from mcpclient.config.values import ServerConfig

__all__ = ["DIALECT", "input_specs"]

_KINDS = {"stdio": "stdio", "http": "http", "sse": "sse"}
_KNOWN = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "envFile",
        "cwd",
        "url",
        "headers",
        "dev",
        "gallery",
        "version",
        "sandbox",
        "sandboxEnabled",
    }
)
_HOST_ONLY = ("dev", "gallery", "version", "sandbox", "sandboxEnabled")
_INPUT_REF = re.compile(r"\$\{input:([^}\"\\]+)\}")
_INPUT_KEYS = frozenset({"type", "id", "description", "password", "default", "options"})


def input_specs(document: object, problems: Any) -> dict[str, dict[str, Any]]:
    """The ``inputs`` entries by id (problems recorded)."""
    if not isinstance(document, dict) or "inputs" not in document:
        return {}
    inputs = document["inputs"]
    if not isinstance(inputs, list):
        problems.error(["inputs"], f"must be an array, got {kind_of(inputs)}")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for index, spec in enumerate(inputs):
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
            problems.error(["inputs", index], "an input must be an object with a string id")
            continue
        problems.unknown_keys(spec, _INPUT_KEYS, ["inputs", index])
        if spec["id"] in out:
            problems.error(["inputs", index, "id"], f"input id {spec['id']!r} is used twice")
        out[spec["id"]] = spec
    return out


def _read_entry(ctx: Context, name: str, raw: object, path: list[str | int]) -> Any:
    e = Entry(ctx, name, raw, path)
    if not e.ok:
        return None
    e.unknown(_KNOWN)
    e.ignored(_HOST_ONLY)
    kind = None
    if e.has("type"):
        raw_kind = e.take_str("type", "transport", expand=False)
        if raw_kind not in _KINDS:
            e.error("type", f"must be one of {', '.join(_KINDS)}")
            return None
        kind = _KINDS[raw_kind]
    elif e.has("url") and not e.has("command"):
        kind = "http"
    else:
        kind = "stdio"
    fields: dict[str, Any] = {"transport": kind}
    if kind == "stdio":
        fields["command"] = e.take_str("command")
        fields["args"] = e.take_str_list("args")
        fields["cwd"] = e.take_str("cwd")
        env = e.take_env_file(e.take_str_map("env") or [])
        fields["env"] = env or None
    else:
        fields["url"] = e.take_str("url")
        fields["headers"] = e.take_str_map("headers")
        # "VS Code first tries the Streamable HTTP transport and falls back to
        # SSE if HTTP is not supported" (code.visualstudio.com/docs/copilot/
        # customization/mcp-servers, configuration format).
        fields["sse_fallback"] = kind == "http"
    return e.build(**fields)


def _read(ctx: Context, document: Any, options: ReadOptions) -> dict[str, ServerConfig]:
    if not isinstance(document, dict):
        ctx.problems.error([], "the file must hold a JSON object")
        return {}
    if not options.shared:
        ctx.problems.unknown_keys(document, frozenset({"servers", "inputs", "$schema"}), [])
    if "servers" not in document and "mcpServers" in document:
        ctx.problems.error(["mcpServers"], "VS Code reads servers, not mcpServers")
    table = servers_table(ctx, document, ["servers"])
    out: dict[str, ServerConfig] = {}
    for name, raw in (table or {}).items():
        server = _read_entry(ctx, name, raw, ["servers", name])
        if server is not None:
            out[name] = server
    return out


def _write(servers: Sequence[ServerConfig], lost: list[str]) -> Any:
    table: dict[str, Any] = {}
    for s in servers:
        if s.disabled:
            lost.append(f"server {s.name!r}: VS Code cannot mark a server disabled; left out")
            continue
        entry: dict[str, Any] = {"type": s.transport}
        if s.is_remote:
            entry["url"] = s.url
            if s.headers:
                entry["headers"] = dict(s.headers)
        else:
            entry["command"] = s.command
            if s.args:
                entry["args"] = list(s.args)
            if s.env:
                entry["env"] = dict(s.env)
            if s.cwd:
                entry["cwd"] = s.cwd
        lose_client_settings(lost, s, "VS Code")
        table[s.name] = entry
    document: dict[str, Any] = {"servers": table}
    # A converted ${input:id} needs its inputs entry, or VS Code cannot ask for it;
    # a password prompt, as an input converted from a secret should be.
    ids = dict.fromkeys(_INPUT_REF.findall(json.dumps(table)))
    if ids:
        document = {
            "inputs": [
                {"type": "promptString", "id": ident, "description": ident, "password": True}
                for ident in ids
            ],
            **document,
        }
    return document


DIALECT = Dialect("vscode", "VS Code", "vscode", "jsonc", _read, _write)
