"""Tasks without I/O: the wire shapes of both forms, the state machine, the polling schedule."""

from __future__ import annotations

import logging

import pytest

from mcpclient import DeadlineExceededError, RequestCancelledError, TaskState
from mcpclient._internal.client.tasks.task_machine import (
    POLL_CEILING,
    POLL_DEFAULT,
    POLL_FLOOR,
    TaskTracker,
    Wakeups,
    legal,
    poll_delay,
    poll_until,
    waiter,
)
from mcpclient._internal.wire import tasks as wire
from mcpclient._internal.wire.tasks import TaskWireError, WireTask
from mcpclient.errors import LimitExceededError

S = TaskState


def task(status: S = S.WORKING, task_id: str = "t1", poll: int | None = None) -> WireTask:
    return WireTask(task_id=task_id, status=status, poll_interval_ms=poll)


# ------------------------------------------------------------------ wire


def test_legacy_create_result_is_nested_with_ttl_and_poll_interval() -> None:
    raw = {
        "task": {
            "taskId": "abc",
            "status": "working",
            "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttl": 300000,
            "pollInterval": 1000,
        }
    }
    assert wire.is_create_result(raw, modern=False)
    assert not wire.is_create_result({"content": [], "task": {}}, modern=False)
    parsed = wire.parse_create(raw, modern=False)
    assert (parsed.task_id, parsed.status, parsed.ttl_ms, parsed.poll_interval_ms) == (
        "abc",
        S.WORKING,
        300000,
        1000,
    )


def test_modern_create_result_is_flat_with_ms_names() -> None:
    raw = {
        "resultType": "task",
        "taskId": "m",
        "status": "working",
        "ttlMs": None,
        "pollIntervalMs": 250,
        "ttl": 5,
    }
    assert wire.is_create_result(raw, modern=True)
    assert not wire.is_create_result({"resultType": "complete"}, modern=True)
    parsed = wire.parse_create(raw, modern=True)
    assert parsed.ttl_ms is None and parsed.poll_interval_ms == 250


def test_a_modern_create_result_may_be_terminal_without_its_payload() -> None:
    created = wire.parse_create(
        {"resultType": "task", "taskId": "m", "status": "completed"}, modern=True
    )
    assert created.status is S.COMPLETED and created.result is None
    with pytest.raises(TaskWireError):
        wire.parse_create(
            {"resultType": "task", "taskId": "m", "status": "completed", "result": 5},
            modern=True,
        )


def test_modern_detailed_task_inlines_the_outcome() -> None:
    done = wire.parse_task(
        {"taskId": "m", "status": "completed", "result": {"content": [], "isError": True}},
        modern=True,
    )
    assert done.result == {"content": [], "isError": True}
    failed = wire.parse_task(
        {"taskId": "m", "status": "failed", "error": {"code": -32603, "message": "boom"}},
        modern=True,
    )
    assert failed.error == {"code": -32603, "message": "boom"}
    asking = wire.parse_task(
        {"taskId": "m", "status": "input_required", "inputRequests": {"k": {"method": "x"}}},
        modern=True,
    )
    assert asking.input_requests == {"k": {"method": "x"}}
    with pytest.raises(TaskWireError):
        wire.parse_task({"taskId": "m", "status": "completed"}, modern=True)


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        {"status": "working"},
        {"taskId": 7, "status": "working"},
        {"taskId": "", "status": "working"},
        {"taskId": "x" * 600, "status": "working"},
        {"taskId": "t", "status": "done"},
        {"taskId": "t"},
    ],
)
def test_malformed_tasks_are_refused_without_naming_the_id(raw: object) -> None:
    with pytest.raises(TaskWireError) as info:
        wire.parse_task(raw, modern=False)
    assert "xxxx" not in str(info.value)


def test_bad_timings_are_dropped_not_fatal() -> None:
    for bad in (-1, "10", True, float("nan"), 10**13):
        parsed = wire.parse_task(
            {"taskId": "t", "status": "working", "pollInterval": bad, "ttl": bad}, modern=False
        )
        assert parsed.poll_interval_ms is None and parsed.ttl_ms is None


def test_list_skips_bad_entries_and_reads_the_cursor() -> None:
    tasks, cursor = wire.parse_list(
        {"tasks": [{"taskId": "a", "status": "working"}, {"taskId": 1}], "nextCursor": "c2"}
    )
    assert [t.task_id for t in tasks] == ["a"] and cursor == "c2"
    with pytest.raises(TaskWireError):
        wire.parse_list({"tasks": {}})


def test_capabilities_per_era() -> None:
    legacy = wire.server_tasks(
        {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}, modern=False
    )
    assert legacy == wire.ServerTasks(tools_call=True, cancel=True, list=True)
    assert wire.server_tasks({"tasks": {"requests": {}}}, modern=False) == wire.ServerTasks()
    modern = wire.server_tasks({"extensions": {wire.EXTENSION: {}}}, modern=True)
    assert modern == wire.ServerTasks(tools_call=True, cancel=True, list=False)
    # The legacy capability means nothing on the modern wire.
    assert wire.server_tasks({"tasks": {"requests": {"tools": {"call": {}}}}}, modern=True) == (
        wire.ServerTasks()
    )


def test_task_support_defaults_to_forbidden() -> None:
    assert wire.tool_task_support(None) == "forbidden"
    assert wire.tool_task_support({"taskSupport": "bogus"}) == "forbidden"
    assert wire.tool_task_support({"taskSupport": "required"}) == "required"
    assert wire.tool_task_support({"taskSupport": "optional"}) == "optional"


