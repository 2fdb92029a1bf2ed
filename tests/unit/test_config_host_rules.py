"""Each host's config read as that host reads it (issue 28): units, expansion, locations.

Every document below is a fixture of one dialect; the comment above it names
the host's own source for the rule it pins.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from mcpclient import PROFILE_DEFAULT, PROFILE_LEGACY, config
from mcpclient.config import ConfigFileError, ConfigWarning


def load(document: Any, dialect: str, **kwargs: Any) -> config.LoadedConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return config.load(document, dialect=dialect, **kwargs)


# --- 1. timeout units, per dialect ------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "document", "seconds"),
    [
        # fastmcp src/fastmcp/mcp_config.py: timeout, "Maximum response time in milliseconds"
        ("fastmcp", {"mcpServers": {"s": {"command": "x", "timeout": 20000}}}, 20.0),
        # Cline src/services/mcp/McpHub.ts: timeout in seconds (min 1, default 60)
        ("cline", {"mcpServers": {"s": {"command": "x", "timeout": 90}}}, 90.0),
        # Gemini CLI docs/tools/mcp-server.md: timeout in milliseconds
        ("gemini", {"mcpServers": {"s": {"command": "x", "timeout": 15000}}}, 15.0),
        # Claude Code: timeout in milliseconds (dev.to/quintetkit, "I set a 500ms timeout")
        (
            "claude-code",
            {"mcpServers": {"s": {"type": "http", "url": "https://x.example", "timeout": 600000}}},
            600.0,
        ),
        # Codex docs/config.md: tool_timeout_sec in seconds
        ("codex", {"mcp_servers": {"s": {"command": "x", "tool_timeout_sec": 45}}}, 45.0),
    ],
)
def test_tool_timeout_units(dialect: str, document: dict[str, Any], seconds: float) -> None:
    assert load(document, dialect)["s"].tool_timeout == seconds


def test_claude_code_ignores_a_timeout_under_a_second() -> None:
    document = {"mcpServers": {"s": {"type": "stdio", "command": "x", "timeout": 500}}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server = config.load(document, dialect="claude-code")["s"]
    assert server.tool_timeout is None
    assert any("ignores a timeout under 1 s" in str(w.message) for w in caught)


def test_codex_startup_timeout_ms_is_milliseconds() -> None:
    # Codex docs/config.md: startup_timeout_sec (seconds) or startup_timeout_ms
    server = load({"mcp_servers": {"s": {"command": "x", "startup_timeout_ms": 2500}}}, "codex")
    assert server["s"].startup_timeout == 2.5


@pytest.mark.parametrize(
    ("dialect", "document"),
    [
        # Cursor, Windsurf, VS Code, Zed: no per-server timeout key in the file
        ("cursor", {"mcpServers": {"s": {"command": "x", "timeout": 5}}}),
        ("windsurf", {"mcpServers": {"s": {"command": "x", "timeout": 5}}}),
        ("vscode", {"servers": {"s": {"command": "x", "timeout": 5}}}),
        ("zed", {"context_servers": {"s": {"command": "x", "timeout": 5}}}),
    ],
)
def test_hosts_without_a_timeout_key_ignore_one(dialect: str, document: dict[str, Any]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server = config.load(document, dialect=dialect)["s"]
    assert server.tool_timeout is None
    assert any("timeout: unknown key" in str(w.message) for w in caught)


def test_fastmcp_timeout_is_written_back_in_milliseconds() -> None:
    loaded = load({"mcpServers": {"s": {"command": "x", "timeout": 20000}}}, "fastmcp")
    assert '"timeout": 20000' in config.dump(loaded, "fastmcp").text
    assert '"timeout": 20' in config.dump(loaded, "cline").text  # Cline: seconds


# --- 2. Cline expands ${env:VAR} in env, url and headers ------------------------


# Cline src/services/mcp/McpHub.ts: ${env:VAR} in a server's env, url and headers.
CLINE = {
    "mcpServers": {
        "local": {"command": "srv-${env:HOST_BIT}", "env": {"TOKEN": "${env:TOKEN}"}},
        "remote": {
            "type": "streamableHttp",
            "url": "https://${env:HOST_BIT}.example/mcp",
            "headers": {"Authorization": "Bearer ${env:TOKEN}"},
        },
    }
}


def test_cline_expands_env_url_and_headers_only() -> None:
    loaded = load(CLINE, "cline", env={"TOKEN": "s3cr3t", "HOST_BIT": "api"})
    assert loaded["local"].env_mapping == {"TOKEN": "s3cr3t"}
    assert loaded["local"].command == "srv-${env:HOST_BIT}"  # Cline leaves command as written
    assert loaded["remote"].url == "https://api.example/mcp"
    assert loaded["remote"].header_mapping == {"Authorization": "Bearer s3cr3t"}


def test_cline_unset_variable_is_an_error() -> None:
    with pytest.raises(ConfigFileError, match="environment variable TOKEN is not set"):
        load(CLINE, "cline", env={"HOST_BIT": "api"})


# --- 3. Windsurf ${file:/path} and ${env:VAR} -------------------------------------


def windsurf(token_file: Path) -> dict[str, Any]:
    # docs.windsurf.com/windsurf/cascade/mcp, "Config interpolation": ${env:VAR} and
    # ${file:/path} in command, args, env, serverUrl, url and headers.
    return {
        "mcpServers": {
            "remote": {
                "serverUrl": "https://${env:HOST_BIT}.example/mcp",
                "headers": {"Authorization": "Bearer ${file:" + str(token_file) + "}"},
            },
            "local": {
                "command": "${env:BIN}/srv",
                "args": ["--key=${file:" + str(token_file) + "}"],
                "env": {"K": "${file:" + str(token_file) + "}"},
            },
        }
    }


def test_windsurf_expands_files_trimmed_and_env(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("  tok-123\n")
    loaded = load(windsurf(token), "windsurf", env={"HOST_BIT": "api", "BIN": "/opt"})
    assert loaded["remote"].url == "https://api.example/mcp"
    assert loaded["remote"].header_mapping == {"Authorization": "Bearer tok-123"}
    assert loaded["local"].command == "/opt/srv"
    assert loaded["local"].args == ("--key=tok-123",)
    assert loaded["local"].env_mapping == {"K": "tok-123"}


def test_windsurf_missing_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    with pytest.raises(ConfigFileError) as info:
        load(windsurf(missing), "windsurf", env={"HOST_BIT": "api", "BIN": "/opt"})
    assert f"file {missing} cannot be read" in info.value.message
    assert "/mcpServers/remote/headers/Authorization" in info.value.message


# --- 4. Codex TOML locations -------------------------------------------------------


def test_codex_entry_with_command_and_url_names_its_table() -> None:
    # codex-rs config: McpServerTransportConfig is Stdio {command} or StreamableHttp {url}
    text = '[mcp_servers.both]\ncommand = "x"\nurl = "https://x.example/mcp"\n'
    with pytest.raises(ConfigFileError) as info:
        load(text, "codex")
    (problem,) = info.value.problems
    assert problem.startswith("<string>:mcp_servers.both: sets both command")


def test_codex_locations_are_dotted_keys_quoted_when_needed() -> None:
    text = '[mcp_servers."my server"]\ncommand = "x"\ntool_timeout_sec = "soon"\n'
    with pytest.raises(ConfigFileError) as info:
        load(text, "codex")
    assert info.value.problems[0].startswith(
        '<string>:mcp_servers."my server".tool_timeout_sec: must be a positive number'
    )


# --- 5. URL entries of hosts that fall back to HTTP+SSE ---------------------------


@pytest.mark.parametrize(
    ("dialect", "document"),
    [
        # docs.cursor.com, model-context-protocol: Streamable HTTP, else SSE
        ("cursor", {"mcpServers": {"s": {"url": "https://x.example/sse"}}}),
        # docs.windsurf.com/windsurf/cascade/mcp: serverUrl speaks Streamable HTTP or SSE
        ("windsurf", {"mcpServers": {"s": {"serverUrl": "https://x.example/sse"}}}),
        # code.visualstudio.com mcp-servers: "first tries Streamable HTTP, falls back to SSE"
        ("vscode", {"servers": {"s": {"type": "http", "url": "https://x.example/sse"}}}),
        ("vscode", {"servers": {"s": {"url": "https://x.example/sse"}}}),
    ],
)
def test_fallback_hosts_carry_the_legacy_profile(dialect: str, document: dict[str, Any]) -> None:
    server = load(document, dialect)["s"]
    assert (server.transport, server.sse_fallback) == ("http", True)
    definition = server.definition()
    assert definition.transport.kind == "streamablehttp"
    assert definition.profile == PROFILE_LEGACY


@pytest.mark.parametrize(
    ("dialect", "document", "kind", "profile"),
    [
        # Claude Code type: sse is the SSE transport itself
        (
            "claude-code",
            {"mcpServers": {"s": {"type": "sse", "url": "https://x.example/sse"}}},
            "sse",
            PROFILE_LEGACY,
        ),
        # Cline: a url without type is its SSE transport (McpHub.ts)
        ("cline", {"mcpServers": {"s": {"url": "https://x.example/sse"}}}, "sse", PROFILE_LEGACY),
        # Claude Code type: http does not fall back: the library's default stays
        (
            "claude-code",
            {"mcpServers": {"s": {"type": "http", "url": "https://x.example/mcp"}}},
            "streamablehttp",
            PROFILE_DEFAULT,
        ),
    ],
)
def test_other_url_entries(
    dialect: str, document: dict[str, Any], kind: str, profile: object
) -> None:
    definition = load(document, dialect)["s"].definition()
    assert (definition.transport.kind, definition.profile) == (kind, profile)


# --- unresolved references (strict=False) ----------------------------------------


def test_lenient_load_lists_what_it_could_not_resolve() -> None:
    document = {
        "mcpServers": {
            "a": {"type": "http", "url": "https://x.example", "headers": {"A": "${UNSET}"}},
            "b": {"type": "stdio", "command": "x"},
        }
    }
    loaded = load(document, "claude-code", env={}, strict=False)
    assert loaded["a"].unresolved == (("<dict>:/mcpServers/a/headers/A", "env", "UNSET"),)
    assert loaded["b"].unresolved == ()
