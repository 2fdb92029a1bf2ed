"""The only way ``mcpclient.auth`` talks HTTP: checked URLs, pinned addresses, bounded replies.

Every URL the OAuth machinery fetches or posts to came from a server (a
``WWW-Authenticate`` challenge, protected resource metadata, authorization
server metadata), so each one is treated as hostile (MCP spec, "SSRF"):

* **URL shape** (:func:`check_url`): ``https``, or ``http`` only to a loopback
  host; a loopback host only when the policy allows it (the MCP server itself
  is on loopback); absolute with a host, no userinfo, no fragment, ASCII
  without controls or spaces, at most 2048 characters; a numeric host must be
  a canonical dotted IPv4 address (``127.1`` and ``0x7f000001`` are refused).
* **Addresses** (:func:`check_address`): the host is resolved once and EVERY
  address must be public: never private, link-local (``169.254.0.0/16``,
  ``fe80::/10``), CGNAT (``100.64.0.0/10``), loopback, multicast, unspecified
  or reserved, including the IPv4 address inside an IPv4-mapped, NAT64 or
  6to4 IPv6 address. ``allow_private_networks`` admits private, CGNAT and
  link-local addresses; loopback needs ``allow_loopback``; multicast,
  unspecified and reserved addresses are never admitted.
* **Pinning**: the connection goes to the address that was checked (the name
  is never resolved again, so a DNS-rebinding answer cannot slip in), while
  the ``Host`` header, TLS SNI and certificate checks keep the name. TLS is
  always verified (the policy's CA bundle, else ``REQUESTS_CA_BUNDLE`` /
  ``CURL_CA_BUNDLE``, else certifi's), TLS >= 1.2.
* **No proxy.** Proxies from the environment (``HTTPS_PROXY``...) are not
  used: a proxy would resolve the name itself and defeat the pinning. A host
  that must egress through a proxy cannot use OAuth discovery through it.
* **Redirects**: a GET follows at most 3, each hop checked and resolved like
  the first (the caller's extra headers are dropped when the origin changes);
  a POST never follows one (a 3xx is ``auth_failed``).
* **Bounds**: bodies at most 1 MiB, JSON nested at most 32 deep (decoded by
  ``jsonio``: no NaN, no lone surrogates), a body counts as JSON only with a
  JSON media type. Every socket wait (connect, TLS handshake, each read) is
  given only the time left to the deadline, so a server trickling its headers
  or body one byte at a time cannot outlive it.
* **Redaction**: errors name the endpoint kind (``what``) and the origin,
  never a path, query, header value, form field or body.

One request per connection (``Connection: close``); there is no pool.

Thread safety: a :class:`SafeHTTP` may be used by several threads at once;
:meth:`SafeHTTP.close` (from any thread) cuts every exchange in progress.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import io
import ipaddress
import logging
import os
import re
import socket
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast
from urllib.parse import quote_plus, urlencode, urljoin, urlsplit, urlunsplit

import attrs
import certifi

from mcpclient._internal import jsonio
from mcpclient._internal.checks import is_loopback_host
from mcpclient._internal.deadline import now
from mcpclient._internal.version import VERSION
from mcpclient.errors import AuthError, FailureClass

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_REDIRECTS",
    "MAX_URL_CHARS",
    "JSONResponse",
    "Resolver",
    "SafeHTTP",
    "URLPolicy",
    "check_address",
    "check_url",
    "origin_of",
]

_log = logging.getLogger(__name__)

#: Longest URL accepted, in characters.
MAX_URL_CHARS = 2048
#: Largest response body read, in bytes.
MAX_BODY_BYTES = 1 << 20
#: Deepest JSON nesting accepted in a response.
MAX_JSON_DEPTH = 32
#: Redirects a GET follows.
MAX_REDIRECTS = 3
#: Longest response header value kept (the rest is cut).
MAX_HEADER_VALUE_CHARS = 8192

#: ``resolve(host, port) -> addresses``: how a name becomes IP addresses.
Resolver = Callable[[str, int], list[str]]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_LABELS = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_JSON_TYPE = re.compile(r"application/(?:[a-z0-9.+-]+\+)?json")
# Headers the request framing owns; a caller may not set them.
_FRAMING = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_READ_CHUNK = 64 * 1024


def _fail(message: str) -> AuthError:
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


@attrs.frozen
class URLPolicy:
    """Which hosts the OAuth machinery may reach.

    Attributes:
        allow_loopback: admit loopback hosts and addresses (and plain ``http``
            to them); True only when the MCP server's own URL is loopback.
        allow_private_networks: admit private, CGNAT and link-local addresses
            (an authorization server inside the host's own network).
        ca_bundle: a PEM file of trust anchors; None uses
            ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``, else certifi's.
    """

    allow_loopback: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    allow_private_networks: bool = attrs.field(
        default=False, validator=attrs.validators.instance_of(bool)
    )
    ca_bundle: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )


@attrs.frozen
class _Target:
    """A URL that passed :func:`check_url`, split for one request."""

    url: str
    scheme: str
    host: str  # lowercase, IPv6 brackets stripped
    port: int
    request_target: str  # path and query, at least "/"
    origin: str  # scheme://host[:port], the default port left out

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def _parse(url: object, policy: URLPolicy, what: str) -> _Target:
    """Check ``url`` against the rules of :func:`check_url` and split it."""
    if not isinstance(url, str) or not url:
        raise _fail(f"the {what} URL is missing")
    if len(url) > MAX_URL_CHARS:
        raise _fail(f"the {what} URL is longer than {MAX_URL_CHARS} characters")
    if any(ch <= " " or ch >= "\x7f" or ch == "\\" for ch in url):
        raise _fail(f"the {what} URL holds a space, control, backslash or non-ASCII character")
    if "#" in url:
        raise _fail(f"the {what} URL has a fragment")
    try:
        split = urlsplit(url)
        port = split.port
    except ValueError:
        raise _fail(f"the {what} URL is malformed") from None
    if split.scheme not in ("https", "http"):
        raise _fail(f"the {what} URL must be https")
    if "@" in split.netloc:
        raise _fail(f"the {what} URL carries user information")
    host = split.hostname or ""
    if not host:
        raise _fail(f"the {what} URL has no host")
    _check_host(host, split.netloc, what)
    loopback = is_loopback_host(host)
    if split.scheme == "http" and not loopback:
        raise _fail(f"the {what} URL must be https (http is allowed only to loopback)")
    if loopback and not policy.allow_loopback:
        raise _fail(f"the {what} URL names a loopback host, allowed only for a loopback server")
    if port == 0:
        raise _fail(f"the {what} URL has port 0")
    if port is None:
        port = 443 if split.scheme == "https" else 80
    shown = f"[{host}]" if ":" in host else host
    default = 443 if split.scheme == "https" else 80
    origin = f"{split.scheme}://{shown}" + ("" if port == default else f":{port}")
    target = (split.path or "/") + (f"?{split.query}" if split.query else "")
    return _Target(url, split.scheme, host, port, target, origin)


def _check_host(host: str, netloc: str, what: str) -> None:
    if "[" in netloc:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _fail(f"the {what} URL has a malformed IPv6 host") from None
        if "%" in host:
            raise _fail(f"the {what} URL has an IPv6 host with a zone")
        return
    if not _LABELS.fullmatch(host):
        raise _fail(f"the {what} URL has a malformed host name")
    # A host ending in a number is an IPv4 address to URL parsers and to the
    # resolver ("127.1", "0x7f000001"); only the canonical dotted form passes.
    if _NUMERIC_LABEL.fullmatch(host.rstrip(".").rsplit(".", 1)[-1]):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise _fail(f"the {what} URL has a non-canonical numeric host") from None


def check_url(url: str, policy: URLPolicy, *, what: str) -> None:
    """Refuse a URL the OAuth machinery must not fetch or send a person to.

    Args:
        url: the URL, as a server gave it.
        policy: which hosts are admitted.
        what: the kind of URL, named in errors ("token endpoint"...).

    Raises:
        AuthError: ``auth_failed``: not https (or http to loopback), a
            loopback host the policy refuses, relative, no host, userinfo, a
            fragment, longer than 2048 characters, a control, space or
            non-ASCII character, or a malformed host or port.
    """
    _parse(url, policy, what)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (for messages), or ``"?"`` when it has none."""
    try:
        split = urlsplit(url)
        host = split.hostname
        port = split.port
    except ValueError:
        return "?"
    if not split.scheme or not host:
        return "?"
    shown = f"[{host}]" if ":" in host else host
    return f"{split.scheme}://{shown}" + ("" if port is None else f":{port}")


def _kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """``public``, ``loopback``, ``private``, ``link-local`` or ``forbidden``."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            # The packet goes to the embedded IPv4 host: judge that one.
            return _kind(embedded)
    if address.is_loopback:  # before "reserved": ::1 lies in the reserved ::/8
        return "loopback"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return "forbidden"
    if isinstance(address, ipaddress.IPv4Address) and address in _THIS_NETWORK:
        return "forbidden"
    if address.is_link_local:
        return "link-local"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "private"
    if address.is_private or not address.is_global:
        return "private"
    return "public"


def check_address(address: str, policy: URLPolicy, *, what: str) -> None:
    """Refuse an IP address the policy does not admit (see the module docstring).

    Raises:
        AuthError: ``auth_failed``, naming the address and its kind.
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise _fail(f"the {what} host resolved to a malformed address") from None
    kind = _kind(parsed)
    allowed = (
        kind == "public"
        or (kind == "loopback" and policy.allow_loopback)
        or (kind in ("private", "link-local") and policy.allow_private_networks)
    )
    if not allowed:
        raise _fail(f"the {what} host resolves to a {kind} address ({parsed}), which is refused")


def _system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


class _Headers(Mapping[str, str]):
    """Response headers: case-insensitive, each value bounded, repeats joined."""

    def __init__(self, pairs: Iterator[tuple[str, str]]) -> None:
        values: dict[str, str] = {}
        for name, value in pairs:
            key = name.lower()
            joined = f"{values[key]}, {value}" if key in values else value
            values[key] = joined[:MAX_HEADER_VALUE_CHARS]
        self._values = values

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        # Names only: a value may carry a nonce or a cookie.
        return f"<headers {sorted(self._values)}>"


@attrs.frozen(repr=False, eq=False)
class JSONResponse:
    """One HTTP reply from an OAuth endpoint.

    Attributes:
        status: the HTTP status.
        headers: the reply headers (case-insensitive names, values at most
            8 KiB).
        body: the decoded JSON body, or None when the body was empty, not of
            a JSON media type, or not valid JSON.
    """

    status: int
    headers: Mapping[str, str]
    body: Any

    def __repr__(self) -> str:
        # The body may be a token response: never shown.
        return f"<JSONResponse {self.status}>"


class _DeadlineReader(io.RawIOBase):
    """Socket reads that each get only the time left before the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - now()
        if left <= 0:
            raise TimeoutError("deadline")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _ReplySocket:
    """What ``http.client.HTTPResponse`` needs of a socket: ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


@attrs.frozen
class _Reply:
    status: int
    headers: _Headers
    body: bytes


def _describe(exc: BaseException) -> str:
    """A short, secret-free reason for a failed exchange."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verification failed ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return "TLS failed"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError | BrokenPipeError):
        return "connection reset"
    if isinstance(exc, http.client.HTTPException):
        return "malformed HTTP reply"
    return f"network error ({type(exc).__name__})"


class SafeHTTP:
    """HTTP for OAuth endpoints under a :class:`URLPolicy` (see the module docstring).

    Example::

        http = SafeHTTP(URLPolicy(allow_loopback=False))
        reply = http.get_json(url, deadline=now() + 30, what="authorization server metadata")

    Args:
        policy: which hosts may be reached.
        user_agent: the ``User-Agent`` sent.
        resolve: ``(host, port) -> IP addresses``; ``socket.getaddrinfo`` by
            default (tests inject one to simulate hostile DNS answers).

    Attributes:
        policy: the policy every URL and address is checked against.

    Thread safety: every method may be called from any thread.
    """

    def __init__(
        self,
        policy: URLPolicy,
        *,
        user_agent: str = f"mcpclient/{VERSION}",
        resolve: Resolver | None = None,
    ) -> None:
        self.policy = policy
        self._user_agent = user_agent
        self._resolve = resolve or _system_resolve
        self._lock = threading.Lock()
        self._live: set[socket.socket] = set()
        self._closed = False
        self._tls: ssl.SSLContext | None = None

    def __repr__(self) -> str:
        return f"<SafeHTTP loopback={self.policy.allow_loopback}>"

    def get_json(
        self,
        url: str,
        *,
        deadline: float,
        what: str,
        headers: Mapping[str, str] | None = None,
    ) -> JSONResponse | None:
        """GET ``url``, following at most 3 checked redirects.

        Returns:
            The reply (any status but 404), or None on 404.

        Raises:
            AuthError: ``auth_failed``: a refused URL or address, a network
                failure, the deadline, too many redirects, a body over 1 MiB
                or JSON nested too deep.
        """
        extra = dict(headers or {})
        current = _parse(url, self.policy, what)
        for hop in range(MAX_REDIRECTS + 1):
            reply = self._exchange(
                "GET",
                current,
                body=None,
                content_type=None,
                headers=extra,
                deadline=deadline,
                what=what,
            )
            location = reply.headers.get("location")
            if reply.status in _REDIRECTS and location:
                if hop == MAX_REDIRECTS:
                    raise _fail(f"the {what} redirected more than {MAX_REDIRECTS} times")
                nxt = _parse(_follow(current.url, location), self.policy, what)
                if nxt.origin != current.origin:
                    extra = {}  # caller headers are meant for the first origin only
                current = nxt
                continue
            if reply.status == 404:
                return None
            return _to_json(reply, what)
        raise AssertionError("unreachable")  # pragma: no cover

    def post_form(
        self,
        url: str,
        form: Mapping[str, str],
        *,
        deadline: float,
        what: str,
        headers: Mapping[str, str] | None = None,
        basic: tuple[str, str] | None = None,
    ) -> JSONResponse:
        """POST ``form`` as ``application/x-www-form-urlencoded``; redirects are refused.

        Args:
            basic: ``(client_id, client_secret)`` for HTTP Basic; each is
                form-urlencoded before base64 (RFC 6749 §2.3.1), so pass
                them raw.

        Returns:
            The reply, whatever its status (not a 3xx).

        Raises:
            AuthError: as :meth:`get_json`, or a 3xx reply.
        """
        extra = dict(headers or {})
        if basic is not None:
            pair = f"{quote_plus(basic[0], safe='')}:{quote_plus(basic[1], safe='')}"
            extra["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        body = urlencode(dict(form)).encode("ascii")
        content_type = "application/x-www-form-urlencoded"
        return self._post(
            url, body=body, content_type=content_type, headers=extra, deadline=deadline, what=what
        )

    def post_json(
        self,
        url: str,
        body: Mapping[str, Any],
        *,
        deadline: float,
        what: str,
        headers: Mapping[str, str] | None = None,
    ) -> JSONResponse:
        """POST ``body`` as JSON; redirects are refused.

        Returns:
            The reply, whatever its status (not a 3xx).

        Raises:
            AuthError: as :meth:`post_form`.
        """
        data = jsonio.encode(dict(body))
        return self._post(
            url,
            body=data,
            content_type="application/json",
            headers=dict(headers or {}),
            deadline=deadline,
            what=what,
        )

    def close(self) -> None:
        """Refuse new requests and cut every exchange in progress (idempotent)."""
        with self._lock:
            self._closed = True
        self.interrupt()

    def interrupt(self) -> None:
        """Cut every exchange in progress (they fail at once); later requests still run."""
        with self._lock:
            live = list(self._live)
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    # --- internals ---

    def _post(
        self,
        url: str,
        *,
        body: bytes,
        content_type: str,
        headers: dict[str, str],
        deadline: float,
        what: str,
    ) -> JSONResponse:
        target = _parse(url, self.policy, what)
        reply = self._exchange(
            "POST",
            target,
            body=body,
            content_type=content_type,
            headers=headers,
            deadline=deadline,
            what=what,
        )
        if 300 <= reply.status < 400:
            raise _fail(f"the {what} answered with a redirect (HTTP {reply.status}), not followed")
        return _to_json(reply, what)

    def _exchange(
        self,
        method: str,
        target: _Target,
        *,
        body: bytes | None,
        content_type: str | None,
        headers: Mapping[str, str],
        deadline: float,
        what: str,
    ) -> _Reply:
        request = self._request_bytes(method, target, body, content_type, headers)
        addresses = self._addresses(target, what)
        sock = self._connect(target, addresses, deadline, what)
        try:
            try:
                left = deadline - now()
                if left <= 0:
                    raise TimeoutError("deadline")
                sock.settimeout(left)
                sock.sendall(request)
                reply = _read_reply(sock, method, deadline)
            except _TooLargeError:
                raise _fail(f"the {what} sent a body larger than {MAX_BODY_BYTES} bytes") from None
            except (OSError, http.client.HTTPException, ValueError) as exc:
                raise self._network_failure(exc, target, what) from None
        finally:
            self._release(sock)
        _log.debug("%s %s at %s: HTTP %d", method, what, target.origin, reply.status)
        return reply

    def _request_bytes(
        self,
        method: str,
        target: _Target,
        body: bytes | None,
        content_type: str | None,
        headers: Mapping[str, str],
    ) -> bytes:
        fields = {
            "Host": target.host_header,
            "User-Agent": self._user_agent,
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Connection": "close",
        }
        for name, value in headers.items():
            _check_header(name, value)
            fields[name] = value
        if body is not None:
            fields["Content-Type"] = content_type or "application/octet-stream"
            fields["Content-Length"] = str(len(body))
        lines = [f"{method} {target.request_target} HTTP/1.1"]
        lines.extend(f"{name}: {value}" for name, value in fields.items())
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + (body or b"")

    def _addresses(self, target: _Target, what: str) -> list[str]:
        try:
            ipaddress.ip_address(target.host)
            addresses = [target.host]  # a literal is its own answer
        except ValueError:
            try:
                addresses = list(dict.fromkeys(self._resolve(target.host, target.port)))
            except (OSError, UnicodeError):
                raise _fail(f"the {what} host {target.host} could not be resolved") from None
        if not addresses:
            raise _fail(f"the {what} host {target.host} resolved to no address")
        # Every answer is checked before any is used: a mixed public/private
        # answer is refused as a whole.
        for address in addresses:
            check_address(address, self.policy, what=what)
        return addresses

    def _connect(
        self, target: _Target, addresses: list[str], deadline: float, what: str
    ) -> socket.socket:
        # Trust anchors load before any socket opens (a bad bundle is a clean error).
        context = self._tls_context() if target.scheme == "https" else None
        failure: BaseException = TimeoutError("deadline")
        for address in addresses:
            left = deadline - now()
            if left <= 0:
                failure = TimeoutError("deadline")
                break
            self._check_open(what)
            try:
                # The checked address itself: the name is never resolved again.
                sock = socket.create_connection((address, target.port), timeout=left)
            except OSError as exc:
                failure = exc
                continue
            self._track(sock, what)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if context is not None:
                    sock = self._wrap_tls(sock, context, target, deadline)
            except (OSError, ValueError) as exc:
                self._release(sock)
                raise self._network_failure(exc, target, what) from None
            return sock
        raise self._network_failure(failure, target, what)

    def _wrap_tls(
        self, sock: socket.socket, context: ssl.SSLContext, target: _Target, deadline: float
    ) -> socket.socket:
        left = deadline - now()
        if left <= 0:
            raise TimeoutError("deadline")
        # One timeout bounds the whole handshake (CPython's ssl keeps a deadline).
        sock.settimeout(left)
        tls = context.wrap_socket(sock, server_hostname=target.host)
        with self._lock:
            self._live.discard(sock)
            self._live.add(tls)
        return tls

    def _tls_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._tls is None:
                bundle = (
                    self.policy.ca_bundle
                    or os.environ.get("REQUESTS_CA_BUNDLE")
                    or os.environ.get("CURL_CA_BUNDLE")
                    or certifi.where()
                )
                try:
                    context = ssl.create_default_context(cafile=bundle)
                except (OSError, ValueError):
                    raise _fail("the CA bundle for OAuth endpoints could not be loaded") from None
                context.minimum_version = ssl.TLSVersion.TLSv1_2
                self._tls = context
            return self._tls

    def _check_open(self, what: str) -> None:
        with self._lock:
            if self._closed:
                raise _fail(f"the {what} request was cut: the OAuth HTTP client is closed")

    def _track(self, sock: socket.socket, what: str) -> None:
        with self._lock:
            closed = self._closed
            if not closed:
                self._live.add(sock)
        if closed:
            sock.close()
            raise _fail(f"the {what} request was cut: the OAuth HTTP client is closed")

    def _release(self, sock: socket.socket) -> None:
        with self._lock:
            self._live.discard(sock)
        with contextlib.suppress(OSError):
            sock.close()

    def _network_failure(self, exc: BaseException, target: _Target, what: str) -> AuthError:
        with self._lock:
            closed = self._closed
        reason = "the OAuth HTTP client was closed" if closed else _describe(exc)
        return _fail(f"the {what} at {target.origin} failed: {reason}")


def _check_header(name: str, value: str) -> None:
    if not _TOKEN.fullmatch(name) or name.lower() in _FRAMING:
        raise ValueError(f"header name {name!r} may not be set")
    if any(ch in value for ch in "\r\n\x00") or not value.isascii():
        # The value may be a credential: name the header only.
        raise ValueError(f"header {name} has a character a header value may not hold")


def _follow(current: str, location: str) -> str:
    joined = urljoin(current, location.strip())
    split = urlsplit(joined)
    # A fragment is never sent; drop it rather than refuse the hop.
    return urlunsplit((split.scheme, split.netloc, split.path, split.query, ""))


def _read_reply(sock: socket.socket, method: str, deadline: float) -> _Reply:
    response = http.client.HTTPResponse(
        cast(socket.socket, _ReplySocket(sock, deadline)), method=method
    )
    try:
        response.begin()
        headers = _Headers(iter(response.getheaders()))
        if response.status in _REDIRECTS or response.status == 404:
            return _Reply(response.status, headers, b"")
        if response.length is not None and response.length > MAX_BODY_BYTES:
            raise _TooLargeError
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = response.read(_READ_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _TooLargeError
            chunks.append(chunk)
        return _Reply(response.status, headers, b"".join(chunks))
    finally:
        response.close()


class _TooLargeError(ValueError):
    """A reply body over :data:`MAX_BODY_BYTES` (reported as such, not as a network error)."""


def _to_json(reply: _Reply, what: str) -> JSONResponse:
    return JSONResponse(reply.status, reply.headers, _decode(reply, what))


def _decode(reply: _Reply, what: str) -> Any:
    media = reply.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if not reply.body or not _JSON_TYPE.fullmatch(media):
        return None
    try:
        value = jsonio.decode(reply.body)
    except jsonio.FrameError:
        return None
    if _depth(value) > MAX_JSON_DEPTH:
        raise _fail(f"the {what} sent JSON nested deeper than {MAX_JSON_DEPTH}")
    return value


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest
