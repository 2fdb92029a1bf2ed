"""A lazy host's servers: dormant with their last known catalog, started by a call, stopped idle.

``Host(connect="lazy")`` starts at :meth:`~mcpclient.Host.connect` only the
servers it knows nothing about (no stored catalog) and the required ones.
Every other server is *dormant*: its tools come from its stored catalog
(``_internal/host/store.py``), good for a search or an export, never for a
call. A call routed to a dormant server *wakes* it (one start at a time per
server; every caller waits for that start within its own deadline), then is
checked against the live catalog: the stored tool must still be there, and
the same (name, title, description, input schema), or the call fails with a
classified error and the host's catalog now shows the live tools. A search
that returns a dormant server's tools wakes it without waiting. With
``idle_stop`` a server with no host call in flight for that long is closed
and goes back to dormant, its catalog stored.

Threads:
    Up to :data:`~mcpclient._internal.host.parallel.MAX_THREADS`
    ``mcpclient-wake-host`` threads exist while a start on demand or an idle
    stop is pending (an :class:`~mcpclient._core.threads.OnDemandThreads` with
    no idle time): each runs one start or one close, then takes the next job
    or exits. Idle timers run on the process-wide deadline watcher, which the
    lazy host holds while it is open; they only queue a job.

Locks:
    The host's lock (``Seats.lock``) guards everything here: the dormant
    catalogs, the starts in flight, the calls in flight per server and the
    idle timers. It is never held across I/O, a wait or user code; waking
    callbacks run after it is released.

Shutdown:
    :meth:`OnDemand.shutdown` (the host closing) cancels every start in
    flight and every idle timer and stops the pool; a start that still ends
    with a client closes that client itself. :meth:`OnDemand.join` waits for
    the threads, bounded.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mcpclient._core import watcher
from mcpclient._core.deadline import for_people, now
from mcpclient._core.limits import bound
from mcpclient._core.threads import OnDemandThreads
from mcpclient._internal.host.aggregate import NO_DORMANT, Dormant
from mcpclient._internal.host.parallel import MAX_THREADS
from mcpclient._internal.host.startup import Start, start_one
from mcpclient._internal.host.store import CatalogStore, identity_of, tool_from_record, tool_record
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog, ServerCapabilities, ToolSpec
from mcpclient.errors import (
    DeadlineExceededError,
    Error,
    FailureClass,
    RequestCancelledError,
    ShutdownError,
    ToolUnavailableError,
    error_for,
)

if TYPE_CHECKING:
    from mcpclient.client import Client

__all__ = ["OnDemand", "Seats", "Wake", "tool_check"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class Seats(Protocol):
    """What the host lends: its lock and its table of connected clients."""

    lock: threading.Lock

    @property
    def closing(self) -> bool:
        """Whether the host is closing (lock held)."""
        ...

    def seated(self, name: str) -> Client | None:
        """The server's connected client, or None (lock held)."""
        ...

    def seat(self, name: str, client: Client | None, error: Error | None) -> None:
        """Record the server's client (None: not connected) and its start failure (lock held)."""
        ...


class Wake:
    """One start on demand: the start, and who waits for its end."""

    __slots__ = ("done", "error", "start", "waiters")

    def __init__(self, start: Start) -> None:
        self.start = start
        self.done = False
        self.error: Error | None = None
        #: Called once the start has ended (lock not held); cleared then.
        self.waiters: list[Callable[[], None]] = []


