"""The enterprise IdP side of the test authorization server (``idp=True``).

The server's ES256 signing key as a JWK (ID tokens and ID-JAGs are signed
with it), and the RFC 8693 token exchange of an ID token the server issued
for an ID-JAG (SEP-990), which another
:class:`~mcpclient.testing.auth_server.AuthServer` that trusts this one
accepts in a JWT-bearer grant. Nothing here is meant to be used directly.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any, cast

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from .auth_base import (
    ID_JAG_TYP,
    NO_STORE,
    IssuingServer,
    OAuthError,
    RegisteredClient,
    Reply,
    json_reply,
)
from .oauth_common import jwk_thumbprint

TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_JAG_LIFETIME = 300


def public_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    """The public half of ``key`` as a signing JWK (``kid`` its thumbprint)."""
    jwk = cast(dict[str, str], jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True))
    jwk["kid"] = jwk_thumbprint(jwk)
    jwk["alg"] = "ES256"
    jwk["use"] = "sig"
    return jwk


def token_exchange(
    server: IssuingServer, own_key: Any, form: Mapping[str, str], client: RegisteredClient | None
) -> Reply:
    """IdP mode: an ID token for an ID-JAG (RFC 8693, SEP-990)."""
    for name, wanted in (
        ("requested_token_type", TOKEN_TYPE_ID_JAG),
        ("subject_token_type", TOKEN_TYPE_ID_TOKEN),
    ):
        if form.get(name) != wanted:
            raise OAuthError("invalid_request", f"{name} must be {wanted}")
    audience = form.get("audience")
    if not audience:
        raise OAuthError("invalid_request", "audience is required")
    try:
        identity = jwt.decode(
            form.get("subject_token", ""),
            own_key,
            algorithms=["ES256"],
            issuer=server.issuer,
            options={"verify_aud": False, "require": ["exp", "sub", "iss"]},
        )
    except jwt.PyJWTError as exc:
        why = type(exc).__name__
        raise OAuthError("invalid_grant", f"subject_token rejected ({why})") from exc
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": server.issuer,
        "sub": identity["sub"],
        "aud": audience,
        "iat": now,
        "exp": now + ID_JAG_LIFETIME,
        "jti": secrets.token_hex(12),
    }
    client_id = server.config.jag_client_id or (client.client_id if client else None)
    if client_id is not None:
        claims["client_id"] = client_id
    if form.get("resource"):
        claims["resource"] = form["resource"]
    if form.get("scope"):
        claims["scope"] = form["scope"]
    answer: dict[str, Any] = {
        "access_token": server.sign(claims, typ=ID_JAG_TYP),
        "issued_token_type": TOKEN_TYPE_ID_JAG,
        "token_type": "N_A",
        "expires_in": ID_JAG_LIFETIME,
    }
    if form.get("scope"):
        answer["scope"] = form["scope"]
    return json_reply(200, answer, headers=NO_STORE)
