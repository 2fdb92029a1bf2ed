"""A checkout's project files never start a server without consent (issue 27, item 1).

A project file (``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json``...
of the current directory) is trusted by a yes on a terminal or by
``--trust-project``; the consent is remembered per directory and file digest,
and a changed file needs it again. The user's own entry wins a name clash
unless the project is trusted. Nothing here starts a server: resolution and
``doctor``'s selection are checked before anything would run.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpclient.cli import main
from mcpclient.cli.commands import doctor
from mcpclient.cli.envelope import CliError
from mcpclient.cli.target import resolve
from mcpclient.cli.trust import STORE_NAME, ProjectTrust, state_dir


def _entry(tag: str) -> dict[str, Any]:
    return {"command": f"/opt/{tag}/server", "args": ["--secret-arg"]}


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A home with the user's own Cursor file and a checkout whose project files define servers.

    ``shared`` is in both the user's and the project's Cursor file; ``proj`` and
    ``code`` only in the project's (Cursor's and VS Code's).
    """
    home, project, state = tmp_path / "home", tmp_path / "checkout", tmp_path / "state"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"shared": _entry("mine")}})
    )
    (project / ".cursor").mkdir(parents=True)
    (project / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"shared": _entry("theirs"), "proj": _entry("theirs")}})
    )
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(
        json.dumps({"servers": {"code": {"type": "stdio", "command": "/opt/vs/server"}}})
    )
    for name in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    # The CLI's default: no terminal, nobody to ask.
    monkeypatch.setattr("mcpclient.cli.target.terminal_consent", lambda: None)
    monkeypatch.setattr("mcpclient.cli.context.terminal_consent", lambda: None)
    return {
        "home": home,
        "project": project,
        "cursor": project / ".cursor" / "mcp.json",
        "environ": {"XDG_STATE_HOME": str(state)},
        "store": state / "mcpclient" / STORE_NAME,
    }


def _command(target: Any) -> str:
    return str(target.definition.transport.command)


def run(*argv: str, environ: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, environ=environ)
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else {}, err.getvalue()


def test_a_project_server_needs_consent_off_a_terminal(layout: dict[str, Any]) -> None:
    with pytest.raises(CliError) as info:
        resolve("proj", None, environ=layout["environ"])
    assert info.value.error_class == "untrusted_project"
    assert "nothing was started" in info.value.message
    assert str(layout["cursor"]) in info.value.message
    code, doc, _ = run("--json", "list", "proj", environ=layout["environ"])
    assert (code, doc["error"]["class"]) == (1, "untrusted_project")
    assert not layout["store"].exists()


def test_trust_project_starts_it_and_is_remembered_for_the_digest(
    layout: dict[str, Any],
) -> None:
    target = resolve("proj", None, environ=layout["environ"], trust_project=True)
    assert _command(target) == "/opt/theirs/server"
    # Remembered: no flag needed while the file is unchanged.
    assert _command(resolve("proj", None, environ=layout["environ"])) == "/opt/theirs/server"
    stored = json.loads(layout["store"].read_text())
    files = stored["projects"][str(layout["project"].resolve())]
    assert list(files) == [str(layout["cursor"].resolve())]
    if sys.platform != "win32":
        assert stat.S_IMODE(layout["store"].stat().st_mode) == 0o600
        assert stat.S_IMODE(layout["store"].parent.stat().st_mode) == 0o700
    assert [p.name for p in layout["store"].parent.iterdir() if p.name.endswith(".tmp")] == []
    # Only that file: the VS Code one still needs its own consent.
    with pytest.raises(CliError, match="not trusted"):
        resolve("code", None, environ=layout["environ"])
    # A changed file needs consent again.
    document = json.loads(layout["cursor"].read_text())
    document["mcpServers"]["proj"]["args"] = ["--now-something-else"]
    layout["cursor"].write_text(json.dumps(document))
    with pytest.raises(CliError) as info:
        resolve("proj", None, environ=layout["environ"])
    assert info.value.error_class == "untrusted_project"


def test_the_users_own_entry_wins_a_clash_unless_the_project_is_trusted(
    layout: dict[str, Any],
) -> None:
    assert _command(resolve("shared", None, environ=layout["environ"])) == "/opt/mine/server"
    assert not layout["store"].exists()  # the clash asked nothing and trusted nothing
    trusted = resolve("shared", None, environ=layout["environ"], trust_project=True)
    assert _command(trusted) == "/opt/theirs/server"
    # Now remembered: the project, trusted, has the host's precedence again.
    assert _command(resolve("shared", None, environ=layout["environ"])) == "/opt/theirs/server"
    layout["cursor"].write_text(layout["cursor"].read_text() + "\n")
    assert _command(resolve("shared", None, environ=layout["environ"])) == "/opt/mine/server"


def test_a_yes_on_the_terminal_trusts_the_file_and_shows_what_it_runs(
    layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, list[str]]] = []
    answers = [False, True]

    def consent(path: str, lines: list[str]) -> bool:
        asked.append((path, lines))
        return answers.pop(0)

    monkeypatch.setattr("mcpclient.cli.target.terminal_consent", lambda: consent)
    with pytest.raises(CliError, match="not trusted"):
        resolve("proj", None, environ=layout["environ"])
    assert _command(resolve("proj", None, environ=layout["environ"])) == "/opt/theirs/server"
    path, lines = asked[0]
    assert path == str(layout["cursor"])
    assert lines == ["shared: runs /opt/theirs/server ...", "proj: runs /opt/theirs/server ..."]
    assert all("--secret-arg" not in line for line in lines)
    resolve("proj", None, environ=layout["environ"])
    assert len(asked) == 2  # remembered: not asked again


