"""Server-to-client requests of the test server: sending one and waiting for its answer."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from .inbound import InboundRequest

__all__ = ["ClientRequests"]


@dataclasses.dataclass
class _PendingOut:
    event: threading.Event = dataclasses.field(default_factory=threading.Event)
    response: dict[str, Any] | None = None


class ClientRequests:
    """The server's own requests to the client (ids 1, 2, ...) still waiting for an answer.

    Thread safety: any thread.
    """

    def __init__(self) -> None:
        """No request sent yet."""
        self._lock = threading.Lock()
        self._pending_out: dict[int, _PendingOut] = {}
        self._next_out_id = 1

    def request(
        self,
        request: InboundRequest,
        method: str,
        params: Any = None,
        timeout: float | None = None,
    ) -> dict[str, Any] | None:
        """Send a server-to-client request and wait for the client's response message.

        Returns None when ``request`` is cancelled or ``timeout`` passes first.
        """
        with self._lock:
            out_id = self._next_out_id
            self._next_out_id += 1
            pending = _PendingOut()
            self._pending_out[out_id] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": out_id, "method": method}
        if params is not None:
            message["params"] = params
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            request.channel.send(message)
            while not pending.event.wait(0.02):
                if request.cancelled.is_set():
                    return None
                if deadline is not None and time.monotonic() >= deadline:
                    return None
            return pending.response
        finally:
            with self._lock:
                self._pending_out.pop(out_id, None)

    def deliver(self, message: dict[str, Any]) -> None:
        """Hand the client's response ``message`` to the request waiting for it, if any."""
        rid = message.get("id")
        with self._lock:
            pending = self._pending_out.get(rid) if isinstance(rid, int) else None
        if pending is not None:
            pending.response = message
            pending.event.set()
