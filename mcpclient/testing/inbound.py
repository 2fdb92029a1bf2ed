"""One inbound request's life in the test server, and where outbound traffic goes.

A front end implements :class:`Channel`; the core wraps each request it
dispatches in an :class:`InboundRequest`, which tool code answers through. A
request's one answer goes through a :class:`Slot` of a sink: sent at once
(:class:`DirectSink`) or gathered into a batch's array (:class:`BatchSink`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeGuard

from .catalog import LOG_LEVELS
from .config import SERVER_INFO_KEY, ServerConfig

__all__ = [
    "BatchSink",
    "Channel",
    "DirectSink",
    "Handler",
    "InboundRequest",
    "OpenedSink",
    "RequestId",
    "RequestOwner",
    "Sink",
    "Slot",
    "jsonrpc_error",
    "response",
    "valid_id",
]

RequestId = str | int
Handler = Callable[["InboundRequest"], None]


class RequestOwner(Protocol):
    """What a request uses of the ``ServerCore`` that dispatched it.

    A protocol, so that this module need not import :mod:`.core`, which imports it.
    """

    @property
    def config(self) -> ServerConfig:
        """The process-wide configuration."""

    @property
    def log_level(self) -> str:
        """The legacy log threshold (``logging/setLevel``, ``--log-level`` until then)."""

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object this server reports."""

    def forget(self, request: InboundRequest) -> None:
        """Drop a finished request from the in-flight table."""


