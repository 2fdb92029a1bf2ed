"""Transport parameter objects: where a server lives and how to reach it.

These are frozen values; the I/O lives in ``mcpclient._internal.transport``.
None of them ever shows a credential: ``repr`` hides environment values,
arguments, header values and auth, and ``redacted_origin`` names only the
program or the scheme, host and port.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

import attrs

from mcpclient._core import checks

__all__ = [
    "SAFE_ENV",
    "AuthChallenge",
    "AuthProvider",
    "LegacySSETransport",
    "StdioTransport",
    "StreamableHTTPTransport",
    "Transport",
]

#: Environment variables a stdio child inherits unless told otherwise.
SAFE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)

_HEADER_NAME_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _str_tuple(value: object) -> object:
    return checks.to_tuple(value)


def _frozen_mapping(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return tuple(sorted(value.items()))
    return value


def _check_command(inst: StdioTransport, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    assert isinstance(value, str)
    if not value:
        raise checks.fail(inst, attr.name, "must not be empty")
    checks.has_no_nul(inst, attr.name, value)
    if os.sep in value and not os.path.isabs(value):
        raise checks.fail(
            inst, attr.name, "must be a bare program name or an absolute path, not a relative path"
        )


def _check_args(inst: StdioTransport, attr: Any, value: Any) -> None:
    checks.tuple_of(str)(inst, attr, value)
    arg: str
    for index, arg in enumerate(value):
        checks.has_no_nul(inst, f"{attr.name}[{index}]", arg)


def _check_env(inst: StdioTransport, attr: Any, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, tuple):
        raise checks.fail(inst, attr.name, "must be a mapping of str to str")
    for name, val in value:
        if not isinstance(name, str) or not isinstance(val, str):
            raise checks.fail(inst, attr.name, "must map str names to str values")
        if not name or "=" in name or "\x00" in name:
            raise checks.fail(inst, attr.name, f"has an invalid variable name {name!r}")
        checks.has_no_nul(inst, f"{attr.name}[{name!r}]", val)


def _check_cwd(inst: StdioTransport, attr: Any, value: object) -> None:
    checks.is_optional_str(inst, attr, value)
    if isinstance(value, str):
        checks.has_no_nul(inst, attr.name, value)
        if not os.path.isabs(value):
            raise checks.fail(inst, attr.name, "must be an absolute path")


def _check_inherit(inst: StdioTransport, attr: Any, value: Any) -> None:
    if isinstance(value, bool):
        return
    checks.tuple_of(str)(inst, attr, value)
    name: str
    for index, name in enumerate(value):
        if not name or "=" in name or "\x00" in name:
            raise checks.fail(inst, f"{attr.name}[{index}]", f"is not a variable name: {name!r}")


def _inherit_converter(value: object) -> object:
    return value if isinstance(value, bool) else checks.to_tuple(value)


def _env_repr(value: tuple[tuple[str, str], ...] | None) -> str:
    if value is None:
        return "None"
    return "{" + ", ".join(f"{name!r}: '***'" for name, _ in value) + "}"


@attrs.frozen
class StdioTransport:
    """Run the server as a child process and speak to it over stdin/stdout.

    The command is started from an argument list, never a shell, in its own
    process group. Its environment is explicit: the :data:`SAFE_ENV` names
    that are set here are inherited (``inherit_env=True``), or exactly the
    names given (a sequence), or nothing (``False``); then ``env`` is added.

    Example:
        >>> StdioTransport("npx", ["-y", "@modelcontextprotocol/server-everything"]).kind
        'stdio'

    Thread safety: immutable.
    """

    command: str = attrs.field(validator=_check_command)
    args: tuple[str, ...] = attrs.field(
        default=(), converter=_str_tuple, validator=_check_args, repr=lambda v: f"<{len(v)} args>"
    )
    env: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, kw_only=True, converter=_frozen_mapping, validator=_check_env, repr=_env_repr
    )
    cwd: str | None = attrs.field(default=None, kw_only=True, validator=_check_cwd)
    inherit_env: bool | tuple[str, ...] = attrs.field(
        default=True, kw_only=True, converter=_inherit_converter, validator=_check_inherit
    )
    #: Seconds to wait after closing stdin, and again after SIGTERM, before escalating.
    shutdown_grace: float = attrs.field(default=2.0, kw_only=True, validator=checks.positive_number)

    @property
    def kind(self) -> str:
        """``"stdio"``."""
        return "stdio"

    @property
    def redacted_origin(self) -> str:
        """``stdio:<program name>``: never arguments or environment."""
        return f"stdio:{os.path.basename(self.command)}"

    @property
    def env_mapping(self) -> dict[str, str]:
        """The extra environment as a fresh dict."""
        return dict(self.env or ())


def _check_url(inst: object, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    assert isinstance(value, str)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        # Never echo the parser's text: it quotes parts of the URL (a password
        # written where a port belongs, say).
        raise checks.fail(inst, attr.name, "is not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise checks.fail(inst, attr.name, "must be an http:// or https:// URL")
    if not parts.hostname:
        raise checks.fail(inst, attr.name, "has no host")
    if parts.username is not None or parts.password is not None:
        raise checks.fail(
            inst, attr.name, "must not carry credentials; pass them as headers or auth"
        )
    if any(ch in value for ch in "\r\n\x00 "):
        raise checks.fail(inst, attr.name, "must not contain whitespace or control characters")


def _check_headers(inst: object, attr: Any, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, tuple):
        raise checks.fail(inst, attr.name, "must be a mapping of str to str")
    seen: set[str] = set()
    for name, val in value:
        if not isinstance(name, str) or not isinstance(val, str):
            raise checks.fail(inst, attr.name, "must map str names to str values")
        if not name or not set(name) <= _HEADER_NAME_CHARS:
            raise checks.fail(inst, attr.name, f"has an invalid header name {name!r}")
        if any(ch in val for ch in "\r\n\x00"):
            raise checks.fail(inst, f"{attr.name}[{name!r}]", "must not contain CR, LF or NUL")
        if name.lower() in seen:
            raise checks.fail(inst, attr.name, f"names {name!r} twice")
        seen.add(name.lower())


def _check_client_cert(inst: object, attr: Any, value: object) -> None:
    if value is None or isinstance(value, str):
        return
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return
    raise checks.fail(inst, attr.name, "must be a path or a (cert, key) pair of paths")


def _check_proxy(inst: object, attr: Any, value: object) -> None:
    checks.is_optional_str(inst, attr, value)
    if isinstance(value, str):
        scheme = urlsplit(value).scheme
        if scheme not in ("http", "https", "socks5", "socks5h"):
            raise checks.fail(inst, attr.name, "must be an http, https or socks5 proxy URL")


@attrs.frozen(repr=False)
class AuthChallenge:
    """A 401 or 403 from the MCP server, for an auth provider to act on.

    Attributes:
        status: 401 or 403.
        www_authenticate: the ``WWW-Authenticate`` header (at most 8 KiB), or None.
        dpop_nonce: the ``DPoP-Nonce`` header (at most 1 KiB), or None.
        method: the HTTP method of the rejected request.
        url: the URL of the rejected request (the MCP endpoint).
        protocol_version: the ``MCP-Protocol-Version`` header the request
            carried, or None (an ``initialize`` before any version was agreed).
        sent_authorization: the ``Authorization`` header value that was
            rejected, or None: lets a provider see that a concurrent flow
            already replaced the token. Never shown by repr.
    """

    status: int
    www_authenticate: str | None
    dpop_nonce: str | None
    method: str
    url: str
    protocol_version: str | None = None
    sent_authorization: str | None = None

    def __repr__(self) -> str:
        return f"<AuthChallenge {self.status} {self.method}>"


@runtime_checkable
class AuthProvider(Protocol):
    """What an HTTP transport asks of an auth provider (``mcpclient.auth.OAuth``).

    A plain callable returning a bearer token is the simple alternative: it
    cannot recover, so a 401 or 403 fails the request with ``auth_required``.
    """

    def headers_for(self, method: str, url: str) -> Mapping[str, str]:
        """The auth headers for one request (``Authorization``, ``DPoP``...).

        Called on the transport's I/O threads for every request and redirect
        hop; must be quick, thread safe and never wait for a person.
        """

    def recover(
        self, challenge: AuthChallenge, *, deadline: float, cancelled: threading.Event
    ) -> float:
        """Act on a 401/403: refresh, authorize, step up, or take a new DPoP nonce.

        Blocks until a request sent now would carry fresh credentials, the
        monotonic ``deadline`` passes, or ``cancelled`` is set. Returns the
        seconds spent waiting for a person (the caller's startup clock does not
        count them). Raises ``AuthError`` with ``auth_required``,
        ``auth_denied``, ``auth_expired`` or ``auth_failed``.
        """


def _check_auth(inst: object, attr: Any, value: object) -> None:
    if value is not None and not callable(value) and not isinstance(value, AuthProvider):
        raise checks.fail(
            inst, attr.name, "must be a callable returning a bearer token, or an auth provider"
        )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def _hide(value: object) -> str:
    return "None" if value is None else "'***'"


def _headers_repr(value: tuple[tuple[str, str], ...] | None) -> str:
    return _env_repr(value)


@attrs.frozen
class _HTTPParams:
    """The connection fields both HTTP transports share."""

    url: str = attrs.field(validator=_check_url, repr=_origin)
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None,
        kw_only=True,
        converter=_frozen_mapping,
        validator=_check_headers,
        repr=_headers_repr,
    )
    auth: Callable[[], str | None] | AuthProvider | None = attrs.field(
        default=None, kw_only=True, validator=_check_auth, repr=_hide
    )
    ca_bundle: str | None = attrs.field(
        default=None, kw_only=True, validator=checks.is_optional_str
    )
    client_cert: str | tuple[str, str] | None = attrs.field(
        default=None, kw_only=True, converter=checks.to_tuple, validator=_check_client_cert
    )
    proxy: str | None = attrs.field(default=None, kw_only=True, validator=_check_proxy, repr=_hide)
    allow_insecure_http: bool = attrs.field(default=False, kw_only=True, validator=checks.is_bool)

    def __attrs_post_init__(self) -> None:
        parts = urlsplit(self.url)
        if (
            parts.scheme == "http"
            and not self.allow_insecure_http
            and not checks.is_loopback_host(parts.hostname or "")
        ):
            raise checks.fail(
                self,
                "url",
                "uses plain http:// to a non-loopback host; use https:// or set"
                " allow_insecure_http",
            )

    @property
    def redacted_origin(self) -> str:
        """``scheme://host[:port]``: never a path, query, userinfo or header."""
        return _origin(self.url)

    @property
    def header_mapping(self) -> dict[str, str]:
        """The static headers as a fresh dict."""
        return dict(self.headers or ())


@attrs.frozen
class StreamableHTTPTransport(_HTTPParams):
    """Reach the server over Streamable HTTP (both protocol eras).

    TLS is always verified (``ca_bundle`` names the trust anchors to use instead
    of the default ones; there is no way to turn verification off). Plain
    ``http://`` is allowed only to a loopback host unless
    ``allow_insecure_http`` is set. ``headers`` and ``auth`` are sent only to
    this URL's origin.

    ``auth`` is a callable returning a bearer token (or ``None`` for none), or
    an auth provider from ``mcpclient.auth``.

    Thread safety: immutable.
    """

    @property
    def kind(self) -> str:
        """``"streamablehttp"``."""
        return "streamablehttp"


@attrs.frozen
class LegacySSETransport(_HTTPParams):
    """Reach a 2024-11-05 server over the deprecated HTTP+SSE transport.

    Refused by :meth:`Definition.validate` unless the binding's profile
    permits :attr:`Tolerance.LEGACY_SSE`. The ``endpoint`` the server names
    must be on this URL's origin.

    Thread safety: immutable.
    """

    @property
    def kind(self) -> str:
        """``"sse"``."""
        return "sse"


#: Any transport parameter object.
Transport = StdioTransport | StreamableHTTPTransport | LegacySSETransport
