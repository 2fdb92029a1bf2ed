"""Which client identity to present to an authorization server.

:func:`obtain_client` tries, in the MCP spec's order (2025-11-25+):

1. a **pre-registered** client (``client_id`` given by the host; a secret or
   a signing key optional), only at the issuer it is bound to
   (``OAuth(issuer=...)``, or the first one it was used with): another issuer
   never sees its ``client_id`` or secret and goes on to the next steps, and
   when none applies the failure names both issuers;
2. a **client ID metadata document**: the host's https URL (with a path) is
   the ``client_id`` when the server advertises
   ``client_id_metadata_document_supported``;
3. a registration **stored for this issuer** (a dynamic registration made
   earlier, ``store.load_client(issuer)``) that was registered for this
   flow's grant (a device-flow registration is not used for the code grant,
   nor the reverse);
4. **dynamic client registration** (RFC 7591) at ``registration_endpoint``,
   saved for this issuer.

A registration belongs to exactly one issuer: one stored for another issuer
is never presented (the store is asked by issuer, and what it returns is
checked again), so an MCP server that moves to a new authorization server
gets a new registration.

Thread safety: no shared state; the caller serializes flows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from mcpclient._core.checks import is_loopback_host
from mcpclient._core.limits import clean_text
from mcpclient._internal.wire import oauth as wire
from mcpclient.auth._net import SafeHTTP, check_url
from mcpclient.auth.discovery import ServerMetadata
from mcpclient.auth.grants import CODE_GRANT_TYPES, ClientSettings
from mcpclient.auth.tokens import ClientInfo, TokenStore
from mcpclient.errors import AuthError, ConfigError, FailureClass

__all__ = ["AUTH_METHODS", "obtain_client"]

#: The token endpoint authentication methods this client implements.
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
#: Bound on server text quoted in an error message.
_SERVER_TEXT = 200


def _fail(message: str) -> AuthError:
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


def obtain_client(
    meta: ServerMetadata,
    settings: ClientSettings,
    store: TokenStore,
    redirect_uris: Sequence[str],
    http: SafeHTTP,
    *,
    deadline: float,
    scopes: Sequence[str] = (),
    bound_issuer: str | None = None,
) -> ClientInfo:
    """The client identity to use with the authorization server ``meta``.

    Args:
        meta: the authorization server's metadata.
        settings: what the host configured about its client.
        store: where dynamic registrations are kept, per issuer.
        redirect_uris: the redirect URIs of this flow (registered by DCR).
        http: the checked HTTP client.
        deadline: monotonic deadline for the registration request.
        scopes: the scopes to register (sent as ``scope`` when not empty).
        bound_issuer: the issuer the pre-registered client belongs to (None:
            not bound yet, it may be used here).

    Returns:
        A :class:`~mcpclient.auth.tokens.ClientInfo` whose ``issuer`` is
        ``meta.issuer``.

    Raises:
        AuthError: ``auth_failed``: an unusable client metadata document URL,
            a failed or refused registration, or "no way to register a client
            with <issuer>".
    """
    mismatch = ""
    if settings.client_id:
        if bound_issuer is None or bound_issuer == meta.issuer:
            return _pre_registered(meta, settings)
        # The configured credentials belong to another authorization server:
        # this one is treated as if none were configured (never shown them).
        mismatch = (
            f"the configured client belongs to the authorization server {_shown(bound_issuer)},"
            f" but the MCP server names {_shown(meta.issuer)}; its credentials are not sent"
            " to another authorization server, and "
        )
    if settings.client_metadata_url and meta.client_id_metadata_document_supported:
        return _metadata_document(meta, settings, http)
    stored = store.load_client(meta.issuer)
    if stored is not None and stored.issuer == meta.issuer and _serves(stored, settings):
        return stored
    if meta.registration_endpoint:
        client = _register(meta, settings, redirect_uris, http, deadline=deadline, scopes=scopes)
        store.save_client(client)
        return client
    if mismatch:
        raise _fail(
            f"{mismatch}{_shown(meta.issuer)} offers neither dynamic registration nor a client"
            " ID metadata document this client could use (configure OAuth(issuer=...) and"
            " a client registered there)"
        )
    raise _fail(f"no way to register a client with {_shown(meta.issuer)}")


def _serves(stored: ClientInfo, settings: ClientSettings) -> bool:
    """Whether a stored registration was made for this flow's grant (its refresh aside).

    A device-flow registration lacks the code grant and an authorization-code
    one the device grant: each flow registers its own (the store keeps the
    newest). A registration stored before grant types were recorded was
    made for the code grant: the only one a flow then registered for by default.
    """
    registered = set(stored.grant_types or CODE_GRANT_TYPES)
    return set(settings.grant_types) - {"refresh_token"} <= registered


def _pre_registered(meta: ServerMetadata, settings: ClientSettings) -> ClientInfo:
    method = settings.token_endpoint_auth_method or _default_method(meta, settings)
    return _client(
        str(settings.client_id),
        method=method,
        secret=settings.client_secret,
        issuer=meta.issuer,
        source="the configured client",
    )


def _default_method(meta: ServerMetadata, settings: ClientSettings) -> str:
    """The method for a configured client that did not name one."""
    if settings.client_key is not None:
        return "private_key_jwt"
    if not settings.client_secret:
        return "none"
    supported = meta.token_endpoint_auth_methods_supported
    # RFC 8414: an absent list means client_secret_basic only.
    if not supported or "client_secret_basic" in supported:
        return "client_secret_basic"
    if "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _metadata_document(
    meta: ServerMetadata, settings: ClientSettings, http: SafeHTTP
) -> ClientInfo:
    url = str(settings.client_metadata_url)
    check_url(url, http.policy, what="client ID metadata document")
    if urlsplit(url).path in ("", "/"):
        raise _fail("the client ID metadata document URL must have a path")
    method = settings.token_endpoint_auth_method or (
        "private_key_jwt" if settings.client_key is not None else "none"
    )
    return _client(
        url,
        method=method,
        secret=None,
        issuer=meta.issuer,
        source="the client ID metadata document",
    )


def _register(
    meta: ServerMetadata,
    settings: ClientSettings,
    redirect_uris: Sequence[str],
    http: SafeHTTP,
    *,
    deadline: float,
    scopes: Sequence[str],
) -> ClientInfo:
    endpoint = str(meta.registration_endpoint)
    method = settings.token_endpoint_auth_method or (
        "private_key_jwt" if settings.client_key is not None else "none"
    )
    body = _registration_request(settings, redirect_uris, method, scopes)
    what = "registration endpoint"
    reply = http.post_json(endpoint, body, deadline=deadline, what=what)
    if reply.status not in (200, 201):
        raise _fail(
            f"client registration at {_shown(meta.issuer)} was refused "
            f"(HTTP {reply.status}{_oauth_error(wire.error_reply(reply.body))})"
        )
    granted = wire.registration(reply.body, who=_shown(meta.issuer))
    secret = granted.client_secret
    if (registered := granted.token_endpoint_auth_method) in AUTH_METHODS:
        method = str(registered)
    elif secret is not None and method == "none":
        method = "client_secret_basic"  # a secret was issued anyway: honor it (RFC 7591 default)
    return _client(
        granted.client_id,
        method=method,
        secret=secret,
        issuer=meta.issuer,
        source=f"the registration at {_shown(meta.issuer)}",
        grant_types=granted.grant_types or settings.grant_types,
    )


def _registration_request(
    settings: ClientSettings, redirect_uris: Sequence[str], method: str, scopes: Sequence[str]
) -> dict[str, Any]:
    uris = list(redirect_uris)
    loopback = bool(uris) and all(_is_loopback_uri(uri) for uri in uris)
    body: dict[str, Any] = {
        "client_name": settings.client_name,
        "redirect_uris": uris,
        "grant_types": list(settings.grant_types),
        # RFC 7591 §2: response types belong to the authorization endpoint (the code grant).
        "response_types": ["code"] if "authorization_code" in settings.grant_types else [],
        "token_endpoint_auth_method": method,
        # MCP spec: loopback redirects mean a native (desktop/CLI) client.
        "application_type": "native" if loopback else settings.application_type,
    }
    if scopes:
        body["scope"] = " ".join(scopes)
    key = settings.client_key
    if method == "private_key_jwt" and key is not None:
        jwk: dict[str, str] = {**key.public_jwk(), "use": "sig", "alg": key.alg}
        if key.key_id:
            jwk["kid"] = key.key_id
        body["jwks"] = {"keys": [jwk]}
    return body


def _is_loopback_uri(uri: str) -> bool:
    try:
        host = urlsplit(uri).hostname
    except ValueError:
        return False
    return host is not None and is_loopback_host(host)


def _client(
    client_id: str,
    *,
    method: str,
    secret: str | None,
    issuer: str,
    source: str,
    grant_types: tuple[str, ...] = (),
) -> ClientInfo:
    if method not in AUTH_METHODS:
        raise _fail(
            f"{source} uses token endpoint auth method {clean_text(method, 64)!r}, "
            "which this client does not implement"
        )
    try:
        return ClientInfo(
            client_id,
            auth_method=method,
            client_secret=secret,
            issuer=issuer,
            grant_types=grant_types,
        )
    except ConfigError as exc:
        # The message names the field, never its value.
        raise _fail(f"{source} is unusable: {exc.message}") from None


def _oauth_error(error: wire.ErrorReply) -> str:
    if error.error is None:
        return ""
    text = f", {clean_text(error.error, 64)}"
    if error.error_description:
        text += f": {clean_text(error.error_description, _SERVER_TEXT)}"
    return text


def _shown(issuer: str) -> str:
    return clean_text(issuer, _SERVER_TEXT)
