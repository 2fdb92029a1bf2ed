"""The knobs and the request records of the test authorization server.

:class:`AuthServerConfig` holds what an
:class:`~mcpclient.testing.auth_server.AuthServer` is told to do (validated
here), :class:`RecordedRequest` what it saw. Both are re-exported by
:mod:`mcpclient.testing.auth_server`. Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["WRONG_ISSUER", "AuthServerConfig", "RecordedRequest"]

METADATA_LOCATIONS = ("oauth", "oidc", "oidc-appended")
REDIRECT_ISS = ("correct", "missing", "wrong", "trailing-slash", "case")
#: The ``iss`` sent with ``redirect_iss="wrong"``.
WRONG_ISSUER = "https://other-issuer.invalid"
REFRESH_POLICIES = ("always", "offline_access", "never")
DPOP_MODES = ("off", "optional", "required")


@dataclasses.dataclass(frozen=True)
class AuthServerConfig:
    """The knobs of an :class:`AuthServer` (pass them as keyword arguments).

    Attributes:
        issuer_path: Appended to the server URL to form the issuer (``""`` or
            ``"/tenant"``, no trailing slash); the endpoints live under it.
        metadata: Where the metadata document is served, any of ``"oauth"``
            (RFC 8414, ``/.well-known/oauth-authorization-server`` + path),
            ``"oidc"`` (``/.well-known/openid-configuration`` + path) and
            ``"oidc-appended"`` (path + ``/.well-known/openid-configuration``);
            ``()`` serves none (the 2025-03-26 client then falls back to
            ``/authorize``, ``/token``, ``/register`` at the root: use
            ``issuer_path=""``).
        metadata_issuer: The ``issuer`` written in the document, when it must
            differ from the real one (the mismatch test).
        code_challenge_methods: ``code_challenge_methods_supported``; None
            omits the field (the server then accepts S256 only).
        iss_supported: ``authorization_response_iss_parameter_supported``.
        redirect_iss: The ``iss`` on the authorization redirect: ``"correct"``,
            ``"missing"``, ``"wrong"`` (:data:`WRONG_ISSUER`),
            ``"trailing-slash"`` (issuer + ``/``) or ``"case"`` (scheme and
            host upper-cased).
        deny: The authorization endpoint answers ``error=access_denied``.
        cimd: ``client_id_metadata_document_supported``: an http(s) URL used as
            ``client_id`` is resolved (a document given to
            :meth:`AuthServer.publish_client_document`, else fetched: 5 s,
            64 KiB, no proxies) at every authorization and token request, and
            must be a JSON object with that ``client_id``, ``client_name`` and
            ``redirect_uris`` (``token_endpoint_auth_method`` ``none``, the
            default, or ``private_key_jwt`` with ``jwks``).
        dcr: Serve the registration endpoint (and list it in the metadata).
        dcr_application_type: When set, registration requires exactly this
            ``application_type`` (else 400 ``invalid_client_metadata``).
        scopes_supported: ``scopes_supported``; None omits the field. Any
            requested scope is granted either way (minus ``withheld_scopes``).
        withheld_scopes: Scopes silently left out of every token (so a step-up
            for them never succeeds).
        refresh_tokens: When a refresh token is issued with a code or refresh
            grant: ``"always"``, ``"offline_access"`` (only when that scope was
            granted) or ``"never"``.
        refresh_rotation: A refresh grant returns a new refresh token and
            invalidates the old one; False returns none and keeps the old one.
        token_lifetime: Access-token ``expires_in``/``exp`` in seconds; None
            issues tokens without expiry.
        require_resource: Authorization and token requests need ``resource``
            (else ``invalid_target``).
        default_audience: ``aud`` of tokens requested without ``resource``.
        dpop: ``"off"`` (proofs ignored, Bearer tokens), ``"optional"`` (a
            proof binds the token) or ``"required"`` (no proof: 400
            ``invalid_dpop_proof``).
        dpop_nonce: Token requests need the server nonce in their proof: a
            missing or stale one gets 400 ``use_dpop_nonce``; every token
            response carries ``DPoP-Nonce``.
        token_error: Every token request fails with this error code (401 for
            ``invalid_client``, else 400) until cleared.
        anonymous_jwt_bearer: Accept a workload JWT-bearer assertion (its
            issuer given to :meth:`AuthServer.trust_assertion_issuer`) with no
            client authentication at all (RFC 7523 §3.1; the token's
            ``client_id`` is then the assertion's ``sub``). Off, such a request
            is 401 ``invalid_client`` (the assertion neither verified nor spent).
        idp: Also act as an enterprise IdP: RFC 8693 token exchange of an ID
            token (:meth:`AuthServer.issue_id_token`) for an ID-JAG.
        jag_client_id: The ``client_id`` claim of the ID-JAGs this IdP issues
            (default: the client that asked, if it identified itself).
        subject: ``sub`` of tokens issued by the code grant.
        device: Serve the device authorization endpoint (RFC 8628; listed in
            the metadata) and accept the device code grant.
        device_interval: The ``interval`` it answers, in seconds (sub-second
            values allowed, for tests); None leaves the field out.
        device_lifetime: The ``expires_in`` of its device codes, in seconds.
    """

    issuer_path: str = ""
    metadata: tuple[str, ...] = ("oauth",)
    metadata_issuer: str | None = None
    code_challenge_methods: tuple[str, ...] | None = ("S256",)
    iss_supported: bool = True
    redirect_iss: str = "correct"
    deny: bool = False
    cimd: bool = False
    dcr: bool = True
    dcr_application_type: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    withheld_scopes: tuple[str, ...] = ()
    refresh_tokens: str = "always"
    refresh_rotation: bool = True
    token_lifetime: float | None = 3600.0
    require_resource: bool = False
    default_audience: str | None = None
    dpop: str = "off"
    dpop_nonce: bool = False
    token_error: str | None = None
    anonymous_jwt_bearer: bool = False
    idp: bool = False
    jag_client_id: str | None = None
    subject: str = "test-user"
    device: bool = False
    device_interval: float | None = 5.0
    device_lifetime: float = 600.0

    def __post_init__(self) -> None:
        """Reject values the server could not act on."""
        path = self.issuer_path
        if path and (not path.startswith("/") or path.endswith("/") or "?" in path):
            raise ValueError("issuer_path must be '' or '/segments' without a trailing slash")
        for name, value, allowed in (
            ("metadata", self.metadata, METADATA_LOCATIONS),
            ("redirect_iss", (self.redirect_iss,), REDIRECT_ISS),
            ("refresh_tokens", (self.refresh_tokens,), REFRESH_POLICIES),
            ("dpop", (self.dpop,), DPOP_MODES),
        ):
            unknown = set(value) - set(allowed)
            if unknown:
                raise ValueError(f"{name}: unknown {sorted(unknown)} (choose from {allowed})")
        if self.token_lifetime is not None and self.token_lifetime < 0:
            raise ValueError("token_lifetime must be >= 0 or None")
        if self.device_interval is not None and self.device_interval < 0:
            raise ValueError("device_interval must be >= 0 or None")
        if self.device_lifetime <= 0:
            raise ValueError("device_lifetime must be > 0")
        for name in ("metadata", "withheld_scopes"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a tuple of strings")


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request the server answered, for assertions.

    Attributes:
        method: ``GET``/``POST``/...
        path: The path, without the query.
        query: Query parameters (first value of each).
        headers: Every header line as sent, in order.
        form: The form body's parameters (token endpoint), else empty.
        json: The decoded JSON body (registration), else None.
        endpoint: ``"metadata"``, ``"authorize"``, ``"token"``, ``"device"``, ``"register"``,
            ``"jwks"``, ``"document"`` or ``"unknown"``.
        status: The HTTP status answered.
        error: The OAuth ``error`` code answered (JSON body or redirect), if any.
        location: The ``Location`` answered (authorization redirects).
    """

    method: str
    path: str
    query: Mapping[str, str]
    headers: tuple[tuple[str, str], ...]
    form: Mapping[str, str]
    json: Any
    endpoint: str
    status: int
    error: str | None
    location: str | None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None
