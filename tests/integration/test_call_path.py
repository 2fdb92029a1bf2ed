"""The lean sequential call path and the idle stdio binding (issue #10), end to end.

* a caller blocked in a call is its own deadline watcher: the call ends at its
  deadline, and is cancelled on the wire, even when the process-wide watcher
  does nothing;
* an answer racing the deadline ends each call exactly once, with one outcome;
* an idle stdio binding runs one thread, its reader, which also drains the
  child's stderr; every fd a binding opened is closed by ``close()``, also
  while the reader is blocked; stderr drained from two threads at once keeps
  every byte, in order.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mcpclient import CallOpts, DeadlineExceededError, FailureClass, connect
from mcpclient._core import watcher
from mcpclient._internal.transport.stdio import StdioProcess
from tests.support.stdio import StdioChildren

from .engine_support import Recording, definition, text_of

ERAS = ["legacy", "modern"]


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# ----------------------------------------------------------------------------- deadlines


class _IdleTimer:
    """What a watcher that never fires hands out."""

    def cancel(self) -> None:
        pass


@pytest.mark.parametrize("era", ERAS)
def test_a_blocked_caller_is_its_own_deadline_watcher(
    era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, record=rec.path)) as client:
        # From here on the process-wide watcher never fires anything.
        monkeypatch.setattr(watcher, "schedule", lambda deadline, callback: _IdleTimer())
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool("hostile", {"action": "never_answer"}, CallOpts(timeout=0.4))
        elapsed = time.monotonic() - start
        assert 0.35 <= elapsed < 0.4 + 0.9, elapsed
        assert info.value.failure_class is FailureClass.DEADLINE
        (call_id,) = rec.tool_call_ids("hostile")
        assert rec.wait_cancelled(call_id)
        assert text_of(client.call_tool("echo", {"message": "next"})) == "next"


@pytest.mark.parametrize("era", ERAS)
def test_answers_racing_the_deadline_end_each_call_once(era: str) -> None:
    with connect(definition("--era", era)) as client:
        outcomes = {"answered": 0, "expired": 0}
        for i in range(30):
            # The answer comes about when the deadline passes: either may win.
            opts = CallOpts(timeout=0.02 + (i % 5) * 0.002)
            try:
                result = client.call_tool("slow", {"seconds": 0.02}, opts)
            except DeadlineExceededError as exc:
                assert exc.failure_class is FailureClass.DEADLINE
                outcomes["expired"] += 1
            else:
                assert result.text == "slept 0.02 s"
                outcomes["answered"] += 1
        assert sum(outcomes.values()) == 30
        assert text_of(client.call_tool("echo", {"message": "still fine"})) == "still fine"


# --------------------------------------------------------------------- the idle binding


def test_an_idle_stdio_binding_runs_only_its_reader() -> None:
    name = "idle-one"
    with connect(definition("--era", "legacy", name=name)) as client:
        assert text_of(client.call_tool("echo", {"message": "hi"})) == "hi"
        mine = sorted(t.name for t in threading.enumerate() if t.name.endswith(f"-{name}"))
        assert mine == [f"mcpclient-reader-{name}"]


def test_a_closed_binding_leaves_no_fd_open() -> None:
    before = _open_fds()
    with connect(definition("--era", "legacy", name="fds")) as client:
        assert text_of(client.call_tool("echo", {"message": "hi"})) == "hi"
        opened = _open_fds() - before
        assert len(opened) >= 4  # stdin, stdout, stderr, wake (+ pidfd)
    assert not opened & _open_fds()


def test_close_while_the_reader_waits_closes_every_fd(spawn_stdio: StdioChildren) -> None:
    before = _open_fds()
    # The POSIX backend itself, here and below: its fds, its threads, its stderr ring.
    code = "import time; print('ready', flush=True); time.sleep(60)"
    proc = spawn_stdio(code, make=StdioProcess)
    assert proc.read_frame() == b"ready"
    opened = _open_fds() - before
    assert len(opened) >= 4  # stdin, stdout, stderr, wake (+ pidfd)
    own = [t.name for t in threading.enumerate() if t.name.endswith("-test")]
    assert own == [], "the transport starts no thread of its own"
    results: list[bytes | None] = []
    reader = threading.Thread(target=lambda: results.append(proc.read_frame()), name="test-read")
    reader.start()
    time.sleep(0.05)  # let it block in poll()
    proc.close()
    reader.join(2.0)
    assert results == [None]
    assert not opened & _open_fds()


def test_stderr_drained_from_two_threads_keeps_every_byte_in_order(
    spawn_stdio: StdioChildren,
) -> None:
    lines = 4000
    proc = spawn_stdio(
        f"""
        import sys
        for i in range({lines}):
            sys.stderr.write(f"line-{{i:05d}}\\n")
            if i % 500 == 0:
                sys.stderr.flush()
        sys.stderr.flush()
        print("done", flush=True)
        """,
        make=StdioProcess,
        max_stderr=1 << 20,
    )
    drained: list[bool] = []

    def drain() -> None:  # beside the reader, which drains stderr while it waits
        while not drained:
            if proc.wait_stderr_eof(0.01):
                drained.append(True)

    helper = threading.Thread(target=drain, name="test-drain")
    helper.start()
    assert proc.read_frame() == b"done"
    assert proc.wait_exit(5.0)
    assert proc.wait_stderr_eof(5.0)
    helper.join(5.0)
    assert drained
    expected = "".join(f"line-{i:05d}\n" for i in range(lines))
    with proc._stderr._lock:
        kept = bytes(proc._stderr._ring).decode()
    assert kept == expected
