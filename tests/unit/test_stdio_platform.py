"""The stdio transport's platform decisions, checked on any OS.

What only Windows can show (``PATHEXT`` resolution of ``npx`` to ``npx.cmd``,
``cmd.exe`` quoting, ``CTRL_BREAK_EVENT``, the Job Object that holds the
child's tree) is decided by pure functions (``stdio_platform``) and by
:class:`JobProcess` over an injectable kernel32; these tests drive both with
fakes.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from mcpclient._internal.transport import stdio_job
from mcpclient._internal.transport.stdio_job import JobProcess
from mcpclient._internal.transport.stdio_platform import (
    BACKEND_ENV,
    CREATE_NEW_PROCESS_GROUP,
    CREATE_NO_WINDOW,
    backend,
    creation_flags,
    graceful_signal,
    is_batch,
    resolve_command,
    windows_command_line,
)
from mcpclient.errors import ConfigError, ConnectionLostError

# ------------------------------------------------------------------- backend


@pytest.mark.parametrize(
    ("platform", "forced", "expected"),
    [
        ("linux", "", "posix"),
        ("darwin", "", "posix"),
        ("win32", "", "portable"),
        ("linux", "portable", "portable"),
        ("linux", " Portable ", "portable"),
        ("darwin", "portable", "portable"),
        ("linux", "posix", "posix"),
        ("win32", "portable", "portable"),
    ],
)
def test_the_backend_is_chosen_by_platform_or_forced(
    platform: str, forced: str, expected: str
) -> None:
    assert backend(platform, {BACKEND_ENV: forced} if forced else {}) == expected


@pytest.mark.parametrize(("platform", "forced"), [("linux", "poll"), ("win32", "posix")])
def test_an_unknown_or_impossible_backend_is_refused(platform: str, forced: str) -> None:
    with pytest.raises(ConfigError, match=BACKEND_ENV):
        backend(platform, {BACKEND_ENV: forced})


# ------------------------------------------------------------- PATHEXT lookup

WIN_PATH = r"C:\Windows\system32;C:\Program Files\nodejs"
FILES = {
    r"C:\Program Files\nodejs\npx.cmd",
    r"C:\Program Files\nodejs\npx",  # the POSIX shell script npm also installs
    r"C:\Program Files\nodejs\node.exe",
    r"C:\tools\uvx.exe",
    r"C:\work\local.bat",
}


def _resolve(command: str, **kwargs: Any) -> str:
    return resolve_command(command, is_file=FILES.__contains__, **kwargs)


def test_npx_resolves_to_npx_cmd_through_pathext() -> None:
    found = _resolve("npx", path=WIN_PATH, pathext=".COM;.EXE;.BAT;.CMD")
    assert found == r"C:\Program Files\nodejs\npx.cmd"


def test_pathext_order_decides_and_the_default_applies_when_unset() -> None:
    assert _resolve("node", path=WIN_PATH, pathext=None) == r"C:\Program Files\nodejs\node.exe"
    assert _resolve("npx", path=WIN_PATH, pathext="") == r"C:\Program Files\nodejs\npx.cmd"


def test_a_path_with_a_directory_is_completed_in_place() -> None:
    assert _resolve(r"C:\tools\uvx", path="", pathext=None) == r"C:\tools\uvx.exe"


def test_the_working_directory_is_searched_first_as_cmd_does() -> None:
    assert _resolve("local", path=WIN_PATH, pathext=None, cwd=r"C:\work") == r"C:\work\local.bat"


def test_a_name_with_an_extension_or_no_match_is_left_to_createprocess() -> None:
    assert _resolve("node.exe", path=WIN_PATH, pathext=None) == "node.exe"
    assert _resolve("missing", path=WIN_PATH, pathext=None) == "missing"


# ------------------------------------------------------------ command lines


def test_an_exe_gets_the_c_runtime_quoting() -> None:
    argv = [r"C:\node.exe", "a b", 'say "hi"', "", "trailing\\"]
    assert windows_command_line(argv) == subprocess.list2cmdline(argv)


def test_a_batch_file_runs_through_cmd_with_its_arguments_quoted() -> None:
    line = windows_command_line(
        [r"C:\Program Files\nodejs\npx.cmd", "-y", "@scope/server", "a&b", ""],
        comspec=r"C:\Windows\system32\cmd.exe",
    )
    assert line == (
        r'C:\Windows\system32\cmd.exe /d /s /c "'
        r'"C:\Program Files\nodejs\npx.cmd" -y "@scope/server" "a&b" """'
    )


@pytest.mark.parametrize("arg", ["%PATH%", "!x!", "a^b", 'say "hi"', "two\nlines"])
def test_a_batch_argument_cmd_would_interpret_is_refused(arg: str) -> None:
    with pytest.raises(ConfigError, match=r"cmd\.exe would interpret"):
        windows_command_line([r"C:\x\npx.cmd", arg])
    # The same argument is fine for a real executable.
    assert windows_command_line([r"C:\x\node.exe", arg])


def test_batch_files_are_recognised_by_extension() -> None:
    assert is_batch(r"C:\x\npx.CMD") and is_batch("run.bat")
    assert not is_batch("node.exe") and not is_batch("npx")


def test_a_polite_stop_is_ctrl_break_on_windows_and_the_signal_elsewhere() -> None:
    assert graceful_signal(15, windows=False) == 15
    assert graceful_signal(9, windows=False) == 9
    assert graceful_signal(15, windows=True) == 1  # CTRL_BREAK_EVENT
    assert graceful_signal(2, windows=True) == 1
    assert graceful_signal(9, windows=True) is None  # terminate the job instead


