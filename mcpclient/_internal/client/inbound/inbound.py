"""Inbound routing: what the server sends unasked.

Notifications (catalog changes, logs, resource updates, listen
acknowledgements), server-to-client requests (legacy era) and the modern
listen stream that carries them (:class:`Subscriptions`).

Threads:
    None of its own. Everything here runs on the session's reader (stdio) or
    the HTTP stream reader and only queues work: a refresh on the refresh
    worker, an event or a log on the event lane, a request on the handler
    threads of :class:`Interactions`. Re-opening an ended listen stream runs
    on the thread that saw it end.

Locks:
    None of its own: the state is read under ``BindingState.lock``; the
    subscriptions keep their own lock.

Shutdown:
    ``close()`` closes the subscriptions (the listen stream ends); a
    notification that arrives after is dropped because the binding no longer
    serves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from mcpclient._internal.client.catalog.catalog_refresh import CatalogRefresh
from mcpclient._internal.client.inbound.hosted_tasks import HostedTasks
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.inbound.notifications import log_delivery, safe_uri
from mcpclient._internal.client.inbound.subscriptions import ACKNOWLEDGED, Subscriptions
from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.client.state import SERVING, BindingState
from mcpclient._internal.wire.tasks import TASKS_VERSION
from mcpclient.calls import CancelToken
from mcpclient.definition import TASKS_EXTENSION
from mcpclient.errors import Error, RequestCancelledError
from mcpclient.events import ResourceUpdated

__all__ = ["Inbound"]

_log = logging.getLogger(__name__)

#: Task status pushes: 2025-11-25's, and the 2026-07-28 extension's.
_TASK_STATUS = frozenset({"notifications/tasks/status", "notifications/tasks"})
_FAMILIES = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Inbound:
    """Routes a binding's notifications and server requests. Thread safety: any thread."""

    def __init__(
        self, state: BindingState, interactions: Interactions, refresh: CatalogRefresh
    ) -> None:
        self._st = state
        self._interactions = interactions
        self._refresh = refresh
        self.subscriptions = Subscriptions(state.binding, self._listen_ended)
        definition = state.definition
        allowed: set[str] = set()
        if definition.uses_extension(TASKS_EXTENSION):
            caps = definition.capabilities
            allowed = {
                n
                for n, on in (("elicitation", caps.elicitation), ("sampling", caps.sampling))
                if on
            }
        #: Where task status notifications go (the task runner's ``on_status``).
        self.on_task_status: Callable[[dict[str, Any]], None] | None = None
        #: Client-hosted tasks (2025-11-25), when the host allows them.
        self.hosted = HostedTasks(state.binding, interactions, allowed=allowed)

    def change_subscription(
        self, uri: str, *, add: bool, deadline: float, cancel: CancelToken | None
    ) -> None:
        """(Un)subscribe ``uri`` for ``ResourceUpdated`` events (the caller's thread)."""
        st = self._st
        op = "subscribe" if add else "unsubscribe"
        conn, _ = st.serving(op, deadline, cancel)
        st.require("resources_subscribe", op, deadline, cancel)
        if cancel is not None and cancel.cancelled:
            # A (un)subscription is short and not cancelled on the wire; a
            # cancel that came first keeps it from being sent at all.
            raise RequestCancelledError(
                "the call was cancelled before it was sent", binding=st.binding, op=op
            )
        self.subscriptions.change(conn, uri, add=add, deadline=deadline)

    def _listen_ended(self, conn: Connection) -> None:
        """The modern listen stream ended on its own: open it again on a live binding."""
        st = self._st
        with st.lock:
            live = st.conn is conn and st.state in SERVING and not st.closing
        if live:
            try:
                self.subscriptions.open(conn)
            except Error as exc:
                _log.debug("binding %s: could not re-open the listen: %s", st.binding, exc)

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route one notification (reader thread: only queues work)."""
        st = self._st
        if method == ACKNOWLEDGED:
            self.subscriptions.on_acknowledged(params)
            return
        if not self.subscriptions.accepts(params):
            return  # a listen stream no longer in force (de-duplicated by id)
        family = _FAMILIES.get(method)
        if family is not None:
            if family == "resources":
                st.resource_cache.clear()
            st.catalogs.mark_stale(family)
            if st.defer_refresh():
                self._refresh.trigger()
            return
        if method == "notifications/message":
            self._on_log(params)
        elif method == "notifications/elicitation/complete":
            # 2025-11-25: a URL elicitation finished out of band. The request
            # that needed it is re-sent once the handler accepted, so there
            # is nothing left to wait for; an unknown id is ignored.
            _log.debug("binding %s: a URL elicitation completed", st.binding)
        elif method in _TASK_STATUS:
            on_status = self.on_task_status
            if on_status is not None:
                on_status(params)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                st.resource_cache.invalidate(uri)
                st.emit(ResourceUpdated(binding=st.binding, uri=safe_uri(uri), at=time.time()))

    def _on_log(self, params: dict[str, Any]) -> None:
        st = self._st
        log_handler = st.handlers.log
        if log_handler is None:
            return
        deliver = log_delivery(
            st.binding,
            params,
            st.definition.limits.max_log_message_bytes,
            log_handler,
            st.handlers.event,
        )
        if deliver is not None:
            st.lane.post(deliver, lossy=True)

    def on_server_request(
        self, request_id: Any, method: str, params: dict[str, Any], token: CancelToken
    ) -> None:
        """Runs on the reader thread: hand the request to a handler thread at once."""
        conn = self._st.conn
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
        if (
            protocol is not None
            and protocol.version == TASKS_VERSION
            and self.hosted.handles(method, params)
        ):
            self.hosted.serve(conn.session, request_id, method, params, token)
            return
        self._interactions.serve_request(conn.session, request_id, method, params, token)
