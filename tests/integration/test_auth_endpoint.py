"""mcpclient.auth.token_endpoint against a scripted token server on 127.0.0.1.

The server (a :class:`tests.support.scripted_http.RouteServer` answering from a
script) records every request exactly as it arrived (headers and decoded form),
so each test asserts what an authorization server would see: client
authentication, ``resource``, DPoP proofs (verified with PyJWT), the single
``use_dpop_nonce`` retry and the absence of any other retry.
"""

from __future__ import annotations

import base64
import http.client
import logging
import pickle
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpclient._core.deadline import now
from mcpclient.auth._jose import SigningKey, jwk_thumbprint
from mcpclient.auth._net import SafeHTTP, URLPolicy
from mcpclient.auth.authorize import authorization_url, code_from_redirect, new_pkce, new_state
from mcpclient.auth.discovery import ServerMetadata, fetch_server_metadata
from mcpclient.auth.token_endpoint import (
    CLIENT_ASSERTION_TYPE,
    GRANT_JWT_BEARER,
    GRANT_TOKEN_EXCHANGE,
    MAX_EXPIRES_IN,
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    TokenEndpoint,
    classify_error,
    exchange_for_id_jag,
)
from mcpclient.auth.tokens import ClientInfo, TokenSet
from mcpclient.errors import AuthError, FailureClass
from tests.support.scripted_http import Answer, Recorded, RouteServer, Script

CLIENT_ID = "client id:1/é"
CLIENT_SECRET = "s3cr:t+/= é-SECRET"
CODE = "code-SECRET-1234"
VERIFIER = "verifier-SECRET-" + "v" * 30
REFRESH = "refresh-SECRET-old"
ACCESS = "access-SECRET-new"
ID_TOKEN = "id-token-SECRET-xyz"
ASSERTION = "assertion-SECRET-wif"
RESOURCE = "https://mcp.example/mcp"
SECRETS = (CLIENT_SECRET, CODE, VERIFIER, REFRESH, ACCESS, ID_TOKEN, ASSERTION)


class TokenServer(RouteServer):
    """The loopback token server: each request gets the next queued reply (then a 500)."""

    def __init__(self) -> None:
        self.script = Script(exhausted=Answer(500, b""))
        super().__init__(default=self.script)
        self.issuer = self.url
        self.token_url = self.issuer + "/token"

    def reply(self, status: int = 200, body: Any = None, **headers: str) -> None:
        """Queue a reply: a JSON value, text (sent as text/plain) or nothing (``None``)."""
        self.script.append(
            Answer(
                status,
                b"" if body is None else body,
                {k.replace("_", "-"): v for k, v in headers.items()},
                content_type="text/plain" if isinstance(body, str) else "application/json",
            )
        )

    def grant(self, **fields: Any) -> None:
        body = {"access_token": ACCESS, "token_type": "Bearer", **fields}
        self.reply(200, {k: v for k, v in body.items() if v is not None})


@pytest.fixture
def server() -> Iterator[TokenServer]:
    made = TokenServer()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def safe_http() -> Iterator[SafeHTTP]:
    made = SafeHTTP(URLPolicy(allow_loopback=True))
    try:
        yield made
    finally:
        made.close()


def metadata(server: TokenServer) -> ServerMetadata:
    return ServerMetadata(
        issuer=server.issuer,
        authorization_endpoint=server.issuer + "/authorize",
        token_endpoint=server.token_url,
        code_challenge_methods_supported=("S256",),
    )


def make_endpoint(
    server: TokenServer, safe_http: SafeHTTP, method: str = "none", **kwargs: Any
) -> TokenEndpoint:
    secret = CLIENT_SECRET if method.startswith("client_secret") else None
    client = ClientInfo(CLIENT_ID, client_secret=secret, auth_method=method, issuer=server.issuer)
    return TokenEndpoint(metadata(server), client, safe_http, **kwargs)


def deadline() -> float:
    return now() + 10


def exchange(endpoint: TokenEndpoint, resource: str | None = RESOURCE) -> TokenSet:
    return endpoint.exchange_code(
        CODE,
        verifier=VERIFIER,
        redirect_uri="http://127.0.0.1:1/callback",
        deadline=deadline(),
        resource=resource,
    )


def failure(action: Callable[[], object]) -> AuthError:
    with pytest.raises(AuthError) as caught:
        action()
    pickled = pickle.dumps(caught.value)
    for secret in SECRETS:
        assert secret not in str(caught.value)
        assert secret not in repr(caught.value)
        assert secret.encode() not in pickled
    return caught.value


# --- client authentication, as the server sees it ---


