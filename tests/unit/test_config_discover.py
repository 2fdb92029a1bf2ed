"""mcpclient.config.discover: the files present, every host and scope, in precedence order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpclient import config
from mcpclient.config import ConfigFile


def touch(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    return home, cwd


def test_nothing_present(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    assert config.discover(cwd, home, platform="linux") == []


def test_every_host_and_scope_on_linux(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    cwd = cwd.resolve()
    claude_json = {"mcpServers": {}, "projects": {str(cwd): {"mcpServers": {"x": {}}}}}
    files = [
        touch(home / ".config/Claude/claude_desktop_config.json"),
        touch(home / ".claude.json", json.dumps(claude_json)),
        touch(cwd / ".mcp.json"),
        touch(cwd / ".cursor/mcp.json"),
        touch(home / ".cursor/mcp.json"),
        touch(cwd / ".vscode/mcp.json"),
        touch(home / ".config/Code/User/mcp.json"),
        touch(home / ".codeium/windsurf/mcp_config.json"),
        touch(cwd / ".gemini/settings.json"),
        touch(home / ".gemini/settings.json"),
        touch(cwd / ".codex/config.toml", ""),
        touch(home / ".codex/config.toml", ""),
        touch(cwd / ".zed/settings.json"),
        touch(home / ".config/zed/settings.json"),
        touch(
            home
            / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings"
            / "cline_mcp_settings.json"
        ),
    ]
    found = config.discover(cwd, home, platform="linux")
    assert [(f.host, f.scope) for f in found] == [
        ("claude-desktop", "user"),
        ("claude-code", "local"),
        ("claude-code", "project"),
        ("claude-code", "user"),
        ("cursor", "project"),
        ("cursor", "global"),
        ("vscode", "workspace"),
        ("vscode", "user"),
        ("windsurf", "user"),
        ("gemini", "project"),
        ("gemini", "user"),
        ("codex", "project"),
        ("codex", "user"),
        ("zed", "project"),
        ("zed", "user"),
        ("cline", "user"),
    ]
    assert found[1] == ConfigFile("claude-code", "local", home / ".claude.json", project=str(cwd))
    assert {f.path for f in found} == set(files)


def test_local_scope_needs_a_project_entry(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    touch(home / ".claude.json", json.dumps({"projects": {"/elsewhere": {"mcpServers": {}}}}))
    assert [(f.host, f.scope) for f in config.discover(cwd, home, platform="linux")] == [
        ("claude-code", "user")
    ]
    touch(home / ".claude.json", "not json")
    assert [(f.host, f.scope) for f in config.discover(cwd, home, platform="linux")] == [
        ("claude-code", "user")
    ]


@pytest.mark.parametrize(
    ("platform", "desktop", "vscode"),
    [
        (
            "darwin",
            "Library/Application Support/Claude/claude_desktop_config.json",
            "Library/Application Support/Code/User/mcp.json",
        ),
        (
            "win32",
            "AppData/Roaming/Claude/claude_desktop_config.json",
            "AppData/Roaming/Code/User/mcp.json",
        ),
    ],
)
def test_platform_locations(
    dirs: tuple[Path, Path], platform: str, desktop: str, vscode: str
) -> None:
    home, cwd = dirs
    touch(home / desktop)
    touch(home / vscode)
    touch(home / ".config/Claude/claude_desktop_config.json")  # the Linux place: not read here
    found = config.discover(cwd, home, platform=platform)
    assert [(f.host, f.path) for f in found] == [
        ("claude-desktop", home / desktop),
        ("vscode", home / vscode),
    ]


def test_a_discovered_file_loads_with_its_host_and_scope(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    cwd = cwd.resolve()
    document = {
        "mcpServers": {"user-one": {"type": "stdio", "command": "u"}},
        "projects": {str(cwd): {"mcpServers": {"local-one": {"type": "stdio", "command": "l"}}}},
    }
    touch(home / ".claude.json", json.dumps(document))
    local, user = config.discover(cwd, home, platform="linux")
    assert list(config.load(local)) == ["local-one"]
    assert list(config.load(user)) == ["user-one"]
    assert config.load(local).dialect == "claude-code"


def test_a_config_file_names_its_dialect_even_with_an_odd_name(tmp_path: Path) -> None:
    path = touch(tmp_path / "whatever.json", json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    result = config.load(ConfigFile("windsurf", "user", path))
    assert result.dialect == "windsurf"
