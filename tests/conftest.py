"""Suite-wide guards: no test may leak an ``mcpclient-*`` thread or a child process.

Session-scoped peers (servers owned by fixtures) exist before a test starts
and are therefore not counted against it. Threads named
``mcpclient-abandoned-*`` hold user code the library deliberately stopped
waiting for (DESIGN.md §7) and are ignored.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SETTLE_SECONDS = 3.0


def _library_threads() -> set[threading.Thread]:
    return {
        t
        for t in threading.enumerate()
        if t.name.startswith("mcpclient-")
        and not t.name.startswith("mcpclient-abandoned-")
        and t.name != "mcpclient-deadline"
        and t.is_alive()
    }


def child_processes() -> set[int]:
    """Pids (zombies included) whose parent is this process."""
    me = os.getpid()
    children: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command may hold spaces and parentheses: fields follow the last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me:
            children.add(int(entry))
    return children


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fail a test that leaves a library thread or a child process behind."""
    threads_before = _library_threads()
    children_before = child_processes()
    yield
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        threads = _library_threads() - threads_before
        children = child_processes() - children_before
        if not threads and not children:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    problems = []
    if threads:
        problems.append(f"leaked threads: {sorted(t.name for t in threads)}")
    if children:
        problems.append(f"leaked child processes: {sorted(children)}")
    pytest.fail("; ".join(problems))
