"""Building hardened sessions: one factory per HTTP transport, one session per I/O worker.

* **Configuration resolved once per factory.** ``trust_env=False`` on every
  session; the proxy comes from the explicit ``proxy`` or from one call to
  ``requests.utils.get_environ_proxies``; the CA bundle is the explicit one,
  else ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` (read once), else certifi's.
  TLS state (an ``ssl.SSLContext``: verification always on, TLS >= 1.2, the
  bundle and client certificate loaded once) is built only for an https
  origin. Connections have TCP keepalive on. No cookies are kept; requests
  never follows a redirect (the request layer does).
* **Connection hooks** (:mod:`http_connect`): every pool uses our connection
  classes, which report to the thread's exchange, pin addresses and bound
  reads when asked.
* **Two kinds of factory**: one per HTTP transport (one origin, its headers
  and auth, the environment's proxy) and :meth:`HttpClientFactory.for_endpoints`
  for endpoints on many origins (OAuth: a URL rule, pinned addresses, never a
  proxy). The TLS rule (:func:`tls_context`) and the proxy rule are the same
  functions for both.
"""

from __future__ import annotations

import http.cookiejar
import os
import socket
import ssl
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import certifi
import requests
import requests.adapters
import requests.structures
import requests.utils
from urllib3.connection import HTTPConnection
from urllib3.util.ssl_ import create_urllib3_context

from mcpclient._core.version import VERSION
from mcpclient._internal.transport.http_connect import POOL_CLASSES
from mcpclient._internal.transport.http_exchange import Schedule
from mcpclient._internal.transport.http_origins import (
    AddressPolicy,
    check_header,
    origin_key,
    origin_of,
    show_origin,
)
from mcpclient.errors import ConfigError
from mcpclient.transports import AuthProvider, LegacySSETransport, StreamableHTTPTransport

__all__ = ["HttpClientFactory", "HttpSession", "SessionConfig", "tls_context"]

#: URLs a session keeps prepared (an MCP session sends to one; OAuth to a few).
_MAX_PREPARED_URLS = 32

# TCP keepalive: first probe after 30 s idle, then every 10 s, 3 misses.
_KEEPIDLE = 30
_KEEPINTVL = 10
_KEEPCNT = 3


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
        self.poolmanager.pool_classes_by_scheme = dict(POOL_CLASSES)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        fresh = proxy not in self.proxy_manager
        proxy_kwargs.setdefault("socket_options", self._mcp_socket_options)
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if fresh and not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(POOL_CLASSES)
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


