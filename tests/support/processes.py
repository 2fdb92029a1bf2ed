"""Child processes as /proc shows them: parents, states, reaping (Linux only, as the suite).

Also what the leak guards count (tests/conftest.py, tests/support/docs_runner.py):
:func:`library_threads` and :func:`children_of`, through the suite's one /proc scanner.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .waiting import wait_until


def library_threads() -> set[threading.Thread]:
    """Live ``mcpclient-*`` threads a test may not leave behind.

    ``mcpclient-abandoned-*`` threads hold user code the library deliberately
    stopped waiting for, and ``mcpclient-deadline`` is the process-wide watcher.
    """
    return {
        t
        for t in threading.enumerate()
        if t.name.startswith("mcpclient-")
        and not t.name.startswith("mcpclient-abandoned-")
        and t.name != "mcpclient-deadline"
        and t.is_alive()
    }


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command (state, ppid, pgrp, ...)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command may hold spaces and parentheses: the fields follow the last ')'.
    return stat[stat.rindex(")") + 2 :].split()


def scan() -> dict[int, list[str]]:
    """Every process's stat fields, by pid: the one /proc scanner of the suite."""
    table: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields is not None:
                table[int(entry)] = fields
    return table


def proc_ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def proc_state(pid: int) -> str | None:
    fields = _stat(pid)
    return None if fields is None else fields[0]


def children_of(pid: int) -> set[int]:
    """Pids (zombies included) whose parent is ``pid``."""
    return {child for child, fields in scan().items() if int(fields[1]) == pid}


def server_pid(before: set[int]) -> int:
    """The one child of this process that appeared since ``before`` (the server)."""
    new = children_of(os.getpid()) - before
    assert len(new) == 1, f"expected exactly one new child process, found {sorted(new)}"
    return new.pop()


def reaped(pid: int) -> bool:
    """Our own child is gone from the process table (not even a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def dead(pid: int, timeout: float = 3.0) -> bool:
    """Someone else's child is gone, or a zombie nobody reaps (PID 1 may not)."""
    return wait_until(lambda: proc_state(pid) in (None, "Z", "X"), timeout)


def group_members(pgid: int) -> set[int]:
    """Live pids (zombies excluded) in process group ``pgid``."""
    return {pid for pid, f in scan().items() if f[0] != "Z" and int(f[2]) == pgid}


def wait_until_gone(pids: list[int] | tuple[int, ...], timeout: float = 5.0) -> list[int]:
    """Wait for ``pids`` and their process groups to end; return what is still running."""

    def alive() -> list[int]:
        found = [p for p in pids if proc_state(p) not in (None, "Z", "X")]
        return sorted({*found, *(m for p in pids for m in group_members(p))})

    wait_until(lambda: not alive(), timeout, step=0.05)
    return alive()
