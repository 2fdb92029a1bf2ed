"""Shared helpers for the engine tests (client + stdio + the scriptable server).

Every binding these tests open runs ``python -m mcpclient.testing.server`` from
the repository root (the package is not installed, so the child finds it through
its working directory) with a short shutdown grace, so a test that closes its
client stops the server in well under a second.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcpclient
from tests.support import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
GRACE = 0.2
MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
#: Slack allowed past a deadline or a promised bound (DESIGN: "held" = well under a second;
#: we allow more, the CI machine has 2 cores and many threads).
SLACK = 1.5

_unique = itertools.count(1)

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
    "wait_until",  # re-exported from tests.support
]


def server_transport(
    *flags: str,
    record: Path | None = None,
    unique: bool = True,
    grace: float = GRACE,
) -> mcpclient.StdioTransport:
    """A transport running the testing server with ``flags``.

    ``unique`` adds a distinct ``--server-version`` so the process-wide era
    cache (keyed by command and arguments) never carries over between tests.
    """
    args = ["-m", "mcpclient.testing.server", *flags]
    if record is not None:
        args += ["--record", str(record)]
    if unique:
        args += ["--server-version", f"engine-{os.getpid()}-{next(_unique)}"]
    return mcpclient.StdioTransport(sys.executable, args, cwd=str(REPO_ROOT), shutdown_grace=grace)


def definition(
    *flags: str,
    record: Path | None = None,
    unique: bool = True,
    name: str = "engine",
    **fields: Any,
) -> mcpclient.Definition:
    """A definition for the testing server; ``fields`` go to :class:`Definition`."""
    fields.setdefault("timeouts", mcpclient.Timeouts(startup=15, request=10))
    return mcpclient.Definition(
        name=name, transport=server_transport(*flags, record=record, unique=unique), **fields
    )


class Recording:
    """The inbound messages a server wrote with ``--record FILE``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def messages(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines(keepends=True):
            if line.endswith("\n"):  # a line still being written is skipped
                out.append(json.loads(line))
        return out

    def methods(self) -> list[str]:
        return [m.get("method", "") for m in self.messages() if isinstance(m, dict)]

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages() if m.get("method") == method and "id" in m]

    def tool_call_ids(self, name: str, arguments: dict[str, Any] | None = None) -> list[Any]:
        """Ids of the recorded ``tools/call`` requests of ``name`` (with ``arguments``)."""
        ids = []
        for m in self.requests("tools/call"):
            params = m.get("params") or {}
            if params.get("name") != name:
                continue
            if arguments is not None and params.get("arguments") != arguments:
                continue
            ids.append(m["id"])
        return ids

    def cancelled_ids(self) -> list[Any]:
        return [
            (m.get("params") or {}).get("requestId")
            for m in self.messages()
            if m.get("method") == "notifications/cancelled"
        ]

    def wait_cancelled(self, request_id: Any, timeout: float = 5.0) -> bool:
        return wait_until(lambda: request_id in self.cancelled_ids(), timeout)


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


def states(events: Sequence[object]) -> list[tuple[str, str]]:
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
