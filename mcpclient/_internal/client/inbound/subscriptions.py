"""Change notifications and resource subscriptions, in both eras.

Legacy servers push ``notifications/*/list_changed`` on their own and take
``resources/subscribe`` / ``resources/unsubscribe`` requests. A modern
(2026-07-28) server sends nothing unasked: one ``subscriptions/listen``
request per binding carries every notification type and resource URI the
binding wants. When the set changes, a new listen is opened, its
acknowledgement awaited (the honoured subset is checked), and only then is
the old one cancelled; notifications are accepted only from the listen in
force (de-duplicated by ``subscriptionId``).

Locks:
    ``_lock`` guards the listen id, the URI set and the acknowledgement
    waiters; ``_change_lock`` serializes subscribe/unsubscribe so listens are
    replaced one at a time. Neither is held across a request.
"""

from __future__ import annotations

import collections
import math
import threading
from collections.abc import Callable
from typing import Any

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._core.limits import bound
from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.wire.interactions import listen_notifications, subscriptions_honoured
from mcpclient.errors import DeadlineExceededError, Error, FailureClass, ProtocolError

__all__ = ["SUBSCRIPTION_ID", "Subscriptions"]

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_REOPEN_INTERVAL = 5.0
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


class _Ack:
    __slots__ = ("acknowledged", "event", "honoured")

    def __init__(self) -> None:
        self.event = threading.Event()  # set by the acknowledgement, or the listen ending
        self.acknowledged = False
        self.honoured: dict[str, Any] = {}


