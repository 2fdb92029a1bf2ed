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


def group_members(pgid: int) -> set[int]:
    """Live pids (zombies excluded) in process group ``pgid``."""
    members: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.add(int(entry))
    return members


def wait_until_gone(pids: list[int] | tuple[int, ...], timeout: float = 5.0) -> list[int]:
    """Wait for ``pids`` and their process groups to end; return what is still running."""

    def alive() -> list[int]:
        found = [p for p in pids if proc_state(p) not in (None, "Z", "X")]
        return sorted({*found, *(m for p in pids for m in group_members(p))})

    wait_until(lambda: not alive(), timeout, step=0.05)
    return alive()
