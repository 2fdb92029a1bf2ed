"""The per-binding event lane: user callbacks, in order, off the reader thread.

Threads:
    One daemon thread, ``mcpclient-dispatch-<binding>``, runs posted
    callables one at a time in posting order: events, progress callbacks,
    log handlers. The reader thread only posts.

Locks:
    ``_cond`` guards both queues, the sequence counters, the dropped count
    and the closing flag. Callables run outside it.

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
from collections.abc import Callable

__all__ = ["EventLane"]

_log = logging.getLogger(__name__)

Item = tuple[int, Callable[[], None]]
_IDLE_SECONDS = 1.0  # a dispatcher with nothing to do exits after this long


class EventLane:
    """An ordered dispatcher with a bounded backlog for lossy items."""

    def __init__(self, binding: str, *, backlog: int = 1024) -> None:
        self._binding = binding
        self._cond = threading.Condition(threading.Lock())
        self._lossless: collections.deque[Item] = collections.deque()
        self._lossy: collections.deque[Item] = collections.deque()
        self._backlog = backlog
        self._seq = 0
        self._done = 0  # every item with a sequence number <= _done has run (or was dropped)
        self._dropped = 0
        self._closing = False
        # Started on the first post: an idle binding with no handlers keeps
        # no dispatcher thread (each costs ~16 KiB).
        self._thread: threading.Thread | None = None

    @property
    def dropped(self) -> int:
        """How many lossy items were dropped for lack of room."""
        return self._dropped

    def on_lane(self) -> bool:
        """Whether the calling thread is this lane's thread."""
        return threading.current_thread() is self._thread

    def post(self, fn: Callable[[], None], *, lossy: bool = False) -> int:
        """Queue ``fn``; returns its sequence number (0 if the lane is closed)."""
        with self._cond:
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
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"mcpclient-dispatch-{self._binding}", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()
            return self._seq

    def wait_delivered(self, seq: int, timeout: float) -> bool:
        """Wait until item ``seq`` (and everything before it) has run."""
        if self.on_lane():
            return True
        with self._cond:
            return self._cond.wait_for(lambda: self._done >= seq, timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Refuse new items; deliver what is queued; stop. Never waits on stuck code."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        thread = self._thread
        if thread is None or self.on_lane():
            return
        thread.join(timeout)
        if thread.is_alive():
            with self._cond:
                self._lossless.clear()
                self._lossy.clear()
                self._cond.notify_all()
            thread.name = f"mcpclient-abandoned-{self._binding}"

    def _take(self, finished: int) -> Item | None:
        with self._cond:
            if finished:
                self._done = finished
                self._cond.notify_all()
            while not self._lossless and not self._lossy:
                if self._closing:
                    return None
                if not self._cond.wait(_IDLE_SECONDS) and not self._lossless and not self._lossy:
                    # Idle: exit; the next post starts a new dispatcher.
                    if self._thread is threading.current_thread():
                        self._thread = None
                    return None
            if not self._lossy or (self._lossless and self._lossless[0][0] < self._lossy[0][0]):
                return self._lossless.popleft()
            return self._lossy.popleft()

    def _run(self) -> None:
        finished = 0
        while True:
            item = self._take(finished)
            if item is None:
                return
            try:
                item[1]()
            except Exception:
                _log.exception("a callback on binding %s raised", self._binding)
            finished = item[0]