class Subscriptions:
    """A binding's listen stream (modern) and subscribed URIs (both eras)."""

    def __init__(
        self, binding: str, on_listen_ended: Callable[[Connection], None] | None = None
    ) -> None:
        self._binding = binding
        # Told when the listen in force ends on its own (the server ended it,
        # or a silent stream was cut), so the binding can open it again.
        self._on_listen_ended = on_listen_ended
        self._last_reopen = -math.inf
        self._reopen_timer: watcher.Timer | None = None  # a re-open waiting on the watcher
        self._closed = False  # set by close(): no re-open is scheduled after it
        self._lock = threading.Lock()
        self._change_lock = threading.Lock()
        self._listen_id: int | None = None
        self._uris: set[str] = set()
        self._acks: dict[int, _Ack] = {}
        # Acknowledgements that arrived before their waiter was registered
        # (the reader can beat the thread that sent the listen).
        self._early: collections.OrderedDict[int, dict[str, Any]] = collections.OrderedDict()

    @property
    def uris(self) -> frozenset[str]:
        """The resource URIs subscribed to."""
        with self._lock:
            return frozenset(self._uris)

    def accepts(self, params: dict[str, Any]) -> bool:
        """Whether a notification comes from the listen in force (or carries no id)."""
        meta = params.get("_meta")
        subscription = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if subscription is None:
            return True
        with self._lock:
            return bool(subscription == self._listen_id)

    def on_acknowledged(self, params: dict[str, Any]) -> None:
        """Record a listen's acknowledgement (any listen, current or pending)."""
        meta = params.get("_meta")
        subscription = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if not isinstance(subscription, int) or isinstance(subscription, bool):
            return
        notifications = params.get("notifications")
        honoured = notifications if isinstance(notifications, dict) else {}
        with self._lock:
            ack = self._acks.get(subscription)
            if ack is None:
                self._early[subscription] = honoured
                while len(self._early) > 16:
                    self._early.popitem(last=False)
                return
        ack.honoured = honoured
        ack.acknowledged = True
        ack.event.set()

    def open(self, conn: Connection, *, deadline: float | None = None) -> None:
        """Open (or replace) the modern listen for the current URI set.

        With ``deadline``, wait for the acknowledgement and check that every
        subscribed URI is honoured; the previous listen is cancelled only after.

        Raises:
            ProtocolError: ``unsupported_protocol`` when a URI is not honoured.
            DeadlineExceededError: no acknowledgement by ``deadline``.
        """
        protocol = conn.protocol
        if protocol is None or not protocol.modern:
            return
        caps = protocol.capabilities
        with self._lock:
            uris = sorted(self._uris)
        wanted = listen_notifications(
            tools=caps.tools, prompts=caps.prompts, resources=caps.resources, uris=uris
        )
        if not wanted:
            return
        ack = _Ack()
        future = conn.session.open_stream(
            "subscriptions/listen",
            protocol.params({"notifications": wanted}),
            op="subscriptions/listen",
        )
        listen_id = future.request_id
        with self._lock:
            self._acks[listen_id] = ack
            early = self._early.pop(listen_id, None)
        if early is not None:
            ack.honoured = early
            ack.acknowledged = True
            ack.event.set()
        future.add_done_callback(lambda _f: self._forget(listen_id, conn))
        # A listen that ends (the connection lost, an error) before it was
        # acknowledged wakes the waiter at once instead of at its deadline.
        future.add_done_callback(lambda _f: ack.event.set())
        if deadline is not None:
            if not ack.event.wait(max(0.0, deadline - now())):
                conn.session.cancel(listen_id, "no acknowledgement")
                raise DeadlineExceededError(
                    "the server did not acknowledge the subscription in time",
                    binding=self._binding,
                    op="subscribe",
                )
            if not ack.acknowledged:
                error = future.exception() if future.done() else None
                if isinstance(error, Error):
                    raise error
                raise ProtocolError(
                    "the subscription ended before the server acknowledged it",
                    binding=self._binding,
                    op="subscribe",
                )
            honoured = subscriptions_honoured(ack.honoured)
            missing = [u for u in uris if not isinstance(honoured, list) or u not in honoured]
            if missing:
                conn.session.cancel(listen_id, "subscription not honoured")
                raise ProtocolError(
                    f"the server does not honour a subscription to {bound(missing[0], 200)!r}",
                    failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                    binding=self._binding,
                    op="subscribe",
                )
        with self._lock:
            previous, self._listen_id = self._listen_id, listen_id
        if previous is not None:
            conn.session.cancel(previous, "replaced by a new subscription")

    def _forget(self, listen_id: int, conn: Connection) -> None:
        with self._lock:
            self._acks.pop(listen_id, None)
            in_force = self._listen_id == listen_id
            if in_force:
                self._listen_id = None
        if in_force:
            self._reopen(conn)

    def _reopen(self, conn: Connection) -> None:
        """Tell the binding to open the listen again, at most every 5 s.

        A server that ends every listen at once cannot make this a busy loop:
        a re-open due sooner waits on the watcher for the rest of the interval.
        """
        if self._on_listen_ended is None:
            return
        with self._lock:
            due = self._last_reopen + _REOPEN_INTERVAL
            if self._reopen_timer is not None or self._closed:
                return
            if now() < due:
                self._reopen_timer = watcher.schedule(due, lambda: self._reopen_later(conn))
                return
            self._last_reopen = now()
        self._on_listen_ended(conn)

    def close(self) -> None:
        """Drop a re-open still waiting, and refuse later ones (the binding is closing)."""
        with self._lock:
            self._closed = True
            timer, self._reopen_timer = self._reopen_timer, None
        if timer is not None:
            timer.cancel()

    def _reopen_later(self, conn: Connection) -> None:
        with self._lock:
            self._reopen_timer = None
            if self._listen_id is not None:
                return  # opened meanwhile (a subscribe, a reconnect)
        self._reopen(conn)

    def restore(self, conn: Connection, deadline: float) -> None:
        """Re-establish everything on a new connection (after a reconnect)."""
        protocol = conn.protocol
        if protocol is None:
            return
        with self._lock:
            self._listen_id = None
            uris = sorted(self._uris)
        if protocol.modern:
            self.open(conn, deadline=deadline if uris else None)
            return
        for uri in uris:
            conn.request(
                "resources/subscribe", {"uri": uri}, CallContext(op="subscribe", deadline=deadline)
            )

    def change(self, conn: Connection, uri: str, *, add: bool, deadline: float) -> None:
        """Subscribe to (``add``) or unsubscribe from ``uri``, in the connection's era."""
        protocol = conn.protocol
        assert protocol is not None
        with self._change_lock:
            with self._lock:
                before = set(self._uris)
                if add:
                    self._uris.add(uri)
                else:
                    self._uris.discard(uri)
                if self._uris == before:
                    return
            try:
                if protocol.modern:
                    self.open(conn, deadline=deadline)
                else:
                    conn.request(
                        "resources/subscribe" if add else "resources/unsubscribe",
                        {"uri": uri},
                        CallContext(op="subscribe" if add else "unsubscribe", deadline=deadline),
                    )
            except BaseException:
                with self._lock:
                    self._uris = before
                raise
