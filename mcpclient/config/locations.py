"""Where each host keeps its MCP configuration, and which of those files exist.

Each host's files are listed highest precedence first (the one whose entry
wins when two define the same server name). Project files are looked for in
``cwd`` itself (no walking up to a repository root). When ``home`` is given
the environment (``XDG_CONFIG_HOME``, ``APPDATA``, ``CODEX_HOME``) is not
consulted, so a test can point discovery at a scratch directory.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcpclient.config.files import read_regular
from mcpclient.config.values import ConfigFile

__all__ = ["candidates", "discover"]

#: ``~/.claude.json`` is read only to find the local scope (a project entry) up to this size.
_MAX_CLAUDE_JSON = 16 * 1024 * 1024


def _config_dir(home: Path, platform: str, use_env: bool) -> Path:
    """The per-user application settings directory of the platform."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        appdata = os.environ.get("APPDATA") if use_env else None
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = os.environ.get("XDG_CONFIG_HOME") if use_env else None
    return Path(xdg) if xdg else home / ".config"


def candidates(
    cwd: Path, home: Path, *, platform: str | None = None, use_env: bool = False
) -> list[ConfigFile]:
    """Every file a host may read, present or not, in each host's precedence."""
    platform = platform or sys.platform
    app = _config_dir(home, platform, use_env)
    code_user = app / "Code" / "User"
    codex_home = os.environ.get("CODEX_HOME") if use_env else None
    zed_user = (
        app / "Zed" / "settings.json"
        if platform == "win32"
        else home / ".config" / "zed" / "settings.json"
    )
    if platform == "linux" and use_env and os.environ.get("XDG_CONFIG_HOME"):
        zed_user = app / "zed" / "settings.json"
    return [
        ConfigFile("claude-desktop", "user", app / "Claude" / "claude_desktop_config.json"),
        ConfigFile("claude-code", "local", home / ".claude.json", project=str(cwd)),
        ConfigFile("claude-code", "project", cwd / ".mcp.json"),
        ConfigFile("claude-code", "user", home / ".claude.json"),
        ConfigFile("cursor", "project", cwd / ".cursor" / "mcp.json"),
        ConfigFile("cursor", "global", home / ".cursor" / "mcp.json"),
        ConfigFile("vscode", "workspace", cwd / ".vscode" / "mcp.json"),
        ConfigFile("vscode", "user", code_user / "mcp.json"),
        ConfigFile("windsurf", "user", home / ".codeium" / "windsurf" / "mcp_config.json"),
        ConfigFile("gemini", "project", cwd / ".gemini" / "settings.json"),
        ConfigFile("gemini", "user", home / ".gemini" / "settings.json"),
        ConfigFile("codex", "project", cwd / ".codex" / "config.toml"),
        ConfigFile(
            "codex",
            "user",
            (Path(codex_home) if codex_home else home / ".codex") / "config.toml",
        ),
        ConfigFile("zed", "project", cwd / ".zed" / "settings.json"),
        ConfigFile("zed", "user", zed_user),
        ConfigFile(
            "cline",
            "user",
            code_user
            / "globalStorage"
            / "saoudrizwan.claude-dev"
            / "settings"
            / "cline_mcp_settings.json",
        ),
    ]


def _has_project(path: Path, project: str) -> bool:
    """Whether ``~/.claude.json`` has a ``projects.<project>.mcpServers`` entry."""
    try:
        document = json.loads(read_regular(path, _MAX_CLAUDE_JSON))
    except (OSError, ValueError, RecursionError):
        # FileReadError (a FIFO, too large) and JSONDecodeError are ValueErrors;
        # json raises RecursionError on deep nesting: either way, no entry.
        return False
    projects = document.get("projects") if isinstance(document, dict) else None
    entry = projects.get(project) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and isinstance(entry.get("mcpServers"), dict)


def discover(
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    *,
    platform: str | None = None,
) -> list[ConfigFile]:
    """The configuration files present, for every host and scope.

    Args:
        cwd: the project directory (default: the current directory).
        home: the user's home (default: ``Path.home()``, and the environment's
            ``XDG_CONFIG_HOME``, ``APPDATA`` and ``CODEX_HOME`` are honoured).
        platform: ``sys.platform`` to lay the paths out for (default: this one).

    Returns:
        :class:`~mcpclient.config.ConfigFile` values, grouped by host, each
        host's files highest precedence first. Claude Code's ``local`` scope
        is listed only when ``~/.claude.json`` has an entry for ``cwd``.

    Thread safety: reads the file system only; safe from any thread.
    """
    use_env = home is None
    cwd_path = Path(cwd if cwd is not None else os.getcwd()).resolve()
    home_path = Path(home) if home is not None else Path.home()
    found = []
    for candidate in candidates(cwd_path, home_path, platform=platform, use_env=use_env):
        if not candidate.path.is_file():
            continue
        if candidate.project is not None and not _has_project(candidate.path, candidate.project):
            continue
        found.append(candidate)
    return found