class OnDemand:
    """The dormant servers of a lazy host, their starts on demand and their idle stops."""

    def __init__(
        self,
        seats: Seats,
        starts: Sequence[Start],
        store: CatalogStore,
        idle_stop: float | None,
    ) -> None:
        self._seats = seats
        self._starts = {start.name: start for start in starts}
        self._store = store
        self._idle_stop = idle_stop
        #: The stored catalogs of the dormant servers, swapped whole (the aggregate's input).
        self.stored: Dormant = NO_DORMANT
        self._dormant: dict[str, Catalog] = {}
        self._waking: dict[str, Wake] = {}
        self._busy: collections.Counter[str] = collections.Counter()
        self._timers: dict[str, tuple[int, watcher.Timer]] = {}
        self._stamps = itertools.count(1)
        self._jobs: collections.deque[Callable[[], None]] = collections.deque()
        self._pool: OnDemandThreads[Callable[[], None]] = OnDemandThreads(
            "wake",
            "host",
            take=lambda: self._jobs.popleft() if self._jobs else None,
            serve=self._serve,
            idle=0.0,
            limit=MAX_THREADS,
            lock=seats.lock,
        )
        self._holds_watcher = False

    # -- connect and close ------------------------------------------------

    def load(self, required: Collection[str]) -> list[str]:
        """Read the stored catalogs (host connect, lock not held); the servers to start now.

        Those are the ones without a stored catalog and the ``required``
        ones; every other server stays dormant until a call needs it.
        """
        loaded: dict[str, Catalog] = {}
        for name, start in self._starts.items():
            if name not in required:
                catalog = self._load(start)
                if catalog is not None:
                    loaded[name] = catalog
        watcher.acquire()  # idle timers and submit deadlines need the watcher running
        with self._seats.lock:
            self._holds_watcher = True
            self._dormant = loaded
            self._publish_locked()
        return [name for name in self._starts if name not in loaded]

    def _load(self, start: Start) -> Catalog | None:
        stored = self._store.load(identity_of(start.definition))
        if stored is None:
            return None
        tools = [tool_from_record(record) for record in stored.tools]
        try:
            return Catalog(
                binding=start.name,
                digest=stored.digest,
                capabilities=ServerCapabilities(tools=True),
                tools=tuple(tool for tool in tools if tool is not None),
            )
        except (TypeError, ValueError) as exc:  # two records of one name, say
            _log.warning("ignoring the stored catalog of server %s: %s", start.name, exc)
            return None

    def connected(self, name: str, client: Client) -> None:
        """A server started by the host's connect (lock not held): store it, arm its idle stop."""
        self.save(name, client)
        with self._seats.lock:
            self._arm_locked(name)

    def save(self, name: str, client: Client) -> None:
        """Store the server's adopted catalog (I/O: lock not held); a failure is logged."""
        catalog = client.catalog()
        if catalog.generation == 0:
            return
        records = [tool_record(tool) for tool in catalog.tools if tool.model_visible]
        self._store.save(identity_of(self._starts[name].definition), catalog.digest, records)

    def shutdown(self) -> None:
        """The host is closing (lock not held): cancel the starts and timers, stop the pool."""
        with self._seats.lock:
            wakes = list(self._waking.values())
            timers = [timer for _, timer in self._timers.values()]
            self._timers.clear()
            self._pool.stop()
            holds, self._holds_watcher = self._holds_watcher, False
        for timer in timers:
            timer.cancel()
        for wake in wakes:
            wake.start.token.cancel("the host is closing")
        if holds:
            watcher.release()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the wake threads to end."""
        self._pool.join(timeout)

    # -- what the host reads ----------------------------------------------

    def starting(self, name: str) -> bool:
        """Whether the server is being started on demand now."""
        return name in self._waking

    # -- calls ------------------------------------------------------------

    def acquire(self, name: str, deadline: float | None, cancel: CancelToken | None) -> Client:
        """The server's client, started first if dormant; counted in flight until :meth:`release`.

        Waits for the start within ``deadline`` (None: the start's own
        startup budget) and ``cancel``.

        Raises:
            Error: the start failed (its class, chained), the deadline
                passed, the call was cancelled, or the host is closing.
        """
        while True:
            got = self.try_acquire(name)
            if not isinstance(got, Wake):
                return got
            self._wait(got, name, deadline, cancel)

    def try_acquire(self, name: str) -> Client | Wake:
        """The server's client (counted in flight), or the start to wait for (never blocks).

        Raises:
            ShutdownError: the host is closing.
        """
        with self._seats.lock:
            client = self._seats.seated(name)
            if client is not None:
                self._busy[name] += 1
                timer = self._timers.pop(name, None)
                if timer is not None:
                    timer[1].cancel()
                return client
            return self._wake_locked(name)

    def release(self, name: str) -> None:
        """A host call on the server ended: arm its idle stop when none is left in flight."""
        with self._seats.lock:
            self._busy[name] -= 1
            if self._busy[name] <= 0:
                del self._busy[name]
                self._arm_locked(name)

    def prewake(self, names: Sequence[str]) -> None:
        """Start the dormant servers among ``names`` without waiting (a search returned them)."""
        with self._seats.lock:
            for name in names:
                if name in self._dormant and self._seats.seated(name) is None:
                    self._wake_locked(name)

    def when_woken(self, wake: Wake, callback: Callable[[], None]) -> None:
        """Run ``callback`` once ``wake`` has ended: now if it has (lock not held)."""
        with self._seats.lock:
            if not wake.done:
                wake.waiters.append(callback)
                return
        callback()

    def failure(self, wake: Wake, name: str, op: str) -> Error:
        """A fresh error for one caller of a start that failed (each raise owns its traceback)."""
        cause = wake.error
        if cause is None:
            return ShutdownError("the host is closed", binding=name, op=op)
        error = error_for(
            cause.failure_class,
            f"server {bound(name, 64)!r} could not be started: {cause.message}",
            binding=cause.binding,
            op=op,
            code=cause.code,
        )
        error.__cause__ = cause
        return error

    def submit(
        self,
        name: str,
        deadline: float | None,
        cancel: CancelToken | None,
        submit: Callable[[Client], concurrent.futures.Future[T]],
    ) -> concurrent.futures.Future[T]:
        """``submit(client)`` on the server's client, never blocking; counted in flight.

        A connected server's call is submitted at once (its local refusals
        raise here). A dormant one's future is returned at once: it is
        submitted when the start ends, or fails with the start's error, the
        deadline passing first, or ``cancel``.
        """
        got = self.try_acquire(name)
        if isinstance(got, Wake):
            return _Pending(self, name, deadline, cancel, submit).wait(got)
        return self.submitted(name, got, submit)

    def submitted(
        self, name: str, client: Client, submit: Callable[[Client], concurrent.futures.Future[T]]
    ) -> concurrent.futures.Future[T]:
        """``submit(client)`` for an acquired client; released when its future ends."""
        try:
            future = submit(client)
        except BaseException:
            self.release(name)
            raise
        future.add_done_callback(lambda _: self.release(name))
        return future

    def _wait(
        self, wake: Wake, name: str, deadline: float | None, cancel: CancelToken | None
    ) -> None:
        ended = threading.Event()
        handle = cancel.add_callback(ended.set) if cancel is not None else None
        try:
            self.when_woken(wake, ended.set)
            ended.wait(None if deadline is None else max(0.0, deadline - now()))
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        if wake.done:
            if wake.error is not None:
                raise self.failure(wake, name, "call_tool")
            return
        if cancel is not None and cancel.cancelled:
            raise RequestCancelledError(
                f"cancelled while server {bound(name, 64)!r} was starting", binding=name
            )
        raise DeadlineExceededError(
            f"server {bound(name, 64)!r} did not start within the call's deadline",
            failure_class=FailureClass.STARTUP_TIMEOUT,
            binding=name,
            op="call_tool",
        )

    # -- starts and stops (lock held unless said) ---------------------------

    def _wake_locked(self, name: str) -> Wake:
        if self._seats.closing or self._pool.closed:
            raise ShutdownError("the host is closed", binding=name, op="call_tool")
        wake = self._waking.get(name)
        if wake is None:
            plan = self._starts[name]
            wake = Wake(Start(plan.name, plan.definition, plan.handlers))
            self._waking[name] = wake
            self._jobs.append(lambda: self._run_start(wake))
            self._pool.wake()
            if not self._pool.active:  # no thread could be had: fail the start, never hang
                self._jobs.clear()
                del self._waking[name]
                raise ShutdownError(
                    "no thread to start the server on demand", binding=name, op="call_tool"
                )
        return wake

    def _run_start(self, wake: Wake) -> None:
        """A wake thread: start the server, seat it (or record its failure), tell the waiters."""
        start = wake.start
        start_one(start, None, None)
        client, stray = start.client, None
        with self._seats.lock:
            del self._waking[start.name]
            if client is not None and not self._seats.closing:
                self._seats.seat(start.name, client, None)
                self._dormant.pop(start.name, None)
                self._publish_locked()
                self._arm_locked(start.name)
            elif client is not None:
                stray = client
            else:  # the stored catalog keeps routing: the next call tries again
                self._seats.seat(start.name, None, start.error)
            wake.error = start.error
            wake.done = True
            waiters, wake.waiters = wake.waiters, []
        if stray is not None:
            stray.close()
        elif client is not None:
            self.save(start.name, client)
        for waiter in waiters:
            try:
                waiter()
            except Exception:  # a waiter records its own outcome; this one did not
                _log.exception("a waiter of server %s's start failed", start.name)

    def _arm_locked(self, name: str) -> None:
        if self._idle_stop is None or self._seats.closing or self._busy.get(name):
            return
        old = self._timers.pop(name, None)
        if old is not None:
            old[1].cancel()
        stamp = next(self._stamps)
        timer = watcher.schedule(now() + self._idle_stop, lambda: self._idle_due(name, stamp))
        self._timers[name] = (stamp, timer)

    def _idle_due(self, name: str, stamp: int) -> None:
        """The watcher: the server had no host call for ``idle_stop``: make it dormant."""
        with self._seats.lock:
            armed = self._timers.get(name)
            if armed is None or armed[0] != stamp:
                return  # a call came (or went) since this timer was set
            del self._timers[name]
            client = self._seats.seated(name)
            if client is None or self._busy.get(name) or self._seats.closing:
                return
            self._seats.seat(name, None, None)
            self._dormant[name] = client.catalog()
            self._publish_locked()
            self._jobs.append(lambda: self._stop(name, client))
            self._pool.wake()
        _log.info("server %s idle for %s: stopping it", name, for_people(self._idle_stop or 0.0))

    def _stop(self, name: str, client: Client) -> None:
        """A wake thread: store the idle server's catalog and close it."""
        self.save(name, client)
        client.close()

    def _publish_locked(self) -> None:
        self.stored = tuple(
            (name, self._dormant[name]) for name in self._starts if name in self._dormant
        )

    @staticmethod
    def _serve(jobs: Iterator[Callable[[], None]]) -> None:
        for job in jobs:
            try:
                job()
            except Exception:  # each job records its own outcome; this one did not
                _log.exception("a lazy host job failed unexpectedly")


class _Pending:
    """A submitted call waiting for its dormant server's start (no thread waits).

    Exactly one of three ends settles it, whichever comes first: the start
    (then the call is submitted, its future chained to this one), the
    deadline (a watcher timer) or the cancel token. A lock decides the race.
    """

    def __init__(
        self,
        lazy: OnDemand,
        name: str,
        deadline: float | None,
        cancel: CancelToken | None,
        submit: Callable[[Client], concurrent.futures.Future[Any]],
    ) -> None:
        self._lazy = lazy
        self._name = name
        self._submit = submit
        self._lock = threading.Lock()
        self._settled = False
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.future.set_running_or_notify_cancel()
        self._timer = None if deadline is None else watcher.schedule(deadline, self._expired)
        self._cancel = cancel
        self._handle = None if cancel is None else cancel.add_callback(self._cancelled)

    def wait(self, wake: Wake) -> concurrent.futures.Future[Any]:
        self._lazy.when_woken(wake, lambda: self._woken(wake))
        return self.future

    def _settle(self) -> bool:
        with self._lock:
            first, self._settled = not self._settled, True
        if first:
            if self._timer is not None:
                self._timer.cancel()
            if self._handle is not None and self._cancel is not None:
                self._cancel.remove_callback(self._handle)
        return first

    def _expired(self) -> None:
        if self._settle():
            self.future.set_exception(
                DeadlineExceededError(
                    f"server {bound(self._name, 64)!r} did not start within the call's deadline",
                    failure_class=FailureClass.STARTUP_TIMEOUT,
                    binding=self._name,
                    op="submit_tool_call",
                )
            )

    def _cancelled(self) -> None:
        if self._settle():
            self.future.set_exception(
                RequestCancelledError(
                    f"cancelled while server {bound(self._name, 64)!r} was starting",
                    binding=self._name,
                    op="submit_tool_call",
                )
            )

    def _woken(self, wake: Wake) -> None:
        """The start ended (a wake thread, or at once): submit the call, or fail."""
        if wake.error is not None:
            if self._settle():
                self.future.set_exception(self._lazy.failure(wake, self._name, "submit_tool_call"))
            return
        with self._lock:
            if self._settled:
                return
        try:
            got = self._lazy.try_acquire(self._name)
        except Error as exc:
            if self._settle():
                self.future.set_exception(exc)
            return
        if isinstance(got, Wake):  # stopped idle again before this ran: wait for the next start
            self.wait(got)
            return
        if not self._settle():
            self._lazy.release(self._name)
            return
        try:
            inner = self._lazy.submitted(self._name, got, self._submit)
        except BaseException as exc:  # a local refusal: the caller sees it on the future
            self.future.set_exception(exc)
            return
        inner.add_done_callback(self._chain)

    def _chain(self, inner: concurrent.futures.Future[Any]) -> None:
        if inner.cancelled():
            self.future.set_exception(
                RequestCancelledError("the call was cancelled", binding=self._name)
            )
            return
        error = inner.exception()
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(inner.result())


