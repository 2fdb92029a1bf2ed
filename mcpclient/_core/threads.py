"""Threads that exist only while they have work: the one on-demand worker primitive.

Every background worker of a binding (the pipe writer, the event lane, the
HTTP I/O pool and send lane, the refresh and reconnect workers) is an
:class:`OnDemandThreads`: no thread while there is nothing to do, one (up to
``limit``) started by the first piece of work, each exiting after ``idle``
seconds without any. The owner keeps its own queue, guarded by the
primitive's ``lock``, and says how to take the next item; the primitive
decides, under that same lock, when a thread starts, waits and exits, so a
thread deciding to exit and a new item arriving can never miss each other.

Threads:
    Up to ``limit`` daemon threads named ``mcpclient-<role>-<binding>``. Each
    runs the owner's ``serve(items)``: ``items`` yields work until the thread
    has been idle for ``idle`` seconds (``0``: as soon as there is none) or the
    primitive is stopped and ``take()`` has nothing more. ``serve`` may hold
    a per-thread resource (an HTTP session) around its loop. A ``serve`` that
    raises is logged (never dies silently); if it had taken work, a
    replacement thread is started for what is still queued.

Locks:
    ``lock`` (the owner's, or one made here) guards the owner's queue and
    this object's counts, idle waiters and closed flag. ``take()`` runs with
    it held; ``serve`` runs without it. An idle thread waits on a private lock
    of its own, so :meth:`wake` hands new work to exactly one idle thread (or
    starts a thread) and never wakes anyone else waiting on the owner's lock.

Shutdown:
    :meth:`stop` (lock held) refuses to start threads and wakes the idle
    ones; each exits once ``take()`` returns nothing (the owner decides
    whether queued work is drained or dropped). :meth:`join` waits, within
    its timeout, for every thread that has started (never for the calling
    thread itself) and returns those still alive.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

__all__ = ["OnDemandThreads"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class _Slot:
    """One thread's standing: whether it has taken work, whether it has left."""

    __slots__ = ("left", "served")

    def __init__(self) -> None:
        self.served = False
        self.left = False  # it decided to exit (its count is given back)


class OnDemandThreads(Generic[T]):
    """Up to ``limit`` named threads that exist only while there is work.

    Example::

        jobs = collections.deque()
        pool = OnDemandThreads("http", "b1", take=lambda: jobs.popleft() if jobs else None,
                               serve=lambda items: [print(job) for job in items], idle=5.0)
        with pool.lock:
            jobs.append("job")
            pool.wake()

    Thread safety: :meth:`wake` and :meth:`stop` with ``lock`` held, from any
    thread; :meth:`join` and :meth:`owns_current` from any thread, lock not held.
    """

    def __init__(
        self,
        role: str,
        binding: str,
        *,
        take: Callable[[], T | None],
        serve: Callable[[Iterator[T]], None],
        idle: float,
        limit: int = 1,
        lock: threading.Lock | None = None,
    ) -> None:
        #: Guards the owner's queue and this object's state.
        self.lock = threading.Lock() if lock is None else lock
        self.name = f"mcpclient-{role}-{binding}"
        self._take = take
        self._serve = serve
        self._idle = max(0.0, idle)
        self._limit = max(1, limit)
        self._running = 0  # threads that have not decided to exit
        self._threads: set[threading.Thread] = set()  # started and not yet ended
        self._idlers: collections.deque[threading.Lock] = collections.deque()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._closed

    @property
    def active(self) -> int:
        """How many threads are serving or waiting for work (lock held for an exact answer)."""
        return self._running

    def owns_current(self) -> bool:
        """Whether the calling thread is one of these threads."""
        return threading.current_thread() in self._threads

    def wake(self) -> None:
        """Work is available: hand it to an idle thread, or start one. Lock held."""
        if self._idlers:
            self._idlers.popleft().release()
            return
        if self._closed or self._running >= self._limit:
            return  # a busy thread takes it when it is done with what it holds
        self._start()

    def stop(self) -> None:
        """Start no more threads; wake the idle ones so they exit. Lock held."""
        self._closed = True
        while self._idlers:
            self._idlers.popleft().release()

    def join(self, timeout: float) -> list[threading.Thread]:
        """Wait up to ``timeout`` for every thread to end; returns those still alive."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self.lock:
            threads = list(self._threads)
        me = threading.current_thread()
        alive = []
        for thread in threads:
            if thread is me:
                continue
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                alive.append(thread)
        return alive

    def forget(self, lock: threading.Lock) -> None:
        """In a forked child: drop the parent's threads, stop, and guard with ``lock``.

        Takes no lock: one held by a parent thread at fork time stays held
        forever in the child, which has no other threads.
        """
        self.lock = lock
        self._running = 0
        self._threads = set()
        self._idlers = collections.deque()
        self._closed = True

    # -- the threads' side -----------------------------------------------------

    def _start(self) -> None:
        slot = _Slot()
        thread = threading.Thread(target=self._main, args=(slot,), name=self.name, daemon=True)
        self._running += 1
        self._threads.add(thread)
        try:
            thread.start()
        except BaseException:
            self._running -= 1
            self._threads.discard(thread)
            raise

    def _main(self, slot: _Slot) -> None:
        crashed = False
        try:
            self._serve(self._items(slot))
        except BaseException:  # never die silently
            crashed = True
            _log.exception("thread %s crashed", self.name)
        finally:
            with self.lock:
                if not slot.left:  # serve ended before its items did
                    slot.left = True
                    self._running -= 1
                    if crashed and slot.served:
                        try:
                            self.wake()  # what is still queued gets a thread
                        except RuntimeError:  # no thread to be had: the next work tries again
                            _log.exception("no thread to replace %s", self.name)
                self._threads.discard(threading.current_thread())

    def _items(self, slot: _Slot) -> Iterator[T]:
        lock = self.lock
        while True:
            with lock:
                item = self._next(slot)
            if item is None:
                return
            slot.served = True
            yield item

    def _next(self, slot: _Slot) -> T | None:
        """The next item, waiting while idle; None once this thread has left. Lock held."""
        lock = self.lock
        deadline: float | None = None
        while True:
            item = self._take()
            if item is not None:
                return item
            if self._closed or self._idle == 0.0:
                break
            current = time.monotonic()
            if deadline is None:
                deadline = current + self._idle
            if current >= deadline:
                break
            waiter = threading.Lock()
            waiter.acquire()
            self._idlers.append(waiter)
            lock.release()
            try:
                waiter.acquire(True, deadline - current)
            finally:
                lock.acquire()
                # Still listed: nobody handed it work (a timeout). Unlisted:
                # wake() or stop() did; either way take() is asked again.
                with contextlib.suppress(ValueError):
                    self._idlers.remove(waiter)
        slot.left = True
        self._running -= 1
        return None
