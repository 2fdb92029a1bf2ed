"""``_internal/host/parallel.run_all``: every job runs, at once, and no thread outlives it."""

from __future__ import annotations

import logging
import threading

import pytest

from mcpclient._internal.host import parallel
from mcpclient._internal.host.parallel import run_all


def pool_threads(role: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"mcpclient-{role}-host"]


def test_jobs_run_at_the_same_time_and_no_thread_outlives_the_call() -> None:
    count = 6
    # Every job waits for all the others: only a run that has them all in flight at
    # once gets past the barrier (a serial run breaks it by its timeout).
    barrier = threading.Barrier(count, timeout=10)
    ran: list[int] = []
    lock = threading.Lock()

    def job(n: int) -> None:
        barrier.wait()
        with lock:
            ran.append(n)

    run_all("test", list(range(count)), job)
    assert sorted(ran) == list(range(count))
    assert pool_threads("test") == []


def test_at_most_max_threads_plus_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MAX_THREADS", 2)
    lock = threading.Lock()
    active = [0]
    peak = [0]
    seen: set[str] = set()
    passed: list[int] = []
    # Groups of three pass the barrier together: two threads and the caller.
    barrier = threading.Barrier(3, timeout=10)

    def job(n: int) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            seen.add(threading.current_thread().name)
        try:
            barrier.wait()
            passed.append(n)
        finally:
            with lock:
                active[0] -= 1

    run_all("cap", list(range(6)), job)
    assert sorted(passed) == list(range(6))
    assert peak[0] == 3
    assert threading.current_thread().name in seen  # the caller took jobs too
    assert pool_threads("cap") == []


def test_a_raising_job_is_logged_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    done: list[int] = []

    def job(n: int) -> None:
        if n == 1:
            raise RuntimeError("boom")
        done.append(n)

    with caplog.at_level(logging.ERROR, logger=parallel.__name__):
        run_all("err", [0, 1, 2], job)
    assert sorted(done) == [0, 2]
    assert any("failed unexpectedly" in r.message for r in caplog.records)
    assert pool_threads("err") == []


def test_one_job_runs_on_the_caller() -> None:
    names: list[str] = []
    run_all("one", [0], lambda _: names.append(threading.current_thread().name))
    assert names == [threading.current_thread().name]
    run_all("none", [], lambda _: names.append("never"))
    assert names == [threading.current_thread().name]


def test_an_interrupted_wait_cancels_the_jobs_and_propagates() -> None:
    cancel = threading.Event()
    calls: list[str] = []

    caller = threading.current_thread()

    def job(_: int) -> None:
        if threading.current_thread() is caller:  # interrupted while the other job runs
            raise KeyboardInterrupt
        cancel.wait(10)
        calls.append("ended")

    with pytest.raises(KeyboardInterrupt):
        run_all("intr", [0, 1], job, interrupted=cancel.set)
    assert cancel.is_set()
    assert calls == ["ended"]
    assert pool_threads("intr") == []
