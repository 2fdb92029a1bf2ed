"""The OAuth test peers behave as documented, driven by hand with ``requests`` and PyJWT.

:class:`mcpclient.testing.auth_server.AuthServer` (in process) and the
protected mode of the HTTP test server (``--oauth-*``, a subprocess). Nothing
here uses ``mcpclient.auth``: these tests pin the peers that its end-to-end
tests rely on.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from .auth_support import (
    SERVER_COMMAND,
    AuthServer,
    OAuthPeers,
    ProtectedServer,
    dpop_proof,
    oauth_peers,
    pkce_pair,
    redirect_params,
    thumbprint,
)

__all__ = ["oauth_peers"]  # the imported fixture, used by name

TIMEOUT = 10.0
CALLBACK = "http://127.0.0.1:8765/callback"
RESOURCE = "http://127.0.0.1:9/mcp"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
FORM = "application/x-www-form-urlencoded"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


# ----------------------------------------------------------------------------- helpers


def get(url: str, **kwargs: Any) -> requests.Response:
    return requests.get(url, timeout=TIMEOUT, allow_redirects=False, **kwargs)


def authorize(
    auth: AuthServer,
    client_id: str = "app",
    *,
    challenge: str | None = None,
    **params: str,
) -> requests.Response:
    """GET the authorization endpoint with sensible defaults (``params`` override them)."""
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": "st-1",
        "code_challenge": challenge if challenge is not None else pkce_pair()[1],
        "code_challenge_method": "S256",
        "scope": "mcp offline_access",
        "resource": RESOURCE,
        **params,
    }
    return get(auth.authorization_endpoint, params={k: v for k, v in query.items() if v})


def token(
    auth: AuthServer,
    form: dict[str, str],
    *,
    basic: tuple[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> requests.Response:
    return requests.post(
        auth.token_endpoint, data=form, auth=basic, headers=headers or {}, timeout=TIMEOUT
    )


def code_for(auth: AuthServer, client_id: str = "app", **params: str) -> tuple[str, str]:
    """Run the authorization step; returns ``(code, verifier)``."""
    verifier, challenge = pkce_pair()
    response = authorize(auth, client_id, challenge=challenge, **params)
    assert response.status_code == 302, response.text
    return redirect_params(response.headers["Location"])["code"], verifier


def exchange(
    auth: AuthServer,
    code: str,
    verifier: str,
    *,
    basic: tuple[str, str] | None = ("app", "s3cret"),
    **extra: str,
) -> requests.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": CALLBACK,
        "code_verifier": verifier,
        "resource": RESOURCE,
        **extra,
    }
    return token(auth, {k: v for k, v in form.items() if v}, basic=basic)


def claims_of(auth: AuthServer, access_token: str) -> dict[str, Any]:
    """Decode an access token with PyJWT (HS256 under the server's secret)."""
    claims: dict[str, Any] = jwt.decode(
        access_token, auth.token_secret, algorithms=["HS256"], options={"verify_aud": False}
    )
    return claims


def error_of(response: requests.Response) -> str | None:
    body = response.json()
    return body.get("error") if isinstance(body, dict) else None


def private_key_jwt(
    key: Any, client_id: str, audience: str, alg: str = "RS256", **extra: Any
) -> str:
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 60}
    claims["jti"] = extra.pop("jti", f"jti-{time.monotonic_ns()}")
    claims.update(extra)
    return jwt.encode(claims, key, algorithm=alg)


def pem_public(key: Any) -> bytes:
    data: bytes = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data


@pytest.fixture
def auth_app() -> Iterator[AuthServer]:
    """A default server with the confidential client ``app`` (secret ``s3cret``)."""
    with AuthServer(scopes_supported=("mcp", "offline_access")) as auth:
        auth.add_client("app", secret="s3cret", redirect_uris=[CALLBACK])
        yield auth


# ----------------------------------------------------------------------------- metadata


@pytest.mark.parametrize(
    ("issuer_path", "metadata", "served"),
    [
        ("", ("oauth",), {"/.well-known/oauth-authorization-server"}),
        ("", ("oidc",), {"/.well-known/openid-configuration"}),
        ("/tenant", ("oauth",), {"/.well-known/oauth-authorization-server/tenant"}),
        ("/tenant", ("oidc",), {"/.well-known/openid-configuration/tenant"}),
        ("/tenant", ("oidc-appended",), {"/tenant/.well-known/openid-configuration"}),
        (
            "/tenant",
            ("oauth", "oidc-appended"),
            {
                "/.well-known/oauth-authorization-server/tenant",
                "/tenant/.well-known/openid-configuration",
            },
        ),
        ("", (), set()),
    ],
)
def test_metadata_is_served_exactly_where_configured(
    issuer_path: str, metadata: tuple[str, ...], served: set[str]
) -> None:
    candidates = {
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        f"/.well-known/oauth-authorization-server{issuer_path}",
        f"/.well-known/openid-configuration{issuer_path}",
        f"{issuer_path}/.well-known/openid-configuration",
    }
    with AuthServer(issuer_path=issuer_path, metadata=metadata) as auth:
        assert auth.issuer == auth.url + issuer_path
        for path in sorted(candidates):
            response = get(auth.url + path)
            assert response.status_code == (200 if path in served else 404), path
            if path in served:
                doc = response.json()
                assert doc["issuer"] == auth.issuer
                assert doc["authorization_endpoint"] == auth.issuer + "/authorize"
                assert doc["token_endpoint"] == auth.issuer + "/token"
                assert doc["registration_endpoint"] == auth.issuer + "/register"
        assert {r.endpoint for r in auth.requests} == {"metadata"}


def test_metadata_defaults() -> None:
    with AuthServer() as auth:
        doc = get(auth.metadata_urls["oauth"]).json()
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert set(doc["token_endpoint_auth_methods_supported"]) == {
        "client_secret_basic",
        "client_secret_post",
        "none",
        "private_key_jwt",
    }
    assert {"authorization_code", "refresh_token", "client_credentials", JWT_BEARER} <= set(
        doc["grant_types_supported"]
    )
    for absent in (
        "scopes_supported",
        "client_id_metadata_document_supported",
        "dpop_signing_alg_values_supported",
        "authorization_grant_profiles_supported",
    ):
        assert absent not in doc
    assert TOKEN_EXCHANGE not in doc["grant_types_supported"]


def test_metadata_knobs() -> None:
    with AuthServer(
        code_challenge_methods=None,
        iss_supported=False,
        dcr=False,
        scopes_supported=("mcp", "offline_access"),
        cimd=True,
        dpop="required",
        metadata_issuer="https://wrong.example",
        idp=True,
    ) as auth:
        doc = get(auth.metadata_urls["oauth"]).json()
        assert "code_challenge_methods_supported" not in doc
        assert doc["authorization_response_iss_parameter_supported"] is False
        assert "registration_endpoint" not in doc
        assert doc["scopes_supported"] == ["mcp", "offline_access"]
        assert doc["client_id_metadata_document_supported"] is True
        assert "ES256" in doc["dpop_signing_alg_values_supported"]
        assert doc["issuer"] == "https://wrong.example"
        assert TOKEN_EXCHANGE in doc["grant_types_supported"]
        register = requests.post(auth.registration_endpoint, json={}, timeout=TIMEOUT)
        assert register.status_code == 404
        auth.configure(code_challenge_methods=("S256", "plain"), metadata_issuer=None)
        doc = get(auth.metadata_urls["oauth"]).json()
        assert doc["code_challenge_methods_supported"] == ["S256", "plain"]
        assert doc["issuer"] == auth.issuer