def tool_check(stored: Catalog, live: Catalog, raw_name: str, server: str) -> Error | None:
    """Whether a call routed by ``stored`` may go to ``live``: None, or the error to raise.

    Equal digests say the whole catalog is the same; otherwise the one tool
    must still be there with the name, title, description and input schema
    the stored catalog (what the model saw) gave it.
    """
    if stored.digest and stored.digest == live.digest:
        return None
    before = stored.tool_by_raw_name(raw_name)
    after = live.tool_by_raw_name(raw_name)
    label = f"tool {bound(raw_name, 64)!r} of server {bound(server, 64)!r}"
    if after is None or not after.model_visible:
        return ToolUnavailableError(
            f"{label} is gone since its catalog was stored: the host's catalog now has the"
            " live tools",
            binding=server,
            op="call_tool",
        )
    if before is None or not _same(before, after):
        return ToolUnavailableError(
            f"{label} changed since its catalog was stored (what the model saw): look it up"
            " again in the host's catalog",
            failure_class=FailureClass.TOOL_SCHEMA_CHANGED,
            binding=server,
            op="call_tool",
        )
    return None


def _same(before: ToolSpec, after: ToolSpec) -> bool:
    return (before.title, before.description, before.input_schema) == (
        after.title,
        after.description,
        after.input_schema,
    )
