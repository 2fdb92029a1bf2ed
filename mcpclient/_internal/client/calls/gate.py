"""Admission gates: per-binding concurrency and call serialization.

Admission is first come, first served: each caller takes a ticket, and a
slot goes to the oldest waiting ticket, never to a newcomer that happens to
be awake (no barging).

A queue holds two kinds of place: a :class:`Ticket` whose thread blocks in
:meth:`Gate.enter`, and an :class:`Entry` (a submitted call) that has no
thread at all. An entry is admitted by whichever thread frees its turn, which
runs its ``on_admit`` outside the lock; so ``submit_tool_call`` queues as
many calls as it likes without a thread per call, in submission order.

A binding's two gates on the call path, call serialization (one
``tools/call`` at a time) and the request slots (``max_concurrent_requests``),
share one lock: :func:`enter_pair` takes a turn in both in one step when
neither is contended (the common case), and :func:`leave_pair` gives both
back in one step, so an uncontended call pays for one gate, not two.

Threads:
    Callers block in :meth:`Gate.enter` until their ticket is at the head
    and a slot is free, their deadline passes, their CancelToken fires, or
    the binding closes. No thread is created; a cancel wakes the waiters
    through the token's callback. A queued :class:`Entry` waits with no
    thread: the thread that frees a slot (a caller leaving, the reader
    completing a submitted call, the deadline watcher expiring a queued
    entry, a canceller) admits it and runs its ``on_admit``, which must not
    block. Its deadline is a timer on the process-wide watcher, its cancel a
    token callback; either takes it out of the queue unsent.

Locks:
    ``_cond`` (shared by gates made with ``share=``) guards ``_busy``,
    ``_queue`` and ``_closed`` of each gate that uses it, the state of every
    entry queued in them, and the count of threads waiting on it: nobody is
    notified when nobody waits. ``on_admit``/``on_fail`` run outside it (a
    per-thread trampoline keeps admissions that free further admissions from
    recursing).

Shutdown:
    :meth:`close` wakes every waiter, who then raises ``ShutdownError``, and
    fails every queued entry with ``ShutdownError`` (never admitted, so never
    sent).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    DeadlineExceededError,
    Error,
    FailureClass,
    RequestCancelledError,
    ShutdownError,
)

__all__ = [
    "Entry",
    "Gate",
    "Ticket",
    "enter_pair",
    "leave_entry",
    "leave_pair",
    "queue_entry",
    "starting",
]

_log = logging.getLogger(__name__)


class Ticket:
    """A place in a gate's queue."""

    __slots__ = ("gate",)

    def __init__(self, gate: Gate) -> None:
        self.gate = gate


_QUEUED, _ADMITTED, _DROPPED = 0, 1, 2


class Entry(Ticket):
    """A queued call with no thread of its own (see the module docstring).

    ``gates``: the gates it needs, taken in order (all sharing one lock).
    ``on_admit`` runs once it holds all of them, on the thread that freed the
    last one; the holder gives them back with :func:`leave_entry`.
    ``on_fail`` runs instead when it leaves the queue unadmitted (deadline,
    cancel, close), with the classified error. Exactly one of the two runs.
    """

    __slots__ = (
        "deadline",
        "deadline_class",
        "gates",
        "on_admit",
        "on_fail",
        "op",
        "stage",
        "state",
        "timer",
    )

    def __init__(
        self,
        gates: tuple[Gate, ...],
        *,
        deadline: float,
        op: str,
        on_admit: Callable[[], None],
        on_fail: Callable[[Error], None],
        deadline_class: FailureClass = FailureClass.DEADLINE,
    ) -> None:
        super().__init__(gates[0])
        self.gates = gates
        self.deadline = deadline
        self.deadline_class = deadline_class
        self.op = op
        self.on_admit = on_admit
        self.on_fail = on_fail
        self.stage = 0  # index in gates of the gate it is queued in (or len: holds all)
        self.state = _QUEUED  # guarded by the gates' lock
        self.timer: watcher.Timer | None = None  # guarded by the gates' lock


class _Sync:
    """A gates' shared condition and how many threads wait on it."""

    __slots__ = ("cond", "entries", "gates", "lock", "waiting")

    def __init__(self) -> None:
        # ``with lock`` is ``with cond`` without Condition's Python-level
        # __enter__/__exit__ (the uncontended paths take only the lock).
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiting = 0  # guarded by cond
        self.entries = 0  # queued Entry objects in these gates; guarded by cond
        self.gates: list[Gate] = []  # the gates sharing this lock