def test_jwks_serves_the_signing_key() -> None:
    with AuthServer(idp=True) as idp:
        keys = get(idp.issuer + "/jwks").json()["keys"]
        assert keys == [idp.public_jwk]
        token_value = idp.issue_id_token(subject="alice")
        key = jwt.PyJWK(keys[0]).key
        claims = jwt.decode(token_value, key, algorithms=["ES256"], audience="idp-client")
        assert claims["sub"] == "alice" and claims["iss"] == idp.issuer


# ----------------------------------------------------------------------------- authorization


def test_authorize_redirects_at_once_with_code_state_and_iss(auth_app: AuthServer) -> None:
    response = authorize(auth_app)
    assert response.status_code == 302
    location = response.headers["Location"]
    assert location.startswith(CALLBACK + "?")
    params = redirect_params(location)
    assert params["state"] == "st-1"
    assert params["iss"] == auth_app.issuer
    assert params["code"]
    [record] = auth_app.requests_to("authorize")
    assert record.status == 302 and record.location == location
    assert record.query["resource"] == RESOURCE and record.query["scope"] == "mcp offline_access"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("correct", lambda issuer: issuer),
        ("missing", lambda issuer: None),
        ("wrong", lambda issuer: "https://other-issuer.invalid"),
        ("trailing-slash", lambda issuer: issuer + "/"),
        ("case", lambda issuer: issuer.upper()),
    ],
)
def test_redirect_iss_knob(auth_app: AuthServer, mode: str, expected: Any) -> None:
    auth_app.configure(redirect_iss=mode)
    params = redirect_params(authorize(auth_app).headers["Location"])
    assert params.get("iss") == expected(auth_app.issuer)
    if mode != "correct":
        assert params.get("iss") != auth_app.issuer


def test_deny_redirects_access_denied(auth_app: AuthServer) -> None:
    auth_app.configure(deny=True)
    response = authorize(auth_app)
    params = redirect_params(response.headers["Location"])
    assert params["error"] == "access_denied"
    assert params["state"] == "st-1" and params["iss"] == auth_app.issuer
    assert "code" not in params
    assert auth_app.requests_to("authorize")[0].error == "access_denied"


def test_bad_client_or_redirect_uri_is_a_page_not_a_redirect(auth_app: AuthServer) -> None:
    unknown = authorize(auth_app, "nobody")
    assert unknown.status_code == 400 and "Location" not in unknown.headers
    elsewhere = authorize(auth_app, redirect_uri="https://attacker.example/cb")
    assert elsewhere.status_code == 400 and "Location" not in elsewhere.headers
    other_path = authorize(auth_app, redirect_uri="http://127.0.0.1:8765/other")
    assert other_path.status_code == 400


def test_loopback_redirect_matches_on_any_port(auth_app: AuthServer) -> None:
    auth_app.add_client("native", redirect_uris=["http://127.0.0.1/callback"])
    response = authorize(auth_app, "native", redirect_uri="http://127.0.0.1:49152/callback")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("http://127.0.0.1:49152/callback?")
    # A pre-registered client without redirect URIs takes any loopback or https one.
    auth_app.add_client("open")
    assert authorize(auth_app, "open", redirect_uri="http://[::1]:1/x").status_code == 302
    assert authorize(auth_app, "open", redirect_uri="http://example.com/x").status_code == 400


def test_pkce_is_required(auth_app: AuthServer) -> None:
    missing = authorize(auth_app, challenge="")
    assert redirect_params(missing.headers["Location"])["error"] == "invalid_request"
    plain = authorize(auth_app, code_challenge_method="plain")
    assert redirect_params(plain.headers["Location"])["error"] == "invalid_request"
    auth_app.configure(code_challenge_methods=("S256", "plain"))
    verifier, _ = pkce_pair()
    ok = authorize(auth_app, challenge=verifier, code_challenge_method="plain")
    code = redirect_params(ok.headers["Location"])["code"]
    assert exchange(auth_app, code, verifier).status_code == 200


def test_other_authorization_errors(auth_app: AuthServer) -> None:
    wrong_type = authorize(auth_app, response_type="token")
    assert redirect_params(wrong_type.headers["Location"])["error"] == "unsupported_response_type"
    auth_app.configure(require_resource=True)
    no_resource = authorize(auth_app, resource="")
    assert redirect_params(no_resource.headers["Location"])["error"] == "invalid_target"


# ----------------------------------------------------------------------------- code grant


def test_code_exchange_issues_a_verifiable_token(auth_app: AuthServer) -> None:
    code, verifier = code_for(auth_app)
    response = exchange(auth_app, code, verifier)
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["scope"] == "mcp offline_access"
    assert body["refresh_token"].startswith("rt-")
    claims = claims_of(auth_app, body["access_token"])
    assert claims["iss"] == auth_app.issuer
    assert claims["aud"] == RESOURCE
    assert claims["client_id"] == "app"
    assert claims["sub"] == "test-user"
    assert claims["scope"] == "mcp offline_access"
    assert claims["exp"] - claims["iat"] == pytest.approx(3600)
    assert "cnf" not in claims
    [record] = auth_app.requests_to("token")
    assert record.form["grant_type"] == "authorization_code"
    assert record.form["code_verifier"] == verifier
    assert record.header("authorization") is not None


def test_code_checks_and_single_use(auth_app: AuthServer) -> None:
    code, verifier = code_for(auth_app)
    wrong = exchange(auth_app, code, pkce_pair()[0])
    assert (wrong.status_code, error_of(wrong)) == (400, "invalid_grant")
    spent = exchange(auth_app, code, verifier)  # a failed attempt spends the code
    assert error_of(spent) == "invalid_grant"
    code, verifier = code_for(auth_app)
    other_redirect = exchange(auth_app, code, verifier, redirect_uri="http://127.0.0.1:1/cb")
    assert error_of(other_redirect) == "invalid_grant"
    code, verifier = code_for(auth_app)
    other_resource = exchange(auth_app, code, verifier, resource="http://127.0.0.1:10/mcp")
    assert error_of(other_resource) == "invalid_target"
    code, verifier = code_for(auth_app)
    auth_app.add_client("thief", secret="t", redirect_uris=[CALLBACK])
    stolen = exchange(auth_app, code, verifier, basic=("thief", "t"))
    assert error_of(stolen) == "invalid_grant"
    code, verifier = code_for(auth_app)
    assert exchange(auth_app, code, verifier).status_code == 200
    assert error_of(exchange(auth_app, code, verifier)) == "invalid_grant"


def test_token_lifetime_and_default_audience(auth_app: AuthServer) -> None:
    auth_app.configure(token_lifetime=None, default_audience="http://127.0.0.1:11/mcp")
    code, verifier = code_for(auth_app, resource="")
    body = exchange(auth_app, code, verifier, resource="").json()
    assert "expires_in" not in body
    claims = claims_of(auth_app, body["access_token"])
    assert "exp" not in claims and claims["aud"] == "http://127.0.0.1:11/mcp"
    auth_app.configure(token_lifetime=0, default_audience=None)
    code, verifier = code_for(auth_app, resource="")
    body = exchange(auth_app, code, verifier, resource="").json()
    assert body["expires_in"] == 0
    assert "aud" not in jwt.decode(body["access_token"], options={"verify_signature": False})


