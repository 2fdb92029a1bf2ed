"""Where to get a token: ``WWW-Authenticate`` challenges, RFC 9728 and RFC 8414 / OIDC metadata.

* :func:`parse_www_authenticate` reads the challenges of a 401/403 (RFC 9110
  §11.6.1) without ever raising, whatever the server sent.
* :func:`fetch_protected_resource` finds the protected resource metadata
  (RFC 9728): the challenge's ``resource_metadata`` URL, else the path-based
  well-known URL, else the root one; its ``resource`` must be the MCP
  server URL or, on the same origin, a path prefix of it (canonical forms
  compared, :func:`canonical_resource`), and is then used verbatim.
* :func:`fetch_server_metadata` finds the authorization server metadata in the
  MCP spec's order (RFC 8414 path-inserted, OIDC path-inserted, OIDC
  path-appended; or the two root documents for an issuer without a path); a
  document whose ``issuer`` is not exactly the issuer used is discarded
  (mix-up defense).
* :func:`legacy_server_metadata` is the 2025-03-26 rule: RFC 8414 metadata at
  the MCP server's origin, else the default ``/authorize``, ``/token`` and
  ``/register`` endpoints.

Every fetch goes through :class:`~mcpclient.auth._net.SafeHTTP` (checked,
pinned, bounded); a 404 moves on to the next candidate, any other failure
stops discovery (there is no routing around an error). The documents are
mapped by :mod:`mcpclient._internal.wire.oauth` (which defines
:class:`ProtectedResource` and :class:`ServerMetadata`, re-exported here);
every endpoint kept passes :func:`~mcpclient.auth._net.check_url`.

Thread safety: the functions share no state; the values are immutable.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from urllib.parse import urlsplit

import attrs

from mcpclient._core.limits import clean_text
from mcpclient._internal.wire import oauth as wire
from mcpclient._internal.wire.oauth import MAX_ITEM_CHARS as MAX_ITEM_CHARS  # noqa: PLC0414
from mcpclient._internal.wire.oauth import MAX_LIST_ITEMS as MAX_LIST_ITEMS  # noqa: PLC0414
from mcpclient._internal.wire.oauth import ProtectedResource as ProtectedResource  # noqa: PLC0414
from mcpclient._internal.wire.oauth import ServerMetadata as ServerMetadata  # noqa: PLC0414
from mcpclient.auth._net import SafeHTTP, URLPolicy, check_url
from mcpclient.errors import AuthError, FailureClass

__all__ = [
    "BearerChallenge",
    "ProtectedResource",
    "ServerMetadata",
    "canonical_resource",
    "fetch_protected_resource",
    "fetch_server_metadata",
    "legacy_server_metadata",
    "parse_www_authenticate",
]

#: Longest ``WWW-Authenticate`` text parsed (the rest is ignored).
MAX_CHALLENGE_CHARS = 8192
#: Most auth-params kept from one header, all challenges together.
MAX_CHALLENGE_PARAMS = 32

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"

_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68_CHARS = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _fail(message: str) -> AuthError:
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


# --- WWW-Authenticate ---


def _frozen_params(value: Mapping[str, str]) -> Mapping[str, str]:
    return types.MappingProxyType(dict(value))


@attrs.frozen
class BearerChallenge:
    """One challenge of a ``WWW-Authenticate`` header.

    Attributes:
        scheme: the auth scheme, lowercased (``bearer``, ``dpop``...).
        params: its auth-params by lowercased name (``realm``, ``scope``,
            ``error``, ``resource_metadata``...), values unquoted. A token68
            (``Basic abc==``) is not kept.
    """

    scheme: str
    params: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_params, hash=False)

    @property
    def error(self) -> str | None:
        """The ``error`` parameter (``invalid_token``, ``insufficient_scope``...), if any."""
        return self.params.get("error")

    @property
    def scopes(self) -> tuple[str, ...]:
        """The space-separated ``scope`` parameter, split (empty when absent)."""
        return tuple(self.params.get("scope", "").split())

    @property
    def resource_metadata(self) -> str | None:
        """The RFC 9728 ``resource_metadata`` URL, if any (not yet checked)."""
        return self.params.get("resource_metadata")


class _Reader:
    """A cursor over header text; every method stops at the end without raising."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_spaces(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.pos += 1

    def skip_separators(self) -> None:
        while self.peek() in (" ", "\t", ",") and self.peek():
            self.pos += 1

    def skip_item(self) -> None:
        """Skip junk up to the next comma that is not inside a quoted string."""
        while self.peek() and self.peek() != ",":
            if self.peek() == '"':
                if self.quoted() is None and self.pos >= len(self.text):
                    return
            else:
                self.pos += 1

    def run(self, chars: frozenset[str]) -> str:
        start = self.pos
        while self.peek() and self.peek() in chars:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str | None:
        """A quoted-string at the cursor, unescaped; None when unterminated or holding a CTL."""
        self.pos += 1  # the opening quote
        out: list[str] = []
        valid = True
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            self.pos += 1
            if ch == '"':
                return "".join(out) if valid else None
            if ch == "\\" and self.pos < len(self.text):
                ch = self.text[self.pos]
                self.pos += 1
            if (ch < " " and ch != "\t") or ch == "\x7f":
                valid = False
            out.append(ch)
        self.pos = len(self.text)
        return None


