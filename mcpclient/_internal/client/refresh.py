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
import threading
from collections.abc import Callable

from mcpclient._internal.backoff import Budget
from mcpclient._internal.deadline import now
from mcpclient.definition import RetryPolicy

__all__ = ["Refresher"]

_log = logging.getLogger(__name__)


class Refresher:
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
        self._binding = binding
        self._policy = policy
        self._run_pass = run_pass
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._pending = False
        self._closed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def trigger(self) -> None:
        """Ask for a refresh pass (coalesced with any already pending)."""
        with self._lock:
            if self._closed:
                return
            self._pending = True
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._run, name=f"mcpclient-refresh-{self._binding}", daemon=True
            )
            self._thread.start()

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
        policy = self._policy
        budget = Budget(
            attempts=policy.attempts,
            base_delay=policy.base_delay,
            max_delay=policy.max_delay,
            max_total=policy.max_total,
            start=now(),
        )
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
