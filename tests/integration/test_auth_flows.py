"""OAuth end to end: ``mcpclient.connect`` to a protected test server, every flow of issue #9.

Peers: one protected HTTP test server (a subprocess, shared by the module and
re-pointed at each test's authorization server through ``/oauth-control``)
and in-process :class:`AuthServer` instances (one or more per test). The
browser step is headless (:func:`follow`, a redirect follower that logs
nothing), except in the loopback-listener test.

Secrets: every test runs under :class:`Ledger`, which gathers each secret the
flow produced (tokens and registrations the provider saved, codes, verifiers,
states, assertions and client credentials the authorization servers received,
tokens the MCP server received, keys the test made) and everything the
library showed (log records at DEBUG, events, error messages, reprs), and
fails the test when a secret appears in any of it. The last test checks that
the module's ledgers met every kind of secret, so the scan cannot go blind.
"""

from __future__ import annotations

import base64
import gc
import http.client
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import mcpclient
from mcpclient.auth import (
    MAX_STEP_UPS,
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    ClientInfo,
    FileTokenStore,
    JWTBearerGrant,
    MemoryTokenStore,
    OAuth,
    TokenExchangeGrant,
    TokenSet,
)
from mcpclient.errors import AuthError, FailureClass
from mcpclient.status import State

from .auth_support import AuthServer, ProtectedServer

TIMEOUT = 10.0
SECRET_FORM_FIELDS = {
    "code": "code",
    "code_verifier": "code_verifier",
    "refresh_token": "refresh_token",
    "client_secret": "client_secret",
    "client_assertion": "client_assertion",
    "assertion": "assertion",
    "subject_token": "id_token",
}
#: Kinds of secret the module's ledgers must have met (see the last test).
EXPECTED_KINDS = {
    "access_token",
    "refresh_token",
    "code",
    "code_verifier",
    "state",
    "client_secret",
    "client_assertion",
    "assertion",
    "id_token",
    "private_key",
    "basic_credentials",
}
KINDS_SEEN: set[str] = set()
SCANNED: list[int] = []


# ----------------------------------------------------------------------------- helpers