def parse_www_authenticate(header: str | None) -> list[BearerChallenge]:
    """Parse the challenges of a ``WWW-Authenticate`` header (RFC 9110 §11.6.1).

    Several challenges per header, quoted-string escapes and token68 are
    understood; anything malformed is skipped up to the next comma. Only the
    first 8 KiB and the first 32 parameters count; a repeated parameter keeps
    its first value. Never raises.

    Example::

        parse_www_authenticate('Bearer error="insufficient_scope", scope="a b"')
        # [BearerChallenge(scheme='bearer', params={'error': ..., 'scope': 'a b'})]
    """
    if not isinstance(header, str) or not header:
        return []
    reader = _Reader(header[:MAX_CHALLENGE_CHARS])
    challenges: list[BearerChallenge] = []
    budget = [MAX_CHALLENGE_PARAMS]
    while reader.peek() and budget[0] > 0:
        reader.skip_separators()
        scheme = reader.run(_TCHARS)
        if not scheme or reader.peek() not in ("", " ", "\t", ","):
            reader.skip_item()  # not a challenge: junk up to the next comma
            continue
        challenges.append(BearerChallenge(scheme.lower(), _params(reader, budget)))
    return challenges


def _params(reader: _Reader, budget: list[int]) -> dict[str, str]:
    """The auth-params (or token68) after a scheme, up to the next challenge."""
    params: dict[str, str] = {}
    reader.skip_spaces()
    # A token68 may only follow the scheme directly; after a comma come params.
    first = reader.peek() != ","
    while reader.peek() and budget[0] > 0:
        reader.skip_separators()
        start = reader.pos
        name = reader.run(_TCHARS)
        reader.skip_spaces()
        if name and reader.peek() == "=":
            reader.pos += 1
            reader.skip_spaces()
            if reader.peek() == '"':
                value = reader.quoted()
            elif reader.peek() in _TCHARS:
                value = reader.run(_TCHARS)
            else:
                value = None
            if value is None and first and reader.peek() in ("", ",", "="):
                reader.pos = start  # "abc=" / "abc==": a token68, not a parameter
                _token68(reader)
            elif value is not None:
                budget[0] -= 1
                params.setdefault(name.lower(), value)
        elif first and (name or reader.peek() in _TOKEN68_CHARS):
            reader.pos = start
            _token68(reader)
        else:
            reader.pos = start  # a new challenge (or the end) begins here
            return params
        first = False
        reader.skip_spaces()
        if reader.peek() and reader.peek() != ",":
            reader.skip_item()
    return params


def _token68(reader: _Reader) -> None:
    reader.run(_TOKEN68_CHARS)
    reader.run(frozenset("="))
    reader.skip_spaces()
    if reader.peek() and reader.peek() != ",":
        reader.skip_item()


# --- the resource ---


def canonical_resource(url: str) -> str:
    """The RFC 8707 resource identifier of ``url`` (the MCP server URL).

    Lowercase scheme and host, no userinfo, no fragment, the default port
    dropped, the path kept without trailing slashes (a path of only slashes
    becomes ``/``), the query kept.

    Example::

        canonical_resource("HTTPS://MCP.Example.com:443/mcp/#x") == "https://mcp.example.com/mcp"

    Raises:
        AuthError: ``auth_failed`` when ``url`` is not an absolute http(s) URL.
    """
    try:
        split = urlsplit(url)
        port = split.port
    except (ValueError, TypeError, AttributeError):
        raise _fail("the resource URL is malformed") from None
    scheme = split.scheme.lower()
    host = split.hostname
    if scheme not in ("http", "https") or not host:
        raise _fail("the resource URL is not an absolute http(s) URL")
    shown = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    authority = shown if port in (None, default) else f"{shown}:{port}"
    path = split.path.rstrip("/") or ("/" if split.path else "")
    query = f"?{split.query}" if split.query else ""
    return f"{scheme}://{authority}{path}{query}"


