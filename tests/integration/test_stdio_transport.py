"""The blocking stdio transport against small ``python3 -c`` children."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import threading
import time
import tracemalloc
import warnings
from pathlib import Path

import pytest

from mcpclient._core.limits import TRUNCATION_MARKER
from mcpclient._internal.transport import stdio_group
from mcpclient._internal.transport.base import RequestFailure
from mcpclient._internal.transport.stdio import SAFE_ENV, StdioProcess, build_child_env
from mcpclient._internal.transport.stdio_platform import backend
from mcpclient.errors import (
    ConfigError,
    ConnectionLostError,
    FailureClass,
    LimitExceededError,
)
from tests.support.processes import dead, reaped
from tests.support.stdio import GRACE, MiB, StdioChildren

# The module runs on the backend the platform picks, and again in CI with
# MCPCLIENT_STDIO_BACKEND=portable (the one Windows gets), which has no
# non-blocking fast path: its try_write_frame never writes.
PORTABLE = backend() == "portable"

# Ignores SIGTERM and never reads stdin; says "ready" once the handler is in place.
STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""


# --------------------------------------------------------------------- frames


def test_round_trip(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio()
    proc.write_frame(b'{"jsonrpc":"2.0","id":1}')
    assert proc.read_frame() == b'{"jsonrpc":"2.0","id":1}'
    assert proc.try_write_frame(b"fast") is (not PORTABLE)
    if not PORTABLE:
        assert proc.read_frame() == b"fast"
    proc.write_frame(b"crlf\r")  # the child echoes "crlf\r\n"
    assert proc.read_frame() == b"crlf"
    assert proc.exit_description() is None
    assert proc.wait_exit(0) is False
    proc.close()
    assert proc.exit_description() == "exit status 0"  # it exited on stdin EOF


def test_empty_lines_are_skipped(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio("import sys; sys.stdout.write('\\n\\n\\r\\nframe\\n\\n\\r\\nnext\\n')")
    assert proc.read_frame() == b"frame"
    assert proc.read_frame() == b"next"
    assert proc.read_frame() is None


def test_eof_returns_none_and_reports_exit(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        """
        import sys
        sys.stdout.write("one\\nincomplete")
        sys.stderr.write("bye\\n")
        sys.exit(3)
        """
    )
    assert proc.read_frame() == b"one"
    assert proc.read_frame() is None  # a last line without newline is dropped
    assert proc.read_frame() is None
    reason = proc.loss_reason()
    assert "exit status 3" in reason
    assert "bye" in reason
    assert proc.wait_exit(5.0)
    assert reaped(proc.pid)
    assert proc.exit_description() == "exit status 3"
    proc.signal_group(signal.SIGKILL)  # refused after reap: must not raise


def test_frame_limit_boundaries(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        "import sys; sys.stdout.write('a' * 16 + '\\n' + 'b' * 16 + '\\r\\n' + 'c' * 17 + '\\n')",
        max_frame=16,
    )
    assert proc.read_frame() == b"a" * 16
    assert proc.read_frame() == b"b" * 16
    with pytest.raises(LimitExceededError):
        proc.read_frame()
    assert proc.read_frame() is None


def test_overlong_line_is_refused_before_it_is_buffered(spawn_stdio: StdioChildren) -> None:
    limit = 64 * 1024
    proc = spawn_stdio(
        "import sys; sys.stdout.write('x' * (10 << 20) + '\\nafter\\n')",
        max_frame=limit,
    )
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError) as info:
            proc.read_frame()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.failure_class is FailureClass.LIMIT_EXCEEDED
    assert "max_frame_bytes" in info.value.message
    assert str(limit) in info.value.message
    assert peak < 4 * limit, f"read buffered {peak} bytes for a {limit}-byte limit"
    # The stream is poisoned: nothing more is read, not even the next line.
    assert proc.read_frame() is None
    assert proc.read_frame() is None
    assert "max_frame_bytes" in proc.loss_reason()


# An oversized response: its id where the testing server (and real servers) put it.
HEAD_ID = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"'
TAIL_ID = b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'


def _write_lines(*lines: bytes) -> str:
    """A child that writes ``lines`` (each repr'd, 'FILL' marking 10 MiB of 'a')."""
    return f"""
        import sys
        out = sys.stdout.buffer
        for line in {list(lines)!r}:
            out.write(line.replace(b"FILL", b"a" * (10 << 20)))
        out.flush()
        """


@pytest.mark.parametrize(
    ("line", "request_id"),
    [
        (HEAD_ID + b'FILL"}]}}\n', 7),  # the id first: the line is dropped after the failure
        (TAIL_ID + b'FILL"}]},"id":9}\r\n', 9),  # the id last: known once the line ended
        (HEAD_ID + b"a" * (64 * 1024) + b'"}]}}\n', 7),  # just over, read whole
        (TAIL_ID + b"a" * (64 * 1024) + b'"}]},"id":9}\n', 9),
    ],
    ids=["head", "tail", "head-just-over", "tail-just-over"],
)
def test_an_oversized_response_fails_its_request_and_the_stream_goes_on(
    spawn_stdio: StdioChildren, line: bytes, request_id: int, caplog: pytest.LogCaptureFixture
) -> None:
    limit = 64 * 1024
    proc = spawn_stdio(_write_lines(line, b"after\n"), max_frame=limit)
    tracemalloc.start()
    try:
        failure = proc.read_frame()
        assert proc.read_frame() == b"after"  # the rest of the long line was dropped
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(failure, RequestFailure)
    assert failure.request_id == request_id
    error = failure.error
    assert isinstance(error, LimitExceededError)
    assert error.failure_class is FailureClass.LIMIT_EXCEEDED
    assert "Limits.max_frame_bytes" in error.message
    assert str(limit) in error.message
    assert "raise" in error.message
    assert peak < 4 * limit, f"read buffered {peak} bytes for a {limit}-byte limit"
    assert proc.read_frame() is None
    assert "exit status 0" in proc.loss_reason()  # EOF, not a poisoned stream
    assert any(f"request {request_id}" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "line",
    [
        TAIL_ID + b'FILL"}]},"id":7,"_meta":{}}\n',  # the id in the middle
        b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"x":"FILL"}}\n',
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"FILL"}}\n',
        TAIL_ID + b'FILL"}],"_meta":{"id":7}}}\n',  # a nested id at the tail
    ],
    ids=["id-in-the-middle", "server-request", "notification", "nested-id"],
)
def test_an_oversized_line_without_a_readable_response_id_poisons_the_stream(
    spawn_stdio: StdioChildren, line: bytes
) -> None:
    proc = spawn_stdio(_write_lines(line, b"after\n"), max_frame=64 * 1024)
    with pytest.raises(LimitExceededError) as info:
        proc.read_frame()
    assert "max_frame_bytes" in info.value.message
    assert proc.read_frame() is None
    assert "max_frame_bytes" in proc.loss_reason()


