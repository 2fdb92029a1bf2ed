"""Suite-wide guards: no test may leak an ``mcpclient-*`` thread or a child process.

Session-scoped peers (servers owned by fixtures) exist before a test starts
and are therefore not counted against it. Threads named
``mcpclient-abandoned-*`` hold user code the library deliberately stopped
waiting for (DESIGN.md §7) and are ignored.

Child processes are found by scanning ``/proc`` (:mod:`tests.support.processes`,
the suite's one scanner), twice per test. tests/unit/ cannot start a process
(its conftest refuses it), so there :func:`leak_scan_processes` is False and
the scans are skipped: they were most of a unit test's set-up and tear-down.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.support.processes import children_of, library_threads

SETTLE_SECONDS = 3.0


def child_processes() -> set[int]:
    """Pids (zombies included) whose parent is this process."""
    return children_of(os.getpid())


@pytest.fixture
def leak_scan_processes() -> bool:
    """Whether :func:`no_leaks` scans for child processes (tests/unit/ says no)."""
    return True


@pytest.fixture(autouse=True)
def _fresh_era_cache() -> None:
    """Each test starts with no remembered era: a loopback port reused by the next
    test's server must not inherit the era of the last one's (the cache is by URL)."""
    from mcpclient._internal.client.lifecycle import connection

    with connection._era_lock:
        connection._era_cache.clear()


@pytest.fixture(autouse=True)
def no_leaks(leak_scan_processes: bool) -> Iterator[None]:
    """Fail a test that leaves a library thread or a child process behind."""
    scan = child_processes if leak_scan_processes else set
    threads_before = library_threads()
    children_before = scan()
    yield
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        threads = library_threads() - threads_before
        children = scan() - children_before
        if not threads and not children:
            return
        if time.monotonic() > deadline:
            break
        # A thread still ending is joined (it returns the moment the thread ends);
        # only child processes, which nothing here can wait on, are polled.
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if children:
            time.sleep(0.05)
    problems = []
    if threads:
        problems.append(f"leaked threads: {sorted(t.name for t in threads)}")
    if children:
        problems.append(f"leaked child processes: {sorted(children)}")
    pytest.fail("; ".join(problems))