def test_client_secret_basic(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    exchange(make_endpoint(server, safe_http, "client_secret_basic"))
    (seen,) = server.requests
    scheme, _, encoded = seen.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode("ascii").partition(":")
    # RFC 6749 §2.3.1: each part form-urlencoded before base64 (so ':' survives)
    assert "%3A" in user
    assert urllib.parse.unquote_plus(user) == CLIENT_ID
    assert urllib.parse.unquote_plus(password) == CLIENT_SECRET
    assert "client_secret" not in seen.form
    assert "client_id" not in seen.form


def test_client_secret_post(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    exchange(make_endpoint(server, safe_http, "client_secret_post"))
    (seen,) = server.requests
    assert seen.field("client_id") == CLIENT_ID
    assert seen.field("client_secret") == CLIENT_SECRET
    assert "authorization" not in seen.headers


def test_public_client_names_itself_only(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    exchange(make_endpoint(server, safe_http, "none"))
    (seen,) = server.requests
    assert seen.field("client_id") == CLIENT_ID
    assert "client_secret" not in seen.form
    assert "client_assertion" not in seen.form
    assert "authorization" not in seen.headers


def test_private_key_jwt(server: TokenServer, safe_http: SafeHTTP) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key = SigningKey.from_pem(pem, key_id="k1")
    server.grant()
    server.grant()
    endpoint = make_endpoint(server, safe_http, "private_key_jwt", signing_key=key)
    exchange(endpoint)
    endpoint.client_credentials(scopes=(), deadline=deadline(), resource=None)
    jtis = set()
    for seen in server.requests:
        assert seen.field("client_assertion_type") == CLIENT_ASSERTION_TYPE
        assertion = seen.field("client_assertion")
        assert assertion is not None
        assert jwt.get_unverified_header(assertion)["kid"] == "k1"
        claims = jwt.decode(
            assertion,
            private.public_key(),
            algorithms=["ES256"],
            audience=server.issuer,
            issuer=CLIENT_ID,
            options={"require": ["exp", "iat", "jti", "sub"]},
        )
        assert claims["sub"] == CLIENT_ID
        jtis.add(claims["jti"])
        assert "client_secret" not in seen.form
        assert "authorization" not in seen.headers
    assert len(jtis) == 2


def test_endpoint_refuses_a_client_of_another_issuer_or_a_missing_key(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    other = ClientInfo("c", auth_method="none", issuer="https://other.example")
    error = failure(lambda: TokenEndpoint(metadata(server), other, safe_http))
    assert error.failure_class is FailureClass.AUTH_FAILED
    error = failure(lambda: make_endpoint(server, safe_http, "private_key_jwt"))
    assert "client key" in error.message
    assert server.requests == []


# --- grants ---


def test_exchange_code_sends_the_grant_and_resource(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.grant(expires_in=3600, refresh_token=REFRESH, scope="read write")
    before = time.time()
    tokens = exchange(make_endpoint(server, safe_http))
    (seen,) = server.requests
    assert seen.path == "/token"
    assert seen.field("grant_type") == "authorization_code"
    assert seen.field("code") == CODE
    assert seen.field("code_verifier") == VERIFIER
    assert seen.field("redirect_uri") == "http://127.0.0.1:1/callback"
    assert seen.field("resource") == RESOURCE
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert "application/json" in seen.headers["accept"]
    assert tokens.access_token == ACCESS
    assert tokens.refresh_token == REFRESH
    assert tokens.token_type == "Bearer"
    assert tokens.scopes == ("read", "write")
    assert tokens.issuer == server.issuer
    assert tokens.resource == RESOURCE
    assert tokens.expires_at is not None
    assert before + 3600 <= tokens.expires_at <= time.time() + 3600


def test_no_resource_parameter_when_none(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    tokens = exchange(make_endpoint(server, safe_http), resource=None)
    assert "resource" not in server.requests[0].form
    assert tokens.resource == ""


def test_client_credentials_grant(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    tokens = make_endpoint(server, safe_http, "client_secret_basic").client_credentials(
        scopes=("a", "b"), deadline=deadline(), resource=RESOURCE
    )
    (seen,) = server.requests
    assert seen.field("grant_type") == "client_credentials"
    assert seen.field("scope") == "a b"
    assert seen.field("resource") == RESOURCE
    assert tokens.scopes == ("a", "b")  # no scope in the reply: what was requested


def test_jwt_bearer_grant(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant(scope="granted")
    tokens = make_endpoint(server, safe_http).jwt_bearer(
        ASSERTION, scopes=("asked",), deadline=deadline(), resource=RESOURCE
    )
    (seen,) = server.requests
    assert seen.field("grant_type") == GRANT_JWT_BEARER
    assert seen.field("assertion") == ASSERTION
    assert seen.field("scope") == "asked"
    assert tokens.scopes == ("granted",)  # the reply's scope wins


def anonymous_endpoint(server: TokenServer, safe_http: SafeHTTP, **kwargs: Any) -> TokenEndpoint:
    return TokenEndpoint(metadata(server), None, safe_http, **kwargs)


def test_anonymous_jwt_bearer_sends_no_client_authentication(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    key = SigningKey.generate_dpop()
    server.grant(token_type="DPoP", scope="mcp")
    endpoint = anonymous_endpoint(server, safe_http, dpop_key=key)
    tokens = endpoint.jwt_bearer(ASSERTION, scopes=("mcp",), deadline=deadline(), resource=RESOURCE)
    (seen,) = server.requests
    assert set(seen.form) == {"grant_type", "assertion", "scope", "resource"}
    assert seen.field("grant_type") == GRANT_JWT_BEARER
    assert seen.field("assertion") == ASSERTION
    assert seen.field("resource") == RESOURCE
    assert "authorization" not in seen.headers
    assert jwk_thumbprint(proof_of(seen)[0]["jwk"]) == key.thumbprint()
    assert (tokens.token_type, tokens.issuer, tokens.resource) == ("DPoP", server.issuer, RESOURCE)
    assert "anonymous" in repr(endpoint) and ASSERTION not in repr(endpoint)


def test_anonymous_refresh_sends_no_client_authentication(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.grant(refresh_token=REFRESH)
    server.grant()
    endpoint = anonymous_endpoint(server, safe_http)
    tokens = endpoint.jwt_bearer(ASSERTION, scopes=(), deadline=deadline(), resource=RESOURCE)
    endpoint.refresh(tokens, deadline=deadline())
    seen = server.requests[1]
    assert set(seen.form) == {"grant_type", "refresh_token", "resource"}
    assert "authorization" not in seen.headers


@pytest.mark.parametrize(
    ("code", "expected"),
    [("invalid_grant", FailureClass.AUTH_EXPIRED), ("invalid_scope", FailureClass.AUTH_FAILED)],
)
def test_anonymous_jwt_bearer_refusals_are_classified_and_never_retried(
    server: TokenServer, safe_http: SafeHTTP, code: str, expected: FailureClass
) -> None:
    server.reply(400, {"error": code, "error_description": f"assertion {ASSERTION} refused"})
    server.grant()
    endpoint = anonymous_endpoint(server, safe_http, dpop_key=SigningKey.generate_dpop())
    error = failure(
        lambda: endpoint.jwt_bearer(
            ASSERTION, scopes=("mcp",), deadline=deadline(), resource=RESOURCE
        )
    )
    assert error.failure_class is expected
    assert code in error.message and "[redacted]" in error.message
    assert len(server.requests) == 1


def test_an_anonymous_endpoint_refuses_grants_that_need_a_client(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    endpoint = anonymous_endpoint(server, safe_http)
    for action in (
        lambda: exchange(endpoint),
        lambda: endpoint.client_credentials(scopes=(), deadline=deadline(), resource=None),
    ):
        error = failure(action)
        assert error.failure_class is FailureClass.AUTH_FAILED
        assert "needs a client" in error.message
    assert server.requests == []


def test_no_scope_parameter_when_no_scopes(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    make_endpoint(server, safe_http).client_credentials(
        scopes=(), deadline=deadline(), resource=None
    )
    assert "scope" not in server.requests[0].form


# --- refresh and rotation ---


def held(server: TokenServer, **changes: Any) -> TokenSet:
    base = TokenSet(
        "old-access",
        refresh_token=REFRESH,
        scopes=("read",),
        issuer=server.issuer,
        resource=RESOURCE,
        expires_at=time.time() + 3600,  # locally unexpired: refresh still works
    )
    return attrs.evolve(base, **changes)


def test_refresh_rotates_the_refresh_token(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant(refresh_token="refresh-SECRET-rotated", expires_in=60)
    fresh = make_endpoint(server, safe_http).refresh(held(server), deadline=deadline())
    (seen,) = server.requests
    assert seen.field("grant_type") == "refresh_token"
    assert seen.field("refresh_token") == REFRESH
    assert seen.field("resource") == RESOURCE
    assert "scope" not in seen.form  # same scopes: none named
    assert fresh.refresh_token == "refresh-SECRET-rotated"
    assert fresh.access_token == ACCESS
    assert fresh.scopes == ("read",)  # the old token's scopes when the reply has none
    assert fresh.resource == RESOURCE


def test_refresh_keeps_the_old_refresh_token_when_none_returned(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.grant()
    fresh = make_endpoint(server, safe_http).refresh(held(server), deadline=deadline())
    assert fresh.refresh_token == REFRESH


def test_refresh_can_leave_out_the_resource(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant()
    make_endpoint(server, safe_http).refresh(held(server), deadline=deadline(), send_resource=False)
    assert "resource" not in server.requests[0].form


def test_refresh_refuses_without_a_refresh_token_or_across_issuers(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    endpoint = make_endpoint(server, safe_http)
    none = failure(lambda: endpoint.refresh(held(server, refresh_token=None), deadline=deadline()))
    assert none.failure_class is FailureClass.AUTH_EXPIRED
    other = held(server, issuer="https://other.example")
    assert failure(lambda: endpoint.refresh(other, deadline=deadline())).failure_class is (
        FailureClass.AUTH_FAILED
    )
    assert server.requests == []


def test_refresh_invalid_grant_is_expired_and_not_retried(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(400, {"error": "invalid_grant", "error_description": f"token {REFRESH} revoked"})
    server.grant()
    error = failure(
        lambda: make_endpoint(server, safe_http).refresh(held(server), deadline=deadline())
    )
    assert error.failure_class is FailureClass.AUTH_EXPIRED
    assert "[redacted]" in error.message  # the echoed refresh token is scrubbed
    assert len(server.requests) == 1


# --- DPoP ---


def proof_of(seen: Recorded) -> tuple[dict[str, Any], dict[str, Any]]:
    proof = seen.headers["dpop"]
    header = jwt.get_unverified_header(proof)
    claims = jwt.decode(proof, jwt.PyJWK(header["jwk"]).key, algorithms=[header["alg"]])
    return header, claims


def test_dpop_proof_on_the_token_request(server: TokenServer, safe_http: SafeHTTP) -> None:
    key = SigningKey.generate_dpop()
    server.grant(token_type="DPoP")
    tokens = exchange(make_endpoint(server, safe_http, dpop_key=key))
    header, claims = proof_of(server.requests[0])
    assert header["typ"] == "dpop+jwt"
    assert jwk_thumbprint(header["jwk"]) == key.thumbprint()
    assert claims["htm"] == "POST"
    assert claims["htu"] == server.token_url
    assert "ath" not in claims  # no access token yet
    assert "nonce" not in claims
    assert tokens.token_type == "DPoP"


def test_dpop_use_dpop_nonce_is_retried_exactly_once(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(400, {"error": "use_dpop_nonce"}, DPoP_Nonce="nonce-1")
    server.grant(token_type="DPoP")
    endpoint = make_endpoint(
        server, safe_http, "client_secret_post", dpop_key=SigningKey.generate_dpop()
    )
    tokens = exchange(endpoint)
    assert tokens.token_type == "DPoP"
    first, second = server.requests
    assert "nonce" not in proof_of(first)[1]
    assert proof_of(second)[1]["nonce"] == "nonce-1"
    assert proof_of(first)[1]["jti"] != proof_of(second)[1]["jti"]
    assert second.field("code") == CODE
    assert endpoint.dpop_nonce == "nonce-1"
    # the nonce is kept for the next request
    server.grant(token_type="DPoP")
    endpoint.client_credentials(scopes=(), deadline=deadline(), resource=None)
    assert proof_of(server.requests[2])[1]["nonce"] == "nonce-1"


def test_dpop_nonce_retry_happens_only_once(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.reply(400, {"error": "use_dpop_nonce"}, DPoP_Nonce="nonce-1")
    server.reply(400, {"error": "use_dpop_nonce"}, DPoP_Nonce="nonce-2")
    server.grant(token_type="DPoP")
    endpoint = make_endpoint(server, safe_http, dpop_key=SigningKey.generate_dpop())
    error = failure(lambda: exchange(endpoint))
    assert error.failure_class is FailureClass.AUTH_FAILED
    assert "use_dpop_nonce" in error.message
    assert len(server.requests) == 2


def test_use_dpop_nonce_without_a_nonce_is_not_retried(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(400, {"error": "use_dpop_nonce"})
    server.grant(token_type="DPoP")
    endpoint = make_endpoint(server, safe_http, dpop_key=SigningKey.generate_dpop())
    failure(lambda: exchange(endpoint))
    assert len(server.requests) == 1


def test_use_dpop_nonce_without_dpop_is_not_retried(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(400, {"error": "use_dpop_nonce"}, DPoP_Nonce="n")
    server.grant()
    failure(lambda: exchange(make_endpoint(server, safe_http)))
    assert len(server.requests) == 1
    assert "dpop" not in server.requests[0].headers


def test_dpop_token_type_needs_a_dpop_key(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant(token_type="DPoP")
    error = failure(lambda: exchange(make_endpoint(server, safe_http)))
    assert "token type" in error.message


def test_bearer_is_accepted_with_a_dpop_key(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.grant(token_type="bearer")
    tokens = exchange(make_endpoint(server, safe_http, dpop_key=SigningKey.generate_dpop()))
    assert tokens.token_type == "Bearer"


# --- no retries, error classes ---


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, {"error": "invalid_grant"}, FailureClass.AUTH_EXPIRED),
        (400, {"error": "access_denied"}, FailureClass.AUTH_DENIED),
        (401, {"error": "invalid_client"}, FailureClass.AUTH_DENIED),
        (400, {"error": "unauthorized_client"}, FailureClass.AUTH_DENIED),
        (400, {"error": "invalid_request"}, FailureClass.AUTH_FAILED),
        (400, {"error": "invalid_scope"}, FailureClass.AUTH_FAILED),
        (400, {"error": "unsupported_grant_type"}, FailureClass.AUTH_FAILED),
        (500, {"error": "server_error"}, FailureClass.AUTH_FAILED),
        (503, {"error": "temporarily_unavailable"}, FailureClass.AUTH_FAILED),
        (401, {"error": "invalid_scope"}, FailureClass.AUTH_FAILED),  # the code decides
        (400, {"error": "something_new"}, FailureClass.AUTH_FAILED),
        (401, {"error": "something_new"}, FailureClass.AUTH_DENIED),  # unknown: by status
        (401, None, FailureClass.AUTH_DENIED),
        (403, "forbidden", FailureClass.AUTH_DENIED),
        (500, None, FailureClass.AUTH_FAILED),
        (502, "<html>bad gateway</html>", FailureClass.AUTH_FAILED),
        (200, {"error": "invalid_grant"}, FailureClass.AUTH_EXPIRED),  # 200 with an error
    ],
)
def test_errors_are_classified_and_never_retried(
    server: TokenServer, safe_http: SafeHTTP, status: int, body: Any, expected: FailureClass
) -> None:
    server.reply(status, body)
    server.grant()
    error = failure(lambda: exchange(make_endpoint(server, safe_http, "client_secret_post")))
    assert error.failure_class is expected
    assert f"HTTP {status}" in error.message
    assert "token endpoint" in error.message
    assert len(server.requests) == 1  # a code is single-use: never sent twice


def test_classify_error_table() -> None:
    assert classify_error("invalid_grant", 400) is FailureClass.AUTH_EXPIRED
    assert classify_error(None, 403) is FailureClass.AUTH_DENIED
    assert classify_error(None, 429) is FailureClass.AUTH_FAILED


def test_error_description_is_bounded_and_scrubbed(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    text = f"bad code {CODE} for secret {CLIENT_SECRET} " + "z" * 1000 + "\x07\n"
    server.reply(400, {"error": "invalid_request", "error_description": text})
    error = failure(lambda: exchange(make_endpoint(server, safe_http, "client_secret_post")))
    assert "z" * 201 not in error.message
    assert "\x07" not in error.message
    assert error.message.count("[redacted]") == 2


# --- response rules ---


def grant_and_exchange(server: TokenServer, safe_http: SafeHTTP, **fields: Any) -> TokenSet:
    server.grant(**fields)
    return exchange(make_endpoint(server, safe_http))


def test_expires_in_absent_means_no_expiry(server: TokenServer, safe_http: SafeHTTP) -> None:
    tokens = grant_and_exchange(server, safe_http)
    assert tokens.expires_at is None
    assert not tokens.expired()


def test_expires_in_zero_is_already_expired(server: TokenServer, safe_http: SafeHTTP) -> None:
    tokens = grant_and_exchange(server, safe_http, expires_in=0)
    assert tokens.expired(skew=0)


def test_expires_in_is_clamped_to_a_year(server: TokenServer, safe_http: SafeHTTP) -> None:
    tokens = grant_and_exchange(server, safe_http, expires_in=10**12)
    assert tokens.expires_at is not None
    assert tokens.expires_at <= time.time() + MAX_EXPIRES_IN


def test_expires_in_as_a_digit_string_is_accepted(server: TokenServer, safe_http: SafeHTTP) -> None:
    tokens = grant_and_exchange(server, safe_http, expires_in="120")
    assert tokens.expires_at is not None
    assert 100 < tokens.expires_at - time.time() <= 120


def test_expires_in_beyond_any_float_is_a_year(server: TokenServer, safe_http: SafeHTTP) -> None:
    # float(10**400) overflows, int("9" * 5000) passes Python's digit limit: neither escapes.
    for value in (10**400, "9" * 5000):
        tokens = grant_and_exchange(server, safe_http, expires_in=value)
        assert tokens.expires_at is not None
        assert tokens.expires_at <= time.time() + MAX_EXPIRES_IN


@pytest.mark.parametrize("value", [-1, "soon", True, [60], "-5", "\u00b2", "\u0663"])
def test_expires_in_invalid_fails(server: TokenServer, safe_http: SafeHTTP, value: Any) -> None:
    error = failure(lambda: grant_and_exchange(server, safe_http, expires_in=value))
    assert "expires_in" in error.message
    assert error.failure_class is FailureClass.AUTH_FAILED


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"access_token": None}, "no access_token"),
        ({"access_token": ""}, "access_token"),
        ({"access_token": 5}, "access_token"),
        ({"access_token": "has space"}, "characters"),
        ({"access_token": "crlf\r\nX-Evil: 1"}, "characters"),
        ({"token_type": "mac"}, "token type"),
        ({"token_type": 7}, "token type"),
        ({"refresh_token": 7}, "refresh_token"),
        ({"scope": ["a"]}, "scope"),
    ],
)
def test_malformed_grants_fail(
    server: TokenServer, safe_http: SafeHTTP, fields: dict[str, Any], problem: str
) -> None:
    body = {"access_token": ACCESS, "token_type": "Bearer", **fields}
    server.reply(200, {k: v for k, v in body.items() if v is not None})
    error = failure(lambda: exchange(make_endpoint(server, safe_http)))
    assert problem in error.message
    assert error.failure_class is FailureClass.AUTH_FAILED


def test_a_200_without_json_fails(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.reply(200, "access_token=abc")
    error = failure(lambda: exchange(make_endpoint(server, safe_http)))
    assert "JSON" in error.message


def test_token_type_absent_or_lowercase_is_bearer(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.reply(200, {"access_token": ACCESS})
    assert exchange(make_endpoint(server, safe_http)).token_type == "Bearer"
    assert grant_and_exchange(server, safe_http, token_type="BEARER").token_type == "Bearer"


def test_nothing_secret_is_logged(
    server: TokenServer, safe_http: SafeHTTP, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.grant(refresh_token=REFRESH)
    server.reply(400, {"error": "invalid_grant", "error_description": f"{REFRESH} revoked"})
    endpoint = make_endpoint(server, safe_http, "client_secret_post")
    tokens = exchange(endpoint)
    failure(lambda: endpoint.refresh(tokens, deadline=deadline()))
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for secret in SECRETS:
        assert secret not in logged


def test_token_endpoint_repr_shows_no_secret(server: TokenServer, safe_http: SafeHTTP) -> None:
    endpoint = make_endpoint(server, safe_http, "client_secret_basic")
    server.grant(refresh_token=REFRESH)
    tokens = exchange(endpoint)
    for text in (repr(endpoint), repr(tokens), str(tokens)):
        for secret in SECRETS:
            assert secret not in text


# --- ID-JAG exchange at the IdP (RFC 8693) ---


def id_jag(server: TokenServer, safe_http: SafeHTTP, **kwargs: Any) -> str:
    args: dict[str, Any] = {
        "idp_token_endpoint": server.token_url,
        "id_token": ID_TOKEN,
        "audience": "https://as.example",
        "resource": RESOURCE,
        "scopes": ("read", "write"),
        "client_id": "idp-client",
        "client_secret": None,
        "deadline": deadline(),
    }
    args.update(kwargs)
    return exchange_for_id_jag(safe_http, **args)


def jag_reply(**fields: Any) -> dict[str, Any]:
    body = {
        "access_token": "eyJ.jag.sig",
        "issued_token_type": TOKEN_TYPE_ID_JAG,
        "token_type": "N_A",
        "expires_in": 300,
        **fields,
    }
    return {k: v for k, v in body.items() if v is not None}


def test_id_jag_exchange_request_and_result(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.reply(200, jag_reply())
    assert id_jag(server, safe_http) == "eyJ.jag.sig"
    (seen,) = server.requests
    assert seen.field("grant_type") == GRANT_TOKEN_EXCHANGE
    assert seen.field("requested_token_type") == TOKEN_TYPE_ID_JAG
    assert seen.field("subject_token") == ID_TOKEN
    assert seen.field("subject_token_type") == TOKEN_TYPE_ID_TOKEN
    assert seen.field("audience") == "https://as.example"
    assert seen.field("resource") == RESOURCE
    assert seen.field("scope") == "read write"
    assert seen.field("client_id") == "idp-client"
    assert "authorization" not in seen.headers


def test_id_jag_exchange_with_a_client_secret_uses_basic(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(200, jag_reply())
    id_jag(server, safe_http, client_secret=CLIENT_SECRET, resource=None, scopes=())
    (seen,) = server.requests
    user, _, password = base64.b64decode(seen.headers["authorization"][6:]).decode().partition(":")
    assert urllib.parse.unquote_plus(user) == "idp-client"
    assert urllib.parse.unquote_plus(password) == CLIENT_SECRET
    assert "client_secret" not in seen.form
    assert "resource" not in seen.form
    assert "scope" not in seen.form


def test_id_jag_exchange_refuses_another_token_type(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(200, jag_reply(issued_token_type="urn:ietf:params:oauth:token-type:access_token"))
    error = failure(lambda: id_jag(server, safe_http))
    assert "ID-JAG" in error.message
    server.reply(200, jag_reply(access_token=None))
    assert "access_token" in failure(lambda: id_jag(server, safe_http)).message


def test_id_jag_exchange_errors_are_classified(server: TokenServer, safe_http: SafeHTTP) -> None:
    server.reply(400, {"error": "invalid_grant", "error_description": f"bad {ID_TOKEN}"})
    error = failure(lambda: id_jag(server, safe_http))
    assert error.failure_class is FailureClass.AUTH_EXPIRED
    assert "identity provider token endpoint" in error.message
    assert len(server.requests) == 1


def test_id_jag_then_jwt_bearer_at_the_authorization_server(
    server: TokenServer, safe_http: SafeHTTP
) -> None:
    server.reply(200, jag_reply())
    server.grant(scope="read")
    jag = id_jag(server, safe_http)
    tokens = make_endpoint(server, safe_http, "client_secret_basic").jwt_bearer(
        jag, scopes=("read",), deadline=deadline(), resource=RESOURCE
    )
    assert server.requests[1].field("assertion") == "eyJ.jag.sig"
    assert server.requests[1].field("grant_type") == GRANT_JWT_BEARER
    assert tokens.access_token == ACCESS


# --- interoperation with the test authorization server (mcpclient.testing) ---

AuthServer = pytest.importorskip("mcpclient.testing.auth_server").AuthServer


def fetch_meta(auth: Any, safe_http: SafeHTTP) -> ServerMetadata:
    return fetch_server_metadata(auth.issuer, safe_http, deadline=deadline())


def follow_authorization(url: str) -> str:
    """What a headless host does: GET the authorization URL, return the Location."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        conn.request("GET", f"{parts.path}?{parts.query}")
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 302, reply.status
        return reply.headers["Location"]
    finally:
        conn.close()


def authorize_code(auth: Any, meta: ServerMetadata, client_id: str) -> tuple[str, str, str]:
    verifier, challenge = new_pkce()
    state = new_state()
    redirect_uri = "http://127.0.0.1:45678/callback"
    assert meta.authorization_endpoint is not None
    url = authorization_url(
        meta.authorization_endpoint,
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
            "scope": "mcp",
        },
    )
    code = code_from_redirect(
        follow_authorization(url),
        state=state,
        issuer=meta.issuer,
        iss_required=meta.authorization_response_iss_parameter_supported,
    )
    return code, verifier, redirect_uri


@pytest.mark.parametrize(
    "method", ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]
)
def test_code_flow_refresh_and_rotation_against_the_test_server(
    safe_http: SafeHTTP, method: str
) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    secret = CLIENT_SECRET if method.startswith("client_secret") else None
    with AuthServer(issuer_path="/tenant", refresh_rotation=True) as auth:
        auth.add_client(
            "app",
            secret=secret,
            auth_method=method,
            public_key=private.public_key() if method == "private_key_jwt" else None,
        )
        meta = fetch_meta(auth, safe_http)
        client = ClientInfo("app", client_secret=secret, auth_method=method, issuer=meta.issuer)
        endpoint = TokenEndpoint(meta, client, safe_http, signing_key=SigningKey.from_pem(pem))
        code, verifier, redirect_uri = authorize_code(auth, meta, "app")
        tokens = endpoint.exchange_code(
            code,
            verifier=verifier,
            redirect_uri=redirect_uri,
            deadline=deadline(),
            resource=RESOURCE,
            scopes=("mcp",),
        )
        claims = jwt.decode(
            tokens.access_token, auth.token_secret, algorithms=["HS256"], audience=RESOURCE
        )
        assert claims["client_id"] == "app"
        assert tokens.refresh_token is not None
        # the code is single-use
        again = failure(
            lambda: endpoint.exchange_code(
                code,
                verifier=verifier,
                redirect_uri=redirect_uri,
                deadline=deadline(),
                resource=RESOURCE,
            )
        )
        assert again.failure_class is FailureClass.AUTH_EXPIRED
        rotated = endpoint.refresh(tokens, deadline=deadline())
        assert rotated.refresh_token not in (None, tokens.refresh_token)
        stale = failure(lambda: endpoint.refresh(tokens, deadline=deadline()))
        assert stale.failure_class is FailureClass.AUTH_EXPIRED


@pytest.mark.parametrize(
    ("redirect_iss", "ok"),
    [
        ("correct", True),
        ("missing", False),
        ("wrong", False),
        ("trailing-slash", False),
        ("case", False),
    ],
)
def test_iss_on_the_test_servers_redirect(safe_http: SafeHTTP, redirect_iss: str, ok: bool) -> None:
    with AuthServer(iss_supported=True, redirect_iss=redirect_iss) as auth:
        auth.add_client("pub")
        meta = fetch_meta(auth, safe_http)
        assert meta.authorization_response_iss_parameter_supported
        if ok:
            assert authorize_code(auth, meta, "pub")[0]
        else:
            error = failure(lambda: authorize_code(auth, meta, "pub"))
            assert error.failure_class is FailureClass.AUTH_FAILED
            assert "iss" in error.message


def test_dpop_with_nonce_against_the_test_server(safe_http: SafeHTTP) -> None:
    with AuthServer(dpop="required", dpop_nonce=True) as auth:
        auth.add_client("m2m", secret=CLIENT_SECRET)
        meta = fetch_meta(auth, safe_http)
        client = ClientInfo(
            "m2m",
            client_secret=CLIENT_SECRET,
            auth_method="client_secret_basic",
            issuer=meta.issuer,
        )
        key = SigningKey.generate_dpop()
        endpoint = TokenEndpoint(meta, client, safe_http, dpop_key=key)
        tokens = endpoint.client_credentials(
            scopes=("mcp",), deadline=deadline(), resource=RESOURCE
        )
        assert tokens.token_type == "DPoP"
        claims = jwt.decode(
            tokens.access_token, auth.token_secret, algorithms=["HS256"], audience=RESOURCE
        )
        assert claims["cnf"]["jkt"] == key.thumbprint()
        sent = auth.requests_to("token")
        assert [r.error for r in sent] == ["use_dpop_nonce", None]
        # the nonce is remembered: the next request needs no retry
        endpoint.client_credentials(scopes=("mcp",), deadline=deadline(), resource=RESOURCE)
        assert len(auth.requests_to("token")) == 3


@pytest.mark.parametrize("knob", [True, False])
def test_anonymous_workload_against_the_test_server(safe_http: SafeHTTP, knob: bool) -> None:
    workload = ec.generate_private_key(ec.SECP256R1())
    with AuthServer(anonymous_jwt_bearer=knob, dpop="required") as auth:
        auth.trust_assertion_issuer("https://workload.example", workload.public_key())
        meta = fetch_meta(auth, safe_http)
        claims = {
            "iss": "https://workload.example",
            "sub": "spiffe://example/agent",
            "aud": meta.issuer,
            "exp": int(time.time()) + 60,
        }
        assertion = jwt.encode(claims, workload, algorithm="ES256")
        endpoint = TokenEndpoint(meta, None, safe_http, dpop_key=SigningKey.generate_dpop())

        def grant() -> TokenSet:
            return endpoint.jwt_bearer(
                assertion, scopes=("mcp",), deadline=deadline(), resource=RESOURCE
            )

        if knob:
            tokens = grant()
            access = jwt.decode(
                tokens.access_token, auth.token_secret, algorithms=["HS256"], audience=RESOURCE
            )
            assert access["client_id"] == access["sub"] == "spiffe://example/agent"
            assert access["cnf"]["jkt"] and tokens.token_type == "DPoP"
        else:
            with pytest.raises(AuthError) as caught:
                grant()
            assert caught.value.failure_class is FailureClass.AUTH_DENIED  # invalid_client
            assert assertion not in str(caught.value)
        assert len(auth.requests_to("token")) == 1


def test_enterprise_id_jag_flow_against_the_test_servers(safe_http: SafeHTTP) -> None:
    with AuthServer(idp=True, jag_client_id="app") as idp, AuthServer() as auth:
        idp.add_client("idp-client", secret="idp-SECRET")
        auth.add_client("app", secret=CLIENT_SECRET)
        auth.trust_idp(idp)
        meta = fetch_meta(auth, safe_http)
        jag = exchange_for_id_jag(
            safe_http,
            idp_token_endpoint=idp.token_endpoint,
            id_token=idp.issue_id_token(audience="idp-client"),
            audience=meta.issuer,
            resource=RESOURCE,
            scopes=("mcp",),
            client_id="idp-client",
            client_secret="idp-SECRET",
            deadline=deadline(),
        )
        client = ClientInfo(
            "app",
            client_secret=CLIENT_SECRET,
            auth_method="client_secret_basic",
            issuer=meta.issuer,
        )
        tokens = TokenEndpoint(meta, client, safe_http).jwt_bearer(
            jag, scopes=("mcp",), deadline=deadline(), resource=RESOURCE
        )
        assert (
            jwt.decode(
                tokens.access_token, auth.token_secret, algorithms=["HS256"], audience=RESOURCE
            )["client_id"]
            == "app"
        )
