"""Config loading reads regular files only, to a bound, and bounds nesting (issue 27, items 7, 10).

A config path, an ``envFile`` or a ``${file:}`` that names ``/dev/zero``, a
FIFO or a directory is a classified config error at once: no hang, no memory
blowup. A document nested deeper than the parsers allow is a classified error,
never a ``RecursionError``.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpclient import config
from mcpclient.cli import main
from mcpclient.config.files import FileReadError, read_regular
from mcpclient.errors import ConfigFileError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")

DEEP = 5000


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO nobody writes to: an ``open`` for reading that blocks would wait forever."""
    path = tmp_path / "fifo"
    os.mkfifo(path)
    yield path


def _bounded(fifo_path: Path | None, work: Callable[[], Any]) -> Any:
    """``work()`` in a thread; fails (and unblocks a FIFO reader) if it does not end in 20 s."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("ok", work()))
        except BaseException as exc:
            outcome.append(("raised", exc))

    thread = threading.Thread(target=run, name="test-config-read", daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        if fifo_path is not None:  # a writer unblocks the hung open, so the thread ends
            fd = os.open(fifo_path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        thread.join(5)
        pytest.fail("reading the special file hung")
    kind, value = outcome[0]
    if kind == "raised":
        raise value
    return value


def _problems(exc: pytest.ExceptionInfo[ConfigFileError]) -> str:
    return " ".join(exc.value.problems)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "dir"])
def test_a_config_path_that_is_not_a_regular_file_is_a_config_error(
    special: str, fifo: Path, tmp_path: Path
) -> None:
    path = {"fifo": fifo, "/dev/zero": Path("/dev/zero"), "dir": tmp_path}[special]
    with pytest.raises(ConfigFileError) as info:
        _bounded(fifo, lambda: config.load(path, dialect="cursor"))
    assert str(info.value.failure_class) == "invalid_config"
    assert "not a regular file" in _problems(info)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_an_env_file_that_is_not_a_regular_file_is_a_config_error(
    special: str, fifo: Path, tmp_path: Path
) -> None:
    env_file = str(fifo) if special == "fifo" else special
    document = {"mcpServers": {"s": {"command": "/bin/true", "envFile": env_file}}}
    with pytest.raises(ConfigFileError) as info:
        _bounded(fifo, lambda: config.load(document, dialect="cursor"))
    assert "/mcpServers/s/envFile: cannot read the env file" in _problems(info)
    assert "not a regular file" in _problems(info)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_file_reference_that_is_not_a_regular_file_is_a_config_error(
    special: str, fifo: Path
) -> None:
    name = str(fifo) if special == "fifo" else special
    document = {"mcpServers": {"s": {"command": "/bin/true", "env": {"K": f"${{file:{name}}}"}}}}
    with pytest.raises(ConfigFileError) as info:
        _bounded(fifo, lambda: config.load(document, dialect="windsurf"))
    assert f"file {name} cannot be read (not a regular file" in _problems(info)


def test_discovery_does_not_block_on_a_fifo_claude_json(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".claude.json")
    found = _bounded(tmp_path / ".claude.json", lambda: config.discover(tmp_path, tmp_path))
    assert found == []


def test_read_regular_reads_to_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(FileReadError, match="larger than 9 bytes") as info:
        read_regular(path, 9)
    assert info.value.too_large
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent", 10)


def test_servers_json_keeps_its_envelope_on_special_files(
    fifo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A discovered file whose envFile is /dev/zero and another's a FIFO.
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"z": {"command": "/bin/true", "envFile": "/dev/zero"}}})
    )
    vscode = home / ".config" / "Code" / "User"
    vscode.mkdir(parents=True)
    (vscode / "mcp.json").write_text(
        json.dumps({"servers": {"f": {"command": "/bin/true", "envFile": str(fifo)}}})
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = _bounded(fifo, lambda: main(["--json", "servers"], stdout=out, stderr=err, environ={}))
    doc = json.loads(out.getvalue())
    assert code == 0 and doc["ok"] is True
    problems = {p["host"]: p["error"] for p in doc["result"]["problems"]}
    assert set(problems) == {"cursor", "vscode"}
    assert all(p["class"] == "invalid_config" for p in problems.values())
    assert all("not a regular file" in p["message"] for p in problems.values())
    # The same file given with --config: a failure envelope, not a crash.
    out = io.StringIO()
    code = _bounded(
        fifo,
        lambda: main(
            ["--json", "--config", "/dev/zero", "list", "z"], stdout=out, stderr=err, environ={}
        ),
    )
    doc = json.loads(out.getvalue())
    assert (code, doc["ok"], doc["error"]["class"]) == (1, False, "invalid_config")
    assert "not a regular file" in doc["error"]["message"]


# --- item 10: nesting -----------------------------------------------------------


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "text",
    [
        "[mcp_servers.s]\ncommand = 'x'\nargs = " + "[" * DEEP + "]" * DEEP + "\n",
        "[mcp_servers.s]\ncommand = 'x'\nenv = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
        "[" + ".".join(["t"] * DEEP) + "]\n",
    ],
    ids=["arrays", "inline-tables", "dotted-table"],
)
def test_a_deep_codex_toml_is_a_config_error(text: str, tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigFileError) as info:
        config.load(path)
    assert "nested deeper than 64" in _problems(info)
    with pytest.raises(ConfigFileError):
        config.load(text)  # as text too (JSON first, then TOML)


def test_a_deep_json_config_and_a_deep_mapping_are_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"s": {"command": "x", "args": ' + json.dumps(_nested(900)))
    with pytest.raises(ConfigFileError, match="nested deeper than 64"):
        config.load(path)
    deep = {"mcpServers": {"s": {"command": "x", "env": {"K": _nested(DEEP)}}}}
    for dialect in ("auto", "vscode", "cursor"):
        with pytest.raises(ConfigFileError, match="nested deeper than 64"):
            config.load(deep, dialect=dialect)
    cycle: dict[str, Any] = {"mcpServers": {}}
    cycle["mcpServers"]["s"] = cycle
    with pytest.raises(ConfigFileError, match="nested deeper than 64"):
        config.load(cycle)


def test_a_deep_claude_json_does_not_break_discovery(tmp_path: Path) -> None:
    text = '{"projects": ' + "[" * DEEP + "]" * DEEP + "}"
    (tmp_path / ".claude.json").write_text(text)
    assert [f.scope for f in config.discover(tmp_path, tmp_path)] == ["user"]


def test_the_cli_prints_its_error_for_a_deep_toml(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[mcp_servers.s]\ncommand = 'x'\nargs = " + "[" * DEEP + "]" * DEEP + "\n")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--config", str(path), "list", "s"], stdout=out, stderr=err, environ={})
    assert code == 1
    assert "nested deeper than 64 [invalid_config]" in err.getvalue()
    assert "Traceback" not in err.getvalue()
