"""The catalog refresh worker: coalescing signals, retried under a budget.

Threads:
    ``mcpclient-refresh-<binding>`` exists only while there is work: a
    :meth:`Refresher.trigger` starts it if it is not running; it exits when
    no signal is pending. Signals coalesce: a burst of N triggers during a
    pass yields at most one more pass.

Locks:
    ``_lock`` guards ``_pending``, ``_thread`` and ``_closed``.

Shutdown:
    :meth:`close` sets the stop event (which interrupts a backoff sleep) and
    joins the worker briefly; a pass in flight ends with its own deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcpclient._internal.client.worker import OnDemandWorker, budget_for
from mcpclient._internal.deadline import now
from mcpclient.definition import RetryPolicy

__all__ = ["Refresher"]

_log = logging.getLogger(__name__)


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
        super().__init__(f"mcpclient-refresh-{binding}")
        self._binding = binding
        self._policy = policy
        self._run_pass = run_pass
        self._on_failure = on_failure
        self._pending = False

    def trigger(self) -> None:
        """Ask for a refresh pass (coalesced with any already pending)."""
        with self._lock:
            if self._closed:
                return
            self._pending = True
            if self._thread is None:
                self._spawn()

    def _take_signal(self) -> bool:
        with self._lock:
            if self._pending and not self._closed:
                self._pending = False
                return True
            self._thread = None
            return False

    def _run(self) -> None:
        try:
            while self._take_signal():
                self._retry_loop()
        except BaseException:  # never die silently
            _log.exception("refresh worker of binding %s crashed", self._binding)
            with self._lock:
                self._thread = None

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
