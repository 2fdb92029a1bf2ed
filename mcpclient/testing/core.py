"""Transport-independent protocol logic of the scriptable test server.

:class:`ServerCore` takes one decoded inbound JSON-RPC message at a time
(:meth:`ServerCore.handle`, or :meth:`ServerCore.handle_bytes` for an undecoded
frame) and writes everything outbound through a :class:`Channel`. A front end
(stdio in :mod:`mcpclient.testing.server`; HTTP could be added) owns the I/O and
the process. Standard library only; nothing here imports the rest of mcpclient,
so the server stays an independent peer of the client it tests.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TextIO, TypeGuard

from . import tools
from .catalog import (
    BUILTIN_TOOL_NAMES,
    FAMILIES,
    HELLO_TEXT,
    LOG_LEVELS,
    MRTR_PROMPT,
    MRTR_RESOURCE,
    Catalog,
    CursorError,
)

__all__ = [
    "CAPABILITY_NAMES",
    "ERAS",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Channel",
    "InboundRequest",
    "ServerConfig",
    "ServerCore",
]

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
CAPABILITY_NAMES: tuple[str, ...] = ("tools", "prompts", "resources", "logging", "completions")
ERAS: tuple[str, ...] = ("modern", "legacy", "dual")

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
LEGACY_RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_PROTOCOL_VERSION = -32022

SERVER_NAME = "mcpclient-testing"

RequestId = str | int
#: "No scripted result pending" (a scripted result may itself be JSON null).
_NOTHING: Any = object()
Handler = Callable[["InboundRequest"], None]
#: A front end's extra ``hostile`` action: returns the CallToolResult, or None if it answered.
TransportAction = Callable[
    ["ServerCore", "InboundRequest", dict[str, Any]], "dict[str, Any] | None"
]


class VersionRejects:
    """How many more version-naming requests to refuse, process-wide.

    Shared by every core made from one :class:`ServerConfig` (an HTTP server
    runs a core per legacy session), so a scripted refusal is used once per
    process, not once per session: like an old instance met once during a
    rolling deploy. Set by ``--reject-versions`` and ``mutate_catalog``'s
    ``reject_versions``.

    Thread safety: any thread.
    """

    def __init__(self) -> None:
        """No refusal pending."""
        self._lock = threading.Lock()
        self._count = 0
        self._supported: tuple[str, ...] | None = None
        self._method: str | None = None

    def set(
        self, count: int, supported: Iterable[str] | None = None, method: str | None = None
    ) -> None:
        """Refuse the next ``count`` requests (of ``method`` only, if given).

        ``supported`` replaces the versions the refusals name.
        """
        if count < 0:
            raise ValueError("reject_versions count must be >= 0")
        with self._lock:
            self._count = count
            self._supported = None if supported is None else tuple(supported)
            self._method = method

    def take(self, method: str, default: tuple[str, ...]) -> tuple[str, ...] | None:
        """Consume one refusal: the ``supported`` list to answer with, or None if none is due."""
        with self._lock:
            if self._count <= 0 or self._method not in (None, method):
                return None
            self._count -= 1
            return self._supported if self._supported is not None else default


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """Process-wide behavior of the test server (one field per CLI flag).

    See :mod:`mcpclient.testing.server` for what each knob does.
    """

    era: str = "dual"
    capabilities: tuple[str, ...] = CAPABILITY_NAMES
    server_version: str = "1.0.0"
    instructions: str | None = None
    legacy_versions: tuple[str, ...] = LEGACY_VERSIONS
    modern_versions: tuple[str, ...] = MODERN_VERSIONS
    page_size: int = 0
    catalog: Mapping[str, list[Any]] | None = None
    ttl_ms: int = 0
    log_level: str = "debug"
    exit_on_discover: bool = False
    silent_discover: bool = False
    no_initialize_answer: bool = False
    exit_after_initialize: bool = False
    record_path: str | None = None
    item_counts: Mapping[str, int] | None = None
    cursor_loop: tuple[str, ...] = ()
    endless_pages: tuple[str, ...] = ()
    huge_cursor: tuple[str, ...] = ()
    list_delay: float = 0.0
    mrtr: bool = False
    missing_lists: tuple[str, ...] = ()
    reject_versions: int = 0
    #: The process-wide refusals ``reject_versions`` starts (shared by every core).
    version_rejects: VersionRejects = dataclasses.field(
        default_factory=VersionRejects, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        """Reject values the server could not act on."""
        if self.reject_versions < 0:
            raise ValueError("reject_versions must be >= 0")
        self.version_rejects.set(self.reject_versions)
        if self.era not in ERAS:
            raise ValueError(f"era must be one of {ERAS}, not {self.era!r}")
        unknown = set(self.capabilities) - set(CAPABILITY_NAMES)
        if unknown:
            raise ValueError(f"capabilities: unknown {sorted(unknown)}")
        if not self.legacy_versions or not self.modern_versions:
            raise ValueError("legacy_versions and modern_versions must not be empty")
        if self.log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {LOG_LEVELS}")
        if self.page_size < 0 or self.ttl_ms < 0:
            raise ValueError("page_size and ttl_ms must be >= 0")
        for knob in ("cursor_loop", "endless_pages", "huge_cursor", "missing_lists"):
            unknown = set(getattr(self, knob)) - set(FAMILIES)
            if unknown:
                raise ValueError(f"{knob}: unknown families {sorted(unknown)}")
        for family, count in (self.item_counts or {}).items():
            if family not in FAMILIES:
                raise ValueError(f"item_counts: unknown family {family!r}")
            if count < 0:
                raise ValueError("item_counts must be >= 0")
        if self.list_delay < 0:
            raise ValueError("list_delay must be >= 0")


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


def _response(rid: RequestId | None, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def _valid_id(rid: object) -> TypeGuard[RequestId]:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


class _Slot:
    """The one answer a request owes; filled or skipped exactly once."""

    def __init__(self, deliver: Callable[[dict[str, Any] | None], None]) -> None:
        self._deliver = deliver
        self._used = False
        self._lock = threading.Lock()

    def fill(self, message: dict[str, Any] | None) -> None:
        with self._lock:
            if self._used:
                return
            self._used = True
        self._deliver(message)


class _DirectSink:
    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def open(self) -> _Slot:
        def deliver(message: dict[str, Any] | None) -> None:
            if message is not None:
                self._channel.send(message)

        return _Slot(deliver)


class _BatchSink:
    """Collects a batch's answers and sends them as one array once all are in."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._pending = 0
        self._sealed = False
        self._sent = False
        self._answers: list[dict[str, Any]] = []

    def open(self) -> _Slot:
        with self._lock:
            self._pending += 1
        return _Slot(self._deliver)

    def _deliver(self, message: dict[str, Any] | None) -> None:
        with self._lock:
            if message is not None:
                self._answers.append(message)
            self._pending -= 1
        self._maybe_flush()

    def seal(self) -> None:
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


