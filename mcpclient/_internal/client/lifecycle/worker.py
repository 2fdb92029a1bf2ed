"""What the refresh and reconnect workers share: an on-demand thread, a stop, a budget.

Threads:
    One daemon thread per worker (an on-demand thread of ``threads.py``,
    idle period zero): a signal starts it if it is not running, and it exits
    as soon as no signal is pending. A signal that arrives while it is
    finishing is never lost: the thread either sees it or has already left,
    and then the signal starts a new one.

Locks:
    ``_lock`` (the on-demand thread's) guards the pending signal, the closed
    flag and the thread's own state. Work runs outside it.

Shutdown:
    :meth:`OnDemandWorker.stop` refuses new signals and interrupts a backoff
    wait; :meth:`OnDemandWorker.join` waits for the thread, briefly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

from mcpclient._core.backoff import Budget
from mcpclient._core.deadline import now
from mcpclient._core.threads import OnDemandThreads
from mcpclient.definition import RetryPolicy

__all__ = ["OnDemandWorker", "budget_for"]

_log = logging.getLogger(__name__)


def budget_for(policy: RetryPolicy) -> Budget:
    """A fresh full-jitter retry budget for ``policy``, starting now."""
    return Budget(
        attempts=policy.attempts,
        base_delay=policy.base_delay,
        max_delay=policy.max_delay,
        max_total=policy.max_total,
        start=now(),
    )


class OnDemandWorker:
    """A named worker thread that exists only while it has work.

    Signals coalesce: one that arrives while a round of :meth:`_work` runs
    asks for exactly one more round after it.
    """

    def __init__(self, role: str, binding: str) -> None:
        self._binding = binding
        self._thread: OnDemandThreads[bool] = OnDemandThreads(
            role, binding, take=self._take_signal, serve=self._serve, idle=0.0
        )
        self._lock = self._thread.lock
        self._pending = False
        self._stop = threading.Event()  # set by stop(); interrupts backoff waits

    def _signal(self) -> bool:
        """Ask for a round of work (coalesced); False once stopped."""
        with self._lock:
            if self._thread.closed:
                return False
            self._pending = True
            self._thread.wake()
            return True

    @property
    def running(self) -> bool:
        """Whether a round of work is running or about to."""
        with self._lock:
            return self._thread.active > 0

    def _take_signal(self) -> bool | None:
        if self._pending and not self._thread.closed:
            self._pending = False
            return True
        return None

    def _serve(self, signals: Iterator[bool]) -> None:
        for _ in signals:
            try:
                self._work()
            except Exception:  # never die silently; the next signal runs again
                _log.exception("%s of binding %s crashed", self._thread.name, self._binding)

    def _work(self) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def stop(self) -> None:
        """Refuse new work and interrupt a backoff wait (does not wait)."""
        with self._lock:
            self._thread.stop()
        self._stop.set()

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for the worker to finish."""
        self._thread.join(timeout)
