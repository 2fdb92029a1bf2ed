"""The per-binding event lane: user callbacks, in order, off the reader thread.

Threads:
    ``mcpclient-dispatch-<binding>`` (an on-demand thread, ``threads.py``)
    runs posted callables one at a time in posting order: events, progress
    callbacks, log handlers. It starts on the first post and exits after a
    second with nothing to do, so an idle binding keeps no dispatcher. The
    reader thread only posts.

Locks:
    ``_lock`` guards both queues, the sequence counters, the dropped count,
    the closing flag and the dispatcher's own state; ``_delivered`` (a
    condition on it) wakes :meth:`EventLane.wait_delivered`. Callables run
    outside it.

Shutdown:
    :meth:`close` refuses new items and lets the thread deliver what is
    queued, then exit. Called from another thread it waits for that, within
    its timeout, but never for a callable that is stuck: the thread is then
    renamed ``mcpclient-abandoned-<binding>`` and left to finish on its own
    (it is a daemon), its queue dropped. Called from the lane itself (an
    event handler closing the client), it returns at once and the thread
    drains the queue after the handler returns.

Progress and log items are lossy: when more than ``backlog`` of them are
waiting, the oldest is dropped and counted, so a server flooding
notifications cannot grow memory or delay lifecycle events without bound.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator

from mcpclient._core.threads import OnDemandThreads

__all__ = ["EventLane"]

_log = logging.getLogger(__name__)

Item = tuple[int, Callable[[], None]]
_IDLE_SECONDS = 1.0  # a dispatcher with nothing to do exits after this long


class EventLane:
    """An ordered dispatcher with a bounded backlog for lossy items."""

    def __init__(self, binding: str, *, backlog: int = 1024) -> None:
        self._binding = binding
        # Started on the first post: an idle binding with no handlers keeps
        # no dispatcher thread (each costs ~16 KiB).
        self._thread: OnDemandThreads[Item] = OnDemandThreads(
            "dispatch", binding, take=self._take, serve=self._serve, idle=_IDLE_SECONDS
        )
        self._lock = self._thread.lock
        self._delivered = threading.Condition(self._lock)
        self._lossless: collections.deque[Item] = collections.deque()
        self._lossy: collections.deque[Item] = collections.deque()
        self._backlog = backlog
        self._seq = 0
        self._done = 0  # every item with a sequence number <= _done has run (or was dropped)
        self._ran = 0  # the last item the dispatcher ran (its thread only; _take publishes it)
        self._dropped = 0
        self._closing = False

    @property
    def dropped(self) -> int:
        """How many lossy items were dropped for lack of room."""
        return self._dropped

    def on_lane(self) -> bool:
        """Whether the calling thread is this lane's thread."""
        return self._thread.owns_current()

    def post(self, fn: Callable[[], None], *, lossy: bool = False) -> int:
        """Queue ``fn``; returns its sequence number (0 if the lane is closed)."""
        with self._lock:
            if self._closing:
                return 0
            self._seq += 1
            if lossy:
                if len(self._lossy) >= self._backlog:
                    self._lossy.popleft()
                    self._dropped += 1
                self._lossy.append((self._seq, fn))
            else:
                self._lossless.append((self._seq, fn))
            self._thread.wake()
            return self._seq

    def wait_delivered(self, seq: int, timeout: float) -> bool:
        """Wait until item ``seq`` (and everything before it) has run."""
        if self.on_lane():
            return True
        with self._lock:
            return self._delivered.wait_for(lambda: self._done >= seq, timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Refuse new items; deliver what is queued; stop. Never waits on stuck code."""
        with self._lock:
            self._closing = True
            self._thread.stop()
        if self.on_lane():
            return
        stuck = self._thread.join(timeout)
        if stuck:
            with self._lock:
                self._lossless.clear()
                self._lossy.clear()
            for thread in stuck:
                thread.name = f"mcpclient-abandoned-{self._binding}"

    def _take(self) -> Item | None:
        # The dispatcher's thread, lock held: publish what it ran, then the
        # next item in posting order across both queues.
        if self._ran > self._done:
            self._done = self._ran
            self._delivered.notify_all()
        if not self._lossy or (self._lossless and self._lossless[0][0] < self._lossy[0][0]):
            return self._lossless.popleft() if self._lossless else None
        return self._lossy.popleft()

    def _serve(self, items: Iterator[Item]) -> None:
        for seq, fn in items:
            try:
                fn()
            except Exception:
                _log.exception("a callback on binding %s raised", self._binding)
            self._ran = seq
