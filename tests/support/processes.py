"""Child processes as /proc shows them: parents, states, reaping (Linux only, as the suite)."""

from __future__ import annotations

import os
from pathlib import Path

from .waiting import wait_until


def proc_ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def proc_state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


def children_of(pid: int) -> set[int]:
    """Pids (zombies included) whose parent is ``pid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and proc_ppid(int(entry)) == pid:
            found.add(int(entry))
    return found


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
