"""Admission gates: per-binding concurrency and call serialization.

Threads:
    Callers block in :meth:`Gate.enter` until a slot frees, their deadline
    passes, their CancelToken fires, or the binding closes. No thread is
    created; a cancel wakes the waiters through the token's callback.

Locks:
    ``_cond`` guards ``_busy`` and ``_closed``.

Shutdown:
    :meth:`close` wakes every waiter, who then raises ``ShutdownError``.
"""

from __future__ import annotations

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

__all__ = ["Gate"]


class Gate:
    """A counting gate with deadlines, cancellation and shutdown."""

    def __init__(self, capacity: int, *, binding: str) -> None:
        self._capacity = capacity
        self._binding = binding
        self._cond = threading.Condition(threading.Lock())
        self._busy = 0
        self._closed = False

    def close(self) -> None:
        """Refuse new entries and wake every waiter."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

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
    ) -> None:
        """Take a slot, waiting at most until ``deadline``.

        Raises:
            ShutdownError, RequestCancelledError, DeadlineExceededError.
        """
        with self._cond:
            if self._busy < self._capacity and not self._closed:
                self._busy += 1
                return
        handle = cancel.add_callback(self._wake) if cancel is not None else None
        try:
            with self._cond:
                while True:
                    if self._closed:
                        raise ShutdownError("the binding is closed", binding=self._binding, op=op)
                    if cancel is not None and cancel.cancelled:
                        raise RequestCancelledError(
                            "the call was cancelled before it was sent",
                            binding=self._binding,
                            op=op,
                        )
                    if self._busy < self._capacity:
                        self._busy += 1
                        return
                    left = deadline - now()
                    if left <= 0:
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
            # notify_all: a woken waiter may leave (cancelled) without the slot.
            self._cond.notify_all()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
