"""How real servers meet the era negotiation: locked, late, legacy-listing or dying.

The knobs (``docs/testing-server.md``, "Era negotiation"), each seen in a
server in the field:

* ``--locked-era ERA``: as ``--lock-era``, locked to ``ERA`` from the start
  (a client of that era came first), so a test needs no race to lock it;
* ``--lock-era``: the first era-specific request the process reads
  (``initialize``, ``server/discover`` or a request carrying the modern
  ``_meta`` protocol version) locks the whole process to its era, as the
  official SDK 2.x and FastMCP 4 lock a connection; a request of the other
  era is refused with -32022 naming the locked era's versions.
* ``--discover-delay SECONDS``: ``server/discover`` is answered that much
  later (the server goes on reading meanwhile).
* ``--discover-versions LIST``: the ``supportedVersions`` of the discover
  result (the Go SDK's stateful HTTP handler lists legacy versions only).
* ``--die-after-discover``: ``server/discover`` is never answered and the
  process exits (status 1) when the next message arrives, as FastMCP on the
  official SDK <= 1.8 does.

Threads:
    A delayed discover answer is sent from a daemon thread of its own.

Locks:
    ``EraState._lock`` guards the locked era and the doomed flag (read by
    every core of an HTTP process).

Shutdown:
    Nothing to stop: a delayed answer's thread ends with the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["EraState", "later"]


class EraState:
    """The process-wide state of the era knobs. Thread safety: lock-guarded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locked: str | None = None
        self._doomed = False

    def lock(self, era: str) -> str | None:
        """Lock to ``era`` unless locked already; the locked era when it is another one."""
        with self._lock:
            if self._locked is None:
                self._locked = era
            return self._locked if self._locked != era else None

    def doom(self) -> None:
        """The next message ends the process (``--die-after-discover``)."""
        with self._lock:
            self._doomed = True

    @property
    def doomed(self) -> bool:
        """Whether the next message ends the process."""
        with self._lock:
            return self._doomed


def later(seconds: float, action: Callable[[], None]) -> None:
    """Run ``action`` after ``seconds`` on a daemon thread (a late answer)."""

    def run() -> None:
        time.sleep(seconds)
        action()

    threading.Thread(target=run, name="testing-late-answer", daemon=True).start()
