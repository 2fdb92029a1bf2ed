"""HTTP plumbing both HTTP transports share: the one place that sends a request.

Bytes only: a request is a method, a URL on the configured origin, headers and
a body; what the body means (JSON-RPC, SSE) is decided above.

What it guarantees (DESIGN.md §5, §6, §7 "Deadlines over HTTP", "HTTP failures"),
and where each part lives:

* **One origin rule** (here and :mod:`http_origins`). Every request of a
  transport's factory goes to the configured origin (scheme, host, port); a
  URL on another origin is refused before any I/O, so the static headers and
  ``Authorization`` can only reach that origin. A factory of endpoints on many
  origins (OAuth, :meth:`HttpClientFactory.for_endpoints`) admits the URLs its
  ``admit`` rule admits and pins addresses (:mod:`http_connect`). Redirects
  are followed here, never by requests: at most 5; a POST or DELETE only
  through 307/308 (a 301/302/303 would turn it into a GET) and never to
  another origin; each hop passes the origin rule like the first, and the
  caller's headers are dropped when a GET changes origin.
* **Hardened sessions** (:mod:`http_sessions`): configuration (proxy, CA
  bundle, client certificate) resolved once per factory, TLS >= 1.2 always
  verified, keepalive, no cookies.
* **Deadlines** (:mod:`http_exchange`, :mod:`http_body`). Before response
  headers, the connect and read timeouts are the time left to the deadline
  and, on top of that, the deadline watcher shuts the connection's socket down
  at the deadline. After headers, the body readers (:func:`read_body`,
  :func:`response_chunks`) have the watcher shut a stalled or trickling body
  down and close the response, which unblocks the reading thread.
* **Classified failures** (:mod:`http_errors`, :mod:`http_failures`). Nothing
  from requests, urllib3, http.client, ssl or socket escapes: see
  :func:`request`. Whether the request was written before the connection
  failed is recorded by hooks on our own connection classes.
* **Redaction.** Messages, logs and reprs name the origin only; never a
  path, query, userinfo, header value or token. urllib3's own log records
  (which quote the request path and query) are dropped while one of our
  requests runs on the thread; exceptions from below are never chained as the
  visible cause.

Layering: transports sit below the session layer, so this module cannot import
the deadline watcher; the factory takes its ``schedule`` function
(``watcher.schedule``) as a parameter. The caller must hold a watcher
reference (``watcher.acquire()``) for the cuts to run.

Threads:
    None of its own. The I/O worker that owns a :class:`HttpSession` calls
    :func:`request` and then reads the response with
    :func:`read_body` or :func:`response_chunks` (one thread per response). The
    deadline watcher thread runs the cut callbacks. Any thread may call
    :func:`abort` or :meth:`AbortHandle.abort`.

Shutdown:
    A session is closed by its owner (``session.close()`` closes its pooled
    connections). :func:`abort` makes any read in progress return at once.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Collection, Mapping
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

import requests
import requests.structures

from mcpclient._core import redaction
from mcpclient._core.deadline import now
from mcpclient._internal.transport.http_body import read_body, response_chunks
from mcpclient._internal.transport.http_errors import HTTPAuthError, HTTPSendError, HTTPStatusError
from mcpclient._internal.transport.http_exchange import (
    AbortHandle,
    Exchange,
    Schedule,
    abort,
    close_quietly,
    thread_state,
)
from mcpclient._internal.transport.http_failures import (
    cut_error,
    deadline_error,
    send_failure,
    status_error,
)
from mcpclient._internal.transport.http_origins import check_header, origin_key, origin_of
from mcpclient._internal.transport.http_sessions import (
    HttpClientFactory,
    HttpSession,
    SessionConfig,
)
from mcpclient.errors import AuthError, ConfigError, Error, FailureClass, error_for
from mcpclient.transports import AuthProvider

__all__ = [
    "MAX_REDIRECTS",
    "AbortHandle",
    "HTTPAuthError",
    "HTTPSendError",
    "HTTPStatusError",
    "HttpClientFactory",
    "HttpSession",
    "Schedule",
    "abort",
    "origin_of",
    "read_body",
    "request",
    "response_chunks",
]

_log = logging.getLogger(__name__)

#: Redirect hops followed for one request.
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_KEEP_METHOD = frozenset({307, 308})
_METHODS = frozenset({"GET", "POST", "DELETE"})
_MAX_LOCATION = 8 * 1024


def _request_headers(
    config: SessionConfig, headers: Mapping[str, str] | None, op: str
) -> requests.structures.CaseInsensitiveDict[str]:
    """The static and per-request headers, checked (the auth ones come per hop)."""
    merged: requests.structures.CaseInsensitiveDict[str] = requests.structures.CaseInsensitiveDict()
    # Only ever called for the configured origin (see request).
    for name, value in config.headers:
        merged[name] = value
    # The static headers were checked when the factory was built.
    for name, value in (headers or {}).items():
        check_header(name, value, binding=config.binding, op=op)
        merged[name] = value
    return merged


def _with_auth(
    config: SessionConfig,
    headers: requests.structures.CaseInsensitiveDict[str],
    method: str,
    url: str,
    op: str,
) -> requests.structures.CaseInsensitiveDict[str]:
    """``headers`` plus what ``auth`` adds for this hop (a DPoP proof names the URL)."""
    if config.auth is None:
        return headers
    found = _call_auth(config, method, url, op)
    if not found:
        return headers
    merged = headers.copy()
    for name, value in found.items():
        try:
            check_header(name, value, binding=config.binding, op=op)
        except ConfigError:
            raise ConfigError(
                "the auth provider gave a header that is not a valid name with a str value"
                " free of CR, LF, NUL and other control characters; the request was not sent",
                binding=config.binding,
                op=op,
            ) from None
        merged[name] = value
        # A server may quote the token back: it is redacted from messages.
        redaction.note(value.partition(" ")[2].strip() or value)
    return merged


def _call_auth(config: SessionConfig, method: str, url: str, op: str) -> Mapping[str, str]:
    auth = config.auth
    assert auth is not None
    try:
        if isinstance(auth, AuthProvider):
            found: object = auth.headers_for(method, url)
        else:
            token = auth()
            if token is not None and not isinstance(token, str):
                raise AuthError(
                    f"the auth provider returned {type(token).__name__}, not a str token",
                    failure_class=FailureClass.AUTH_FAILED,
                    binding=config.binding,
                    op=op,
                )
            found = {"Authorization": f"Bearer {token}"} if token else {}
    except Error:
        raise
    except Exception as exc:
        raise AuthError(
            f"the auth provider raised {type(exc).__name__}",
            failure_class=FailureClass.AUTH_FAILED,
            binding=config.binding,
            op=op,
        ) from exc
    if not isinstance(found, Mapping):
        raise AuthError(
            f"the auth provider returned {type(found).__name__}, not a mapping of headers",
            failure_class=FailureClass.AUTH_FAILED,
            binding=config.binding,
            op=op,
        )
    return found


# ---------------------------------------------------------------- requests


def request(
    session: HttpSession,
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    deadline: float,
    op: str = "",
    pass_statuses: Collection[int] = (),
    idle_timeout: float | None = None,
    abort_handle: AbortHandle | None = None,
) -> requests.Response:
    """Send one request; return the response once its headers arrived (body unread).

    A GET follows 301, 302, 303, 307 and 308; a POST or DELETE only 307 and
    308 (anything else would turn it into a GET); always on the same origin,
    at most :data:`MAX_REDIRECTS` hops.

    Args:
        session: from :meth:`HttpClientFactory.new_session`.
        method: ``GET``, ``POST`` or ``DELETE``.
        url: on the configured origin (anything else is refused before I/O).
        body: the request body, sent as is (the caller sets ``Content-Type``),
            or None for none.
        headers: per-request headers (they override the static ones; the
            ``Authorization`` from ``auth`` overrides both).
        deadline: monotonic instant; ``math.inf`` only for no bound at all.
        op: the operation name for errors.
        pass_statuses: error statuses returned instead of raised (e.g. 400 or
            404, to read a JSON-RPC error body with :func:`read_body`).
        idle_timeout: after headers, the longest silence tolerated between
            body bytes (the socket read timeout); for long-lived streams.
        abort_handle: lets another thread abort the request.

    The body is always streamed: read it with :func:`read_body` or
    :func:`response_chunks`, or close it.

    Raises:
        HTTPSendError: (``transport_closed``) connection refused or reset, DNS,
            TLS or proxy failure, or aborted; ``.sent`` says whether the
            request may have been written.
        DeadlineExceededError: (``deadline``) no headers before the deadline.
        HTTPAuthError: (``auth_required``) 401/403, with ``.www_authenticate``.
        HTTPStatusError: (``remote_http``) any other status >= 300 that is not a
            followed redirect (404, 405, 429 with ``.retry_after``, 5xx, a
            refused redirect...); ``.status`` holds it.
        ProtocolError: (``server_protocol``) a URL on another origin, or a
            malformed HTTP response.
        ConfigError: a header name or value is invalid (CR, LF, NUL...); nothing
            was sent.
        AuthError: (``auth_failed``) the auth callable or provider failed.
    """
    if not isinstance(session, HttpSession):
        raise TypeError("session must come from HttpClientFactory.new_session()")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}")
    if body is not None and not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError("body must be bytes")
    if math.isnan(deadline):
        raise ValueError("deadline must be a number")
    if idle_timeout is not None and not idle_timeout > 0:
        raise ValueError("idle_timeout must be > 0")
    config = session.mcp_config
    refusal = config.refusal(url)
    if refusal is not None:
        raise error_for(FailureClass.SERVER_PROTOCOL, refusal, binding=config.binding, op=op)
    shown = config.shown if config.origin is not None else origin_of(url)
    exchange = Exchange(schedule=config.schedule, shown=shown, binding=config.binding)
    exchange.idle_timeout = idle_timeout
    exchange.pin = config.pin
    if config.schedule is None and deadline < math.inf:
        exchange.read_deadline = deadline  # no watcher: each socket read is bounded instead
    if now() >= deadline:
        raise deadline_error(exchange, op, before_headers=True)
    merged = _request_headers(config, headers, op)
    if abort_handle is not None:
        abort_handle._bind(exchange)
    timer = (
        config.schedule(deadline, lambda: exchange.cut("deadline"))
        if deadline < math.inf and config.schedule is not None
        else None
    )
    data = bytes(body) if body is not None else None
    response: requests.Response | None = None
    try:
        current = url
        hops = 0
        while True:
            sent = _with_auth(config, merged, method, current, op)
            response = _send_once(
                session,
                exchange,
                method=method,
                url=current,
                body=data,
                headers=sent,
                deadline=deadline,
                op=op,
            )
            status = response.status_code
            if status not in _REDIRECTS:
                break
            location = response.headers.get("Location")
            close_quietly(response)
            response = None
            target = _redirect_target(
                config,
                method=method,
                status=status,
                current=current,
                location=location,
                hops=hops,
                op=op,
            )
            if origin_key(target) != origin_key(current):
                # Only a GET between the endpoints of a multi-origin factory gets
                # here: what the caller gave was meant for the first origin only.
                merged = requests.structures.CaseInsensitiveDict()
            current = target
            hops += 1
        if status >= 300 and status not in pass_statuses:
            raise status_error(
                response,
                shown=exchange.shown,
                binding=config.binding,
                op=op,
                request=(method, current, sent),
            )
        if idle_timeout is not None:
            _set_read_timeout(exchange, idle_timeout)
        if not exchange.adopt(response):
            raise cut_error(exchange, op, before_headers=True)
        return response
    except BaseException:
        if response is not None:
            close_quietly(response)
        raise
    finally:
        exchange.detach()
        if timer is not None:
            timer.cancel()


def _send_once(
    session: HttpSession,
    exchange: Exchange,
    *,
    method: str,
    url: str,
    body: bytes | None,
    headers: Mapping[str, str],
    deadline: float,
    op: str,
) -> requests.Response:
    if exchange.cut_reason is not None:
        raise cut_error(exchange, op, before_headers=True)
    left = deadline - now()
    if left <= 0:
        raise deadline_error(exchange, op, before_headers=True)
    timeout = None if left == math.inf else left
    exchange.new_attempt()
    thread_state.exchange = exchange
    thread_state.quiet = True
    try:
        return session.send_one(method, url, body=body, headers=headers, timeout=timeout)
    except Exception as exc:
        raise send_failure(exc, exchange, deadline, op) from None
    finally:
        thread_state.exchange = None
        thread_state.quiet = False


def _redirect_target(
    config: SessionConfig,
    *,
    method: str,
    status: int,
    current: str,
    location: str | None,
    hops: int,
    op: str,
) -> str:
    def refuse(why: str) -> HTTPStatusError:
        return HTTPStatusError(
            f"HTTP {status} redirect from {origin_of(current)} refused: {why}",
            status=status,
            binding=config.binding,
            op=op,
        )

    if not location:
        raise refuse("no Location header")
    if hops >= MAX_REDIRECTS:
        raise refuse(f"more than {MAX_REDIRECTS} redirects")
    if method != "GET" and status not in _KEEP_METHOD:
        raise refuse(f"a {method} is only redirected by 307 or 308, never turned into a GET")
    target = _resolve_location(current, location)
    if target is None:
        raise refuse("the Location is not a valid http(s) URL")
    # The one origin rule: the configured origin, or the URL rule of a
    # multi-origin factory; a request with a body never changes origin.
    if config.origin is not None and origin_key(target) != config.origin:
        raise refuse("the Location is on another origin")
    problem = config.refusal(target)
    if problem is not None:
        raise refuse(problem)
    if method != "GET" and origin_key(target) != origin_key(current):
        raise refuse(f"a {method} is never redirected to another origin")
    return target


def _resolve_location(current: str, location: str) -> str | None:
    if len(location) > _MAX_LOCATION or any(ch in location for ch in "\r\n\x00"):
        return None
    try:
        target = urljoin(current, location.strip())
        parts: SplitResult = urlsplit(target)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    if any(ch in target for ch in " \t"):
        return None
    return urlunsplit(parts._replace(fragment=""))


def _set_read_timeout(exchange: Exchange, seconds: float) -> None:
    conn = exchange.conn
    sock = conn.sock if conn is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(seconds)
