"""The process-wide deadline watcher.

Threads:
    One daemon thread, ``mcpclient-deadline``, serves every binding. It is
    started by the first :func:`acquire` and exits once every holder has
    called :func:`release` and no deadline is pending. It sleeps on a
    condition until the earliest deadline, then runs that entry's callback.
    Callbacks must be quick and must not block: they fail a future and queue
    a cancellation, nothing more.

Locks:
    ``_cond`` guards the heap, the live-entry count and the holder count.
    Callbacks run outside it.

Shutdown:
    Cancelled entries are removed lazily (a flag); nothing here ever waits
    on user code or I/O.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
from collections.abc import Callable

from mcpclient._core.deadline import now

__all__ = ["Timer", "acquire", "release", "schedule"]

_log = logging.getLogger(__name__)


class Timer:
    """A scheduled callback; :meth:`cancel` stops it if it has not fired."""

    __slots__ = ("callback", "cancelled", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback: Callable[[], None] | None = callback
        self.cancelled = False

    def cancel(self) -> None:
        """Stop the callback from running (no-op after it ran).

        The callback (and whatever it holds) is released at once; the heap
        entry goes lazily, and the heap is compacted when most of it is dead,
        so finished calls never pile up until their deadlines.
        """
        global _cancelled
        if self.cancelled:
            return
        self.cancelled = True
        self.callback = None
        with _cond:
            _cancelled += 1
            if _cancelled > _COMPACT_MIN and _cancelled * 2 > len(_heap):
                _compact()
            if _holders == 0:
                _cond.notify()  # with no binding left, the thread may be free to exit now


_cond = threading.Condition(threading.Lock())
_heap: list[tuple[float, int, Timer]] = []
_seq = itertools.count()
_holders = 0
_thread: threading.Thread | None = None
_cancelled = 0  # cancelled entries still in the heap
_COMPACT_MIN = 64


def _compact() -> None:
    """Drop cancelled entries (caller holds ``_cond``)."""
    global _cancelled
    _heap[:] = [entry for entry in _heap if not entry[2].cancelled]
    heapq.heapify(_heap)
    _cancelled = 0


def acquire() -> None:
    """Declare a user of the watcher (a binding); starts the thread if needed."""
    global _holders, _thread
    with _cond:
        _holders += 1
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="mcpclient-deadline", daemon=True)
            _thread.start()


def release() -> None:
    """Declare that a user is gone; the thread exits when none remain."""
    global _holders
    with _cond:
        _holders = max(0, _holders - 1)
        _cond.notify()


def schedule(deadline: float, callback: Callable[[], None]) -> Timer:
    """Run ``callback`` on the watcher thread at ``deadline`` (monotonic)."""
    timer = Timer(deadline, callback)
    with _cond:
        earliest = _heap[0][0] if _heap else None
        heapq.heappush(_heap, (deadline, next(_seq), timer))
        if earliest is None or deadline < earliest:
            _cond.notify()  # only a new earliest deadline changes the wait
    return timer


def _reset_after_fork() -> None:
    # In a forked child the watcher thread does not exist, and _cond may be
    # held forever by a parent thread: start from scratch.
    global _cond, _heap, _holders, _thread, _cancelled
    _cond = threading.Condition(threading.Lock())
    _heap = []
    _holders = 0
    _thread = None
    _cancelled = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _run() -> None:
    global _thread
    while True:
        due: list[Timer] = []
        global _cancelled
        with _cond:
            while True:
                while _heap and _heap[0][2].cancelled:
                    heapq.heappop(_heap)
                    _cancelled = max(0, _cancelled - 1)
                if not _heap:
                    if _holders == 0:
                        _thread = None
                        return
                    _cond.wait()
                    continue
                wait = _heap[0][0] - now()
                if wait <= 0:
                    break
                # Condition.wait refuses huge timeouts; re-check at least hourly.
                _cond.wait(min(wait, 3600.0))
            current = now()
            while _heap and _heap[0][0] <= current:
                timer = heapq.heappop(_heap)[2]
                if timer.cancelled:
                    _cancelled = max(0, _cancelled - 1)
                else:
                    due.append(timer)
        for timer in due:
            callback = timer.callback
            if timer.cancelled or callback is None:
                continue
            timer.cancelled = True
            timer.callback = None
            try:
                callback()
            except Exception:
                _log.exception("a deadline callback raised")
