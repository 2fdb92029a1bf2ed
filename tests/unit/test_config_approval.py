"""Approval hints read from host configs (Cline, Gemini, Codex) and ``approval_policy``."""

from __future__ import annotations

import pytest

from mcpclient import ConfigError
from mcpclient.config import approval_policy, load
from mcpclient.hooks import CallInfo, Decision

CODEX = """
[mcp_servers.fs]
command = "fs-server"
default_tools_approval_mode = "prompt"

[mcp_servers.fs.tools.read_file]
approval_mode = "approve"

[mcp_servers.fs.tools.write_file]
approval_mode = "prompt"

[mcp_servers.docs]
command = "docs-server"
default_tools_approval_mode = "approve"
"""


def _info(binding: str, tool: str) -> CallInfo:
    return CallInfo(binding=binding, tool=tool, model_name=None, arguments={}, annotations=None)


def test_codex_approval_modes_read_as_trust_and_auto_approve() -> None:
    servers = load(CODEX, dialect="codex")
    assert servers["fs"].trust is False
    assert servers["fs"].auto_approve == ("read_file",)
    assert servers["docs"].trust is True and servers["docs"].auto_approve == ()


@pytest.mark.parametrize(
    "text",
    [
        '[mcp_servers.x]\ncommand = "c"\ndefault_tools_approval_mode = "always"\n',
        '[mcp_servers.x]\ncommand = "c"\n[mcp_servers.x.tools.t]\napproval_mode = "yes"\n',
        '[mcp_servers.x]\ncommand = "c"\ntools = "all"\n',
    ],
)
def test_codex_bad_approval_settings_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        load(text, dialect="codex")


def test_policy_allows_what_the_configs_preapprove_and_denies_the_rest() -> None:
    servers = dict(load(CODEX, dialect="codex"))
    servers.update(
        load(
            {"mcpServers": {"Weather App": {"command": "w", "autoApprove": ["forecast"]}}},
            dialect="cline",
        )
    )
    servers.update(
        load({"mcpServers": {"trusted": {"command": "t", "trust": True}}}, dialect="gemini")
    )
    policy = approval_policy(servers)
    assert policy(_info("fs", "read_file")) == Decision.allow()
    assert policy(_info("docs", "anything")) == Decision.allow()
    assert policy(_info("trusted", "anything")) == Decision.allow()
    # a Host's key is the binding name made of the file's name
    assert policy(_info(servers["Weather App"].binding_name, "forecast")) == Decision.allow()
    denied = policy(_info("fs", "write_file"))
    assert denied is not None and denied.action == "deny" and "not pre-approved" in denied.reason
    unknown = policy(_info("elsewhere", "read_file"))
    assert unknown is not None and unknown.action == "deny"


def test_policy_asks_otherwise_for_the_rest() -> None:
    asked: list[str] = []

    def ask(info: CallInfo) -> Decision:
        asked.append(info.tool)
        return Decision.allow()

    policy = approval_policy(load(CODEX, dialect="codex"), otherwise=ask)
    assert policy(_info("fs", "read_file")) == Decision.allow()
    assert policy(_info("fs", "write_file")) == Decision.allow()
    assert asked == ["write_file"]


def test_policy_arguments_are_checked() -> None:
    with pytest.raises(ConfigError):
        approval_policy({"x": "not a config"})  # type: ignore[dict-item]
    with pytest.raises(ConfigError):
        approval_policy({}, otherwise="ask")  # type: ignore[arg-type]
