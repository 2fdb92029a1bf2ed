"""The catalog refresh worker: coalescing signals, retried under a budget.

Threads:
    ``mcpclient-refresh-<binding>`` exists only while there is work (an
    on-demand thread, ``worker.py``): a :meth:`Refresher.trigger` starts it
    if it is not running; it exits when no signal is pending. Signals
    coalesce: a burst of N triggers during a pass yields at most one more
    pass.

Locks:
    ``_lock`` (the worker's) guards the pending signal and the thread's state.

Shutdown:
    :meth:`~Refresher.stop` sets the stop event (which interrupts a backoff
    sleep) and :meth:`~Refresher.join` waits for the worker briefly; a pass
    in flight ends with its own deadline.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpclient._core.deadline import now
from mcpclient._internal.client.lifecycle.worker import OnDemandWorker, budget_for
from mcpclient.definition import RetryPolicy

__all__ = ["Refresher"]


class Refresher(OnDemandWorker):
    """Runs ``run_pass`` once per (coalesced) signal, retrying failures.

    ``run_pass()`` raises on failure; ``on_failure(exc, retrying)`` is told
    about each failure, ``retrying`` False on the last one of a budget.
    """

    def __init__(
        self,
        binding: str,
        policy: RetryPolicy,
        run_pass: Callable[[], None],
        on_failure: Callable[[BaseException, bool], None],
    ) -> None:
        super().__init__("refresh", binding)
        self._policy = policy
        self._run_pass = run_pass
        self._on_failure = on_failure

    def trigger(self) -> None:
        """Ask for a refresh pass (coalesced with any already pending)."""
        self._signal()

    def _work(self) -> None:
        self._retry_loop()

    def _retry_loop(self) -> None:
        budget = budget_for(self._policy)
        delay = budget.next_delay(now())
        while delay is not None:
            if delay > 0 and self._stop.wait(delay):
                return
            if self._stop.is_set():
                return
            try:
                self._run_pass()
            except Exception as exc:
                if self._stop.is_set():
                    return
                delay = budget.next_delay(now())
                self._on_failure(exc, delay is not None)
                continue
            return
