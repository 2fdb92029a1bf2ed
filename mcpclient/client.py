"""The client: one binding to one MCP server, safe to use from any thread.

Threads:
    Per stdio binding: the session's reader (which also drains the child's
    stderr), the writer while frames wait for pipe space, and the event lane
    (``mcpclient-dispatch-<binding>``) once there is something to deliver,
    plus the process-wide deadline watcher. Callers block only in their own
    call, never longer than its deadline (a blocked caller ends its own wait).

Locks:
    ``_lock`` guards the lifecycle state, the connection, the adopted and
    candidate catalogs, the generation counter, the stale families and the
    recorded failure. It is never held across I/O, a future's completion or
    user code; events are posted to the lane under it (a non-blocking append)
    so they are delivered in commit order.

Shutdown:
    :meth:`Client.close` refuses new calls, fails calls in flight at once
    (``shutdown``; a ``tools/call`` already sent is ``indeterminate``), stops
    the server within its timeout, and stops the lane without waiting on a
    stuck handler.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from mcpclient._internal.client import registry, submission
from mcpclient._internal.client.authflow import MAX_ROUNDS, AuthFlows
from mcpclient._internal.client.catalog_store import CatalogStore
from mcpclient._internal.client.connection import Connection, Hooks, open_connection
from mcpclient._internal.client.discovery import discover
from mcpclient._internal.client.gate import Gate, enter_pair, leave_pair
from mcpclient._internal.client.interactions import Interactions, current_depth
from mcpclient._internal.client.mrtr import exchange
from mcpclient._internal.client.notifications import log_delivery, safe_uri
from mcpclient._internal.client.options import options_of
from mcpclient._internal.client.progress import progress_adapter
from mcpclient._internal.client.prompts import check_prompt_arguments
from mcpclient._internal.client.reconnect import Reconnector
from mcpclient._internal.client.refresh import Refresher
from mcpclient._internal.client.subscriptions import ACKNOWLEDGED, Subscriptions
from mcpclient._internal.client.tools import (
    PreparedCall,
    check_structured,
    prepare_tool_call,
)
from mcpclient._internal.convert import ConversionError, to_prompt, to_resource, to_tool_result
from mcpclient._internal.deadline import now
from mcpclient._internal.limits import bound, clean_text
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session import watcher
from mcpclient._internal.session.headers import header_annotations
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.session.rpc import AuthRejectedError, ResendableError
from mcpclient.calls import CallOpts, CancelToken
from mcpclient.catalog import (
    Catalog,
    Completion,
    PromptRef,
    ResourceTemplateRef,
    ServerIdentity,
)
from mcpclient.content import Prompt, Resource, ToolResult
from mcpclient.definition import Definition
from mcpclient.errors import (
    AuthError,
    CatalogError,
    ConfigError,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    InvalidArgumentsError,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
    error_for,
)
from mcpclient.events import (
    CatalogRejected,
    ConnectionLost,
    ConnectionRestored,
    Event,
    ResourceUpdated,
    StateChanged,
)
from mcpclient.handlers import Handlers, Progress
from mcpclient.status import TRANSITIONS, Failure, State, Status
from mcpclient.transports import StreamableHTTPTransport

__all__ = ["Client", "connect"]

_log = logging.getLogger(__name__)

_DEFAULT_CLOSE_TIMEOUT = 5.0
_FAMILIES = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
_LIST_FAMILIES = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}
# AUTHENTICATING serves only while a flow runs on a live connection (calls
# rejected meanwhile join the flow); during startup there is no connection yet.
_SERVING = (State.READY, State.DEGRADED, State.AUTHENTICATING)
_TTL_FLOOR = 60.0
_T = TypeVar("_T")
_NO_OPTS = CallOpts()  # the defaults, built once (values are immutable)
_NOTHING = contextlib.nullcontext()  # reusable: enters and exits without effect
_MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
_MRTR_KEYS = frozenset({"inputResponses", "requestState"})
_random = random.SystemRandom()


def _drift(first: ServerIdentity | None, now_: ServerIdentity) -> str:
    """Bounded text naming how the server's identity changed ("" when it did not)."""
    if first is None or first == now_:
        return ""
    changes = [
        f"{field} {getattr(first, field)!r} -> {getattr(now_, field)!r}"
        for field in ("name", "version", "title")
        if getattr(first, field) != getattr(now_, field)
    ]
    return clean_text("server " + ", ".join(changes), 512)


def connect(
    definition: Definition,
    handlers: Handlers | None = None,
    *,
    timeout: float | None = None,
    cancel: CancelToken | None = None,
) -> Client:
    """Start a binding: validate, start the server, negotiate, discover, adopt.

    Everything happens within ``definition.timeouts.startup`` (or the shorter
    ``timeout``) and can be cancelled from another thread with ``cancel``. On
    failure everything started is torn down.

    Example:
        >>> with mcpclient.connect(defn) as client:   # doctest: +SKIP
        ...     print(client.call_tool("echo", {"message": "hi"}).text)

    Raises:
        ConfigError: the definition or handlers are invalid.
        DeadlineExceededError: ``startup_timeout``.
        RequestCancelledError: ``cancel`` fired.
        Error: any other classified startup failure.
    """
    if not isinstance(definition, Definition):
        raise ConfigError("connect() needs a Definition", op="connect")
    handlers = Handlers() if handlers is None else handlers
    if not isinstance(handlers, Handlers):
        raise ConfigError("connect() handlers must be a Handlers value", op="connect")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise ConfigError("connect() timeout must be a positive number of seconds", op="connect")
    definition.validate()
    caps = definition.capabilities
    for capability, handler in (
        ("elicitation", handlers.elicitation),
        ("sampling", handlers.sampling),
        ("roots", handlers.roots),
    ):
        if getattr(caps, capability) and handler is None:
            raise ConfigError(
                f"Definition.capabilities.{capability} is requested but Handlers.{capability}"
                " is not installed",
                binding=definition.name,
                op="connect",
            )
    budget = (
        definition.timeouts.startup
        if timeout is None
        else min(timeout, definition.timeouts.startup)
    )
    client = Client(definition, handlers, _token=_CONNECT)
    client._start(now() + budget, cancel, budget)
    return client


