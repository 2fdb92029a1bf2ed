"""mcpclient.config: each dialect's variable syntax, strict and lenient."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from mcpclient import config
from mcpclient.config import ConfigFileError, ConfigWarning
from mcpclient.config.expand import Expander
from mcpclient.config.problems import Problems

ENV = {"A": "alpha", "B": "beta", "EMPTY": ""}


def expand(syntax: str, text: str, *, strict: bool = True, **kw: Any) -> tuple[str, Problems]:
    problems = Problems("f.json")
    expander = Expander(
        syntax,
        problems,
        env=kw.pop("env", ENV),
        strict=strict,
        workspace=Path("/ws/proj"),
        home=Path("/home/u"),
        **kw,
    )
    return expander.expand(text, ["mcpServers", "s", "args", 0]), problems


@pytest.mark.parametrize(
    ("syntax", "text", "expected"),
    [
        # Claude Code: ${VAR} and ${VAR:-default}; $VAR and ${env:VAR} are literal
        ("posix", "${A}-${B}", "alpha-beta"),
        ("posix", "${MISSING:-fallback}", "fallback"),
        ("posix", "${A:-fallback}", "alpha"),
        ("posix", "${MISSING:-}", ""),
        ("posix", "${EMPTY:-d}", "d"),  # as in the shell: empty takes the default
        ("posix", "${EMPTY}", ""),
        ("posix", "$A ${env:A}", "$A ${env:A}"),
        # Gemini CLI: $VAR and ${VAR}
        ("shell", "$A/${B}", "alpha/beta"),
        ("shell", "x$A.y", "xalpha.y"),
        ("shell", "cost: $5", "cost: $5"),
        # Windsurf: ${env:VAR} only
        ("env", "${env:A}", "alpha"),
        ("env", "${A} ${workspaceFolder}", "${A} ${workspaceFolder}"),
        # Cursor: editor variables
        ("editor", "${env:A}", "alpha"),
        ("editor", "${workspaceFolder}/x", "/ws/proj/x"),
        ("editor", "${workspaceFolderBasename}", "proj"),
        ("editor", "${userHome}", "/home/u"),
        ("editor", "a${pathSeparator}b${/}c", f"a{os.sep}b{os.sep}c"),
        # VS Code: the same plus inputs (below)
        ("vscode", "${env:B}:${workspaceFolder}", "beta:/ws/proj"),
        # no expansion at all
        ("none", "${A} $A ${env:A}", "${A} $A ${env:A}"),
    ],
)
def test_expansion_rules(syntax: str, text: str, expected: str) -> None:
    result, problems = expand(syntax, text)
    assert result == expected
    assert problems.errors == [] and problems.warnings == []


@pytest.mark.parametrize(
    ("syntax", "text"),
    [
        ("posix", "${NOPE}"),
        ("shell", "$NOPE"),
        ("shell", "${NOPE}"),
        ("env", "${env:NOPE}"),
        ("editor", "${env:NOPE}"),
        ("vscode", "${env:NOPE}"),
    ],
)
def test_unset_variable_strict_is_an_error_lenient_a_warning(syntax: str, text: str) -> None:
    result, problems = expand(syntax, "<" + text + ">")
    assert problems.errors == ["f.json:/mcpServers/s/args/0: environment variable NOPE is not set"]
    assert result == "<>"
    result, problems = expand(syntax, "<" + text + ">", strict=False)
    assert result == "<>"
    assert problems.errors == []
    assert problems.warnings == [
        "f.json:/mcpServers/s/args/0: environment variable NOPE is not set;"
        " expanded to an empty string"
    ]


def test_unknown_editor_variable_is_kept_and_warned() -> None:
    result, problems = expand("editor", "${command:pick}")
    assert result == "${command:pick}"
    assert problems.warnings and "unknown variable ${command:pick}" in problems.warnings[0]


def test_vscode_inputs_callable_mapping_default_and_asked_once() -> None:
    specs = {"k": {"id": "k", "type": "promptString"}, "d": {"id": "d", "default": "dv"}}
    calls: list[str] = []

    def answer(ident: str, spec: Any) -> str:
        calls.append(ident)
        return f"<{ident}>"

    problems = Problems("f.json")
    expander = Expander(
        "vscode",
        problems,
        env={},
        strict=True,
        workspace=Path("/w"),
        home=Path("/h"),
        inputs=answer,
        input_specs=specs,
    )
    assert expander.expand("${input:k}${input:k}", ["x"]) == "<k><k>"
    assert expander.expand("${input:k}", ["y"]) == "<k>"
    assert calls == ["k"]
    result, _ = expand("vscode", "${input:k}", inputs={"k": "mapped"}, input_specs=specs)
    assert result == "mapped"
    result, _ = expand("vscode", "${input:d}", input_specs=specs)
    assert result == "dv"


def test_vscode_input_unanswered_or_undeclared() -> None:
    specs = {"k": {"id": "k"}}
    _, problems = expand("vscode", "${input:k}", input_specs=specs)
    assert problems.errors == ["f.json:/mcpServers/s/args/0: input k is not set"]
    _, problems = expand("vscode", "${input:k}", input_specs=specs, strict=False)
    assert problems.errors == [] and problems.warnings
    _, problems = expand("vscode", "${input:zz}", input_specs=specs, strict=False)
    assert problems.errors == ["f.json:/mcpServers/s/args/0: ${input:zz} names no entry of inputs"]
    _, problems = expand("vscode", "${input:k}", input_specs=specs, inputs=lambda i, s: 7)
    assert problems.errors == ["f.json:/mcpServers/s/args/0: the answer to input k must be a str"]


def test_expansion_covers_command_args_env_url_headers() -> None:
    document = {
        "mcpServers": {
            "s": {"command": "${A}", "args": ["${B}"], "env": {"E": "${A}"}},
            "h": {"type": "http", "url": "https://${A}.example/mcp", "headers": {"H": "${B}"}},
        }
    }
    result = config.load(document, dialect="claude-code", env=ENV)
    assert (result["s"].command, result["s"].args, result["s"].env_mapping) == (
        "alpha",
        ("beta",),
        {"E": "alpha"},
    )
    assert result["h"].url == "https://alpha.example/mcp"
    assert result["h"].header_mapping == {"H": "beta"}


def test_load_strict_raises_lenient_warns() -> None:
    document = {"mcpServers": {"s": {"command": "x", "env": {"T": "${UNSET_ONE}"}}}}
    with pytest.raises(ConfigFileError) as info:
        config.load(document, dialect="claude-code", env={})
    assert info.value.problems == (
        "<dict>:/mcpServers/s/env/T: environment variable UNSET_ONE is not set",
    )
    with pytest.warns(ConfigWarning, match="UNSET_ONE is not set; expanded to an empty string"):
        result = config.load(document, dialect="claude-code", env={}, strict=False)
    assert result["s"].env_mapping == {"T": ""}


def test_env_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPCLIENT_TEST_VAR", "from-os")
    document = {"mcpServers": {"s": {"command": "${MCPCLIENT_TEST_VAR}"}}}
    assert config.load(document, dialect="claude-code")["s"].command == "from-os"


def test_codex_named_variables_follow_strictness() -> None:
    text = '[mcp_servers.f]\nurl = "https://x.example/mcp"\nbearer_token_env_var = "TOK"\n'
    with pytest.raises(ConfigFileError, match="environment variable TOK is not set"):
        config.load(text, dialect="codex", env={})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = config.load(text, dialect="codex", env={}, strict=False)
    assert result["f"].headers == ()
    assert [str(w.message) for w in caught] == [
        "<string>:mcp_servers.f.bearer_token_env_var: environment variable TOK is not set; left out"
    ]
    assert config.load(text, dialect="codex", env={"TOK": "t"})["f"].header_mapping == {
        "Authorization": "Bearer t"
    }