# ----------------------------------------------------------------------------- client auth


def test_client_secret_basic_is_form_urlencoded_inside_basic() -> None:
    with AuthServer() as auth:
        auth.add_client("my app:1", secret="p@ss word+/:")
        raw = base64.b64encode(
            f"{quote_plus('my app:1')}:{quote_plus('p@ss word+/:')}".encode()
        ).decode()
        form = {"grant_type": "client_credentials"}
        ok = token(auth, form, headers={"Authorization": f"Basic {raw}"})
        assert ok.status_code == 200, ok.text
        assert claims_of(auth, ok.json()["access_token"])["client_id"] == "my app:1"
        unencoded = base64.b64encode(b"my app:1:p@ss word+/:").decode()
        bad = token(auth, form, headers={"Authorization": f"Basic {unencoded}"})
        assert (bad.status_code, error_of(bad)) == (401, "invalid_client")
        assert bad.headers["WWW-Authenticate"].startswith("Basic")


def test_each_client_must_use_its_registered_method() -> None:
    form = {"grant_type": "client_credentials"}
    with AuthServer() as auth:
        auth.add_client("basic", secret="b")
        auth.add_client("post", secret="p", auth_method="client_secret_post")
        auth.add_client("public")
        assert token(auth, form, basic=("basic", "b")).status_code == 200
        as_post = token(auth, {**form, "client_id": "basic", "client_secret": "b"})
        assert error_of(as_post) == "invalid_client"
        assert token(auth, {**form, "client_id": "post", "client_secret": "p"}).status_code == 200
        assert error_of(token(auth, form, basic=("post", "p"))) == "invalid_client"
        wrong_secret = token(auth, {**form, "client_id": "post", "client_secret": "x"})
        assert error_of(wrong_secret) == "invalid_client"
        assert error_of(token(auth, {**form, "client_id": "basic"})) == "invalid_client"
        public = token(auth, {**form, "client_id": "public"})
        assert error_of(public) == "unauthorized_client"  # no client_credentials for public
        assert error_of(token(auth, form)) == "invalid_client"  # nobody named
        assert error_of(token(auth, {**form, "client_id": "ghost"})) == "invalid_client"


def test_public_client_code_flow() -> None:
    with AuthServer() as auth:
        auth.add_client("public", redirect_uris=[CALLBACK])
        code, verifier = code_for(auth, "public")
        response = exchange(auth, code, verifier, basic=None, client_id="public")
        assert response.status_code == 200, response.text


def test_private_key_jwt() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with AuthServer() as auth:
        auth.add_client("pkj", public_key=pem_public(key))
        assert auth.clients()["pkj"].auth_method == "private_key_jwt"

        def call(assertion: str, **form: str) -> requests.Response:
            base = {
                "grant_type": "client_credentials",
                "client_assertion_type": ASSERTION_TYPE,
                "client_assertion": assertion,
            }
            return token(auth, {**base, **form})

        assertion = private_key_jwt(key, "pkj", auth.issuer, jti="one")
        assert call(assertion).status_code == 200
        assert error_of(call(assertion)) == "invalid_client"  # replayed jti
        to_endpoint = private_key_jwt(key, "pkj", auth.token_endpoint, alg="PS256")
        assert call(to_endpoint, client_id="pkj").status_code == 200
        assert error_of(call(private_key_jwt(other, "pkj", auth.issuer))) == "invalid_client"
        elsewhere = private_key_jwt(key, "pkj", "https://other.example")
        assert error_of(call(elsewhere)) == "invalid_client"
        expired = private_key_jwt(key, "pkj", auth.issuer, exp=int(time.time()) - 120)
        assert error_of(call(expired)) == "invalid_client"
        symmetric = jwt.encode(
            {"iss": "pkj", "sub": "pkj", "aud": auth.issuer, "exp": time.time() + 60, "jti": "h"},
            "a-shared-secret-of-enough-length-32b",
            algorithm="HS256",
        )
        assert error_of(call(symmetric)) == "invalid_client"
        wrong_type = call(assertion, client_assertion_type="urn:other")
        assert error_of(wrong_type) == "invalid_client"


# ----------------------------------------------------------------------------- refresh


@pytest.mark.parametrize("rotation", [True, False])
def test_refresh_rotation(auth_app: AuthServer, rotation: bool) -> None:
    auth_app.configure(refresh_rotation=rotation)
    code, verifier = code_for(auth_app)
    first = exchange(auth_app, code, verifier).json()["refresh_token"]
    form = {"grant_type": "refresh_token", "refresh_token": first}
    refreshed = token(auth_app, form, basic=("app", "s3cret"))
    assert refreshed.status_code == 200, refreshed.text
    body = refreshed.json()
    assert claims_of(auth_app, body["access_token"])["aud"] == RESOURCE
    again = token(auth_app, form, basic=("app", "s3cret"))
    if rotation:
        assert body["refresh_token"] != first
        assert error_of(again) == "invalid_grant"
    else:
        assert "refresh_token" not in body
        assert again.status_code == 200


def test_refresh_scope_resource_and_revocation(auth_app: AuthServer) -> None:
    auth_app.configure(refresh_rotation=False)
    code, verifier = code_for(auth_app)
    refresh_token = exchange(auth_app, code, verifier).json()["refresh_token"]
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    narrower = token(auth_app, {**form, "scope": "mcp"}, basic=("app", "s3cret"))
    assert narrower.json()["scope"] == "mcp"
    wider = token(auth_app, {**form, "scope": "mcp admin"}, basic=("app", "s3cret"))
    assert error_of(wider) == "invalid_scope"
    moved = token(
        auth_app, {**form, "resource": "http://127.0.0.1:10/mcp"}, basic=("app", "s3cret")
    )
    assert error_of(moved) == "invalid_target"
    auth_app.add_client("other", secret="o")
    assert error_of(token(auth_app, form, basic=("other", "o"))) == "invalid_grant"
    assert auth_app.revoke_refresh_tokens() == 1
    assert error_of(token(auth_app, form, basic=("app", "s3cret"))) == "invalid_grant"


@pytest.mark.parametrize(
    ("policy", "scope", "issued"),
    [
        ("always", "mcp", True),
        ("never", "mcp offline_access", False),
        ("offline_access", "mcp", False),
        ("offline_access", "mcp offline_access", True),
    ],
)
def test_refresh_token_policy(auth_app: AuthServer, policy: str, scope: str, issued: bool) -> None:
    auth_app.configure(refresh_tokens=policy)
    code, verifier = code_for(auth_app, scope=scope)
    assert ("refresh_token" in exchange(auth_app, code, verifier).json()) is issued


# ----------------------------------------------------------------------------- other grants


def test_client_credentials_scopes_and_withheld_scopes() -> None:
    with AuthServer(withheld_scopes=("admin",)) as auth:
        auth.add_client("svc", secret="pw")
        form = {"grant_type": "client_credentials", "scope": "mcp admin", "resource": RESOURCE}
        body = token(auth, form, basic=("svc", "pw")).json()
        assert body["scope"] == "mcp"
        assert "refresh_token" not in body
        claims = claims_of(auth, body["access_token"])
        assert (claims["scope"], claims["aud"], claims["sub"]) == ("mcp", RESOURCE, "svc")