def _covers(claimed: object, server_url: str) -> bool:
    """Whether the resource ``claimed`` by a metadata document may stand for ``server_url``.

    RFC 9728 with MCP's root fallback: the same origin, and a path that is the
    server URL's path or a prefix of it ending on a segment boundary (a root
    document may name the bare origin). A ``claimed`` with a query must be the
    server URL itself. Compared in canonical form (:func:`canonical_resource`).
    """
    if not isinstance(claimed, str):
        return False
    try:
        left = urlsplit(canonical_resource(claimed))
        right = urlsplit(canonical_resource(server_url))
    except AuthError:
        return False
    if (left.scheme, left.netloc) != (right.scheme, right.netloc):
        return False
    # RFC 3986 §6.2.3: an empty path and "/" name the same resource.
    prefix, path = left.path.rstrip("/"), right.path.rstrip("/")
    if left.query:
        return (prefix, left.query) == (path, right.query)
    return path == prefix or path.startswith(prefix + "/")


# --- RFC 9728 ---


def _origin_and_rest(url: str) -> tuple[str, str]:
    """``(scheme://authority, path+query)`` of an absolute URL."""
    split = urlsplit(url)
    rest = split.path + (f"?{split.query}" if split.query else "")
    return f"{split.scheme}://{split.netloc}", rest


def _prm_candidates(server_url: str, challenge_url: str | None) -> list[str]:
    origin, rest = _origin_and_rest(server_url)
    found = [challenge_url] if challenge_url else []
    if rest not in ("", "/"):
        found.append(origin + PRM_WELL_KNOWN + rest)
    found.append(origin + PRM_WELL_KNOWN)
    return list(dict.fromkeys(found))


def fetch_protected_resource(
    server_url: str, challenge_url: str | None, http: SafeHTTP, *, deadline: float
) -> ProtectedResource | None:
    """Fetch the protected resource metadata of the MCP server at ``server_url``.

    Tries the challenge's ``resource_metadata`` URL, then
    ``<origin>/.well-known/oauth-protected-resource/<path>`` (when the server
    URL has a path), then ``<origin>/.well-known/oauth-protected-resource``.
    Whichever answers, its ``resource`` must have the server's origin and a
    path that is the server URL's path or a prefix of it on a segment
    boundary (``https://h`` and ``https://h/api`` cover ``https://h/api/mcp``;
    ``https://h/ap`` does not).

    Returns:
        The metadata, or None when every candidate answered 404.

    Raises:
        AuthError: ``auth_failed``: a refused URL, a network failure, a status
            other than 200/404, a body that is not a JSON object, a
            ``resource`` of another origin or a path that is not a prefix of
            the server's ("resource mismatch"),
            or no ``authorization_servers``.
    """
    check_url(server_url, http.policy, what="MCP server")
    what = "protected resource metadata"
    for url in _prm_candidates(server_url, challenge_url):
        doc = _fetch_document(http, url, deadline=deadline, what=what)
        if doc is None:
            continue
        found = wire.protected_resource(doc, url=url)
        if not _covers(found.resource, server_url):
            raise _fail(
                f"resource mismatch: the {what} at {_shown(url)} describes another resource"
                f" than {canonical_resource(server_url)}"
            )
        if not found.authorization_servers:
            raise _fail(f"the {what} at {_shown(url)} lists no authorization server")
        return found
    return None


# --- RFC 8414 / OpenID Connect Discovery ---


def _metadata_candidates(issuer: str) -> list[str]:
    origin, rest = _origin_and_rest(issuer)
    if rest in ("", "/"):
        return [origin + OAUTH_WELL_KNOWN, origin + OIDC_WELL_KNOWN]
    return [
        origin + OAUTH_WELL_KNOWN + rest,
        origin + OIDC_WELL_KNOWN + rest,
        issuer.rstrip("/") + OIDC_WELL_KNOWN,
    ]


