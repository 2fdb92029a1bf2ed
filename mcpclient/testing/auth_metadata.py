"""Where the test authorization server's endpoints live, and its metadata document.

The endpoint paths (under the issuer), the well-known metadata locations and
the RFC 8414 / OpenID Connect discovery document built from the knobs.
"""

from __future__ import annotations

from typing import Any

from .auth_base import GRANT_JWT_BEARER, GRANT_TOKEN_EXCHANGE, ID_JAG_PROFILE
from .auth_clients import AUTH_METHODS
from .auth_config import AuthServerConfig
from .auth_device import DEVICE_PATH, GRANT_DEVICE_CODE
from .oauth_common import DPOP_ALGS

AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
JWKS_PATH = "/jwks"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def metadata_document(cfg: AuthServerConfig, issuer: str, *, trusts_idps: bool) -> dict[str, Any]:
    """The authorization server metadata document of a server at ``issuer``.

    ``trusts_idps``: some IdP is trusted (the document then lists the ID-JAG
    grant profile).
    """
    grants = ["authorization_code", "refresh_token", "client_credentials", GRANT_JWT_BEARER]
    if cfg.idp:
        grants.append(GRANT_TOKEN_EXCHANGE)
    doc: dict[str, Any] = {
        "issuer": cfg.metadata_issuer if cfg.metadata_issuer is not None else issuer,
        "authorization_endpoint": issuer + AUTHORIZE_PATH,
        "token_endpoint": issuer + TOKEN_PATH,
        "jwks_uri": issuer + JWKS_PATH,
        "response_types_supported": ["code"],
        "grant_types_supported": grants,
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "PS256"],
        "authorization_response_iss_parameter_supported": cfg.iss_supported,
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
    }
    if cfg.device:
        grants.append(GRANT_DEVICE_CODE)
        doc["device_authorization_endpoint"] = issuer + DEVICE_PATH
    if cfg.dcr:
        doc["registration_endpoint"] = issuer + REGISTER_PATH
    if cfg.code_challenge_methods is not None:
        doc["code_challenge_methods_supported"] = list(cfg.code_challenge_methods)
    if cfg.scopes_supported is not None:
        doc["scopes_supported"] = list(cfg.scopes_supported)
    if cfg.cimd:
        doc["client_id_metadata_document_supported"] = True
    if cfg.dpop != "off":
        doc["dpop_signing_alg_values_supported"] = list(DPOP_ALGS)
    if trusts_idps:
        doc["authorization_grant_profiles_supported"] = [ID_JAG_PROFILE]
    return doc
