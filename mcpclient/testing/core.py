"""Transport-independent protocol logic of the scriptable test server.

:class:`ServerCore` takes one decoded inbound JSON-RPC message at a time
(:meth:`ServerCore.handle`, or :meth:`ServerCore.handle_bytes` for an undecoded
frame) and writes everything outbound through a :class:`Channel`. A front end
(stdio in :mod:`mcpclient.testing.server`, HTTP in
:mod:`mcpclient.testing.http_server`) owns the I/O and the process. Standard
library only; nothing here imports the rest of mcpclient, so the server stays an
independent peer of the client it tests.

This module decodes and dispatches (eras, batches, cancellation, scripted
results); the rest lives beside it: :mod:`.config` (flags, protocol tables,
codes), :mod:`.inbound` (a request's life, channels), :mod:`.handlers` (the
method handlers), :mod:`.subscriptions` (listen streams, resource
subscriptions), :mod:`.interactions` (server-to-client requests) and
:mod:`.state` (runtime knobs, the legacy handshake).
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from .apps import read_view
from .catalog import LOG_LEVELS, Catalog
from .config import (
    CAPABILITY_NAMES,
    CLIENT_CAPABILITIES_KEY,
    ERAS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_VERSIONS,
    LOG_LEVEL_KEY,
    METHOD_NOT_FOUND,
    MODERN_VERSIONS,
    PARSE_ERROR,
    PROTOCOL_VERSION_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ServerConfig,
    advertised_capabilities,
    server_info,
)
from .eras import later
from .handlers import CatalogHandlers
from .inbound import (
    BatchSink,
    Channel,
    DirectSink,
    Handler,
    InboundRequest,
    OpenedSink,
    RequestId,
    Sink,
    jsonrpc_error,
    response,
    valid_id,
)
from .interactions import ClientRequests
from .skills import SkillStore
from .state import NOTHING, LegacyHandshake, RuntimeKnobs
from .subscriptions import Subscriptions
from .tasks import TASK_TOOL, TASKS_EXTENSION, TaskStore

__all__ = [
    "CAPABILITY_NAMES",
    "ERAS",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Channel",
    "InboundRequest",
    "ServerConfig",
    "ServerCore",
    "TransportAction",
]

#: A front end's extra ``hostile`` action: returns the CallToolResult, or None if it answered.
TransportAction = Callable[
    ["ServerCore", "InboundRequest", dict[str, Any]], "dict[str, Any] | None"
]


class ServerCore:
    """The protocol engine: eras, dispatch, cancellation, server-to-client requests.

    Example:
        core = ServerCore(ServerConfig(era="legacy"), channel)
        core.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})

    Thread safety: :meth:`handle` is meant for one reader thread; tool calls run
    on their own daemon threads, and all shared state is guarded by locks.
    """

    def __init__(self, config: ServerConfig, channel: Channel) -> None:
        """Create the engine; unsolicited messages go to ``channel``."""
        self.config = config
        self.channel = channel
        self._discovered = False  # a server/discover was answered (--ignore-pings)
        self.catalog = Catalog(
            config.catalog,
            page_size=config.page_size,
            item_counts=config.item_counts,
            cursor_loop=config.cursor_loop,
            endless_pages=config.endless_pages,
            huge_cursor=config.huge_cursor,
            mrtr=config.mrtr,
            apps=config.apps,
            extra_tools=[TASK_TOOL] if TASKS_EXTENSION in config.extensions else [],
        )
        #: The tasks extension's tasks (``tasks.py``), used when it is declared.
        self.tasks = TaskStore()
        self.knobs = RuntimeKnobs(config)
        self.handshake = LegacyHandshake(config.log_level)
        self.subscriptions = Subscriptions(config, channel, self.handshake)
        self.client_requests = ClientRequests()
        self._lock = threading.Lock()
        self._inflight: dict[RequestId, InboundRequest] = {}
        # ``hostile`` actions only a front end can perform (catalog.HTTP_HOSTILE_ACTIONS).
        self.transport_actions: dict[str, TransportAction] = {}
        self._record_lock = threading.Lock()
        self._record: TextIO | None = None
        if config.record_path is not None:
            self._record = open(config.record_path, "a", encoding="utf-8")  # noqa: SIM115
        handlers = CatalogHandlers(
            self,
            config,
            self.knobs,
            self.handshake,
            self.tasks if TASKS_EXTENSION in config.extensions else None,
        )
        self._initialize = handlers.initialize
        self._legacy_handlers: dict[str, Handler] = {
            "tools/list": handlers.list_handler("tools"),
            "tools/call": handlers.call_tool,
            "prompts/list": handlers.list_handler("prompts"),
            "prompts/get": handlers.get_prompt,
            "resources/list": handlers.list_handler("resources"),
            "resources/templates/list": handlers.list_handler("resourceTemplates"),
            "resources/read": handlers.read_resource,
            "resources/subscribe": self.subscriptions.subscribe,
            "resources/unsubscribe": self.subscriptions.unsubscribe,
            "completion/complete": handlers.complete,
            "logging/setLevel": handlers.set_level,
        }
        store = SkillStore(config.page_size) if config.skills else None
        skill_handlers: dict[str, Handler] = {}
        if store is not None:
            skill_handlers = {
                "skills/list": store.list,
                "skills/get": store.get,
                "resources/directory/read": store.directory,
            }

        def read_resource(request: InboundRequest) -> None:
            # skill:// files (--skills) and ui:// views (--apps) first, then the catalog's.
            uri = request.params.get("uri")
            if isinstance(uri, str):
                if store is not None and store.read(request, uri):
                    return
                view = read_view(uri) if config.apps else None
                if view is not None:
                    request.respond(view)
                    return
            handlers.read_resource(request)

        self._legacy_handlers["resources/read"] = read_resource
        self._legacy_handlers.update(skill_handlers)
        self._modern_handlers: dict[str, Handler] = {
            "server/discover": handlers.discover,
            "tools/list": handlers.list_handler("tools"),
            "tools/call": handlers.call_tool,
            "prompts/list": handlers.list_handler("prompts"),
            "prompts/get": handlers.get_prompt,
            "resources/list": handlers.list_handler("resources"),
            "resources/templates/list": handlers.list_handler("resourceTemplates"),
            "resources/read": handlers.read_resource,
            "completion/complete": handlers.complete,
            "subscriptions/listen": self.subscriptions.listen,
            **skill_handlers,
        }
        self._modern_handlers["resources/read"] = read_resource
        if TASKS_EXTENSION in config.extensions:
            self._modern_handlers.update(
                {
                    "tasks/get": self.tasks.get,
                    "tasks/update": self.tasks.update,
                    "tasks/cancel": self.tasks.cancel,
                }
            )

    # ----------------------------------------------------------------- inbound

    def handle_bytes(self, data: bytes, channel: Channel | None = None) -> None:
        """Decode one frame (UTF-8 JSON) and handle it; undecodable frames get -32700."""
        if not data.strip():
            return
        try:
            message = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            self._write_record({"_invalid": data.decode("utf-8", "replace")})
            (channel or self.channel).send(jsonrpc_error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        self.handle(message, channel)

    def handle(self, message: Any, channel: Channel | None = None) -> None:
        """Handle one decoded inbound message or batch; answers go to ``channel``."""
        ch = channel or self.channel
        self._write_record(message)
        if self.config.era_state.doomed:
            # --die-after-discover: FastMCP on SDK <= 1.8 dies at the line after it.
            ch.write_stderr(b"RuntimeError: Received request before initialization was complete\n")
            ch.exit_process(1)
            return
        try:
            if isinstance(message, list):
                self._handle_batch(message, ch)
            else:
                self._handle_one(message, ch, DirectSink(ch))
        except Exception:  # the server must survive any input
            ch.write_stderr(traceback.format_exc().encode("utf-8", "replace"))

    def _handle_batch(self, batch: list[Any], ch: Channel) -> None:
        version = self.handshake.version
        if version != "2025-03-26":
            ch.send(jsonrpc_error(None, INVALID_REQUEST, "JSON-RPC batches are not supported"))
            return
        if not batch:
            ch.send(jsonrpc_error(None, INVALID_REQUEST, "Empty batch"))
            return
        sink = BatchSink(ch)
        for item in batch:
            self._handle_one(item, ch, sink)
        sink.seal()

    def _handle_one(self, message: Any, ch: Channel, sink: Sink) -> None:
        if not isinstance(message, dict):
            sink.open().fill(jsonrpc_error(None, INVALID_REQUEST, "Invalid Request: not an object"))
            return
        method = message.get("method")
        has_id = "id" in message
        rid = message.get("id")
        if method is None and has_id and ("result" in message or "error" in message):
            self.client_requests.deliver(message)
            return
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            err_id = rid if valid_id(rid) else None
            sink.open().fill(jsonrpc_error(err_id, INVALID_REQUEST, "Invalid Request"))
            return
        params = message.get("params", {})
        if not has_id:
            self._handle_notification(method, params)
            return
        if not valid_id(rid):
            sink.open().fill(jsonrpc_error(None, INVALID_REQUEST, "Invalid Request: bad id"))
            return
        self._handle_request(rid, method, params, ch, sink)

    def _handle_request(
        self, rid: RequestId, method: str, params: Any, ch: Channel, sink: Sink
    ) -> None:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            sink.open().fill(jsonrpc_error(rid, INVALID_PARAMS, "params must be an object"))
            return
        self._dispatch(rid, method, params, ch, sink)

    def _handle_notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            rid = params.get("requestId")
            if valid_id(rid):
                with self._lock:
                    request = self._inflight.get(rid)
                if request is not None:
                    request.cancel()
        # notifications/initialized and everything else need no action.

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
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: Sink
    ) -> None:
        config = self.config
        if method == "server/discover":
            if config.exit_on_discover:
                ch.exit_process(1)
                return
            if config.die_after_discover:
                config.era_state.doom()
                return
            if config.silent_discover:
                return
        if config.ignore_pings and method in ("ping", "server/discover"):
            # 2026-07-28 has no ping: a keepalive probes with server/discover,
            # so only the connect's own discover is answered.
            with self._lock:
                probe = method == "ping" or self._discovered
                self._discovered = True
            if probe:
                return
        era = self._era_of(method, params)
        if config.lock_era and (method in ("initialize", "server/discover") or era == "modern"):
            locked = config.era_state.lock(era)
            if locked is not None:
                versions = config.modern_versions if locked == "modern" else config.legacy_versions
                data = {"supported": list(versions), "requested": _requested(method, params)}
                message = f"connection is serving the {locked} protocol"
                sink.open().fill(jsonrpc_error(rid, UNSUPPORTED_PROTOCOL_VERSION, message, data))
                return
        if method == "server/discover" and config.discover_delay:
            slot = sink.open()
            later(
                config.discover_delay,
                lambda: self._dispatch_modern(rid, method, params, ch, OpenedSink(slot)),
            )
            return
        if era == "modern":
            self._dispatch_modern(rid, method, params, ch, sink)
        else:
            self._dispatch_legacy(rid, method, params, ch, sink)

    def _dispatch_modern(
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: Sink
    ) -> None:
        handler = self._modern_handlers.get(method)
        if handler is None or not self._capable(method):
            sink.open().fill(jsonrpc_error(rid, METHOD_NOT_FOUND, f"Method not found: {method}"))
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
            sink.open().fill(jsonrpc_error(rid, *problem))
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
        self, rid: RequestId, method: str, params: dict[str, Any], ch: Channel, sink: Sink
    ) -> None:
        if method == "initialize":
            self._initialize(rid, params, ch, sink)
            return
        version = self.handshake.version
        if method == "ping":
            sink.open().fill(response(rid, {}))
            return
        handler = self._legacy_handlers.get(method)
        if handler is None or not self._capable(method):
            sink.open().fill(jsonrpc_error(rid, METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        if version is None:
            sink.open().fill(jsonrpc_error(rid, INVALID_REQUEST, "Server not initialized"))
            return
        request = self._register(
            rid, method, params, era="legacy", version=version, ch=ch, sink=sink, log_level=None
        )
        self._handle_or_script(request, handler)

    def _handle_or_script(self, request: InboundRequest, handler: Handler) -> None:
        """Run ``handler``, unless a ``script_result`` is pending for the request's method."""
        scripted = self.knobs.take_script(request.method)
        if scripted is NOTHING:
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
        sink: Sink,
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

    def forget(self, request: InboundRequest) -> None:
        """Drop a finished request from the in-flight table (called by the request)."""
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

    @property
    def log_level(self) -> str:
        """The legacy log threshold (``logging/setLevel``, ``--log-level`` until then)."""
        return self.handshake.log_level

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object this server reports."""
        return server_info(self.config)

    def capabilities(self, version: str | None) -> dict[str, Any]:
        """The server capabilities advertised for ``version`` (None: modern)."""
        return advertised_capabilities(self.config, version)

    def script_result(self, method: str, result: Any) -> None:
        """Answer the next request of ``method`` with exactly ``result`` (queued, FIFO)."""
        self.knobs.script_result(method, result)

    def set_fail_lists(self, count: int) -> None:
        """Make the next ``count`` list requests fail with -32603 (-1: all, until 0)."""
        self.knobs.set_fail_lists(count)

    def set_list_delay(self, seconds: float) -> None:
        """Make every later list request wait ``seconds`` before answering."""
        self.knobs.set_list_delay(seconds)

    def set_missing_lists(self, families: Iterable[str]) -> None:
        """Make exactly ``families``' list methods answer -32601 (though declared)."""
        self.knobs.set_missing_lists(families)

    def notify_list_changed(self, family: str) -> None:
        """Tell the client a list changed: unsolicited (legacy) and on listen streams (modern)."""
        self.subscriptions.notify_list_changed(family)

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to whoever subscribed to ``uri``."""
        self.subscriptions.notify_resource_updated(uri)

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
        return self.client_requests.request(request, method, params, timeout)

    def request_client_many(
        self,
        request: InboundRequest,
        method: str,
        params: Any,
        count: int,
        timeout: float | None = None,
    ) -> list[dict[str, Any] | None]:
        """Send ``count`` server-to-client requests back to back; their responses, in order."""
        return self.client_requests.request_many(request, method, params, count, timeout)

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


def _requested(method: str, params: dict[str, Any]) -> Any:
    """The protocol version a request asked for (``initialize``'s or its modern ``_meta``'s)."""
    if method == "initialize":
        return params.get("protocolVersion")
    meta = params.get("_meta")
    return meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