def test_grant_types_of_a_preregistered_client_are_enforced() -> None:
    with AuthServer() as auth:
        auth.add_client("narrow", secret="n", grant_types=["authorization_code"])
        response = token(auth, {"grant_type": "client_credentials"}, basic=("narrow", "n"))
        assert error_of(response) == "unauthorized_client"
        assert error_of(token(auth, {"grant_type": "password"}, basic=("narrow", "n"))) == (
            "unauthorized_client"
        )
        auth.add_client("wide", secret="w")
        assert error_of(token(auth, {"grant_type": "password"}, basic=("wide", "w"))) == (
            "unsupported_grant_type"
        )


def test_jwt_bearer_workload_identity() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with AuthServer(anonymous_jwt_bearer=True) as auth:
        auth.trust_assertion_issuer("https://workload.example", key.public_key())
        now = int(time.time())

        def assertion(**overrides: Any) -> str:
            claims = {
                "iss": "https://workload.example",
                "sub": "spiffe://example/agent",
                "aud": auth.issuer,
                "iat": now,
                "exp": now + 60,
                **overrides,
            }
            return jwt.encode(claims, key, algorithm="ES256")

        def grant(value: str) -> requests.Response:
            form = {"grant_type": JWT_BEARER, "assertion": value, "scope": "mcp"}
            return token(auth, {**form, "resource": RESOURCE})

        ok = grant(assertion(jti="w1"))
        assert ok.status_code == 200, ok.text
        claims = claims_of(auth, ok.json()["access_token"])
        assert claims["sub"] == claims["client_id"] == "spiffe://example/agent"
        assert claims["scope"] == "mcp" and claims["aud"] == RESOURCE
        assert error_of(grant(assertion(jti="w1"))) == "invalid_grant"  # replay
        assert error_of(grant(assertion(aud="https://other.example"))) == "invalid_grant"
        assert error_of(grant(assertion(exp=now - 120))) == "invalid_grant"
        assert error_of(grant(assertion(iss="https://stranger.example"))) == "invalid_grant"
        assert error_of(grant("not-a-jwt")) == "invalid_grant"


def test_jwt_bearer_without_client_authentication_needs_the_knob() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with AuthServer() as auth:
        auth.trust_assertion_issuer("https://workload.example", key.public_key())
        auth.add_client("workload", secret="w")
        now = int(time.time())

        def grant(jti: str) -> dict[str, str]:
            claims = {
                "iss": "https://workload.example",
                "sub": "spiffe://example/agent",
                "aud": auth.issuer,
                "exp": now + 60,
                "jti": jti,
            }
            return {"grant_type": JWT_BEARER, "assertion": jwt.encode(claims, key, "ES256")}

        form = grant("once")
        refused = token(auth, form)
        assert refused.status_code == 401 and error_of(refused) == "invalid_client"
        auth.configure(anonymous_jwt_bearer=True)
        anonymous = token(auth, form)  # the refused request did not spend the jti
        assert anonymous.status_code == 200, anonymous.text
        access = claims_of(auth, anonymous.json()["access_token"])
        assert access["client_id"] == "spiffe://example/agent"
        auth.configure(anonymous_jwt_bearer=False)
        named = token(auth, grant("twice"), basic=("workload", "w"))  # a client: always fine
        assert named.status_code == 200, named.text
        assert claims_of(auth, named.json()["access_token"])["client_id"] == "workload"


def test_token_exchange_and_id_jag() -> None:
    with AuthServer(idp=True) as idp, AuthServer(scopes_supported=("mcp",)) as auth:
        idp.add_client("idp-client", secret="i")
        auth.add_client("mcp-app", secret="m")
        auth.trust_idp(idp)
        assert get(auth.metadata_urls["oauth"]).json()[
            "authorization_grant_profiles_supported"
        ] == ["urn:ietf:params:oauth:grant-profile:id-jag"]

        def exchange_at_idp(subject_token: str, **extra: str) -> requests.Response:
            form = {
                "grant_type": TOKEN_EXCHANGE,
                "requested_token_type": ID_JAG,
                "subject_token": subject_token,
                "subject_token_type": ID_TOKEN,
                "audience": auth.issuer,
                "resource": RESOURCE,
                "scope": "mcp",
                **extra,
            }
            return token(idp, form, basic=("idp-client", "i"))

        response = exchange_at_idp(idp.issue_id_token(subject="alice"))
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["issued_token_type"] == ID_JAG and body["token_type"] == "N_A"
        jag = body["access_token"]
        assert jwt.get_unverified_header(jag)["typ"] == "oauth-id-jag+jwt"
        claims = jwt.decode(
            jag, jwt.PyJWK(idp.public_jwk).key, algorithms=["ES256"], audience=auth.issuer
        )
        assert (claims["sub"], claims["resource"], claims["scope"]) == ("alice", RESOURCE, "mcp")
        assert claims["client_id"] == "idp-client"  # default: the client that asked

        def present(assertion: str) -> requests.Response:
            form = {"grant_type": JWT_BEARER, "assertion": assertion}
            return token(auth, form, basic=("mcp-app", "m"))

        assert error_of(present(jag)) == "invalid_grant"  # issued for another client
        idp.configure(jag_client_id="mcp-app")
        jag = exchange_at_idp(idp.issue_id_token(subject="alice")).json()["access_token"]
        anonymous = token(auth, {"grant_type": JWT_BEARER, "assertion": jag})
        assert error_of(anonymous) == "invalid_client"  # an ID-JAG needs client authentication
        granted = present(jag)
        assert granted.status_code == 200, granted.text
        access = claims_of(auth, granted.json()["access_token"])
        assert (access["sub"], access["aud"], access["scope"]) == ("alice", RESOURCE, "mcp")
        assert access["client_id"] == "mcp-app"
        assert error_of(present(jag)) == "invalid_grant"  # an ID-JAG is single use

        with AuthServer(idp=True) as stranger:
            foreign = exchange_at_idp(stranger.issue_id_token())
            assert error_of(foreign) == "invalid_grant"
            wrong_jag = token(
                stranger,
                {
                    "grant_type": TOKEN_EXCHANGE,
                    "requested_token_type": ID_JAG,
                    "subject_token": stranger.issue_id_token(),
                    "subject_token_type": ID_TOKEN,
                    "audience": auth.issuer,
                },
            )
            assert wrong_jag.status_code == 200  # anonymous exchange at the IdP is fine
            assert error_of(present(wrong_jag.json()["access_token"])) == "invalid_grant"
        wrong_type = exchange_at_idp(idp.issue_id_token(), requested_token_type="urn:x")
        assert error_of(wrong_type) == "invalid_request"
        assert error_of(token(auth, {"grant_type": TOKEN_EXCHANGE}, basic=("mcp-app", "m"))) == (
            "unsupported_grant_type"
        )


# ----------------------------------------------------------------------------- DPoP