# ------------------------------------------------------------------ state machine


def test_transitions_exactly_as_specified() -> None:
    live = (S.WORKING, S.INPUT_REQUIRED)
    for old in S:
        for new in S:
            expected = old is new or old in live
            assert legal(old, new) is expected, (old, new)


def test_tracker_ignores_illegal_reports_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    tracker = TaskTracker(task(S.WORKING), binding="b")
    assert tracker.observe(task(S.INPUT_REQUIRED))
    assert tracker.observe(task(S.CANCELLED))
    with caplog.at_level(logging.WARNING, logger="mcpclient.tasks"):
        assert not tracker.observe(task(S.WORKING))  # a cancelled task stays cancelled
        assert not tracker.observe(task(S.COMPLETED))
        assert not tracker.observe(task(S.CANCELLED, task_id="other"))
    assert tracker.status is S.CANCELLED and tracker.ignored == 3
    assert len(caplog.records) == 3
    assert all("t1" not in r.getMessage() for r in caplog.records)  # ids are secrets


# ------------------------------------------------------------------ polling


def test_poll_delay_follows_the_suggestion_within_floor_ceiling_and_deadline() -> None:
    assert poll_delay(1000, now=0, deadline=100) == 1.0
    assert poll_delay(None, now=0, deadline=100) == POLL_DEFAULT
    assert poll_delay(0, now=0, deadline=100) == POLL_FLOOR
    assert poll_delay(1, now=0, deadline=100) == POLL_FLOOR
    assert poll_delay(10**9, now=0, deadline=1000) == POLL_CEILING
    assert poll_delay(1000, now=99.7, deadline=100) == pytest.approx(0.3)
    assert poll_delay(1000, now=101, deadline=100) == 0.0


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.t += seconds
        return False


def test_poll_until_paces_by_the_latest_suggestion() -> None:
    clock = FakeClock()
    reports = iter([task(poll=200), task(poll=10), task(S.COMPLETED)])
    tracker = TaskTracker(task(poll=500), binding="b")
    done = poll_until(
        tracker,
        lambda _d: next(reports),
        stop=lambda s: s.terminal,
        deadline=60,
        clock=clock.now,
        wait=clock.wait,
        binding="b",
        op="call_tool",
    )
    assert done.status is S.COMPLETED
    assert clock.waits == [0.5, 0.2, POLL_FLOOR]


def test_poll_until_never_passes_the_deadline_of_a_task_that_never_ends() -> None:
    clock = FakeClock()
    tracker = TaskTracker(task(poll=400), binding="b")
    with pytest.raises(DeadlineExceededError):
        poll_until(
            tracker,
            lambda _d: task(poll=400),
            stop=lambda s: s.terminal,
            deadline=1.0,
            clock=clock.now,
            wait=clock.wait,
            binding="b",
            op="call_tool",
        )
    assert clock.t == pytest.approx(1.0)
    assert clock.waits == [0.4, 0.4, pytest.approx(0.2)]


def test_poll_until_stops_on_cancel_and_bounds_its_polls() -> None:
    tracker = TaskTracker(task(poll=0), binding="b")
    with pytest.raises(RequestCancelledError):
        poll_until(
            tracker,
            lambda _d: task(),
            stop=lambda s: s.terminal,
            deadline=10,
            clock=lambda: 0.0,
            wait=lambda _s: True,
            binding="b",
            op="call_tool",
        )
    clock = FakeClock()
    with pytest.raises(LimitExceededError):
        poll_until(
            tracker,
            lambda _d: task(poll=0),
            stop=lambda s: s.terminal,
            deadline=10**6,
            clock=clock.now,
            wait=clock.wait,
            binding="b",
            op="call_tool",
            max_polls=5,
        )


def test_an_illegal_report_does_not_end_the_poll() -> None:
    clock = FakeClock()
    tracker = TaskTracker(task(S.WORKING, poll=100), binding="b")
    # A report for another task claims completion: ignored, polling goes on.
    reports = iter([task(S.COMPLETED, task_id="x"), task(S.FAILED)])
    done = poll_until(
        tracker,
        lambda _d: next(reports),
        stop=lambda s: s.terminal,
        deadline=60,
        clock=clock.now,
        wait=clock.wait,
        binding="b",
        op="o",
    )
    assert done.status is S.FAILED and tracker.ignored == 1


# ------------------------------------------------------------------ status notifications


def test_a_notification_wakes_the_poller_but_never_below_the_floor() -> None:
    import threading
    import time

    wakeups = Wakeups()
    event = wakeups.register("t1")
    wait = waiter(event, lambda: False, time.monotonic)
    assert wakeups.wake("other") == 0
    timer = threading.Timer(0.01, lambda: wakeups.wake("t1"))
    timer.start()
    started = time.monotonic()
    assert wait(10.0) is False
    elapsed = time.monotonic() - started
    timer.join()
    # Woken long before the 10 s interval, but not before the floor.
    assert POLL_FLOOR - 0.005 <= elapsed < 2.0
    assert wakeups.woken == 1
    wakeups.unregister("t1", event)
    assert wakeups.wake("t1") == 0


def test_a_cancel_ends_the_wait_at_once() -> None:
    import time

    event = Wakeups().register("t1")
    cancelled = [False]
    wait = waiter(event, lambda: cancelled[0], time.monotonic)
    cancelled[0] = True
    event.set()  # what the cancel token's callback does
    started = time.monotonic()
    assert wait(10.0) is True
    assert time.monotonic() - started < POLL_FLOOR
