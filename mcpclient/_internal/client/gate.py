"""Admission gates: per-binding concurrency and call serialization.

Admission is first come, first served: each caller takes a ticket, and a
slot goes to the oldest waiting ticket, never to a newcomer that happens to
be awake (no barging). ``submit_tool_call`` takes its ticket on the
caller's thread, so submitted calls run in submission order.

A binding's two gates on the call path, call serialization (one
``tools/call`` at a time) and the request slots (``max_concurrent_requests``),
share one lock: :func:`enter_pair` takes a turn in both in one step when
neither is contended (the common case), and :func:`leave_pair` gives both
back in one step, so an uncontended call pays for one gate, not two.

Threads:
    Callers block in :meth:`Gate.enter` until their ticket is at the head
    and a slot is free, their deadline passes, their CancelToken fires, or
    the binding closes. No thread is created; a cancel wakes the waiters
    through the token's callback.

Locks:
    ``_cond`` (shared by gates made with ``share=``) guards ``_busy``,
    ``_queue`` and ``_closed`` of each gate that uses it, and the count of
    threads waiting on it: nobody is notified when nobody waits.

Shutdown:
    :meth:`close` wakes every waiter, who then raises ``ShutdownError``.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from mcpclient._internal.deadline import now
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    DeadlineExceededError,
    FailureClass,
    RequestCancelledError,
    ShutdownError,
)

__all__ = ["Gate", "Ticket", "enter_pair", "leave_pair"]


class Ticket:
    """A place in a gate's queue."""

    __slots__ = ("gate",)

    def __init__(self, gate: Gate) -> None:
        self.gate = gate


class _Sync:
    """A gates' shared condition and how many threads wait on it."""

    __slots__ = ("cond", "lock", "waiting")

    def __init__(self) -> None:
        # ``with lock`` is ``with cond`` without Condition's Python-level
        # __enter__/__exit__ (the uncontended paths take only the lock).
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiting = 0  # guarded by cond


class Gate:
    """A FIFO counting gate with deadlines, cancellation and shutdown.

    ``share``: use that gate's lock (see :func:`enter_pair`).
    """

    def __init__(self, capacity: int, *, binding: str, share: Gate | None = None) -> None:
        self._capacity = capacity
        self._binding = binding
        self._sync: _Sync = _Sync() if share is None else share._sync
        self._cond = self._sync.cond
        self._lock = self._sync.lock  # the lock of _cond
        self._busy = 0
        self._queue: collections.deque[Ticket] = collections.deque()
        self._closed = False

    def close(self) -> None:
        """Refuse new entries and wake every waiter."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def ticket(self) -> Ticket:
        """Take a place in the queue now (enter with it later)."""
        ticket = Ticket(self)
        with self._cond:
            self._queue.append(ticket)
        return ticket

    def drop(self, ticket: Ticket) -> None:
        """Give up a ticket that will never enter."""
        with self._cond:
            self._forget(ticket)

    @contextmanager
    def slot(
        self,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        deadline_class: FailureClass = FailureClass.DEADLINE,
    ) -> Iterator[None]:
        """Hold one slot for the ``with`` block."""
        self.enter(deadline, cancel, op, deadline_class)
        try:
            yield
        finally:
            self.leave()

    def enter(
        self,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        deadline_class: FailureClass = FailureClass.DEADLINE,
        ticket: Ticket | None = None,
    ) -> None:
        """Take a slot in turn, waiting at most until ``deadline``.

        Raises:
            ShutdownError, RequestCancelledError, DeadlineExceededError.
        """
        with self._lock:
            if ticket is None:
                if self._free():
                    self._busy += 1  # uncontended: no ticket needed
                    return
                ticket = Ticket(self)
                self._queue.append(ticket)
            if self._may_enter(ticket):
                self._admit(ticket)
                return
        handle = cancel.add_callback(self._wake) if cancel is not None else None
        try:
            with self._cond:
                self._sync.waiting += 1
                try:
                    self._wait_turn(ticket, deadline, cancel, op, deadline_class)
                finally:
                    self._sync.waiting -= 1
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)

    def _wait_turn(
        self,
        ticket: Ticket,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        deadline_class: FailureClass,
    ) -> None:
        # Caller holds _cond and counts itself in _sync.waiting.
        while True:
            if self._closed:
                self._forget(ticket)
                raise ShutdownError("the binding is closed", binding=self._binding, op=op)
            if cancel is not None and cancel.cancelled:
                self._forget(ticket)
                raise RequestCancelledError(
                    "the call was cancelled before it was sent",
                    binding=self._binding,
                    op=op,
                )
            if self._may_enter(ticket):
                self._admit(ticket)
                return
            left = deadline - now()
            if left <= 0:
                self._forget(ticket)
                raise DeadlineExceededError(
                    "the call's deadline passed while it waited for its turn",
                    failure_class=deadline_class,
                    binding=self._binding,
                    op=op,
                )
            self._cond.wait(left)

    def leave(self) -> None:
        """Release a slot taken by :meth:`enter`."""
        with self._lock:
            self._busy -= 1
            self._notify()

    def _free(self) -> bool:
        # Caller holds _cond. A slot for a newcomer: free, and nobody queued first.
        return not self._queue and self._busy < self._capacity and not self._closed

    def _notify(self) -> None:
        # Caller holds _cond.
        if self._sync.waiting:
            self._cond.notify_all()

    def _may_enter(self, ticket: Ticket) -> bool:
        # Caller holds _cond.
        return (
            not self._closed
            and self._busy < self._capacity
            and bool(self._queue)
            and self._queue[0] is ticket
        )

    def _admit(self, ticket: Ticket) -> None:
        # Caller holds _cond.
        self._queue.popleft()
        self._busy += 1
        self._notify()  # the next ticket may fit too

    def _forget(self, ticket: Ticket) -> None:
        # Caller holds _cond. A ticket leaving the queue may unblock the next.
        try:
            self._queue.remove(ticket)
        except ValueError:
            return
        self._notify()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


def enter_pair(
    outer: Gate | None,
    inner: Gate,
    deadline: float,
    cancel: CancelToken | None,
    op: str,
    *,
    ticket: Ticket | None = None,
) -> None:
    """Take a turn in ``outer`` (if any), then a slot in ``inner``.

    When the two share a lock, nobody is queued in either and both have room,
    both are taken in one step under that lock; otherwise each is entered in
    turn, FIFO, exactly as :meth:`Gate.enter` does (``outer`` is given back if
    ``inner`` refuses). Release with :func:`leave_pair`.

    Raises:
        ShutdownError, RequestCancelledError, DeadlineExceededError.
    """
    if outer is None:
        inner.enter(deadline, cancel, op)
        return
    if ticket is None and outer._sync is inner._sync:
        with inner._lock:
            # Gate._free() of both, inlined: this runs on every call.
            if (
                not outer._queue
                and not inner._queue
                and outer._busy < outer._capacity
                and inner._busy < inner._capacity
                and not outer._closed
                and not inner._closed
            ):
                outer._busy += 1
                inner._busy += 1
                return
    outer.enter(deadline, cancel, op, ticket=ticket)
    try:
        inner.enter(deadline, cancel, op)
    except BaseException:
        outer.leave()
        raise


def leave_pair(outer: Gate | None, inner: Gate) -> None:
    """Give back what :func:`enter_pair` took."""
    if outer is None:
        inner.leave()
    elif outer._sync is inner._sync:
        with inner._lock:
            inner._busy -= 1
            outer._busy -= 1
            if inner._sync.waiting:
                inner._cond.notify_all()
    else:
        inner.leave()
        outer.leave()
