"""Discovery and refresh of a binding's catalog, and the TTL hints that mark it stale.

Threads:
    The refresh passes run on the :class:`Refresher`'s on-demand worker
    ``mcpclient-refresh-<binding>`` (``worker.py``): a trigger starts it if it
    is not running, and it exits when no signal is pending. Signals coalesce:
    a burst of N triggers during a pass yields at most one more pass. A TTL
    expiry runs on the process-wide deadline watcher and only marks families
    stale and triggers a pass. Discovery at connect and reconnect runs on the
    thread doing that work.

Locks:
    The worker's own lock guards the pending signal and the thread's state.
    Otherwise none of its own: the TTL timer and the time of the last TTL-driven
    refresh are kept under ``BindingState.lock``, as are the state and
    failure a pass changes; the catalogs under the store's own lock.

Shutdown:
    :meth:`CatalogRefresh.stop` cancels the TTL timer and stops the worker
    (its stop event interrupts a backoff sleep; a pass in flight ends with its
    own deadline, its requests failed when the connection closes);
    :meth:`CatalogRefresh.join` waits for it briefly.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from typing import Any

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.client.auth.recovery import AuthRecovery
from mcpclient._internal.client.calls.gate import Gate
from mcpclient._internal.client.catalog.discovery import discover
from mcpclient._internal.client.lifecycle.connection import Connection, translate_remote
from mcpclient._internal.client.lifecycle.worker import OnDemandWorker, budget_for
from mcpclient._internal.client.state import SERVING, BindingState
from mcpclient._internal.session.context import CallContext, startup_context
from mcpclient._internal.session.protocol import UNSUPPORTED_VERSION
from mcpclient._internal.session.rpc import AuthRejectedError, RemoteError
from mcpclient._internal.wire.interactions import list_ttl_ms
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog
from mcpclient.definition import RetryPolicy
from mcpclient.errors import CatalogError, Error, FailureClass, error_for
from mcpclient.events import CatalogRejected
from mcpclient.transports import StreamableHTTPTransport

__all__ = ["CatalogRefresh", "Refresher"]

_log = logging.getLogger(__name__)

_LIST_FAMILIES = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}
_TTL_FLOOR = 60.0
_random = random.SystemRandom()


class CatalogRefresh:
    """Fetches catalogs and keeps the adopted one fresh. Thread safety: any thread."""

    def __init__(self, state: BindingState, auth: AuthRecovery, slots: Gate) -> None:
        self._st = state
        self._auth = auth
        self._slots = slots
        self._ttl_timer: watcher.Timer | None = None
        self._last_ttl_refresh = -math.inf
        self._refresher = Refresher(
            state.binding, state.definition.refresh, self._refresh_pass, self._refresh_failed
        )

    def trigger(self) -> None:
        """Ask for a refresh pass (coalesced with any already pending)."""
        self._refresher.trigger()

    def stop(self) -> None:
        """Cancel the TTL timer and stop the worker (close; does not wait)."""
        with self._st.lock:
            timer, self._ttl_timer = self._ttl_timer, None
        if timer is not None:
            timer.cancel()
        self._refresher.stop()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the worker to exit."""
        self._refresher.join(timeout)

    def discover(
        self, conn: Connection, deadline: float, cancel: CancelToken | None, op: str
    ) -> Catalog:
        """Fetch a whole catalog over ``conn`` within ``deadline``; schedules its TTL."""
        st = self._st
        generation = st.catalogs.reserve()
        assert conn.protocol is not None
        ttls: dict[str, float] = {}

        def context(method: str) -> CallContext:
            # The first catalog is part of the connect: its class is the connect's.
            if op == "connect":
                return startup_context(method, deadline, cancel)
            return CallContext(op=method, deadline=deadline, cancel=cancel)

        def noted(method: str, result: Any) -> Any:
            ttl = list_ttl_ms(result)
            family = _LIST_FAMILIES.get(method)
            if family and isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0:
                ttls[family] = min(ttls.get(family, math.inf), ttl / 1000.0)
            return result

        def fetch(method: str, params: dict[str, Any]) -> Any:
            ctx = context(method)
            result = self._auth.authorized(
                lambda: conn.request(method, params, ctx),
                deadline=deadline,
                cancel=cancel,
                op=method,
            )
            return noted(method, result)

        def start(method: str, params: dict[str, Any]) -> Callable[[], Any]:
            # Sent now, read later: the families' first pages share one round trip.
            protocol = conn.protocol
            assert protocol is not None
            pending = conn.session.submit(method, protocol.params(params), context(method))

            def page() -> Any:
                pending.wait_done(None)  # the watcher completes it by the deadline
                try:
                    return noted(method, pending.outcome())
                except RemoteError as exc:
                    if exc.code != UNSUPPORTED_VERSION:
                        raise translate_remote(exc, st.binding, method) from None
                except AuthRejectedError:
                    pass
                # A refused version or an authorization: the blocking path
                # knows both (a list request is safe to send again).
                return fetch(method, params)

            return page

        catalog = discover(
            fetch,
            binding=st.binding,
            generation=generation,
            protocol=conn.protocol,
            limits=st.definition.limits,
            profile=st.definition.profile,
            http=isinstance(st.definition.transport, StreamableHTTPTransport),
            start=start,
        )
        self._schedule_ttl(ttls)
        return catalog

    def _schedule_ttl(self, ttls: dict[str, float]) -> None:
        """Mark families stale when their TTL hint expires (a hint, never a poll loop)."""
        if not ttls:
            return
        st = self._st
        expiry = min(ttls.values())
        # No sooner than 60 s (plus jitter) after the previous TTL-driven refresh.
        due = max(now() + expiry, self._last_ttl_refresh + _TTL_FLOOR + _random.uniform(0, 6))
        families = sorted(f for f, ttl in ttls.items() if ttl <= expiry + 1.0)

        def expire() -> None:
            with st.lock:
                if st.closing:
                    return
                self._ttl_timer = None
                self._last_ttl_refresh = now()
            for family in families:
                st.catalogs.mark_stale(family)
            self._refresher.trigger()

        with st.lock:
            if st.closing:
                return
            if self._ttl_timer is not None:
                self._ttl_timer.cancel()
            self._ttl_timer = watcher.schedule(due, expire)

    def _refresh_pass(self) -> None:
        st = self._st
        with st.lock:
            state, conn = st.state, st.conn
        if conn is None:  # closed (close() takes the connection away first)
            raise st.refusal("refresh")
        if state not in SERVING:
            raise error_for(
                FailureClass.TRANSPORT_CLOSED,
                f"the binding is {state}",
                binding=st.binding,
                op="refresh",
            )
        deadline = now() + st.definition.timeouts.startup
        with self._slots.slot(deadline, None, "refresh"):
            catalog = self.discover(conn, deadline, None, op="refresh")
        st.refreshed(lambda: st.catalogs.publish(catalog))

    def _refresh_failed(self, exc: BaseException, retrying: bool) -> None:
        st = self._st
        if isinstance(exc, Error):
            error = exc
        else:
            _log.error("catalog refresh of %s failed unexpectedly", st.binding, exc_info=exc)
            error = CatalogError(
                f"the catalog refresh failed: {exc!r}",
                failure_class=FailureClass.CATALOG_STALE,
                binding=st.binding,
                op="refresh",
            )
        # Recorded as a refresh failure, so the next successful refresh clears it.
        recorded = error_for(
            error.failure_class, error.message, binding=st.binding, op="refresh", code=error.code
        )
        st.refresh_failed(
            recorded,
            lambda: st.emit(
                CatalogRejected(
                    binding=st.binding,
                    failure_class=error.failure_class,
                    message=error.message,
                    adopted=st.catalogs.adopted.generation,
                    retrying=retrying,
                    at=time.time(),
                )
            ),
        )


class Refresher(OnDemandWorker):
    """Runs ``run_pass`` once per (coalesced) signal, retrying failures.

    ``run_pass()`` raises on failure; ``on_failure(exc, retrying)`` is told
    about each failure, ``retrying`` False on the last one of a budget.
    """

    def __init__(
        self,
        binding: str,
        policy: RetryPolicy,
        run_pass: Callable[[], None],
        on_failure: Callable[[BaseException, bool], None],
    ) -> None:
        super().__init__("refresh", binding)
        self._policy = policy
        self._run_pass = run_pass
        self._on_failure = on_failure

    def trigger(self) -> None:
        """Ask for a refresh pass (coalesced with any already pending)."""
        self._signal()

    def _work(self) -> None:
        self._retry_loop()

    def _retry_loop(self) -> None:
        budget = budget_for(self._policy)
        delay = budget.next_delay(now())
        while delay is not None:
            if delay > 0 and self._stop.wait(delay):
                return
            if self._stop.is_set():
                return
            try:
                self._run_pass()
            except Exception as exc:
                if self._stop.is_set():
                    return
                delay = budget.next_delay(now())
                self._on_failure(exc, delay is not None)
                continue
            return
