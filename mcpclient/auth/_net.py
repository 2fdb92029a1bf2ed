"""How ``mcpclient.auth`` talks HTTP: checked URLs, pinned addresses, bounded replies.

Every URL the OAuth machinery fetches or posts to came from a server (a
``WWW-Authenticate`` challenge, protected resource metadata, authorization
server metadata), so each one is treated as hostile (MCP spec, "SSRF"):

* **URL shape** (:func:`check_url`): ``https``, or ``http`` only to a loopback
  host; a loopback host only when the policy allows it (the MCP server itself
  is on loopback); absolute with a host, no userinfo, no fragment, ASCII
  without controls or spaces, at most 2048 characters; a numeric host must be
  a canonical dotted IPv4 address (``127.1`` and ``0x7f000001`` are refused).
* **Addresses** (:func:`check_address`, the shared
  ``http_origins.AddressPolicy``): the host is resolved once and EVERY address
  must be public: never private, link-local, CGNAT, loopback, multicast,
  unspecified or reserved, including the IPv4 address inside an IPv4-mapped,
  NAT64 or 6to4 IPv6 address. ``allow_private_networks`` admits private, CGNAT
  and link-local addresses; loopback needs ``allow_loopback``.

The exchange itself is MCP traffic's: :class:`SafeHTTP` sends through the
same hardened ``requests`` sessions (``_internal/transport/http``), so one TLS
rule (verified, TLS >= 1.2, a CA file or directory: the policy's, else
``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``, else certifi's), one redirect rule
(at most 5; a GET follows 301-308 to any URL these rules admit, each hop
checked like the first, the caller's headers dropped when the origin
changes; a POST follows only a 307/308 on its own origin), one origin rule
and one connect hook (the address checked is the address connected to; the
name is never resolved again, so a DNS-rebinding answer cannot slip in) hold
for both. No proxy: a proxy would resolve the name itself and defeat the
pinning. Every socket read gets only the time left to the deadline, so a
server trickling its headers or body cannot outlive it.

Bounds: bodies at most 1 MiB, JSON nested at most 32 deep (decoded by
``jsonio``: no NaN, no lone surrogates), a body counts as JSON only with a
JSON media type, header values cut at 8 KiB. Errors name the endpoint kind
(``what``) and the origin, never a path, query, header value, form field or
body.

``requests`` is imported on the first exchange, not with ``mcpclient.auth``.

Thread safety: a :class:`SafeHTTP` may be used by several threads at once;
:meth:`SafeHTTP.close` (from any thread) cuts every exchange in progress.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import re
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlencode, urlsplit

import attrs

from mcpclient._core import jsonio
from mcpclient._core.checks import is_loopback_host
from mcpclient._core.version import VERSION
from mcpclient._internal.transport.http_origins import AddressPolicy, Resolver
from mcpclient.errors import (
    AuthError,
    ConfigError,
    DeadlineExceededError,
    Error,
    FailureClass,
    LimitExceededError,
)

if TYPE_CHECKING:
    import requests

    from mcpclient._internal.transport.http_exchange import AbortHandle
    from mcpclient._internal.transport.http_sessions import HttpClientFactory, HttpSession

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
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
#: Longest response header value kept (the rest is cut).
MAX_HEADER_VALUE_CHARS = 8192

_LABELS = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_JSON_TYPE = re.compile(r"application/(?:[a-z0-9.+-]+\+)?json")
# Headers the request framing owns; a caller may not set them.
_FRAMING = frozenset({"host", "content-length", "transfer-encoding", "connection"})
# Every status is the caller's to judge; redirects are followed (or refused) below.
_ALL_STATUSES = range(300, 600)


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
        ca_bundle: a PEM file or a directory of trust anchors; None uses
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


def check_address(address: str, policy: URLPolicy, *, what: str) -> None:
    """Refuse an IP address the policy does not admit (see the module docstring).

    Raises:
        AuthError: ``auth_failed``, naming the address and its kind.
    """
    problem = _addresses(policy).refusal(address)
    if problem is not None:
        raise _fail(f"the {what} host {problem}")


def _addresses(policy: URLPolicy, resolve: Resolver | None = None) -> AddressPolicy:
    return AddressPolicy(
        allow_loopback=policy.allow_loopback,
        allow_private_networks=policy.allow_private_networks,
        resolve=resolve,
    )


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
        self._resolve = resolve
        self._lock = threading.Lock()  # guards everything below
        self._closed = False
        self._factory: HttpClientFactory | None = None
        self._idle: list[HttpSession] = []
        self._live: set[AbortHandle] = set()

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
        """GET ``url``, following at most 5 checked redirects.

        Returns:
            The reply (any status but 404), or None on 404.

        Raises:
            AuthError: ``auth_failed``: a refused URL or address, a network
                failure, the deadline, too many redirects, a body over 1 MiB
                or JSON nested too deep.
            ValueError: a header that would break the request's framing.
        """
        return self._send("GET", url, None, None, headers or {}, deadline=deadline, what=what)

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
        """POST ``form`` as ``application/x-www-form-urlencoded``.

        Only a 307/308 on the endpoint's own origin is followed.

        Args:
            basic: ``(client_id, client_secret)`` for HTTP Basic; each is
                form-urlencoded before base64 (RFC 6749 §2.3.1), so pass
                them raw.

        Returns:
            The reply, whatever its status (not a 3xx).

        Raises:
            AuthError: as :meth:`get_json`, or a 3xx reply that is not followed.
        """
        extra = dict(headers or {})
        if basic is not None:
            pair = f"{quote_plus(basic[0], safe='')}:{quote_plus(basic[1], safe='')}"
            extra["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        body = urlencode(dict(form)).encode("ascii")
        reply = self._send(
            "POST",
            url,
            body,
            "application/x-www-form-urlencoded",
            extra,
            deadline=deadline,
            what=what,
        )
        assert reply is not None  # only a GET maps 404 to None
        return reply

    def post_json(
        self,
        url: str,
        body: Mapping[str, Any],
        *,
        deadline: float,
        what: str,
        headers: Mapping[str, str] | None = None,
    ) -> JSONResponse:
        """POST ``body`` as JSON; like :meth:`post_form`.

        Returns:
            The reply, whatever its status (not a 3xx).

        Raises:
            AuthError: as :meth:`post_form`.
        """
        data = jsonio.encode(dict(body))
        reply = self._send(
            "POST", url, data, "application/json", headers or {}, deadline=deadline, what=what
        )
        assert reply is not None
        return reply

    def close(self) -> None:
        """Refuse new requests and cut every exchange in progress (idempotent)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        self.interrupt()
        for session in idle:
            session.close()

    def release_idle(self) -> None:
        """Close the kept-alive connections no exchange is using; later requests still run.

        A provider calls it when a flow ends: its next exchange may be hours
        away (or never, when the binding closes), and an idle keep-alive
        socket (the metadata fetch from the MCP server's own origin, after its
        401) would otherwise stay open until garbage collection.
        """
        with self._lock:
            idle, self._idle = self._idle, []
        for session in idle:
            session.close()

    def interrupt(self) -> None:
        """Cut every exchange in progress (they fail at once); later requests still run."""
        with self._lock:
            live = list(self._live)
        for handle in live:
            handle.abort()

    # --- internals ---

    def _send(
        self,
        method: str,
        url: str,
        body: bytes | None,
        content_type: str | None,
        headers: Mapping[str, str],
        *,
        deadline: float,
        what: str,
    ) -> JSONResponse | None:
        from mcpclient._internal.transport import http  # noqa: PLC0415 - requests loads on first use

        target = _parse(url, self.policy, what)
        fields = {"User-Agent": self._user_agent, "Accept": "application/json"}
        for name, value in headers.items():
            _check_header(name, value)
            fields[name] = value
        if content_type is not None:
            fields["Content-Type"] = content_type
        session, handle = self._start(what, target.origin)
        ok = False
        try:
            response = http.request(
                session,
                method,
                url,
                body=body,
                headers=fields,
                deadline=deadline,
                op=what,
                pass_statuses=_ALL_STATUSES,
                abort_handle=handle,
            )
            reply = self._reply(response, method, deadline, what)
            ok = True
            return reply
        except Error as exc:
            raise self._failure(exc, target.origin, what) from None
        finally:
            self._finish(session, handle, reuse=ok)

    def _reply(
        self, response: requests.Response, method: str, deadline: float, what: str
    ) -> JSONResponse | None:
        from mcpclient._internal.transport import http  # noqa: PLC0415 - requests loads on first use

        status = response.status_code
        if method == "GET" and status == 404:
            response.close()
            return None
        if method != "GET" and 300 <= status < 400:
            response.close()
            raise _fail(f"the {what} answered with a redirect (HTTP {status}), not followed")
        headers = _Headers(iter(response.headers.items()))
        raw = http.read_body(response, max_bytes=MAX_BODY_BYTES, deadline=deadline, op=what)
        return JSONResponse(status, headers, _decode(raw, headers.get("content-type", ""), what))

    def _start(self, what: str, origin: str) -> tuple[HttpSession, AbortHandle]:
        from mcpclient._internal.transport import http  # noqa: PLC0415 - requests loads on first use

        with self._lock:
            if self._closed:
                raise _fail(f"the {what} request was cut: the OAuth HTTP client is closed")
            if self._factory is None:
                try:
                    self._factory = http.HttpClientFactory.for_endpoints(
                        pin=_addresses(self.policy, self._resolve),
                        admit=self._admit,
                        tls=True,
                        ca_bundle=self.policy.ca_bundle,
                    )
                except ConfigError:
                    raise _fail(
                        f"the {what} at {origin} cannot be reached: the CA bundle for OAuth"
                        " endpoints could not be loaded"
                    ) from None
            session = self._idle.pop() if self._idle else self._factory.new_session()
            handle = http.AbortHandle()
            self._live.add(handle)
        return session, handle

    def _finish(self, session: HttpSession, handle: AbortHandle, *, reuse: bool) -> None:
        with self._lock:
            self._live.discard(handle)
            keep = reuse and not self._closed
            if keep:
                self._idle.append(session)
        if not keep:
            session.close()

    def _admit(self, url: str) -> str | None:
        # The origin rule of these sessions (redirect hops): check_url's.
        try:
            _parse(url, self.policy, "redirect")
        except AuthError as exc:
            return exc.message
        return None

    def _failure(self, exc: Error, origin: str, what: str) -> AuthError:
        if isinstance(exc, AuthError) and exc.failure_class is FailureClass.AUTH_FAILED:
            return exc  # ours already (a JSON or redirect rule)
        with self._lock:
            closed = self._closed
        if closed:
            return _fail(f"the {what} at {origin} failed: the OAuth HTTP client was closed")
        if isinstance(exc, DeadlineExceededError):
            return _fail(f"the {what} at {origin} timed out ({exc.message})")
        if isinstance(exc, LimitExceededError):
            return _fail(f"the {what} at {origin} sent a body larger than {MAX_BODY_BYTES} bytes")
        return _fail(f"the {what} failed: {exc.message}")


def _check_header(name: str, value: str) -> None:
    if not _TOKEN.fullmatch(name) or name.lower() in _FRAMING:
        raise ValueError(f"header name {name!r} may not be set")
    if any(ch in value for ch in "\r\n\x00") or not value.isascii():
        # The value may be a credential: name the header only.
        raise ValueError(f"header {name} has a character a header value may not hold")


def _decode(body: bytes | bytearray, content_type: str, what: str) -> Any:
    media = content_type.split(";", 1)[0].strip().lower()
    if not body or not _JSON_TYPE.fullmatch(media):
        return None
    try:
        value = jsonio.decode(body)
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
