"""Shared helpers for the engine tests (client + stdio + the scriptable server).

Every binding these tests open runs ``python -m mcpclient.testing.server`` from
the repository root (the package is not installed, so the child finds it through
its working directory) with a short shutdown grace, so a test that closes its
client stops the server in well under a second.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import mcpclient
from tests.support import wait_until
from tests.support.servers import (
    GRACE,
    LATEST_LEGACY,
    MODERN,
    REPO_ROOT,
    SLACK,
    Recording,
    definition,
    server_transport,
)

#: Re-exported from tests.support (where they live) for the modules that import them from here.
__all__ = [
    "GRACE",
    "LATEST_LEGACY",
    "MODERN",
    "REPO_ROOT",
    "SLACK",
    "Recording",
    "children_of",
    "dead",
    "definition",
    "proc_ppid",
    "proc_state",
    "reaped",
    "server_pid",
    "server_transport",
    "states",
    "text_of",
    "wait_until",
]


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


def states(events: Iterable[object]) -> list[tuple[str, str]]:
    """The ``StateChanged`` transitions in ``events`` as ``(from, to)`` strings."""
    return [
        (str(e.from_state), str(e.to_state))
        for e in events
        if isinstance(e, mcpclient.StateChanged)
    ]


def text_of(result: mcpclient.ToolResult) -> str:
    item = result.content[0]
    assert isinstance(item, mcpclient.Text)
    return item.text
