"""The request table: every pending request is a Future, completed once.

Threads:
    None of its own. Any thread may enter, take or complete a request: the
    caller that sends it, the reader with its answer, a caller whose wait
    reached its deadline, the process-wide watcher (``watcher.py``) for a
    request nobody waits on, a canceller, and whoever declares the
    connection lost or closes it.

Locks:
    ``lock`` guards the id → request map, the progress-token map and the
    failure (once set, nothing enters any more). Each :class:`Pending` has a
    mutex of its own guarding its Future state, its waiters and its
    callbacks. No lock is held while a request is completed, while its
    callbacks run, or while the wire cancel is sent; the table lock is never
    taken under a request's mutex.

Shutdown:
    :meth:`RequestTable.fail_all` (a loss, or close) takes every pending
    request out at once and fails each one; nothing enters afterwards.

How a request ends:
    Each pending request is a :class:`Pending`, a
    :class:`concurrent.futures.Future` keyed by its id, holding the
    request's :class:`~mcpclient._internal.session.context.CallContext`
    whole: the table enforces its deadline and the deadline's class, fails
    it as ``indeterminate`` on a loss when it says so, and sends the wire
    cancel only when it allows one. It is completed
    exactly once, by whoever takes it out of the table under ``lock``: the
    answer, the deadline, a cancel, a loss, close (a request refused before
    it was entered is completed by its sender). A blocking caller waits on
    its own Future with the time it has left and, when that runs out,
    expires the request itself (:meth:`RequestTable.wait`): no timer per
    call. The watcher holds only what no caller waits for
    (:meth:`RequestTable.watch`). Expiry and cancellation send the wire
    cancel, once, because only the taker sends it.

    A :class:`Pending` is its own condition: a pre-acquired *gate* lock,
    released once at completion, is what every waiter passes through (it
    re-releases the gate for the next one). That keeps the stdio call path
    at one lock hand-off between the reader and the caller, where a plain
    Future costs a Condition, an RLock and a lock per waiter; everything
    else (``result``, ``exception``, ``add_done_callback``,
    :func:`concurrent.futures.wait`) is the Future's own code, unchanged.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
from collections.abc import Callable
from concurrent.futures._base import CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED, PENDING
from typing import Any

from mcpclient._core import watcher
from mcpclient._core.deadline import for_people, now
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.noise import Noise
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    IndeterminateError,
    LimitExceededError,
    RequestCancelledError,
    ShutdownError,
    error_for,
)

__all__ = ["Pending", "ProgressHandler", "RequestTable"]

ProgressHandler = Callable[[dict[str, Any]], None]
Clock = Callable[[], float]
Schedule = Callable[[float, Callable[[], None]], watcher.Timer]
SendCancel = Callable[[int, str], None]

# A caller whose deadline passed expires its request; if another thread took
# the request first, that thread completes it at once. Waiting longer means
# it died between the two steps: the caller then completes it itself.
_TAKEN_GRACE = 1.0
# lock.acquire() refuses a timeout past threading.TIMEOUT_MAX; wait in slices.
_MAX_WAIT = 3600.0
_Lock = threading.Lock


class Pending(concurrent.futures.Future[Any]):
    """One request in the table: its Future, and what ending it needs.

    Holders use it as any Future. :meth:`cancel` takes the request out of
    the table (and tells the server); ``set_result``/``set_exception`` are
    the table's, not a holder's.

    Thread safety: every method may be called from any thread.
    """

    # The Future's own attributes are slots too: base-class code finds them
    # through the slot descriptors, and no per-instance dict is filled.
    __slots__ = (
        "_done_callbacks",
        "_exception",
        "_gate",
        "_mutex",
        "_result",
        "_state",
        "_table",
        "_waiters",
        "active",
        "ctx",
        "method",
        "request_id",
        "token",
        "watch",
    )

    def __init__(self, table: RequestTable, request_id: int, method: str, ctx: CallContext) -> None:
        # Not Future.__init__: this object is its own condition (no
        # Condition, no RLock); the fields below are the ones Future reads.
        self._state = PENDING
        self._result = None
        self._exception = None
        self._waiters = []
        self._done_callbacks: list[Callable[[concurrent.futures.Future[Any]], object]] = []
        self._mutex = _Lock()
        gate = self._gate = _Lock()
        gate.acquire()  # released once, by the completion
        self._table = table
        self.request_id = request_id
        self.method = method
        self.ctx = ctx  # its deadline, class, op, cancel, progress: the caller's, whole
        self.token: str | None = None  # its progress token, if it asked for progress
        self.watch: watcher.Timer | None = None  # the watcher's timer (nobody waits on it)
        #: When it last showed a sign of life (entered, a progress report): an
        #: idle timeout counts from here. A float write, no lock: a late read
        #: only makes the idle check look again.
        self.active = 0.0

    # -- the condition protocol Future's own methods use ----------------------

    @property
    def _condition(self) -> Pending:  # type: ignore[override]  # a duck-typed Condition
        # A property, not an attribute holding self: a reference cycle would
        # leave every finished request to the cyclic garbage collector.
        return self

    def __enter__(self) -> bool:
        return self._mutex.acquire()

    def __exit__(self, *_exc: object) -> None:
        self._mutex.release()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take this Future's mutex (``concurrent.futures.wait`` does)."""
        return self._mutex.acquire(blocking, timeout)

    def release(self) -> None:
        """Release this Future's mutex."""
        self._mutex.release()

    def wait(self, timeout: float | None = None) -> bool:
        """As ``Condition.wait`` (mutex held): until completed, or ``timeout``."""
        self._mutex.release()
        try:
            return self.wait_done(timeout)
        finally:
            self._mutex.acquire()

    def notify_all(self) -> None:
        """Wake every waiter.

        Future's own code calls this only where it moves the state out of
        PENDING, under the mutex: exactly once, with the gate still closed.
        """
        self._gate.release()

    notify = notify_all

    # -- completion ------------------------------------------------------------

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until completed, at most ``timeout`` seconds; whether it is done."""
        gate = self._gate
        if timeout is None:
            passed = gate.acquire()
        elif timeout > 0:
            passed = gate.acquire(True, min(timeout, _MAX_WAIT))
        else:  # as Condition.wait: no wait at all
            passed = gate.acquire(False)
        if passed:
            gate.release()  # pass it on: every waiter gets through
            return True
        return self._state != PENDING

    def complete(self, result: Any = None, exc: BaseException | None = None) -> bool:
        """End the request: its taker (or its refused sender) calls this, once.

        Returns whether this call completed it (False: it was already over).
        """
        watch = self.watch
        if watch is not None:
            watch.cancel()
        if isinstance(exc, Error):
            op = self.ctx.op
            if exc.op != op:
                # Whichever layer classified the failure (a pipe names its read
                # or write, HTTP and a lost session the wire method), the caller
                # sees the one op it called: the same failure, the same op,
                # every path.
                exc.op = op
        mutex = self._mutex
        mutex.acquire()
        if self._state != PENDING:
            mutex.release()
            return False
        self._result = result
        self._exception = exc
        self._state = FINISHED
        if self._waiters:  # concurrent.futures.wait()/as_completed()
            for waiter in self._waiters:
                if exc is None:
                    waiter.add_result(self)
                else:
                    waiter.add_exception(self)
        self._gate.release()
        mutex.release()
        if self._done_callbacks:
            self._invoke_callbacks()  # type: ignore[attr-defined]  # Future's own
        return True

    def outcome(self) -> Any:
        """The result of a completed request, or raise its error (no lock: it is over)."""
        error = self._exception
        if error is None:
            if self._state == FINISHED:
                return self._result
            raise RequestCancelledError(  # a holder cancelled the Future itself
                "the call was cancelled", binding=self._table.binding, op=self.ctx.op
            )
        self._exception = None  # no reference cycle through the traceback
        try:
            raise error
        finally:
            error = None

    def cancel(self) -> bool:
        """Cancel the request: it leaves the table, and the server is told (once).

        As ``Future.cancel``: True if it is (now) cancelled, False once it
        was completed otherwise.
        """
        table = self._table
        if table.take(self.request_id) is not self:
            return self.cancelled()
        watch = self.watch
        if watch is not None:
            watch.cancel()
        with self._mutex:
            if self._state != PENDING:  # pragma: no cover - only the taker completes
                return self._state in (CANCELLED, CANCELLED_AND_NOTIFIED)
            # What cancel() and then set_running_or_notify_cancel() do, at once:
            # no executor will ever run this, so the waiters are told now.
            self._state = CANCELLED_AND_NOTIFIED
            for waiter in self._waiters:
                waiter.add_cancelled(self)
            self._gate.release()
        self._invoke_callbacks()  # type: ignore[attr-defined]  # Future's own
        if self.ctx.cancel_on_wire:
            table.send_cancel(self.request_id, "the future was cancelled")
        return True


class RequestTable:
    """Pending requests by id, each ended once by whoever takes it out.

    ``clock`` and ``schedule`` are injectable (tests drive the table
    without threads); ``send_cancel(request_id, reason)`` tells the server
    that a request it got is cancelled.

    Thread safety: every method may be called from any thread.
    """

    def __init__(
        self,
        binding: str,
        *,
        send_cancel: SendCancel,
        clock: Clock = now,
        schedule: Schedule = watcher.schedule,
    ) -> None:
        self.binding = binding
        self.send_cancel = send_cancel
        self.clock = clock
        self._schedule = schedule
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self._pending: dict[int, Pending] = {}
        self._tokens: dict[str, Pending] = {}
        #: Why the connection is unusable (set once; nothing enters afterwards).
        self.failure: Error | None = None
        #: The lines the reader dropped as not JSON-RPC (a deadline error says so).
        self.noise = Noise()
        #: When a request other than ``ping`` last entered or was answered (the
        #: keepalive's idle clock). A float write, no lock: a late read only
        #: delays one ping.
        self.last_activity = clock()

    def new(self, method: str, ctx: CallContext) -> Pending:
        """A request with a fresh id, not yet entered."""
        return Pending(self, next(self.ids), method, ctx)

    def __len__(self) -> int:
        return len(self._pending)

    # -- entering --------------------------------------------------------------

    def enter(self, entry: Pending) -> bool:
        """Enter ``entry`` before it is sent; False: it was completed at once instead.

        Nothing is entered (or sent) for a call whose deadline has passed, so
        the server never runs a call whose caller was told it timed out; nor
        once the connection is unusable. (A call already cancelled never gets
        here: its session refuses it first.)
        """
        ctx = entry.ctx
        if ctx.deadline is not None and self.clock() >= ctx.deadline:
            entry.complete(
                exc=DeadlineExceededError(
                    "the call's deadline passed before it was sent",
                    failure_class=ctx.deadline_class,
                    binding=self.binding,
                    op=ctx.op,
                )
            )
            return False
        entry.active = self.clock()
        if entry.ctx.op != "ping":  # a liveness probe (ping, or discover in 2026-07-28)
            self.last_activity = entry.active
        with self.lock:
            failure = self.failure
            if failure is None:
                self._pending[entry.request_id] = entry
                if entry.token is not None:
                    self._tokens[entry.token] = entry
                return True
        entry.complete(exc=self._relabel(failure, ctx.op))
        return False

    def watch(self, entry: Pending) -> None:
        """Have the watcher expire ``entry`` at its deadline (nobody waits on it).

        With an idle timeout the timer is set for the nearer idle limit and,
        when progress has moved that on, set again.
        """
        if entry.ctx.deadline is None:  # a stream: nothing comes due
            return
        self._arm(entry)

    def _arm(self, entry: Pending) -> None:
        request_id = entry.request_id
        deadline = entry.ctx.deadline
        assert deadline is not None
        due = self._due(entry)

        def expire() -> None:
            if due >= deadline:  # the deadline itself: the watcher fires at it
                self.expire(request_id)
                return
            # By id, not the entry: a timer never keeps a finished request alive.
            with self.lock:
                current = self._pending.get(request_id)
            if current is not None and self._overdue(current) is None:
                self._arm(current)  # progress moved the idle limit on: look again then

        entry.watch = self._schedule(due, expire)
        if entry.done():  # completed before the timer was attached
            entry.watch.cancel()

    def _due(self, entry: Pending) -> float:
        """When ``entry`` next needs a look: its deadline, or sooner its idle limit."""
        deadline = entry.ctx.deadline
        assert deadline is not None
        idle = entry.ctx.idle_timeout
        return deadline if idle is None else min(deadline, entry.active + idle)

    def _overdue(self, entry: Pending) -> bool | None:
        """Expire ``entry`` if its deadline or idle limit passed; None if neither did.

        (True/False: it was due; whether this call ended it.)
        """
        deadline = entry.ctx.deadline
        assert deadline is not None
        current = self.clock()
        if current >= deadline:
            return self.expire(entry.request_id)
        idle = entry.ctx.idle_timeout
        if idle is not None and current >= entry.active + idle:
            return self.expire(entry.request_id, idle=idle)
        return None

    # -- taking and ending -----------------------------------------------------

    def take(self, request_id: int) -> Pending | None:
        """Take a request out; the taker must complete it."""
        with self.lock:
            entry = self._pending.pop(request_id, None)
            if entry is not None and entry.token is not None:
                self._tokens.pop(entry.token, None)
        if entry is not None and entry.ctx.op != "ping":
            self.last_activity = self.clock()
        return entry

    def idle_since(self) -> float | None:
        """Since when nothing but liveness probes (op ``ping``) went out or came back;
        None while a call is in flight.

        A stream (no deadline) does not count as a call in flight.
        """
        with self.lock:
            busy = any(
                e.ctx.op != "ping" and e.ctx.deadline is not None for e in self._pending.values()
            )
        return None if busy else self.last_activity

    def __contains__(self, request_id: int) -> bool:
        with self.lock:
            return request_id in self._pending

    def progress_for(self, token: str) -> ProgressHandler | None:
        """The progress callback of the pending request that owns ``token``.

        A report is a sign of life: an idle timeout counts from it.
        """
        with self.lock:
            entry = self._tokens.get(token)
        if entry is None:
            return None
        entry.active = self.clock()
        return entry.ctx.progress

    def answer(self, request_id: int, result: Any = None, exc: BaseException | None = None) -> bool:
        """Complete a request with its answer; False if it is over (late or unknown)."""
        entry = self.take(request_id)
        if entry is None:
            return False
        entry.complete(result, exc)
        return True

    def expire(
        self,
        request_id: int,
        reported: DeadlineExceededError | None = None,
        *,
        idle: float | None = None,
    ) -> bool:
        """Fail a request at its deadline and cancel it on the wire; False if it was over.

        ``reported``: the transport's own timeout, when it noticed first. A
        request with a deadline fails as its deadline says whoever noticed; a
        stream (no deadline) cut for idleness fails with what was reported.
        ``idle``: it went this long without a sign of life (its idle timeout).
        """
        entry = self.take(request_id)
        if entry is None:
            return False  # answered, cancelled or failed first
        if reported is not None and entry.ctx.deadline is None:
            entry.complete(exc=reported)
        else:
            entry.complete(exc=self._expired(entry, idle))
        if entry.ctx.cancel_on_wire:
            self.send_cancel(request_id, "deadline exceeded")
        return True

    def cancel(self, request_id: int, reason: str) -> bool:
        """Fail a request as cancelled and tell the server; False if it was over."""
        entry = self.take(request_id)
        if entry is None:
            return False
        ctx = entry.ctx
        entry.complete(
            exc=RequestCancelledError(
                f"the call was cancelled ({reason})", binding=self.binding, op=ctx.op
            )
        )
        if ctx.cancel_on_wire:
            self.send_cancel(request_id, reason)
        return True

    def canceller(self, request_id: int, token: CancelToken) -> Callable[[], None]:
        """What ``token`` runs when it fires: cancel the request, with its reason."""

        def cancel() -> None:
            self.cancel(request_id, token.reason or "cancelled by the caller")

        return cancel

    def wait(self, entry: Pending) -> None:
        """Block until ``entry`` is completed; expire it at its deadline.

        The calling thread is the request's deadline watcher: its wait ends
        at the absolute deadline, and it then expires the request exactly as
        the watcher would.
        """
        deadline = entry.ctx.deadline
        if deadline is None:  # a stream: it ends when it is answered, cancelled or lost
            entry.wait_done(None)
            return
        if entry.ctx.idle_timeout is not None:
            self._wait_idle(entry)
            return
        clock = self.clock
        # The common case first: one wait on the gate, answered in time.
        left = deadline - clock()
        if left > 0:
            gate = entry._gate
            if gate.acquire(True, left if left < _MAX_WAIT else _MAX_WAIT):
                gate.release()  # pass it on: every waiter gets through
                return
        while True:
            left = deadline - clock()
            if left <= 0:
                self.expire(entry.request_id)
                # Completed now, by us or by whoever took it first.
                if not entry.wait_done(_TAKEN_GRACE):  # pragma: no cover - defensive
                    entry.complete(exc=self._expired(entry))
                return
            if entry.wait_done(left):
                return

    def _wait_idle(self, entry: Pending) -> None:
        """:meth:`wait` for a request with an idle timeout: each wait ends at the
        nearer of its deadline and its idle limit, which progress moves on."""
        while True:
            overdue = self._overdue(entry)
            if overdue is not None:
                # Completed now, by us or by whoever took it first.
                if not entry.wait_done(_TAKEN_GRACE):  # pragma: no cover - defensive
                    entry.complete(exc=self._expired(entry))
                return
            if entry.wait_done(max(0.0, self._due(entry) - self.clock())):
                return

    def fail_all(self, failure_class: FailureClass, message: str, failure: Error) -> bool:
        """Fail every pending request; refuse new ones. Whether this set the failure."""
        with self.lock:
            first = self.failure is None
            if first:
                self.failure = failure
            pending = list(self._pending.values())
            self._pending.clear()
            self._tokens.clear()
        for entry in pending:
            entry.complete(exc=self._classified(entry, failure_class, message))
        return first

    def forget(self, failure: Error) -> None:
        """After fork, in the child: drop everything without taking a lock.

        A lock held by a parent thread at fork time stays held forever in the
        child; the child has no other threads, so plain replacement is safe.
        """
        self.lock = threading.Lock()
        self._pending = {}
        self._tokens = {}
        self.failure = failure

    # -- the errors it completes with -------------------------------------------

    def _expired(self, entry: Pending, idle: float | None = None) -> DeadlineExceededError:
        ctx = entry.ctx
        why = (
            "the call did not complete by its deadline"
            if idle is None
            else f"no progress for {for_people(idle)} (the call's idle timeout)"
        )
        error = DeadlineExceededError(
            why,
            failure_class=ctx.deadline_class,
            binding=self.binding,
            op=ctx.op,
        )
        noise = self.noise.describe()
        if noise:
            # A note, not the message: the startup error that replaces this
            # one carries the notes over (lifecycle), so the cause is not lost.
            error.add_note(noise)
        return error

    def _classified(self, entry: Pending, failure_class: FailureClass, message: str) -> Error:
        if entry.ctx.indeterminate_on_loss:
            if failure_class is not FailureClass.SHUTDOWN:
                # The loss may have been noticed by another request or a
                # reconnect ("connection refused"): say what became of this one.
                message = f"the connection was lost while the request was in flight ({message})"
            return IndeterminateError(
                f"{message}; the server may or may not have run it",
                binding=self.binding,
                op=entry.method,
            )
        return error_for(failure_class, message, binding=self.binding, op=entry.method)

    def _relabel(self, failure: Error, op: str) -> Error:
        if isinstance(failure, ShutdownError):
            return ShutdownError(failure.message, binding=self.binding, op=op)
        if isinstance(failure, LimitExceededError):
            return LimitExceededError(failure.message, binding=self.binding, op=op)
        return ConnectionLostError(
            f"the connection is gone: {failure.message}", binding=self.binding, op=op
        )