_Sink = _DirectSink | _BatchSink


class InboundRequest:
    """One request from the client, from dispatch until it is answered or dropped.

    Tool code uses it to answer, to send request-scoped notifications, and to
    notice cancellation.

    Thread safety: every method may be called from any thread; the first of
    :meth:`respond`, :meth:`fail` and :meth:`drop` wins.
    """

    def __init__(
        self,
        core: ServerCore,
        rid: RequestId,
        method: str,
        params: dict[str, Any],
        *,
        era: str,
        version: str | None,
        channel: Channel,
        slot: _Slot,
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
        return token if _valid_id(token) else None

    def build_response(self, result: dict[str, Any]) -> dict[str, Any]:
        """Return the response message for ``result``, with modern-era decorations."""
        if self.era == "modern":
            meta = dict(result.get("_meta") or {})
            meta[SERVER_INFO_KEY] = self.core.server_info()
            result = {**result, "resultType": result.get("resultType", "complete"), "_meta": meta}
        return _response(self.id, result)

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
        self._finish(_response(self.id, result), force=False)

    def fail(self, code: int, message: str, data: Any = None) -> None:
        """Answer with a JSON-RPC error (unless cancelled)."""
        self._finish(_error(self.id, code, message, data), force=False)

    def drop(self) -> None:
        """Finish without answering."""
        self._finish(None, force=False)

    def _finish(self, message: dict[str, Any] | None, *, force: bool) -> bool:
        with self._lock:
            if self._finished:
                return False
            self._finished = True
        self.core._forget(self)
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


@dataclasses.dataclass
class _Listen:
    request: InboundRequest
    honoured: dict[str, Any]


@dataclasses.dataclass
class _PendingOut:
    event: threading.Event = dataclasses.field(default_factory=threading.Event)
    response: dict[str, Any] | None = None


class ServerCore:
    """The protocol engine: eras, dispatch, cancellation, server-to-client requests.

    Example:
        core = ServerCore(ServerConfig(era="legacy"), channel)
        core.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})

    Thread safety: :meth:`handle` is meant for one reader thread; tool calls run
    on their own daemon threads, and all shared state is guarded by a lock.
    """

    def __init__(self, config: ServerConfig, channel: Channel) -> None:
        """Create the engine; unsolicited messages go to ``channel``."""
        self.config = config
        self.channel = channel
        self.catalog = Catalog(
            config.catalog,
            page_size=config.page_size,
            item_counts=config.item_counts,
            cursor_loop=config.cursor_loop,
            endless_pages=config.endless_pages,
            huge_cursor=config.huge_cursor,
            mrtr=config.mrtr,
        )
        self.log_level: str = config.log_level
        # Runtime list knobs (``mutate_catalog``): seconds before each list answer,
        # and how many list requests still fail (-1: all until reset).
        self._list_delay: float = config.list_delay
        self._fail_lists = 0
        # Families whose list method answers -32601 though declared (``missing_lists``).
        self._missing_lists: frozenset[str] = frozenset(config.missing_lists)
        self._lock = threading.Lock()
        self._inflight: dict[RequestId, InboundRequest] = {}
        self._pending_out: dict[int, _PendingOut] = {}
        self._next_out_id = 1
        self._legacy_version: str | None = None
        self._resource_subscriptions: set[str] = set()
        self._listens: dict[RequestId, _Listen] = {}
        # Raw results scripted by the hostile ``script_result`` action, per method (FIFO).
        self._scripted: dict[str, list[Any]] = {}
        # ``hostile`` actions only a front end can perform (catalog.HTTP_HOSTILE_ACTIONS).
        self.transport_actions: dict[str, TransportAction] = {}
        self._record_lock = threading.Lock()
        self._record: TextIO | None = None
        if config.record_path is not None:
            self._record = open(config.record_path, "a", encoding="utf-8")  # noqa: SIM115
        self._legacy_handlers: dict[str, Handler] = {
            "tools/list": self._list("tools"),
            "tools/call": self._call_tool,
            "prompts/list": self._list("prompts"),
            "prompts/get": self._get_prompt,
            "resources/list": self._list("resources"),
            "resources/templates/list": self._list("resourceTemplates"),
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "completion/complete": self._complete,
            "logging/setLevel": self._set_level,
        }
        self._modern_handlers: dict[str, Handler] = {
            "server/discover": self._discover,
            "tools/list": self._list("tools"),
            "tools/call": self._call_tool,
            "prompts/list": self._list("prompts"),
            "prompts/get": self._get_prompt,
            "resources/list": self._list("resources"),
            "resources/templates/list": self._list("resourceTemplates"),
            "resources/read": self._read_resource,
            "completion/complete": self._complete,
            "subscriptions/listen": self._listen,
        }

    # ----------------------------------------------------------------- inbound

    def handle_bytes(self, data: bytes, channel: Channel | None = None) -> None:
        """Decode one frame (UTF-8 JSON) and handle it; undecodable frames get -32700."""
        if not data.strip():
            return
        try:
            message = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            self._write_record({"_invalid": data.decode("utf-8", "replace")})
            (channel or self.channel).send(_error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        self.handle(message, channel)

    def handle(self, message: Any, channel: Channel | None = None) -> None:
        """Handle one decoded inbound message or batch; answers go to ``channel``."""
        ch = channel or self.channel
        self._write_record(message)
        try:
            if isinstance(message, list):
                self._handle_batch(message, ch)
            else:
                self._handle_one(message, ch, _DirectSink(ch))
        except Exception:  # the server must survive any input
            ch.write_stderr(traceback.format_exc().encode("utf-8", "replace"))

    def _handle_batch(self, batch: list[Any], ch: Channel) -> None:
        with self._lock:
            version = self._legacy_version
        if version != "2025-03-26":
            ch.send(_error(None, INVALID_REQUEST, "JSON-RPC batches are not supported"))
            return
        if not batch:
            ch.send(_error(None, INVALID_REQUEST, "Empty batch"))
            return
        sink = _BatchSink(ch)
        for item in batch:
            self._handle_one(item, ch, sink)
        sink.seal()

    def _handle_one(self, message: Any, ch: Channel, sink: _Sink) -> None:
        if not isinstance(message, dict):
            sink.open().fill(_error(None, INVALID_REQUEST, "Invalid Request: not an object"))
            return
        method = message.get("method")
        has_id = "id" in message
        rid = message.get("id")
        if method is None and has_id and ("result" in message or "error" in message):
            self._handle_client_response(message)
            return
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            err_id = rid if _valid_id(rid) else None
            sink.open().fill(_error(err_id, INVALID_REQUEST, "Invalid Request"))
            return
        params = message.get("params", {})
        if not has_id:
            self._handle_notification(method, params)
            return
        if not _valid_id(rid):
            sink.open().fill(_error(None, INVALID_REQUEST, "Invalid Request: bad id"))
            return
        self._handle_request(rid, method, params, ch, sink)

    def _handle_request(
        self, rid: RequestId, method: str, params: Any, ch: Channel, sink: _Sink
    ) -> None:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            sink.open().fill(_error(rid, INVALID_PARAMS, "params must be an object"))
            return
        self._dispatch(rid, method, params, ch, sink)

    def _handle_notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            rid = params.get("requestId")
            if _valid_id(rid):
                with self._lock:
                    request = self._inflight.get(rid)
                if request is not None:
                    request.cancel()
        # notifications/initialized and everything else need no action.

    def _handle_client_response(self, message: dict[str, Any]) -> None:
        rid = message.get("id")
        with self._lock:
            pending = self._pending_out.get(rid) if isinstance(rid, int) else None
        if pending is not None:
            pending.response = message
            pending.event.set()

    # ----------------------------------------------------------------- dispatch

    def _era_of(self, method: str, params: dict[str, Any]) -> str:
        if self.config.era != "dual":
            return self.config.era
        if method == "initialize":
            return "legacy"
        if method in ("server/discover", "subscriptions/listen"):
            return "modern"
        meta = params.get("_meta")
        if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
            return "modern"
        return "legacy"

    def _dispatch(
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: _Sink
    ) -> None:
        if method == "server/discover":
            if self.config.exit_on_discover:
                ch.exit_process(1)
                return
            if self.config.silent_discover:
                return
        if self._era_of(method, params) == "modern":
            self._dispatch_modern(rid, method, params, ch, sink)
        else:
            self._dispatch_legacy(rid, method, params, ch, sink)

    def _dispatch_modern(
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: _Sink
    ) -> None:
        handler = self._modern_handlers.get(method)
        if handler is None or not self._capable(method):
            sink.open().fill(_error(rid, METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        meta = params.get("_meta")
        problem: tuple[int, str, Any] | None = None
        version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        log_level = meta.get(LOG_LEVEL_KEY) if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(version, str):
            problem = (INVALID_PARAMS, f"params._meta[{PROTOCOL_VERSION_KEY!r}] is required", None)
        elif version not in self.config.modern_versions:
            data = {"supported": list(self.config.modern_versions), "requested": version}
            problem = (UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)
        elif not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
            msg = f"params._meta[{CLIENT_CAPABILITIES_KEY!r}] is required"
            problem = (INVALID_PARAMS, msg, None)
        elif log_level is not None and log_level not in LOG_LEVELS:
            problem = (INVALID_PARAMS, f"invalid log level {log_level!r}", None)
        else:
            refused = self.config.version_rejects.take(method, self.config.modern_versions)
            if refused is not None:
                data = {"supported": list(refused), "requested": version}
                problem = (UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)
        if problem is not None:
            sink.open().fill(_error(rid, *problem))
            return
        request = self._register(
            rid,
            method,
            params,
            era="modern",
            version=version,
            ch=ch,
            sink=sink,
            log_level=log_level,
        )
        self._handle_or_script(request, handler)

    def _dispatch_legacy(
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: _Sink
    ) -> None:
        if method == "initialize":
            self._initialize(rid, params, ch, sink)
            return
        with self._lock:
            version = self._legacy_version
        if method == "ping":
            sink.open().fill(_response(rid, {}))
            return
        handler = self._legacy_handlers.get(method)
        if handler is None or not self._capable(method):
            sink.open().fill(_error(rid, METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        if version is None:
            sink.open().fill(_error(rid, INVALID_REQUEST, "Server not initialized"))
            return
        request = self._register(
            rid, method, params, era="legacy", version=version, ch=ch, sink=sink, log_level=None
        )
        self._handle_or_script(request, handler)

    def _handle_or_script(self, request: InboundRequest, handler: Handler) -> None:
        """Run ``handler``, unless a ``script_result`` is pending for the request's method."""
        with self._lock:
            queue = self._scripted.get(request.method)
            scripted = queue.pop(0) if queue else _NOTHING
            if queue is not None and not queue:
                del self._scripted[request.method]
        if scripted is _NOTHING:
            handler(request)
        else:
            request.respond_raw(scripted)

    def _register(
        self,
        rid: RequestId,
        method: str,
        params: dict[str, Any],
        *,
        era: str,
        version: str | None,
        ch: Channel,
        sink: _Sink,
        log_level: str | None,
    ) -> InboundRequest:
        request = InboundRequest(
            self,
            rid,
            method,
            params,
            era=era,
            version=version,
            channel=ch,
            slot=sink.open(),
            log_level=log_level,
        )
        with self._lock:
            self._inflight[rid] = request
        return request

    def _forget(self, request: InboundRequest) -> None:
        with self._lock:
            if self._inflight.get(request.id) is request:
                del self._inflight[request.id]

    def _capable(self, method: str) -> bool:
        family = method.split("/", 1)[0]
        needed = {"completion": "completions", "logging": "logging"}.get(family, family)
        if needed in CAPABILITY_NAMES:
            return needed in self.config.capabilities
        return True

    # ----------------------------------------------------------------- shared state

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object this server reports."""
        return {"name": SERVER_NAME, "version": self.config.server_version}

    def capabilities(self, version: str | None) -> dict[str, Any]:
        """The server capabilities advertised for ``version`` (None: modern)."""
        caps: dict[str, Any] = {}
        for name in self.config.capabilities:
            if name in ("tools", "prompts"):
                caps[name] = {"listChanged": True}
            elif name == "resources":
                caps[name] = {"subscribe": True, "listChanged": True}
            elif name == "completions" and version == "2024-11-05":
                continue  # the capability did not exist yet
            else:
                caps[name] = {}
        return caps

    def script_result(self, method: str, result: Any) -> None:
        """Answer the next request of ``method`` with exactly ``result`` (queued, FIFO)."""
        with self._lock:
            self._scripted.setdefault(method, []).append(result)

    def set_fail_lists(self, count: int) -> None:
        """Make the next ``count`` list requests fail with -32603 (-1: all, until 0)."""
        if count < -1:
            raise ValueError("fail_lists must be >= -1")
        with self._lock:
            self._fail_lists = count

    def set_list_delay(self, seconds: float) -> None:
        """Make every later list request wait ``seconds`` before answering."""
        if seconds < 0:
            raise ValueError("list_delay must be >= 0")
        with self._lock:
            self._list_delay = seconds

    def set_missing_lists(self, families: Iterable[str]) -> None:
        """Make exactly ``families``' list methods answer -32601 (though declared)."""
        chosen = frozenset(families)
        unknown = chosen - set(FAMILIES)
        if unknown:
            raise ValueError(f"missing_lists: unknown families {sorted(unknown)}")
        with self._lock:
            self._missing_lists = chosen

    def _take_list_plan(self) -> tuple[bool, float]:
        """Consume one induced failure if any is pending; return it and the list delay."""
        with self._lock:
            fail = self._fail_lists != 0
            if self._fail_lists > 0:
                self._fail_lists -= 1
            return fail, self._list_delay

    def notify_list_changed(self, family: str) -> None:
        """Tell the client a list changed: unsolicited (legacy) and on listen streams (modern)."""
        method = f"notifications/{family}/list_changed"
        with self._lock:
            legacy = self._legacy_version is not None and family in self.config.capabilities
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

    def request_client(
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

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for in-flight requests to finish; True if none left."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._inflight:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def close(self) -> None:
        """Release the record file (the front end calls this before exiting)."""
        with self._record_lock:
            if self._record is not None:
                self._record.close()
                self._record = None

    def _write_record(self, message: Any) -> None:
        with self._record_lock:
            if self._record is None:
                return
            try:
                line = json.dumps(message, separators=(",", ":"))
            except (ValueError, RecursionError):
                line = json.dumps({"_unserializable": repr(message)[:1000]})
            self._record.write(line + "\n")
            self._record.flush()

    # ----------------------------------------------------------------- handlers

    def _initialize(self, rid: RequestId, params: dict[str, Any], ch: Channel, sink: _Sink) -> None:
        if self.config.no_initialize_answer:
            return
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            sink.open().fill(_error(rid, INVALID_PARAMS, "protocolVersion is required"))
            return
        supported = self.config.legacy_versions
        refused = self.config.version_rejects.take("initialize", supported)
        if refused is not None:
            # The 2025-11-25 spec's example of a version error (-32602 with data).
            data = {"supported": list(refused), "requested": requested}
            sink.open().fill(_error(rid, INVALID_PARAMS, "Unsupported protocol version", data))
            return
        version = requested if requested in supported else max(supported)
        with self._lock:
            already = self._legacy_version is not None
            if not already:
                self._legacy_version = version
        if already:
            sink.open().fill(_error(rid, INVALID_REQUEST, "Already initialized"))
            return
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": self.server_info(),
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        sink.open().fill(_response(rid, result))
        if self.config.exit_after_initialize:
            ch.exit_process(0)

    def _discover(self, request: InboundRequest) -> None:
        result: dict[str, Any] = {
            "supportedVersions": list(self.config.modern_versions),
            "capabilities": self.capabilities(None),
            "ttlMs": self.config.ttl_ms,
            "cacheScope": "public",
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        request.respond(result)

    def _cache_hints(self, request: InboundRequest, result: dict[str, Any]) -> dict[str, Any]:
        if request.era == "modern":
            result["ttlMs"] = self.config.ttl_ms
            result["cacheScope"] = "public"
        return result

    def _list(self, family: str) -> Handler:
        def handler(request: InboundRequest) -> None:
            with self._lock:
                missing = family in self._missing_lists
            if missing:
                # As the SDK's low-level server answers a method it has no handler for.
                request.fail(METHOD_NOT_FOUND, "Method not found", request.method)
                return
            # Decided on arrival, so a failure scripted before a list_changed
            # notification hits the refresh that notification triggers.
            fail, delay = self._take_list_plan()
            if delay <= 0:
                self._answer_list(request, family, fail)
                return
            # Off the reader thread: other requests (and cancellation) go on meanwhile.
            threading.Thread(
                target=self._answer_list,
                args=(request, family, fail, delay),
                name=f"testing-server-list-{request.id}",
                daemon=True,
            ).start()

        return handler

    def _answer_list(
        self, request: InboundRequest, family: str, fail: bool, delay: float = 0.0
    ) -> None:
        if delay > 0 and not request.sleep(delay):
            request.drop()  # cancelled while waiting
            return
        if fail:
            request.fail(INTERNAL_ERROR, "induced failure")
            return
        try:
            items, next_cursor = self.catalog.page(family, request.params.get("cursor"))
        except CursorError as exc:
            request.fail(INVALID_PARAMS, f"Invalid cursor: {exc}")
            return
        if family == "tools" and request.version in ("2024-11-05", "2025-03-26"):
            # Structured output arrived in 2025-06-18; strip it from the built-ins.
            for tool in items:
                if isinstance(tool, dict) and tool.get("name") in BUILTIN_TOOL_NAMES:
                    tool.pop("outputSchema", None)
        result: dict[str, Any] = {family: items}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        request.respond(self._cache_hints(request, result))

    def _call_tool(self, request: InboundRequest) -> None:
        name = request.params.get("name")
        arguments = request.params.get("arguments")
        if not isinstance(name, str):
            request.fail(INVALID_PARAMS, "name is required")
            return
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            request.fail(INVALID_PARAMS, "arguments must be an object")
            return
        if self.catalog.tool(name) is None:
            request.fail(INVALID_PARAMS, f"Unknown tool: {name}")
            return
        thread = threading.Thread(
            target=self._run_tool,
            args=(request, name, arguments),
            name=f"testing-server-call-{request.id}",
            daemon=True,
        )
        thread.start()

    def _run_tool(self, request: InboundRequest, name: str, arguments: dict[str, Any]) -> None:
        try:
            result = tools.run_tool(self, request, name, arguments)
        except Exception as exc:
            request.channel.write_stderr(traceback.format_exc().encode("utf-8", "replace"))
            request.fail(INTERNAL_ERROR, f"Internal error: {exc}")
            return
        if result is not None:
            request.respond(result)
        elif request.cancelled.is_set():
            request.drop()

    def _get_prompt(self, request: InboundRequest) -> None:
        name = request.params.get("name")
        arguments = request.params.get("arguments") or {}
        prompt = self.catalog.prompt(name) if isinstance(name, str) else None
        if prompt is None:
            request.fail(INVALID_PARAMS, f"Unknown prompt: {name}")
            return
        if not isinstance(arguments, dict) or not all(
            isinstance(v, str) for v in arguments.values()
        ):
            request.fail(INVALID_PARAMS, "arguments must map names to strings")
            return
        for arg in prompt.get("arguments") or ():
            if isinstance(arg, dict) and arg.get("required") and arg.get("name") not in arguments:
                request.fail(INVALID_PARAMS, f"Missing required argument: {arg.get('name')}")
                return
        if name == MRTR_PROMPT:
            self._off_reader(request, self._ask_prompt, arguments.get("state"))
            return
        if name == "greet":
            text = f"Hello, {arguments['name']}!"
        else:
            text = f"Prompt {name} with arguments {json.dumps(arguments, sort_keys=True)}"
        message = {"role": "user", "content": {"type": "text", "text": text}}
        result: dict[str, Any] = {"messages": [message]}
        if isinstance(prompt.get("description"), str):
            result["description"] = prompt["description"]
        request.respond(result)

    def _read_resource(self, request: InboundRequest) -> None:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        found = self.catalog.find_resource(uri)
        if found is None:
            code = INVALID_PARAMS if request.era == "modern" else LEGACY_RESOURCE_NOT_FOUND
            request.fail(code, f"Resource not found: {uri}", {"uri": uri})
            return
        _kind, entry = found
        if uri == MRTR_RESOURCE:
            self._off_reader(request, self._ask_resource, None)
            return
        if uri == "test://static/hello":
            text = HELLO_TEXT
        elif uri.startswith("test://items/"):
            text = f"Item {uri.rsplit('/', 1)[1]}"
        else:
            text = f"Contents of {uri}"
        contents: dict[str, Any] = {"uri": uri, "text": text}
        if isinstance(entry.get("mimeType"), str):
            contents["mimeType"] = entry["mimeType"]
        request.respond(self._cache_hints(request, {"contents": [contents]}))

    # The elicitation ``ask_prompt`` and ``test://ask`` make (``--mrtr``).
    _NAME_INPUT = (
        "name",
        "elicitation/create",
        {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    )

    def _off_reader(
        self,
        request: InboundRequest,
        target: Callable[[InboundRequest, Any], None],
        arg: Any,
    ) -> None:
        """Run ``target`` on its own thread (a legacy one waits for the client's answers)."""
        threading.Thread(
            target=target, args=(request, arg), name=f"testing-server-ask-{request.id}", daemon=True
        ).start()

    def _asked_name(self, request: InboundRequest, state: Any) -> str | None:
        """The name the client gave, ``stranger`` if it gave none; None if answered already."""
        required, answers = tools.ask_inputs(
            self,
            request,
            [self._NAME_INPUT],
            state=state if isinstance(state, str) else tools.DEFAULT_ASK_STATE,
        )
        if required is not None:
            request.respond(required)
            return None
        answer = (answers.get("inputResponses") or {}).get("name")
        if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
            answer = answer["result"]  # legacy: the client's response message
        content = answer.get("content") if isinstance(answer, dict) else None
        if (
            isinstance(answer, dict)
            and answer.get("action") == "accept"
            and isinstance(content, dict)
            and isinstance(content.get("name"), str)
        ):
            return str(content["name"])
        return "stranger"

    def _ask_prompt(self, request: InboundRequest, state: Any) -> None:
        name = self._asked_name(request, state)
        if name is None:
            return
        message = {"role": "user", "content": {"type": "text", "text": f"Hello, {name}!"}}
        request.respond({"messages": [message]})

    def _ask_resource(self, request: InboundRequest, _unused: Any) -> None:
        name = self._asked_name(request, None)
        if name is None:
            return
        contents = {"uri": MRTR_RESOURCE, "mimeType": "text/plain", "text": f"Hello, {name}!"}
        request.respond(self._cache_hints(request, {"contents": [contents]}))

    def _subscribe(self, request: InboundRequest) -> None:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        with self._lock:
            self._resource_subscriptions.add(uri)
        request.respond({})

    def _unsubscribe(self, request: InboundRequest) -> None:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        with self._lock:
            self._resource_subscriptions.discard(uri)
        request.respond({})

    def _set_level(self, request: InboundRequest) -> None:
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            request.fail(INVALID_PARAMS, f"invalid log level {level!r}")
            return
        with self._lock:
            self.log_level = str(level)
        request.respond({})

    def _complete(self, request: InboundRequest) -> None:
        ref = request.params.get("ref")
        argument = request.params.get("argument")
        if (
            not isinstance(ref, dict)
            or ref.get("type") not in ("ref/prompt", "ref/resource")
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
            or not isinstance(argument.get("value"), str)
        ):
            request.fail(INVALID_PARAMS, "ref and argument {name, value} are required")
            return
        candidates: list[str] = []
        if ref.get("type") == "ref/prompt" and ref.get("name") == "greet":
            if argument["name"] == "name":
                candidates = ["alice", "bob", "carol"]
        elif ref.get("uri") == "test://items/{id}" and argument["name"] == "id":
            candidates = ["1", "2", "3"]
        values = [c for c in candidates if c.startswith(argument["value"])]
        request.respond({"completion": {"values": values, "total": len(values), "hasMore": False}})

    def _listen(self, request: InboundRequest) -> None:
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
