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

    def request_many(
        self,
        request: InboundRequest,
        method: str,
        params: Any,
        count: int,
        timeout: float | None = None,
    ) -> list[dict[str, Any] | None]:
        """Send ``count`` requests back to back, then wait for every answer.

        Returns the responses in the order sent (None for one unanswered when
        ``request`` is cancelled or ``timeout`` passes).
        """
        with self._lock:
            first = self._next_out_id
            self._next_out_id += count
            waiting = [_PendingOut() for _ in range(count)]
            for offset, pending in enumerate(waiting):
                self._pending_out[first + offset] = pending
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            for offset in range(count):
                message: dict[str, Any] = {"jsonrpc": "2.0", "id": first + offset, "method": method}
                if params is not None:
                    message["params"] = params
                request.channel.send(message)
            for pending in waiting:
                while not pending.event.wait(0.02):
                    if request.cancelled.is_set():
                        return [p.response for p in waiting]
                    if deadline is not None and time.monotonic() >= deadline:
                        return [p.response for p in waiting]
            return [p.response for p in waiting]
        finally:
            with self._lock:
                for offset in range(count):
                    self._pending_out.pop(first + offset, None)

    def deliver(self, message: dict[str, Any]) -> None:
        """Hand the client's response ``message`` to the request waiting for it, if any."""
        rid = message.get("id")
        with self._lock:
            pending = self._pending_out.get(rid) if isinstance(rid, int) else None
        if pending is not None:
            pending.response = message
            pending.event.set()
