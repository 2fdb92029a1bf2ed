"""A binding's state machine and the slot of its one live connection.

Every part of a client (start and close, the call path, the refresh, inbound
routing, auth recovery) reads and changes the binding's lifecycle through the
one :class:`BindingState` it shares; none of them keeps its own copy.

Threads:
    None of its own. Callers, the session's reader and writer, the refresh,
    reconnect and auth-flow workers all come through here. A call waiting
    without a thread (:meth:`BindingState.when_serving`, a submitted call) is
    checked again on the deadline watcher whenever the answer may change.

Locks:
    ``lock`` guards the lifecycle state and its timestamp, the connection (live
    and lost), the negotiated protocol, the recorded failure, the closing flag,
    the reconnect attempt number, the refresh deferred until ready and the
    state an auth flow returns to, the next revival of a failed binding and
    the fork that orphaned it; the refresh part also keeps its TTL timer
    under it. ``connected`` (a condition on ``lock``) is notified whenever the
    connection or the state changes the answer to "can a call be sent". The
    catalogs are not guarded here: the :class:`CatalogStore` has its own lock,
    always taken after this one. It is never held across I/O, a future's
    completion or user code; events are posted to the lane under it (a
    non-blocking append) so they are delivered in commit order.

Shutdown:
    Nothing to stop: :mod:`lifecycle` sets ``closing`` and takes the
    connection away; a caller waiting in :meth:`BindingState.serving` wakes
    and is refused.

A failed binding (its reconnect budget spent) revives on demand: the first
call that finds it ``failed`` once its next attempt is due moves it to
``reconnecting`` and starts one attempt on the reconnect worker (``revive``,
set by :mod:`lifecycle`), then waits for it within its own deadline like any
call made while reconnecting; a call before then fails at once with the last
failure and says when the next attempt is due. The first attempt is due as
soon as the budget is spent; each later one ``RetryPolicy.max_delay`` after
the previous one failed.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from typing import Any

from mcpclient._core import redaction, watcher
from mcpclient._core.deadline import for_people, now
from mcpclient._internal.client.auth.secrets import redactor_for
from mcpclient._internal.client.catalog.catalog_store import CatalogStore
from mcpclient._internal.client.catalog.resource_cache import MAX_BYTES, MAX_ENTRIES, ResourceCache
from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.protocol import Protocol
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog, ServerIdentity
from mcpclient.definition import Definition
from mcpclient.errors import (
    DeadlineExceededError,
    Error,
    FailureClass,
    ForkedError,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
    error_for,
)
from mcpclient.events import Event, StateChanged
from mcpclient.handlers import Handlers
from mcpclient.status import TRANSITIONS, Failure, State, Status

__all__ = ["SERVING", "BindingState"]

# AUTHENTICATING serves only while a flow runs on a live connection (calls
# rejected meanwhile join the flow); during startup there is no connection yet.
SERVING = (State.READY, State.DEGRADED, State.AUTHENTICATING)


class BindingState:
    """The lifecycle state, the live connection and the recorded failure of one binding.

    Thread safety: any thread. Other modules read its fields (under ``lock``
    for a consistent view) and change them only through its verbs
    (``install_first``, ``ready``, ``abandon``, ``lose``, ``install``,
    ``begin_close``, ``begin_auth``/``end_auth``, ...), which own the
    lifecycle's rules.
    """

    def __init__(self, definition: Definition, handlers: Handlers) -> None:
        self.definition = definition
        self.handlers = handlers
        self.binding = str(definition.name)
        self.lock = threading.Lock()
        self.connected = threading.Condition(self.lock)  # the connection or state changed
        self.state = State.CONFIGURED
        self.last_change = time.time()
        self.conn: Connection | None = None
        self.lost: Connection | None = None  # a dead connection still to be released
        self.protocol: Protocol | None = None
        self.first_server: ServerIdentity | None = None
        self.failure: Error | None = None
        self.closing = False
        self.reconnect_number = 0
        self.refresh_when_ready = False  # a change announced before the binding served
        self.before_auth: State | None = None  # the state a flow on a live binding returns to
        #: When a call on the failed binding may start the next reconnect attempt
        #: (monotonic); None: no revival (not failed, or reconnecting is disabled).
        self.revive_at: float | None = None
        self.revivals = 0  # revival attempts since the binding last served
        #: Starts one reconnect attempt on the worker (set by the lifecycle); False once closed.
        self.revive: Callable[[], bool] | None = None
        #: Set in a forked child: every use of the binding raises it.
        self.forked: ForkedError | None = None
        #: Calls waiting without a thread for the connection (:meth:`when_serving`).
        self.waiters: list[_Waiter] = []
        self.lane = EventLane(self.binding)
        self.catalogs = CatalogStore(self.binding, self.emit)
        #: Fresh ``resources/read`` results (2026-07-28 ``ttlMs``/``cacheScope``).
        self.resource_cache = ResourceCache(MAX_ENTRIES, MAX_BYTES)
        # The definition's secrets are redacted from every message while the
        # binding lives (a server may quote back what it was sent).
        self.redactor = redaction.register(redactor_for(definition))

    def forget_after_fork(self, forked: ForkedError) -> None:
        """In a forked child: replace the locks (never take them) and refuse with ``forked``."""
        self.lock = threading.Lock()
        self.connected = threading.Condition(self.lock)
        self.catalogs.forget_after_fork()
        self.closing = True
        self.forked = forked
        self.failure = forked
        self.conn = self.lost = None
        self.revive = None
        self.waiters = []
        self.state = State.CLOSED

    def refusal(self, op: str) -> ShutdownError:
        """The error for a use of a closed binding: the fork that orphaned it, or the close."""
        forked = self.forked
        if forked is not None:
            return ForkedError(forked.message, binding=self.binding, op=op)
        return ShutdownError("the binding is closed", binding=self.binding, op=op)

    def schedule_revival_locked(self) -> None:
        """The binding just failed (``lock`` held): when may a call try again?

        The first revival is due at once (the budget already waited out its
        backoff); each later one ``max_delay`` after the previous one failed.
        """
        policy = self.definition.reconnect
        if policy.disabled or self.revive is None:
            self.revive_at = None
            return
        self.revive_at = now() + (policy.retry.max_delay if self.revivals else 0.0)

    def served_locked(self) -> None:
        """A connection is installed (``lock`` held): revivals start over."""
        self.revive_at = None
        self.revivals = 0

    def emit(self, event: Event) -> int:
        """Post ``event`` to the host's handler on the lane; its sequence (0: no handler)."""
        handler = self.handlers.event
        if handler is None:
            return 0
        return self.lane.post(lambda: handler(event))

    def transition(self, to: State) -> int:
        """Move to ``to`` if legal; returns the lane sequence of its event (0: refused)."""
        with self.lock:
            return self.transition_locked(to)

    def transition_locked(self, to: State) -> int:
        """:meth:`transition` with ``lock`` held."""
        current = self.state
        if to not in TRANSITIONS[current]:
            return 0
        self.state = to
        self.last_change = time.time()
        seq = self.emit(
            StateChanged(binding=self.binding, from_state=current, to_state=to, at=self.last_change)
        )
        return seq or -1

    # -- the lifecycle's verbs: the only writers of the fields above ------------

    def install_first(self, conn: Connection, protocol: Protocol) -> None:
        """The first connection is up (connect): keep it, its protocol and its server.

        Raises:
            ShutdownError: the binding was closed while starting.
        """
        with self.lock:
            if self.closing:
                raise ShutdownError(
                    "the binding was closed while starting", binding=self.binding, op="connect"
                )
            self.conn = conn
            self.protocol = protocol
            self.first_server = protocol.server

    def ready(self) -> tuple[int, bool]:
        """Startup is done: ``ready``. (the event's lane sequence, 0: closed meanwhile;
        whether a refresh was asked for while starting)."""
        with self.lock:
            seq = self.transition_locked(State.READY)
            refresh_now, self.refresh_when_ready = self.refresh_when_ready, False
        return seq, refresh_now

    def abandon(self, failure: BaseException) -> Connection | None:
        """Startup failed: ``failed`` and closing for good; the connection to release."""
        with self.lock:
            if isinstance(failure, Error):
                self.failure = failure
            self.transition_locked(State.FAILED)
            conn, self.conn = self.conn, None
            self.closing = True
        return conn

    def record(self, failure: Error) -> None:
        """Keep ``failure`` for ``status()`` without changing the state."""
        with self.lock:
            self.failure = failure

    def begin_close(self) -> tuple[bool, Connection | None, Connection | None]:
        """``closing``: (whether this is the first close, the live and the lost connection)."""
        with self.lock:
            first = not self.closing
            self.closing = True
            if first:
                self.transition_locked(State.CLOSING)
            conn, self.conn = self.conn, None
            lost, self.lost = self.lost, None
            self._changed_locked()
        return first, conn, lost

    def lose(
        self, conn: Connection, exc: Error, *, retrying: bool, announce: Callable[[], object]
    ) -> bool:
        """``conn`` was lost: claim it once (``reconnecting``, or ``degraded`` when not retrying).

        ``announce`` runs under the lock once claimed (the event, in commit
        order). False: not the live connection, not serving, or closing.
        """
        with self.lock:
            if self.conn is not conn or self.state not in SERVING or self.closing:
                return False
            self.conn, self.lost = None, conn
            self.resource_cache.clear()  # the session's results end with it
            self.failure = exc
            self.transition_locked(State.RECONNECTING if retrying else State.DEGRADED)
            announce()
            self._changed_locked()
        return True

    def begin_reconnect(self) -> bool:
        """``reconnect()``: ``reconnecting`` unless connected or already so; whether to start.

        Raises:
            ShutdownError: the binding is closed (or was inherited through fork).
        """
        with self.lock:
            if self.closing:
                raise self.refusal("reconnect")
            if self.conn is not None or self.state is State.RECONNECTING:
                return False
            self.transition_locked(State.RECONNECTING)
            self._changed_locked()
        return True

    def begin_attempt(self, number: int) -> tuple[bool, Connection | None]:
        """A reconnect attempt starts: (whether it should, the dead connection to release).

        Raises:
            ShutdownError: the binding is closed.
        """
        with self.lock:
            if self.closing:
                raise ShutdownError("the binding is closed", binding=self.binding, op="reconnect")
            if self.conn is not None:
                return False, None  # already connected (a second start() raced a success)
            self.reconnect_number = number
            lost, self.lost = self.lost, None
        return True, lost

    def install(self, conn: Connection, announce: Callable[[], object]) -> tuple[bool, bool]:
        """A reconnect succeeded: serve ``conn`` (``ready``); ``announce`` under the lock.

        Returns (installed, whether a refresh was asked for meanwhile); not
        installed when the binding was closed during the attempt.
        """
        with self.lock:
            if self.closing:
                return False, False
            self.conn = conn
            self.protocol = conn.protocol
            self.resource_cache.clear()  # a new session: nothing the old one said holds
            self.failure = None
            self.reconnect_number = 0
            self.served_locked()
            self.transition_locked(State.READY)
            announce()
            self._changed_locked()
            refresh_now, self.refresh_when_ready = self.refresh_when_ready, False
        return True, refresh_now

    def attempt_failed(self, exc: Error, *, retrying: bool, announce: Callable[[], object]) -> None:
        """A reconnect attempt failed; once the budget is spent (not ``retrying``), ``failed``."""
        with self.lock:
            if self.closing:
                return
            self.failure = exc
            if retrying:
                return
            self.transition_locked(State.FAILED)
            self.schedule_revival_locked()
            announce()
            self._changed_locked()

    def begin_auth(self) -> None:
        """An authorization flow started: ``authenticating`` (remembering where it was)."""
        with self.lock:
            self.before_auth = self.state
            self.transition_locked(State.AUTHENTICATING)

    def end_auth(self, failure: Error | None) -> None:
        """The flow ended: a live binding returns to where it was; startup or a reconnect
        takes over otherwise. ``failure`` is recorded."""
        with self.lock:
            before, self.before_auth = self.before_auth, None
            if failure is not None:
                self.failure = failure
            if self.state is State.AUTHENTICATING and before in (State.READY, State.DEGRADED):
                self.transition_locked(before)
            self._changed_locked()

    def refreshed(self, publish: Callable[[], object]) -> None:
        """A refresh pass succeeded: ``publish`` it, clear its failure, ``degraded`` → ``ready``."""
        with self.lock:
            if self.closing:
                return
            publish()
            if self.failure is not None and self.failure.op in ("refresh", "discover"):
                self.failure = None
            if self.state is State.DEGRADED:
                self.transition_locked(State.READY)

    def refresh_failed(self, recorded: Error, announce: Callable[[], object]) -> None:
        """A refresh pass failed for good: record it, ``ready`` → ``degraded``, ``announce``."""
        with self.lock:
            if self.closing:
                return
            self.failure = recorded
            if self.state is State.READY:
                self.transition_locked(State.DEGRADED)
            announce()

    def defer_refresh(self) -> bool:
        """A list changed: whether to refresh now (serving), else remember it for ``ready``."""
        with self.lock:
            serving = self.state in SERVING and not self.closing
            if not serving:
                self.refresh_when_ready = True
        return serving

    def wake_waiters(self) -> None:
        """Wake callers waiting for a connection (a cancel fired)."""
        with self.lock:
            self._changed_locked()

    def serving(
        self, op: str, deadline: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[Connection, Catalog]:
        """The live connection and the adopted catalog, or a classified refusal.

        While the binding is reconnecting, a call waits for the connection
        within its own deadline (never on a half-built connection).
        """
        handle = cancel.add_callback(self.wake_waiters) if cancel is not None else None
        try:
            while True:
                with self.lock:
                    step, value = self._next_locked(op, deadline, cancel)
                    if step is _Step.WAIT:
                        self.connected.wait(value)
                        continue
                if step is _Step.READY:
                    served: tuple[Connection, Catalog] = value
                    return served
                if step is _Step.REFUSE:
                    raise value
                value()  # REVIVE, outside the lock (the worker has its own)
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)

    def when_serving(
        self,
        op: str,
        deadline: float,
        cancel: CancelToken | None,
        done: Callable[[tuple[Connection, Catalog] | None, BaseException | None], object],
    ) -> None:
        """:meth:`serving` without blocking: ``done(served, None)`` or ``done(None, refusal)``.

        ``done`` runs once: at once on this thread when the answer is known
        now, else (the binding reconnecting) on the watcher thread when the
        connection, the state, ``cancel`` or ``deadline`` changes the answer.
        It runs with no lock held and must not block.
        """
        _Waiter(self, op, deadline, cancel, done).check()

    def _next_locked(
        self, op: str, deadline: float | None, cancel: CancelToken | None
    ) -> tuple[_Step, Any]:
        """What a call needs next (``lock`` held), one rule for :meth:`serving` and
        :meth:`when_serving`: READY (the connection and catalog), WAIT (seconds
        left), REVIVE (the attempt to start, outside the lock) or REFUSE (the error).
        """
        state, conn, failure = self.state, self.conn, self.failure
        if self.closing or state in (State.CLOSING, State.CLOSED):
            return _Step.REFUSE, self.refusal(op)
        if state in SERVING and conn is not None:
            return _Step.READY, (conn, self.catalogs.adopted)
        if state is State.FAILED and self.revive_at is not None and self.revive is not None:
            wait = self.revive_at - now()
            if wait > 0:
                return _Step.REFUSE, self._not_due(op, failure, wait)
            # This call starts the attempt; every call meanwhile (this one
            # included) waits for it as for any reconnect.
            self.revive_at = None
            self.revivals += 1
            self.transition_locked(State.RECONNECTING)
            return _Step.REVIVE, self.revive
        left = (deadline - now()) if deadline is not None else 0.0
        if state is State.RECONNECTING and left > 0:
            if cancel is not None and cancel.cancelled:
                return _Step.REFUSE, RequestCancelledError(
                    "the call was cancelled before it was sent", binding=self.binding, op=op
                )
            return _Step.WAIT, left
        if state is State.RECONNECTING and deadline is not None:
            return _Step.REFUSE, DeadlineExceededError(
                "the call's deadline passed while the binding was reconnecting",
                binding=self.binding,
                op=op,
            )
        if failure is not None:
            return _Step.REFUSE, error_for(
                failure.failure_class,
                failure.message,
                binding=self.binding,
                op=op,
                code=failure.code,
            )
        return _Step.REFUSE, error_for(
            FailureClass.TRANSPORT_CLOSED, f"the binding is {state}", binding=self.binding, op=op
        )

    def _changed_locked(self) -> None:
        """The answer to "can a call be sent" may have changed (``lock`` held)."""
        self.connected.notify_all()
        for waiter in self.waiters:
            # On the watcher: a waiter's ``done`` must not run under this lock.
            watcher.schedule(now(), waiter.check)

    def _not_due(self, op: str, failure: Error | None, wait: float) -> Error:
        """The refusal of a call on a failed binding whose next attempt is not due yet."""
        cause = failure.message if failure is not None else "the connection was lost"
        return error_for(
            failure.failure_class if failure is not None else FailureClass.TRANSPORT_CLOSED,
            f"the binding failed; its next reconnect attempt is due in {for_people(wait)}"
            f" (the first call after that starts it); the last attempt failed: {cause}",
            binding=self.binding,
            op=op,
            code=failure.code if failure is not None else None,
        )

    def adopted(self, op: str) -> Catalog:
        """The adopted catalog, for local checks (refuses only a closed binding)."""
        if self.closing:
            raise self.refusal(op)
        return self.catalogs.adopted

    def require(
        self,
        capability: str,
        op: str,
        deadline: float | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Refuse ``op`` (``unsupported_protocol``) unless the server advertises ``capability``."""
        _, adopted = self.serving(op, deadline, cancel)
        with self.lock:
            protocol = self.protocol
        caps = protocol.capabilities if protocol else adopted.capabilities
        if not getattr(caps, capability):
            raise ProtocolError(
                f"the server does not advertise {capability}",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self.binding,
                op=op,
            )

    def status(self) -> Status:
        """A snapshot of the binding's safe metadata, read in one step."""
        transport = self.definition.transport
        with self.lock:
            protocol = self.protocol
            kind = self.conn.kind if self.conn is not None else transport.kind
            failure = self.failure
            # One read of the store: adopted, candidate and stale families agree.
            adopted, candidate, stale = self.catalogs.snapshot()
            return Status(
                binding=self.binding,
                state=self.state,
                protocol_version=protocol.version if protocol else "",
                server=protocol.server if protocol else adopted.server,
                transport_kind=kind,
                redacted_origin=transport.redacted_origin,
                failure=Failure(failure.failure_class, failure.message, failure.code)
                if failure
                else None,
                last_change=self.last_change,
                catalog_generation=adopted.generation,
                catalog_digest=adopted.digest,
                candidate_generation=candidate.generation if candidate else 0,
                candidate_digest=candidate.digest if candidate else "",
                stale_families=stale,
                compat_profile=str(self.definition.profile),
                reconnect_attempt=self.reconnect_number,
                dropped_notifications=self.lane.dropped,
                extensions=protocol.extensions if protocol else (),
            )


class _Step(enum.Enum):
    READY = "ready"
    WAIT = "wait"
    REVIVE = "revive"
    REFUSE = "refuse"


class _Waiter:
    """One :meth:`BindingState.when_serving` call, waiting without a thread.

    Its :meth:`check` runs on the caller's thread first, then on the watcher
    (a state change, its deadline) or the canceller's thread; ``finished``
    (under the state's lock) lets exactly one of them call ``done``.
    """

    __slots__ = ("cancel", "deadline", "done", "finished", "handle", "op", "st", "timer")

    def __init__(
        self,
        st: BindingState,
        op: str,
        deadline: float,
        cancel: CancelToken | None,
        done: Callable[[tuple[Connection, Catalog] | None, BaseException | None], object],
    ) -> None:
        self.st = st
        self.op = op
        self.deadline = deadline
        self.cancel = cancel
        self.done = done
        self.finished = False
        self.timer: watcher.Timer | None = None
        self.handle: int | None = None

    def check(self) -> None:
        st = self.st
        while True:
            arm = False
            with st.lock:
                if self.finished:
                    return
                step, value = st._next_locked(self.op, self.deadline, self.cancel)
                if step is _Step.WAIT:
                    if self in st.waiters:
                        return  # armed already; a change or the deadline checks again
                    st.waiters.append(self)
                    arm = True
                elif step is not _Step.REVIVE:
                    self.finished = True
                    if self in st.waiters:
                        st.waiters.remove(self)
            if arm:
                self._arm()
                return
            if step is _Step.REVIVE:
                value()
                continue
            self._disarm()
            if step is _Step.READY:
                self.done(value, None)
            else:
                self.done(None, value)
            return

    def _arm(self) -> None:
        # Outside the lock: a token cancelled already runs its callback at once.
        self.timer = watcher.schedule(self.deadline, self.check)
        if self.cancel is not None:
            self.handle = self.cancel.add_callback(self._cancelled)
        with self.st.lock:
            finished = self.finished
        if finished:  # settled while arming
            self._disarm()

    def _cancelled(self) -> None:
        # On the canceller's thread: check on the watcher, never under its locks.
        watcher.schedule(now(), self.check)

    def _disarm(self) -> None:
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()
        handle, self.handle = self.handle, None
        if handle is not None and self.cancel is not None:
            self.cancel.remove_callback(handle)