def test_dpop_required_binds_tokens() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with AuthServer(dpop="required") as auth:
        auth.add_client("svc", secret="pw")
        form = {"grant_type": "client_credentials"}
        bare = token(auth, form, basic=("svc", "pw"))
        assert error_of(bare) == "invalid_dpop_proof"
        proof = dpop_proof(key, method="POST", url=auth.token_endpoint)
        bound = token(auth, form, basic=("svc", "pw"), headers={"DPoP": proof})
        assert bound.status_code == 200, bound.text
        assert bound.json()["token_type"] == "DPoP"
        assert claims_of(auth, bound.json()["access_token"])["cnf"] == {"jkt": thumbprint(key)}
        replay = token(auth, form, basic=("svc", "pw"), headers={"DPoP": proof})
        assert error_of(replay) == "invalid_dpop_proof"
        for bad in (
            dpop_proof(key, method="GET", url=auth.token_endpoint),
            dpop_proof(key, method="POST", url=auth.url + "/elsewhere"),
            dpop_proof(key, method="POST", url=auth.token_endpoint, iat=time.time() - 600),
        ):
            answer = token(auth, form, basic=("svc", "pw"), headers={"DPoP": bad})
            assert error_of(answer) == "invalid_dpop_proof"


def test_dpop_nonce_round_trip_does_not_spend_the_code() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with AuthServer(dpop="required", dpop_nonce=True) as auth:
        auth.add_client("app", secret="s3cret", redirect_uris=[CALLBACK])
        code, verifier = code_for(auth)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "code_verifier": verifier,
        }

        def attempt(nonce: str | None) -> requests.Response:
            proof = dpop_proof(key, method="POST", url=auth.token_endpoint, nonce=nonce)
            return token(auth, form, basic=("app", "s3cret"), headers={"DPoP": proof})

        first = attempt(None)
        assert (first.status_code, error_of(first)) == (400, "use_dpop_nonce")
        assert first.headers["DPoP-Nonce"] == auth.dpop_nonce
        second = attempt(first.headers["DPoP-Nonce"])
        assert second.status_code == 200, second.text
        assert second.headers["DPoP-Nonce"] == auth.dpop_nonce
        refresh_token = second.json()["refresh_token"]
        old = auth.dpop_nonce
        assert auth.rotate_dpop_nonce() != old
        refresh = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        stale = dpop_proof(key, method="POST", url=auth.token_endpoint, nonce=old)
        answer = token(auth, refresh, basic=("app", "s3cret"), headers={"DPoP": stale})
        assert error_of(answer) == "use_dpop_nonce"
        other = ec.generate_private_key(ec.SECP256R1())
        foreign = dpop_proof(other, method="POST", url=auth.token_endpoint, nonce=auth.dpop_nonce)
        answer = token(auth, refresh, basic=("app", "s3cret"), headers={"DPoP": foreign})
        assert error_of(answer) == "invalid_grant"  # refresh tokens are bound to the key
        own = dpop_proof(key, method="POST", url=auth.token_endpoint, nonce=auth.dpop_nonce)
        assert token(auth, refresh, basic=("app", "s3cret"), headers={"DPoP": own}).ok


def test_dpop_optional_and_off() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    form = {"grant_type": "client_credentials"}
    with AuthServer(dpop="optional") as auth:
        auth.add_client("svc", secret="pw")
        assert token(auth, form, basic=("svc", "pw")).json()["token_type"] == "Bearer"
        proof = {"DPoP": dpop_proof(key, method="POST", url=auth.token_endpoint)}
        assert token(auth, form, basic=("svc", "pw"), headers=proof).json()["token_type"] == "DPoP"
        auth.configure(dpop="off")
        proof = {"DPoP": dpop_proof(key, method="POST", url=auth.token_endpoint)}
        body = token(auth, form, basic=("svc", "pw"), headers=proof).json()
        assert body["token_type"] == "Bearer"  # a server without DPoP ignores the header


# ----------------------------------------------------------------------------- DCR and CIMD


