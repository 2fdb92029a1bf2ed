"""A binding's state machine and the slot of its one live connection.

Every part of a client (start and close, the call path, the refresh, inbound
routing, auth recovery) reads and changes the binding's lifecycle through the
one :class:`BindingState` it shares; none of them keeps its own copy.

Threads:
    None of its own. Callers, the session's reader and writer, the refresh,
    reconnect and auth-flow workers all come through here.

Locks:
    ``lock`` guards the lifecycle state and its timestamp, the connection (live
    and lost), the negotiated protocol, the recorded failure, the closing flag,
    the reconnect attempt number, the refresh deferred until ready and the
    state an auth flow returns to; the refresh part also keeps its TTL timer
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
"""

from __future__ import annotations

import threading
import time

from mcpclient._internal import redaction
from mcpclient._internal.client.catalog_store import CatalogStore
from mcpclient._internal.client.connection import Connection
from mcpclient._internal.client.secrets import redactor_for
from mcpclient._internal.deadline import now
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.protocol import Protocol
from mcpclient.calls import CancelToken
from mcpclient.catalog import Catalog, ServerIdentity
from mcpclient.definition import Definition
from mcpclient.errors import (
    DeadlineExceededError,
    Error,
    FailureClass,
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

    Thread safety: any thread; read or change the fields under ``lock``.
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
        self.lane = EventLane(self.binding)
        self.catalogs = CatalogStore(self.binding, self.emit)
        # The definition's secrets are redacted from every message while the
        # binding lives (a server may quote back what it was sent).
        self.redactor = redaction.register(redactor_for(definition))

    def forget_after_fork(self) -> None:
        """In a forked child: replace the locks (never take them) and read as closed."""
        self.lock = threading.Lock()
        self.connected = threading.Condition(self.lock)
        self.catalogs.forget_after_fork()
        self.closing = True
        self.state = State.CLOSED

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

    def wake_waiters(self) -> None:
        """Wake callers waiting for a connection (a cancel fired)."""
        with self.lock:
            self.connected.notify_all()

    def serving(
        self, op: str, deadline: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[Connection, Catalog]:
        """The live connection and the adopted catalog, or a classified refusal.

        While the binding is reconnecting, a call waits for the connection
        within its own deadline (never on a half-built connection).
        """
        handle = cancel.add_callback(self.wake_waiters) if cancel is not None else None
        try:
            with self.lock:
                while True:
                    state, conn, failure = self.state, self.conn, self.failure
                    if self.closing or state in (State.CLOSING, State.CLOSED):
                        raise ShutdownError("the binding is closed", binding=self.binding, op=op)
                    if state in SERVING and conn is not None:
                        return conn, self.catalogs.adopted
                    left = (deadline - now()) if deadline is not None else 0.0
                    if state is not State.RECONNECTING or left <= 0:
                        break
                    if cancel is not None and cancel.cancelled:
                        raise RequestCancelledError(
                            "the call was cancelled before it was sent",
                            binding=self.binding,
                            op=op,
                        )
                    self.connected.wait(left)
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        if state is State.RECONNECTING and deadline is not None:
            raise DeadlineExceededError(
                "the call's deadline passed while the binding was reconnecting",
                binding=self.binding,
                op=op,
            )
        if failure is not None:
            raise error_for(
                failure.failure_class,
                failure.message,
                binding=self.binding,
                op=op,
                code=failure.code,
            )
        raise error_for(
            FailureClass.TRANSPORT_CLOSED, f"the binding is {state}", binding=self.binding, op=op
        )

    def adopted(self, op: str) -> Catalog:
        """The adopted catalog, for local checks (refuses only a closed binding)."""
        if self.closing:
            raise ShutdownError("the binding is closed", binding=self.binding, op=op)
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
