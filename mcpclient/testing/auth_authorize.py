"""The authorization endpoint of the test authorization server.

No user interface: a request is validated and answered at once with a
redirect carrying a code (or an OAuth error), or with a 400 page when the
client or its redirect URI cannot be trusted with a redirect.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode, urlsplit, urlunsplit

from .auth_base import OAuthError, RegisteredClient, Reply, is_loopback_http
from .auth_clients import ClientRegistry
from .auth_config import WRONG_ISSUER, AuthServerConfig
from .auth_grants import TokenEndpoint


def authorize(
    query: Mapping[str, str],
    *,
    cfg: AuthServerConfig,
    issuer: str,
    clients: ClientRegistry,
    tokens: TokenEndpoint,
) -> Reply:
    """Answer one authorization request of a server at ``issuer``."""
    try:
        client = clients.client(query.get("client_id", ""))
    except OAuthError as failure:  # a bad metadata document: never redirect
        return Reply.text(400, failure.description, error="invalid_client")
    redirect_uri = query.get("redirect_uri", "")
    if client is None:
        return Reply.text(400, "unknown client", error="invalid_client")
    if not _redirect_allowed(client, redirect_uri):
        return Reply.text(400, "redirect_uri not registered", error="invalid_request")

    def back(**params: str) -> Reply:
        if "state" in query:
            params["state"] = query["state"]
        iss = redirect_iss(cfg.redirect_iss, issuer)
        if iss is not None:
            params["iss"] = iss
        return Reply.redirect(_with_query(redirect_uri, params), error=params.get("error"))

    if query.get("response_type") != "code":
        return back(error="unsupported_response_type")
    challenge = query.get("code_challenge", "")
    method = query.get("code_challenge_method", "plain")
    allowed = cfg.code_challenge_methods or ("S256",)
    if not challenge or method not in allowed:
        return back(error="invalid_request", error_description="PKCE S256 is required")
    resource = query.get("resource")
    if cfg.require_resource and not resource:
        return back(error="invalid_target", error_description="resource is required")
    if cfg.deny:
        return back(error="access_denied", error_description="the user said no")
    code = tokens.new_code(
        client_id=client.client_id,
        redirect_uri=redirect_uri,
        challenge=challenge,
        method=method,
        scopes=tuple(query.get("scope", "").split()),
        resource=resource,
    )
    return back(code=code)


def redirect_iss(mode: str, issuer: str) -> str | None:
    """The ``iss`` parameter of an authorization redirect per the ``redirect_iss`` knob."""
    if mode == "missing":
        return None
    if mode == "wrong":
        return WRONG_ISSUER
    if mode == "trailing-slash":
        return issuer + "/"
    if mode == "case":
        parts = urlsplit(issuer)
        return urlunsplit((parts.scheme.upper(), parts.netloc.upper(), parts.path, parts.query, ""))
    return issuer


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    extra = urlencode(params)
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _redirect_allowed(client: RegisteredClient, uri: str) -> bool:
    """Exact match, or a loopback match on any port (RFC 8252 §7.3)."""
    if not uri or "#" in uri:
        return False
    if client.redirect_uris is None:
        return is_loopback_http(uri) or uri.startswith("https://")
    for registered in client.redirect_uris:
        if uri == registered:
            return True
        if is_loopback_http(registered) and is_loopback_http(uri):
            want, got = urlsplit(registered), urlsplit(uri)
            if (want.hostname, want.path, want.query) == (got.hostname, got.path, got.query):
                return True
    return False