def test_dynamic_registration() -> None:
    with AuthServer(dcr_application_type="native") as auth:
        request = {
            "client_name": "test",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }
        response = requests.post(auth.registration_endpoint, json=request, timeout=TIMEOUT)
        assert response.status_code == 201, response.text
        body = response.json()
        assert "client_secret" not in body and body["client_name"] == "test"
        client_id = body["client_id"]
        registered = auth.clients()[client_id]
        assert (registered.source, registered.application_type) == ("dcr", "native")
        assert auth.requests_to("register")[0].json == request
        code, verifier = code_for(auth, client_id)
        assert exchange(auth, code, verifier, basic=None, client_id=client_id).ok

        secret_client = requests.post(
            auth.registration_endpoint,
            json={**request, "token_endpoint_auth_method": "client_secret_basic"},
            timeout=TIMEOUT,
        ).json()
        basic = (secret_client["client_id"], secret_client["client_secret"])
        code, verifier = code_for(auth, basic[0])
        assert exchange(auth, code, verifier, basic=basic).ok

        for bad, error in (
            ({**request, "application_type": "web"}, "invalid_client_metadata"),
            (
                {k: v for k, v in request.items() if k != "application_type"},
                "invalid_client_metadata",
            ),
            ({**request, "redirect_uris": []}, "invalid_redirect_uri"),
            ({**request, "redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
            (
                {**request, "token_endpoint_auth_method": "tls_client_auth"},
                "invalid_client_metadata",
            ),
            ([1, 2], "invalid_client_metadata"),
        ):
            answer = requests.post(auth.registration_endpoint, json=bad, timeout=TIMEOUT)
            assert (answer.status_code, error_of(answer)) == (400, error), bad
        not_json = requests.post(auth.registration_endpoint, data=b"{", timeout=TIMEOUT)
        assert error_of(not_json) == "invalid_client_metadata"


def test_client_id_metadata_document() -> None:
    with AuthServer(cimd=True) as auth:
        url = auth.url + "/clients/app.json"
        document = {"client_id": url, "client_name": "App", "redirect_uris": [CALLBACK]}
        assert auth.host_document("/clients/app.json", document) == url
        code, verifier = code_for(auth, url)
        assert exchange(auth, code, verifier, basic=None, client_id=url).ok
        assert len(auth.requests_to("document")) == 2  # fetched at authorize and at token
        assert url not in auth.clients()

        bad_url = auth.host_document(
            "/clients/bad.json", {**document, "client_id": "https://someone-else.example/c"}
        )
        assert authorize(auth, bad_url).status_code == 400
        assert authorize(auth, auth.url + "/clients/missing.json").status_code == 400
        auth.configure(cimd=False)
        before = len(auth.requests_to("document"))
        assert authorize(auth, url).status_code == 400
        assert len(auth.requests_to("document")) == before


def test_published_client_document_needs_no_network() -> None:
    url = "https://client.example/mcp-app.json"
    with AuthServer(cimd=True) as auth:
        auth.publish_client_document(
            url, {"client_id": url, "client_name": "App", "redirect_uris": [CALLBACK]}
        )
        code, verifier = code_for(auth, url)
        assert exchange(auth, code, verifier, basic=None, client_id=url).ok
        assert auth.cimd_fetches == [url, url]
        assert auth.requests_to("document") == []
        wrong = "https://client.example/wrong.json"
        auth.publish_client_document(wrong, {"client_id": url, "client_name": "App"})
        assert authorize(auth, wrong).status_code == 400


def test_client_id_metadata_document_with_private_key_jwt() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with AuthServer(cimd=True) as auth:
        url = auth.url + "/clients/signed.json"
        auth.host_document(
            "/clients/signed.json",
            {
                "client_id": url,
                "client_name": "Signed",
                "redirect_uris": [CALLBACK],
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks": {"keys": [thumbprint_jwk(key)]},
            },
        )
        code, verifier = code_for(auth, url)
        assertion = private_key_jwt(key, url, auth.issuer, alg="ES256")
        response = exchange(
            auth,
            code,
            verifier,
            basic=None,
            client_assertion_type=ASSERTION_TYPE,
            client_assertion=assertion,
        )
        assert response.status_code == 200, response.text


def thumbprint_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    jwk: dict[str, str] = jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return jwk


# ----------------------------------------------------------------------------- robustness


def test_token_error_knob(auth_app: AuthServer) -> None:
    form = {"grant_type": "client_credentials"}
    auth_app.configure(token_error="invalid_client")
    answer = token(auth_app, form, basic=("app", "s3cret"))
    assert (answer.status_code, error_of(answer)) == (401, "invalid_client")
    auth_app.configure(token_error="temporarily_unavailable")
    answer = token(auth_app, form, basic=("app", "s3cret"))
    assert (answer.status_code, error_of(answer)) == (400, "temporarily_unavailable")
    auth_app.configure(token_error=None)
    assert token(auth_app, form, basic=("app", "s3cret")).ok


def test_malformed_requests_are_answered(auth_app: AuthServer) -> None:
    as_json = requests.post(
        auth_app.token_endpoint, json={"grant_type": "client_credentials"}, timeout=TIMEOUT
    )
    assert error_of(as_json) == "invalid_request"
    repeated = requests.post(
        auth_app.token_endpoint,
        data="grant_type=client_credentials&grant_type=password",
        headers={"Content-Type": FORM},
        auth=("app", "s3cret"),
        timeout=TIMEOUT,
    )
    assert error_of(repeated) == "invalid_request"
    huge = requests.post(
        auth_app.token_endpoint, data=b"x" * 70000, headers={"Content-Type": FORM}, timeout=TIMEOUT
    )
    assert huge.status_code == 413
    assert get(auth_app.url + "/nothing-here").status_code == 404
    assert requests.put(auth_app.token_endpoint, timeout=TIMEOUT).status_code == 405
    assert get(auth_app.token_endpoint).status_code == 405
    assert get(auth_app.metadata_urls["oauth"]).status_code == 200  # still serving


def test_knobs_are_validated() -> None:
    with pytest.raises(ValueError, match="issuer_path"):
        AuthServer(issuer_path="tenant/")
    with pytest.raises(ValueError, match="metadata"):
        AuthServer(metadata=("bogus",))
    with pytest.raises(TypeError):
        AuthServer(no_such_knob=True)
    with AuthServer() as auth:
        with pytest.raises(ValueError, match="redirect_iss"):
            auth.configure(redirect_iss="sometimes")
        assert auth.config.redirect_iss == "correct"
        with pytest.raises(ValueError, match="needs a secret"):
            auth.add_client("x", auth_method="client_secret_post")


def test_close_stops_the_thread_and_the_socket() -> None:
    auth = AuthServer()
    port = int(auth.url.rsplit(":", 1)[1])
    names = {t.name for t in threading.enumerate()}
    assert f"authserver-{port}" in names
    assert get(auth.metadata_urls["oauth"]).ok
    auth.close()
    auth.close()  # idempotent
    assert f"authserver-{port}" not in {t.name for t in threading.enumerate()}
    with pytest.raises(requests.ConnectionError):
        get(auth.metadata_urls["oauth"])


def test_requests_are_recorded_in_order(auth_app: AuthServer) -> None:
    get(auth_app.metadata_urls["oauth"])
    code, verifier = code_for(auth_app)
    exchange(auth_app, code, verifier)
    assert [r.endpoint for r in auth_app.requests] == ["metadata", "authorize", "token"]
    assert [r.status for r in auth_app.requests] == [200, 302, 200]
    auth_app.clear_requests()
    assert auth_app.requests == []


# ============================================================================= protected server


def mcp_post(
    server: ProtectedServer,
    message: dict[str, Any],
    *,
    authorization: str | None = None,
    proof: str | None = None,
    session: str | None = None,
) -> requests.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    method = message["method"]
    if method != "initialize" and session is None:
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
        name = message.get("params", {}).get("name")
        if name is not None:
            headers["Mcp-Name"] = name
    if session is not None:
        headers["Mcp-Session-Id"] = session
    if authorization is not None:
        headers["Authorization"] = authorization
    if proof is not None:
        headers["DPoP"] = proof
    return requests.post(server.url, data=json.dumps(message), headers=headers, timeout=TIMEOUT)


def call_tool(
    server: ProtectedServer,
    tool: str = "echo",
    arguments: dict[str, Any] | None = None,
    **kwargs: Any,
) -> requests.Response:
    params = {"name": tool, "arguments": arguments or {"message": "hi"}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return mcp_post(server, message, **kwargs)


def challenge(response: requests.Response) -> str:
    return response.headers.get("WWW-Authenticate", "")


@pytest.fixture(scope="module")
def shared_auth() -> Iterator[AuthServer]:
    with AuthServer(scopes_supported=("mcp", "math")) as auth:
        yield auth


@pytest.fixture(scope="module")
def shared_server(
    tmp_path_factory: pytest.TempPathFactory, shared_auth: AuthServer
) -> Iterator[ProtectedServer]:
    """A modern-era server needing ``mcp`` always and ``math`` to call ``add``."""
    with ProtectedServer(
        tmp_path_factory.mktemp("protected"),
        shared_auth,
        "--era",
        "modern",
        "--oauth-scopes",
        "mcp",
        "--oauth-tool-scope",
        "add=math",
        "--oauth-prm-scopes",
        "mcp,math",
    ) as server:
        yield server


def bearer(auth: AuthServer, server: ProtectedServer, scopes: str = "mcp", **kw: Any) -> str:
    return "Bearer " + auth.mint_access_token(resource=server.url, scopes=scopes.split(), **kw)


def test_unauthenticated_requests_get_a_401_challenge(shared_server: ProtectedServer) -> None:
    response = call_tool(shared_server)
    assert response.status_code == 401
    assert challenge(response) == 'Bearer scope="mcp"'  # no error without a credential
    assert response.json()["error"] == "unauthorized"
    for path in ("/mcp", "/sse", "/messages"):
        get_response = get(shared_server.base + path)
        assert get_response.status_code == 401, path
    prm = get(shared_server.base + "/.well-known/oauth-protected-resource/mcp")
    assert prm.status_code == 200
    assert prm.json() == {
        "resource": shared_server.url,
        "authorization_servers": [shared_server.state()["issuer"]],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp", "math"],
    }
    assert get(shared_server.base + "/.well-known/oauth-protected-resource").status_code == 404
    assert get(shared_server.base + "/custom/oauth-protected-resource").status_code == 404


def test_a_valid_token_reaches_the_server(
    shared_auth: AuthServer, shared_server: ProtectedServer
) -> None:
    response = call_tool(shared_server, authorization=bearer(shared_auth, shared_server))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == "hi"
    entry = shared_server.log()[-1]
    assert entry["status"] is None and entry["reason"] == "accepted"
    assert (entry["client_id"], entry["tool"], entry["scheme"]) == ("test-client", "echo", "bearer")
    lowercase = "bearer " + bearer(shared_auth, shared_server).split(" ", 1)[1]
    assert call_tool(shared_server, authorization=lowercase).status_code == 200


def test_bad_tokens_get_invalid_token(
    shared_auth: AuthServer, shared_server: ProtectedServer
) -> None:
    good = bearer(shared_auth, shared_server)
    with AuthServer() as stranger:
        foreign = bearer(stranger, shared_server)
    with AuthServer(token_secret=shared_auth.token_secret) as impostor:
        same_key_other_issuer = bearer(impostor, shared_server)
    head, _payload, signature = good.split(" ", 1)[1].split(".")
    forged_claims = {**claims_of(shared_auth, good.split(" ", 1)[1]), "scope": "mcp math admin"}
    forged_payload = base64.urlsafe_b64encode(json.dumps(forged_claims).encode()).rstrip(b"=")
    cases = {
        "foreign issuer": foreign,
        "same key, other issuer": same_key_other_issuer,
        "tampered": f"Bearer {head}.{forged_payload.decode()}.{signature}",
        "other audience": "Bearer "
        + shared_auth.mint_access_token(resource="http://127.0.0.1:1/mcp", scopes=["mcp"]),
        "expired": bearer(shared_auth, shared_server, lifetime=0),
        "garbage": "Bearer not.a.jwt",
        "no scheme": good.split(" ", 1)[1],
        "basic": "Basic dXNlcjpwYXNz",
    }
    for what, authorization in cases.items():
        response = call_tool(shared_server, authorization=authorization)
        assert response.status_code == 401, what
        assert 'error="invalid_token"' in challenge(response), what
        assert challenge(response).startswith("Bearer "), what


def test_scopes_and_step_up(shared_auth: AuthServer, shared_server: ProtectedServer) -> None:
    none = call_tool(shared_server, authorization=bearer(shared_auth, shared_server, scopes=""))
    assert none.status_code == 403
    assert 'error="insufficient_scope"' in challenge(none) and 'scope="mcp"' in challenge(none)
    base = bearer(shared_auth, shared_server)
    add = call_tool(shared_server, "add", {"a": 1, "b": 2}, authorization=base)
    assert add.status_code == 403
    assert 'scope="mcp math"' in challenge(add)
    stepped = bearer(shared_auth, shared_server, scopes="mcp math")
    add = call_tool(shared_server, "add", {"a": 1, "b": 2}, authorization=stepped)
    assert add.status_code == 200, add.text
    assert call_tool(shared_server, authorization=base).status_code == 200  # echo needs only mcp
    log = shared_server.log()
    assert [e["status"] for e in log[-4:]] == [403, 403, None, None]
    assert log[-3]["tool"] == "add" and log[-3]["scope"] == "mcp"


def test_dpop_bound_token_needs_the_dpop_scheme(
    shared_auth: AuthServer, shared_server: ProtectedServer
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    access = shared_auth.mint_access_token(
        resource=shared_server.url, scopes=["mcp"], jkt=thumbprint(key)
    )
    as_bearer = call_tool(shared_server, authorization="Bearer " + access)
    assert as_bearer.status_code == 401
    assert challenge(as_bearer).startswith("Bearer ")
    proof = dpop_proof(key, method="POST", url=shared_server.url, access_token=access)
    as_dpop = call_tool(shared_server, authorization="DPoP " + access, proof=proof)
    assert as_dpop.status_code == 200, as_dpop.text
    unbound = shared_auth.mint_access_token(resource=shared_server.url, scopes=["mcp"])
    proof = dpop_proof(key, method="POST", url=shared_server.url, access_token=unbound)
    rejected = call_tool(shared_server, authorization="DPoP " + unbound, proof=proof)
    assert rejected.status_code == 401 and challenge(rejected).startswith("DPoP ")


def test_prm_modes_and_challenge_knobs(oauth_peers: OAuthPeers) -> None:
    auth = oauth_peers.auth()
    server = oauth_peers.protected(
        auth, "--oauth-prm", "challenge", "--oauth-challenge-scope", "read write"
    )
    response = get(server.url)
    custom = server.base + "/custom/oauth-protected-resource"
    assert challenge(response) == f'Bearer scope="read write", resource_metadata="{custom}"'
    assert get(custom).json()["resource"] == server.url
    for path in ("", "/mcp"):
        assert get(server.base + "/.well-known/oauth-protected-resource" + path).status_code == 404

    other = oauth_peers.protected(
        auth,
        "--oauth-prm",
        "root",
        "--oauth-scopes",
        "mcp",
        "--oauth-challenge-scope",
        "",
        "--oauth-prm-resource",
        "https://elsewhere.example/mcp",
    )
    assert challenge(get(other.url)) == "Bearer"
    doc = get(other.base + "/.well-known/oauth-protected-resource").json()
    assert doc["resource"] == "https://elsewhere.example/mcp"
    assert "scopes_supported" not in doc
    assert get(other.base + "/.well-known/oauth-protected-resource/mcp").status_code == 404
    # Tokens may name the real resource identifier or the claimed one, nothing else.
    ok = call_tool(other, authorization=bearer(auth, other))
    assert ok.status_code != 401
    claimed = auth.mint_access_token(resource="https://elsewhere.example/mcp", scopes=["mcp"])
    assert call_tool(other, authorization="Bearer " + claimed).status_code != 401
    stranger = auth.mint_access_token(resource="https://stranger.example/mcp", scopes=["mcp"])
    refused = call_tool(other, authorization="Bearer " + stranger)
    assert refused.status_code == 401 and "audience" in challenge(refused)

    other.control(prm="none", challenge_scope=None)
    assert challenge(get(other.url)) == 'Bearer scope="mcp"'
    for path in ("", "/mcp"):
        assert get(other.base + "/.well-known/oauth-protected-resource" + path).status_code == 404


def test_revoke_and_issuer_switch(oauth_peers: OAuthPeers) -> None:
    first = oauth_peers.auth()
    second = oauth_peers.auth()
    server = oauth_peers.protected(first, "--era", "modern")
    old = bearer(first, server, scopes="")
    assert call_tool(server, authorization=old).status_code == 200
    server.revoke()
    revoked = call_tool(server, authorization=old)
    assert revoked.status_code == 401 and "revoked" in challenge(revoked)
    assert call_tool(server, authorization=bearer(first, server, scopes="")).status_code == 200

    server.trust(second)
    prm = get(server.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert prm["authorization_servers"] == [second.issuer]
    assert call_tool(server, authorization=bearer(first, server, scopes="")).status_code == 401
    assert call_tool(server, authorization=bearer(second, server, scopes="")).status_code == 200


def test_control_endpoint_rejects_bad_requests(oauth_peers: OAuthPeers) -> None:
    server = oauth_peers.protected(oauth_peers.auth())
    before = server.state()
    for bad in ({"nonsense": 1}, {"prm": "sideways"}, {"revoke": 1}, {"scopes": 5}):
        answer = requests.post(server.base + "/oauth-control", json=bad, timeout=TIMEOUT)
        assert answer.status_code == 400, bad
    not_json = requests.post(server.base + "/oauth-control", data=b"[", timeout=TIMEOUT)
    assert not_json.status_code == 400
    after = server.state()
    assert {k: v for k, v in after.items() if k != "log"} == {
        k: v for k, v in before.items() if k != "log"
    }
    assert "secret" not in after
    state = server.control(tool_scopes={"echo": "a b"}, scopes=["x"], clear_log=True)
    assert state["tool_scopes"] == {"echo": ["a", "b"]} and state["scopes"] == ["x"]
    assert state["log"] == []


def test_dpop_required_with_nonces(oauth_peers: OAuthPeers) -> None:
    auth = oauth_peers.auth()
    server = oauth_peers.protected(auth, "--era", "modern", "--oauth-dpop", "--oauth-dpop-nonce")
    key = ec.generate_private_key(ec.SECP256R1())
    access = auth.mint_access_token(resource=server.url, jkt=thumbprint(key))
    doc = get(server.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert doc["dpop_bound_access_tokens_required"] is True

    unauthenticated = call_tool(server)
    assert challenge(unauthenticated).startswith("DPoP algs=")
    bearer_token = auth.mint_access_token(resource=server.url)
    as_bearer = call_tool(server, authorization="Bearer " + bearer_token)
    assert as_bearer.status_code == 401 and challenge(as_bearer).startswith("DPoP ")

    def send(proof: str) -> requests.Response:
        return call_tool(server, authorization="DPoP " + access, proof=proof)

    first = send(dpop_proof(key, method="POST", url=server.url, access_token=access))
    assert first.status_code == 401
    assert 'error="use_dpop_nonce"' in challenge(first)
    nonce = first.headers["DPoP-Nonce"]
    proof = dpop_proof(key, method="POST", url=server.url, access_token=access, nonce=nonce)
    assert send(proof).status_code == 200
    replay = send(proof)
    assert replay.status_code == 401 and 'error="invalid_dpop_proof"' in challenge(replay)
    other_token = auth.mint_access_token(resource=server.url, jkt=thumbprint(key))
    wrong_ath = dpop_proof(
        key, method="POST", url=server.url, access_token=other_token, nonce=nonce
    )
    assert 'error="invalid_dpop_proof"' in challenge(send(wrong_ath))
    other_key = ec.generate_private_key(ec.SECP256R1())
    foreign = dpop_proof(other_key, method="POST", url=server.url, access_token=access, nonce=nonce)
    assert 'error="invalid_dpop_proof"' in challenge(send(foreign))
    wrong_method = dpop_proof(key, method="GET", url=server.url, access_token=access, nonce=nonce)
    assert 'error="invalid_dpop_proof"' in challenge(send(wrong_method))
    no_proof = call_tool(server, authorization="DPoP " + access)
    assert 'error="invalid_dpop_proof"' in challenge(no_proof)

    state = server.control(rotate_dpop_nonce=True)
    assert state["current_dpop_nonce"] != nonce
    stale = send(dpop_proof(key, method="POST", url=server.url, access_token=access, nonce=nonce))
    assert 'error="use_dpop_nonce"' in challenge(stale)
    assert stale.headers["DPoP-Nonce"] == state["current_dpop_nonce"]
    fresh = dpop_proof(
        key, method="POST", url=server.url, access_token=access, nonce=state["current_dpop_nonce"]
    )
    assert send(fresh).status_code == 200


def test_legacy_endpoints_are_forwarded(oauth_peers: OAuthPeers) -> None:
    auth = oauth_peers.auth(redirect_iss="missing")
    auth.add_client("app", secret="s3cret", redirect_uris=[CALLBACK])
    server = oauth_peers.protected(auth, "--oauth-prm", "none", "--oauth-legacy-as", auth.url)
    assert challenge(get(server.url)) == "Bearer"
    meta = get(server.base + "/.well-known/oauth-authorization-server")
    assert meta.status_code == 200 and meta.headers["Content-Type"] == "application/json"
    assert meta.json()["issuer"] == auth.issuer
    verifier, code_challenge = pkce_pair()
    redirect = get(
        server.base + "/authorize",
        params={
            "response_type": "code",
            "client_id": "app",
            "redirect_uri": CALLBACK,
            "state": "s",
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
        },
    )
    assert redirect.status_code == 302
    code = redirect_params(redirect.headers["Location"])["code"]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": CALLBACK,
        "code_verifier": verifier,
    }
    answer = requests.post(
        server.base + "/token", data=form, auth=("app", "s3cret"), timeout=TIMEOUT
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["Cache-Control"] == "no-store"
    assert [r.endpoint for r in auth.requests] == ["metadata", "authorize", "token"]
    auth.configure(metadata=())
    assert get(server.base + "/.well-known/oauth-authorization-server").status_code == 404
    registered = requests.post(
        server.base + "/register", json={"redirect_uris": [CALLBACK]}, timeout=TIMEOUT
    )
    assert registered.status_code == 201


@pytest.mark.parametrize(
    "flags",
    [
        ["--oauth-issuer", "http://127.0.0.1:1"],  # no secret
        ["--oauth-issuer", "http://127.0.0.1:1", "--oauth-secret", "zz"],
        ["--oauth-issuer", "http://127.0.0.1:1", "--oauth-secret", "00", "--oauth-prm", "x"],
        ["--oauth-issuer", "http://127.0.0.1:1", "--oauth-secret", "00", "--oauth-tool-scope", "x"],
    ],
)
def test_bad_oauth_flags_are_refused(flags: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [*SERVER_COMMAND, "--transport", "http", "--port", "0", *flags],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
        cwd=tmp_path.parents[0],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 2, done.stderr
    assert b"oauth" in done.stderr


def test_end_to_end_by_hand(oauth_peers: OAuthPeers) -> None:
    """The whole 2025-11-25 discovery and authorization dance, with a legacy session."""
    auth = oauth_peers.auth(scopes_supported=("mcp",), dcr_application_type="native")
    server = oauth_peers.protected(auth, "--oauth-prm", "challenge", "--oauth-scopes", "mcp")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "1"},
        },
    }
    refused = mcp_post(server, initialize)
    assert refused.status_code == 401
    metadata_url = challenge(refused).split('resource_metadata="')[1].rstrip('"')
    prm = get(metadata_url).json()
    assert prm["resource"] == server.url
    issuer = prm["authorization_servers"][0]
    meta = get(issuer + "/.well-known/oauth-authorization-server").json()
    registration = requests.post(
        meta["registration_endpoint"],
        json={
            "client_name": "by-hand",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        },
        timeout=TIMEOUT,
    ).json()
    verifier, code_challenge = pkce_pair()
    redirect = get(
        meta["authorization_endpoint"],
        params={
            "response_type": "code",
            "client_id": registration["client_id"],
            "redirect_uri": CALLBACK,
            "state": "xyz",
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            "scope": "mcp",
            "resource": prm["resource"],
        },
    )
    params = redirect_params(redirect.headers["Location"])
    assert params["iss"] == meta["issuer"] and params["state"] == "xyz"
    tokens = requests.post(
        meta["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": CALLBACK,
            "code_verifier": verifier,
            "client_id": registration["client_id"],
            "resource": prm["resource"],
        },
        timeout=TIMEOUT,
    ).json()
    authorization = f"Bearer {tokens['access_token']}"
    ready = mcp_post(server, initialize, authorization=authorization)
    assert ready.status_code == 200, ready.text
    session = ready.headers["Mcp-Session-Id"]
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "authorized"}},
    }
    answer = mcp_post(server, message, authorization=authorization, session=session)
    assert answer.json()["result"]["content"][0]["text"] == "authorized"
    unauthorized = mcp_post(server, message, session=session)
    assert unauthorized.status_code == 401  # a session id is no credential
    paths = [entry["path"] for entry in server.records()]
    assert paths[:2] == ["/mcp", "/custom/oauth-protected-resource"]
    assert [r.endpoint for r in auth.requests] == ["metadata", "register", "authorize", "token"]
