"""The reconnect worker: rebuild a lost connection under a retry budget.

Threads:
    ``mcpclient-reconnect-<binding>`` exists only while a reconnect is in
    progress (an on-demand thread, ``worker.py``). It waits out a
    full-jitter backoff (interruptible by :meth:`Reconnector.stop`), runs one
    attempt, and stops on success, when the budget is spent, or when the
    binding closes. A :meth:`Reconnector.start` during a reconnect makes it
    go round once more with a fresh budget. :meth:`Reconnector.revive` asks
    for a single attempt at once, without a budget (a call on a failed
    binding; the binding's state admits one at a time).

Locks:
    ``_lock`` (the worker's) guards the pending start, its kind and the
    thread's state. Attempts run outside it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcpclient._core.deadline import now
from mcpclient._internal.client.lifecycle.worker import OnDemandWorker, budget_for
from mcpclient.definition import RetryPolicy
from mcpclient.errors import ConnectionLostError, Error

__all__ = ["Reconnector"]

_log = logging.getLogger(__name__)


class Reconnector(OnDemandWorker):
    """Runs ``attempt(n)`` (raising on failure) until it succeeds or the budget is spent.

    ``on_failure(exc, retrying)`` is told about each failed attempt,
    ``retrying`` False on the last one of the budget.
    """

    def __init__(
        self,
        binding: str,
        policy: RetryPolicy,
        attempt: Callable[[int], None],
        on_failure: Callable[[Error, bool], None],
    ) -> None:
        super().__init__("reconnect", binding)
        self._policy = policy
        self._attempt = attempt
        self._on_failure = on_failure
        self._budgeted = False  # guarded by _lock: a pending round runs a whole budget

    def start(self) -> bool:
        """Start a reconnect with a fresh budget (a running one goes round once more).

        Returns False once the binding is closed.
        """
        with self._lock:
            self._budgeted = True
        return self._signal()

    def revive(self) -> bool:
        """Run one attempt at once, no backoff, no budget (a failed binding's revival).

        Returns False once the binding is closed.
        """
        return self._signal()

    def _work(self) -> None:
        with self._lock:
            budgeted, self._budgeted = self._budgeted, False
        self._loop(budgeted)

    def _loop(self, budgeted: bool) -> None:
        budget = budget_for(self._policy)
        delay: float | None = budget.next_delay(now()) if budgeted else 0.0
        number = 0
        while delay is not None:
            if self._stop.wait(delay) if delay > 0 else self._stop.is_set():
                return
            number += 1
            try:
                self._attempt(number)
            except Exception as exc:
                if self._stop.is_set():
                    return
                if not isinstance(exc, Error):
                    _log.exception("reconnect attempt of binding %s failed", self._binding)
                    exc = ConnectionLostError(
                        f"reconnecting failed unexpectedly: {exc!r}", binding=self._binding
                    )
                delay = budget.next_delay(now()) if budgeted else None
                self._on_failure(exc, delay is not None)
                continue
            return