def follow(url: str) -> str:
    """A headless browser: GET the authorization URL, return where it redirects.

    Built on http.client so that nothing logs the URL (its ``state``) while
    the ledger watches the logs.
    """
    parts = urlsplit(url)
    assert parts.scheme == "http" and parts.hostname == "127.0.0.1", url
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        conn.request("GET", f"{parts.path}?{parts.query}")
        response = conn.getresponse()
        response.read()
        location = response.getheader("Location")
    finally:
        conn.close()
    assert response.status == 302 and location, response.status
    return location


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def new_key() -> tuple[ec.EllipticCurvePrivateKey, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return key, pem


class Ledger:
    """Secrets a test produced and everything the library showed during it."""

    def __init__(self) -> None:
        self.secrets: dict[str, str] = {}  # value -> kind
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def secret(self, kind: str, value: str | None) -> None:
        if value and len(value) >= 8:
            with self._lock:
                self.secrets.setdefault(value, kind)

    def show(self, *values: object) -> None:
        """Record what the library showed: ``repr`` and ``str`` of each value."""
        with self._lock:
            for value in values:
                self.texts.extend((repr(value), str(value)))

    def event(self, event: object) -> None:
        self.show(event)

    def needles(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for value, kind in self.secrets.items():
            found[value] = kind
            parts = value.split(".")
            if len(parts) == 3:  # a JWT: its payload and signature are unique
                for part in parts[1:]:
                    if len(part) >= 16:
                        found[part] = kind
        return found

    def leaks(self) -> list[str]:
        needles = self.needles()
        problems = []
        for text in self.texts:
            for needle, kind in needles.items():
                if needle in text:
                    problems.append(f"a {kind} appears in: {text[:300]!r}")
        return problems


class RecordingStore(MemoryTokenStore):
    """A memory store that tells the ledger about every secret saved in it."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self.ledger = ledger
        self.saved: list[TokenSet] = []
        self.clients: list[ClientInfo] = []

    def save_tokens(self, tokens: TokenSet) -> None:
        self.ledger.secret("access_token", tokens.access_token)
        self.ledger.secret("refresh_token", tokens.refresh_token)
        self.ledger.show(tokens)
        self.saved.append(tokens)
        super().save_tokens(tokens)

    def save_client(self, client: ClientInfo) -> None:
        self.ledger.secret("client_secret", client.client_secret)
        self.ledger.show(client)
        self.clients.append(client)
        super().save_client(client)


class Env:
    """One test's peers, providers and clients, torn down (and scanned) at its end."""

    def __init__(self, server: ProtectedServer, ledger: Ledger) -> None:
        self.server = server
        self.ledger = ledger
        self.store = RecordingStore(ledger)
        self.auth_servers: list[AuthServer] = []
        self.providers: list[OAuth] = []
        self.clients: list[mcpclient.Client] = []
        self.events: list[Any] = []

    # -- peers

    def auth(self, **knobs: Any) -> AuthServer:
        server = AuthServer(**knobs)
        self.auth_servers.append(server)
        return server

    def protect(self, auth: AuthServer, **knobs: Any) -> None:
        """Point the protected server at ``auth``, every other knob back to its default."""
        state: dict[str, Any] = {
            "prm": "path",
            "prm_resource": None,
            "prm_scopes": None,
            "scopes": [],
            "challenge_scope": None,
            "tool_scopes": {},
            "dpop": False,
            "dpop_nonce": False,
            "legacy_as": None,
        }
        state.update(knobs)
        self.server.control(
            issuer=auth.issuer, secret=auth.token_secret.hex(), clear_log=True, **state
        )

    # -- the client side

    def oauth(self, **kw: Any) -> OAuth:
        kw.setdefault("grant", AuthorizationCodeGrant(redirect=follow))
        kw.setdefault("store", self.store)
        for name in ("client_secret", "client_key"):
            value = kw.get(name)
            if isinstance(value, str):
                self.ledger.secret("private_key" if name == "client_key" else name, value)
                for line in value.splitlines():
                    if len(line) >= 32 and "-----" not in line:
                        self.ledger.secret("private_key", line)
        provider = OAuth(**kw)
        self.providers.append(provider)
        return provider

    def connect(
        self, provider: OAuth, *, name: str = "prot", timeouts: Any = None, **kw: Any
    ) -> mcpclient.Client:
        transport = mcpclient.StreamableHTTPTransport(self.server.url, auth=provider)
        extra = {} if timeouts is None else {"timeouts": timeouts}
        definition = mcpclient.Definition(name, transport, **extra, **kw)
        client = mcpclient.connect(definition, mcpclient.Handlers(event=self._event))
        self.clients.append(client)
        self.ledger.show(client.status())
        return client

    def _event(self, event: Any) -> None:
        self.events.append(event)
        self.ledger.event(event)

    def fails(self, fn: Callable[[], Any], failure_class: FailureClass) -> AuthError:
        """Run ``fn``; it must raise an AuthError of ``failure_class`` (shown to the ledger)."""
        with pytest.raises(AuthError) as info:
            fn()
        self.ledger.show(info.value, info.value.message)
        assert info.value.failure_class is failure_class, info.value
        return info.value

    def connect_fails(self, provider: OAuth, failure_class: FailureClass) -> AuthError:
        return self.fails(lambda: self.connect(provider), failure_class)

    # -- teardown

    def close(self) -> None:
        for client in self.clients:
            self.ledger.show(client.status())
            client.close()
        for provider in self.providers:
            self.ledger.show(provider)
        self.ledger.show(self.store)
        for auth in self.auth_servers:
            self._harvest(auth)
            auth.close()
        self._harvest_server()

    def _harvest(self, auth: AuthServer) -> None:
        for request in auth.requests:
            for field, kind in SECRET_FORM_FIELDS.items():
                self.ledger.secret(kind, request.form.get(field))
            self.ledger.secret("state", request.query.get("state"))
            if request.location:
                found = query(request.location)
                self.ledger.secret("code", found.get("code"))
                self.ledger.secret("state", found.get("state"))
            basic = request.header("Authorization")
            if basic and basic.lower().startswith("basic "):
                encoded = basic.split(" ", 1)[1]
                self.ledger.secret("basic_credentials", encoded)
                decoded = base64.b64decode(encoded).decode()
                self.ledger.secret("client_secret", decoded.partition(":")[2])

    def _harvest_server(self) -> None:
        for record in self.server.records():
            for name, value in record.get("headers", []):
                if name.lower() == "authorization":
                    self.ledger.secret("access_token", value.partition(" ")[2])


@pytest.fixture(scope="module")
def protected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProtectedServer]:
    """The protected MCP server for the whole module (re-pointed by each test)."""
    server = ProtectedServer(
        tmp_path_factory.mktemp("auth-flows"), None, issuer="http://127.0.0.1:9", secret=b"x" * 32
    )
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def env(protected: ProtectedServer, caplog: pytest.LogCaptureFixture) -> Iterator[Env]:
    """The test's environment; after the test, nothing it produced may leak a secret."""
    caplog.set_level(logging.DEBUG)
    ledger = Ledger()
    environment = Env(protected, ledger)
    try:
        yield environment
    finally:
        environment.close()
        formatter = logging.Formatter()
        # caplog.records is the current phase's only: take every phase's.
        for when in ("setup", "call", "teardown"):
            for record in caplog.get_records(when):
                ledger.show(formatter.format(record))
        KINDS_SEEN.update(ledger.secrets.values())
        SCANNED.append(len(ledger.texts))
        leaks = ledger.leaks()
        assert not leaks, "\n".join(leaks[:10])


def authorize_requests(auth: AuthServer) -> list[dict[str, str]]:
    return [dict(r.query) for r in auth.requests_to("authorize")]


def token_forms(auth: AuthServer, grant: str | None = None) -> list[dict[str, str]]:
    forms = [dict(r.form) for r in auth.requests_to("token") if r.status == 200]
    return [f for f in forms if grant is None or f.get("grant_type") == grant]


def guard_log(env: Env) -> list[dict[str, Any]]:
    return env.server.log()


# ----------------------------------------------------------------------------- discovery


@pytest.mark.parametrize("prm", ["challenge", "path", "root"])
def test_protected_resource_metadata_is_found_where_the_server_serves_it(
    env: Env, prm: str
) -> None:
    auth = env.auth()
    env.protect(auth, prm=prm)
    client = env.connect(env.oauth())
    assert client.call_tool("echo", {"message": "hi"}).text == "hi"
    [authz] = authorize_requests(auth)
    assert authz["resource"] == env.server.url  # RFC 8707 on the authorization request
    assert token_forms(auth, "authorization_code")[0]["resource"] == env.server.url
    assert client.status().state is State.READY


@pytest.mark.parametrize(
    ("issuer_path", "metadata"),
    [
        ("/tenant", ("oauth",)),  # RFC 8414, path inserted
        ("/tenant", ("oidc",)),  # OpenID, path inserted
        ("/tenant", ("oidc-appended",)),  # OpenID, path appended
        ("", ("oidc",)),  # a path-less issuer, OpenID only
    ],
)
def test_authorization_server_metadata_variants(
    env: Env, issuer_path: str, metadata: tuple[str, ...]
) -> None:
    auth = env.auth(issuer_path=issuer_path, metadata=metadata)
    env.protect(auth)
    env.connect(env.oauth())
    fetched = [r for r in auth.requests_to("metadata") if r.status == 200]
    assert len(fetched) == 1
    assert auth.metadata_urls[metadata[0]].endswith(fetched[0].path)
    assert authorize_requests(auth)[0]["client_id"].startswith("dcr-")


@pytest.mark.parametrize("metadata", [(), ("oauth",)])
def test_a_2025_03_26_server_without_resource_metadata(env: Env, metadata: tuple[str, ...]) -> None:
    # No PRM: the metadata at the MCP server's origin, else /authorize, /token, /register there.
    # The proxied server's own issuer is not the origin the client knows it by: no iss.
    auth = env.auth(
        metadata=metadata, code_challenge_methods=None, iss_supported=False, redirect_iss="missing"
    )
    # Its metadata, served at the MCP server's origin, names that origin.
    auth.configure(metadata_issuer=env.server.base)
    auth.configure(default_audience=env.server.url)
    env.protect(auth, prm="none", legacy_as=auth.url)
    client = env.connect(env.oauth())
    assert client.call_tool("echo", {"message": "old"}).text == "old"
    [authz] = authorize_requests(auth)
    assert "resource" not in authz  # 2025-03-26 has no RFC 8707
    assert authz["code_challenge_method"] == "S256"
    assert "resource" not in token_forms(auth, "authorization_code")[0]
    assert auth.requests_to("register")  # reached through the MCP server's origin


def test_a_resource_mismatch_is_refused(env: Env) -> None:
    auth = env.auth()
    env.protect(auth, prm_resource="http://127.0.0.1:9/elsewhere")
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert "resource" in error.message
    assert not auth.requests_to("authorize") and not auth.requests_to("register")


@pytest.mark.parametrize(
    ("prm", "suffix"),
    [("root", ""), ("root", "/"), ("challenge", "")],
    ids=["root-origin", "root-origin-slash", "challenge-origin"],
)
def test_a_same_origin_prefix_resource_is_accepted_and_sent_verbatim(
    env: Env, prm: str, suffix: str
) -> None:
    # RFC 9728 with MCP's root fallback: the path-based document is 404 (or the
    # challenge names one) and it claims the bare origin, a prefix of /mcp.
    auth = env.auth()
    claimed = env.server.base + suffix
    env.protect(auth, prm=prm, prm_resource=claimed)
    client = env.connect(env.oauth())
    assert client.call_tool("echo", {"message": "hi"}).text == "hi"
    [authz] = authorize_requests(auth)
    assert authz["resource"] == claimed
    assert token_forms(auth, "authorization_code")[0]["resource"] == claimed
    env.server.revoke()
    assert client.call_tool("echo", {"message": "again"}).text == "again"
    [refresh] = token_forms(auth, "refresh_token")
    assert refresh["resource"] == claimed
    assert len(authorize_requests(auth)) == 1


@pytest.mark.parametrize("prm", ["root", "challenge"])
@pytest.mark.parametrize(
    "claimed",
    ["{base}/mc", "{base}/mcp/sub", "{base}/other", "http://localhost:{port}/"],
    ids=["not-on-a-segment", "longer", "sibling", "other-origin"],
)
def test_a_resource_that_is_not_a_same_origin_prefix_is_refused(
    env: Env, prm: str, claimed: str
) -> None:
    auth = env.auth()
    port = urlsplit(env.server.base).port
    env.protect(auth, prm=prm, prm_resource=claimed.format(base=env.server.base, port=port))
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert "resource mismatch" in error.message
    assert not auth.requests_to("authorize") and not auth.requests_to("register")


def test_an_issuer_mismatch_is_refused(env: Env) -> None:
    auth = env.auth(metadata_issuer="http://127.0.0.1:9/impostor")
    env.protect(auth)
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert "issuer" in error.message
    assert not auth.requests_to("authorize")


@pytest.mark.parametrize("methods", [("plain",), None])
def test_pkce_without_s256_is_refused(env: Env, methods: tuple[str, ...] | None) -> None:
    # Absent at initialize (no version agreed yet) counts as "2025-11-25 or later".
    auth = env.auth(code_challenge_methods=methods)
    env.protect(auth)
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert "PKCE" in error.message
    assert not auth.requests_to("authorize")


# ----------------------------------------------------------------------------- registration


def test_a_pre_registered_client_does_not_register(env: Env) -> None:
    auth = env.auth()
    auth.add_client("app", secret="pre-registered-secret-1")
    env.protect(auth)
    env.connect(env.oauth(client_id="app", client_secret="pre-registered-secret-1"))
    assert not auth.requests_to("register")
    assert authorize_requests(auth)[0]["client_id"] == "app"


def test_a_client_id_metadata_document_is_the_client_id(env: Env) -> None:
    auth = env.auth(cimd=True)
    env.protect(auth)
    url = auth.url + "/clients/app.json"
    auth.host_document(
        "/clients/app.json",
        {
            "client_id": url,
            "client_name": "mcpclient tests",
            "redirect_uris": ["http://127.0.0.1/callback"],
            "token_endpoint_auth_method": "none",
        },
    )
    env.connect(env.oauth(client_metadata_url=url))
    assert not auth.requests_to("register")
    assert authorize_requests(auth)[0]["client_id"] == url
    assert token_forms(auth, "authorization_code")[0]["client_id"] == url


def test_dynamic_registration_is_native_and_kept_per_issuer(env: Env) -> None:
    auth = env.auth(dcr_application_type="native")
    env.protect(auth)
    env.connect(env.oauth(application_type="web"), name="first")
    [registration] = auth.requests_to("register")
    assert registration.json["application_type"] == "native"  # loopback redirect => native
    assert registration.json["redirect_uris"] == ["http://127.0.0.1/callback"]
    # A second provider with the same store reuses the registration and the tokens.
    env.connect(env.oauth(), name="second")
    assert len(auth.requests_to("register")) == 1
    assert len(auth.requests_to("authorize")) == 1
    assert [c.issuer for c in env.store.clients] == [auth.issuer]


def test_no_way_to_register_is_auth_failed(env: Env) -> None:
    auth = env.auth(dcr=False)
    env.protect(auth)
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert "register" in error.message


@pytest.mark.parametrize(
    "method", ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]
)
def test_each_token_endpoint_auth_method(env: Env, method: str) -> None:
    auth = env.auth()
    key, pem = new_key()
    secret = f"secret-for-{method}-0123456789"
    if method == "private_key_jwt":
        auth.add_client("app", auth_method=method, public_key=key)
        provider = env.oauth(client_id="app", client_key=pem)
    elif method == "none":
        auth.add_client("app", auth_method="none")
        provider = env.oauth(client_id="app")
    else:
        auth.add_client("app", secret=secret, auth_method=method)
        provider = env.oauth(
            client_id="app", client_secret=secret, token_endpoint_auth_method=method
        )
    env.protect(auth)
    env.connect(provider)
    [request] = [r for r in auth.requests_to("token") if r.status == 200]
    basic = (request.header("Authorization") or "").lower().startswith("basic ")
    assert basic is (method == "client_secret_basic")
    assert ("client_secret" in request.form) is (method == "client_secret_post")
    assert ("client_assertion" in request.form) is (method == "private_key_jwt")
    if method == "private_key_jwt":
        claims = jwt.decode(request.form["client_assertion"], options={"verify_signature": False})
        assert claims["iss"] == claims["sub"] == "app" and claims["aud"] == auth.issuer