# ------------------------------------------------------------------ Job Object


class FakeKernel32:
    def __init__(self, *, refuse: str = "", console: bool = True) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.refuse = refuse
        self.console = console

    def has_console(self) -> bool:
        return self.console

    def create_kill_on_close_job(self) -> int:
        self.calls.append(("create",))
        if self.refuse == "create":
            raise OSError("no jobs")
        return 77

    def assign(self, job: int, process_handle: int) -> None:
        self.calls.append(("assign", job, process_handle))
        if self.refuse == "assign":
            raise OSError("access denied")

    def terminate(self, job: int, exit_code: int) -> None:
        self.calls.append(("terminate", job, exit_code))

    def close(self, handle: int) -> None:
        self.calls.append(("close", handle))


class FakePopen:
    def __init__(self, args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs
        self.pid = 4242
        self._handle = 901
        self.returncode: int | None = None
        self.signals: list[int] = []
        self.killed = False

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)

    def kill(self) -> None:
        self.killed = True
        self.returncode = 1


def _spawn(k32: FakeKernel32, argv: list[str] | None = None, **env: str) -> JobProcess:
    return JobProcess.spawn(
        argv or ["npx", "-y", "server"],
        stdin=3,
        stdout=4,
        stderr=5,
        env=env,
        cwd=None,
        binding="b",
        kernel32=k32,
        popen=FakePopen,
    )


def test_the_child_starts_in_its_own_console_group_and_a_kill_on_close_job() -> None:
    k32 = FakeKernel32()
    proc = _spawn(k32)
    popen: Any = proc._proc
    assert popen.kwargs["creationflags"] == CREATE_NEW_PROCESS_GROUP
    assert popen.kwargs["shell"] is False
    assert k32.calls == [("create",), ("assign", 77, 901)]
    assert proc.pid == 4242


def test_the_command_line_is_resolved_and_quoted_before_createprocess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio_job, "resolve_command", lambda command, **kw: "C:\\n\\npx.cmd")
    proc = _spawn(FakeKernel32(), ["npx", "-y", "a b"], COMSPEC="cmd.exe")
    popen: Any = proc._proc
    assert popen.args == 'cmd.exe /d /s /c "C:\\n\\npx.cmd -y "a b""'


def test_a_batch_argument_cmd_would_interpret_never_reaches_createprocess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio_job, "resolve_command", lambda command, **kw: "npx.cmd")
    with pytest.raises(ConfigError):
        _spawn(FakeKernel32(), ["npx", "%SECRET%"])


def test_a_command_that_cannot_start_is_connection_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError(2, "The system cannot find the file specified")

    with pytest.raises(ConnectionLostError, match="cannot start 'npx'"):
        JobProcess.spawn(
            ["npx"], stdin=3, stdout=4, stderr=5, env={}, cwd=None, binding="b",
            kernel32=FakeKernel32(), popen=refuse,
        )  # fmt: skip


def test_a_polite_stop_is_ctrl_break_and_a_kill_ends_the_whole_job() -> None:
    k32 = FakeKernel32()
    proc = _spawn(k32)
    popen: Any = proc._proc
    proc.signal(15)
    assert popen.signals == [1]
    assert ("terminate", 77, 1) not in k32.calls
    proc.signal(9)
    assert ("terminate", 77, 1) in k32.calls
    assert not popen.killed  # the job ended the tree, not just the child


def test_kill_and_reap_terminates_the_job_then_closes_its_handle() -> None:
    k32 = FakeKernel32()
    proc = _spawn(k32)
    popen: Any = proc._proc
    popen.returncode = 1  # what the terminated job leaves
    proc.kill_and_reap()
    assert k32.calls[-2:] == [("terminate", 77, 1), ("close", 77)]
    assert proc.exit_description() == "exit status 1"
    proc.kill_and_reap()  # idempotent: the closed handle is never used again
    assert k32.calls.count(("close", 77)) == 1


def test_a_graceful_exit_still_ends_what_the_child_left_in_its_job() -> None:
    k32 = FakeKernel32()
    proc = _spawn(k32)
    popen: Any = proc._proc
    popen.returncode = 0
    assert proc.wait_exit(0)
    proc.kill_and_reap()
    assert ("terminate", 77, 1) in k32.calls
    assert proc.exit_description() == "exit status 0"


@pytest.mark.parametrize("refuse", ["create", "assign"])
def test_without_a_job_the_child_alone_is_killed(refuse: str) -> None:
    k32 = FakeKernel32(refuse=refuse)
    proc = _spawn(k32)
    popen: Any = proc._proc
    if refuse == "assign":
        assert ("close", 77) in k32.calls  # the unused job is not leaked
    proc.kill_and_reap()
    assert popen.killed
    assert not any(call[0] == "terminate" for call in k32.calls)


def test_nothing_is_signalled_once_the_child_was_reaped() -> None:
    proc = _spawn(FakeKernel32())
    popen: Any = proc._proc
    popen.returncode = 0
    assert proc.reap()
    proc.signal(15)
    assert popen.signals == []


def test_a_windowless_parent_starts_a_windowless_child_and_skips_ctrl_break() -> None:
    assert creation_flags(parent_has_console=True) == CREATE_NEW_PROCESS_GROUP
    assert creation_flags(parent_has_console=False) == CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW
    k32 = FakeKernel32(console=False)
    proc = _spawn(k32)
    popen: Any = proc._proc
    assert popen.kwargs["creationflags"] == CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW
    proc.signal(15)
    assert popen.signals == []  # no console to carry the event: close() ends the job instead
    assert not any(call[0] == "terminate" for call in k32.calls)
