"""The process-wide state of the HTTP front end.

:class:`HttpFrontEnd` holds the shared modern core, the legacy sessions and
HTTP+SSE connections (each with its own core), the one-shot knobs the hostile
actions set, the modern request-id map, and the record file.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import secrets
import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

from .config import PROTOCOL_VERSION_KEY, ServerConfig
from .core import ServerCore
from .http_channels import Collector, Discard, LegacySession, SseSession
from .http_common import HttpOptions, StatusOverride, is_request, meta_of
from .http_hostile import TRANSPORT_ACTIONS
from .inbound import Channel
from .oauth_guard import ResourceGuard

__all__ = ["HttpFrontEnd"]


class HttpFrontEnd:
    """Process-wide HTTP state: the cores, sessions, one-shot knobs and the record file.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, config: ServerConfig, options: HttpOptions) -> None:
        """Create the shared modern core; the front end records, not the cores."""
        self.config = dataclasses.replace(config, record_path=None)
        self.options = options
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._err_lock = threading.Lock()
        self._record_lock = threading.Lock()
        self._sessions: dict[str, LegacySession] = {}
        self._sse_sessions: dict[str, SseSession] = {}
        self._storm = options.session_404_storm
        self._storm_method: str | None = None  # a storm only for requests of this method
        self._override: StatusOverride | None = None
        self._hold_accepts = 0.0
        self._last_request: tuple[str, str, tuple[tuple[str, str], ...]] | None = None
        #: The latest legacy session, for requests without a session id (``--no-session-id``).
        self.sessionless: LegacySession | None = None
        self._ids = itertools.count(1)
        self._modern_ids: dict[str, str] = {}
        self._record: TextIO | None = None
        if config.record_path is not None:
            self._record = open(config.record_path, "a", encoding="utf-8")  # noqa: SIM115
        self.modern = self.make_core(Discard(self))
        #: The OAuth protection (``--oauth-*``), None when the server is open.
        self.guard = ResourceGuard(options.oauth) if options.oauth is not None else None

    def make_core(self, channel: Channel) -> ServerCore:
        """A core for one session (or the modern one), with the HTTP hostile actions."""
        core = ServerCore(self.config, channel)
        core.transport_actions.update(TRANSPORT_ACTIONS)
        return core

    # -- knobs

    def set_override(self, override: StatusOverride) -> None:
        """Answer the next HTTP request with ``override`` (the ``status`` action)."""
        with self._lock:
            self._override = override

    def take_override(self) -> StatusOverride | None:
        """Consume the pending ``status`` override, if any."""
        with self._lock:
            override, self._override = self._override, None
            return override

    def set_hold_accepts(self, seconds: float) -> None:
        """Hold every later 202 ``seconds`` (the ``hold_accepts`` action; 0 ends it)."""
        with self._lock:
            self._hold_accepts = seconds

    def hold_accepts(self) -> float:
        """How long a 202 is held now."""
        with self._lock:
            return self._hold_accepts

    def set_storm(self, count: int, method: str | None = None) -> None:
        """Answer the next ``count`` HTTP requests (of ``method`` only, if given) 404."""
        with self._lock:
            self._storm = count
            self._storm_method = method

    def take_storm(self, body: bytes) -> bool:
        """Consume one 404 of a pending storm for a request of ``body``; False if none is due."""
        with self._lock:
            if self._storm <= 0:
                return False
            method = self._storm_method
        if method is not None and _method_of(body) != method:
            return False
        with self._lock:
            if self._storm <= 0:
                return False
            self._storm -= 1
            return True

    # -- sessions

    def new_session(self) -> LegacySession:
        """Create and register a legacy session (on ``initialize``)."""
        session = LegacySession(self, secrets.token_hex(16))
        with self._lock:
            self._sessions[session.id] = session
            if self.options.no_session_id:
                self.sessionless = session
        return session

    def session(self, sid: str) -> LegacySession | None:
        """The legacy session named ``sid``, if it still exists."""
        with self._lock:
            return self._sessions.get(sid)

    def end_session(self, session: LegacySession) -> None:
        """Forget a legacy session and end its standalone stream."""
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]
        session.close()

    def new_sse_session(self) -> SseSession:
        """Create and register an HTTP+SSE connection (on ``GET /sse``)."""
        session = SseSession(self, secrets.token_hex(16))
        with self._lock:
            self._sse_sessions[session.id] = session
        return session

    def sse_session(self, sid: str) -> SseSession | None:
        """The HTTP+SSE connection named ``sid``, if still open."""
        with self._lock:
            return self._sse_sessions.get(sid)

    def end_sse_session(self, session: SseSession) -> None:
        """Forget an HTTP+SSE connection."""
        with self._lock:
            if self._sse_sessions.get(session.id) is session:
                del self._sse_sessions[session.id]

    def expire(self, session: LegacySession | SseSession) -> None:
        """Forget ``session``: later requests naming it get 404."""
        if isinstance(session, LegacySession):
            self.end_session(session)
        else:
            self.end_sse_session(session)

    # -- modern request ids (the shared core must not see two clients' equal ids)

    def track_modern(self, rid: Any) -> str:
        """Map a client's request id to a fresh core-internal one."""
        internal = f"http-{next(self._ids)}"
        with self._lock:
            self._modern_ids[json.dumps(rid)] = internal
        return internal

    def untrack_modern(self, rid: Any, internal: str) -> None:
        """Forget the mapping ``track_modern`` made (if still current)."""
        key = json.dumps(rid)
        with self._lock:
            if self._modern_ids.get(key) == internal:
                del self._modern_ids[key]

    def internal_id(self, rid: Any) -> str | None:
        """The core-internal id of a client's in-flight modern request."""
        with self._lock:
            return self._modern_ids.get(json.dumps(rid))

    def cancel_modern(self, internal: str) -> None:
        """Cancel a modern request whose client closed its response stream."""
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": internal, "reason": "response stream closed"},
        }
        self.modern.handle(cancel, Collector(self))

    # -- output

    def write_stderr(self, data: bytes) -> None:
        """Write diagnostics to the server's stderr (serialized)."""
        with self._err_lock:
            try:
                sys.stderr.buffer.write(data)
                sys.stderr.buffer.flush()
            except (OSError, ValueError):
                pass

    def record(
        self, method: str, path: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> None:
        """Append one request to the record file (format: ``docs/testing-server.md``), flushed."""
        with self._lock:
            self._last_request = (method, path, tuple(headers))
        with self._record_lock:
            if self._record is None:
                return
            entry: dict[str, Any] = {
                "method": method,
                "path": path,
                "headers": [[name, value] for name, value in headers],
            }
            if body:
                try:
                    entry["body"] = json.loads(body.decode("utf-8"))
                except (ValueError, RecursionError):
                    entry["body"] = {"_invalid": body.decode("utf-8", "replace")}
            try:
                line = json.dumps(entry)
            except (ValueError, RecursionError):
                entry["body"] = {"_unserializable": body[:1000].decode("utf-8", "replace")}
                line = json.dumps(entry)
            self._record.write(line + "\n")
            self._record.flush()

    def last_request(self) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
        """The latest request received: method, path with query, headers (``echo_request``)."""
        with self._lock:
            return self._last_request

    def close(self) -> None:
        """Release the record file (before the process exits)."""
        with self._record_lock:
            if self._record is not None:
                self._record.close()
                self._record = None

    # -- routing

    def route(self, message: Any, session_header: str | None) -> str:
        """``"init"``, ``"modern"`` or ``"legacy"`` for a POSTed message on ``/mcp``."""
        era = self.config.era
        if era == "modern":
            return "modern"
        if is_request(message) and message["method"] == "initialize":
            return "init"
        if era == "legacy":
            return "legacy"
        if is_request(message):
            method = message["method"]
            if method in ("server/discover", "subscriptions/listen"):
                return "modern"
            return "modern" if PROTOCOL_VERSION_KEY in meta_of(message.get("params")) else "legacy"
        if isinstance(message, list) or session_header is not None:
            return "legacy"
        return "modern"


def _method_of(body: bytes) -> str | None:
    """The ``method`` of a POSTed JSON-RPC request body, if it is one."""
    try:
        message = json.loads(body.decode("utf-8")) if body else None
    except (ValueError, RecursionError):
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None
