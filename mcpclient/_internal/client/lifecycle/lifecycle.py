"""A binding's life: start, loss and reconnect, close, interpreter exit and fork.

Threads:
    Start runs on the thread calling ``connect()``; close on the thread(s)
    calling ``close()``. A lost connection is claimed on the session's reader
    or writer thread, which only records it and starts the reconnect worker
    ``mcpclient-reconnect-<binding>`` (:class:`Reconnector`); each attempt
    (start a server, negotiate, listen, discover, install) runs there, as
    does the one attempt a call on a failed binding starts once it is due
    (``BindingState.serving``). The live connection's keepalive
    (``keepalive.py``) ticks on the process-wide deadline watcher; it is
    started once a connection is installed and stopped when it is lost,
    at close and in a forked child. The
    exit hook's thread stops every server at interpreter exit; the forked
    child's only thread forgets the parent's.

Locks:
    None of its own: the state, the live and the lost connection are changed
    under ``BindingState.lock``, and callers waiting for a connection are
    woken through ``BindingState.connected``. No I/O, no close of a
    connection, no join happens under it.

Shutdown:
    :meth:`Lifecycle.close` refuses new calls, fails calls in flight at once
    (``shutdown``; a ``tools/call`` already sent is ``indeterminate``),
    cancels a reconnect attempt, stops the refresh and reconnect workers,
    stops the server within its timeout, and stops the lane without waiting
    on a stuck handler. It is idempotent: a second caller waits for the first.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import attrs

from mcpclient._core.deadline import for_people, now
from mcpclient._core.limits import clean_text
from mcpclient._internal.client import registry
from mcpclient._internal.client.auth.recovery import AuthRecovery
from mcpclient._internal.client.calls.callpath import CallPath
from mcpclient._internal.client.catalog.catalog_refresh import CatalogRefresh
from mcpclient._internal.client.inbound.inbound import Inbound
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.lifecycle.connection import Connection, Hooks
from mcpclient._internal.client.lifecycle.hints import explained
from mcpclient._internal.client.lifecycle.keepalive import KeepaliveWatch
from mcpclient._internal.client.lifecycle.reconnect import Reconnector
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.session.context import startup_context
from mcpclient._internal.session.protocol import Protocol
from mcpclient.calls import CancelToken
from mcpclient.catalog import ServerIdentity
from mcpclient.errors import (
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    ForkedError,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
)
from mcpclient.events import ConnectionLost, ConnectionRestored
from mcpclient.status import State

__all__ = ["Lifecycle"]

_log = logging.getLogger(__name__)

_DEFAULT_CLOSE_TIMEOUT = 5.0


def forked_error(binding: str, parent: int, what: str = "client") -> ForkedError:
    """The error every use of a binding inherited through ``os.fork()`` raises in the child."""
    return ForkedError(
        f"this {what} was connected in process {parent} and inherited by process"
        f" {os.getpid()} through os.fork(); its connection belongs to process {parent}"
        " and is never used here. Connect after the fork: create the Client or Host in"
        " the process that calls it (a gunicorn worker's post_fork hook or first request,"
        " not at import with --preload; multiprocessing's spawn or forkserver start method)",
        binding=binding,
    )


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


class Lifecycle:
    """Starts, restores and closes one binding's connection. Thread safety: any thread."""

    def __init__(
        self,
        state: BindingState,
        *,
        auth: AuthRecovery,
        calls: CallPath,
        refresh: CatalogRefresh,
        inbound: Inbound,
        interactions: Interactions,
    ) -> None:
        self._st = state
        self._auth = auth
        self._calls = calls
        self._refresh = refresh
        self._inbound = inbound
        self._subscriptions = inbound.subscriptions
        self._interactions = interactions
        self._closed = threading.Event()
        self._closing_token = CancelToken()  # cancels a reconnect attempt at close
        self.hooks = Hooks(
            post_progress=lambda fn: state.lane.post(fn, lossy=True),
            on_notification=inbound.on_notification,
            on_request=inbound.on_server_request,
            on_lost=self._on_lost,
        )
        self.reconnector = Reconnector(
            state.binding,
            state.definition.reconnect.retry,
            self._reconnect_attempt,
            self._reconnect_failed,
        )
        state.revive = self.reconnector.revive  # wiring, once: the attempt a call may start
        self._pid = os.getpid()  # the process the connection belongs to (fork)
        self._keepalive: KeepaliveWatch | None = None  # the live connection's (state lock)
        registry.register(self)

    # -- start ---------------------------------------------------------------

    def start(self, deadline: float, cancel: CancelToken | None, budget: float) -> None:
        """Start the server, negotiate, listen, discover, adopt; READY or raise."""
        st = self._st
        st.transition(State.STARTING)
        try:
            conn, deadline = self._auth.open_authorized(self.hooks, deadline, cancel, op="connect")
            protocol = conn.protocol
            assert protocol is not None
            if protocol.modern and self._wants_logs(protocol):
                protocol = attrs.evolve(protocol, log_level=st.definition.log_level)
                conn.protocol = protocol
            try:
                st.install_first(conn, protocol)
            except ShutdownError:
                conn.close(1.0)
                raise
            # Listen before listing (modern era), so no change between the
            # first list and the stream opening is lost; notifications that
            # arrive meanwhile queue a refresh for when the binding is ready.
            self._subscriptions.open(conn)
            st.transition(State.DISCOVERING)
            catalog = self._refresh.discover(conn, deadline, cancel, op="connect")
            st.catalogs.adopt_first(catalog)
            self._enable_logs(conn, deadline, cancel)
            seq, refresh_now = st.ready()
            if seq == 0:
                raise ShutdownError(
                    "the binding was closed while starting", binding=st.binding, op="connect"
                )
            if refresh_now:
                self._refresh.trigger()
            self._watch(conn)
        except BaseException as exc:
            failure = self._startup_error(exc, deadline, cancel, budget)
            self._abandon_start(failure)
            if failure is exc:
                raise
            raise failure from exc
        st.lane.wait_delivered(seq, max(0.0, deadline - now()) + 1.0)

    def _startup_error(
        self, exc: BaseException, deadline: float, cancel: CancelToken | None, budget: float
    ) -> BaseException:
        binding = self._st.binding
        if not isinstance(exc, Exception):
            return exc  # KeyboardInterrupt and friends propagate as they are
        if cancel is not None and cancel.cancelled:
            return RequestCancelledError("connect was cancelled", binding=binding, op="connect")
        if isinstance(exc, DeadlineExceededError) or (
            not isinstance(exc, Error) and now() >= deadline
        ):
            # The negotiation's own timeout (op "connect") says what went unanswered;
            # a note, what the server did meanwhile (lines that are not JSON-RPC).
            why = f": {exc.message}" if isinstance(exc, Error) and exc.op == "connect" else ""
            notes = "".join(f"; {note}" for note in getattr(exc, "__notes__", ()))
            return DeadlineExceededError(
                f"startup did not finish within {for_people(budget)}{why}{notes}",
                failure_class=FailureClass.STARTUP_TIMEOUT,
                binding=binding,
                op="connect",
            )
        if isinstance(exc, Error):
            return explained(self._st.definition, exc)
        _log.exception("unexpected startup failure of binding %s", binding)
        return ProtocolError(f"startup failed: {exc!r}", binding=binding, op="connect")

    def _abandon_start(self, failure: BaseException) -> None:
        st = self._st
        conn = st.abandon(failure)
        self._auth.close(0.5)  # a flow a cancelled connect was waiting for
        self._subscriptions.close()
        self._calls.close()
        if conn is not None:
            conn.close(1.0)
        st.lane.close(0.5)
        self._closed.set()
        registry.unregister(self)

    def _wants_logs(self, protocol: Protocol) -> bool:
        return self._st.handlers.log is not None and protocol.capabilities.logging

    def _enable_logs(self, conn: Connection, deadline: float, cancel: CancelToken | None) -> None:
        st = self._st
        protocol = conn.protocol
        assert protocol is not None
        if protocol.modern or not self._wants_logs(protocol):
            return
        try:
            conn.request(
                "logging/setLevel",
                {"level": str(st.definition.log_level)},
                startup_context("logging/setLevel", deadline, cancel),
            )
        except ProtocolError as exc:
            st.record(
                ProtocolError(
                    "the server refused to set a log level; its logs will not arrive"
                    f" ({exc.message})",
                    binding=st.binding,
                    op="logging/setLevel",
                )
            )

    # -- close ---------------------------------------------------------------

    def close(self, timeout: float | None) -> None:
        """Close the binding (see the module's Shutdown)."""
        st = self._st
        budget = _DEFAULT_CLOSE_TIMEOUT if timeout is None else max(0.0, float(timeout))
        first, conn, lost = st.begin_close()
        self._unwatch()
        if lost is not None:
            lost.close(min(0.5, budget))
        if not first:
            self._closed.wait(budget)
            return
        try:
            # Stop the workers first, release the connection (which fails their
            # requests at once), and only then wait for them.
            self._closing_token.cancel("the binding is closing")
            self.reconnector.stop()
            self._refresh.stop()
            self._interactions.close()
            self._calls.close()
            if conn is not None:
                conn.close(budget)
            self._auth.close(min(1.0, budget))
            self._subscriptions.close()
            self.reconnector.join(min(1.0, budget))
            self._refresh.join(min(1.0, budget))
        finally:
            st.transition(State.CLOSED)
            st.lane.close(min(1.0, budget))
            self._closed.set()
            registry.unregister(self)

    # -- exit and fork (called by the registry) --------------------------------

    def _forget_after_fork(self) -> None:
        # In the child of a fork: no other thread exists, and any lock a parent
        # thread held at fork time stays held forever. Replace, never take.
        st = self._st
        conn, lost = st.conn, st.lost
        st.forget_after_fork(forked_error(st.binding, self._pid))
        # The watcher's heap is gone in the child; only drop the reference
        # (no lock: a parent thread may have held it).
        self._keepalive = None
        self._calls.forget_after_fork()
        for dead in (conn, lost):
            if dead is not None:
                dead.session.forget()
                dead.transport.forget_after_fork()
        self._closed = threading.Event()  # a parent thread may have held the old one's lock
        self._closed.set()

    def _exit_signal(self, sig: int) -> None:
        conn = self._st.conn
        if conn is not None:
            conn.transport.signal_group(sig)

    def _exit_wait(self, timeout: float) -> bool:
        conn = self._st.conn
        return conn is None or conn.transport.wait_exit(timeout)

    def _exit_kill(self) -> None:
        conn = self._st.conn
        if conn is not None:
            conn.transport.kill_now()

    # -- loss and reconnect ----------------------------------------------------

    def _on_lost(self, conn: Connection, exc: Error) -> None:
        """Claim a lost connection once; reconnect under the policy (reader/writer thread)."""
        st = self._st
        if st.conn is conn:
            self._unwatch()
        retrying = not st.definition.reconnect.disabled
        claimed = st.lose(
            conn, exc, retrying=retrying, announce=lambda: self._emit_lost_locked(exc, retrying)
        )
        if claimed and retrying:
            self.reconnector.start()

    def _emit_lost_locked(self, exc: Error, retrying: bool) -> None:
        """Emit ``ConnectionLost`` (the state's lock held: in commit order)."""
        st = self._st
        st.emit(
            ConnectionLost(
                binding=st.binding,
                failure_class=exc.failure_class,
                message=exc.message,
                adopted=st.catalogs.adopted.generation,
                retrying=retrying,
                at=time.time(),
            )
        )

    def reconnect(self) -> None:
        """Rebuild the connection with a fresh retry budget (see ``Client.reconnect``)."""
        if self._st.begin_reconnect():
            self.reconnector.start()

    def _reconnect_attempt(self, number: int) -> None:
        """One attempt: start the server, negotiate, discover, install (worker thread)."""
        st = self._st
        proceed, lost = st.begin_attempt(number)
        if not proceed:
            return
        if lost is not None:
            lost.close(0.5)  # reap the dead server before starting another
        deadline = now() + st.definition.timeouts.startup
        try:
            conn, deadline = self._auth.open_authorized(
                self.hooks, deadline, self._closing_token, op="reconnect"
            )
        except Error:
            raise
        except Exception as exc:
            _log.exception("reconnect attempt of binding %s failed unexpectedly", st.binding)
            raise ConnectionLostError(f"reconnecting failed: {exc!r}", binding=st.binding) from exc
        try:
            protocol = conn.protocol
            assert protocol is not None
            if protocol.modern and self._wants_logs(protocol):
                conn.protocol = attrs.evolve(protocol, log_level=st.definition.log_level)
            # Listen before listing, as at connect: no change may fall between.
            self._subscriptions.restore(conn, deadline)
            catalog = self._refresh.discover(conn, deadline, self._closing_token, op="reconnect")
            self._enable_logs(conn, deadline, self._closing_token)
        except BaseException:
            conn.close(0.5)
            raise

        def restored() -> None:
            st.emit(
                ConnectionRestored(
                    binding=st.binding,
                    server=protocol.server,
                    drift=_drift(st.first_server, protocol.server),
                    adopted=st.catalogs.adopted.generation,
                    generation=catalog.generation,
                    at=time.time(),
                )
            )
            st.catalogs.publish(catalog)

        # Not installed when close() ran during the attempt.
        installed, refresh_now = st.install(conn, restored)
        if not installed:
            conn.close(0.5)
            return
        if refresh_now:
            self._refresh.trigger()
        self._watch(conn)

    # -- keepalive -------------------------------------------------------------

    def _watch(self, conn: Connection) -> None:
        """Start the keepalive of ``conn``, now live (when the definition has one)."""
        st = self._st
        keepalive = st.definition.effective_keepalive
        if not keepalive:
            return
        modern = conn.protocol is not None and conn.protocol.modern
        watch = KeepaliveWatch(
            conn.session,
            lambda: conn.protocol.params(None) if conn.protocol is not None else None,
            keepalive,
            # 2026-07-28 has no ping: probe as Client.ping does.
            method="server/discover" if modern else "ping",
            binding=st.binding,
            emit=st.emit,
        )
        with st.lock:
            if st.closing or st.conn is not conn:
                return  # closed or lost already: no watch for it
            old, self._keepalive = self._keepalive, watch
        if old is not None:
            old.stop()
        watch.start()  # a stop() that ran meanwhile makes this a no-op

    def _unwatch(self) -> None:
        """Stop the live connection's keepalive (lost, closing)."""
        with self._st.lock:
            watch, self._keepalive = self._keepalive, None
        if watch is not None:
            watch.stop()

    def _is_closing(self) -> bool:
        # A call, not an attribute read: mypy would narrow the flag to its
        # value at the top of the attempt, though close() may have run since.
        return self._st.closing

    def _reconnect_failed(self, exc: Error, retrying: bool) -> None:
        st = self._st
        st.attempt_failed(
            exc, retrying=retrying, announce=lambda: self._emit_lost_locked(exc, False)
        )