# ----------------------------------------------------------------------------- scopes


def test_scopes_come_from_the_challenge(env: Env) -> None:
    auth = env.auth(scopes_supported=("mcp", "extra"))
    env.protect(auth, scopes=["mcp"], prm_scopes=["mcp", "extra"])
    env.connect(env.oauth())
    assert authorize_requests(auth)[0]["scope"] == "mcp"


def test_without_a_challenge_scope_all_of_scopes_supported(env: Env) -> None:
    # offline_access is listed by the resource but not advertised by the server: left out.
    auth = env.auth(scopes_supported=("a", "b"))
    env.protect(auth, prm_scopes=["a", "b", "offline_access"])
    env.connect(env.oauth())
    assert authorize_requests(auth)[0]["scope"] == "a b"


def test_offline_access_when_advertised(env: Env) -> None:
    auth = env.auth(scopes_supported=("mcp", "offline_access"), refresh_tokens="offline_access")
    env.protect(auth, scopes=["mcp"])
    env.connect(env.oauth())
    assert authorize_requests(auth)[0]["scope"] == "mcp offline_access"
    assert env.store.saved[-1].refresh_token is not None


def test_no_scope_anywhere_omits_it(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    env.connect(env.oauth())
    assert "scope" not in authorize_requests(auth)[0]


def test_step_up_on_insufficient_scope_runs_the_call_once(env: Env) -> None:
    auth = env.auth()
    env.protect(auth, scopes=["mcp"], tool_scopes={"add": ["math"]})
    client = env.connect(env.oauth())
    result = client.call_tool("add", {"a": 2, "b": 3})
    assert '"sum": 5' in result.text or '"sum":5' in result.text
    first, second = authorize_requests(auth)
    assert first["scope"] == "mcp" and second["scope"] == "mcp math"
    calls = [e for e in guard_log(env) if e["tool"] == "add"]
    assert [e["status"] for e in calls] == [403, None]  # rejected, then run exactly once


def test_step_up_stops_after_three_attempts_with_auth_denied(env: Env) -> None:
    auth = env.auth(withheld_scopes=("admin",))
    env.protect(auth, tool_scopes={"add": ["admin"]})
    client = env.connect(env.oauth())
    env.fails(lambda: client.call_tool("add", {"a": 1, "b": 1}), FailureClass.AUTH_DENIED)
    assert len(authorize_requests(auth)) == 1 + 3
    assert not [e for e in guard_log(env) if e["tool"] == "add" and e["status"] is None]
    # The binding itself is fine: other tools still work.
    assert client.call_tool("echo", {"message": "ok"}).text == "ok"


def test_step_up_for_the_scopes_first_requested_asks_three_times_in_all(env: Env) -> None:
    # The 401 challenges "admin", the token never carries it, every request is
    # then 403 insufficient_scope for "admin": one scope set, whose first
    # authorization counts toward the limit.
    auth = env.auth(withheld_scopes=("admin",))
    env.protect(auth, scopes=["admin"])
    error = env.connect_fails(env.oauth(), FailureClass.AUTH_DENIED)
    assert [r.get("scope") for r in authorize_requests(auth)] == ["admin"] * MAX_STEP_UPS
    assert "step-up" in error.message
    assert [e["status"] for e in guard_log(env)] == [401] + [403] * MAX_STEP_UPS


# ----------------------------------------------------------------------------- refresh


def test_a_401_with_an_unexpired_token_refreshes_first(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    client = env.connect(env.oauth())
    old = env.store.saved[-1]
    assert not old.expired()
    env.server.revoke()
    assert client.call_tool("echo", {"message": "again"}).text == "again"
    assert len(authorize_requests(auth)) == 1  # no new authorization
    [refresh] = token_forms(auth, "refresh_token")
    assert refresh["refresh_token"] == old.refresh_token
    assert refresh["resource"] == env.server.url and "scope" not in refresh


@pytest.mark.parametrize("rotation", [True, False])
def test_refresh_token_rotation_is_honored(env: Env, rotation: bool) -> None:
    # Tokens inside the 30 s expiry margin: every 401 refreshes (no futility rule).
    auth = env.auth(token_lifetime=20, refresh_rotation=rotation)
    env.protect(auth)
    client = env.connect(env.oauth())
    first = env.store.saved[-1].refresh_token
    for message in ("two", "three"):
        env.server.revoke()
        assert client.call_tool("echo", {"message": message}).text == message
    used = [f["refresh_token"] for f in token_forms(auth, "refresh_token")]
    second = env.store.saved[1].refresh_token
    assert used == ([first, second] if rotation else [first, first])
    assert (second != first) is rotation
    assert len(authorize_requests(auth)) == 1


def test_a_token_rejected_right_after_its_refresh_means_a_new_authorization(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    client = env.connect(env.oauth())
    # The server stops accepting this authorization server's tokens altogether.
    env.server.control(secret=(b"another-secret" * 3).hex())
    env.fails(lambda: client.call_tool("echo", {"message": "x"}), FailureClass.AUTH_REQUIRED)
    grants = [
        "authorize" if r.endpoint == "authorize" else r.form.get("grant_type")
        for r in auth.requests
        if r.endpoint in ("authorize", "token") and r.status in (200, 302)
    ]
    grants = [g for g in grants if g != "authorization_code"]
    assert grants[:3] == ["authorize", "refresh_token", "authorize"]
    assert all(a != b for a, b in itertools.pairwise(grants))  # never two refreshes


def test_a_refused_refresh_falls_back_to_a_new_authorization(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    client = env.connect(env.oauth())
    env.server.revoke()
    auth.revoke_refresh_tokens()
    assert client.call_tool("echo", {"message": "x"}).text == "x"
    assert len(authorize_requests(auth)) == 2
    refused = [r for r in auth.requests_to("token") if r.form.get("grant_type") == "refresh_token"]
    assert [r.error for r in refused] == ["invalid_grant"]


def test_a_tools_call_rejected_with_401_is_sent_again_and_runs_once(env: Env) -> None:
    auth = env.auth(refresh_tokens="never")
    env.protect(auth)
    client = env.connect(env.oauth())
    env.server.revoke()
    assert client.call_tool("echo", {"message": "once"}).text == "once"
    calls = [e for e in guard_log(env) if e["tool"] == "echo"]
    assert [e["status"] for e in calls] == [401, None]
    assert len(authorize_requests(auth)) == 2


def test_stored_tokens_are_reused_across_providers(env: Env, tmp_path: Path) -> None:
    auth = env.auth()
    env.protect(auth)
    store = FileTokenStore(tmp_path / "tokens")
    env.connect(env.oauth(store=store), name="first")
    env.connect(env.oauth(store=store), name="second")
    assert len(authorize_requests(auth)) == 1


# ----------------------------------------------------------------------------- iss (RFC 9207)


@pytest.mark.parametrize(
    ("iss_supported", "redirect_iss", "ok"),
    [
        (True, "correct", True),
        (False, "missing", True),
        (True, "missing", False),
        (True, "wrong", False),
        (False, "wrong", False),
        (True, "trailing-slash", False),
        (True, "case", False),
    ],
)
def test_the_iss_of_the_authorization_response(
    env: Env, iss_supported: bool, redirect_iss: str, ok: bool
) -> None:
    auth = env.auth(iss_supported=iss_supported, redirect_iss=redirect_iss)
    env.protect(auth)
    if ok:
        env.connect(env.oauth())
        return
    env.connect_fails(env.oauth(), FailureClass.AUTH_FAILED)
    assert not auth.requests_to("token")  # the code is never redeemed


def test_a_denied_authorization_is_auth_denied(env: Env) -> None:
    auth = env.auth(deny=True)
    env.protect(auth)
    env.connect_fails(env.oauth(), FailureClass.AUTH_DENIED)


# ----------------------------------------------------------------------------- AS migration


def test_a_new_authorization_server_never_gets_the_old_client_or_tokens(env: Env) -> None:
    old = env.auth()
    new = env.auth()
    env.protect(old)
    client = env.connect(env.oauth())
    old_client = env.store.clients[0]
    old_tokens = env.store.saved[-1]
    old.clear_requests()
    env.protect(new)  # the server now trusts (and lists) another authorization server
    assert client.call_tool("echo", {"message": "moved"}).text == "moved"
    assert not old.requests_to("token")  # no refresh attempted at the old server
    [registration] = new.requests_to("register")
    assert registration.json is not None
    new_client = env.store.clients[-1]
    assert new_client.issuer == new.issuer and new_client.client_id != old_client.client_id
    for request in new.requests:
        text = repr(dict(request.form)) + repr(dict(request.query)) + repr(request.headers)
        assert old_client.client_id not in text
        assert old_tokens.access_token not in text
        assert old_tokens.refresh_token is not None and old_tokens.refresh_token not in text


PRE_SECRET = "pre-registered-secret-bound-to-its-issuer"


def _carries(request: Any, *needles: str) -> bool:
    text = repr(dict(request.form)) + repr(dict(request.query)) + repr(request.headers)
    basic = request.header("Authorization") or ""
    if basic.lower().startswith("basic "):
        text += base64.b64decode(basic.split(" ", 1)[1]).decode(errors="replace")
    if request.json is not None:
        text += repr(request.json)
    return any(needle in text for needle in needles)


@pytest.mark.parametrize("new_as", ["dcr", "nothing"])
def test_a_pre_registered_secret_never_goes_to_another_authorization_server(
    env: Env, new_as: str
) -> None:
    # Issue 27 item 2: the configured client is bound to the first issuer it
    # was used with; when the server names another one, that one gets a
    # dynamic registration, or an auth_failed naming the mismatch.
    old = env.auth(dcr=False)
    old.add_client("app", secret=PRE_SECRET)
    new = env.auth(dcr=new_as == "dcr")
    env.protect(old)
    client = env.connect(env.oauth(client_id="app", client_secret=PRE_SECRET))
    assert [r.form.get("grant_type") for r in old.requests_to("token")] == ["authorization_code"]
    env.protect(new)  # the server moved: its metadata names the new issuer
    if new_as == "dcr":
        assert client.call_tool("echo", {"message": "moved"}).text == "moved"
        [registration] = new.requests_to("register")
        assert registration.json is not None and "client_id" not in registration.json
    else:
        error = env.fails(
            lambda: client.call_tool("echo", {"message": "moved"}), FailureClass.AUTH_FAILED
        )
        assert old.issuer in error.message and new.issuer in error.message
        assert "not sent" in error.message
        assert PRE_SECRET not in str(error) and PRE_SECRET not in repr(error)
        assert not new.requests_to("token")
    for request in new.requests:
        assert not _carries(request, PRE_SECRET, "app:"), request


def test_the_first_issuer_is_recorded_in_the_token_store(env: Env, tmp_path: Path) -> None:
    old = env.auth(dcr=False)
    old.add_client("app", secret=PRE_SECRET)
    new = env.auth(dcr=False)
    new.add_client("app", secret=PRE_SECRET)  # even a server that would accept it
    env.protect(old)
    store = FileTokenStore(tmp_path / "tokens")
    env.connect(env.oauth(client_id="app", client_secret=PRE_SECRET, store=store), name="first")
    assert store.load_issuer_binding("app") == old.issuer
    env.protect(new)
    # Another process (a new provider), the same store: the binding holds.
    provider = env.oauth(client_id="app", client_secret=PRE_SECRET, store=store)
    error = env.connect_fails(provider, FailureClass.AUTH_FAILED)
    assert old.issuer in error.message and new.issuer in error.message
    assert not new.requests_to("token")
    for request in new.requests:
        assert not _carries(request, PRE_SECRET), request


def test_a_configured_issuer_binds_the_client_from_the_start(env: Env) -> None:
    auth = env.auth(dcr=False)
    auth.add_client("app", secret=PRE_SECRET)
    env.protect(auth)
    provider = env.oauth(client_id="app", client_secret=PRE_SECRET, issuer="https://as.example.com")
    error = env.connect_fails(provider, FailureClass.AUTH_FAILED)
    assert "https://as.example.com" in error.message and auth.issuer in error.message
    assert not auth.requests_to("token")
    # The right issuer configured: the client is used as before.
    provider = env.oauth(client_id="app", client_secret=PRE_SECRET, issuer=auth.issuer)
    env.connect(provider, name="right")
    assert len(auth.requests_to("token")) == 1


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_the_connection_that_got_the_401_is_closed_on_close(env: Env) -> None:
    # Issue 27 item 12: 30 connect/close cycles with OAuth leave no socket
    # behind. The one left was the provider's keep-alive connection to the MCP
    # server's origin (the metadata fetch after its 401), open until GC.
    auth = env.auth()
    env.protect(auth)
    gc.disable()  # what close() leaves open must not be collected for us
    try:
        for cycle in range(31):
            client = env.connect(env.oauth(), name=f"fd{cycle}")
            client.close()
            env.clients.remove(client)
            if cycle == 0:
                before = _open_fds()  # after the first: imports, caches, the store
        after = _open_fds()
    finally:
        gc.enable()
    assert after - before <= 3, (before, after)


# ----------------------------------------------------------------------------- other grants


@pytest.mark.parametrize("credential", ["secret", "private_key_jwt"])
def test_client_credentials(env: Env, credential: str) -> None:
    auth = env.auth(scopes_supported=("mcp",))
    key, pem = new_key()
    if credential == "secret":
        auth.add_client("svc", secret="service-secret-0123456789")
        provider = env.oauth(
            grant=ClientCredentialsGrant(),
            client_id="svc",
            client_secret="service-secret-0123456789",
        )
    else:
        auth.add_client("svc", public_key=key)
        provider = env.oauth(grant=ClientCredentialsGrant(), client_id="svc", client_key=pem)
    env.protect(auth, scopes=["mcp"])
    client = env.connect(provider)
    assert client.call_tool("echo", {"message": "m2m"}).text == "m2m"
    [form] = token_forms(auth)
    assert form["grant_type"] == "client_credentials"
    assert form["scope"] == "mcp" and form["resource"] == env.server.url
    assert not auth.requests_to("authorize") and not auth.requests_to("register")


def test_jwt_bearer_with_a_workload_assertion(env: Env) -> None:
    auth = env.auth()
    workload_key, _ = new_key()
    auth.trust_assertion_issuer("https://workload.example", workload_key)
    auth.add_client("workload", auth_method="none")
    made: list[str] = []

    def assertion() -> str:
        now = int(time.time())
        claims = {
            "iss": "https://workload.example",
            "sub": "spiffe://example/workload",
            "aud": auth.issuer,
            "iat": now,
            "exp": now + 60,
            "jti": f"jti-{len(made)}-{now}",
        }
        made.append(jwt.encode(claims, workload_key, algorithm="ES256"))
        return made[-1]

    env.protect(auth)
    client = env.connect(env.oauth(grant=JWTBearerGrant(assertion), client_id="workload"))
    assert client.call_tool("echo", {"message": "wif"}).text == "wif"
    [form] = token_forms(auth)
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert form["assertion"] == made[0]
    assert form["client_id"] == "workload"  # a client identity is presented as before


class Workload:
    """A workload identity: an issuer the authorization server trusts, minting assertions."""

    ISSUER = "https://workload.example"

    def __init__(self, env: Env, auth: AuthServer, *, trusted: bool = True) -> None:
        self.key, pem = new_key()
        env.ledger.secret("private_key", pem)
        self.audience = auth.issuer
        self.made: list[str] = []
        if trusted:
            auth.trust_assertion_issuer(self.ISSUER, self.key)

    def __call__(self) -> str:
        now = int(time.time())
        claims = {
            "iss": self.ISSUER,
            "sub": "spiffe://example/anonymous-workload",
            "aud": self.audience,
            "iat": now,
            "exp": now + 60,
            "jti": f"wif-{len(self.made)}-{now}",
        }
        self.made.append(jwt.encode(claims, self.key, algorithm="ES256"))
        return self.made[-1]


@pytest.mark.parametrize("dpop", [False, True])
def test_jwt_bearer_as_an_anonymous_workload(env: Env, dpop: bool) -> None:
    # Workload identity federation (SEP-1933): no client_id, no registration,
    # no client authentication; resource, scope and DPoP as for any grant.
    knobs: dict[str, Any] = {"dpop": "required", "dpop_nonce": True} if dpop else {}
    auth = env.auth(anonymous_jwt_bearer=True, scopes_supported=("mcp",), **knobs)
    workload = Workload(env, auth)
    env.protect(auth, scopes=["mcp"], dpop=dpop, dpop_nonce=dpop)
    provider = env.oauth(grant=JWTBearerGrant(workload), dpop=dpop)
    client = env.connect(provider)
    assert client.call_tool("echo", {"message": "wif"}).text == "wif"
    [form] = token_forms(auth)
    assert form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "assertion": workload.made[0],
        "scope": "mcp",
        "resource": env.server.url,
    }
    sent = auth.requests_to("token")
    assert not [r for r in sent if r.header("Authorization")]
    assert all(r.header("DPoP") for r in sent) is dpop
    assert not auth.requests_to("register") and not auth.requests_to("authorize")
    assert env.store.clients == [] and auth.clients() == {}  # nothing registered
    stored = env.store.load_tokens(auth.issuer, env.server.url)  # kept per issuer and resource
    assert stored is not None and stored.token_type == ("DPoP" if dpop else "Bearer")


@pytest.mark.parametrize(
    ("error", "failure_class"),
    [("invalid_grant", FailureClass.AUTH_EXPIRED), ("invalid_scope", FailureClass.AUTH_FAILED)],
)
def test_a_refused_workload_assertion_is_surfaced_without_retry_or_fallback(
    env: Env, error: str, failure_class: FailureClass
) -> None:
    auth = env.auth(anonymous_jwt_bearer=True)
    # invalid_grant: an issuer the server does not trust; invalid_scope: forced.
    workload = Workload(env, auth, trusted=error != "invalid_grant")
    if error == "invalid_scope":
        auth.configure(token_error="invalid_scope")
    env.protect(auth)
    failed = env.connect_fails(env.oauth(grant=JWTBearerGrant(workload)), failure_class)
    assert error in failed.message
    [refused] = auth.requests_to("token")  # exactly one request: no retry
    assert refused.error == error and refused.form["assertion"] == workload.made[0]
    assert len(workload.made) == 1
    # No other grant: nothing registered, no browser step, no other grant type.
    assert not auth.requests_to("register") and not auth.requests_to("authorize")


def test_an_anonymous_workload_refused_by_the_server_is_auth_denied(env: Env) -> None:
    auth = env.auth()  # anonymous_jwt_bearer off: client authentication is required
    workload = Workload(env, auth)
    env.protect(auth)
    env.connect_fails(env.oauth(grant=JWTBearerGrant(workload)), FailureClass.AUTH_DENIED)
    [refused] = auth.requests_to("token")
    assert refused.error == "invalid_client" and "client_id" not in refused.form
    assert not auth.requests_to("register")


def test_token_exchange_id_token_to_id_jag_to_access_token(env: Env) -> None:
    idp = env.auth(idp=True, jag_client_id="mcp-app")
    idp.add_client("idp-app", secret="idp-client-secret-0123456789")
    auth = env.auth()
    auth.trust_idp(idp)
    auth.add_client("mcp-app", secret="mcp-client-secret-0123456789")
    env.protect(auth)
    grant = TokenExchangeGrant(
        idp.token_endpoint,
        lambda: idp.issue_id_token(audience="idp-app"),
        idp_client_id="idp-app",
        idp_client_secret="idp-client-secret-0123456789",
    )
    env.ledger.secret("client_secret", "idp-client-secret-0123456789")
    provider = env.oauth(
        grant=grant, client_id="mcp-app", client_secret="mcp-client-secret-0123456789"
    )
    client = env.connect(provider)
    assert client.call_tool("echo", {"message": "ema"}).text == "ema"
    [exchange] = token_forms(idp)
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["audience"] == auth.issuer and exchange["resource"] == env.server.url
    [bearer] = token_forms(auth)
    assert bearer["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header = jwt.get_unverified_header(bearer["assertion"])
    assert header["typ"] == "oauth-id-jag+jwt"


def test_dpop_with_nonces_from_both_servers(env: Env) -> None:
    auth = env.auth(dpop="required", dpop_nonce=True)
    env.protect(auth, dpop=True, dpop_nonce=True)
    client = env.connect(env.oauth(dpop=True))
    assert env.store.saved[-1].token_type == "DPoP"
    errors = [r.error for r in auth.requests_to("token")]
    assert errors[0] == "use_dpop_nonce" and errors[-1] is None
    token_proofs = [r.header("DPoP") for r in auth.requests_to("token")]
    assert all(token_proofs)
    log = guard_log(env)
    assert any(e["status"] == 401 and "nonce" in (e.get("reason") or "") for e in log)
    assert log[-1]["scheme"] == "dpop" and log[-1]["status"] is None
    # The resource server rotates its nonce: the next call takes the new one.
    env.server.control(rotate_dpop_nonce=True)
    assert client.call_tool("echo", {"message": "bound"}).text == "bound"
    assert len(authorize_requests(auth)) == 1


# ----------------------------------------------------------------------------- browser step


def test_the_loopback_listener_receives_the_redirect(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    browsed: list[str] = []
    done = threading.Event()

    def browser(url: str) -> None:
        # A browser on its own thread: follow the AS redirect to the listener.
        def visit() -> None:
            try:
                location = follow(url)
                browsed.append(location)
                parts = urlsplit(location)
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
                try:
                    conn.request("GET", f"{parts.path}?{parts.query}")
                    conn.getresponse().read()
                finally:
                    conn.close()
            finally:
                done.set()

        threading.Thread(target=visit, name="test-browser", daemon=True).start()

    client = env.connect(env.oauth(grant=AuthorizationCodeGrant(open_browser=browser)))
    assert done.wait(TIMEOUT)
    assert client.status().state is State.READY
    redirect_uri = authorize_requests(auth)[0]["redirect_uri"]
    assert redirect_uri.startswith("http://127.0.0.1:") and redirect_uri.endswith("/callback")
    assert browsed[0].startswith(redirect_uri)


def test_status_is_authenticating_while_a_flow_runs(env: Env) -> None:
    auth = env.auth()
    env.protect(auth, tool_scopes={"add": ["math"]})
    seen: list[State] = []
    holder: list[mcpclient.Client] = []

    def redirect(url: str) -> str:
        if holder:
            seen.append(holder[0].status().state)
        return follow(url)

    client = env.connect(env.oauth(grant=AuthorizationCodeGrant(redirect=redirect)))
    states = [e.to_state for e in env.events if isinstance(e, mcpclient.StateChanged)]
    assert State.AUTHENTICATING in states[: states.index(State.READY)]
    holder.append(client)
    client.call_tool("add", {"a": 1, "b": 2})  # a step-up at run time
    assert seen == [State.AUTHENTICATING]
    assert client.status().state is State.READY


def test_time_with_a_person_does_not_count_against_startup(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)

    def slow_person(url: str) -> str:
        time.sleep(1.5)  # longer than the whole startup budget below
        return follow(url)

    provider = env.oauth(grant=AuthorizationCodeGrant(redirect=slow_person))
    client = env.connect(provider, timeouts=mcpclient.Timeouts(startup=1.0))
    assert client.status().state is State.READY


def test_a_person_who_never_comes_back_ends_the_flow_at_timeouts_auth(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    opened: list[str] = []
    provider = env.oauth(grant=AuthorizationCodeGrant(open_browser=opened.append))
    started = time.monotonic()
    error = env.fails(
        lambda: env.connect(provider, timeouts=mcpclient.Timeouts(startup=5.0, auth=0.5)),
        FailureClass.AUTH_REQUIRED,
    )
    assert time.monotonic() - started < 4.0
    assert len(opened) == 1 and not auth.requests_to("authorize")
    assert "not completed in time" in error.message


def test_cancelling_connect_ends_a_waiting_flow(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)
    cancel = mcpclient.CancelToken()
    provider = env.oauth(grant=AuthorizationCodeGrant(open_browser=lambda url: cancel.cancel()))
    transport = mcpclient.StreamableHTTPTransport(env.server.url, auth=provider)
    # A short auth budget ends the flow anyway before the leak guard looks.
    definition = mcpclient.Definition(
        "prot", transport, timeouts=mcpclient.Timeouts(startup=5.0, auth=2.0)
    )
    started = time.monotonic()
    with pytest.raises(mcpclient.Error) as info:
        mcpclient.connect(definition, cancel=cancel)
    env.ledger.show(info.value)
    assert info.value.failure_class is FailureClass.CANCELLED
    assert time.monotonic() - started < 1.5
    flows = [t for t in threading.enumerate() if t.name.startswith("mcpclient-auth-")]
    for thread in flows:
        thread.join(1.0)
    assert not [t.name for t in flows if t.is_alive()]


def test_cancelling_connect_cuts_a_stalled_oauth_exchange(env: Env) -> None:
    # The authorization server accepts the connection and never answers: the
    # flow is inside an exchange bounded only by its own 30 s. Cancelling the
    # connect must end the flow now (the provider's interrupt), not then.
    auth = env.auth()
    env.protect(auth)
    with socket.socket() as tarpit:
        tarpit.bind(("127.0.0.1", 0))
        tarpit.listen(8)
        port = tarpit.getsockname()[1]
        env.server.control(issuer=f"http://127.0.0.1:{port}")
        cancel = mcpclient.CancelToken()
        provider = env.oauth()
        transport = mcpclient.StreamableHTTPTransport(env.server.url, auth=provider)
        definition = mcpclient.Definition("prot", transport)
        timer = threading.Timer(0.5, cancel.cancel)
        timer.start()
        started = time.monotonic()
        try:
            with pytest.raises(mcpclient.Error) as info:
                mcpclient.connect(definition, cancel=cancel)
        finally:
            timer.cancel()
        assert info.value.failure_class is FailureClass.CANCELLED
        flows = [t for t in threading.enumerate() if t.name.startswith("mcpclient-auth-")]
        assert not [t.name for t in flows if t.is_alive()], "the flow outlived the connect"
        assert time.monotonic() - started < 3.0


def test_a_failing_redirect_callable_is_classified(env: Env) -> None:
    auth = env.auth()
    env.protect(auth)

    def broken(url: str) -> str:
        raise RuntimeError("the person closed the window")

    provider = env.oauth(grant=AuthorizationCodeGrant(redirect=broken))
    error = env.connect_fails(provider, FailureClass.AUTH_FAILED)
    assert "RuntimeError" in error.message


@pytest.mark.parametrize("person", ["slow", "never"])
def test_connect_is_bounded_by_timeouts_auth_while_the_redirect_callable_runs(
    env: Env, person: str
) -> None:
    # Issue 27 item 4: a headless redirect callable that takes longer than
    # Timeouts.auth (or never returns) is abandoned at the deadline, and the
    # message says the authorization step did not finish, not that a token
    # endpoint timed out.
    auth = env.auth()
    env.protect(auth)
    release = threading.Event()
    entered = threading.Event()

    def stuck(url: str) -> str:
        entered.set()
        release.wait(20.0 if person == "slow" else None)
        return follow(url)

    provider = env.oauth(grant=AuthorizationCodeGrant(redirect=stuck))
    started = time.monotonic()
    try:
        error = env.fails(
            lambda: env.connect(provider, timeouts=mcpclient.Timeouts(startup=5.0, auth=1.0)),
            FailureClass.AUTH_REQUIRED,
        )
        elapsed = time.monotonic() - started
    finally:
        release.set()  # the abandoned callable may end now (the leak guard looks next)
    assert entered.is_set()
    assert elapsed < 4.0, elapsed
    assert "AuthorizationCodeGrant.redirect" in error.message
    assert "did not finish" in error.message
    assert "token endpoint" not in error.message
    assert not auth.requests_to("token")
    for thread in threading.enumerate():
        if thread.name.startswith("mcpclient-auth"):
            thread.join(2.0)


# ----------------------------------------------------------------------------- the scan


def test_zz_the_secret_scan_met_every_kind_of_secret(request: pytest.FixtureRequest) -> None:
    """Every test above was scanned; here: the scans met each kind of secret."""
    module = request.node.module
    selected = {item.name for item in request.session.items if item.module is module}
    everything = {
        name for name in dir(module) if name.startswith("test_") and name != request.node.name
    }
    ran = {name.split("[")[0] for name in selected}
    if not everything <= ran:
        pytest.skip("the secret-kind check needs the whole module to run")
    assert EXPECTED_KINDS <= KINDS_SEEN, sorted(EXPECTED_KINDS - KINDS_SEEN)
    assert sum(SCANNED) > 500
