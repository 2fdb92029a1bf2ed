"""The ``mcpclient`` command end to end: ``python -m mcpclient ...`` as a subprocess.

Against the testing server over stdio (``-- python -m mcpclient.testing.server``)
and in its HTTP mode (the URL form), and against a pinned third-party server
(server-memory). Every ``--json`` document is validated against the envelope's
JSON Schema (tests/fixtures/cli_envelope.schema.json, also in docs/cli.md).
"""

from __future__ import annotations

import errno
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpclient
from tests.support.http_servers import ScriptedServer, free_port
from tests.support.servers import REPO_ROOT, Recording
from tests.support.waiting import wait_until

from .conftest import SpawnHttp
from .third_party import npm_peer

SCHEMA = json.loads((REPO_ROOT / "tests" / "fixtures" / "cli_envelope.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SERVER = ["--", sys.executable, "-m", "mcpclient.testing.server"]
#: Any control character but newline: what piped output must never hold.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
SGR = re.compile(r"\x1b\[[0-9;]*m")
#: How the envelope and the spinner name the stdio server.
STDIO_NAME = f"stdio:{os.path.basename(sys.executable)}"


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return {**env, "PYTHONPATH": str(REPO_ROOT), **extra}


def run(
    *args: str, stdin: str | None = None, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m mcpclient ARGS`` with stdout and stderr piped."""
    return subprocess.run(
        [sys.executable, "-m", "mcpclient", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
        env=env or cli_env(),
        check=False,
    )


def envelope(proc: subprocess.CompletedProcess[str], code: int) -> dict[str, Any]:
    """The one JSON document on stdout, checked against the schema and the exit code."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    doc: dict[str, Any] = json.loads(lines[0])
    VALIDATOR.validate(doc)
    assert doc["exit_code"] == code
    assert doc["ok"] is (code == 0)
    return doc


def plain(proc: subprocess.CompletedProcess[str]) -> None:
    """Piped output holds no control character (no color, no carriage return)."""
    assert not CONTROL.search(proc.stdout), proc.stdout
    assert not CONTROL.search(proc.stderr), proc.stderr


@pytest.fixture(scope="module")
def http_server(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    """The dual-era testing server over HTTP (the URL form of SERVER)."""
    return spawn_shared_http()


# --- demo, list, status, read, prompt ----------------------------------------


def test_demo_runs_as_before() -> None:
    proc = run("demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "connected: mcpclient-testing" in out
    assert "  tool   mcp__demo__echo" in out
    assert "echo ->    hello from mcpclient" in out
    assert "  [progress] 3/3 step 3 of 3" in out
    assert out.rstrip().endswith("closed cleanly")
    plain(proc)
    doc = envelope(run("demo", "--era", "legacy", "--json"), 0)
    assert doc["result"]["echo"] == "hello from mcpclient"
    assert doc["result"]["protocol_version"] == "2025-11-25"


def test_list_prints_the_catalog() -> None:
    proc = run("list", *SERVER)
    assert proc.returncode == 0, proc.stderr
    plain(proc)
    assert re.search(r"^tools \(8\)$", proc.stdout, re.M)
    assert re.search(r"^  echo\s+Echo the message", proc.stdout, re.M)
    assert "greet(name*)" in proc.stdout
    assert "test://static/hello" in proc.stdout and "test://items/{id}" in proc.stdout
    doc = envelope(run("--json", "list", *SERVER), 0)
    assert doc["command"] == "list" and doc["server"] == STDIO_NAME
    result = doc["result"]
    assert {t["name"] for t in result["tools"]} >= {"echo", "add", "slow", "progress"}
    assert [p["name"] for p in result["prompts"]] == ["greet"]
    assert result["prompts"][0]["arguments"][0] == {
        "name": "name",
        "description": result["prompts"][0]["arguments"][0]["description"],
        "required": True,
    }
    assert [r["uri"] for r in result["resources"]] == ["test://static/hello"]


def test_status_read_and_prompt() -> None:
    doc = envelope(run("status", "--json", *SERVER), 0)
    assert doc["result"]["state"] == "ready"
    assert doc["result"]["server"]["name"] == "mcpclient-testing"
    assert doc["result"]["transport"] == "stdio"
    proc = run("status", *SERVER)
    assert re.search(r"^state\s+ready$", proc.stdout, re.M)
    plain(proc)
    doc = envelope(run("read", "--json", "test://static/hello", *SERVER), 0)
    assert doc["result"]["contents"][0]["text"] == "Hello from mcpclient-testing."
    proc = run("read", "test://static/hello", *SERVER)
    assert proc.stdout == "Hello from mcpclient-testing.\n"
    doc = envelope(run("prompt", "--json", "greet", "name=Ada", *SERVER), 0)
    assert doc["result"]["messages"][0]["content"]["text"] == "Hello, Ada!"
    proc = run("prompt", "greet", "name=Ada", *SERVER)
    assert "user: Hello, Ada!" in proc.stdout
    plain(proc)


# --- call ---------------------------------------------------------------------


def test_call_coerces_key_values_by_the_input_schema() -> None:
    doc = envelope(run("--json", "call", "add", "a=1", "b=2.5", *SERVER), 0)
    assert doc["result"]["structured"] == {"sum": 3.5}
    proc = run("call", "echo", "message=42", *SERVER)
    assert proc.stdout == "42\n"  # a string property keeps the text as given
    plain(proc)


def test_call_takes_args_as_json_and_from_stdin() -> None:
    doc = envelope(run("--json", "call", "add", "--args", '{"a": 2, "b": 3}', *SERVER), 0)
    assert doc["result"]["structured"] == {"sum": 5}
    proc = run("--json", "call", "add", "--args", "-", "b=10", *SERVER, stdin='{"a": 1, "b": 2}')
    assert envelope(proc, 0)["result"]["structured"] == {"sum": 11}


@pytest.mark.parametrize(
    ("args", "code", "error_class"),
    [
        (["call", "fail", "message=boom"], 2, "remote_tool_error"),
        (["call", "nope"], 5, "tool_unavailable"),
        (["read", "test://nope"], 5, "not_found"),
        (["call", "add", "a=x", "b=1"], 6, "invalid_arguments"),
        (["call", "add", "--args", '{"a": "x", "b": 1}'], 6, "invalid_arguments"),
        (["call", "add", "--args", "[1]"], 6, "invalid_arguments"),
        (["prompt", "greet"], 6, "invalid_arguments"),
        (["call", "hostile", "--args", '{"action": "result", "result": 5}'], 7, "server_protocol"),
        (["call", "slow", "seconds=10", "--timeout", "1"], 4, "deadline"),
        (["call", "echo", "novalue"], 1, "usage"),
    ],
)
def test_exit_codes_over_stdio(args: list[str], code: int, error_class: str) -> None:
    doc = envelope(run("--json", *args, *SERVER), code)
    assert doc["error"]["class"] == error_class
    proc = run(*args, *SERVER)
    assert proc.returncode == code
    assert f"[{error_class}]" in proc.stderr
    plain(proc)


def test_a_tool_error_keeps_its_answer() -> None:
    doc = envelope(run("--json", "call", "fail", "message=boom", *SERVER), 2)
    assert doc["result"]["is_error"] is True
    assert doc["error"]["message"] == doc["result"]["text"] != ""
    proc = run("call", "fail", "message=boom", *SERVER)
    assert proc.stdout.strip() == doc["result"]["text"]


def test_startup_timeout_and_unreachable_are_exit_4() -> None:
    slow = [*SERVER, "--startup-delay", "10"]
    doc = envelope(run("--json", "list", "--timeout", "1", *slow), 4)
    assert doc["error"]["class"] == "startup_timeout"
    doc = envelope(run("--json", "list", f"http://127.0.0.1:{free_port()}/mcp"), 4)
    assert doc["error"]["class"] == "transport_closed"
    doc = envelope(run("--json", "list", "--", sys.executable, "-c", "raise SystemExit(3)"), 4)
    assert doc["error"]["class"] == "transport_closed"


def test_usage_errors_are_exit_1() -> None:
    for args in (["bogus"], ["call", "echo"], ["list", "x", "--timeout", "-1"], ["servers"]):
        words = [*args, *SERVER] if args == ["servers"] else args
        doc = envelope(run("--json", *words), 1)
        assert doc["error"]["class"] == "usage"
    doc = envelope(run("--json", "list", "http://example.com/mcp"), 1)
    assert doc["error"]["class"] == "invalid_config"
    assert run("--help").returncode == 0


# --- SERVER as a URL ------------------------------------------------------------


def test_a_url_server(http_server: ScriptedServer) -> None:
    doc = envelope(run("--json", "status", http_server.url), 0)
    assert doc["server"] == http_server.base  # the origin: no path
    assert doc["result"]["transport"] == "streamablehttp"
    doc = envelope(run("--json", "call", http_server.url, "add", "a=4", "b=5"), 0)
    assert doc["result"]["structured"] == {"sum": 9}
    doc = envelope(run("--json", "list", "--header", "X-Test-Case: cli-url", http_server.url), 0)
    assert any(t["name"] == "echo" for t in doc["result"]["tools"])
    tagged = http_server.records("cli-url")
    assert tagged, "the --header was not sent"


def test_auth_required_is_exit_3(spawn_http: SpawnHttp) -> None:
    server = spawn_http(
        "--oauth-issuer", "https://as.example", "--oauth-secret", "00112233445566778899aabbccddeeff"
    )
    doc = envelope(run("--json", "list", server.url), 3)
    assert doc["error"]["class"].startswith("auth_")


# --- watch ----------------------------------------------------------------------


def test_watch_prints_ndjson_until_its_duration() -> None:
    proc = run("--json", "watch", "--duration", "1", *SERVER)
    assert proc.returncode == 0, proc.stderr
    docs = [json.loads(line) for line in proc.stdout.splitlines()]
    for doc in docs:
        VALIDATOR.validate(doc)
        assert doc["command"] == "watch" and doc["ok"] is True
    events = [doc["result"] for doc in docs]
    assert {"type": "StateChanged", "to_state": "ready"}.items() <= next(
        e for e in events if e.get("to_state") == "ready"
    ).items()
    assert any(e["type"] == "CatalogAdopted" for e in events)
    proc = run("watch", "--duration", "0.5", *SERVER)
    assert re.search(r"^\d\d:\d\d:\d\d state discovering -> ready$", proc.stdout, re.M)
    plain(proc)


def _read_lines_until(proc: subprocess.Popen[bytes], pred: Any, timeout: float) -> list[str]:
    """Lines of ``proc``'s stdout up to the first ``pred`` accepts (read unbuffered)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    lines: list[str] = []
    pending = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        data = os.read(fd, 65536)
        if not data:
            break
        pending += data
        while b"\n" in pending:
            raw, pending = pending.split(b"\n", 1)
            line = raw.decode()
            lines.append(line)
            if pred(line):
                return lines
    raise AssertionError(f"not seen in time: {lines}")


def test_watch_shows_catalog_changes_and_stops_on_ctrl_c(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "modern")
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpclient",
            "watch",
            server.url,
            "--subscribe",
            "test://static/hello",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO_ROOT,
        env=cli_env(),
    )
    try:
        _read_lines_until(watcher, lambda line: "-> ready" in line, 20)
        definition = mcpclient.Definition("other", mcpclient.StreamableHTTPTransport(server.url))
        with mcpclient.connect(definition, timeout=15) as client:
            client.call_tool("mutate_catalog", {"add": "brand_new"}, timeout=10)
            seen = _read_lines_until(watcher, lambda line: "generation=2" in line, 20)
            assert any("CatalogStale family=tools" in line for line in seen), seen
            client.call_tool("mutate_catalog", {"touch": "test://static/hello"}, timeout=10)
            _read_lines_until(
                watcher, lambda line: "ResourceUpdated uri=test://static/hello" in line, 20
            )
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=20)
        assert watcher.returncode == 130, err
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


# --- a terminal, a pipe, and Ctrl-C ---------------------------------------------


def run_on_pty(args: Sequence[str], env: dict[str, str], timeout: float = 60) -> tuple[int, str]:
    """Run the command with stdin, stdout and stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpclient", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=REPO_ROOT,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError as exc:  # EIO: the child closed the terminal
                if exc.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_a_spinner_a_progress_bar_and_colors() -> None:
    args = ["call", "progress", "steps=4", "interval=0.3", *SERVER]
    code, text = run_on_pty(args, cli_env(TERM="xterm"))
    assert code == 0, text
    assert f"connecting to {STDIO_NAME}" in text
    bars = re.findall(r"\r\x1b\[2K\[([#-]{24})\]\s+(\d+)% (step \d of 4)", text)
    assert ("#" * 6 + "-" * 18, "25", "step 1 of 4") in bars, text
    assert ("#" * 24, "100", "step 4 of 4") in bars, text
    assert text.rstrip().endswith("completed 4 steps")
    code, text = run_on_pty(["list", *SERVER], cli_env(TERM="xterm"))
    assert code == 0 and SGR.search(text), text
    code, text = run_on_pty(["list", *SERVER], cli_env(TERM="xterm", NO_COLOR="1"))
    assert code == 0 and "echo" in text and not SGR.search(text), text


def test_piped_progress_is_plain_lines() -> None:
    proc = run("call", "progress", "steps=3", "interval=0.05", *SERVER)
    assert proc.returncode == 0
    plain(proc)
    assert proc.stdout == "completed 3 steps\n"
    assert proc.stderr.splitlines() == [
        "progress 1/3 step 1 of 3",
        "progress 2/3 step 2 of 3",
        "progress 3/3 step 3 of 3",
    ]
    quiet = run("-q", "call", "progress", "steps=2", "interval=0.05", *SERVER)
    assert quiet.returncode == 0 and quiet.stderr == ""


@pytest.mark.parametrize("json_mode", [False, True])
def test_ctrl_c_cancels_the_call_on_the_wire(tmp_path: Path, json_mode: bool) -> None:
    record = tmp_path / "record.jsonl"
    recording = Recording(record)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpclient",
            *(["--json"] if json_mode else []),
            "call",
            "slow",
            "seconds=30",
            *SERVER,
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env=cli_env(),
    )
    try:
        assert wait_until(lambda: recording.tool_call_ids("slow"), 20), recording.methods()
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 10  # not the slow tool's 30 s
    (call_id,) = recording.tool_call_ids("slow")
    assert recording.wait_cancelled(call_id)
    # The command's own token cancelled it (not a KeyboardInterrupt landing somewhere).
    reasons = [
        (m.get("params") or {}).get("reason")
        for m in recording.messages()
        if m.get("method") == "notifications/cancelled"
    ]
    assert reasons == ["interrupted (Ctrl-C)"]
    if json_mode:
        doc = json.loads(out)
        VALIDATOR.validate(doc)
        assert doc["exit_code"] == 130 and doc["error"]["class"] == "cancelled"
    else:
        assert "[cancelled]" in err


# --- doctor ---------------------------------------------------------------------


def test_doctor_checks_each_server() -> None:
    doc = envelope(run("--json", "doctor", *SERVER), 0)
    (report,) = doc["result"]["servers"]
    assert report["ok"] is True and report["server"] == STDIO_NAME
    assert report["protocol_version"] == "2026-07-28"
    assert report["connect_seconds"] > 0 and report["ping_seconds"] > 0
    proc = run("doctor", *SERVER)
    assert re.search(rf"^ok\s+{STDIO_NAME}\s+2026-07-28 over stdio", proc.stdout, re.M)
    plain(proc)
    doc = envelope(run("--json", "doctor", "--", sys.executable, "-c", "raise SystemExit(1)"), 4)
    (report,) = doc["result"]["servers"]
    assert report["ok"] is False and report["error"]["class"] == "transport_closed"


# --- a third-party server -------------------------------------------------------


def test_a_third_party_server(tmp_path: Path) -> None:
    server = ["--", *npm_peer("@modelcontextprotocol/server-memory")]
    memory = f"MEMORY_FILE_PATH={tmp_path / 'memory.jsonl'}"
    doc = envelope(run("--json", "list", "--env", memory, *server), 0)
    names = {t["name"] for t in doc["result"]["tools"]}
    assert {"create_entities", "read_graph", "search_nodes"} <= names
    entities = {"entities": [{"name": "ada", "entityType": "person", "observations": ["math"]}]}
    doc = envelope(
        run(
            "--json",
            "call",
            "create_entities",
            "--args",
            json.dumps(entities),
            "--env",
            memory,
            *server,
        ),
        0,
    )
    doc = envelope(run("--json", "call", "search_nodes", "query=ada", "--env", memory, *server), 0)
    assert "ada" in doc["result"]["text"]
    doc = envelope(run("--json", "call", "search_nodes", "--env", memory, *server), 6)
    assert doc["error"]["class"] == "invalid_arguments"
    doc = envelope(run("--json", "doctor", "--env", memory, *server), 0)
    assert doc["result"]["servers"][0]["ok"] is True


def test_a_closed_pipe_ends_quietly() -> None:
    """``mcpclient ... | head -1``: no BrokenPipeError traceback, exit 0 (issue 28)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write fails
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mcpclient", "--help"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env=cli_env(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


# --- export ---------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_export_prints_a_providers_tool_list(provider: str) -> None:
    doc = envelope(run("--json", "export", "--provider", provider, *SERVER), 0)
    assert doc["server"] == [STDIO_NAME]
    result = doc["result"]
    assert result["provider"] == provider
    text = json.dumps(result["tools"])
    assert '"mcp__cli__echo"' in text
    if provider == "gemini":
        assert any(c["action"] == "dropped" for c in result["report"])
    proc = run("export", "--provider", provider, *SERVER)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == result["tools"]
    plain(proc)


def test_export_gives_each_server_its_own_names(http_server: ScriptedServer) -> None:
    words = ("--json", "export", http_server.url, "--provider", "openai_chat", *SERVER)
    doc = envelope(run(*words), 0)
    names = {tool["function"]["name"] for tool in doc["result"]["tools"]}
    assert {"mcp__cli__echo", "mcp__cli2__echo"} <= names
    assert len(doc["server"]) == 2


# --- host configurations (mcpclient.config) ------------------------------------


def _testing_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcpclient.testing.server"]}


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A home with a Cursor and a Claude Desktop configuration that both define ``testing``."""
    pytest.importorskip("mcpclient.config")
    cursor = tmp_path / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text(
        json.dumps({"mcpServers": {"testing": _testing_entry(), "only-cursor": _testing_entry()}})
    )
    claude = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {"testing": _testing_entry()}}))
    return cli_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))