class Channel(Protocol):
    """Where the core's outbound traffic goes; implemented by a front end.

    Thread safety: implementations must accept calls from any thread and keep
    each call's bytes contiguous on the wire.
    """

    def send(self, message: Any) -> None:
        """Serialize one JSON-RPC message (or batch array) and write it as one frame."""

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` verbatim and contiguously (hostile frames; include any newline)."""

    def close_output(self) -> None:
        """Close the outbound stream; later writes are dropped silently."""

    def write_stderr(self, data: bytes) -> None:
        """Write diagnostic bytes to the server's stderr."""

    def exit_process(self, code: int) -> None:
        """End the server process at once with ``code``, flushing nothing."""


def response(rid: RequestId | None, result: Any) -> dict[str, Any]:
    """A JSON-RPC result response."""
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def jsonrpc_error(
    rid: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    """A JSON-RPC error response."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def valid_id(rid: object) -> TypeGuard[RequestId]:
    """True for a JSON-RPC request id (a string or an integer, not a bool)."""
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


class Slot:
    """The one answer a request owes; filled or skipped exactly once."""

    def __init__(self, deliver: Callable[[dict[str, Any] | None], None]) -> None:
        self._deliver = deliver
        self._used = False
        self._lock = threading.Lock()

    def fill(self, message: dict[str, Any] | None) -> None:
        """Deliver ``message`` (None: no answer) unless the slot was used."""
        with self._lock:
            if self._used:
                return
            self._used = True
        self._deliver(message)


class DirectSink:
    """Sends each answer on the channel as soon as it is filled."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def open(self) -> Slot:
        """A slot for one more answer."""

        def deliver(message: dict[str, Any] | None) -> None:
            if message is not None:
                self._channel.send(message)

        return Slot(deliver)


class BatchSink:
    """Collects a batch's answers and sends them as one array once all are in."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._pending = 0
        self._sealed = False
        self._sent = False
        self._answers: list[dict[str, Any]] = []

    def open(self) -> Slot:
        """A slot for one more answer of the batch."""
        with self._lock:
            self._pending += 1
        return Slot(self._deliver)

    def _deliver(self, message: dict[str, Any] | None) -> None:
        with self._lock:
            if message is not None:
                self._answers.append(message)
            self._pending -= 1
        self._maybe_flush()

    def seal(self) -> None:
        """Every slot is open: send the array once the last answer is in."""
        with self._lock:
            self._sealed = True
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        with self._lock:
            if not self._sealed or self._pending or self._sent:
                return
            self._sent = True
            answers = list(self._answers)
        if answers:
            self._channel.send(answers)


class OpenedSink:
    """A sink whose one slot was opened already: a late answer keeps its place."""

    def __init__(self, slot: Slot) -> None:
        self._slot = slot

    def open(self) -> Slot:
        """The slot opened before."""
        return self._slot


Sink = DirectSink | BatchSink | OpenedSink


class InboundRequest:
    """One request from the client, from dispatch until it is answered or dropped.

    Tool code uses it to answer, to send request-scoped notifications, and to
    notice cancellation.

    Thread safety: every method may be called from any thread; the first of
    :meth:`respond`, :meth:`fail` and :meth:`drop` wins.
    """

    def __init__(
        self,
        core: RequestOwner,
        rid: RequestId,
        method: str,
        params: dict[str, Any],
        *,
        era: str,
        version: str | None,
        channel: Channel,
        slot: Slot,
        log_level: str | None,
    ) -> None:
        """Bind a request to its core, channel and answer slot (done by the core)."""
        self.core = core
        self.id = rid
        self.method = method
        self.params = params
        self.era = era
        self.version = version
        self.channel = channel
        self.log_level = log_level
        self.cancelled = threading.Event()
        self._slot = slot
        self._lock = threading.Lock()
        self._finished = False
        self._on_cancel: Callable[[], None] | None = None

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``params._meta`` (empty when absent or not an object)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> RequestId | None:
        """The request's ``_meta.progressToken``, or None when it asked for no progress."""
        token = self.meta.get("progressToken")
        return token if valid_id(token) else None

    def build_response(self, result: dict[str, Any]) -> dict[str, Any]:
        """Return the response message for ``result``, with modern-era decorations."""
        if self.era == "modern":
            meta = dict(result.get("_meta") or {})
            meta[SERVER_INFO_KEY] = self.core.server_info()
            result = {**result, "resultType": result.get("resultType", "complete"), "_meta": meta}
        return response(self.id, result)

    def respond(self, result: dict[str, Any], *, force: bool = False, duplicates: int = 0) -> None:
        """Answer with ``result`` unless cancelled (``force`` answers anyway).

        ``duplicates`` extra copies of the same response are written straight to
        the channel (the ``duplicate_response`` hostile action).
        """
        message = self.build_response(result)
        if self._finish(message, force=force):
            for _ in range(duplicates):
                self.channel.send(message)

    def respond_raw(self, result: Any) -> None:
        """Answer with ``result`` verbatim, unless cancelled: no era decorations.

        Nothing (``resultType``, ``serverInfo``) is added. Used by the hostile
        ``result`` and ``script_result`` actions.
        """
        self._finish(response(self.id, result), force=False)

    def fail(self, code: int, message: str, data: Any = None) -> None:
        """Answer with a JSON-RPC error (unless cancelled)."""
        self._finish(jsonrpc_error(self.id, code, message, data), force=False)

    def drop(self) -> None:
        """Finish without answering."""
        self._finish(None, force=False)

    def _finish(self, message: dict[str, Any] | None, *, force: bool) -> bool:
        with self._lock:
            if self._finished:
                return False
            self._finished = True
        self.core.forget(self)
        send = message is not None and (force or not self.cancelled.is_set())
        self._slot.fill(message if send else None)
        return send

    def cancel(self) -> None:
        """Mark the request cancelled (from ``notifications/cancelled``)."""
        self.cancelled.set()
        callback = self._on_cancel
        if callback is not None:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (once) when the request is cancelled."""
        self._on_cancel = callback
        if self.cancelled.is_set():
            callback()

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; return False early if the request is cancelled meanwhile."""
        return not self.cancelled.wait(max(0.0, seconds))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification on this request's channel."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.channel.send(message)

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` if the request carried a progress token."""
        token = self.progress_token
        if token is None:
            return False
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.version != "2024-11-05":
            params["message"] = message
        self.notify("notifications/progress", params)
        return True

    def log(self, level: str, data: Any, logger: str | None = None, *, force: bool = False) -> bool:
        """Send ``notifications/message`` if ``level`` passes the era's filter (or ``force``).

        Legacy: the level set by ``logging/setLevel`` (``--log-level`` until then).
        Modern: ``_meta["io.modelcontextprotocol/logLevel"]``; absent means no logs.
        """
        if not force:
            threshold = self.log_level if self.era == "modern" else self.core.log_level
            if threshold is None or "logging" not in self.core.config.capabilities:
                return False
            if LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
                return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params)
        return True
