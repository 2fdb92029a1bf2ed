"""Admission gates: per-binding concurrency and call serialization.

Admission is first come, first served: each caller takes a ticket, and a
slot goes to the oldest waiting ticket, never to a newcomer that happens to
be awake (no barging). ``submit_tool_call`` takes its ticket on the
caller's thread, so submitted calls run in submission order.

Threads:
    Callers block in :meth:`Gate.enter` until their ticket is at the head
    and a slot is free, their deadline passes, their CancelToken fires, or
    the binding closes. No thread is created; a cancel wakes the waiters
    through the token's callback.

Locks:
    ``_cond`` guards ``_busy``, ``_queue`` and ``_closed``.

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

__all__ = ["Gate", "Ticket"]


class Ticket:
    """A place in a gate's queue."""

    __slots__ = ("gate",)

    def __init__(self, gate: Gate) -> None:
        self.gate = gate


class Gate:
    """A FIFO counting gate with deadlines, cancellation and shutdown."""

    def __init__(self, capacity: int, *, binding: str) -> None:
        self._capacity = capacity
        self._binding = binding
        self._cond = threading.Condition(threading.Lock())
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
        with self._cond:
            if ticket is None:
                if not self._queue and self._busy < self._capacity and not self._closed:
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
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)

    def leave(self) -> None:
        """Release a slot taken by :meth:`enter`."""
        with self._cond:
            self._busy -= 1
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
        self._cond.notify_all()  # the next ticket may fit too

    def _forget(self, ticket: Ticket) -> None:
        # Caller holds _cond. A ticket leaving the queue may unblock the next.
        try:
            self._queue.remove(ticket)
        except ValueError:
            return
        self._cond.notify_all()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
