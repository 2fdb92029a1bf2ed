"""Who hears of changes in the test server: legacy resource subscriptions, modern listens.

Legacy clients get unsolicited ``list_changed`` notifications once initialized
and ``resources/updated`` for the URIs they subscribed to; modern clients get
them on their open ``subscriptions/listen`` streams, as that stream's filter
allows.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from .config import INVALID_PARAMS, SUBSCRIPTION_ID_KEY, ServerConfig
from .inbound import Channel, InboundRequest, RequestId
from .state import LegacyHandshake

__all__ = ["Subscriptions"]


@dataclasses.dataclass
class _Listen:
    request: InboundRequest
    honoured: dict[str, Any]


class Subscriptions:
    """One core's subscribers, and the notifications they are owed.

    Thread safety: any thread.
    """

    def __init__(self, config: ServerConfig, channel: Channel, handshake: LegacyHandshake) -> None:
        """Unsolicited legacy notifications go to ``channel`` once ``handshake`` is done."""
        self.config = config
        self.channel = channel
        self._handshake = handshake
        self._lock = threading.Lock()
        self._resource_subscriptions: set[str] = set()
        self._listens: dict[RequestId, _Listen] = {}

    def notify_list_changed(self, family: str) -> None:
        """Tell the client a list changed: unsolicited (legacy) and on listen streams (modern)."""
        method = f"notifications/{family}/list_changed"
        legacy = self._handshake.version is not None and family in self.config.capabilities
        with self._lock:
            listens = list(self._listens.values())
        if legacy:
            self.channel.send({"jsonrpc": "2.0", "method": method})
        for listen in listens:
            if listen.honoured.get(f"{family}ListChanged"):
                listen.request.notify(method, {"_meta": {SUBSCRIPTION_ID_KEY: listen.request.id}})

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to whoever subscribed to ``uri``."""
        method = "notifications/resources/updated"
        with self._lock:
            legacy = uri in self._resource_subscriptions
            listens = list(self._listens.values())
        if legacy:
            self.channel.send({"jsonrpc": "2.0", "method": method, "params": {"uri": uri}})
        for listen in listens:
            if uri in (listen.honoured.get("resourceSubscriptions") or ()):
                params = {"uri": uri, "_meta": {SUBSCRIPTION_ID_KEY: listen.request.id}}
                listen.request.notify(method, params)

    # ----------------------------------------------------------------- handlers

    def subscribe(self, request: InboundRequest) -> None:
        """``resources/subscribe`` (legacy)."""
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        with self._lock:
            self._resource_subscriptions.add(uri)
        request.respond({})

    def unsubscribe(self, request: InboundRequest) -> None:
        """``resources/unsubscribe`` (legacy)."""
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        with self._lock:
            self._resource_subscriptions.discard(uri)
        request.respond({})

    def listen(self, request: InboundRequest) -> None:
        """``subscriptions/listen`` (modern): acknowledge, then notify until cancelled."""
        wanted = request.params.get("notifications")
        if not isinstance(wanted, dict):
            request.fail(INVALID_PARAMS, "notifications filter is required")
            return
        caps = self.config.capabilities
        honoured: dict[str, Any] = {}
        for key, family in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            if wanted.get(key) is True and family in caps:
                honoured[key] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and "resources" in caps:
            honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
        # Acknowledge before registering, so no notification precedes the ack.
        request.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID_KEY: request.id}, "notifications": honoured},
        )
        with self._lock:
            self._listens[request.id] = _Listen(request, honoured)

        def end() -> None:
            with self._lock:
                self._listens.pop(request.id, None)
            request.drop()

        request.on_cancel(end)
