"""mcpclient.config: each host's documented file, read from tests/fixtures/config/."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from mcpclient import ConfigError, config
from mcpclient.config import ConfigFile, ConfigWarning

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "config"
ENV = {
    "API_KEY": "k1",
    "TOOL_TOKEN": "tt",
    "HOME": "/home/me",
    "LINEAR_TOKEN": "lin",
    "SCRIPTS_KEY": "sk",
    "GITHUB_TOKEN": "gh",
    "FIGMA_TOKEN": "fg",
    "REPO_PATH": "/repo",
    "PORT": "8080",
    "DB_CONNECTION_STRING": "db",
    "EXTERNAL_API_KEY": "ext",
    "API_TOKEN": "at",
    "CONTEXT7_HOME": "/c7",
    "FIGMA_OAUTH_TOKEN": "fo",
    "FIGMA_API_KEY": "fa",
    "DB_PASSWORD": "dbp",
}


def load(relative: str | ConfigFile, **kwargs: Any) -> config.LoadedConfig:
    kwargs.setdefault("env", ENV)
    source = relative if isinstance(relative, ConfigFile) else FIXTURES / relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return config.load(source, **kwargs)


def load_warned(relative: str, **kwargs: Any) -> tuple[config.LoadedConfig, list[str]]:
    kwargs.setdefault("env", ENV)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = config.load(FIXTURES / relative, **kwargs)
    assert all(issubclass(w.category, ConfigWarning) for w in caught)
    return result, [str(w.message) for w in caught]


def test_claude_desktop_stdio_and_a_reported_url_entry() -> None:
    result, warned = load_warned("claude-desktop/claude_desktop_config.json")
    assert result.dialect == "claude-desktop"
    assert result.reason == "file name"
    assert list(result) == ["filesystem", "github", "remote"]
    fs = result["filesystem"]
    assert (fs.transport, fs.command) == ("stdio", "npx")
    assert fs.args == ("-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop")
    assert result["github"].env_mapping == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktop_secret_0001"
    }
    # Claude Desktop skips a URL entry: listed, disabled, and reported.
    assert result["remote"].disabled
    assert [w for w in warned if "/mcpServers/remote/url" in w and "stdio servers only" in w]
    assert result.warnings == tuple(warned)
    assert result.enabled().keys() == {"filesystem", "github"}


def test_claude_code_project_scope_expansion_and_kinds() -> None:
    result = load("claude-code/.mcp.json")
    assert result.dialect == "claude-code"
    api, events, local = result["api"], result["events"], result["local"]
    assert (api.transport, api.url) == ("http", "https://api.example.com/mcp")  # default used
    assert api.header_mapping == {"Authorization": "Bearer k1"}
    assert (events.transport, events.url) == ("sse", "https://events.example.com/sse")
    assert local.command == "/usr/local/bin/mcp-tool"
    assert local.args == ("--config", "/etc/tool.json", "--verbose")
    assert local.env_mapping == {"CACHE_DIR": "/home/me/.cache", "TOKEN": "tt"}
    overridden = load("claude-code/.mcp.json", env={**ENV, "API_BASE_URL": "https://other.example"})
    assert overridden["api"].url == "https://other.example/mcp"


def test_claude_code_user_and_local_scopes() -> None:
    user = load("claude-code/.claude.json")
    assert list(user) == ["everywhere"]  # the other top-level keys are settings, not warned
    local = load(
        ConfigFile(
            "claude-code",
            "local",
            FIXTURES / "claude-code/.claude.json",
            project="/home/me/work/app",
        )
    )
    assert list(local) == ["app-db"]
    assert local["app-db"].env_mapping == {"DB_PASSWORD": "dbp"}
    assert (
        local["app-db"]
        .origin("env")
        .endswith(".claude.json:/projects/~1home~1me~1work~1app/mcpServers/app-db/env")
    )


def test_cursor_editor_variables_env_file_and_comments() -> None:
    result = load("cursor/.cursor/mcp.json")
    assert result.dialect == "cursor"
    workspace = FIXTURES / "cursor"
    linear, scripts = result["linear"], result["scripts"]
    assert (linear.transport, linear.url) == ("http", "https://mcp.linear.app/mcp")
    assert linear.header_mapping == {"Authorization": "Bearer lin"}
    assert scripts.command == f"{workspace}/bin/serve"
    assert scripts.args == ("--home", str(Path.home()), "--project", "cursor")
    # envFile first, then env over it
    assert scripts.env == (("FROM_FILE", "cursor-file-value"), ("API_KEY", "sk"))


def test_vscode_servers_inputs_env_file_jsonc() -> None:
    asked: list[tuple[str, Any]] = []

    def answer(ident: str, spec: Any) -> str:
        asked.append((ident, dict(spec)))
        return "pk"

    result = load("vscode/.vscode/mcp.json", inputs=answer)
    assert result.dialect == "vscode"
    assert asked == [
        (
            "perplexity-key",
            {
                "type": "promptString",
                "id": "perplexity-key",
                "description": "Perplexity API Key",
                "password": True,
            },
        )
    ]
    perplexity = result["perplexity"]
    assert perplexity.env_mapping == {
        "LOG_LEVEL": "debug",
        "QUOTED": "two words",
        "SINGLE": "raw $value",
        "PERPLEXITY_API_KEY": "pk",
    }
    assert result["github"].transport == "http"
    assert result["github"].header_mapping == {"Authorization": "Bearer gh"}
    assert (result["legacy"].transport, result["legacy"].url) == (
        "sse",
        "http://localhost:3000/sse",
    )
    # a mapping answers too
    assert (
        load("vscode/.vscode/mcp.json", inputs={"perplexity-key": "m"})["perplexity"].env_mapping[
            "PERPLEXITY_API_KEY"
        ]
        == "m"
    )


def test_windsurf_server_url_disabled_and_disabled_tools() -> None:
    result = load("windsurf/.codeium/windsurf/mcp_config.json")
    assert result.dialect == "windsurf"
    figma, git = result["figma"], result["git"]
    assert (figma.transport, figma.url) == ("http", "https://mcp.figma.com/mcp")
    assert figma.origin("url").endswith("mcp_config.json:/mcpServers/figma/serverUrl")
    assert figma.header_mapping == {"Authorization": "Bearer fg"}
    assert git.args == ("mcp-server-git", "--repository", "/repo")
    assert git.disabled
    assert git.tool_filter.deny == ("git_reset", "git_push")
    assert not git.tool_filter.permits("git_push") and git.tool_filter.permits("git_status")


def test_gemini_http_url_vs_url_timeout_ms_trust_filters_and_excluded() -> None:
    result = load("gemini/.gemini/settings.json")
    assert result.dialect == "gemini"
    tools, http, sse, off = (
        result[n] for n in ("pythonTools", "httpServer", "sseServer", "offServer")
    )
    assert tools.args == ("-m", "my_mcp_server", "--port", "8080")
    assert tools.env_mapping == {"DATABASE_URL": "db", "API_KEY": "ext"}
    assert tools.cwd == str(FIXTURES / "gemini" / "mcp-servers" / "python")
    assert tools.tool_timeout == 15.0  # 15000 ms
    assert tools.trust is False
    assert tools.tool_filter.allow == ("query", "list_tables")
    assert tools.tool_filter.deny == ("drop_table",)
    assert (http.transport, http.tool_timeout, http.trust) == ("http", 5.0, True)
    assert http.header_mapping == {"Authorization": "Bearer at"}
    assert sse.transport == "sse"
    assert off.disabled and not tools.disabled


def test_gemini_allowed_list_disables_the_others() -> None:
    document = {
        "mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}},
        "mcp": {"allowed": ["a"]},
    }
    result = config.load(document, dialect="gemini")
    assert not result["a"].disabled and result["b"].disabled


def test_codex_toml_every_key() -> None:
    result = load("codex/.codex/config.toml")
    assert result.dialect == "codex"
    c7, figma, old = result["context7"], result["figma"], result["old"]
    assert c7.env == (("CONTEXT7_API_KEY", "ctx7_secret_0002"), ("CONTEXT7_HOME", "/c7"))
    assert c7.cwd == "/tmp"
    assert (c7.startup_timeout, c7.tool_timeout) == (20.0, 45.5)
    assert c7.tool_filter.allow == ("resolve-library-id", "get-library-docs")
    assert figma.transport == "http"
    assert figma.header_mapping == {
        "X-Figma-Region": "us-east-1",
        "X-Api-Key": "fa",
        "Authorization": "Bearer fo",
    }
    assert figma.startup_timeout == 2.5  # startup_timeout_ms = 2500
    assert figma.tool_filter.deny == ("delete_*",)
    assert not figma.tool_filter.permits("delete_file") and figma.tool_filter.permits("get_file")
    assert old.disabled


def test_codex_startup_timeout_sec_wins_over_ms() -> None:
    text = '[mcp_servers.a]\ncommand = "x"\nstartup_timeout_sec = 3\nstartup_timeout_ms = 9000\n'
    with pytest.warns(ConfigWarning, match="startup_timeout_ms"):
        result = config.load(text, dialect="codex")
    assert result["a"].startup_timeout == 3.0


def test_zed_context_servers_both_command_forms_and_extensions() -> None:
    result, warned = load_warned("zed/.zed/settings.json")
    assert result.dialect == "zed"
    assert list(result) == ["postgres", "older-form", "remote"]
    assert result["postgres"].env_mapping == {"PGPASSWORD": "zed_secret_0003"}
    older = result["older-form"]
    assert (older.command, older.args, older.disabled) == ("/usr/bin/mcp-old", ("--stdio",), True)
    assert result["remote"].transport == "http"
    assert [w for w in warned if "mcp-server-github" in w and "extension" in w]


def test_cline_types_disabled_auto_approve_timeout_seconds() -> None:
    result = load("cline/cline_mcp_settings.json")
    assert result.dialect == "cline"
    weather, remote, old = result["weather"], result["remote"], result["old-sse"]
    assert weather.auto_approve == ("get_forecast",)
    assert weather.tool_timeout == 90.0
    assert not weather.disabled
    assert (remote.transport, remote.disabled) == ("http", True)
    assert old.transport == "sse"  # a URL without a type is Cline's SSE


def test_fastmcp_transport_inference_and_auth() -> None:
    result = load("fastmcp/mcp.json")
    assert (result.dialect, result.reason) == ("fastmcp", "keys: transport")
    assert result["weather"].cwd == "/srv/weather"
    assistant = result["assistant"]
    assert assistant.header_mapping == {
        "X-Team": "core",
        "Authorization": "Bearer fastmcp_token_0008",
    }
    assert result["streamer"].transport == "sse"  # inferred from /sse
    assert result["plain"].transport == "http"


@pytest.mark.parametrize(
    ("document", "dialect", "reason"),
    [
        ({"servers": {}}, "vscode", "keys: servers"),
        ({"context_servers": {}}, "zed", "keys: context_servers"),
        ({"mcpServers": {"a": {"serverUrl": "https://x.example"}}}, "windsurf", "keys: serverUrl"),
        ({"mcpServers": {"a": {"httpUrl": "https://x.example"}}}, "gemini", "keys: httpUrl"),
        ({"mcpServers": {"a": {"command": "x", "autoApprove": []}}}, "cline", "keys: autoApprove"),
        (
            {"mcpServers": {"a": {"type": "streamableHttp", "url": "https://x.example"}}},
            "cline",
            "type: streamableHttp",
        ),
        (
            {"mcpServers": {"a": {"type": "http", "url": "https://x.example"}}},
            "claude-code",
            "keys: type",
        ),
        ({"mcpServers": {"a": {"command": "x"}}}, "fastmcp", "keys: mcpServers"),
    ],
)
def test_auto_detection_by_keys(document: dict[str, Any], dialect: str, reason: str) -> None:
    result = config.load(document)
    assert (result.dialect, result.reason) == (dialect, reason)


def test_auto_detection_of_toml_text_and_given_dialect() -> None:
    result = config.load('[mcp_servers.a]\ncommand = "x"\n')
    assert (result.dialect, result.reason) == ("codex", "TOML")
    given = config.load({"mcpServers": {"a": {"command": "x"}}}, dialect="claude-desktop")
    assert (given.dialect, given.reason) == ("claude-desktop", "given")


def test_unknown_dialect_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown dialect"):
        config.load({}, dialect="notepad")


def test_relative_command_is_resolved_against_the_file() -> None:
    document = {"mcpServers": {"a": {"command": "./bin/server", "cwd": "/srv/x"}}}
    result = config.load(document, dialect="fastmcp")
    assert result["a"].command == "/srv/x/bin/server"
    definition = result["a"].definition()
    assert definition.transport.command == "/srv/x/bin/server"  # type: ignore[union-attr]


def test_claude_desktop_type_without_url_is_skipped_with_a_warning() -> None:
    document = {"mcpServers": {"t": {"type": "http"}, "ok": {"command": "x"}}}
    with pytest.warns(ConfigWarning, match="/mcpServers/t/type: .*stdio servers only"):
        result = config.load(document, dialect="claude-desktop")
    assert list(result) == ["ok"]


def test_a_path_with_a_tilde_is_the_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}}')
    result = config.load("~/.cursor/mcp.json")
    assert (result.dialect, list(result)) == ("cursor", ["a"])
    assert result.source == str(tmp_path / ".cursor" / "mcp.json")
