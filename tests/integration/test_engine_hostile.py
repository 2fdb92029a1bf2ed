"""The client against a hostile stdio server: every call ends, classified, on time.

Each test starts its own testing server (``--era modern`` unless the era
matters) and closes its client; the suite's leak guard then checks that no
``mcpclient-*`` thread and no child process is left.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    ConnectionLost,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    Handlers,
    IndeterminateError,
    Limits,
    State,
    connect,
)
from mcpclient._internal.session import reader
from mcpclient._internal.transport.stdio_stderr import LOG_BURST, LOG_RATE
from tests.support import Events, delivered, threads_ended

from .engine_support import SLACK, Recording, definition, text_of, wait_until

KiB = 1024


def _reader_alive(binding: str = "engine") -> bool:
    return any(
        t.name == f"mcpclient-reader-{binding}" and t.is_alive() for t in threading.enumerate()
    )


def _echo_works(client: mcpclient.Client, message: str = "still here") -> None:
    result = client.call_tool("echo", {"message": message}, CallOpts(timeout=5))
    assert not result.is_error
    assert text_of(result) == message


# ----------------------------------------------------------------- deadlines


def test_slow_tool_ends_at_its_deadline_and_is_cancelled_on_the_wire(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool("slow", {"seconds": 30}, CallOpts(timeout=0.5))
        elapsed = time.monotonic() - start
        assert 0.45 <= elapsed < 0.5 + SLACK
        assert info.value.failure_class is FailureClass.DEADLINE
        assert isinstance(info.value, TimeoutError)
        (call_id,) = rec.tool_call_ids("slow")
        assert rec.wait_cancelled(call_id)
        _echo_works(client)


def test_progress_forever_does_not_extend_the_deadline(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    reports: list[mcpclient.Progress] = []
    with connect(definition("--era", "modern", record=rec.path)) as client:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool(
                "hostile",
                {"action": "progress_forever", "interval": 0.05},
                CallOpts(timeout=1.0, progress=reports.append),
            )
        elapsed = time.monotonic() - start
        assert 0.95 <= elapsed < 1.0 + SLACK, "progress moved the deadline"
        assert info.value.failure_class is FailureClass.DEADLINE
        # Progress really flowed while the call waited (otherwise this proves nothing).
        assert wait_until(lambda: len(reports) >= 3, 2.0), reports
        assert all(r.binding == "engine" for r in reports)
        (call_id,) = rec.tool_call_ids("hostile", {"action": "progress_forever", "interval": 0.05})
        assert rec.wait_cancelled(call_id)
        # Once the call is over its progress stops reaching the caller: what was
        # on its way has arrived after a round trip and a pass through the lane ...
        _echo_works(client)
        delivered(client)
        seen = len(reports)
        # ... and nothing follows. Were ticks still reaching the caller, the
        # server's 0.05 s interval would put several in this short pause.
        time.sleep(0.25)
        delivered(client)
        assert len(reports) == seen


def test_progress_without_a_callback_is_not_requested(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        result = client.call_tool("progress", {"steps": 3, "interval": 0.01}, CallOpts(timeout=5))
        assert not result.is_error
        (call,) = rec.requests("tools/call")
        assert "progressToken" not in (call["params"].get("_meta") or {})


def test_never_answer_ends_at_the_deadline(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool("hostile", {"action": "never_answer"}, CallOpts(timeout=0.7))
        elapsed = time.monotonic() - start
        assert 0.65 <= elapsed < 0.7 + SLACK
        (call_id,) = rec.tool_call_ids("hostile")
        assert rec.wait_cancelled(call_id)
        assert client.status().state is State.READY
        _echo_works(client)


def test_absolute_deadline_is_honoured(tmp_path: Path) -> None:
    with connect(definition("--era", "modern")) as client:
        deadline = time.monotonic() + 0.6
        with pytest.raises(DeadlineExceededError):
            # The earlier of deadline and timeout wins.
            client.call_tool(
                "hostile", {"action": "never_answer"}, CallOpts(deadline=deadline, timeout=30)
            )
        assert time.monotonic() < deadline + SLACK


def test_ignored_cancellation_late_answer_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers: list[object] = []  # the id of every response the reader saw, late ones included
    on_response = reader.Reader._on_response

    def spy(self: reader.Reader, message: dict[str, object], status: int | None = None) -> None:
        answers.append(message.get("id"))
        on_response(self, message, status)

    monkeypatch.setattr(reader.Reader, "_on_response", spy)
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool(
                "hostile", {"action": "ignore_cancel", "seconds": 1.0}, CallOpts(timeout=0.4)
            )
        assert time.monotonic() - start < 0.4 + SLACK
        (call_id,) = rec.tool_call_ids("hostile")
        assert rec.wait_cancelled(call_id)
        # The server answers the expired call after its second; nobody may take it.
        assert wait_until(lambda: call_id in answers, 5), answers
        _echo_works(client, "after the late answer")
        _echo_works(client, "and again")
        assert client.status().state is State.READY


# ----------------------------------------------------------------- junk on the wire


@pytest.mark.parametrize(
    ("action", "extra"),
    [
        ("garbage_line", {}),
        ("invalid_utf8", {}),
        ("deep_json", {"depth": 100_000}),
        ("duplicate_response", {}),
        ("unknown_id", {}),
        ("unknown_id", {"id": "not-an-int"}),
    ],
)
def test_junk_is_dropped_and_the_call_completes(action: str, extra: dict[str, object]) -> None:
    events = Events()
    with connect(definition("--era", "modern"), Handlers(event=events)) as client:
        result = client.call_tool("hostile", {"action": action, **extra}, CallOpts(timeout=5))
        assert not result.is_error
        assert text_of(result) == f"hostile {action}: done"
        assert _reader_alive()
        _echo_works(client)
        _echo_works(client, "twice")
        assert client.status().state is State.READY
        assert not any(isinstance(e, ConnectionLost) for e in events)


def test_stderr_flood_during_a_call_does_not_block() -> None:
    limits = Limits(max_stderr_bytes=4 * KiB)
    with connect(definition("--era", "modern", limits=limits)) as client:
        result = client.call_tool(
            "hostile", {"action": "stderr_flood", "bytes": 4 << 20}, CallOpts(timeout=10)
        )
        assert text_of(result) == "hostile stderr_flood: done"
        _echo_works(client)


def test_stderr_flood_at_startup_does_not_block_connect() -> None:
    with connect(definition("--era", "modern", "--stderr-flood", str(2 << 20))) as client:
        assert client.status().state is State.READY
        _echo_works(client)


@pytest.mark.parametrize("backend", ["posix", "portable"])
def test_stderr_flood_at_startup_with_a_log_handler_stays_bounded(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, backend: str
) -> None:
    # A handler on the server's logger made every stderr line cost a record:
    # 64 MiB took most of the startup budget. Records are now rate-limited and
    # the lines left out are counted in a record of their own.
    monkeypatch.setenv("MCPCLIENT_STDIO_BACKEND", backend)
    caplog.set_level(logging.INFO, logger="mcpclient.server.engine")
    size = 16 << 20
    lines = -(-size // 80)  # the flood writes 80-column lines (the last one cut short)
    started = time.monotonic()
    # The definition's startup budget is 15 s.
    with connect(definition("--era", "modern", "--stderr-flood", str(size))) as client:
        assert client.status().state is State.READY
        _echo_works(client)
    took = time.monotonic() - started
    records = [r for r in caplog.records if r.name == "mcpclient.server.engine"]
    logged = [r for r in records if r.levelno == logging.INFO]
    counts = [
        int(r.getMessage().split()[0].lstrip("("))
        for r in records
        if r.levelno == logging.WARNING and "stderr lines not logged" in r.getMessage()
    ]
    assert len(logged) <= LOG_BURST + LOG_RATE * took + 1, (len(logged), took)
    assert counts, "the lines left out were not reported"
    assert len(counts) <= took + 2, counts  # at most once a second, and at the end
    assert len(logged) + sum(counts) == lines


def test_notification_flood_is_absorbed() -> None:
    logs: list[mcpclient.LogMessage] = []
    with connect(definition("--era", "legacy"), Handlers(log=logs.append)) as client:
        result = client.call_tool(
            "hostile", {"action": "notification_flood", "count": 3000}, CallOpts(timeout=10)
        )
        assert text_of(result) == "hostile notification_flood: done"
        _echo_works(client)
        assert wait_until(lambda: len(logs) + client.status().dropped_notifications >= 3000)


# ----------------------------------------------------------------- fatal behavior


# With reconnection disabled a lost connection leaves the binding degraded
# (reconnection itself is tested in test_resilience.py).
NO_RECONNECT = mcpclient.ReconnectPolicy(disabled=True)


def _lost_events(events: Events) -> list[ConnectionLost]:
    return [e for e in events if isinstance(e, ConnectionLost)]


def test_oversized_line_fails_the_connection_with_limit_exceeded() -> None:
    events = Events()
    limits = Limits(max_frame_bytes=64 * KiB)
    defn = definition("--era", "modern", limits=limits, reconnect=NO_RECONNECT)
    with connect(defn, Handlers(event=events)) as client:
        start = time.monotonic()
        # The connection fails with limit_exceeded; a tools/call already sent
        # has an unknown outcome, so it is indeterminate (never re-sent).
        with pytest.raises(IndeterminateError) as info:
            client.call_tool(
                "hostile",
                {"action": "oversized_line", "bytes": 1 << 20, "id_at": "none"},
                CallOpts(timeout=10),
            )
        assert time.monotonic() - start < SLACK + 1.0, "waited for the deadline"
        assert info.value.failure_class is FailureClass.INDETERMINATE
        assert "max_frame_bytes" in info.value.message
        assert wait_until(lambda: client.status().state is State.DEGRADED)
        status = client.status()
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.LIMIT_EXCEEDED
        assert wait_until(lambda: bool(_lost_events(events)))
        (lost,) = _lost_events(events)
        assert lost.failure_class is FailureClass.LIMIT_EXCEEDED
        assert not lost.retrying
        assert lost.adopted == 1
        # The next call fails at once, classified; nothing hangs.
        start = time.monotonic()
        with pytest.raises(Error) as after:
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=10))
        assert time.monotonic() - start < 1.0
        assert not isinstance(after.value, DeadlineExceededError)
        assert after.value.failure_class is FailureClass.LIMIT_EXCEEDED


def test_oversized_line_fails_every_call_in_flight(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    limits = Limits(max_frame_bytes=64 * KiB)
    defn = definition("--era", "modern", record=rec.path, limits=limits, allow_parallel_calls=True)
    with connect(defn) as client:
        slow = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
        assert wait_until(lambda: rec.tool_call_ids("slow"))  # in flight at the server
        with pytest.raises(IndeterminateError):
            client.call_tool(
                "hostile",
                {"action": "oversized_line", "bytes": 256 * KiB, "id_at": "none"},
                CallOpts(timeout=10),
            )
        exc = slow.exception(timeout=SLACK)
        assert isinstance(exc, IndeterminateError)
        assert "max_frame_bytes" in exc.message
        assert client.status().failure is not None
        assert client.status().failure.failure_class is FailureClass.LIMIT_EXCEEDED


def test_exit_mid_call_is_indeterminate_and_prompt() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=NO_RECONNECT)
    with connect(defn, Handlers(event=events)) as client:
        start = time.monotonic()
        with pytest.raises(IndeterminateError) as info:
            client.call_tool("hostile", {"action": "exit", "code": 3}, CallOpts(timeout=10))
        assert time.monotonic() - start < SLACK + 1.0, "waited for the deadline"
        assert info.value.failure_class is FailureClass.INDETERMINATE
        assert isinstance(info.value, ConnectionLostError)
        assert info.value.op == "call_tool"  # the op called, as a deadline would say
        assert wait_until(lambda: client.status().state is State.DEGRADED)
        status = client.status()
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.TRANSPORT_CLOSED
        assert "exit status 3" in status.failure.message
        assert wait_until(lambda: bool(_lost_events(events)))
        (lost,) = _lost_events(events)
        assert lost.failure_class is FailureClass.TRANSPORT_CLOSED
        assert ("ready", "degraded") in [
            (str(e.from_state), str(e.to_state))
            for e in events
            if isinstance(e, mcpclient.StateChanged)
        ]
        start = time.monotonic()
        with pytest.raises(ConnectionLostError) as after:
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=10))
        assert time.monotonic() - start < 1.0
        assert after.value.failure_class is FailureClass.TRANSPORT_CLOSED
        # The catalog stays readable.
        assert client.catalog().generation == 1


def test_exit_while_other_requests_wait_fails_them_all_promptly(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", record=rec.path, allow_parallel_calls=True)
    with connect(defn) as client:
        slow = [
            client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20)) for _ in range(4)
        ]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 4)  # all four in flight
        with pytest.raises(IndeterminateError):
            client.call_tool("hostile", {"action": "exit"}, CallOpts(timeout=20))
        for future in slow:
            assert isinstance(future.exception(timeout=SLACK), IndeterminateError)


def test_close_stdout_is_a_classified_connection_loss() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=NO_RECONNECT)
    with connect(defn, Handlers(event=events)) as client:
        start = time.monotonic()
        with pytest.raises(ConnectionLostError) as info:
            client.call_tool("hostile", {"action": "close_stdout"}, CallOpts(timeout=10))
        assert time.monotonic() - start < SLACK + 1.0
        # The tools/call was sent: its outcome is unknown.
        assert isinstance(info.value, IndeterminateError)
        assert wait_until(lambda: client.status().state is State.DEGRADED)
        assert wait_until(lambda: bool(_lost_events(events)))
        assert _lost_events(events)[0].failure_class is FailureClass.TRANSPORT_CLOSED
        with pytest.raises(ConnectionLostError):
            client.ping(CallOpts(timeout=5))
        # The server is still alive (it only closed stdout); close must still end it.
        start = time.monotonic()
        client.close(timeout=2)
        assert time.monotonic() - start < 2 + SLACK


def test_lost_connection_fails_a_non_tool_request_as_connection_lost() -> None:
    # Only tools/call is indeterminate; a read is plainly lost.
    defn = definition("--era", "modern", allow_parallel_calls=True, reconnect=NO_RECONNECT)
    with connect(defn) as client:
        future = client.submit_tool_call("hostile", {"action": "close_stdout"})
        assert isinstance(future.exception(timeout=5), IndeterminateError)
        with pytest.raises(ConnectionLostError) as info:
            client.read_resource("test://static/hello", CallOpts(timeout=5))
        assert not isinstance(info.value, IndeterminateError)


# ----------------------------------------------------------------- user code under stress


def test_a_raising_progress_callback_does_not_break_the_call() -> None:
    calls: list[float] = []

    def progress(report: mcpclient.Progress) -> None:
        calls.append(report.progress)
        raise RuntimeError("user bug in a progress callback")

    with connect(definition("--era", "modern")) as client:
        result = client.call_tool(
            "progress", {"steps": 3, "interval": 0.01}, CallOpts(timeout=5, progress=progress)
        )
        assert not result.is_error
        assert wait_until(lambda: len(calls) == 3)
        _echo_works(client)


def test_close_does_not_wait_for_a_stuck_progress_callback() -> None:
    release = threading.Event()
    entered = threading.Event()

    def progress(report: mcpclient.Progress) -> None:
        entered.set()
        release.wait(30)  # user code that never returns on its own

    client = connect(definition("--era", "modern"))
    try:
        future = client.submit_tool_call(
            "progress", {"steps": 2, "interval": 0.01}, CallOpts(timeout=10, progress=progress)
        )
        assert entered.wait(5)
        assert not future.result(timeout=5).is_error  # the reader is not blocked by it
        start = time.monotonic()
        client.close(timeout=2)
        assert time.monotonic() - start < 2 + SLACK
        assert client.status().state is State.CLOSED
        # The lane thread running the stuck callback is marked abandoned.
        assert any(t.name == "mcpclient-abandoned-engine" for t in threading.enumerate())
    finally:
        release.set()
        client.close()
    assert threads_ended("mcpclient-abandoned-engine")


def test_slow_log_handler_under_a_flood_keeps_lifecycle_events() -> None:
    events = Events()
    logs: list[mcpclient.LogMessage] = []

    def slow_log(message: mcpclient.LogMessage) -> None:
        time.sleep(0.001)
        logs.append(message)

    client = connect(definition("--era", "legacy"), Handlers(log=slow_log, event=events))
    try:
        result = client.call_tool(
            "hostile", {"action": "notification_flood", "count": 5000}, CallOpts(timeout=20)
        )
        assert text_of(result) == "hostile notification_flood: done"
        assert wait_until(lambda: len(logs) + client.status().dropped_notifications >= 5000, 10)
        assert client.status().dropped_notifications > 0  # coalesced, not queued without bound
    finally:
        client.close()
    transitions = [
        (str(e.from_state), str(e.to_state))
        for e in events
        if isinstance(e, mcpclient.StateChanged)
    ]
    assert transitions[-2:] == [("ready", "closing"), ("closing", "closed")]
