"""Keepalive: a liveness probe on an idle connection, and giving it up after failed ones.

One :class:`KeepaliveWatch` per live connection (``Definition.keepalive``;
issue 32 item 2). Every ``interval`` it looks at the session's idle clock
(:meth:`RequestTable.idle_since
<mcpclient._internal.session.request_table.RequestTable.idle_since>`: when a
request other than a probe last went out or was answered; never while one
is in flight). Idle that long, it sends ``ping`` (the spec's liveness
request up to 2025-11-25,
https://modelcontextprotocol.io/specification/2025-06-18/basic/utilities/ping;
the 2026-07-28 era removed it, so there the probe is ``server/discover``, as
``Client.ping`` does) without waiting for it. A probe not answered within
``timeout`` (or failed by the transport) is a failure; any answer, even a
JSON-RPC error, shows the connection alive and resets the count. At
``failures`` failures in a row
the connection is declared lost (``RpcSession.lose``), which starts the
binding's usual reconnect path.

Threads:
    None of its own: the ticks run on the process-wide deadline watcher
    (``mcpclient._core.watcher``), and a ping's outcome on whichever thread
    completes it (the session's reader, or the watcher at its deadline).
    Both only read a clock, send one request, post an event, or lose the
    session; nothing blocks.

Locks:
    ``_lock`` guards the timer, the stopped flag and the failure count; no
    call out (send, emit, lose) is made under it.

Shutdown:
    :meth:`stop` cancels the pending tick; a ping then in flight is failed
    by the session's own close or loss, and its outcome is ignored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._core.limits import clean_text
from mcpclient._internal.session.context import CallContext
from mcpclient.definition import Keepalive
from mcpclient.errors import ConnectionLostError, DeadlineExceededError, Error
from mcpclient.events import Event, KeepaliveFailed, KeepaliveLost, KeepaliveRecovered

__all__ = ["KeepaliveWatch"]


class _Session(Protocol):
    """What the watch needs of an ``RpcSession``."""

    @property
    def failure(self) -> Error | None: ...

    def idle_since(self) -> float | None: ...

    def submit(
        self, method: str, params: dict[str, Any] | None, ctx: CallContext
    ) -> Future[Any]: ...

    def lose(self, exc: Error) -> None: ...


class KeepaliveWatch:
    """Pings one idle connection; loses it after ``failures`` failed pings.

    Thread safety: any thread.
    """

    def __init__(
        self,
        session: _Session,
        params: Callable[[], dict[str, Any] | None],
        keepalive: Keepalive,
        *,
        method: str = "ping",
        binding: str,
        emit: Callable[[Event], object],
        clock: Callable[[], float] = now,
        schedule: Callable[[float, Callable[[], None]], watcher.Timer] = watcher.schedule,
        wall: Callable[[], float] | None = None,
    ) -> None:
        import time  # noqa: PLC0415 - only for the default wall clock

        self._session = session
        self._params = params  # the era's ping params (the modern _meta envelope)
        self._keepalive = keepalive
        self._method = method  # "ping", or "server/discover" in the 2026-07-28 era
        self._binding = binding
        self._emit = emit
        self._clock = clock
        self._schedule = schedule
        self._wall = wall or time.time
        self._lock = threading.Lock()
        self._timer: watcher.Timer | None = None
        self._stopped = False
        self._started = False
        #: Consecutive failed pings.
        self.failures = 0

    def start(self) -> None:
        """Arm the first tick, ``interval`` from now (no-op once stopped or started)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        self._arm(self._clock() + self._keepalive.interval)

    def stop(self) -> None:
        """Cancel the pending tick for good; an outcome that arrives later is ignored."""
        with self._lock:
            self._stopped = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _arm(self, at: float) -> None:
        timer = self._schedule(at, self._tick)
        with self._lock:
            if not self._stopped:
                self._timer = timer
                return
        timer.cancel()

    def _tick(self) -> None:
        """The watcher's callback: ping if idle for ``interval``, else look again later."""
        with self._lock:
            if self._stopped:
                return
        session = self._session
        if session.failure is not None:
            return  # lost or closing: the lifecycle stops the watch
        interval = self._keepalive.interval
        current = self._clock()
        idle = session.idle_since()
        if idle is None:  # a call in flight shows the connection in use
            self._arm(current + interval)
            return
        if current < idle + interval:
            self._arm(idle + interval)
            return
        # Cancelled on the wire at its deadline like any request (over modern
        # HTTP that aborts the POST, so an unanswered ping holds no connection).
        ctx = CallContext(op="ping", deadline=current + self._keepalive.ping_timeout)
        future = session.submit(self._method, self._params(), ctx)
        future.add_done_callback(lambda f: self._outcome(f, current + interval))

    def _outcome(self, future: Future[Any], next_at: float) -> None:
        """A ping ended (reader or watcher thread): count it, maybe lose the connection."""
        exc = future.exception() if not future.cancelled() else None
        if self._session.failure is not None:
            return  # the connection went (or closed) anyway: nothing to count
        # Only no answer is a failure: any answer, even an error or an HTTP
        # error status, shows the server there.
        failed = isinstance(exc, DeadlineExceededError | ConnectionLostError)
        event: Event | None = None
        with self._lock:
            if self._stopped:
                return
            if not failed:
                if self.failures:
                    event = KeepaliveRecovered(
                        binding=self._binding, failures=self.failures, at=self._wall()
                    )
                self.failures = 0
            else:
                self.failures += 1
            failures = self.failures
        if not failed:
            if event is not None:
                self._emit(event)
            self._arm(next_at)
            return
        problem = clean_text(exc.message if isinstance(exc, Error) else repr(exc), 500)
        self._emit(
            KeepaliveFailed(
                binding=self._binding, failures=failures, problem=problem, at=self._wall()
            )
        )
        if failures < self._keepalive.failures:
            self._arm(next_at)
            return
        self.stop()
        self._emit(KeepaliveLost(binding=self._binding, failures=failures, at=self._wall()))
        self._session.lose(
            ConnectionLostError(
                f"{failures} keepalive pings in a row went unanswered within"
                f" {self._keepalive.ping_timeout:g} s (last: {problem[:200]}); the connection"
                " is treated as lost",
                binding=self._binding,
                op="ping",
            )
        )
