"""HTTP plumbing both HTTP transports share: the one module that wraps requests/urllib3.

Bytes only: a request is a method, a URL on the configured origin, headers and
a body; what the body means (JSON-RPC, SSE) is decided above.

What it guarantees (DESIGN.md §5, §6, §7 "Deadlines over HTTP", "HTTP failures"):

* **One origin.** Every request goes to the configured origin (scheme, host,
  port); a URL on another origin is refused before any I/O, so the static
  headers and ``Authorization`` can only reach that origin. Redirects are
  followed here, never by requests: at most 5, same origin only, and a POST or
  DELETE only through 307/308 (a 301/302/303 would turn it into a GET).
* **Configuration resolved once per factory.** ``trust_env=False`` on every
  session; the proxy comes from the explicit ``proxy`` or from one call to
  ``requests.utils.get_environ_proxies``; the CA bundle is the explicit one,
  else ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` (read once), else certifi's.
  TLS state (an ``ssl.SSLContext``: verification always on, TLS >= 1.2, the
  bundle and client certificate loaded once) is built only for an https
  origin. Connections have TCP keepalive on. No cookies are kept.
* **Deadlines.** Before response headers, the connect and read timeouts are
  the time left to the deadline and, on top of that, the deadline watcher
  shuts the connection's socket down at the deadline. After headers, the
  body readers (:func:`read_body`, :func:`response_chunks`) have the watcher
  shut a stalled or trickling body down (``HTTPResponse.shutdown()``, urllib3
  >= 2.3) and close the response, which unblocks the reading thread.
* **Classified failures.** Nothing from requests, urllib3, http.client, ssl
  or socket escapes: see :func:`post`. Whether the request was written before
  the connection failed is recorded by hooks on our own connection classes.
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
    :func:`post`/:func:`get`/:func:`delete` and then reads the response with
    :func:`read_body` or :func:`response_chunks` (one thread per response). The
    deadline watcher thread runs the cut callbacks. Any thread may call
    :func:`abort` or :meth:`AbortHandle.abort`.

Locks:
    * ``Exchange._lock`` guards the exchange's cut reason, current connection,
      response, reader count and finished flag. Sockets are shut down and
      responses closed after it is released. The watcher and aborting threads
      only close a response no thread is reading (else the reader closes it on
      its way out), so they never wait for a reader's buffer lock.
    * ``AbortHandle._lock`` guards the handle's flag and exchange.

Shutdown:
    A session is closed by its owner (``session.close()`` closes its pooled
    connections). :func:`abort` makes any read in progress return at once.
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import http
import http.client
import http.cookiejar
import logging
import math
import os
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

import certifi
import requests
import requests.adapters
import requests.exceptions
import requests.structures
import requests.utils
import urllib3.exceptions
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.ssl_ import create_urllib3_context

from mcpclient._internal.deadline import now
from mcpclient._internal.transport.http_errors import HTTPAuthError, HTTPSendError, HTTPStatusError
from mcpclient._internal.transport.http_exchange import (
    AbortHandle,
    Exchange,
    ExchangeCutError,
    Schedule,
    TimerLike,
    abort,
    close_quietly,
    current_exchange,
    exchange_of,
    thread_state,
)
from mcpclient._internal.transport.http_origins import (
    check_header,
    origin_key,
    origin_of,
    show_origin,
)
from mcpclient._internal.version import VERSION
from mcpclient.errors import (
    AuthError,
    ConfigError,
    DeadlineExceededError,
    Error,
    FailureClass,
    LimitExceededError,
    error_for,
)
from mcpclient.transports import (
    AuthChallenge,
    AuthProvider,
    LegacySSETransport,
    StreamableHTTPTransport,
)

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
    "delete",
    "get",
    "origin_of",
    "post",
    "read_body",
    "response_chunks",
]

_log = logging.getLogger(__name__)

#: Redirect hops followed for one request.
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_KEEP_METHOD = frozenset({307, 308})
_CHUNK = 64 * 1024
_MAX_WWW_AUTHENTICATE = 8 * 1024
_MAX_DPOP_NONCE = 1024
_MAX_LOCATION = 8 * 1024
_MAX_RETRY_AFTER = 7 * 24 * 3600.0
# TCP keepalive: first probe after 30 s idle, then every 10 s, 3 misses.
_KEEPIDLE = 30
_KEEPINTVL = 10
_KEEPCNT = 3


class _HookedHTTPConnection(HTTPConnection):
    """Reports to the thread's exchange: connected, request written, awaiting headers."""

    def connect(self) -> None:
        _hook_connect(self, super().connect)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _hook_request(self, super().request, args, kwargs)

    def getresponse(self) -> Any:
        exchange = current_exchange()
        if exchange is not None:
            exchange.awaiting(self)
        return super().getresponse()


