"""The OAuth provider's own logic: arguments, headers, the cheap rungs of recover().

Everything here runs without a network peer: the rungs tested (a token
already replaced, a DPoP nonce, a plain 403, the step-up limit, the PKCE and
scope rules) decide before any I/O. The flows themselves run end to end in
tests/integration/test_auth_flows.py.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import attrs
import jwt
import pytest

from mcpclient.auth import (
    AuthChallenge,
    AuthorizationCodeGrant,
    AuthProvider,
    ClientCredentialsGrant,
    JWTBearerGrant,
    OAuth,
    TokenExchangeGrant,
    TokenSet,
)
from mcpclient.auth import _rules as rules
from mcpclient.auth import oauth as oauth_module
from mcpclient.auth._jose import token_hash
from mcpclient.auth.discovery import ProtectedResource, ServerMetadata
from mcpclient.auth.grants import ClientSettings
from mcpclient.errors import AuthError, ConfigError, FailureClass

SERVER = "http://127.0.0.1:9/mcp"  # never contacted: every test decides before I/O
SECRET = "s3cr3t-client-secret-value"
ISSUER = "http://127.0.0.1:9/as"


def _ec_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _tokens(access: str = "access-1", **kw: Any) -> TokenSet:
    kw.setdefault("issuer", ISSUER)
    kw.setdefault("resource", SERVER)
    kw.setdefault("expires_at", time.time() + 3600)
    return TokenSet(access, **kw)


def _provider_with(tokens: TokenSet, **kw: Any) -> OAuth:
    provider = OAuth(**kw)
    provider._bind(SERVER)
    provider._set_tokens(tokens)
    return provider


def _challenge(status: int = 401, www: str | None = None, **kw: Any) -> AuthChallenge:
    kw.setdefault("method", "POST")
    kw.setdefault("url", SERVER)
    kw.setdefault("dpop_nonce", None)
    return AuthChallenge(status=status, www_authenticate=www, **kw)


def _recover(provider: OAuth, challenge: AuthChallenge) -> float:
    return provider.recover(challenge, deadline=time.monotonic() + 5, cancelled=threading.Event())


def _meta(**kw: Any) -> ServerMetadata:
    values: dict[str, Any] = {
        "issuer": ISSUER,
        "authorization_endpoint": ISSUER + "/authorize",
        "token_endpoint": ISSUER + "/token",
        "registration_endpoint": None,
        "scopes_supported": (),
        "code_challenge_methods_supported": ("S256",),
        "token_endpoint_auth_methods_supported": (),
        "token_endpoint_auth_signing_alg_values_supported": (),
        "grant_types_supported": (),
        "authorization_response_iss_parameter_supported": False,
        "client_id_metadata_document_supported": False,
        "dpop_signing_alg_values_supported": (),
        "authorization_grant_profiles_supported": (),
        "legacy_defaults": False,
    }
    values.update(kw)
    names = {field.name for field in attrs.fields(ServerMetadata)}
    return ServerMetadata(**{k: v for k, v in values.items() if k in names})


def _context(meta: ServerMetadata | None = None, prm_scopes: tuple[str, ...] | None = ()) -> Any:
    prm = None
    if prm_scopes is not None:
        prm = ProtectedResource(
            resource=SERVER,
            authorization_servers=(ISSUER,),
            scopes_supported=prm_scopes,
            url=SERVER,
        )
    return oauth_module._Context(
        resource=SERVER, send_resource=prm is not None, meta=meta or _meta(), prm=prm
    )


# -- grants and settings ------------------------------------------------------------


def test_grant_reprs_never_show_secrets_or_closures() -> None:
    hidden = "closure-secret-jwt"
    grants = [
        AuthorizationCodeGrant(),
        AuthorizationCodeGrant(redirect=lambda url: url, redirect_uri="http://127.0.0.1/cb"),
        ClientCredentialsGrant(),
        JWTBearerGrant(lambda: hidden),
        TokenExchangeGrant("https://idp.example/token", lambda: hidden, idp_client_secret=SECRET),
        ClientSettings(client_id="cid", client_secret=SECRET),
    ]
    for value in grants:
        assert SECRET not in repr(value) and SECRET not in str(value)
        assert hidden not in repr(value)
    assert "headless" in repr(grants[1]) and "loopback" in repr(grants[0])
    assert "client_secret=<set>" in repr(grants[-1])


def test_headless_redirect_uri_defaults_to_loopback_callback() -> None:
    assert AuthorizationCodeGrant().headless_redirect_uri == "http://127.0.0.1/callback"
    grant = AuthorizationCodeGrant(redirect=str, redirect_uri="https://app.example/cb")
    assert grant.headless_redirect_uri == "https://app.example/cb"


@pytest.mark.parametrize(
    "build",
    [
        lambda: AuthorizationCodeGrant(redirect="not callable"),  # type: ignore[arg-type]
        lambda: AuthorizationCodeGrant(redirect_uri=""),
        lambda: JWTBearerGrant("a plain string"),  # type: ignore[arg-type]
        lambda: TokenExchangeGrant("", lambda: "t"),
        lambda: TokenExchangeGrant("https://idp/t", "t"),  # type: ignore[arg-type]
    ],
)
def test_grant_fields_are_validated(build: Any) -> None:
    with pytest.raises(ConfigError):
        build()


# -- OAuth arguments ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"grant": "code"}, "grant"),
        ({"client_secret": SECRET}, "client_id"),
        ({"client_id": ""}, "client_id"),
        ({"token_endpoint_auth_method": "tls_client_auth"}, "token_endpoint_auth_method"),
        ({"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"}, "client_key"),
        ({"client_metadata_url": "http://app.example/client.json"}, "client_metadata_url"),
        ({"client_metadata_url": "https://app.example"}, "client_metadata_url"),
        ({"application_type": "desktop"}, "application_type"),
        ({"client_name": "two\nlines"}, "client_name"),
        ({"scopes": "read write"}, "scopes"),
        ({"scopes": ["read write"]}, "scopes"),
        ({"scopes": [""]}, "scopes"),
        ({"grant": ClientCredentialsGrant()}, "client_id"),
        ({"grant": ClientCredentialsGrant(), "client_id": "c"}, "client_id"),
        ({"client_id": "c", "client_key": 42}, "client_key"),
        (
            {"grant": JWTBearerGrant(lambda: "jwt"), "token_endpoint_auth_method": "none"},
            "token_endpoint_auth_method",
        ),
        ({"grant": TokenExchangeGrant("https://idp.example/t", lambda: "t")}, "client_id"),
        ({"issuer": "https://as.example"}, "issuer"),
        ({"client_id": "c", "issuer": "as.example"}, "issuer"),
        ({"client_id": "c", "issuer": 42}, "issuer"),
    ],
)
def test_unusable_arguments_are_config_errors(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        OAuth(**kwargs)
    assert f"OAuth.{field}" in str(info.value)
    assert SECRET not in str(info.value)


def test_a_jwt_bearer_workload_without_a_client_is_anonymous(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_registration(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an anonymous workload registers nothing")

    monkeypatch.setattr(oauth_module.registration, "obtain_client", no_registration)
    anonymous = OAuth(grant=JWTBearerGrant(lambda: "jwt"))
    anonymous._bind(SERVER)
    with anonymous._endpoint(_context(), time.monotonic() + 5) as endpoint:
        assert "anonymous" in repr(endpoint)
    monkeypatch.undo()
    named = OAuth(grant=JWTBearerGrant(lambda: "jwt"), client_id="workload")
    named._bind(SERVER)
    with named._endpoint(_context(), time.monotonic() + 5) as endpoint:
        assert "anonymous" not in repr(endpoint) and " none" in repr(endpoint)


def test_a_bad_client_key_is_refused_without_quoting_it() -> None:
    pem = "-----BEGIN PRIVATE KEY-----\nTk9UQUtFWQ==\n-----END PRIVATE KEY-----\n"
    with pytest.raises(ConfigError) as info:
        OAuth(client_id="c", client_key=pem)
    assert "OAuth.client_key" in str(info.value)
    assert "Tk9UQUtFWQ" not in str(info.value) and "Tk9UQUtFWQ" not in repr(info.value)


def test_valid_arguments_build_a_provider_that_hides_its_secrets() -> None:
    pem = _ec_pem()
    provider = OAuth(
        grant=ClientCredentialsGrant(),
        client_id="svc",
        client_secret=SECRET,
        client_key=pem,
        client_key_id="k1",
        scopes=["read", "write"],
    )
    assert isinstance(provider, AuthProvider)
    assert not callable(provider)  # the transport would take a callable for a bare token
    for text in (repr(provider), str(provider)):
        assert SECRET not in text and "PRIVATE KEY" not in text
    assert provider.scopes == () and provider.issuer is None


# -- headers_for ------------------------------------------------------------------------


def test_no_headers_before_any_token() -> None:
    provider = OAuth()
    assert provider.headers_for("POST", SERVER) == {}


def test_bearer_header_only_for_the_servers_own_origin() -> None:
    provider = _provider_with(_tokens("tok-A"))
    assert provider.headers_for("POST", SERVER) == {"Authorization": "Bearer tok-A"}
    # Another path of the same origin (a redirect hop) still gets it.
    assert provider.headers_for("GET", "http://127.0.0.1:9/other?x=1")
    for elsewhere in (
        "http://127.0.0.1:10/mcp",
        "https://127.0.0.1:9/mcp",
        "http://localhost:9/mcp",
        "http://evil.example/mcp",
    ):
        assert provider.headers_for("POST", elsewhere) == {}
    assert "tok-A" not in repr(provider)


def test_dpop_headers_carry_a_proof_bound_to_the_token_and_the_servers_nonce() -> None:
    provider = _provider_with(_tokens("tok-D", token_type="DPoP"), dpop=True)
    headers = provider.headers_for("POST", SERVER + "?q=1")
    assert headers["Authorization"] == "DPoP tok-D"
    header = jwt.get_unverified_header(headers["DPoP"])
    claims = jwt.decode(headers["DPoP"], options={"verify_signature": False})
    assert header["typ"] == "dpop+jwt" and header["jwk"]["kty"] == "EC"
    assert claims["htm"] == "POST" and claims["htu"] == SERVER
    assert claims["ath"] == token_hash("tok-D") and "nonce" not in claims
    # The server demands a nonce: recover keeps it, the next proof carries it.
    nonce_challenge = _challenge(
        www='DPoP error="use_dpop_nonce", error_description="nonce"',
        dpop_nonce="n-1",
        sent_authorization="DPoP tok-D",
    )
    assert _recover(provider, nonce_challenge) == 0.0
    again = provider.headers_for("POST", SERVER)
    assert jwt.decode(again["DPoP"], options={"verify_signature": False})["nonce"] == "n-1"
    assert again["DPoP"] != headers["DPoP"]  # a fresh jti every time
    # The same nonce demanded again means the proof is refused for another reason.
    with pytest.raises(AuthError) as info:
        _recover(provider, nonce_challenge)
    assert info.value.failure_class is FailureClass.AUTH_FAILED


# -- recover: the rungs that decide before any I/O -----------------------------------


def test_a_token_already_replaced_needs_nothing() -> None:
    provider = _provider_with(_tokens("tok-new"))
    stale = _challenge(www='Bearer error="invalid_token"', sent_authorization="Bearer tok-old")
    assert _recover(provider, stale) == 0.0
    assert provider.headers_for("POST", SERVER) == {"Authorization": "Bearer tok-new"}


def test_a_403_without_insufficient_scope_is_denied() -> None:
    provider = _provider_with(_tokens("tok-1"))
    for www in (None, 'Bearer error="invalid_token"', 'Bearer error="insufficient_scope"'):
        with pytest.raises(AuthError) as info:
            _recover(provider, _challenge(403, www, sent_authorization="Bearer tok-1"))
        assert info.value.failure_class is FailureClass.AUTH_DENIED
        assert "tok-1" not in str(info.value)


def test_step_ups_stop_at_the_limit_with_auth_denied() -> None:
    provider = _provider_with(_tokens("tok-1"))
    provider._state.authorizations[frozenset({"admin"})] = oauth_module.MAX_STEP_UPS
    challenge = _challenge(
        403, 'Bearer error="insufficient_scope", scope="admin"', sent_authorization="Bearer tok-1"
    )
    with pytest.raises(AuthError) as info:
        _recover(provider, challenge)
    assert info.value.failure_class is FailureClass.AUTH_DENIED
    assert "step-up" in str(info.value)


def test_one_provider_serves_one_server() -> None:
    provider = _provider_with(_tokens("tok-1"))
    other = _challenge(url="http://127.0.0.1:10/mcp", sent_authorization="Bearer tok-1")
    with pytest.raises(AuthError) as info:
        _recover(provider, other)
    assert "another MCP server" in str(info.value)


def test_recover_waits_for_a_running_flow_only_until_its_deadline() -> None:
    provider = OAuth()
    assert provider._flow_lock.acquire()
    try:
        with pytest.raises(AuthError) as info:
            provider.recover(
                _challenge(), deadline=time.monotonic() + 0.05, cancelled=threading.Event()
            )
        assert info.value.failure_class is FailureClass.AUTH_FAILED
    finally:
        provider._flow_lock.release()


# -- PKCE and scope rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("methods", "version", "legacy", "allowed"),
    [
        (("S256",), None, False, True),
        (("plain", "S256"), "2025-11-25", False, True),
        (("plain",), "2025-06-18", False, False),
        ((), "2025-06-18", False, False),
        (None, None, False, False),  # initialize: no version agreed yet
        (None, "2025-11-25", False, False),
        (None, "2026-07-28", False, False),
        (None, "2025-06-18", False, True),
        (None, None, True, True),  # a 2025-03-26 server (no protected resource metadata)
    ],
)
def test_pkce_rule(
    methods: tuple[str, ...] | None, version: str | None, legacy: bool, allowed: bool
) -> None:
    meta = _meta(code_challenge_methods_supported=methods)
    if allowed:
        rules.check_pkce(meta, version, legacy=legacy)
    else:
        with pytest.raises(AuthError) as info:
            rules.check_pkce(meta, version, legacy=legacy)
        assert info.value.failure_class is FailureClass.AUTH_FAILED


def test_scopes_come_from_the_challenge_then_the_host_then_the_resource() -> None:
    plain = OAuth()
    context = _context(prm_scopes=("a", "b", "offline_access"))
    assert plain._initial_scopes(context, ("x",)) == ("x",)
    # offline_access is asked for only when the authorization server advertises it
    assert plain._initial_scopes(context, ()) == ("a", "b")
    assert OAuth(scopes=["h"])._initial_scopes(context, ()) == ("h",)
    assert plain._initial_scopes(_context(prm_scopes=()), ()) == ()
    assert plain._initial_scopes(_context(prm_scopes=None), ()) == ()


def test_offline_access_is_added_when_advertised_for_the_code_grant_only() -> None:
    meta = _meta(scopes_supported=("a", "offline_access"))
    context = _context(meta, prm_scopes=("a", "offline_access"))
    assert OAuth()._initial_scopes(context, ("a",)) == ("a", "offline_access")
    assert OAuth()._initial_scopes(context, ()) == ("a", "offline_access")
    machine = OAuth(grant=ClientCredentialsGrant(), client_id="c", client_secret=SECRET)
    assert machine._initial_scopes(context, ("a",)) == ("a",)
    # No scope at all stays no scope (the server's default), not offline_access alone.
    assert OAuth()._initial_scopes(_context(meta, prm_scopes=()), ()) == ()


def test_origins_compare_scheme_host_and_effective_port() -> None:
    assert rules.origin("HTTPS://Example.COM:443/a?b") == ("https", "example.com", None)
    assert rules.origin("http://127.0.0.1:80/") == rules.origin("http://127.0.0.1/x")
    assert rules.origin("http://h:99999/") != rules.origin("http://h/")


def test_scope_helpers_keep_order_and_drop_repeats() -> None:
    assert rules.scope_list(" a  b a ") == ("a", "b")
    assert rules.scope_list(None) == ()
    assert rules.merge(("a", "b"), ("b", "c"), ()) == ("a", "b", "c")


def test_bears_compares_the_token_of_an_authorization_value() -> None:
    assert rules.bears("Bearer tok", "tok") and rules.bears("DPoP tok", "tok")
    assert not rules.bears("Bearer tok2", "tok") and not rules.bears(None, "tok")