_CONNECT = object()


class Client:
    """A binding to one MCP server. Create it with :func:`connect`.

    Thread safety: every method may be called from any thread at any time.
    Every call ends by its deadline with a result or a classified
    :class:`~mcpclient.Error`; nothing outlives :meth:`close`.
    """

    def __init__(
        self, definition: Definition, handlers: Handlers, *, _token: object = None
    ) -> None:
        if _token is not _CONNECT:
            raise TypeError("create a Client with mcpclient.connect()")
        self._definition = definition
        self._handlers = handlers
        self._binding = str(definition.name)
        self._lock = threading.Lock()
        self._state = State.CONFIGURED
        self._last_change = time.time()
        self._conn: Connection | None = None
        self._protocol: Protocol | None = None
        self._failure: Error | None = None
        self._subscriptions = Subscriptions(self._binding, self._listen_ended)
        self._refresh_when_ready = False
        self._ttl_timer: watcher.Timer | None = None
        self._last_ttl_refresh = -math.inf
        self._closed = threading.Event()
        self._closing = False
        self._lane = EventLane(self._binding)
        self._catalogs = CatalogStore(self._binding, self._emit)
        self._schemas = SchemaCache()
        self._header_params: dict[str, Mapping[tuple[str, ...], str]] = {}
        self._interactions = Interactions(
            self._binding,
            handlers,
            definition.limits,
            definition.timeouts,
            self._emit,
            version=lambda: self._protocol.version if self._protocol is not None else None,
        )
        self._refresher = Refresher(
            self._binding, definition.refresh, self._refresh_pass, self._refresh_failed
        )
        self._hooks = Hooks(
            post_progress=lambda fn: self._lane.post(fn, lossy=True),
            on_notification=self._on_notification,
            on_request=self._on_server_request,
            on_lost=self._on_lost,
            param_headers=self._param_headers,
        )
        self._connected = threading.Condition(self._lock)  # notified when the connection changes
        self._reconnector = Reconnector(
            self._binding,
            definition.reconnect.retry,
            self._reconnect_attempt,
            self._reconnect_failed,
        )
        self._reconnect_number = 0
        self._lost: Connection | None = None  # a dead connection still to be released
        self._first_server: ServerIdentity | None = None
        self._closing_token = CancelToken()  # cancels a reconnect attempt at close
        limits = definition.limits
        self._slots = Gate(limits.max_concurrent_requests, binding=self._binding)
        # Serialization shares the slots' lock: an uncontended call takes both in one step.
        self._serial = (
            None
            if definition.allow_parallel_calls
            else Gate(1, binding=self._binding, share=self._slots, serializes=True)
        )
        self._auth = AuthFlows(
            self._binding,
            getattr(definition.transport, "auth", None),
            definition.timeouts.auth,
            self._auth_flow_changed,
        )
        self._before_auth: State | None = None  # the state a flow on a live binding returns to
        registry.register(self)

    # -- context manager -------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<mcpclient.Client binding={self._binding!r} state={self._state}>"

    # -- lifecycle -------------------------------------------------------

    def _emit(self, event: Event) -> int:
        handler = self._handlers.event
        if handler is None:
            return 0
        return self._lane.post(lambda: handler(event))

    def _transition(self, to: State) -> int:
        """Move to ``to`` if legal; returns the lane sequence of its event (0: refused)."""
        with self._lock:
            return self._transition_locked(to)

    def _transition_locked(self, to: State) -> int:
        current = self._state
        if to not in TRANSITIONS[current]:
            return 0
        self._state = to
        self._last_change = time.time()
        seq = self._emit(
            StateChanged(
                binding=self._binding, from_state=current, to_state=to, at=self._last_change
            )
        )
        return seq or -1

    def _start(self, deadline: float, cancel: CancelToken | None, budget: float) -> None:
        self._transition(State.STARTING)
        try:
            conn, deadline = self._open_authorized(deadline, cancel, op="connect")
            with self._lock:
                if self._closing:
                    raise ShutdownError(
                        "the binding was closed while starting", binding=self._binding, op="connect"
                    )
                self._conn = conn
                protocol = conn.protocol
                assert protocol is not None
                if protocol.modern and self._wants_logs(protocol):
                    protocol = attrs.evolve(protocol, log_level=self._definition.log_level)
                    conn.protocol = protocol
                self._protocol = protocol
                self._first_server = protocol.server
            # Listen before listing (modern era), so no change between the
            # first list and the stream opening is lost; notifications that
            # arrive meanwhile queue a refresh for when the binding is ready.
            self._subscriptions.open(conn)
            self._transition(State.DISCOVERING)
            catalog = self._discover(conn, deadline, cancel, op="connect")
            self._catalogs.adopt_first(catalog)
            self._enable_logs(conn, deadline, cancel)
            with self._lock:
                seq = self._transition_locked(State.READY)
                refresh_now, self._refresh_when_ready = self._refresh_when_ready, False
            if seq == 0:
                raise ShutdownError(
                    "the binding was closed while starting", binding=self._binding, op="connect"
                )
            if refresh_now:
                self._refresher.trigger()
        except BaseException as exc:
            failure = self._startup_error(exc, deadline, cancel, budget)
            self._abandon_start(failure)
            if failure is exc:
                raise
            raise failure from exc
        self._lane.wait_delivered(seq, max(0.0, deadline - now()) + 1.0)

    def _open_authorized(
        self, deadline: float, cancel: CancelToken | None, *, op: str
    ) -> tuple[Connection, float]:
        """Open the connection, authorizing first when the server asks (401/403).

        Returns the connection and the startup deadline, moved later by the
        time a person spent authorizing (only that pauses the startup clock).
        """
        rounds = 0
        while True:
            try:
                conn = open_connection(
                    self._definition, self._hooks, deadline=deadline, cancel=cancel
                )
                return conn, deadline
            except AuthRejectedError as exc:
                rounds += 1
                if rounds > MAX_ROUNDS:
                    raise self._auth_rejected(exc, op) from None
                deadline += self._auth.recover(exc, deadline=None, cancel=cancel, op=op)

    def _authorized(
        self,
        send: Callable[[], _T],
        *,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        rejected: AuthRejectedError | None = None,
    ) -> _T:
        """``send()``; after a 401/403 wait for the binding's auth flow and send again.

        A 401/403 proves the server did not run the request, so even a
        ``tools/call`` is sent again (DESIGN.md §7). ``rejected``: the first
        send already happened and was refused.
        """
        rounds = 0
        while True:
            if rejected is not None:
                rounds += 1
                if rounds > MAX_ROUNDS:
                    raise self._auth_rejected(rejected, op) from None
                self._auth.recover(rejected, deadline=deadline, cancel=cancel, op=op)
            try:
                return send()
            except AuthRejectedError as exc:
                rejected = exc

    def _auth_rejected(self, exc: AuthRejectedError, op: str) -> AuthError:
        status = exc.challenge.status
        return AuthError(
            f"the server still refused the request (HTTP {status}) after authorization",
            failure_class=FailureClass.AUTH_DENIED if status == 403 else FailureClass.AUTH_REQUIRED,
            binding=self._binding,
            op=op,
        )

    def _auth_flow_changed(self, started: bool, failure: AuthError | None) -> None:
        """The binding shows ``authenticating`` while a flow runs (auth flow thread)."""
        with self._lock:
            if started:
                self._before_auth = self._state
                self._transition_locked(State.AUTHENTICATING)
                return
            before, self._before_auth = self._before_auth, None
            if failure is not None:
                self._failure = failure
            # A flow during startup or a reconnect hands over to that work; on
            # a live binding it returns to where it was.
            if self._state is State.AUTHENTICATING and before in (State.READY, State.DEGRADED):
                self._transition_locked(before)
            self._connected.notify_all()

    def _startup_error(
        self, exc: BaseException, deadline: float, cancel: CancelToken | None, budget: float
    ) -> BaseException:
        if not isinstance(exc, Exception):
            return exc  # KeyboardInterrupt and friends propagate as they are
        if cancel is not None and cancel.cancelled:
            return RequestCancelledError(
                "connect was cancelled", binding=self._binding, op="connect"
            )
        if isinstance(exc, DeadlineExceededError) or (
            not isinstance(exc, Error) and now() >= deadline
        ):
            return DeadlineExceededError(
                f"startup did not finish within {budget:g} s",
                failure_class=FailureClass.STARTUP_TIMEOUT,
                binding=self._binding,
                op="connect",
            )
        if isinstance(exc, Error):
            return exc
        _log.exception("unexpected startup failure of binding %s", self._binding)
        return ProtocolError(f"startup failed: {exc!r}", binding=self._binding, op="connect")

    def _abandon_start(self, failure: BaseException) -> None:
        with self._lock:
            if isinstance(failure, Error):
                self._failure = failure
            self._transition_locked(State.FAILED)
            conn, self._conn = self._conn, None
            self._closing = True
        self._auth.close(0.5)  # a flow a cancelled connect was waiting for
        self._subscriptions.close()
        self._slots.close()
        if self._serial is not None:
            self._serial.close()
        if conn is not None:
            conn.close(1.0)
        self._lane.close(0.5)
        self._closed.set()
        registry.unregister(self)

    def _wants_logs(self, protocol: Protocol) -> bool:
        return self._handlers.log is not None and protocol.capabilities.logging

    def _enable_logs(self, conn: Connection, deadline: float, cancel: CancelToken | None) -> None:
        protocol = conn.protocol
        assert protocol is not None
        if protocol.modern or not self._wants_logs(protocol):
            return
        try:
            conn.request(
                "logging/setLevel",
                {"level": str(self._definition.log_level)},
                deadline=deadline,
                op="logging/setLevel",
                cancel=cancel,
                deadline_class=FailureClass.STARTUP_TIMEOUT,
            )
        except ProtocolError as exc:
            with self._lock:
                self._failure = ProtocolError(
                    "the server refused to set a log level; its logs will not arrive"
                    f" ({exc.message})",
                    binding=self._binding,
                    op="logging/setLevel",
                )

    def _discover(
        self, conn: Connection, deadline: float, cancel: CancelToken | None, op: str
    ) -> Catalog:
        generation = self._catalogs.reserve()
        assert conn.protocol is not None
        ttls: dict[str, float] = {}

        def fetch(method: str, params: dict[str, Any]) -> Any:
            result = self._authorized(
                lambda: conn.request(
                    method,
                    params,
                    deadline=deadline,
                    op=method,
                    cancel=cancel,
                    deadline_class=FailureClass.STARTUP_TIMEOUT
                    if op == "connect"
                    else FailureClass.DEADLINE,
                ),
                deadline=deadline,
                cancel=cancel,
                op=method,
            )
            ttl = result.get("ttlMs") if isinstance(result, dict) else None
            family = _LIST_FAMILIES.get(method)
            if family and isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0:
                ttls[family] = min(ttls.get(family, math.inf), ttl / 1000.0)
            return result

        catalog = discover(
            fetch,
            binding=self._binding,
            generation=generation,
            protocol=conn.protocol,
            limits=self._definition.limits,
            profile=self._definition.profile,
            http=isinstance(self._definition.transport, StreamableHTTPTransport),
        )
        self._schedule_ttl(ttls)
        return catalog

    # -- refresh ----------------------------------------------------------

    def _schedule_ttl(self, ttls: dict[str, float]) -> None:
        """Mark families stale when their TTL hint expires (a hint, never a poll loop)."""
        if not ttls:
            return
        expiry = min(ttls.values())
        # No sooner than 60 s (plus jitter) after the previous TTL-driven refresh.
        due = max(now() + expiry, self._last_ttl_refresh + _TTL_FLOOR + _random.uniform(0, 6))
        families = sorted(f for f, ttl in ttls.items() if ttl <= expiry + 1.0)

        def expire() -> None:
            with self._lock:
                if self._closing:
                    return
                self._ttl_timer = None
                self._last_ttl_refresh = now()
            for family in families:
                self._catalogs.mark_stale(family)
            self._refresher.trigger()

        with self._lock:
            if self._closing:
                return
            if self._ttl_timer is not None:
                self._ttl_timer.cancel()
            self._ttl_timer = watcher.schedule(due, expire)

    def _refresh_pass(self) -> None:
        with self._lock:
            state, conn = self._state, self._conn
        if conn is None:  # closed (close() takes the connection away first)
            raise ShutdownError("the binding is closed", binding=self._binding, op="refresh")
        if state not in _SERVING:
            raise error_for(
                FailureClass.TRANSPORT_CLOSED,
                f"the binding is {state}",
                binding=self._binding,
                op="refresh",
            )
        deadline = now() + self._definition.timeouts.startup
        with self._slots.slot(deadline, None, "refresh"):
            catalog = self._discover(conn, deadline, None, op="refresh")
        with self._lock:
            if self._closing:
                return
            self._catalogs.publish(catalog)
            if self._failure is not None and self._failure.op in ("refresh", "discover"):
                self._failure = None
            if self._state is State.DEGRADED:
                self._transition_locked(State.READY)

    def _refresh_failed(self, exc: BaseException, retrying: bool) -> None:
        if isinstance(exc, Error):
            error = exc
        else:
            _log.error("catalog refresh of %s failed unexpectedly", self._binding, exc_info=exc)
            error = CatalogError(
                f"the catalog refresh failed: {exc!r}",
                failure_class=FailureClass.CATALOG_STALE,
                binding=self._binding,
                op="refresh",
            )
        # Recorded as a refresh failure, so the next successful refresh clears it.
        recorded = error_for(
            error.failure_class, error.message, binding=self._binding, op="refresh"
        )
        with self._lock:
            if self._closing:
                return
            self._failure = recorded
            if self._state is State.READY:
                self._transition_locked(State.DEGRADED)
            self._emit(
                CatalogRejected(
                    binding=self._binding,
                    failure_class=error.failure_class,
                    message=error.message,
                    adopted=self._catalogs.adopted.generation,
                    retrying=retrying,
                    at=time.time(),
                )
            )

    def close(self, timeout: float | None = None) -> None:
        """Close the binding: fail calls in flight, stop the server, release everything.

        Idempotent and safe from many threads at once. Never returns with a
        live server process; when ``timeout`` (None = 5 s) runs out, the
        server's process group is killed.
        """
        budget = _DEFAULT_CLOSE_TIMEOUT if timeout is None else max(0.0, float(timeout))
        with self._lock:
            first = not self._closing
            self._closing = True
            if first:
                self._transition_locked(State.CLOSING)
            conn, self._conn = self._conn, None
            lost, self._lost = self._lost, None
            self._connected.notify_all()
        if lost is not None:
            lost.close(min(0.5, budget))
        if not first:
            self._closed.wait(budget)
            return
        try:
            with self._lock:
                timer, self._ttl_timer = self._ttl_timer, None
            if timer is not None:
                timer.cancel()
            # Stop the workers first, release the connection (which fails their
            # requests at once), and only then wait for them.
            self._closing_token.cancel("the binding is closing")
            self._reconnector.stop()
            self._refresher.stop()
            self._interactions.close()
            self._slots.close()
            if self._serial is not None:
                self._serial.close()
            if conn is not None:
                conn.close(budget)
            self._auth.close(min(1.0, budget))
            self._subscriptions.close()
            self._reconnector.join(min(1.0, budget))
            self._refresher.join(min(1.0, budget))
        finally:
            self._transition(State.CLOSED)
            self._lane.close(min(1.0, budget))
            self._closed.set()
            registry.unregister(self)

    # -- exit and fork (called by the registry) ----------------------------

    def _forget_after_fork(self) -> None:
        # In the child of a fork: no other thread exists, and any lock a parent
        # thread held at fork time stays held forever. Replace, never take.
        self._lock = threading.Lock()
        self._connected = threading.Condition(self._lock)
        self._catalogs.forget_after_fork()
        self._slots = Gate(1, binding=self._binding)
        self._slots.close()
        self._serial = None
        self._closing = True
        self._state = State.CLOSED
        conn = self._conn
        if conn is not None:
            conn.session.forget()
            conn.transport.forget_after_fork()
        self._closed.set()

    def _exit_signal(self, sig: int) -> None:
        conn = self._conn
        if conn is not None:
            conn.transport.signal_group(sig)

    def _exit_wait(self, timeout: float) -> bool:
        conn = self._conn
        return conn is None or conn.transport.wait_exit(timeout)

    def _exit_kill(self) -> None:
        conn = self._conn
        if conn is not None:
            conn.transport.kill_now()

    # -- connection events (reader/writer threads: only queue work) --------

    def _on_lost(self, conn: Connection, exc: Error) -> None:
        """Claim a lost connection once; reconnect under the policy (reader/writer thread)."""
        retrying = not self._definition.reconnect.disabled
        with self._lock:
            if self._conn is not conn or self._state not in _SERVING or self._closing:
                return
            self._conn, self._lost = None, conn
            self._failure = exc
            self._transition_locked(State.RECONNECTING if retrying else State.DEGRADED)
            self._emit_lost_locked(exc, retrying=retrying)
        if retrying:
            self._reconnector.start()

    def _emit_lost_locked(self, exc: Error, *, retrying: bool) -> None:
        """Emit ``ConnectionLost`` and wake callers waiting for a connection (lock held)."""
        self._emit(
            ConnectionLost(
                binding=self._binding,
                failure_class=exc.failure_class,
                message=exc.message,
                adopted=self._catalogs.adopted.generation,
                retrying=retrying,
                at=time.time(),
            )
        )
        self._connected.notify_all()

    def reconnect(self) -> None:
        """Rebuild the connection with a fresh retry budget.

        For a binding that is ``failed`` (its budget spent) or ``degraded``
        after a loss with reconnection disabled; a binding that is connected,
        or already reconnecting, is left alone.

        Raises:
            ShutdownError: the binding is closed.
        """
        with self._lock:
            if self._closing:
                raise ShutdownError("the binding is closed", binding=self._binding, op="reconnect")
            if self._conn is not None or self._state is State.RECONNECTING:
                return
            self._transition_locked(State.RECONNECTING)
            self._connected.notify_all()
        self._reconnector.start()

    def _reconnect_attempt(self, number: int) -> None:
        """One attempt: start the server, negotiate, discover, install (worker thread)."""
        with self._lock:
            if self._closing:
                raise ShutdownError("the binding is closed", binding=self._binding, op="reconnect")
            if self._conn is not None:
                return  # already connected (a second start() raced a success)
            self._reconnect_number = number
            lost, self._lost = self._lost, None
        if lost is not None:
            lost.close(0.5)  # reap the dead server before starting another
        deadline = now() + self._definition.timeouts.startup
        try:
            conn, deadline = self._open_authorized(deadline, self._closing_token, op="reconnect")
        except Error:
            raise
        except Exception as exc:
            _log.exception("reconnect attempt of binding %s failed unexpectedly", self._binding)
            raise ConnectionLostError(
                f"reconnecting failed: {exc!r}", binding=self._binding
            ) from exc
        try:
            protocol = conn.protocol
            assert protocol is not None
            if protocol.modern and self._wants_logs(protocol):
                conn.protocol = attrs.evolve(protocol, log_level=self._definition.log_level)
            # Listen before listing, as at connect: no change may fall between.
            self._subscriptions.restore(conn, deadline)
            catalog = self._discover(conn, deadline, self._closing_token, op="reconnect")
            self._enable_logs(conn, deadline, self._closing_token)
        except BaseException:
            conn.close(0.5)
            raise
        with self._lock:
            closing = self._is_closing()  # close() may have run during the attempt
            if not closing:
                self._conn = conn
                self._protocol = conn.protocol
                self._failure = None
                self._reconnect_number = 0
                self._transition_locked(State.READY)
                self._emit(
                    ConnectionRestored(
                        binding=self._binding,
                        server=protocol.server,
                        drift=_drift(self._first_server, protocol.server),
                        adopted=self._catalogs.adopted.generation,
                        generation=catalog.generation,
                        at=time.time(),
                    )
                )
                self._catalogs.publish(catalog)
                self._connected.notify_all()
                refresh_now, self._refresh_when_ready = self._refresh_when_ready, False
        if closing:
            conn.close(0.5)
        elif refresh_now:
            self._refresher.trigger()

    def _is_closing(self) -> bool:
        return self._closing

    def _reconnect_failed(self, exc: Error, retrying: bool) -> None:
        with self._lock:
            if self._closing:
                return
            self._failure = exc
            if retrying:
                return
            self._transition_locked(State.FAILED)
            self._emit_lost_locked(exc, retrying=False)

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == ACKNOWLEDGED:
            self._subscriptions.on_acknowledged(params)
            return
        if not self._subscriptions.accepts(params):
            return  # a listen stream no longer in force (de-duplicated by id)
        family = _FAMILIES.get(method)
        if family is not None:
            self._catalogs.mark_stale(family)
            with self._lock:
                serving = self._state in _SERVING and not self._closing
                if not serving:
                    self._refresh_when_ready = True
            if serving:
                self._refresher.trigger()
            return
        if method == "notifications/message":
            self._on_log(params)
        elif method == "notifications/elicitation/complete":
            # 2025-11-25: a URL elicitation finished out of band. The request
            # that needed it is re-sent once the handler accepted, so there
            # is nothing left to wait for; an unknown id is ignored.
            _log.debug("binding %s: a URL elicitation completed", self._binding)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                self._emit(
                    ResourceUpdated(binding=self._binding, uri=safe_uri(uri), at=time.time())
                )

    def _on_log(self, params: dict[str, Any]) -> None:
        log_handler = self._handlers.log
        if log_handler is None:
            return
        deliver = log_delivery(
            self._binding,
            params,
            self._definition.limits.max_log_message_bytes,
            log_handler,
            self._handlers.event,
        )
        if deliver is not None:
            self._lane.post(deliver, lossy=True)

    # -- status and catalog ----------------------------------------------

    def status(self) -> Status:
        """A snapshot of the binding's safe metadata."""
        transport = self._definition.transport
        with self._lock:
            protocol = self._protocol
            kind = self._conn.kind if self._conn is not None else transport.kind
            failure = self._failure
            adopted = self._catalogs.adopted
            candidate = self._catalogs.candidate
            return Status(
                binding=self._binding,
                state=self._state,
                protocol_version=protocol.version if protocol else "",
                server=protocol.server if protocol else adopted.server,
                transport_kind=kind,
                redacted_origin=transport.redacted_origin,
                failure=Failure(failure.failure_class, failure.message) if failure else None,
                last_change=self._last_change,
                catalog_generation=adopted.generation,
                catalog_digest=adopted.digest,
                candidate_generation=candidate.generation if candidate else 0,
                candidate_digest=candidate.digest if candidate else "",
                stale_families=self._catalogs.stale_families,
                compat_profile=str(self._definition.profile),
                reconnect_attempt=self._reconnect_number,
                dropped_notifications=self._lane.dropped,
            )

    def catalog(self) -> Catalog:
        """The adopted catalog, projected through the tool filter (readable after close)."""
        return self._project(self._catalogs.adopted)

    def candidate(self) -> Catalog | None:
        """The validated candidate awaiting :meth:`adopt`, or ``None``."""
        candidate = self._catalogs.candidate
        return None if candidate is None else self._project(candidate)

    def _project(self, catalog: Catalog) -> Catalog:
        tool_filter = self._definition.tool_filter
        if not tool_filter.allow and not tool_filter.deny:
            return catalog
        return attrs.evolve(
            catalog, tools=tuple(t for t in catalog.tools if tool_filter.permits(t.raw_name))
        )

    def adopt(self, generation: int) -> None:
        """Adopt the candidate numbered ``generation``, atomically.

        Calls already in flight keep the generation they started with.

        Raises:
            ShutdownError: the binding is closed.
            CatalogError: ``catalog_stale``: no candidate, or another one.
        """
        if self._closing:
            raise ShutdownError("the binding is closed", binding=self._binding, op="adopt")
        seq = self._catalogs.adopt(generation)
        if seq:
            self._lane.wait_delivered(seq, 5.0)

    # -- calls ------------------------------------------------------------

    def _serving(
        self, op: str, deadline: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[Connection, Catalog]:
        """The live connection and the adopted catalog, or a classified refusal.

        While the binding is reconnecting, a call waits for the connection
        within its own deadline (never on a half-built connection).
        """
        handle = cancel.add_callback(self._wake_waiters) if cancel is not None else None
        try:
            with self._lock:
                while True:
                    state, conn, failure = self._state, self._conn, self._failure
                    if self._closing or state in (State.CLOSING, State.CLOSED):
                        raise ShutdownError("the binding is closed", binding=self._binding, op=op)
                    if state in _SERVING and conn is not None:
                        return conn, self._catalogs.adopted
                    left = (deadline - now()) if deadline is not None else 0.0
                    if state is not State.RECONNECTING or left <= 0:
                        break
                    if cancel is not None and cancel.cancelled:
                        raise RequestCancelledError(
                            "the call was cancelled before it was sent",
                            binding=self._binding,
                            op=op,
                        )
                    self._connected.wait(left)
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        if state is State.RECONNECTING and deadline is not None:
            raise DeadlineExceededError(
                "the call's deadline passed while the binding was reconnecting",
                binding=self._binding,
                op=op,
            )
        if failure is not None:
            raise error_for(failure.failure_class, failure.message, binding=self._binding, op=op)
        raise error_for(
            FailureClass.TRANSPORT_CLOSED, f"the binding is {state}", binding=self._binding, op=op
        )

    def _param_headers(self, raw_name: str) -> Mapping[tuple[str, ...], str] | None:
        """The ``x-mcp-header`` annotations of an adopted tool (modern HTTP only)."""
        spec = self._catalogs.adopted.tool_by_raw_name(raw_name)
        if spec is None:
            return None
        annotations = self._header_params.get(spec.input_schema_digest)
        if annotations is None:
            found = header_annotations(spec.input_schema)
            annotations = found if isinstance(found, dict) else {}
            self._header_params[spec.input_schema_digest] = annotations
        return annotations

    def _wake_waiters(self) -> None:
        with self._lock:
            self._connected.notify_all()

    def _adopted(self, op: str) -> Catalog:
        """The adopted catalog, for local checks (refuses only a closed binding)."""
        if self._closing:
            raise ShutdownError("the binding is closed", binding=self._binding, op=op)
        return self._catalogs.adopted

    def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        opts: CallOpts,
        *,
        op: str,
        deadline: float,
        serialize: bool = False,
        indeterminate_on_loss: bool = False,
    ) -> Any:
        # A call made from inside a handler bypasses call serialization: the
        # call that triggered the handler may hold the turn (DESIGN.md §7).
        in_handler = current_depth() > 0
        serial = self._serial if serialize and not in_handler else None
        conn, _ = self._serving(op, deadline, opts.cancel)
        # The turn (when serialized) and a request slot, in one step when uncontended.
        enter_pair(serial, self._slots, deadline, opts.cancel, op)
        try:
            # Outside a handler there is no depth to account (outbound() is a no-op).
            with self._interactions.outbound() if in_handler else _NOTHING:
                try:
                    return self._exchange(
                        conn,
                        method,
                        params,
                        opts,
                        op=op,
                        deadline=deadline,
                        indeterminate_on_loss=indeterminate_on_loss,
                    )
                except ResendableError:
                    # The server forgot the session before it processed this
                    # request (HTTP 404): wait for the new session, send once more,
                    # all inside the call's one deadline.
                    conn, _ = self._serving(op, deadline, opts.cancel)
                    return self._exchange(
                        conn,
                        method,
                        params,
                        opts,
                        op=op,
                        deadline=deadline,
                        indeterminate_on_loss=indeterminate_on_loss,
                    )
        finally:
            leave_pair(serial, self._slots)

    def _exchange(
        self,
        conn: Connection,
        method: str,
        params: dict[str, Any] | None,
        opts: CallOpts,
        *,
        op: str,
        deadline: float,
        indeterminate_on_loss: bool,
    ) -> Any:
        def send() -> Any:
            return exchange(
                conn,
                method,
                params,
                op=op,
                deadline=deadline,
                cancel=opts.cancel,
                progress=progress_adapter(self._binding, opts.progress, self._handlers.event),
                indeterminate_on_loss=indeterminate_on_loss,
                interactions=self._interactions,
                limits=self._definition.limits,
            )

        try:
            return send()
        except AuthRejectedError as exc:
            # Only HTTP gets here; the common path pays for nothing above.
            return self._authorized(
                send, deadline=deadline, cancel=opts.cancel, op=op, rejected=exc
            )

    # -- server-initiated requests (legacy era) ---------------------------

    def _listen_ended(self, conn: Connection) -> None:
        """The modern listen stream ended on its own: open it again on a live binding."""
        with self._lock:
            live = self._conn is conn and self._state in _SERVING and not self._closing
        if live:
            try:
                self._subscriptions.open(conn)
            except Error as exc:
                _log.debug("binding %s: could not re-open the listen: %s", self._binding, exc)

    def _on_server_request(
        self, request_id: Any, method: str, params: dict[str, Any], token: CancelToken
    ) -> None:
        """Runs on the reader thread: hand the request to a handler thread at once."""
        conn = self._conn
        if conn is None:
            return
        protocol = conn.protocol
        if protocol is not None and protocol.modern:
            # 2026-07-28 has no server-to-client requests: input arrives only
            # inside input_required results.
            conn.session.respond(
                request_id, error={"code": -32601, "message": f"method not found: {method}"[:200]}
            )
            return
        self._interactions.serve_request(conn.session, request_id, method, params, token)

    def notify_roots_changed(self) -> None:
        """Tell a legacy server the roots changed (modern servers re-ask on their own)."""
        conn, _ = self._serving("notify_roots_changed")
        protocol = conn.protocol
        if protocol is not None and not protocol.modern and self._definition.capabilities.roots:
            conn.session.notify("notifications/roots/list_changed")

    def call_tool(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> ToolResult:
        """Call a tool by its raw (server) name.

        A tool that failed is a ``ToolResult(is_error=True)``, not an
        exception. The call ends by its deadline (``opts``), whatever the
        server does. ``timeout``, ``progress`` and ``cancel`` are shorthand
        for ``opts=CallOpts(...)`` (every call method takes them; not both).

        Raises:
            ConfigError: ``opts`` and a keyword both given, or a bad value.
            ToolUnavailableError: the filter denies it or the catalog lacks it.
            InvalidArgumentsError: ``arguments`` are not a JSON object.
            DeadlineExceededError, RequestCancelledError, ShutdownError,
            IndeterminateError, ConnectionLostError, ProtocolError,
            LimitExceededError: as classified.
        """
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="call_tool")
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        prepared = self._prepare_tool_call(raw_name, arguments)
        return self._run_tool(prepared, opts, deadline)

    def submit_tool_call(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> concurrent.futures.Future[ToolResult]:
        """Start a tool call and return its future at once.

        Local refusals (closed binding, filter, unknown tool, invalid
        arguments) raise here, synchronously; everything after the request
        reaches the session is reported on the future. Cancelling the future
        cancels the call on the wire.
        """
        opts = options_of(
            opts, timeout, progress, cancel, binding=self._binding, op="submit_tool_call"
        )
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        prepared = self._prepare_tool_call(raw_name, arguments)
        # The call queues in the gates as an entry with no thread of its own,
        # its place taken here, on the caller's thread: serialized submissions
        # are sent in the order they were submitted. A call from inside a
        # handler bypasses serialization, as call_tool does.
        serial = self._serial if current_depth() == 0 else None
        return submission.submit(
            self,
            prepared,
            deadline=deadline,
            cancel=opts.cancel,
            progress=progress_adapter(self._binding, opts.progress, self._handlers.event),
            gates=(self._slots,) if serial is None else (serial, self._slots),
        )

    def _prepare_tool_call(
        self, raw_name: str, arguments: Mapping[str, Any] | None
    ) -> PreparedCall:
        adopted = self._adopted("call_tool")
        return prepare_tool_call(
            raw_name,
            arguments,
            binding=self._binding,
            tool_filter=self._definition.tool_filter,
            adopted=adopted,
            schemas=self._schemas,
        )

    def _run_tool(
        self,
        prepared: PreparedCall,
        opts: CallOpts,
        deadline: float,
    ) -> ToolResult:
        result = self._request(
            "tools/call",
            prepared.params,
            opts,
            op="call_tool",
            deadline=deadline,
            serialize=True,
            indeterminate_on_loss=True,
        )
        try:
            converted = to_tool_result(result, self._definition.limits)
        except ConversionError as exc:
            raise ProtocolError(str(exc), binding=self._binding, op="call_tool") from None
        return check_structured(prepared, converted, self._schemas)

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> Prompt:
        """Render a prompt.

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server has no prompts.
            InvalidArgumentsError: ``arguments`` are not str to str, or lack an
                argument the catalog marks required (nothing is sent).
        """
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="get_prompt")
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        self._require("prompts", "get_prompt", deadline, opts.cancel)
        if arguments is not None and (
            not isinstance(arguments, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in arguments.items())
        ):
            raise InvalidArgumentsError(
                "prompt arguments must map str to str", binding=self._binding, op="get_prompt"
            )
        check_prompt_arguments(
            name, arguments, adopted=self._adopted("get_prompt"), binding=self._binding
        )
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = self._request("prompts/get", params, opts, op="get_prompt", deadline=deadline)
        try:
            return to_prompt(result, self._definition.limits)
        except ConversionError as exc:
            raise ProtocolError(str(exc), binding=self._binding, op="get_prompt") from None

    def read_resource(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> Resource:
        """Read a resource by URI (an opaque identifier, never resolved as a path)."""
        opts = options_of(
            opts, timeout, progress, cancel, binding=self._binding, op="read_resource"
        )
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        self._require("resources", "read_resource", deadline, opts.cancel)
        result = self._request(
            "resources/read", {"uri": uri}, opts, op="read_resource", deadline=deadline
        )
        try:
            return to_resource(result, self._definition.limits)
        except ConversionError as exc:
            raise ProtocolError(str(exc), binding=self._binding, op="read_resource") from None

    def complete(
        self,
        ref: PromptRef | ResourceTemplateRef,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> Completion:
        """Ask the server to complete an argument value (when it advertises completions)."""
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="complete")
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        self._require("completions", "complete", deadline, opts.cancel)
        if isinstance(ref, PromptRef):
            wire_ref = {"type": "ref/prompt", "name": ref.name}
        elif isinstance(ref, ResourceTemplateRef):
            wire_ref = {"type": "ref/resource", "uri": ref.uri_template}
        else:
            raise ConfigError(
                "complete() ref must be a PromptRef or ResourceTemplateRef", op="complete"
            )
        params: dict[str, Any] = {"ref": wire_ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self._request(
            "completion/complete", params, opts, op="complete", deadline=deadline
        )
        completion = result.get("completion") if isinstance(result, dict) else None
        if not isinstance(completion, dict) or not isinstance(completion.get("values"), list):
            raise ProtocolError(
                "completion/complete returned no values", binding=self._binding, op="complete"
            )
        total = completion.get("total")
        return Completion(
            values=tuple(bound(v, 1024) for v in completion["values"][:100] if isinstance(v, str)),
            total=total if isinstance(total, int) and not isinstance(total, bool) else None,
            has_more=completion.get("hasMore") is True,
        )

    def subscribe(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Subscribe to changes of a resource (``ResourceUpdated`` events).

        Returns once the server has accepted (modern: acknowledged) it.

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server does not
                support resource subscriptions, or does not honour this one.
        """
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="subscribe")
        self._change_subscription(uri, add=True, opts=opts)

    def unsubscribe(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Stop receiving ``ResourceUpdated`` events for ``uri``."""
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="unsubscribe")
        self._change_subscription(uri, add=False, opts=opts)

    def _change_subscription(self, uri: str, *, add: bool, opts: CallOpts | None) -> None:
        op = "subscribe" if add else "unsubscribe"
        if not isinstance(uri, str) or not uri:
            raise ConfigError(f"{op}() needs a resource URI", binding=self._binding, op=op)
        opts = opts or _NO_OPTS
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        conn, _ = self._serving(op, deadline, opts.cancel)
        self._require("resources_subscribe", op, deadline, opts.cancel)
        if opts.cancel is not None and opts.cancel.cancelled:
            # A (un)subscription is short and not cancelled on the wire; a
            # cancel that came first keeps it from being sent at all.
            raise RequestCancelledError(
                "the call was cancelled before it was sent", binding=self._binding, op=op
            )
        self._subscriptions.change(conn, uri, add=add, deadline=deadline)

    def ping(
        self,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Check the server answers (``server/discover`` on a modern server)."""
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op="ping")
        deadline = opts.resolve_deadline(now(), self._definition.timeouts.request)
        conn, _ = self._serving("ping", deadline, opts.cancel)
        method = "server/discover" if conn.protocol is not None and conn.protocol.modern else "ping"
        self._request(method, None, opts, op="ping", deadline=deadline)

    def _require(
        self,
        capability: str,
        op: str,
        deadline: float | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        _, adopted = self._serving(op, deadline, cancel)
        with self._lock:
            protocol = self._protocol
        caps = protocol.capabilities if protocol else adopted.capabilities
        if not getattr(caps, capability):
            raise ProtocolError(
                f"the server does not advertise {capability}",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self._binding,
                op=op,
            )