class Gate:
    """A FIFO counting gate with deadlines, cancellation and shutdown.

    ``share``: use that gate's lock (see :func:`enter_pair`). ``serializes``:
    this gate is call serialization (one call at a time unless
    ``allow_parallel_calls``), which a deadline error names.
    """

    def __init__(
        self,
        capacity: int,
        *,
        binding: str,
        share: Gate | None = None,
        serializes: bool = False,
    ) -> None:
        self._capacity = capacity
        self._binding = binding
        self._serializes = serializes
        self._sync: _Sync = _Sync() if share is None else share._sync
        self._cond = self._sync.cond
        self._lock = self._sync.lock  # the lock of _cond
        self._busy = 0
        self._queue: collections.deque[Ticket] = collections.deque()
        self._closed = False
        self._sync.gates.append(self)

    def close(self) -> None:
        """Refuse new entries, wake every waiter, fail every queued entry."""
        with self._cond:
            self._closed = True
            failed = [t for t in self._queue if isinstance(t, Entry)]
            for entry in failed:
                self._queue.remove(entry)
                _drop(entry)
            ready, shut = _pump(self._sync)
            self._cond.notify_all()
        _start(ready)
        _fail([*failed, *shut], _shutdown)

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
        """Take a slot in turn, waiting at most until ``deadline``.

        Raises:
            ShutdownError, RequestCancelledError, DeadlineExceededError.
        """
        with self._lock:
            if self._free():
                self._busy += 1  # uncontended: no ticket needed
                return
            ticket = Ticket(self)
            self._queue.append(ticket)
            admitted = self._may_enter(ticket)
            if admitted:
                self._admit(ticket)
                ready, failed = _pump(self._sync) if self._sync.entries else _NONE
        if admitted:
            _start(ready)
            _fail(failed, _shutdown)
            return
        handle = cancel.add_callback(self._wake) if cancel is not None else None
        ready, failed = _NONE
        try:
            with self._cond:
                self._sync.waiting += 1
                try:
                    self._wait_turn(ticket, deadline, cancel, op, deadline_class)
                finally:
                    self._sync.waiting -= 1
                    if self._sync.entries:
                        # Leaving the queue (admitted, or deadline, cancel,
                        # close) may let the entries behind this ticket in.
                        ready, failed = _pump(self._sync)
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
            _start(ready)
            _fail(failed, _shutdown)

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
                raise self.waited_too_long(op, deadline_class)
            self._cond.wait(left)

    def leave(self) -> None:
        """Release a slot taken by :meth:`enter`."""
        with self._lock:
            self._busy -= 1
            self._notify()
            if not self._sync.entries:
                return
            ready, failed = _pump(self._sync)
        _start(ready)
        _fail(failed, _shutdown)

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
        # Caller holds _cond. An entry now at the head is let in by the caller.
        self._queue.popleft()
        self._busy += 1
        self._notify()  # the next ticket may fit too

    def _forget(self, ticket: Ticket) -> None:
        # Caller holds _cond. A ticket leaving the queue may unblock the next
        # (a waiter is woken; an entry is let in by the caller of _forget).
        try:
            self._queue.remove(ticket)
        except ValueError:
            return
        self._notify()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def waited_too_long(self, op: str, deadline_class: FailureClass) -> DeadlineExceededError:
        """The error of a call whose deadline passed while it waited in this gate."""
        if self._serializes:
            what = (
                "an earlier call on this binding to finish (calls are serialized; set"
                " allow_parallel_calls=True to run them concurrently)"
            )
        else:
            what = f"one of the binding's {self._capacity} request slots (max_concurrent_requests)"
        return DeadlineExceededError(
            f"the call's deadline passed while it waited for {what}; it was never sent",
            failure_class=deadline_class,
            binding=self._binding,
            op=op,
        )


# -- entries: queued calls with no thread of their own ------------------------

_NONE: tuple[list[Entry], list[Entry]] = ([], [])  # never mutated
_local = threading.local()  # .pending: the entries this thread is starting


def starting() -> bool:
    """Whether this thread is starting admitted entries (further up its stack)."""
    return getattr(_local, "pending", None) is not None


def queue_entry(entry: Entry, cancel: CancelToken | None) -> None:
    """Queue ``entry`` behind everyone waiting in its first gate.

    When there is room at once, ``on_admit`` runs here, on this thread;
    otherwise the entry waits with no thread until a slot frees, its
    deadline passes, ``cancel`` fires, or a gate closes.
    """
    gate = entry.gates[0]
    sync = gate._sync
    with sync.lock:
        if any(g._closed for g in entry.gates):
            entry.state = _DROPPED
            ready, failed = _NONE
            closed = True
        else:
            closed = False
            gate._queue.append(entry)
            sync.entries += 1
            ready, failed = _pump(sync)
            if entry.state is _QUEUED:
                # One timer on the process-wide watcher (kept running while it is
                # armed), not a thread; it takes the entry out unsent.
                watcher.acquire()
                entry.timer = watcher.schedule(
                    entry.deadline, lambda: _withdraw(entry, _deadline_passed)
                )
    if closed:
        entry.on_fail(_shutdown(entry))
        return
    if cancel is not None and entry.state is _QUEUED:
        # Outside the lock: a token cancelled already runs this at once. Left
        # armed once admitted (then it finds the entry gone and does nothing).
        cancel.add_callback(lambda: _withdraw(entry, _cancelled))
    _start(ready)
    _fail(failed, _shutdown)


