"""``load(references=True)`` and ``dump``: a converted file holds references, not values."""

from __future__ import annotations

import json
import tomllib
import warnings
from typing import Any

import pytest

from mcpclient import ConfigError, config
from mcpclient.config import ConfigWarning

SECRET = "s3cr3t-value"
ENV = {"TOKEN": SECRET, "GITHUB_TOKEN": SECRET, "KEY": SECRET}

# Claude Code docs (mcp, "Environment variable expansion in .mcp.json"): ${VAR}, ${VAR:-default}
CLAUDE_CODE = {
    "mcpServers": {
        "gh": {
            "type": "http",
            "url": "https://api.example/mcp",
            "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Key": "${KEY}"},
        },
        "local": {"type": "stdio", "command": "node", "env": {"TOKEN": "${TOKEN}"}},
    }
}


def refs_of(document: Any, dialect: str, **kw: Any) -> config.LoadedConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return config.load(document, dialect=dialect, references=True, env={}, **kw)


@pytest.mark.parametrize("target", config.DIALECTS)
def test_no_target_gets_a_value_and_no_variable_needs_to_be_set(target: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        loaded = config.load(CLAUDE_CODE, dialect="claude-code", references=True, env=ENV)
    dumped = config.dump(loaded, target)
    assert SECRET not in dumped.text
    assert "\x00" not in dumped.text
    assert all(SECRET not in line for line in dumped.lost)


@pytest.mark.parametrize(
    ("target", "header", "env"),
    [
        ("claude-code", "Bearer ${GITHUB_TOKEN}", "${TOKEN}"),
        ("cursor", "Bearer ${env:GITHUB_TOKEN}", "${env:TOKEN}"),
        ("windsurf", "Bearer ${env:GITHUB_TOKEN}", "${env:TOKEN}"),
        ("vscode", "Bearer ${env:GITHUB_TOKEN}", "${env:TOKEN}"),
        ("gemini", "Bearer ${GITHUB_TOKEN}", "${TOKEN}"),
        ("cline", "Bearer ${env:GITHUB_TOKEN}", "${env:TOKEN}"),
    ],
)
def test_references_in_each_targets_syntax(target: str, header: str, env: str) -> None:
    document = json.loads(config.dump(refs_of(CLAUDE_CODE, "claude-code"), target).text)
    table = document["servers" if target == "vscode" else "mcpServers"]
    assert table["gh"]["headers"]["Authorization"] == header
    assert table["local"]["env"]["TOKEN"] == env


def test_codex_gets_its_own_keys() -> None:
    dumped = config.dump(refs_of(CLAUDE_CODE, "claude-code"), "codex")
    document = tomllib.loads(dumped.text)["mcp_servers"]
    assert document["gh"]["bearer_token_env_var"] == "GITHUB_TOKEN"
    assert document["gh"]["env_http_headers"] == {"X-Key": "KEY"}
    assert document["local"]["env_vars"] == ["TOKEN"]
    assert "env" not in document["local"]


def test_what_a_target_cannot_express_is_listed_not_written() -> None:
    dumped = config.dump(refs_of(CLAUDE_CODE, "claude-code"), "zed")
    document = json.loads(dumped.text)["context_servers"]
    assert "headers" not in document["gh"] and "env" not in document["local"]
    assert (
        "server 'gh': Zed cannot reference environment variable GITHUB_TOKEN in"
        " headers.Authorization; left out"
    ) in dumped.lost


def test_codex_references_convert_back_to_a_json_host() -> None:
    # Codex docs/config.md: bearer_token_env_var, env_http_headers, env_vars name variables
    text = (
        '[mcp_servers.gh]\nurl = "https://api.example/mcp"\nbearer_token_env_var = "GH"\n'
        '[mcp_servers.gh.env_http_headers]\nX-Key = "KEY"\n'
    )
    document = json.loads(config.dump(refs_of(text, "codex"), "cursor").text)
    assert document["mcpServers"]["gh"]["headers"] == {
        "X-Key": "${env:KEY}",
        "Authorization": "Bearer ${env:GH}",
    }


def test_vscode_inputs_stay_inputs() -> None:
    # code.visualstudio.com mcp-servers: inputs + ${input:id}
    source = {
        "inputs": [{"type": "promptString", "id": "api-key", "password": True}],
        "servers": {"s": {"url": "https://x.example/mcp", "headers": {"K": "${input:api-key}"}}},
    }
    document = json.loads(config.dump(refs_of(source, "vscode"), "vscode").text)
    assert document["servers"]["s"]["headers"] == {"K": "${input:api-key}"}
    assert document["inputs"][0]["id"] == "api-key"
    lost = config.dump(refs_of(source, "vscode"), "cursor").lost
    assert any("cannot reference input api-key" in line for line in lost)


def test_a_server_with_references_cannot_connect() -> None:
    with pytest.raises(ConfigError, match="references=True"):
        refs_of(CLAUDE_CODE, "claude-code")["gh"].definition()
