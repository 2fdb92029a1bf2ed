"""The CLI and configured servers (issue 28): no credential invented or leaked, quiet pipes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from mcpclient.cli import main
from mcpclient.cli.target import resolve


def run(*argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, environ=environ or {})
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, document: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


# Claude Code .mcp.json: ${VAR} in headers (docs: mcp, environment variable expansion)
UNSET_HEADER = {
    "mcpServers": {
        "gh": {
            "type": "http",
            # nothing listens here: a request would fail as unreachable, not invalid_config
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${UNSET_TOKEN}"},
        }
    }
}


def test_call_with_an_unset_variable_sends_nothing(tmp_path: Path) -> None:
    # tests/unit/conftest.py refuses any socket: reaching the end proves nothing was sent
    path = write(tmp_path, ".mcp.json", UNSET_HEADER)
    code, out, _ = run("--json", "--config", path, "call", "gh", "echo")
    doc = json.loads(out)
    assert (code, doc["error"]["class"]) == (1, "invalid_config")
    message = doc["error"]["message"]
    assert "environment variable UNSET_TOKEN is not set" in message
    assert f"{path}:/mcpServers/gh/headers/Authorization" in message
    assert "nothing was sent" in message


def test_doctor_does_not_call_an_unset_credential_ok(tmp_path: Path) -> None:
    path = write(tmp_path, ".mcp.json", UNSET_HEADER)
    code, out, _ = run("--json", "--config", path, "doctor")
    (report,) = json.loads(out)["result"]["servers"]
    assert code == 1 and report["ok"] is False
    assert report["error"]["class"] == "invalid_config"
    assert "UNSET_TOKEN" in report["error"]["message"]


# VS Code mcp.json: inputs answered by the user (code.visualstudio.com, mcp-servers)
VSCODE = {
    "inputs": [
        {"type": "promptString", "id": "api-key", "description": "API key", "password": True}
    ],
    "servers": {
        "local": {"type": "stdio", "command": "/bin/true", "env": {"KEY": "${input:api-key}"}},
        "remote": {"type": "http", "url": "https://x.example/mcp"},
    },
}


def test_input_is_answered_by_the_option(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp.json", VSCODE)
    target = resolve("local", None, config_file=path, environ={}, answers={"api-key": "k1"})
    assert dict(target.definition.transport.env) == {"KEY": "k1"}


def test_input_is_asked_for_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "mcp.json", VSCODE)
    asked: list[tuple[str, str]] = []

    def ask(ident: str, spec: Any) -> str:
        asked.append((ident, spec["description"]))
        return "typed"

    monkeypatch.setattr("mcpclient.cli.target.terminal_asker", lambda: ask)
    target = resolve("local", None, config_file=path, environ={})
    assert dict(target.definition.transport.env) == {"KEY": "typed"}
    assert asked == [("api-key", "API key")]


def test_an_unanswered_input_off_a_terminal_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp.json", VSCODE)
    code, out, _ = run("--json", "--config", path, "list", "local")
    message = json.loads(out)["error"]["message"]
    assert code == 1 and "input api-key has no answer (pass --input ID=VALUE)" in message


def test_env_and_header_options_apply_to_configured_servers(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp.json", VSCODE)
    local = resolve(
        "local", None, config_file=path, environ={}, answers={"api-key": "k"}, env=["EXTRA=1"]
    )
    assert dict(local.definition.transport.env) == {"KEY": "k", "EXTRA": "1"}
    remote = resolve("remote", None, config_file=path, environ={}, headers=["X-Team: core"])
    assert dict(remote.definition.transport.headers) == {"X-Team": "core"}
    code, out, _ = run("--json", "--config", path, "--env", "A=1", "list", "remote")
    assert code == 1 and "--env applies to a stdio server" in json.loads(out)["error"]["message"]


def test_convert_writes_references_not_values(tmp_path: Path) -> None:
    source = {
        "mcpServers": {
            "gh": {
                "type": "http",
                "url": "https://api.example/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            }
        }
    }
    path = write(tmp_path, ".mcp.json", source)
    code, out, err = run("config", "convert", path, "--to", "cursor", environ={"TOKEN": "s3cr3t"})
    assert code == 0, err
    assert "s3cr3t" not in out
    assert json.loads(out)["mcpServers"]["gh"]["headers"] == {
        "Authorization": "Bearer ${env:TOKEN}"
    }
    # no variable needs to be set, and what Zed cannot hold is said on stderr
    code, out, err = run("config", "convert", path, "--to", "zed")
    assert code == 0 and "cannot reference environment variable TOKEN" in err
    # VS Code inputs convert too (they failed the whole command before)
    vscode = write(tmp_path, "mcp.json", VSCODE)
    code, out, err = run("config", "convert", vscode, "--to", "vscode")
    assert code == 0 and "${input:api-key}" in out


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_stdout_ends_quietly_in_process() -> None:
    err = io.StringIO()
    assert main(["--version"], stdout=_ClosedPipe(), stderr=err, environ={}) == 0
    assert err.getvalue() == ""


def test_validate_and_servers_say_when_the_host_falls_back_to_sse(tmp_path: Path) -> None:
    # Cursor: a url entry is Streamable HTTP with a fallback to SSE
    folder = tmp_path / ".cursor"
    folder.mkdir()
    path = write(folder, "mcp.json", {"mcpServers": {"old": {"url": "https://x.example/sse"}}})
    code, out, _ = run("config", "validate", path)
    assert code == 0 and "old (http, falling back to sse as the host does)" in out
    code, out, _ = run("--json", "servers", "--config", path)
    (row,) = json.loads(out)["result"]["servers"]
    assert (row["transport"], row["sse_fallback"]) == ("streamablehttp", True)
