"""The on-demand worker primitive: threads that exist only while they have work.

Every background worker of a binding is built on it (the rpc writer, the
event lane, the HTTP pool and send lane, the refresh and reconnect workers);
the integration tests show each of those end to end. These tests pin the
primitive's own promises: a thread starts on the first work, exits when
idle, restarts when work arrives as it leaves, is joined on close, and no
item is ever lost or served twice.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from mcpclient._core.threads import OnDemandThreads
from tests.support import wait_until

WAIT = 5.0  # generous: how long a test waits for something that should be quick


def named(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == name and t.is_alive()]


class Owner:
    """A queue of items served by an :class:`OnDemandThreads`, recording who served what."""

    def __init__(
        self,
        *,
        idle: float = 5.0,
        limit: int = 1,
        handle: Callable[[int], None] | None = None,
        drain_after_stop: bool = True,
    ) -> None:
        self.queue: collections.deque[int] = collections.deque()
        self.served: list[tuple[int, str, int | None]] = []
        self.sessions = 0  # per-thread resources opened and not yet closed
        self.opened = 0  # threads that ran serve()
        self.handle = handle
        self.drain_after_stop = drain_after_stop
        self.threads: OnDemandThreads[int] = OnDemandThreads(
            "test", "b1", take=self.take, serve=self.serve, idle=idle, limit=limit
        )

    def take(self) -> int | None:
        if self.threads.closed and not self.drain_after_stop:
            self.queue.clear()
        return self.queue.popleft() if self.queue else None

    def serve(self, items: Iterator[int]) -> None:
        with self.threads.lock:
            self.sessions += 1
            self.opened += 1
        try:
            for item in items:
                if self.handle is not None:
                    self.handle(item)
                current = threading.current_thread()
                with self.threads.lock:
                    self.served.append((item, current.name, current.ident))
        finally:
            with self.threads.lock:
                self.sessions -= 1

    def post(self, *items: int) -> None:
        with self.threads.lock:
            for item in items:
                self.queue.append(item)
                self.threads.wake()

    def count(self) -> int:
        with self.threads.lock:
            return len(self.served)

    def close(self, timeout: float = WAIT) -> list[threading.Thread]:
        with self.threads.lock:
            self.threads.stop()
        return self.threads.join(timeout)


def test_no_thread_before_work_and_one_on_the_first_item() -> None:
    owner = Owner()
    assert named("mcpclient-test-b1") == []
    assert owner.threads.active == 0
    owner.post(1)
    assert wait_until(lambda: owner.count() == 1)
    assert owner.served[0][:2] == (1, "mcpclient-test-b1")
    assert owner.threads.active == 1  # waiting for more, within its idle period
    assert owner.close() == []
    assert named("mcpclient-test-b1") == []
    assert owner.sessions == 0


def test_an_idle_thread_exits_and_the_next_item_starts_another() -> None:
    owner = Owner(idle=0.05)
    owner.post(1)
    assert wait_until(lambda: owner.count() == 1 and owner.threads.active == 0)
    assert wait_until(lambda: named("mcpclient-test-b1") == [])
    assert owner.sessions == 0  # the thread closed its resource on the way out
    owner.post(2)
    assert wait_until(lambda: owner.count() == 2)
    assert [item for item, _, _ in owner.served] == [1, 2]
    assert owner.close() == []


def test_an_idle_thread_takes_new_work_instead_of_a_new_thread() -> None:
    owner = Owner(idle=WAIT, limit=4)
    owner.post(1)
    assert wait_until(lambda: owner.count() == 1)
    owner.post(2)
    assert wait_until(lambda: owner.count() == 2)
    assert owner.served[0][2] == owner.served[1][2]  # the same thread served both
    assert owner.threads.active == 1
    assert owner.close() == []


def test_work_arriving_while_every_thread_is_busy_gets_a_thread_up_to_the_limit() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)

    def handle(item: int) -> None:
        started.release()
        assert release.wait(WAIT)

    owner = Owner(limit=2, handle=handle)
    owner.post(1, 2, 3)
    assert started.acquire(timeout=WAIT) and started.acquire(timeout=WAIT)
    assert owner.threads.active == 2  # the limit: item 3 waits for one of them
    assert not started.acquire(timeout=0.05)
    release.set()
    assert wait_until(lambda: owner.count() == 3)
    assert owner.close() == []


@pytest.mark.parametrize("limit", [1, 3])
def test_work_racing_an_idle_exit_is_never_lost_nor_served_twice(limit: int) -> None:
    # idle=0: every thread leaves the moment it finds nothing, so each post
    # races a thread deciding to exit; the decision and the post share a lock.
    owner = Owner(idle=0.0, limit=limit)
    posters = 4
    each = 300

    def post_many(base: int) -> None:
        for n in range(each):
            owner.post(base + n)
            if n % 50 == 0:
                time.sleep(0.001)  # let threads exit now and then

    threads = [threading.Thread(target=post_many, args=(p * each,)) for p in range(posters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert wait_until(lambda: owner.count() == posters * each)
    assert sorted(item for item, _, _ in owner.served) == list(range(posters * each))
    assert owner.close() == []
    assert owner.threads.active == 0
    assert owner.opened > 1  # threads came and went


def test_one_thread_serves_in_posting_order() -> None:
    owner = Owner(idle=0.0)
    for n in range(200):
        owner.post(n)
    assert wait_until(lambda: owner.count() == 200)
    assert [item for item, _, _ in owner.served] == list(range(200))
    assert owner.close() == []


def test_close_joins_every_thread_and_returns_those_it_could_not() -> None:
    release = threading.Event()

    def handle(item: int) -> None:
        if item == 9:
            assert release.wait(WAIT)

    owner = Owner(limit=2, handle=handle)
    owner.post(1)
    assert wait_until(lambda: owner.count() == 1)
    owner.post(9)
    assert wait_until(lambda: owner.threads.active == 1 and owner.count() == 1)
    stuck = owner.close(timeout=0.05)
    assert [t.name for t in stuck] == ["mcpclient-test-b1"]
    release.set()
    assert owner.threads.join(WAIT) == []
    assert named("mcpclient-test-b1") == []


def test_stop_refuses_new_threads_and_the_owner_chooses_drain_or_drop() -> None:
    gate = threading.Event()
    entered = threading.Event()

    def handle(item: int) -> None:
        if item == 0:
            entered.set()
            assert gate.wait(WAIT)

    for drain in (True, False):
        gate.clear()
        entered.clear()
        owner = Owner(handle=handle)
        owner.drain_after_stop = drain
        owner.post(0, 1, 2)
        assert entered.wait(WAIT)  # item 0 is taken; 1 and 2 are queued
        with owner.threads.lock:
            owner.threads.stop()
        gate.set()
        assert owner.threads.join(WAIT) == []
        assert [item for item, _, _ in owner.served] == ([0, 1, 2] if drain else [0])
        owner.post(3)  # refused: no thread starts
        assert owner.threads.active == 0 and named("mcpclient-test-b1") == []


def test_join_from_one_of_the_threads_skips_itself() -> None:
    result: list[list[threading.Thread]] = []

    def handle(item: int) -> None:
        assert owner.threads.owns_current()
        with owner.threads.lock:
            owner.threads.stop()
        result.append(owner.threads.join(WAIT))

    owner = Owner(handle=handle)
    assert not owner.threads.owns_current()
    owner.post(1)
    assert wait_until(lambda: result != [])
    assert result == [[]]
    assert owner.threads.join(WAIT) == []


def test_a_crashed_thread_is_logged_and_what_is_queued_gets_a_new_thread(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def handle(item: int) -> None:
        if item == 1:
            raise RuntimeError("boom")

    owner = Owner(handle=handle)
    with caplog.at_level(logging.ERROR, logger="mcpclient._core.threads"):
        owner.post(1, 2, 3)
        assert wait_until(lambda: owner.count() == 2)
    assert [item for item, _, _ in owner.served] == [2, 3]
    assert any("mcpclient-test-b1 crashed" in r.getMessage() for r in caplog.records)
    assert owner.close() == []
    assert owner.sessions == 0


def test_a_thread_that_crashes_before_any_work_is_not_restarted_in_a_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    starts: list[int] = []

    def serve(items: Iterator[int]) -> None:
        starts.append(1)
        raise RuntimeError("no session")

    queue: collections.deque[int] = collections.deque([1])
    threads: OnDemandThreads[int] = OnDemandThreads(
        "test", "b1", take=lambda: queue.popleft() if queue else None, serve=serve, idle=1.0
    )
    with caplog.at_level(logging.ERROR, logger="mcpclient._core.threads"):
        with threads.lock:
            threads.wake()
        assert wait_until(lambda: threads.active == 0 and named("mcpclient-test-b1") == [])
        assert starts == [1]
        with threads.lock:
            threads.wake()  # the next work tries again
        assert wait_until(lambda: len(starts) == 2 and threads.active == 0)
    with threads.lock:
        threads.stop()
    assert threads.join(WAIT) == []


def test_thread_names_follow_role_and_binding() -> None:
    threads: OnDemandThreads[int] = OnDemandThreads(
        "writer", "srv-1", take=lambda: None, serve=lambda items: None, idle=0.0
    )
    assert threads.name == "mcpclient-writer-srv-1"


def test_a_replacement_that_cannot_start_is_logged_and_the_next_work_retries(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_start = threading.Thread.start
    refuse = threading.Event()

    def start(self: threading.Thread) -> None:
        if refuse.is_set() and self.name == "mcpclient-test-b1":
            raise RuntimeError("can't start new thread")
        real_start(self)

    def handle(item: int) -> None:
        if item == 1:
            refuse.set()
            raise RuntimeError("boom")

    monkeypatch.setattr(threading.Thread, "start", start)
    owner = Owner(handle=handle)
    with caplog.at_level(logging.ERROR, logger="mcpclient._core.threads"):
        owner.post(1, 2)
        assert wait_until(lambda: owner.threads.active == 0 and named("mcpclient-test-b1") == [])
    assert any("no thread to replace" in r.getMessage() for r in caplog.records)
    assert owner.count() == 0
    refuse.clear()
    owner.post(3)  # the next work starts a thread, which serves what waited too
    assert wait_until(lambda: owner.count() == 2)
    assert [item for item, _, _ in owner.served] == [2, 3]
    assert owner.close() == []