def test_servers_lists_every_discovered_server(home: dict[str, str]) -> None:
    doc = envelope(run("--json", "servers", env=home), 0)
    rows = {(r["host"], r["name"]): r for r in doc["result"]["servers"]}
    assert set(rows) == {
        ("cursor", "testing"),
        ("cursor", "only-cursor"),
        ("claude-desktop", "testing"),
    }
    assert rows["cursor", "testing"]["scope"] == "global"
    assert rows["cursor", "testing"]["path"].endswith(".cursor/mcp.json")
    assert rows["cursor", "testing"]["transport"] == "stdio"
    proc = run("servers", env=home)
    assert proc.returncode == 0 and "only-cursor" in proc.stdout
    plain(proc)
    doc = envelope(run("--json", "config", "validate", env=home), 0)
    assert {(f["host"], f["ok"]) for f in doc["result"]["files"]} == {
        ("cursor", True),
        ("claude-desktop", True),
    }
    cursor_file = rows["cursor", "testing"]["path"]
    doc = envelope(run("--json", "servers", "--config", cursor_file, env=home), 0)
    assert sorted(r["name"] for r in doc["result"]["servers"]) == ["only-cursor", "testing"]


def test_a_server_by_name(home: dict[str, str]) -> None:
    doc = envelope(run("--json", "call", "only-cursor", "echo", "message=hi", env=home), 0)
    assert doc["server"] == "only-cursor" and doc["result"]["text"] == "hi"
    doc = envelope(run("--json", "call", "cursor:testing", "echo", "message=hi", env=home), 0)
    assert doc["server"] == "cursor:testing"
    doc = envelope(run("--json", "list", "testing", env=home), 1)
    assert "claude-desktop:testing" in doc["error"]["message"]
    doc = envelope(run("--json", "list", "nobody", env=home), 5)
    assert doc["error"]["class"] == "not_found"
    # A broken file of another host hides nothing, and doctor reports it.
    broken = Path(home["HOME"]) / ".gemini" / "settings.json"
    broken.parent.mkdir()
    broken.write_text('{"mcpServers": {"bad": {"args": 5}}}')
    doc = envelope(run("--json", "call", "only-cursor", "echo", "message=hi", env=home), 0)
    doc = envelope(run("--json", "list", "nobody", env=home), 5)
    assert "unreadable: gemini:" in doc["error"]["message"]
    doc = envelope(run("--json", "doctor", env=home), 1)
    failed = [r for r in doc["result"]["servers"] if not r["ok"]]
    assert [r["server"] for r in failed] == [f"gemini:{broken}"]
    assert failed[0]["error"]["class"] == "invalid_config"