def test_eof_inside_a_dropped_line_ends_the_stream(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(_write_lines(HEAD_ID + b"FILL"), max_frame=64 * 1024)
    failure = proc.read_frame()
    assert isinstance(failure, RequestFailure)
    assert failure.request_id == 7
    assert proc.read_frame() is None
    proc = spawn_stdio(_write_lines(TAIL_ID + b"FILL"), max_frame=64 * 1024)
    assert proc.read_frame() is None


def test_ten_mib_line_is_returned_intact(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        "import sys; sys.stdout.write('0123456789abcdef' * (10 << 16) + '\\n')",
        max_frame=16 * MiB,
    )
    frame = proc.read_frame()
    assert frame is not None
    assert len(frame) == 10 * MiB
    assert frame == b"0123456789abcdef" * (10 << 16)
    assert proc.read_frame() is None


# --------------------------------------------------------------- environment


def test_build_child_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("MCPCLIENT_TEST_SECRET", "hunter2")
    monkeypatch.delenv("TZ", raising=False)

    inherited = build_child_env(True, {"EXTRA": "1", "PATH": "/opt/bin"})
    assert inherited["PATH"] == "/opt/bin"  # env overrides
    assert inherited["EXTRA"] == "1"
    assert "MCPCLIENT_TEST_SECRET" not in inherited
    assert "TZ" not in inherited  # unset names are absent
    assert set(inherited) <= {*SAFE_ENV, "EXTRA"}

    assert build_child_env(False, None) == {}
    assert build_child_env(False, {"A": "b"}) == {"A": "b"}
    assert build_child_env(["MCPCLIENT_TEST_SECRET", "TZ"], None) == {
        "MCPCLIENT_TEST_SECRET": "hunter2"
    }

    with pytest.raises(ConfigError):
        build_child_env("PATH", None)
    with pytest.raises(ConfigError):
        build_child_env(False, {"A=B": "x"})
    with pytest.raises(ConfigError) as info:
        build_child_env(False, {"A": "x\0hunter2"})
    assert "hunter2" not in str(info.value)


def test_child_sees_only_the_allowlist(
    spawn_stdio: StdioChildren, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPCLIENT_TEST_SECRET", "hunter2")
    dump = "import json, os; print(json.dumps(dict(os.environ)))"

    proc = spawn_stdio(dump, env=build_child_env(True, {"EXTRA": "given"}))
    frame = proc.read_frame()
    assert frame is not None
    seen = json.loads(frame)
    assert "MCPCLIENT_TEST_SECRET" not in seen
    assert "hunter2" not in frame.decode()
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["EXTRA"] == "given"

    proc = spawn_stdio(dump, env=build_child_env(False, {"ONLY": "this"}))
    frame = proc.read_frame()
    assert frame is not None
    seen = json.loads(frame)
    assert "PATH" not in seen
    assert "MCPCLIENT_TEST_SECRET" not in seen
    assert seen["ONLY"] == "this"


def test_cwd_is_honored(spawn_stdio: StdioChildren, tmp_path: Path) -> None:
    proc = spawn_stdio("import os; print(os.getcwd())", cwd=str(tmp_path))
    frame = proc.read_frame()
    assert frame is not None
    assert os.path.realpath(frame.decode()) == os.path.realpath(tmp_path)


@pytest.mark.parametrize("command", ["/nonexistent/mcpclient-no-such-server", "mcpclient-no-such"])
def test_missing_command(spawn_stdio: StdioChildren, command: str) -> None:
    proc = spawn_stdio(
        command=command, args=["--token", "hunter2"], env={"SECRET": "s3cret"}, start=False
    )
    with pytest.raises(ConnectionLostError) as info:
        proc.start()
    err = info.value
    assert err.failure_class is FailureClass.TRANSPORT_CLOSED
    assert os.path.basename(command) in err.message
    assert "s3cret" not in str(err)
    assert "hunter2" not in str(err)
    proc.close()  # harmless after a failed start
    assert proc.read_frame() is None


def test_missing_cwd(spawn_stdio: StdioChildren, tmp_path: Path) -> None:
    proc = spawn_stdio("pass", cwd=str(tmp_path / "absent"), start=False)
    with pytest.raises(ConnectionLostError) as info:
        proc.start()
    assert "working directory" in info.value.message


# -------------------------------------------------------------------- stderr


def test_stderr_ring_keeps_the_tail_and_never_blocks_the_child(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        """
        import sys
        chunk = b"A" * 65536
        for _ in range(160):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(b"\\x1b[31mred\\nTHE-END")
        sys.stderr.flush()
        print("done", flush=True)
        """,
        max_stderr=1024,
    )
    # The child printed "done" only after writing 10 MiB to stderr.
    assert proc.read_frame() == b"done"
    assert proc.wait_exit(5.0)
    assert proc.wait_stderr_eof(5.0)
    total = 10 * MiB + len(b"\x1b[31mred\nTHE-END")
    tail = proc.stderr_tail(400)
    prefix = f"({total - 1024} earlier bytes dropped) "
    assert tail.startswith(prefix)
    assert tail.endswith("red THE-END")
    assert "\x1b" not in tail
    assert len(tail.encode()) <= len(prefix) + 400
    assert proc.stderr_tail(0) == prefix.rstrip()


def test_stderr_tail_without_overflow(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio("import sys; sys.stderr.write('warning: caf\\u00e9\\n')")
    assert proc.read_frame() is None
    assert proc.wait_exit(5.0)
    assert proc.wait_stderr_eof(5.0)
    assert proc.stderr_tail() == "warning: café"


SERVER_LOG = "mcpclient.server.test"


def _server_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == SERVER_LOG]


def test_stderr_lines_are_logged_bounded_in_order(
    spawn_stdio: StdioChildren, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    proc = spawn_stdio(
        """
        import sys
        err = sys.stderr.buffer
        err.write(b"starting\\n")
        err.write(b"caf\\xe9 \\x1b[31mred\\r\\n")
        err.flush()
        for _ in range(160):  # one 10 MiB line, in pieces
            err.write(b"L" * 65536)
        err.write(b"\\n    indented\\n\\nlast words")
        err.flush()
        print("done", flush=True)
        """,
        max_log=1000,
    )
    tracemalloc.start()
    try:
        assert proc.read_frame() == b"done"
        assert proc.read_frame() is None
        proc.loss_reason()  # the child exited: the rest of stderr is drained
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    records = _server_records(caplog)
    assert [r.levelno for r in records] == [logging.INFO] * 5
    texts = [r.getMessage() for r in records]
    assert texts[0] == "starting"
    assert texts[1] == "caf\ufffd \ufffd[31mred"  # not UTF-8, controls replaced
    assert texts[2].startswith("LLLL")
    assert texts[2].endswith(TRUNCATION_MARKER)
    assert len(texts[2].encode()) <= 1000
    assert texts[3] == "    indented"  # a blank line is skipped
    assert texts[4] == "last words"  # no newline: logged at stderr's EOF
    assert peak < 1 * MiB, f"buffered {peak} bytes of a 10 MiB stderr line"
    # The bounded tail for error messages is as before.
    assert proc.stderr_tail(400).endswith("indented last words")


def test_stderr_written_after_stdout_closed_is_logged_before_close(
    spawn_stdio: StdioChildren, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    proc = spawn_stdio(
        """
        import os, sys, time
        os.close(1)
        time.sleep(0.1)
        sys.stderr.write("stdout is gone\\n")
        sys.stderr.flush()
        time.sleep(60)
        """
    )
    assert proc.read_frame() is None
    assert "closed its stdout" in proc.loss_reason()
    assert [r.getMessage() for r in _server_records(caplog)] == ["stdout is gone"]


def test_a_last_stderr_line_is_logged_when_the_transport_closes(
    spawn_stdio: StdioChildren, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    proc = spawn_stdio(
        """
        import sys, time
        sys.stderr.write("no newline")
        sys.stderr.flush()
        print("ready", flush=True)
        time.sleep(60)
        """
    )
    assert proc.read_frame() == b"ready"
    proc.close()
    assert [r.getMessage() for r in _server_records(caplog)] == ["no newline"]


def test_stderr_is_not_decoded_when_nobody_listens(
    spawn_stdio: StdioChildren, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=SERVER_LOG)
    proc = spawn_stdio("import sys; sys.stderr.write('quiet\\n')")
    assert proc.read_frame() is None
    proc.loss_reason()
    assert _server_records(caplog) == []
    assert proc.stderr_tail() == "quiet"


# --------------------------------------------------------------------- close


def test_close_kills_a_child_that_ignores_eof_and_sigterm(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(STUBBORN)
    assert proc.read_frame() == b"ready"
    started = time.monotonic()
    proc.close()
    elapsed = time.monotonic() - started
    assert 2 * GRACE * 0.9 <= elapsed < 2 * GRACE + 1.0
    assert reaped(proc.pid)
    assert proc.exit_description() == "signal SIGKILL"
    assert proc.read_frame() is None


def test_grandchild_in_the_group_dies_on_close(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        """
        import subprocess, sys, time
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(g.pid, flush=True)
        time.sleep(60)
        """
    )
    frame = proc.read_frame()
    assert frame is not None
    grandchild = int(frame)
    proc.close()
    assert reaped(proc.pid)
    assert dead(grandchild)


def test_grandchild_left_by_a_graceful_exit_is_killed(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        """
        import subprocess, sys
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(g.pid, flush=True)
        sys.stdin.read()
        """
    )
    frame = proc.read_frame()
    assert frame is not None
    grandchild = int(frame)
    started = time.monotonic()
    proc.close()
    assert time.monotonic() - started < GRACE + 0.5  # the leader left on EOF
    assert proc.exit_description() == "exit status 0"
    assert dead(grandchild)


_LEADER_LEAVES_A_GRANDCHILD = """
import subprocess, sys
g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                     start_new_session=ESCAPE)
print(g.pid, flush=True)
sys.stdout.write("last words\\n" * 3000)  # more than one read, all before the exit
sys.stdout.flush()
sys.exit(4)
"""


@pytest.fixture(params=["posix", "posix-no-pidfd", "portable"])
def backend_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    kind: str = request.param
    monkeypatch.setenv("MCPCLIENT_STDIO_BACKEND", kind.split("-", maxsplit=1)[0])
    if kind == "posix-no-pidfd":  # neither pidfd nor kqueue: probed
        monkeypatch.setattr(stdio_group, "exit_watch", lambda **_: "probe")
    return kind


@pytest.mark.parametrize("escape", [False, True], ids=["in-group", "escaped"])
def test_the_leaders_exit_ends_the_stream_though_a_grandchild_holds_stdout(
    spawn_stdio: StdioChildren, backend_kind: str, escape: bool
) -> None:
    proc = spawn_stdio(_LEADER_LEAVES_A_GRANDCHILD.replace("ESCAPE", str(escape)))
    frame = proc.read_frame()
    assert frame is not None
    grandchild = int(frame)
    try:
        frames: list[bytes | RequestFailure | None] = []
        reader = threading.Thread(target=lambda: frames.extend(_read_all(proc)))
        reader.start()
        reader.join(10.0)
        assert not reader.is_alive(), "the stream never ended"
        # Everything the leader wrote before it exited is read, then the end.
        assert frames == [b"last words"] * 3000 + [None]
        assert "exit status 4" in proc.loss_reason()
        if not escape:
            assert dead(grandchild), "the group was not ended after the leader's exit"
    finally:
        if escape:
            os.kill(grandchild, signal.SIGKILL)  # outside our group: the test's to clean up
    assert dead(grandchild)


def _read_all(proc: StdioProcess) -> list[bytes | RequestFailure | None]:
    out: list[bytes | RequestFailure | None] = []
    while True:
        frame = proc.read_frame()
        out.append(frame)
        if frame is None:
            return out


def test_close_unblocks_reader_even_if_an_escaped_process_holds_the_pipes(
    spawn_stdio: StdioChildren,
) -> None:
    proc = spawn_stdio(
        """
        import subprocess, sys, time
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)
        print(g.pid, flush=True)
        time.sleep(60)
        """
    )
    frame = proc.read_frame()
    assert frame is not None
    escaped = int(frame)
    try:
        results: list[bytes | None] = []
        reader = threading.Thread(target=lambda: results.append(proc.read_frame()))
        reader.start()
        time.sleep(0.05)
        started = time.monotonic()
        proc.close()
        assert time.monotonic() - started < 2 * GRACE + 1.0
        reader.join(2.0)
        assert not reader.is_alive()
        assert results == [None]
        assert proc.wait_stderr_eof(1.0)
    finally:
        os.kill(escaped, signal.SIGKILL)  # outside our group: the test's to clean up
    assert dead(escaped)


def test_close_does_not_wait_for_a_writer_stuck_in_a_full_pipe(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio("import time; time.sleep(60)")
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            proc.write_frame(b"x" * (4 * MiB))
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.2)  # a 64 KiB pipe is full long before this
    assert writer.is_alive()
    started = time.monotonic()
    proc.close()
    assert time.monotonic() - started < 2 * GRACE + 1.0
    writer.join(2.0)
    assert not writer.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], ConnectionLostError)
    assert outcome[0].failure_class is FailureClass.TRANSPORT_CLOSED
    assert reaped(proc.pid)
    with pytest.raises(ConnectionLostError):
        proc.write_frame(b"late")
    with pytest.raises(ConnectionLostError):
        proc.try_write_frame(b"late")


def test_close_is_idempotent_and_thread_safe(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(STUBBORN)
    assert proc.read_frame() == b"ready"
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def close() -> None:
        try:
            barrier.wait()
            proc.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=close) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5.0)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert reaped(proc.pid)
    started = time.monotonic()
    proc.close()
    proc.close(timeout=0)
    assert time.monotonic() - started < 0.1


def test_close_timeout_bounds_everything(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(STUBBORN, grace=5.0)
    assert proc.read_frame() == b"ready"
    started = time.monotonic()
    proc.close(timeout=0.2)
    assert time.monotonic() - started < 1.0
    assert reaped(proc.pid)
    assert proc.exit_description() == "signal SIGKILL"


def test_kill_now(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(STUBBORN, grace=5.0)
    assert proc.read_frame() == b"ready"
    started = time.monotonic()
    proc.kill_now()
    assert reaped(proc.pid)
    proc.close()
    assert time.monotonic() - started < 1.0


def test_close_before_start(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(start=False)
    proc.close()
    assert proc.read_frame() is None
    with pytest.raises(ConnectionLostError):
        proc.write_frame(b"x")


# --------------------------------------------------------------------- writes


@pytest.mark.skipif(PORTABLE, reason="the portable backend's try_write_frame never writes")
def test_try_write_frame_never_writes_part_of_a_frame(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio(
        """
        import json, signal, sys
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        print("ready", flush=True)
        signal.sigwait({signal.SIGUSR1})
        count = bad = 0
        for line in sys.stdin.buffer:
            line = line.rstrip(b"\\n")
            if line == b"END":
                break
            seq, size, body = int(line[:6]), int(line[6:10]), line[10:]
            if seq != count or len(body) != size or body != b"y" * size:
                bad += 1
            count += 1
        print(json.dumps({"count": count, "bad": bad}), flush=True)
        """
    )
    assert proc.read_frame() == b"ready"
    rng = random.Random(7)
    sent = 0
    refused = 0
    for _ in range(2000):
        size = rng.randrange(0, 4000)
        frame = b"%06d%04d" % (sent, size) + b"y" * size
        if proc.try_write_frame(frame):
            sent += 1
        else:
            refused += 1
            if refused > 200:
                break
    assert sent > 10  # the pipe took some frames
    assert refused > 0  # and then it was full
    assert proc.try_write_frame(b"z" * 8192) is False  # longer than PIPE_BUF
    os.kill(proc.pid, signal.SIGUSR1)
    proc.write_frame(b"END")
    frame = proc.read_frame()
    assert frame is not None
    assert json.loads(frame) == {"count": sent, "bad": 0}


def test_write_after_the_child_exited_is_connection_lost(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio("pass")
    assert proc.read_frame() is None
    assert proc.wait_exit(5.0)
    with pytest.raises(ConnectionLostError) as info:
        proc.write_frame(b"x" * 100_000)
    assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
    with pytest.raises(ConnectionLostError):
        proc.try_write_frame(b"x")


# ----------------------------------------------------------------------- fork


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forget_after_fork_leaves_the_parent_untouched(spawn_stdio: StdioChildren) -> None:
    proc = spawn_stdio()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        code = 1
        try:
            proc.forget_after_fork()
            proc.close()
            proc.kill_now()
            proc.signal_group(signal.SIGKILL)
            if proc.read_frame() is None and not proc.wait_exit(0):
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    proc.write_frame(b"still here")
    assert proc.read_frame() == b"still here"


# -------------------------------------------------------------------- backend


def test_the_backend_is_the_one_the_platform_or_the_switch_asks_for(
    spawn_stdio: StdioChildren,
) -> None:
    from mcpclient._internal.transport.stdio_portable import PortableStdioProcess

    proc = spawn_stdio()
    assert isinstance(proc, StdioProcess)
    assert isinstance(proc, PortableStdioProcess) is PORTABLE
    pumps = {"mcpclient-stdout-test", "mcpclient-stderr-test", "mcpclient-exit-test"}
    running = {t.name for t in threading.enumerate()}
    assert (pumps <= running) is PORTABLE
    proc.write_frame(b"ping")
    assert proc.read_frame() == b"ping"
    proc.close()
    assert not pumps & {t.name for t in threading.enumerate()}