class _HookedHTTPSConnection(HTTPSConnection):
    """The https twin of :class:`_HookedHTTPConnection`."""

    def connect(self) -> None:
        _hook_connect(self, super().connect)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _hook_request(self, super().request, args, kwargs)

    def getresponse(self) -> Any:
        exchange = current_exchange()
        if exchange is not None:
            exchange.awaiting(self)
        return super().getresponse()


def _hook_connect(conn: HTTPConnection, connect: Callable[[], None]) -> None:
    exchange = current_exchange()
    if exchange is not None:
        exchange.connecting(conn)
    connect()
    if exchange is not None:
        exchange.connecting(conn)  # cut while connecting: nothing is sent


def _hook_request(
    conn: HTTPConnection,
    request: Callable[..., None],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    exchange = current_exchange()
    if exchange is not None:
        exchange.sending(conn)
    request(*args, **kwargs)
    if exchange is not None:
        exchange.written = True


class _HookedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _HookedHTTPConnection


class _HookedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HookedHTTPSConnection


_POOL_CLASSES: dict[str, type[HTTPConnectionPool]] = {
    "http": _HookedHTTPPool,
    "https": _HookedHTTPSPool,
}


def _keepalive_options() -> list[tuple[int, int, int | bytes]]:
    options: list[tuple[int, int, int | bytes]] = list(HTTPConnection.default_socket_options)
    options.append((socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1))
    idle = getattr(socket, "TCP_KEEPIDLE", None) or getattr(socket, "TCP_KEEPALIVE", None)
    if idle is not None:
        options.append((socket.IPPROTO_TCP, idle, _KEEPIDLE))
    if hasattr(socket, "TCP_KEEPINTVL"):
        options.append((socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, _KEEPINTVL))
    if hasattr(socket, "TCP_KEEPCNT"):
        options.append((socket.IPPROTO_TCP, socket.TCP_KEEPCNT, _KEEPCNT))
    return options


class _HardenedAdapter(requests.adapters.HTTPAdapter):
    """Our TLS context, keepalive and hooked connection classes; no retries."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None, socket_options: list[Any]) -> None:
        # Set before super().__init__, which calls init_poolmanager.
        self._mcp_ssl_context = ssl_context
        self._mcp_socket_options = socket_options
        super().__init__(pool_connections=2, pool_maxsize=4, max_retries=0)

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        pool_kwargs["socket_options"] = self._mcp_socket_options
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOL_CLASSES)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        fresh = proxy not in self.proxy_manager
        proxy_kwargs.setdefault("socket_options", self._mcp_socket_options)
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if fresh and not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_POOL_CLASSES)
        return manager

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> Any:
        host_params, requested = super().build_connection_pool_key_attributes(request, verify, cert)
        pool_kwargs: dict[str, Any] = dict(requested)
        for key in ("ca_certs", "ca_cert_dir", "cert_file", "key_file"):
            pool_kwargs.pop(key, None)
        pool_kwargs["cert_reqs"] = "CERT_REQUIRED"
        if host_params.get("scheme") == "https" and self._mcp_ssl_context is not None:
            pool_kwargs["ssl_context"] = self._mcp_ssl_context
        return host_params, pool_kwargs

    def close(self) -> None:
        # urllib3 2 leaves closing dropped pools to the garbage collector; close
        # the idle pooled connections now. A connection a response still holds
        # is closed with that response.
        managers = [self.poolmanager, *self.proxy_manager.values()]
        for manager in managers:
            pools = manager.pools
            for key in pools.keys():  # noqa: SIM118 - iterating the container raises
                try:
                    pool = pools[key]
                except KeyError:
                    continue
                pool.close()
        super().close()

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        # Trust anchors and the client certificate live in our context, loaded
        # once; requests would make urllib3 reload files on every connection.
        conn.cert_reqs = "CERT_REQUIRED"
        conn.ca_certs = None
        conn.ca_cert_dir = None


# ---------------------------------------------------------------- factory and sessions


class _Config:
    """What every session of one factory shares. Never shows headers or auth."""

    __slots__ = ("auth", "binding", "headers", "origin", "schedule", "shown")

    def __init__(
        self,
        *,
        origin: tuple[str, str, int],
        headers: tuple[tuple[str, str], ...],
        auth: Callable[[], str | None] | AuthProvider | None,
        binding: str,
        schedule: Schedule,
    ) -> None:
        self.origin = origin
        self.shown = show_origin(origin)
        self.headers = headers
        self.auth = auth
        self.binding = binding
        self.schedule = schedule

    def __repr__(self) -> str:
        return (
            f"<http config {self.shown} headers={len(self.headers)} auth={self.auth is not None}>"
        )


class HttpSession(requests.Session):
    """A ``requests.Session`` made by :class:`HttpClientFactory`; one per I/O worker.

    Pass it to :func:`post`/:func:`get`/:func:`delete`; close it when the
    worker exits. Not thread-safe (requests sessions are not): one thread
    sends on it at a time.
    """

    def __init__(
        self,
        config: _Config,
        *,
        proxies: Mapping[str, str],
        ssl_context: ssl.SSLContext | None,
        socket_options: list[Any],
    ) -> None:
        super().__init__()
        self.mcp_config = config
        self.trust_env = False
        self.max_redirects = 0
        self.verify = True
        self.cert = None
        self.proxies = dict(proxies)
        self.headers = requests.structures.CaseInsensitiveDict(
            {
                "User-Agent": f"mcpclient/{VERSION}",
                "Accept-Encoding": "identity",
                "Accept": "*/*",
                "Connection": "keep-alive",
            }
        )
        self.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        adapter = _HardenedAdapter(ssl_context=ssl_context, socket_options=socket_options)
        self.adapters = OrderedDict()
        self.mount("https://", adapter)
        self.mount("http://", adapter)

    def get_redirect_target(self, resp: requests.Response) -> None:
        # requests consults this even with allow_redirects=False, and then reads
        # the whole redirect body (unbounded) to prepare Response.next. Redirects
        # are ours to follow (see _request); requests never sees one.
        return None

    def __repr__(self) -> str:
        return f"<HttpSession {self.mcp_config.shown}>"


class HttpClientFactory:
    """Builds the hardened sessions of one HTTP transport (one factory per transport).

    Everything that reads the environment or files (proxy, CA bundle, client
    certificate) happens once, here.

    Args:
        url: the configured endpoint; its origin is the only one contacted.
        schedule: ``watcher.schedule`` (see the module docstring).
        binding: the binding name, for error messages.
        headers: static headers, sent to the origin only.
        auth: a callable returning a bearer token (or None for none), called
            for every request.
        ca_bundle: a PEM file or directory of trust anchors (replacing the
            default ones).
        client_cert: a PEM file with certificate and key, or a (cert, key) pair.
        proxy: an explicit proxy URL; None reads the environment once.

    Raises:
        ConfigError: an unusable URL, header, CA bundle or client certificate.

    Thread safety: :meth:`new_session` may be called from any thread.
    """

    def __init__(
        self,
        url: str,
        *,
        schedule: Schedule,
        binding: str = "",
        headers: Mapping[str, str] | None = None,
        auth: Callable[[], str | None] | AuthProvider | None = None,
        ca_bundle: str | None = None,
        client_cert: str | tuple[str, str] | None = None,
        proxy: str | None = None,
    ) -> None:
        key = origin_key(url)
        if key is None:
            raise ConfigError(
                "the URL must be an http:// or https:// URL with a host", binding=binding
            )
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise ConfigError("the URL must not carry credentials", binding=binding)
        static = tuple((headers or {}).items())
        for name, value in static:
            check_header(name, value, binding=binding, op="new")
        if auth is not None and not callable(auth) and not isinstance(auth, AuthProvider):
            raise ConfigError(
                "auth must be a callable returning a bearer token, or an auth provider",
                binding=binding,
            )
        self._url = url
        self._config = _Config(
            origin=key, headers=static, auth=auth, binding=binding, schedule=schedule
        )
        self._proxies = _resolve_proxies(url, proxy)
        self._ssl_context = (
            _tls_context(ca_bundle, client_cert, binding) if key[0] == "https" else None
        )
        self._socket_options = _keepalive_options()

    @classmethod
    def from_transport(
        cls,
        transport: StreamableHTTPTransport | LegacySSETransport,
        *,
        schedule: Schedule,
        binding: str = "",
    ) -> HttpClientFactory:
        """Build from a ``StreamableHTTPTransport`` or ``LegacySSETransport``."""
        return cls(
            transport.url,
            schedule=schedule,
            binding=binding,
            headers=transport.header_mapping,
            auth=transport.auth,
            ca_bundle=transport.ca_bundle,
            client_cert=transport.client_cert,
            proxy=transport.proxy,
        )

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` of the configured URL."""
        return self._config.shown

    def is_same_origin(self, url: str) -> bool:
        """Whether ``url`` is on the configured origin (e.g. a legacy ``endpoint``)."""
        return origin_key(url) == self._config.origin

    def new_session(self) -> HttpSession:
        """A fresh session (its own connection pool); the caller closes it."""
        return HttpSession(
            self._config,
            proxies=self._proxies,
            ssl_context=self._ssl_context,
            socket_options=self._socket_options,
        )

    def __repr__(self) -> str:
        return f"<HttpClientFactory {self._config.shown}>"


def _resolve_proxies(url: str, proxy: str | None) -> dict[str, str]:
    scheme = urlsplit(url).scheme.lower()
    if proxy:
        return {scheme: proxy}
    found = requests.utils.get_environ_proxies(url)
    chosen = requests.utils.select_proxy(url, found)
    return {scheme: chosen} if chosen else {}


def _tls_context(
    ca_bundle: str | None, client_cert: str | tuple[str, str] | None, binding: str
) -> ssl.SSLContext:
    context = create_urllib3_context(
        ssl_minimum_version=ssl.TLSVersion.TLSv1_2, cert_reqs=ssl.CERT_REQUIRED
    )
    context.check_hostname = True
    bundle = (
        ca_bundle
        or os.environ.get("REQUESTS_CA_BUNDLE")
        or os.environ.get("CURL_CA_BUNDLE")
        or certifi.where()
    )
    try:
        if os.path.isdir(bundle):
            context.load_verify_locations(capath=bundle)
        else:
            context.load_verify_locations(cafile=bundle)
    except (OSError, ssl.SSLError, ValueError):
        raise ConfigError(
            "the CA bundle cannot be loaded (not a readable PEM file or directory)",
            binding=binding,
            op="new",
        ) from None
    if client_cert is not None:
        cert, key = (client_cert, None) if isinstance(client_cert, str) else client_cert
        try:
            # A password callback that gives nothing: never prompt on a terminal.
            context.load_cert_chain(cert, key, password=lambda: b"")
        except (OSError, ssl.SSLError, ValueError):
            raise ConfigError(
                "the client certificate cannot be loaded (unreadable, encrypted or not PEM)",
                binding=binding,
                op="new",
            ) from None
    return context


def _request_headers(
    config: _Config, headers: Mapping[str, str] | None, op: str
) -> requests.structures.CaseInsensitiveDict[str]:
    """The static and per-request headers, checked (the auth ones come per hop)."""
    merged: requests.structures.CaseInsensitiveDict[str] = requests.structures.CaseInsensitiveDict()
    # Only ever called for the configured origin (see _prepare).
    for name, value in config.headers:
        merged[name] = value
    # The static headers were checked when the factory was built.
    for name, value in (headers or {}).items():
        check_header(name, value, binding=config.binding, op=op)
        merged[name] = value
    return merged


def _with_auth(
    config: _Config,
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
    return merged


def _call_auth(config: _Config, method: str, url: str, op: str) -> Mapping[str, str]:
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


def post(
    session: HttpSession,
    url: str,
    body: bytes,
    headers: Mapping[str, str] | None,
    *,
    deadline: float,
    op: str = "",
    pass_statuses: Collection[int] = (),
    idle_timeout: float | None = None,
    abort_handle: AbortHandle | None = None,
) -> requests.Response:
    """POST ``body``; return the response once its headers arrived (body unread).

    Args:
        session: from :meth:`HttpClientFactory.new_session`.
        url: on the configured origin (anything else is refused before I/O).
        body: the request body, sent as is (the caller sets ``Content-Type``).
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
    return _request(
        session,
        "POST",
        url,
        body,
        headers,
        deadline=deadline,
        op=op,
        pass_statuses=pass_statuses,
        idle_timeout=idle_timeout,
        abort_handle=abort_handle,
    )


def get(
    session: HttpSession,
    url: str,
    headers: Mapping[str, str] | None,
    *,
    deadline: float,
    op: str = "",
    pass_statuses: Collection[int] = (),
    idle_timeout: float | None = None,
    abort_handle: AbortHandle | None = None,
) -> requests.Response:
    """GET; like :func:`post` (301/302/303 are followed too, on the same origin)."""
    return _request(
        session,
        "GET",
        url,
        None,
        headers,
        deadline=deadline,
        op=op,
        pass_statuses=pass_statuses,
        idle_timeout=idle_timeout,
        abort_handle=abort_handle,
    )


def delete(
    session: HttpSession,
    url: str,
    headers: Mapping[str, str] | None,
    *,
    deadline: float,
    op: str = "",
    pass_statuses: Collection[int] = (),
    abort_handle: AbortHandle | None = None,
) -> requests.Response:
    """DELETE (the legacy session end); like :func:`post`."""
    return _request(
        session,
        "DELETE",
        url,
        None,
        headers,
        deadline=deadline,
        op=op,
        pass_statuses=pass_statuses,
        idle_timeout=None,
        abort_handle=abort_handle,
    )


def _request(
    session: HttpSession,
    method: str,
    url: str,
    body: bytes | None,
    headers: Mapping[str, str] | None,
    *,
    deadline: float,
    op: str,
    pass_statuses: Collection[int],
    idle_timeout: float | None,
    abort_handle: AbortHandle | None,
) -> requests.Response:
    if not isinstance(session, HttpSession):
        raise TypeError("session must come from HttpClientFactory.new_session()")
    if body is not None and not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError("body must be bytes")
    if math.isnan(deadline):
        raise ValueError("deadline must be a number")
    if idle_timeout is not None and not idle_timeout > 0:
        raise ValueError("idle_timeout must be > 0")
    config = session.mcp_config
    if origin_key(url) != config.origin:
        raise error_for(
            FailureClass.SERVER_PROTOCOL,
            f"refusing to send a request to another origin than {config.shown}",
            binding=config.binding,
            op=op,
        )
    exchange = Exchange(schedule=config.schedule, shown=config.shown, binding=config.binding)
    exchange.idle_timeout = idle_timeout
    if now() >= deadline:
        raise _deadline_error(exchange, op, before_headers=True)
    merged = _request_headers(config, headers, op)
    if abort_handle is not None:
        abort_handle._bind(exchange)
    timer = (
        config.schedule(deadline, lambda: exchange.cut("deadline")) if deadline < math.inf else None
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
            current = _redirect_target(
                config,
                method=method,
                status=status,
                current=current,
                location=location,
                hops=hops,
                op=op,
            )
            hops += 1
        if status >= 300 and status not in pass_statuses:
            raise _status_error(response, config, op, request=(method, current, sent))
        if idle_timeout is not None:
            _set_read_timeout(exchange, idle_timeout)
        if not exchange.adopt(response):
            raise _cut_error(exchange, op, before_headers=True)
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
        raise _cut_error(exchange, op, before_headers=True)
    left = deadline - now()
    if left <= 0:
        raise _deadline_error(exchange, op, before_headers=True)
    timeout = None if left == math.inf else left
    exchange.new_attempt()
    thread_state.exchange = exchange
    thread_state.quiet = True
    try:
        return session.request(
            method,
            url,
            data=body,
            headers=headers,
            timeout=(timeout, timeout),
            allow_redirects=False,
            stream=True,
        )
    except Exception as exc:
        raise _send_failure(exc, exchange, deadline, op) from None
    finally:
        thread_state.exchange = None
        thread_state.quiet = False


def _redirect_target(
    config: _Config,
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
            f"HTTP {status} redirect from {config.shown} refused: {why}",
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
    if origin_key(target) != config.origin:
        raise refuse("the Location is on another origin")
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


def _status_error(
    response: requests.Response,
    config: _Config,
    op: str,
    *,
    request: tuple[str, str, Mapping[str, str]] | None = None,
) -> Error:
    status = response.status_code
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    text = f"HTTP {status} {phrase}".rstrip() + f" from {config.shown}"
    headers = response.headers
    if status in (401, 403):
        header = headers.get("WWW-Authenticate")
        www_authenticate = header[:_MAX_WWW_AUTHENTICATE] if header else None
        challenge = None
        if request is not None:
            method, url, sent = request
            nonce = headers.get("DPoP-Nonce")
            challenge = AuthChallenge(
                status=status,
                www_authenticate=www_authenticate,
                dpop_nonce=nonce[:_MAX_DPOP_NONCE] if nonce else None,
                method=method,
                url=url,
                protocol_version=sent.get("MCP-Protocol-Version"),
                sent_authorization=sent.get("Authorization"),
            )
        return HTTPAuthError(
            text,
            status=status,
            www_authenticate=www_authenticate,
            challenge=challenge,
            binding=config.binding,
            op=op,
        )
    return HTTPStatusError(
        text,
        status=status,
        retry_after=_retry_after(headers.get("Retry-After")),
        binding=config.binding,
        op=op,
    )


def _retry_after(value: str | None) -> float | None:
    if not value or len(value) > 64:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(int(value)), _MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    try:
        seconds = when.timestamp() - time.time()
    except (OverflowError, OSError, ValueError):
        return None
    return min(max(0.0, seconds), _MAX_RETRY_AFTER)


# ---------------------------------------------------------------- failure classification


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps (causes, contexts, args, urllib3 ``reason``)."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 32:
        item = todo.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        nested: list[object] = [item.__cause__, item.__context__, getattr(item, "reason", None)]
        nested.extend(item.args)
        todo.extend(n for n in nested if isinstance(n, BaseException))


def _find(
    exc: BaseException, kinds: type[BaseException] | tuple[type[BaseException], ...]
) -> BaseException | None:
    for item in _chain(exc):
        if isinstance(item, kinds):
            return item
    return None


_CONNECT_PHASE: tuple[type[BaseException], ...] = (
    urllib3.exceptions.NewConnectionError,
    urllib3.exceptions.NameResolutionError,
    urllib3.exceptions.ConnectTimeoutError,
    socket.gaierror,
    ConnectionRefusedError,
    ssl.SSLError,
    requests.exceptions.ConnectTimeout,
    requests.exceptions.SSLError,
    requests.exceptions.ProxyError,
)


def _sent(exchange: Exchange, exc: BaseException) -> bool:
    if exchange.request_started:
        return exchange.written
    # Our hooks never saw the request start: it failed while connecting, or a
    # pool without hooks (SOCKS) was used, where only the kind of error tells.
    return _find(exc, _CONNECT_PHASE) is None


def _cut_error(exchange: Exchange, op: str, *, before_headers: bool) -> Error:
    if exchange.cut_reason == "deadline":
        return _deadline_error(exchange, op, before_headers=before_headers)
    return HTTPSendError(
        f"the request to {exchange.shown} was aborted",
        sent=exchange.written or not before_headers,
        aborted=True,
        binding=exchange.binding,
        op=op,
    )


def _deadline_error(exchange: Exchange, op: str, *, before_headers: bool) -> Error:
    what = "no response headers" if before_headers else "the response body did not end"
    return DeadlineExceededError(
        f"{what} from {exchange.shown} within the deadline",
        failure_class=FailureClass.DEADLINE,
        binding=exchange.binding,
        op=op,
    )


def _send_failure(exc: BaseException, exchange: Exchange, deadline: float, op: str) -> Error:
    """Translate what ``session.request`` raised; never quotes the exception."""
    shown, binding = exchange.shown, exchange.binding
    if isinstance(exc, Error):
        return exc
    if exchange.cut_reason is not None or isinstance(exc, ExchangeCutError):
        return _cut_error(exchange, op, before_headers=True)
    sent = _sent(exchange, exc)

    def lost(text: str, *, was_sent: bool = sent) -> HTTPSendError:
        return HTTPSendError(text, sent=was_sent, binding=binding, op=op)

    tls = _find(exc, (ssl.SSLError, ssl.CertificateError))
    if tls is not None or isinstance(exc, requests.exceptions.SSLError):
        return lost(f"TLS with {shown} failed: {_tls_detail(tls)}", was_sent=exchange.written)
    if isinstance(exc, requests.exceptions.ProxyError):
        return lost(f"the proxy for {shown} failed", was_sent=exchange.written)
    if isinstance(
        exc,
        (
            requests.exceptions.InvalidURL,
            requests.exceptions.InvalidSchema,
            requests.exceptions.MissingSchema,
            requests.exceptions.InvalidProxyURL,
        ),
    ):
        return ConfigError(
            f"cannot send to {shown}: the URL or proxy is not usable ({type(exc).__name__})",
            binding=binding,
            op=op,
        )
    if _find(exc, (urllib3.exceptions.NameResolutionError, socket.gaierror)) is not None:
        return lost(f"cannot resolve the host of {shown}", was_sent=False)
    refused = _find(exc, ConnectionRefusedError)
    if refused is not None:
        return lost(f"connection to {shown} refused", was_sent=False)
    if _timed_out(exc):
        if now() >= deadline - 0.05:
            return _deadline_error(exchange, op, before_headers=True)
        return lost(f"the connection to {shown} timed out")
    if isinstance(exc, requests.exceptions.InvalidHeader) or _find(
        exc, urllib3.exceptions.HeaderParsingError
    ):
        if exchange.written:
            return error_for(
                FailureClass.SERVER_PROTOCOL,
                f"{shown} sent invalid response headers",
                binding=binding,
                op=op,
            )
        return ConfigError(f"a request header for {shown} is invalid", binding=binding, op=op)
    malformed = _find(exc, http.client.HTTPException)
    if malformed is not None and not isinstance(
        malformed, http.client.RemoteDisconnected | http.client.IncompleteRead
    ):
        return error_for(
            FailureClass.SERVER_PROTOCOL,
            f"{shown} sent a malformed HTTP response ({type(malformed).__name__})",
            binding=binding,
            op=op,
        )
    if _find(exc, http.client.RemoteDisconnected) is not None:
        return lost(f"{shown} closed the connection without a response")
    for item in _chain(exc):
        if isinstance(item, OSError) and isinstance(item.errno, int):
            name = errno.errorcode.get(item.errno, str(item.errno))
            return lost(f"the connection to {shown} failed ({name})")
    return lost(f"the HTTP request to {shown} failed ({type(exc).__name__})")


def _timed_out(exc: BaseException) -> bool:
    # urllib3's NewConnectionError subclasses ConnectTimeoutError: not a timeout.
    return any(
        isinstance(
            item,
            requests.exceptions.Timeout | urllib3.exceptions.TimeoutError | TimeoutError,
        )
        and not isinstance(item, urllib3.exceptions.NewConnectionError)
        for item in _chain(exc)
    )


def _tls_detail(tls: BaseException | None) -> str:
    if isinstance(tls, ssl.SSLCertVerificationError):
        detail = tls.verify_message or "certificate verify failed"
        return f"certificate verify failed ({detail})"
    if isinstance(tls, ssl.CertificateError):
        return "the certificate does not match the host"
    if isinstance(tls, ssl.SSLError):
        reason = tls.reason if isinstance(tls.reason, str) else None
        return f"handshake failed ({reason})" if reason else "handshake failed"
    return "handshake failed"


def _read_failure(exc: BaseException, exchange: Exchange, deadline: float, op: str) -> Error:
    shown, binding = exchange.shown, exchange.binding
    if isinstance(exc, Error):
        return exc
    if exchange.cut_reason is not None:
        return _cut_error(exchange, op, before_headers=False)
    if _timed_out(exc):
        if now() >= deadline:
            return _deadline_error(exchange, op, before_headers=False)
        if exchange.idle_timeout is not None:
            return HTTPSendError(
                f"no data from {shown} for {exchange.idle_timeout:g} s",
                sent=True,
                binding=binding,
                op=op,
            )
        return HTTPSendError(f"reading from {shown} timed out", sent=True, binding=binding, op=op)
    if _find(exc, urllib3.exceptions.DecodeError) is not None:
        return error_for(
            FailureClass.SERVER_PROTOCOL,
            f"the response body from {shown} cannot be decoded (Content-Encoding)",
            binding=binding,
            op=op,
        )
    if _find(exc, (ssl.SSLError,)) is not None:
        return HTTPSendError(
            f"TLS with {shown} failed mid-response", sent=True, binding=binding, op=op
        )
    return HTTPSendError(
        f"the connection to {shown} broke while reading the response",
        sent=True,
        binding=binding,
        op=op,
    )


# ---------------------------------------------------------------- bodies


class _Body:
    """Reads one response body within a deadline; the reader owns the response."""

    __slots__ = ("_deadline", "_exchange", "_op", "_response", "_timer")

    def __init__(
        self,
        response: requests.Response,
        *,
        deadline: float,
        schedule: Schedule | None,
        op: str,
    ) -> None:
        if math.isnan(deadline):
            raise ValueError("deadline must be a number")
        self._response = response
        self._exchange = exchange_of(response)
        self._deadline = deadline
        self._op = op
        self._timer: TimerLike | None = None
        if deadline < math.inf:
            schedule = schedule or self._exchange.schedule
            if schedule is None:
                raise ValueError("a finite deadline needs a schedule (watcher.schedule)")
            exchange = self._exchange
            self._timer = schedule(deadline, lambda: exchange.cut("deadline"))

    def read(self, amount: int) -> bytes:
        """Up to ``amount`` bytes; ``b""`` once the body ended cleanly."""
        exchange = self._exchange
        if now() >= self._deadline:
            exchange.cut("deadline")
        if not exchange.start_read():
            raise _cut_error(exchange, self._op, before_headers=False)
        thread_state.quiet = True
        try:
            data = self._response.raw.read1(amount, decode_content=True)
        except Exception as exc:
            failure: Error | None = _read_failure(exc, exchange, self._deadline, self._op)
        else:
            failure = None
        finally:
            thread_state.quiet = False
            if exchange.end_read():
                close_quietly(self._response)
        if failure is not None:
            raise failure
        if exchange.cut_reason is not None:
            raise _cut_error(exchange, self._op, before_headers=False)
        if data:
            return bytes(data)
        if not exchange.finish():
            raise _cut_error(exchange, self._op, before_headers=False)
        # Clean end: the connection may be reused.
        with contextlib.suppress(Exception):
            self._response.raw.release_conn()
        close_quietly(self._response)
        return b""

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._exchange.finished:
            close_quietly(self._response)


def _content_length(response: requests.Response) -> int | None:
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        return None  # the decoded size is what counts; it is bounded while read
    value = response.headers.get("Content-Length")
    if value is None:
        return None
    sizes = {part.strip() for part in value.split(",")}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    if not (size.isascii() and size.isdigit()) or len(size) > 20:
        return None
    return int(size)


def read_body(
    response: requests.Response,
    *,
    max_bytes: int,
    deadline: float,
    schedule: Schedule | None = None,
    op: str = "",
) -> bytes:
    """Read a whole (JSON) body, bounded by ``max_bytes`` while reading.

    A ``Content-Length`` over the bound is refused before reading; a body that
    grows past it is refused as soon as it does (at most ``max_bytes + 1``
    bytes are read). The response is closed (or its connection returned to
    the pool) in every case.

    Args:
        schedule: only for a response that did not come from :func:`post` /
            :func:`get` (those carry their factory's).

    Raises:
        LimitExceededError: (``limit_exceeded``) the body is too large.
        DeadlineExceededError: the body did not end by ``deadline``.
        HTTPSendError: the connection broke, or the response was aborted.
        ProtocolError: undecodable ``Content-Encoding``.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        close_quietly(response)
        raise ValueError("max_bytes must be an int >= 0")
    exchange = exchange_of(response)
    length = _content_length(response)
    if length is not None and length > max_bytes:
        close_quietly(response)
        raise _too_big(exchange, max_bytes, op, declared=length)
    body = _Body(response, deadline=deadline, schedule=schedule, op=op)
    buffer = bytearray()
    try:
        while True:
            chunk = body.read(min(_CHUNK, max_bytes + 1 - len(buffer)))
            if not chunk:
                return bytes(buffer)
            buffer += chunk
            if len(buffer) > max_bytes:
                raise _too_big(exchange, max_bytes, op, declared=None)
    finally:
        body.close()


def _too_big(
    exchange: Exchange, max_bytes: int, op: str, *, declared: int | None
) -> LimitExceededError:
    size = f" ({declared} bytes declared)" if declared is not None else ""
    error = error_for(
        FailureClass.LIMIT_EXCEEDED,
        f"the response body from {exchange.shown} exceeds max_body_bytes ({max_bytes} bytes){size}",
        binding=exchange.binding,
        op=op,
    )
    assert isinstance(error, LimitExceededError)
    return error


def response_chunks(
    response: requests.Response,
    *,
    deadline: float,
    schedule: Schedule | None = None,
    op: str = "",
) -> Generator[bytes, None, None]:
    """Stream a body as it arrives, in chunks of at most 64 KiB.

    The deadline timer is armed when iteration starts; at the deadline a
    stalled or trickling body is shut down and the iterator raises
    :class:`DeadlineExceededError`. With ``deadline=math.inf`` (long-lived
    streams) nothing is scheduled (pass ``idle_timeout`` to :func:`get` /
    :func:`post` to bound silence). Closing the iterator (or finishing it)
    closes the response.

    Raises:
        DeadlineExceededError, HTTPSendError (also when aborted), ProtocolError.
    """
    body = _Body(response, deadline=deadline, schedule=schedule, op=op)
    try:
        while True:
            chunk = body.read(_CHUNK)
            if not chunk:
                return
            yield chunk
    finally:
        body.close()
