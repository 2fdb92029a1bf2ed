"""Shared helpers for the engine tests (client + stdio + the scriptable server).

Every binding these tests open runs ``python -m mcpclient.testing.server`` from
the repository root (the package is not installed, so the child finds it through
its working directory) with a short shutdown grace, so a test that closes its
client stops the server in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterable

import mcpclient
from tests.support import wait_until
from tests.support.processes import (
    children_of,
    dead,
    proc_ppid,
    proc_state,
    reaped,
    server_pid,
)
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
