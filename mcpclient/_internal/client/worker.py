"""What the refresh and reconnect workers share: an on-demand thread, a stop, a budget.

Threads:
    One daemon thread per worker, started by the subclass when there is work
    (``_spawn``, lock held) and gone when its ``_run`` returns.

Locks:
    ``_lock`` guards ``_thread`` and ``_closed`` (and the subclass's own
    signal fields). Work runs outside it.
"""

from __future__ import annotations

import threading

from mcpclient._internal.backoff import Budget
from mcpclient._internal.deadline import now
from mcpclient.definition import RetryPolicy

__all__ = ["OnDemandWorker", "budget_for"]


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
    """A named worker thread that exists only while it has work."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._stop = threading.Event()  # set by stop(); interrupts backoff waits

    def _spawn(self) -> None:
        """Start the thread (caller holds ``_lock`` and checked there is none)."""
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def _run(self) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def stop(self) -> None:
        """Refuse new work and interrupt a backoff wait (does not wait)."""
        with self._lock:
            self._closed = True
        self._stop.set()

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for the worker to finish."""
        with self._lock:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