class SessionConfig:
    """What every session of one factory shares. Never shows headers or auth.

    ``origin`` is the one origin a transport's factory contacts; it is None for
    a factory of endpoints on many origins (OAuth), where ``admit`` says which
    URLs may be reached and ``pin`` which addresses. ``schedule`` is None when
    no deadline watcher is at hand: then every socket read gets only the time
    left (see :mod:`http_connect`).
    """

    __slots__ = ("admit", "auth", "binding", "headers", "origin", "pin", "schedule", "shown")

    def __init__(
        self,
        *,
        origin: tuple[str, str, int] | None,
        headers: tuple[tuple[str, str], ...],
        auth: Callable[[], str | None] | AuthProvider | None,
        binding: str,
        schedule: Schedule | None,
        pin: AddressPolicy | None = None,
        admit: Callable[[str], str | None] | None = None,
    ) -> None:
        self.origin = origin
        self.shown = show_origin(origin) if origin is not None else "endpoints"
        self.headers = headers
        self.auth = auth
        self.binding = binding
        self.schedule = schedule
        self.pin = pin
        self.admit = admit

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be reached by these sessions, or None (the origin rule)."""
        if self.origin is not None:
            if origin_key(url) != self.origin:
                return f"refusing to send a request to another origin than {self.shown}"
            return None
        problem = self.admit(url) if self.admit is not None else "no URL is admitted"
        return f"refusing to send a request to {origin_of(url)}: {problem}" if problem else None

    def __repr__(self) -> str:
        return (
            f"<http config {self.shown} headers={len(self.headers)} auth={self.auth is not None}>"
        )


class HttpSession(requests.Session):
    """A ``requests.Session`` made by :class:`HttpClientFactory`; one per I/O worker.

    Pass it to ``http.request``; close it when the
    worker exits. Not thread-safe (requests sessions are not): one thread
    sends on it at a time.
    """

    def __init__(
        self,
        config: SessionConfig,
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
        self._adapter = adapter
        self._urls: dict[str, str] = {}  # a URL as requests prepares it, per URL sent to

    def send_one(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None,
        headers: Mapping[str, str],
        timeout: float | None,
    ) -> requests.Response:
        """One hop through requests' transport adapter; the response is streamed.

        What ``Session.request`` would do for this library's requests, without
        the parts it never uses, which cost more CPU than the rest of a call:
        merging environment settings (``trust_env`` is off), cookies (none are
        kept), hooks (none), redirect resolution (``request()`` follows
        redirects itself), and parsing the same URL again for every request.
        Every header value was checked before (``check_header``); requests'
        adapter still does the connection, TLS and proxy work. ``timeout``
        bounds the connect and each socket read (None: unbounded).
        """
        prepared = requests.PreparedRequest()
        prepared.method = method
        prepared.url = self._prepared_url(url)
        merged: requests.structures.CaseInsensitiveDict[Any] = (
            requests.structures.CaseInsensitiveDict(self.headers)
        )
        merged.update(headers)
        if body is not None:
            merged["Content-Length"] = str(len(body))
        elif method not in ("GET", "HEAD"):
            merged["Content-Length"] = "0"  # as requests sends a bodiless POST or DELETE
        prepared.headers = merged
        prepared.body = body
        return self._adapter.send(
            prepared,
            stream=True,
            timeout=(timeout, timeout) if timeout is not None else None,
            verify=True,
            cert=None,
            proxies=self.proxies,
        )

    def _prepared_url(self, url: str) -> str:
        prepared = self._urls.get(url)
        if prepared is None:
            scratch = requests.PreparedRequest()
            scratch.prepare_url(url, None)
            assert scratch.url is not None
            prepared = scratch.url
            if len(self._urls) >= _MAX_PREPARED_URLS:  # many endpoints (OAuth): start over
                self._urls.clear()
            self._urls[url] = prepared
        return prepared

    def get_redirect_target(self, resp: requests.Response) -> None:
        # requests consults this even with allow_redirects=False, and then reads
        # the whole redirect body (unbounded) to prepare Response.next. Redirects
        # are ours to follow (see request); requests never sees one.
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
        self._config = SessionConfig(
            origin=key, headers=static, auth=auth, binding=binding, schedule=schedule
        )
        self._proxies = _resolve_proxies(url, proxy, pinned=False)
        self._ssl_context = (
            tls_context(ca_bundle, client_cert, binding) if key[0] == "https" else None
        )
        self._socket_options = _keepalive_options()

    @classmethod
    def for_endpoints(
        cls,
        *,
        pin: AddressPolicy,
        admit: Callable[[str], str | None],
        tls: bool,
        ca_bundle: str | None = None,
        binding: str = "",
        schedule: Schedule | None = None,
    ) -> HttpClientFactory:
        """Sessions for endpoints on many origins (OAuth), under one URL and address rule.

        Args:
            pin: the addresses a connection may go to (checked when connecting).
            admit: ``url -> why it is refused``, or None when it may be reached;
                asked for the first URL and every redirect hop.
            tls: build the TLS context (for https endpoints).
            ca_bundle: a PEM file or directory of trust anchors.
            binding: for error messages.
            schedule: ``watcher.schedule``, or None to bound every socket read
                by the time left instead.

        Raises:
            ConfigError: the CA bundle cannot be loaded.
        """
        factory = cls.__new__(cls)
        factory._url = ""
        factory._config = SessionConfig(
            origin=None,
            headers=(),
            auth=None,
            binding=binding,
            schedule=schedule,
            pin=pin,
            admit=admit,
        )
        factory._proxies = _resolve_proxies("", None, pinned=True)
        factory._ssl_context = tls_context(ca_bundle, None, binding) if tls else None
        factory._socket_options = _keepalive_options()
        return factory

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


def _resolve_proxies(url: str, proxy: str | None, *, pinned: bool) -> dict[str, str]:
    """The one proxy rule: explicit, else the environment's (read once), never when pinned."""
    if pinned:
        # A proxy resolves the name itself, which would defeat the address check.
        return {}
    scheme = urlsplit(url).scheme.lower()
    if proxy:
        return {scheme: proxy}
    found = requests.utils.get_environ_proxies(url)
    chosen = requests.utils.select_proxy(url, found)
    return {scheme: chosen} if chosen else {}


def tls_context(
    ca_bundle: str | None, client_cert: str | tuple[str, str] | None, binding: str
) -> ssl.SSLContext:
    """The one TLS rule: always verified, TLS >= 1.2, a CA file or directory, loaded once.

    Raises:
        ConfigError: the CA bundle or the client certificate cannot be loaded.
    """
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