def test_the_prompt_reads_a_yes_from_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpclient.cli import trust

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", Tty("y\n"))
    monkeypatch.setattr(sys, "stderr", err)
    ask = trust.terminal_consent()
    assert ask is not None and ask("/p/.mcp.json", ["a: runs x"])
    assert "/p/.mcp.json" in err.getvalue() and "a: runs x" in err.getvalue()
    monkeypatch.setattr(sys, "stdin", Tty("\n"))
    assert not ask("/p/.mcp.json", [])
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert trust.terminal_consent() is None


def test_servers_marks_project_entries_untrusted(layout: dict[str, Any]) -> None:
    code, doc, _ = run("--json", "servers", environ=layout["environ"])
    assert code == 0
    rows = {(r["host"], r["scope"], r["name"]): r for r in doc["result"]["servers"]}
    assert (
        rows["cursor", "global", "shared"]["project"],
        rows["cursor", "global", "shared"]["trusted"],
    ) == (False, True)
    for key in (
        ("cursor", "project", "proj"),
        ("cursor", "project", "shared"),
        ("vscode", "workspace", "code"),
    ):
        assert (rows[key]["project"], rows[key]["trusted"]) == (True, False)
    out, err = io.StringIO(), io.StringIO()
    main(["servers"], stdout=out, stderr=err, environ=layout["environ"])
    proj_line = next(line for line in out.getvalue().splitlines() if line.startswith("proj"))
    assert "(untrusted project" in proj_line
    mine = next(line for line in out.getvalue().splitlines() if "global" in line)
    assert "untrusted" not in mine
    resolve("proj", None, environ=layout["environ"], trust_project=True)
    _, doc, _ = run("--json", "servers", environ=layout["environ"])
    trusted = {(r["host"], r["name"]): r["trusted"] for r in doc["result"]["servers"]}
    assert trusted["cursor", "proj"] is True and trusted["vscode", "code"] is False


def test_doctor_skips_untrusted_project_servers_and_says_so(
    layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []

    def check(ctx: Any, target: Any) -> dict[str, Any]:
        checked.append(target.display)
        return {"ok": False, "error": {"class": "transport_closed", "message": "not run here"}}

    monkeypatch.setattr(doctor, "_check", check)
    _, doc, _ = run("--json", "doctor", environ=layout["environ"])
    assert checked == ["cursor:shared"]  # the user's own only
    skipped = {s["server"]: s for s in doc["result"]["skipped"]}
    assert set(skipped) == {"cursor:shared", "cursor:proj", "vscode:code"}
    assert "is not trusted; not started" in skipped["cursor:proj"]["reason"]
    assert skipped["vscode:code"]["path"] == str(layout["project"] / ".vscode" / "mcp.json")
    out = io.StringIO()
    main(["doctor"], stdout=out, stderr=io.StringIO(), environ=layout["environ"])
    assert "skip cursor:proj  the project file" in out.getvalue()
    checked.clear()
    _, doc, _ = run("--json", "--trust-project", "doctor", environ=layout["environ"])
    assert sorted(checked) == ["cursor:proj", "cursor:shared", "cursor:shared", "vscode:code"]
    assert doc["result"]["skipped"] == []


def test_an_explicit_config_file_and_the_home_as_project_need_no_consent(
    layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cursor = str(layout["cursor"])
    assert _command(resolve("proj", None, config_file=cursor, environ=layout["environ"]))
    # Run in the home: ~/.cursor/mcp.json is both "project" and the user's global file.
    monkeypatch.chdir(layout["home"])
    assert _command(resolve("shared", None, environ=layout["environ"])) == "/opt/mine/server"


def test_the_prompt_shows_no_argument_or_url_secret() -> None:
    from mcpclient.cli.target import runs

    class Remote:
        transport = "http"
        url = "https://user:hunter2@mcp.example:8443/path?token=abc"

    assert runs(Remote()) == "connects to https://mcp.example:8443"


def test_the_state_directory_follows_the_platform(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert state_dir(env, "linux") == tmp_path / ".local" / "state" / "mcpclient"
    assert state_dir({**env, "XDG_STATE_HOME": "/x/state"}, "linux") == Path("/x/state/mcpclient")
    assert state_dir({**env, "XDG_STATE_HOME": "relative"}, "linux") == (
        tmp_path / ".local" / "state" / "mcpclient"
    )
    assert state_dir(env, "darwin") == tmp_path / "Library" / "Application Support" / "mcpclient"
    assert state_dir({**env, "LOCALAPPDATA": str(tmp_path / "L")}, "win32") == (
        tmp_path / "L" / "mcpclient"
    )


def test_a_broken_store_trusts_nothing_and_is_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "mcpclient").mkdir(parents=True)
    (state / "mcpclient" / STORE_NAME).write_text("{not json")
    config = tmp_path / ".mcp.json"
    config.write_text("{}")
    trust = ProjectTrust({"XDG_STATE_HOME": str(state)}, cwd=tmp_path)
    assert not trust.stored(config)
    trust.flag = True
    assert trust.grant(config, [])
    trust.flag = False
    assert trust.stored(config)
    if sys.platform != "win32":
        os.mkfifo(tmp_path / "fifo")
        assert not trust.stored(tmp_path / "fifo")  # never blocks: read_regular