def leave_entry(entry: Entry) -> None:
    """Give back every gate an admitted entry holds; start whoever that lets in."""
    sync = entry.gates[0]._sync
    with sync.lock:
        for gate in entry.gates:
            gate._busy -= 1
        if sync.waiting:
            sync.cond.notify_all()
        ready, failed = _pump(sync) if sync.entries else _NONE
    _start(ready)
    _fail(failed, _shutdown)


def _withdraw(entry: Entry, build: Callable[[Entry], Error]) -> None:
    """Take a still-queued entry out (deadline, cancel) and fail it; else nothing."""
    sync = entry.gates[0]._sync
    with sync.lock:
        if entry.state is not _QUEUED:
            return  # admitted or failed already
        entry.gate._queue.remove(entry)
        _drop(entry)
        ready, failed = _pump(sync)
        if sync.waiting:
            sync.cond.notify_all()  # a ticket behind it may be at the head now
    _start(ready)
    _fail([entry], build)
    _fail(failed, _shutdown)


def _drop(entry: Entry) -> None:
    # Caller holds the lock and took the entry out of its queue: give back the
    # gates it already passed.
    for gate in entry.gates[: entry.stage]:
        gate._busy -= 1
    entry.state = _DROPPED
    entry.gate._sync.entries -= 1


def _pump(sync: _Sync) -> tuple[list[Entry], list[Entry]]:
    """Admit every entry at the head of a gate with room (caller holds the lock).

    Returns the entries now holding all their gates (to start) and those
    that met a closed gate (to fail), both to be handled once the lock is
    released.
    """
    ready: list[Entry] = []
    failed: list[Entry] = []
    changed = moved = False
    while True:
        for gate in sync.gates:
            queue = gate._queue
            while queue and gate._busy < gate._capacity and not gate._closed:
                head = queue[0]
                if not isinstance(head, Entry):
                    break  # a blocked thread's turn: it admits itself
                queue.popleft()
                gate._busy += 1
                changed = True
                head.stage += 1
                if head.stage == len(head.gates):
                    head.state = _ADMITTED
                    sync.entries -= 1
                    ready.append(head)
                    continue
                head.gate = following = head.gates[head.stage]
                if following._closed:
                    _drop(head)
                    failed.append(head)
                else:
                    following._queue.append(head)
                moved = True  # another pass: the gates may have room for it now
        if not moved:
            break
        moved = False
    if changed and sync.waiting:
        sync.cond.notify_all()  # a ticket may be at its queue's head now
    return ready, failed


def _disarm(entry: Entry) -> None:
    # Runs once the entry left the queue: its state no longer changes, and the
    # timer is only ever set while it is queued.
    timer = entry.timer
    if timer is not None:
        entry.timer = None
        timer.cancel()
        watcher.release()


def _start(entries: list[Entry]) -> None:
    """Run ``on_admit`` of each, in order, outside the lock.

    An admission may free a gate that admits the next entry: a trampoline
    per thread runs those in this loop instead of recursing.
    """
    if not entries:
        return
    pending: collections.deque[Entry] | None = getattr(_local, "pending", None)
    if pending is not None:
        pending.extend(entries)  # started further up this thread's stack
        return
    pending = _local.pending = collections.deque(entries)
    try:
        while pending:
            entry = pending.popleft()
            _disarm(entry)
            try:
                entry.on_admit()
            except Exception:
                _log.exception("starting a queued call of binding %s failed", entry.gate._binding)
    finally:
        _local.pending = None


def _fail(entries: list[Entry], build: Callable[[Entry], Error]) -> None:
    for entry in entries:
        _disarm(entry)
        try:
            entry.on_fail(build(entry))
        except Exception:
            _log.exception("failing a queued call of binding %s failed", entry.gate._binding)


def _shutdown(entry: Entry) -> Error:
    return ShutdownError("the binding is closed", binding=entry.gate._binding, op=entry.op)


def _cancelled(entry: Entry) -> Error:
    return RequestCancelledError(
        "the call was cancelled before it was sent", binding=entry.gate._binding, op=entry.op
    )


def _deadline_passed(entry: Entry) -> Error:
    return entry.gate.waited_too_long(entry.op, entry.deadline_class)


def enter_pair(
    outer: Gate | None,
    inner: Gate,
    deadline: float,
    cancel: CancelToken | None,
    op: str,
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
    if outer._sync is inner._sync:
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
    outer.enter(deadline, cancel, op)
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
        sync = inner._sync
        with inner._lock:
            inner._busy -= 1
            outer._busy -= 1
            if sync.waiting:
                inner._cond.notify_all()
            if not sync.entries:
                return
            ready, failed = _pump(sync)
        _start(ready)
        _fail(failed, _shutdown)
    else:
        inner.leave()
        outer.leave()