def test_doctor_checks_every_configured_server(home: dict[str, str]) -> None:
    doc = envelope(run("--json", "doctor", env=home), 0)
    reports = {r["server"]: r for r in doc["result"]["servers"]}
    assert set(reports) == {"cursor:testing", "cursor:only-cursor", "claude-desktop:testing"}
    assert all(r["ok"] and r["protocol_version"] for r in reports.values())


def test_config_validate_and_convert(tmp_path: Path) -> None:
    pytest.importorskip("mcpclient.config")
    good = tmp_path / "mcp.json"
    good.write_text(json.dumps({"mcpServers": {"testing": _testing_entry()}}))
    doc = envelope(run("--json", "config", "validate", str(good)), 0)
    assert doc["command"] == "config validate"
    assert doc["result"]["files"][0]["servers"] == ["testing"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"broken": {"args": 5}}}))
    doc = envelope(run("--json", "config", "validate", str(bad)), 1)
    assert doc["result"]["files"][0]["ok"] is False
    assert doc["error"]["class"] == "invalid_config"
    doc = envelope(run("--json", "config", "validate", str(tmp_path / "absent.json")), 5)
    assert doc["error"]["class"] == "not_found"
    doc = envelope(run("--json", "config", "convert", str(good), "--to", "vscode"), 0)
    converted = json.loads(doc["result"]["text"])
    assert converted["servers"]["testing"]["command"] == sys.executable
    proc = run("config", "convert", str(good), "--to", "codex")
    assert proc.returncode == 0 and "[mcp_servers.testing]" in proc.stdout
    doc = envelope(run("--json", "config", "convert", str(good), "--to", "nonsense"), 1)
    assert doc["error"]["class"] == "invalid_config"