def fetch_server_metadata(issuer: str, http: SafeHTTP, *, deadline: float) -> ServerMetadata:
    """Fetch the metadata of the authorization server ``issuer``.

    Candidates, for ``https://as.example/t1``: ``/.well-known/oauth-authorization-server/t1``,
    ``/.well-known/openid-configuration/t1``, ``/t1/.well-known/openid-configuration``;
    for an issuer without a path: ``/.well-known/oauth-authorization-server``,
    ``/.well-known/openid-configuration``. A 404, or a document whose
    ``issuer`` is not exactly ``issuer`` (no normalization), moves on to the
    next candidate.

    Raises:
        AuthError: ``auth_failed``: a refused issuer or endpoint URL, a
            network failure, a status other than 200/404, a body that is not a
            JSON object, no ``token_endpoint``, "issuer mismatch" when only
            documents for another issuer were found, or no metadata at all.
    """
    check_url(issuer, http.policy, what="authorization server issuer")
    if "?" in issuer:
        raise _fail("the authorization server issuer has a query")
    mismatched = False
    for url in _metadata_candidates(issuer):
        doc = _fetch_document(http, url, deadline=deadline, what="authorization server metadata")
        if doc is None:
            continue
        if wire.document_issuer(doc) != issuer:
            mismatched = True  # another issuer's document: discarded (mix-up defense)
            continue
        return _server_metadata(doc, http)
    if mismatched:
        raise _fail(f"issuer mismatch: no metadata of {_shown(issuer)} names it as its issuer")
    raise _fail(f"no authorization server metadata found for {_shown(issuer)}")


def legacy_server_metadata(server_url: str, http: SafeHTTP, *, deadline: float) -> ServerMetadata:
    """The 2025-03-26 authorization server of the MCP server at ``server_url``.

    Fetches ``<origin>/.well-known/oauth-authorization-server`` (the server
    URL's path stripped, ``MCP-Protocol-Version: 2025-03-26`` sent); on 404,
    the defaults ``<origin>/authorize``, ``/token`` and ``/register`` with
    ``issuer`` = the origin and ``legacy_defaults=True``. A document's
    ``issuer`` must be the origin (a trailing ``/`` is tolerated here only).

    Raises:
        AuthError: ``auth_failed``, as :func:`fetch_server_metadata`.
    """
    check_url(server_url, http.policy, what="MCP server")
    origin, _ = _origin_and_rest(server_url)
    doc = _fetch_document(
        http,
        origin + OAUTH_WELL_KNOWN,
        deadline=deadline,
        what="authorization server metadata",
        headers={"MCP-Protocol-Version": "2025-03-26"},
    )
    if doc is not None:
        if wire.document_issuer(doc) not in (origin, origin + "/"):
            raise _fail(f"issuer mismatch: the metadata at {origin} names another issuer")
        return _server_metadata(doc, http)
    return ServerMetadata(
        issuer=origin,
        authorization_endpoint=origin + "/authorize",
        token_endpoint=origin + "/token",
        registration_endpoint=origin + "/register",
        legacy_defaults=True,
    )


def _server_metadata(doc: Mapping[str, object], http: SafeHTTP) -> ServerMetadata:
    issuer = wire.document_issuer(doc) or ""
    return wire.server_metadata(doc, check_url=_URLRule(http.policy), who=_shown(issuer))


@attrs.frozen
class _URLRule:
    """``check_url`` under one policy, as the wire's URL check (hashable: cached per policy)."""

    policy: URLPolicy

    def __call__(self, url: str, what: str) -> None:
        check_url(url, self.policy, what=what)


# --- shared ---


def _fetch_document(
    http: SafeHTTP,
    url: str,
    *,
    deadline: float,
    what: str,
    headers: Mapping[str, str] | None = None,
) -> Mapping[str, object] | None:
    """GET one metadata document: None on 404, the JSON object on 200, else AuthError."""
    reply = http.get_json(url, deadline=deadline, what=what, headers=headers)
    if reply is None:
        return None
    if reply.status != 200:
        raise _fail(f"the {what} at {_shown(url)} answered HTTP {reply.status}")
    if not isinstance(reply.body, dict):
        raise _fail(f"the {what} at {_shown(url)} is not a JSON object")
    return reply.body


def _shown(url: str) -> str:
    """A URL for a message: its scheme, host and path, bounded (no query)."""
    split = urlsplit(url)
    return clean_text(f"{split.scheme}://{split.netloc}{split.path}", 200)
