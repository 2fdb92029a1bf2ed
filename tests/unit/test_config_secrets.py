"""No secret read from a config (env values, header values, tokens) shows in a repr,
an error, a warning or a log record."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import pytest

from mcpclient import ConfigError, Error, config
from tests.unit.test_config_dialects import FIXTURES

#: Every secret the fixtures hold inline, and every value the scan's environment gives.
INLINE = [
    "ghp_desktop_secret_0001",
    "ctx7_secret_0002",
    "zed_secret_0003",
    "zed_token_0004",
    "ghp_extension_0005",
    "cline_secret_0006",
    "cline_token_0007",
    "fastmcp_token_0008",
    "bad_value_0009",
    "bad_value_0010",
    "inline_secret_0011",
]
ENV_NAMES = [
    "API_KEY",
    "TOOL_TOKEN",
    "LINEAR_TOKEN",
    "SCRIPTS_KEY",
    "GITHUB_TOKEN",
    "FIGMA_TOKEN",
    "DB_CONNECTION_STRING",
    "EXTERNAL_API_KEY",
    "API_TOKEN",
    "FIGMA_OAUTH_TOKEN",
    "FIGMA_API_KEY",
    "DB_PASSWORD",
]
ENV = {name: f"S3CR3T-{name.lower()}-value" for name in ENV_NAMES}
ENV.update({"HOME": "/home/me", "REPO_PATH": "/repo", "PORT": "8080", "CONTEXT7_HOME": "/c7"})
INPUT = "S3CR3T-input-answer"
SECRETS = [*INLINE, *(ENV[name] for name in ENV_NAMES), INPUT]

GOOD = [
    "claude-desktop/claude_desktop_config.json",
    "claude-code/.mcp.json",
    "claude-code/.claude.json",
    "cursor/.cursor/mcp.json",
    "vscode/.vscode/mcp.json",
    "windsurf/.codeium/windsurf/mcp_config.json",
    "gemini/.gemini/settings.json",
    "codex/.codex/config.toml",
    "zed/.zed/settings.json",
    "cline/cline_mcp_settings.json",
    "fastmcp/mcp.json",
]
BAD = [
    "bad/claude-code/.mcp.json",
    "bad/codex/.codex/config.toml",
    "bad/vscode/.vscode/mcp.json",
]


def _texts_of_error(error: BaseException) -> list[str]:
    texts = [str(error), repr(error), *(str(a) for a in error.args)]
    texts += list(getattr(error, "problems", ()))
    return texts


def _scan(texts: list[str]) -> list[tuple[str, str]]:
    return [(secret, text) for text in texts for secret in SECRETS if secret in text]


def test_the_scan_sees_a_secret_when_there_is_one() -> None:
    assert _scan([f"header {ENV['API_KEY']}"]) != []


def test_no_secret_in_any_repr_error_warning_or_log(caplog: pytest.LogCaptureFixture) -> None:
    texts: list[str] = []
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for relative in GOOD:
            for strict in (True, False):
                loaded = config.load(
                    FIXTURES / relative, env=ENV, inputs={"perplexity-key": INPUT}, strict=strict
                )
                texts += [repr(loaded), str(loaded)]
                for server in loaded.values():
                    texts += [repr(server), str(server), repr(server.tool_filter)]
                    texts += [where for _, where in server.origins]
                    try:
                        definition = server.definition()
                    except ConfigError as exc:  # e.g. plain http:// to a remote host
                        texts += _texts_of_error(exc)
                    else:
                        texts += [repr(definition), repr(definition.transport)]
                dumped = config.dump(loaded, loaded.dialect)
                texts += [repr(dumped), *dumped.lost]
                # without the variables: every unset one is an error or a warning
                try:
                    config.load(FIXTURES / relative, env={}, strict=strict)
                except Error as exc:
                    texts += _texts_of_error(exc)
        for relative in BAD:
            for strict in (True, False):
                with pytest.raises(Error) as info:
                    config.load(FIXTURES / relative, env=ENV, inputs={"key": INPUT}, strict=strict)
                texts += _texts_of_error(info.value)
    texts += [str(w.message) for w in caught]
    texts += [record.getMessage() for record in caplog.records]
    texts += [str(record.args) for record in caplog.records]
    assert caught, "the scan must have seen warnings"
    assert any(record.name == "mcpclient.config" for record in caplog.records)
    assert _scan(texts) == []


@pytest.mark.parametrize(
    "entry",
    [
        {"type": "http", "url": "https://x.example/mcp?key=S3CR3T-api_key-value"},
        {"type": "http", "url": "https://user:S3CR3T-api_key-value@x.example/mcp"},
        {
            "type": "http",
            "url": "https://x.example/mcp",
            "headers": {"Bad Name": "S3CR3T-api_key-value"},
        },
        {
            "type": "http",
            "url": "https://x.example/mcp",
            "headers": {"H": "S3CR3T-api_key-value\n"},
        },
        {"type": "stdio", "command": "x", "env": {"A=B": "S3CR3T-api_key-value"}},
        {"type": "stdio", "command": "x", "args": ["--key=S3CR3T-api_key-value"]},
        {
            "type": "stdio",
            "command": "x",
            "env": {"K": 12345},
            "headers": {"K": "S3CR3T-api_key-value"},
        },
    ],
)
def test_bad_values_are_never_quoted(entry: dict[str, Any]) -> None:
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            server = config.load({"mcpServers": {"s": entry}}, dialect="claude-code")["s"]
        except Error as exc:
            texts += _texts_of_error(exc)
        else:
            texts += [repr(server)]
            try:
                texts += [repr(server.definition())]
            except Error as exc:
                texts += _texts_of_error(exc)
    texts += [str(w.message) for w in caught]
    assert texts
    assert _scan(texts) == []


def test_fixture_secret_list_matches_the_files() -> None:
    blob = "".join(p.read_text() for p in Path(FIXTURES).rglob("*") if p.is_file())
    assert all(secret in blob for secret in INLINE)