def test_a_checkouts_servers_start_only_with_consent(tmp_path: Path) -> None:
    # issue 27, item 1: doctor started every command of the project's .mcp.json.
    pytest.importorskip("mcpclient.config")
    home, checkout = tmp_path / "home", tmp_path / "checkout"
    home.mkdir()
    checkout.mkdir()
    marker = tmp_path / "started"
    hostile = {
        "command": sys.executable,
        "args": ["-c", f"open({str(marker)!r}, 'w').close()"],
    }
    (checkout / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"hostile": hostile, "testing": _testing_entry()}})
    )
    env = cli_env(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )

    def in_checkout(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcpclient", *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=checkout,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    doc = envelope(in_checkout("--json", "doctor"), 0)
    assert doc["result"]["servers"] == []
    assert {s["server"] for s in doc["result"]["skipped"]} == {
        "claude-code:hostile",
        "claude-code:testing",
    }
    doc = envelope(in_checkout("--json", "call", "hostile", "echo"), 1)
    assert doc["error"]["class"] == "untrusted_project"
    assert not marker.exists()
    doc = envelope(
        in_checkout("--json", "--trust-project", "call", "testing", "echo", "message=hi"), 0
    )
    assert doc["result"]["text"] == "hi"
    # Remembered for this file as it is: no flag needed now.
    doc = envelope(in_checkout("--json", "list", "testing"), 0)
    assert not marker.exists()
