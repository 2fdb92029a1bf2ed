"""The pure decisions of :class:`~mcpclient.auth.OAuth`: PKCE, scopes, origins.

Kept apart from the provider so each rule reads (and is tested) as a plain
function of its inputs, with no I/O and no state.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from urllib.parse import urlsplit

from mcpclient.auth.discovery import ServerMetadata
from mcpclient.errors import AuthError, FailureClass

__all__ = ["PKCE_LISTED_FROM", "bears", "check_pkce", "initial_scopes", "merge", "origin"]

#: The first protocol version whose authorization servers must list PKCE methods.
PKCE_LISTED_FROM = "2025-11-25"

_DEFAULT_PORTS = {"https": 443, "http": 80}


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, lowercased, the default port as None."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1  # matches no real origin
    if port == _DEFAULT_PORTS.get(scheme):
        port = None
    return scheme, (parts.hostname or "").lower(), port


def scope_list(text: str | None) -> tuple[str, ...]:
    """The scopes of a space-separated ``scope`` value, once each, in order."""
    return tuple(dict.fromkeys((text or "").split()))


def merge(*groups: Sequence[str]) -> tuple[str, ...]:
    """The union of scope lists, first appearance first."""
    return tuple(dict.fromkeys(scope for group in groups for scope in group))


def bears(sent_authorization: str | None, access_token: str) -> bool:
    """Whether an ``Authorization`` value carried ``access_token`` (constant time)."""
    if sent_authorization is None:
        return False
    sent = sent_authorization.partition(" ")[2]
    return hmac.compare_digest(sent.encode(), access_token.encode())


def check_pkce(meta: ServerMetadata, protocol_version: str | None, *, legacy: bool) -> None:
    """Refuse an authorization server that cannot be shown to support PKCE with S256.

    Listed methods without S256: refused (never downgraded to ``plain``).
    Field absent: refused for 2025-11-25 and later, and when no version is
    agreed yet (``initialize``); accepted for older versions and for a
    2025-03-26 server found without protected resource metadata (``legacy``),
    which predate the rule.

    Raises:
        AuthError: ``auth_failed``.
    """
    methods = meta.code_challenge_methods_supported
    if methods is None:
        if legacy or (protocol_version is not None and protocol_version < PKCE_LISTED_FROM):
            return
        raise AuthError(
            f"{meta.issuer} does not list code_challenge_methods_supported; PKCE cannot be"
            " confirmed, so the authorization is refused",
            failure_class=FailureClass.AUTH_FAILED,
            op="authorize",
        )
    if "S256" not in methods:
        raise AuthError(
            f"{meta.issuer} does not support PKCE with S256; the authorization is refused",
            failure_class=FailureClass.AUTH_FAILED,
            op="authorize",
        )


def initial_scopes(
    *,
    challenged: Sequence[str],
    configured: Sequence[str],
    resource_scopes: Sequence[str],
    advertised: Sequence[str],
    wants_refresh: bool,
) -> tuple[str, ...]:
    """The scopes of a new authorization (MCP spec, "Scope selection").

    The challenge's ``scope`` (authoritative for the request), else the
    host's, else the protected resource's ``scopes_supported``, else none (no
    ``scope`` parameter: the server's default). ``offline_access`` only when
    the authorization server advertises it; added then for a grant that can
    use a refresh token, unless nothing else is requested.
    """
    if challenged:
        scopes = tuple(challenged)
    elif configured:
        scopes = tuple(configured)
    else:
        scopes = tuple(
            s for s in resource_scopes if s != "offline_access" or "offline_access" in advertised
        )
    if scopes and wants_refresh and "offline_access" in advertised:
        scopes = merge(scopes, ("offline_access",))
    return scopes
