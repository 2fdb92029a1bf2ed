"""What a startup failure means, said in its message when the cause is a known mistake.

One today: a Streamable HTTP POST refused (HTTP 400, 404, 405) by a URL that
looks like a legacy HTTP+SSE endpoint (``.../sse``), under a profile that
does not permit the fallback to HTTP+SSE. The plain message ("HTTP 405 and
no JSON-RPC message") does not tell the user that the server is probably a
2024-11-05 one, nor which setting would reach it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcpclient.compat import Tolerance
from mcpclient.definition import Definition
from mcpclient.errors import Error, FailureClass, error_for
from mcpclient.transports import StreamableHTTPTransport

__all__ = ["explained"]

_REFUSED = (400, 404, 405)


def _looks_like_sse(url: str) -> bool:
    path = urlsplit(url).path.rstrip("/")
    return path.endswith("/sse") or path == "/sse"


def explained(definition: Definition, exc: Error) -> Error:
    """``exc``, or an error of the same class whose message says what it likely means."""
    transport = definition.transport
    if exc.failure_class is not FailureClass.REMOTE_HTTP:
        return exc
    if not isinstance(transport, StreamableHTTPTransport) or not _looks_like_sse(transport.url):
        return exc
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    status = getattr(cause, "status", None)
    if status not in _REFUSED or definition.profile.permits(Tolerance.LEGACY_SSE):
        return exc
    error = error_for(
        exc.failure_class,
        f"{exc.message}. The URL looks like a legacy HTTP+SSE endpoint (2024-11-05),"
        f" and profile {definition.profile} does not permit falling back to HTTP+SSE;"
        " connect it with compat=PROFILE_LEGACY (or a LegacySSETransport)",
        binding=exc.binding,
        op=exc.op,
        code=exc.code,
    )
    error.__cause__ = exc
    return error
