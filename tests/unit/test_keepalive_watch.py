"""KeepaliveWatch's counting, driven without threads: a fake session, clock and watcher."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from mcpclient import Keepalive, KeepaliveFailed, KeepaliveLost, KeepaliveRecovered
from mcpclient._core.watcher import Timer
from mcpclient._internal.client.lifecycle.keepalive import KeepaliveWatch
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.failures import RemoteError
from mcpclient.errors import DeadlineExceededError, Error, FailureClass, ProtocolError


class FakeSession:
    def __init__(self) -> None:
        self.failure: Error | None = None
        self.idle: float | None = 0.0
        self.sent: list[tuple[Future[Any], CallContext]] = []
        self.lost: list[Error] = []

    def idle_since(self) -> float | None:
        return self.idle

    def submit(self, method: str, params: dict[str, Any] | None, ctx: CallContext) -> Future[Any]:
        assert method == "ping"
        future: Future[Any] = Future()
        self.sent.append((future, ctx))
        return future

    def lose(self, exc: Error) -> None:
        self.lost.append(exc)
        self.failure = exc


class Rig:
    def __init__(self, keepalive: Keepalive) -> None:
        self.clock = 0.0
        self.timers: list[Timer] = []
        self.events: list[Any] = []
        self.session = FakeSession()
        self.watch = KeepaliveWatch(
            self.session,
            lambda: None,
            keepalive,
            binding="b",
            emit=self.events.append,
            clock=lambda: self.clock,
            schedule=self.schedule,
            wall=lambda: 1.0,
        )

    def schedule(self, at: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(at, callback)
        self.timers.append(timer)
        return timer

    def fire(self) -> None:
        """Run the one pending tick at its time."""
        live = [t for t in self.timers if not t.cancelled]
        assert len(live) == 1, live
        timer = live[0]
        self.clock = max(self.clock, timer.deadline)
        timer.cancelled = True
        assert timer.callback is not None
        timer.callback()

    def fail_last(self) -> None:
        future, _ctx = self.session.sent[-1]
        future.set_exception(DeadlineExceededError("the ping timed out", binding="b", op="ping"))

    def pending(self) -> int:
        return sum(not t.cancelled for t in self.timers)


def test_failures_count_up_recover_and_reach_the_threshold() -> None:
    rig = Rig(Keepalive(interval=1.0, timeout=0.5, failures=3))
    rig.watch.start()
    rig.fire()
    assert len(rig.session.sent) == 1
    assert rig.session.sent[0][1].deadline == 1.5  # now + timeout
    rig.fail_last()
    rig.fire()
    rig.fail_last()
    assert [e.failures for e in rig.events] == [1, 2]
    rig.fire()
    rig.session.sent[-1][0].set_result({})  # answered: the count resets
    assert isinstance(rig.events[-1], KeepaliveRecovered) and rig.events[-1].failures == 2
    for _ in range(3):
        rig.fire()
        rig.fail_last()
    kinds = [type(e) for e in rig.events[3:]]
    assert kinds == [KeepaliveFailed, KeepaliveFailed, KeepaliveFailed, KeepaliveLost]
    assert [e.failures for e in rig.events[3:]] == [1, 2, 3, 3]
    assert len(rig.session.lost) == 1 and "3 keepalive pings" in rig.session.lost[0].message
    assert rig.pending() == 0  # stopped for good


def test_an_error_answer_shows_the_connection_alive() -> None:
    rig = Rig(Keepalive(interval=1.0, failures=1))
    rig.watch.start()
    rig.fire()
    rig.session.sent[-1][0].set_exception(RemoteError(-32601, "Method not found"))
    assert rig.events == [] and rig.session.lost == []
    assert rig.pending() == 1
    rig.fire()
    refused = ProtocolError("HTTP 405", failure_class=FailureClass.REMOTE_HTTP, binding="b")
    rig.session.sent[-1][0].set_exception(refused)
    assert rig.events == [] and rig.session.lost == []


def test_no_ping_while_busy_or_recently_active() -> None:
    rig = Rig(Keepalive(interval=1.0))
    rig.watch.start()
    rig.session.idle = None  # a call in flight
    rig.fire()
    assert rig.session.sent == []
    rig.session.idle = 1.5  # answered at 1.5: idle only from then
    rig.fire()
    assert rig.session.sent == [] and rig.timers[-1].deadline == 2.5
    rig.fire()
    assert len(rig.session.sent) == 1


def test_stop_cancels_the_tick_and_ignores_a_late_outcome() -> None:
    rig = Rig(Keepalive(interval=1.0, failures=1))
    rig.watch.start()
    rig.fire()
    rig.watch.stop()
    rig.fail_last()
    assert rig.events == [] and rig.session.lost == [] and rig.pending() == 0
    rig.watch.start()  # never restarts
    assert rig.pending() == 0
