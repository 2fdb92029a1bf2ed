"""The request table (session/request_table.py), driven without threads.

An injectable clock and an injectable scheduler stand in for time and for
the process-wide watcher; the wire cancel is a recording callback. Every
way a request can end (answer, deadline, cancel, the holder cancelling its
Future, loss, close) races every other in both orders: the first one wins,
the Future completes exactly once, the losers are no-ops, and the wire
cancel goes out at most once, only for a deadline or a cancel.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.request_table import Pending, RequestTable
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    IndeterminateError,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
)


class Clock:
    """Monotonic time that moves only when told to."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class FakeTimer:
    def __init__(self, deadline: float, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.callback()


class Harness:
    def __init__(self) -> None:
        self.clock = Clock()
        self.timers: list[FakeTimer] = []
        self.wire: list[tuple[int, str]] = []
        self.table = RequestTable(
            "unit", send_cancel=self._send_cancel, clock=self.clock, schedule=self._schedule
        )

    def _send_cancel(self, request_id: int, reason: str) -> None:
        self.wire.append((request_id, reason))

    def _schedule(self, deadline: float, callback: Callable[[], None]) -> Any:
        timer = FakeTimer(deadline, callback)
        self.timers.append(timer)
        return timer

    def entered(
        self, *, timeout: float = 5.0, indeterminate: bool = False, on_wire: bool = True
    ) -> tuple[Pending, list[concurrent.futures.Future[Any]]]:
        entry = self.table.new(
            "tools/call",
            CallContext(
                op="call_tool",
                deadline=self.clock() + timeout,
                indeterminate_on_loss=indeterminate,
                cancel_on_wire=on_wire,
            ),
        )
        done: list[concurrent.futures.Future[Any]] = []
        entry.add_done_callback(done.append)
        assert self.table.enter(entry)
        return entry, done


@pytest.fixture
def h() -> Harness:
    return Harness()


def _error(entry: Pending) -> BaseException | None:
    return entry.exception(timeout=0)


# ------------------------------------------------------------------------ one way each


def test_an_answer_completes_the_future_once(h: Harness) -> None:
    entry, done = h.entered()
    assert not entry.done()
    assert entry.request_id in h.table
    assert h.table.answer(entry.request_id, {"ok": True})
    assert entry.result(timeout=0) == {"ok": True}
    assert done == [entry]
    assert entry.request_id not in h.table
    assert len(h.table) == 0
    h.table.wait(entry)  # already over: returns at once, no thread needed
    assert entry.outcome() == {"ok": True}
    assert h.wire == []


def test_a_remote_error_answer_is_the_futures_exception(h: Harness) -> None:
    entry, _ = h.entered()
    failure = ProtocolError("bad", binding="unit", op="tools/call")
    assert h.table.answer(entry.request_id, exc=failure)
    assert _error(entry) is failure
    assert failure.op == "call_tool", "the caller sees the op it called"
    with pytest.raises(ProtocolError):
        entry.outcome()


def test_a_blocking_caller_expires_its_request_at_the_deadline(h: Harness) -> None:
    entry, done = h.entered(timeout=2.0)
    h.clock.t += 2.0
    h.table.wait(entry)  # the deadline has passed: the caller expires it itself
    error = _error(entry)
    assert isinstance(error, DeadlineExceededError)
    assert error.failure_class is FailureClass.DEADLINE
    assert error.op == "call_tool"
    assert h.wire == [(entry.request_id, "deadline exceeded")]
    assert done == [entry]
    assert h.timers == [], "a blocking call needs no timer"


def test_a_late_answer_after_the_deadline_is_dropped(h: Harness) -> None:
    entry, done = h.entered(timeout=1.0)
    h.clock.t += 1.5
    h.table.wait(entry)
    assert not h.table.answer(entry.request_id, {"late": True})
    assert isinstance(_error(entry), DeadlineExceededError)
    assert done == [entry]
    assert len(h.wire) == 1


def test_the_deadline_class_is_the_requests_own(h: Harness) -> None:
    entry = h.table.new(
        "tools/call",
        CallContext(
            op="call_tool", deadline=h.clock() + 1, deadline_class=FailureClass.STARTUP_TIMEOUT
        ),
    )
    assert h.table.enter(entry)
    h.clock.t += 1
    h.table.wait(entry)
    error = _error(entry)
    assert isinstance(error, DeadlineExceededError)
    assert error.failure_class is FailureClass.STARTUP_TIMEOUT


def test_cancel_fails_the_request_and_sends_the_wire_cancel_once(h: Harness) -> None:
    entry, done = h.entered()
    assert h.table.cancel(entry.request_id, "stop")
    assert not h.table.cancel(entry.request_id, "again")
    error = _error(entry)
    assert isinstance(error, RequestCancelledError)
    assert "stop" in str(error)
    assert h.wire == [(entry.request_id, "stop")]
    assert done == [entry]
    assert not h.table.answer(entry.request_id, {"late": True})


def test_no_wire_cancel_for_a_request_that_may_not_be_cancelled_on_the_wire(h: Harness) -> None:
    entry, _ = h.entered(on_wire=False)
    assert h.table.cancel(entry.request_id, "stop")
    h.clock.t += 10
    other, _ = h.entered(timeout=1, on_wire=False)
    h.clock.t += 1
    h.table.wait(other)
    assert isinstance(_error(entry), RequestCancelledError)
    assert isinstance(_error(other), DeadlineExceededError)
    assert h.wire == []


def test_cancelling_the_future_takes_the_request_out_and_tells_the_server(h: Harness) -> None:
    entry, done = h.entered()
    assert entry.cancel()
    assert entry.cancelled() and entry.done()
    assert entry.cancel(), "cancelling a cancelled Future succeeds again"
    assert h.wire == [(entry.request_id, "the future was cancelled")]
    assert entry.request_id not in h.table
    assert not h.table.answer(entry.request_id, {"late": True})
    assert done == [entry]
    with pytest.raises(concurrent.futures.CancelledError):
        entry.result(timeout=0)
    with pytest.raises(RequestCancelledError):
        entry.outcome()


def test_a_completed_future_cannot_be_cancelled(h: Harness) -> None:
    entry, _ = h.entered()
    h.table.answer(entry.request_id, 7)
    assert not entry.cancel()
    assert not entry.cancelled()
    assert entry.result() == 7
    assert h.wire == []


@pytest.mark.parametrize("indeterminate", [False, True])
def test_a_loss_fails_every_pending_request_at_once(h: Harness, indeterminate: bool) -> None:
    entries = [h.entered(indeterminate=indeterminate)[0] for _ in range(3)]
    lost = ConnectionLostError("gone", binding="unit")
    assert h.table.fail_all(FailureClass.TRANSPORT_CLOSED, "gone", lost)
    assert len(h.table) == 0
    for entry in entries:
        error = _error(entry)
        expected = IndeterminateError if indeterminate else ConnectionLostError
        assert type(error) is expected
        assert isinstance(error, Error) and error.op == "call_tool"
    assert h.wire == [], "nothing is cancelled on a connection that is gone"
    assert h.table.failure is lost
    assert not h.table.fail_all(FailureClass.SHUTDOWN, "closed", ShutdownError("closed"))
    assert h.table.failure is lost, "the first failure stays"


def test_close_fails_pending_requests_with_shutdown_and_refuses_new_ones(h: Harness) -> None:
    entry, _ = h.entered()
    closed = ShutdownError("the binding is closed", binding="unit", op="close")
    h.table.fail_all(FailureClass.SHUTDOWN, "closed while in flight", closed)
    assert isinstance(_error(entry), ShutdownError)
    later = h.table.new("tools/list", CallContext(op="list_tools", deadline=h.clock() + 5))
    assert not h.table.enter(later)
    error = _error(later)
    assert isinstance(error, ShutdownError) and error.op == "list_tools"
    assert len(h.table) == 0


def test_a_request_entered_after_a_loss_fails_as_lost(h: Harness) -> None:
    h.table.fail_all(FailureClass.TRANSPORT_CLOSED, "gone", ConnectionLostError("gone"))
    later = h.table.new("tools/list", CallContext(op="list_tools", deadline=h.clock() + 5))
    assert not h.table.enter(later)
    error = _error(later)
    assert type(error) is ConnectionLostError and "gone" in str(error)


def test_a_request_already_late_is_never_entered(h: Harness) -> None:
    # (One already cancelled is refused by its session: test_call_context.py.)
    late = h.table.new("tools/call", CallContext(op="call_tool", deadline=h.clock()))
    assert not h.table.enter(late)
    assert isinstance(_error(late), DeadlineExceededError)
    assert len(h.table) == 0
    assert h.wire == [], "nothing was sent, so nothing is cancelled"


# ------------------------------------------------------------------ the watcher's part


def test_a_watched_request_is_expired_by_its_timer(h: Harness) -> None:
    entry, done = h.entered(timeout=3)
    h.table.watch(entry)
    (timer,) = h.timers
    assert timer.deadline == entry.ctx.deadline
    timer.fire()
    assert isinstance(_error(entry), DeadlineExceededError)
    assert h.wire == [(entry.request_id, "deadline exceeded")]
    assert done == [entry]


def test_an_answered_request_cancels_its_timer(h: Harness) -> None:
    entry, _ = h.entered(timeout=3)
    h.table.watch(entry)
    h.table.answer(entry.request_id, 1)
    (timer,) = h.timers
    assert timer.cancelled
    timer.callback()  # even a timer that fires anyway changes nothing
    assert entry.result() == 1
    assert h.wire == []


def test_a_timer_attached_to_a_completed_request_is_cancelled(h: Harness) -> None:
    entry, _ = h.entered(timeout=3)
    h.table.answer(entry.request_id, 1)
    h.table.watch(entry)
    assert h.timers[0].cancelled


def test_a_canceller_runs_on_its_token(h: Harness) -> None:
    entry, _ = h.entered()
    token = CancelToken()
    token.add_callback(h.table.canceller(entry.request_id, token))
    token.cancel("user said so")
    error = _error(entry)
    assert isinstance(error, RequestCancelledError) and error.op == "call_tool"
    assert h.wire == [(entry.request_id, "user said so")]


def test_progress_is_routed_only_while_the_request_is_pending(h: Harness) -> None:
    seen: list[dict[str, Any]] = []
    ctx = CallContext(op="call_tool", deadline=h.clock() + 5, progress=seen.append)
    entry = h.table.new("tools/call", ctx)
    entry.token = "tok-1"
    assert h.table.enter(entry)
    assert h.table.progress_for("tok-1") is ctx.progress
    assert h.table.progress_for("other") is None
    h.table.answer(entry.request_id, {})
    assert h.table.progress_for("tok-1") is None


# ------------------------------------------------------------------------------ races

WAYS = ["answer", "expire", "cancel", "future_cancel", "lose", "close"]


def _end(h: Harness, entry: Pending, way: str) -> None:
    table = h.table
    if way == "answer":
        table.answer(entry.request_id, {"answer": True})
    elif way == "expire":
        h.clock.t = max(h.clock.t, entry.ctx.deadline)
        table.wait(entry)
    elif way == "cancel":
        table.cancel(entry.request_id, "cancelled")
    elif way == "future_cancel":
        entry.cancel()
    elif way == "lose":
        table.fail_all(FailureClass.TRANSPORT_CLOSED, "gone", ConnectionLostError("gone"))
    else:
        table.fail_all(FailureClass.SHUTDOWN, "closed", ShutdownError("closed"))


def _outcome(entry: Pending) -> str:
    if entry.cancelled():
        return "future_cancel"
    error = _error(entry)
    if error is None:
        return "answer"
    names: dict[type[BaseException], str] = {
        DeadlineExceededError: "expire",
        RequestCancelledError: "cancel",
        ConnectionLostError: "lose",
        ShutdownError: "close",
    }
    return names[type(error)]


@pytest.mark.parametrize(("first", "second"), list(itertools.permutations(WAYS, 2)))
def test_the_first_way_to_end_wins_and_the_future_completes_once(
    h: Harness, first: str, second: str
) -> None:
    entry, done = h.entered()
    _end(h, entry, first)
    _end(h, entry, second)
    assert _outcome(entry) == first
    assert done == [entry], "callbacks ran exactly once"
    cancels = [rid for rid, _ in h.wire]
    expected = [entry.request_id] if first in ("expire", "cancel", "future_cancel") else []
    assert cancels == expected, "the wire cancel goes out once, from the winner only"
    assert len(h.table) == 0


def test_complete_twice_is_refused(h: Harness) -> None:
    entry, done = h.entered()
    taken = h.table.take(entry.request_id)
    assert taken is entry
    assert h.table.take(entry.request_id) is None, "only one taker"
    assert entry.complete(1)
    assert not entry.complete(2)
    assert not entry.complete(exc=ConnectionLostError("x"))
    assert entry.result() == 1
    assert done == [entry]


# ----------------------------------------------------------------- it is a real Future


def test_the_futures_own_api_works_on_a_pending_request(h: Harness) -> None:
    entry, _ = h.entered()
    assert isinstance(entry, concurrent.futures.Future)
    with pytest.raises(concurrent.futures.TimeoutError):
        entry.result(timeout=0)
    with pytest.raises(concurrent.futures.TimeoutError):
        entry.exception(timeout=-1)  # as a plain Future: no wait, no ValueError
    finished, pending = concurrent.futures.wait([entry], timeout=0)
    assert (finished, pending) == (set(), {entry})
    assert "pending" in repr(entry)
    h.table.answer(entry.request_id, "x")
    finished, pending = concurrent.futures.wait([entry], timeout=0)
    assert (finished, pending) == ({entry}, set())
    assert list(concurrent.futures.as_completed([entry], timeout=0)) == [entry]
    late: list[Any] = []
    entry.add_done_callback(late.append)  # after completion: runs at once
    assert late == [entry]
    assert "finished" in repr(entry)


def test_a_stream_has_no_deadline_and_is_never_watched_or_expired(h: Harness) -> None:
    entry = h.table.new("subscriptions/listen", CallContext(op="listen", deadline=None))
    assert h.table.enter(entry)
    h.table.watch(entry)
    assert h.timers == []  # the watcher holds nothing for it
    h.clock.t += 1e9
    assert not entry.done()
    assert h.table.answer(entry.request_id, {"ok": True})
    h.table.wait(entry)  # returns at once: it is over
    assert entry.result(timeout=0) == {"ok": True}


# ------------------------------------------------------------------------ idle timeout


def _idle_entry(h: Harness, *, timeout: float = 30.0, idle: float = 2.0) -> Pending:
    entry = h.table.new(
        "tools/call",
        CallContext(op="call_tool", deadline=h.clock() + timeout, idle_timeout=idle),
    )
    entry.token = "tok"
    assert h.table.enter(entry)
    return entry


def test_a_watched_silent_request_fails_at_its_idle_limit(h: Harness) -> None:
    entry = _idle_entry(h)
    h.table.watch(entry)
    (timer,) = h.timers
    assert timer.deadline == 102.0  # entered at 100, idle 2 s: sooner than the deadline
    h.clock.t = 102.0
    timer.fire()
    error = _error(entry)
    assert isinstance(error, DeadlineExceededError)
    assert error.message.startswith("no progress for 2 s")
    assert error.failure_class is FailureClass.DEADLINE
    assert h.wire == [(entry.request_id, "deadline exceeded")]  # cancelled like any expiry


def test_progress_moves_the_idle_limit_on_and_never_the_deadline(h: Harness) -> None:
    entry = _idle_entry(h, timeout=5.0, idle=2.0)  # entered at 100: deadline 105
    h.table.watch(entry)
    looks = []
    for beat, look in ((101.5, 102.0), (103.0, 103.5), (104.5, 105.0)):
        h.clock.t = beat
        assert h.table.progress_for("tok") is None  # no callback: only a sign of life
        timer = h.timers[-1]
        looks.append(timer.deadline)
        h.clock.t = look
        timer.fire()
        if look < 105.0:
            assert not entry.done(), "a request that keeps reporting progress stays alive"
    assert looks == [102.0, 103.5, 105.0]  # each look set by the last report, capped
    error = _error(entry)
    assert isinstance(error, DeadlineExceededError)
    assert error.message == "the call did not complete by its deadline"


def test_a_blocking_wait_ends_at_the_idle_limit() -> None:
    table = RequestTable("unit", send_cancel=lambda _id, _why: None)
    entry = table.new(
        "tools/call", CallContext(op="call_tool", deadline=time.monotonic() + 30, idle_timeout=0.2)
    )
    assert table.enter(entry)
    started = time.monotonic()
    table.wait(entry)
    assert time.monotonic() - started < 20  # not the 30 s deadline
    error = _error(entry)
    assert isinstance(error, DeadlineExceededError) and "no progress for" in error.message


def test_a_blocking_wait_outlives_its_idle_limit_while_progress_comes() -> None:
    table = RequestTable("unit", send_cancel=lambda _id, _why: None)
    entry = table.new(
        "tools/call", CallContext(op="call_tool", deadline=time.monotonic() + 30, idle_timeout=0.3)
    )
    entry.token = "tok"
    assert table.enter(entry)
    stop = threading.Event()
    beats: list[float] = []

    def beat() -> None:
        while not stop.wait(0.05):
            table.progress_for("tok")
            beats.append(time.monotonic())
            if len(beats) == 20:  # a second of progress, well past 0.3 s idle
                table.answer(entry.request_id, "done")
                return

    thread = threading.Thread(target=beat)
    thread.start()
    try:
        table.wait(entry)
    finally:
        stop.set()
        thread.join(5)
    assert entry.result(timeout=0) == "done"
