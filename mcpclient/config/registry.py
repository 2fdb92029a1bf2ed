"""Every dialect by name, and how ``dialect="auto"`` picks one.

Detection looks at the file's name and folder first (``.cursor/mcp.json``,
``claude_desktop_config.json``...), then at the document's keys
(``servers`` → VS Code, ``context_servers`` → Zed, ``mcp_servers`` → Codex,
and in ``mcpServers`` the keys only one host uses: ``serverUrl`` → Windsurf,
``httpUrl``/``includeTools``/``trust`` → Gemini CLI, ``transport`` →
FastMCP, ``autoApprove``/``streamableHttp`` → Cline, ``type`` → Claude Code).
A plain ``mcpServers`` document with none of them is read as FastMCP's
``MCPConfig``, the neutral form of the family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpclient.config import codex, gemini, mcpservers, vscode, zed
from mcpclient.config.dialect import Dialect

__all__ = ["ALIASES", "DIALECTS", "by_keys", "by_path", "get"]

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (*mcpservers.DIALECTS, vscode.DIALECT, gemini.DIALECT, codex.DIALECT, zed.DIALECT)
}
#: Other spellings accepted for ``dialect=``.
ALIASES = {
    "claude": "claude-desktop",
    "claude_desktop": "claude-desktop",
    "claude_code": "claude-code",
    "vs-code": "vscode",
    "code": "vscode",
    "gemini-cli": "gemini",
    "mcpconfig": "fastmcp",
}


def get(name: str) -> Dialect | None:
    """The dialect called ``name`` (or one of its aliases), or None."""
    key = name.lower()
    return DIALECTS.get(ALIASES.get(key, key))


def by_path(path: Path) -> str | None:
    """The dialect a file's name and folder identify, or None."""
    name = path.name
    parent = path.parent.name
    parts = {p.lower() for p in path.parts}
    if name == "claude_desktop_config.json":
        return "claude-desktop"
    if name in (".mcp.json", ".claude.json"):
        return "claude-code"
    if name == "cline_mcp_settings.json":
        return "cline"
    if name == "mcp_config.json" and ("windsurf" in parts or ".codeium" in parts):
        return "windsurf"
    if name == "mcp.json" and parent == ".cursor":
        return "cursor"
    if name == "mcp.json" and (parent == ".vscode" or (parent == "User" and "code" in parts)):
        return "vscode"
    if name == "settings.json" and parent == ".gemini":
        return "gemini"
    if name == "settings.json" and parent in (".zed", "zed", "Zed"):
        return "zed"
    if path.suffix == ".toml":
        return "codex"
    return None


def _entries(document: dict[str, Any]) -> list[dict[str, Any]]:
    table = document.get("mcpServers")
    if not isinstance(table, dict):
        return []
    return [entry for entry in table.values() if isinstance(entry, dict)]


def by_keys(document: object) -> tuple[str, str]:
    """The dialect a document's keys suggest, and the reason."""
    if not isinstance(document, dict):
        return "fastmcp", "not an object"
    for key, name in (("servers", "vscode"), ("context_servers", "zed"), ("mcp_servers", "codex")):
        if key in document and "mcpServers" not in document:
            return name, f"keys: {key}"
    entries = _entries(document)
    keys = {key for entry in entries for key in entry}
    kinds = {entry.get(key) for entry in entries for key in ("type", "transportType")}
    rules = (
        ({"serverUrl", "disabledTools"}, "windsurf"),
        ({"httpUrl", "includeTools", "excludeTools", "trust"}, "gemini"),
        ({"transport"}, "fastmcp"),
        ({"autoApprove", "transportType"}, "cline"),
    )
    for marks, name in rules:
        hit = sorted(marks & keys)
        if hit:
            return name, f"keys: {', '.join(hit)}"
    if "streamableHttp" in kinds:
        return "cline", "type: streamableHttp"
    if "type" in keys:
        return "claude-code", "keys: type"
    if isinstance(document.get("projects"), dict):
        return "claude-code", "keys: projects"
    return "fastmcp", "keys: mcpServers"
