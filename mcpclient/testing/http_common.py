"""Shared pieces of the HTTP front end: HTTP-only options, codes, paths, message helpers."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .oauth_guard import GuardConfig

__all__ = [
    "DEFAULT_RETRY_MS",
    "HEADER_MISMATCH",
    "MCP_PATH",
    "MESSAGES_PATH",
    "MISSING_CLIENT_CAPABILITY",
    "POLL_SECONDS",
    "SESSION_NOT_FOUND",
    "SESSION_REQUIRED",
    "SSE_PATH",
    "TRICKLE_INTERVAL",
    "HttpOptions",
    "StatusOverride",
    "is_request",
    "json_bytes",
    "jsonrpc_error",
    "meta_of",
    "valid_id",
    "wants_progress",
]

HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
#: Codes of the bodies answered 400/404 for a missing or unknown session.
SESSION_REQUIRED = -32000
SESSION_NOT_FOUND = -32001

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"

#: How often an idle handler checks for a closed client or a shutdown.
POLL_SECONDS = 0.05
#: Seconds between the bytes the ``trickle`` action writes.
TRICKLE_INTERVAL = 0.2
#: The ``retry`` (ms) the ``drop_stream`` action announces by default.
DEFAULT_RETRY_MS = 100


@dataclasses.dataclass(frozen=True)
class HttpOptions:
    """The HTTP-only flags (see ``docs/testing-server.md``)."""

    host: str = "127.0.0.1"
    port: int = 0
    session_404_storm: int = 0
    redirect_to: str | None = None
    endpoint_url: str | None = None
    oauth: GuardConfig | None = None
    #: Every ``GET /mcp`` is answered with this status (an app with only a POST route: 404).
    get_status: int | None = None
    #: Legacy sessions without ``Mcp-Session-Id``: requests naming none use the latest one.
    no_session_id: bool = False


@dataclasses.dataclass(frozen=True)
class StatusOverride:
    """The one-shot answer the ``status`` hostile action sets for the next HTTP request."""

    code: int
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...]


def json_bytes(message: Any) -> bytes:
    """Serialize ``message`` compactly as UTF-8 JSON."""
    try:
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates echoed back: escape them instead
        return json.dumps(message, separators=(",", ":")).encode("ascii")


def jsonrpc_error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def valid_id(rid: object) -> bool:
    """True for a JSON-RPC request id (a string or an integer, not a bool)."""
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def is_request(message: Any) -> bool:
    """True when ``message`` is a JSON-RPC request with a valid id."""
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and "id" in message
        and valid_id(message["id"])
    )


def meta_of(params: Any) -> dict[str, Any]:
    """The ``_meta`` object of ``params`` (empty when absent or not an object)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def wants_progress(params: Any) -> bool:
    """True when the request asked for progress (a valid ``progressToken``)."""
    return valid_id(meta_of(params).get("progressToken"))
