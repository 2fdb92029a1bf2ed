"""mcpclient.auth.registration: each way of obtaining a client, and per-issuer isolation.

Dynamic registration goes to a real loopback registration endpoint
(tests/support/scripted_http.py) that records what it received.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from mcpclient.auth._jose import SigningKey
from mcpclient.auth._net import SafeHTTP, URLPolicy
from mcpclient.auth.discovery import ServerMetadata
from mcpclient.auth.grants import ClientSettings
from mcpclient.auth.registration import obtain_client
from mcpclient.auth.tokens import ClientInfo, MemoryTokenStore
from mcpclient.errors import AuthError, FailureClass
from tests.support import soon
from tests.support.scripted_http import Answer, Recorded, RouteServer, json_answer

LOOPBACK = URLPolicy(allow_loopback=True)
REDIRECTS = ("http://127.0.0.1:33333/callback",)
SECRET = "s3cr3t-registration-value"


def meta_for(issuer: str, **changes: Any) -> ServerMetadata:
    base = ServerMetadata(
        issuer=issuer,
        authorization_endpoint=issuer + "/authorize",
        token_endpoint=issuer + "/token",
        registration_endpoint=issuer + "/register",
        code_challenge_methods_supported=("S256",),
    )
    return attrs.evolve(base, **changes)


@pytest.fixture
def server() -> Iterator[RouteServer]:
    with RouteServer() as peer:
        yield peer


def registrar(server: RouteServer, reply: Answer | None = None, path: str = "/register") -> None:
    counter = iter(range(1, 1000))

    def register(request: Recorded) -> Answer:
        if reply is not None:
            return reply
        return json_answer({"client_id": f"dyn-{next(counter)}"}, status=201)

    server.routes[path] = register


def obtain(
    meta: ServerMetadata,
    settings: ClientSettings | None = None,
    store: MemoryTokenStore | None = None,
    redirect_uris: tuple[str, ...] = REDIRECTS,
    **kw: Any,
) -> ClientInfo:
    return obtain_client(
        meta,
        settings or ClientSettings(),
        store if store is not None else MemoryTokenStore(),
        redirect_uris,
        SafeHTTP(LOOPBACK),
        deadline=soon(),
        **kw,
    )


def failure(excinfo: pytest.ExceptionInfo[AuthError]) -> str:
    assert excinfo.value.failure_class is FailureClass.AUTH_FAILED
    return excinfo.value.message


# --- 1. pre-registered ---


@pytest.mark.parametrize(
    ("settings", "supported", "method"),
    [
        (ClientSettings(client_id="cid"), (), "none"),
        (ClientSettings(client_id="cid", client_secret=SECRET), (), "client_secret_basic"),
        (
            ClientSettings(client_id="cid", client_secret=SECRET),
            ("client_secret_post", "none"),
            "client_secret_post",
        ),
        (
            ClientSettings(client_id="cid", client_secret=SECRET),
            ("client_secret_basic", "client_secret_post"),
            "client_secret_basic",
        ),
        (
            ClientSettings(
                client_id="cid",
                client_secret=SECRET,
                token_endpoint_auth_method="client_secret_post",
            ),
            (),
            "client_secret_post",
        ),
    ],
)
def test_a_pre_registered_client_comes_first(
    server: RouteServer, settings: ClientSettings, supported: tuple[str, ...], method: str
) -> None:
    registrar(server)
    store = MemoryTokenStore()
    meta = meta_for(
        server.url,
        token_endpoint_auth_methods_supported=supported,
        client_id_metadata_document_supported=True,
    )
    client = obtain(
        meta, attrs.evolve(settings, client_metadata_url="https://app.example/c"), store
    )
    assert (client.client_id, client.auth_method, client.issuer) == ("cid", method, server.url)
    assert client.client_secret == settings.client_secret
    assert server.requests == [] and store.load_client(server.url) is None
    assert SECRET not in repr(client)


def test_a_pre_registered_client_with_a_key_uses_private_key_jwt(server: RouteServer) -> None:
    settings = ClientSettings(client_id="cid", client_key=SigningKey.generate_dpop())
    client = obtain(meta_for(server.url), settings)
    assert (client.auth_method, client.client_secret) == ("private_key_jwt", None)


def test_a_client_bound_to_another_issuer_is_never_presented(server: RouteServer) -> None:
    # Issue 27 item 2: the metadata document comes next (the configured id and
    # secret are not shown to this issuer).
    settings = ClientSettings(
        client_id="cid",
        client_secret="configured-secret-0123456789",
        client_metadata_url="https://app.example/c",
    )
    meta = meta_for(
        server.url, client_id_metadata_document_supported=True, registration_endpoint=None
    )
    client = obtain(meta, settings, bound_issuer="https://as.example")
    assert client.client_id == "https://app.example/c" and client.client_secret is None
    assert client.issuer == server.url
    same = obtain(meta, settings, bound_issuer=server.url)
    assert same.client_id == "cid"  # at its own issuer it is used


def test_a_bound_client_with_no_way_to_register_names_both_issuers(server: RouteServer) -> None:
    settings = ClientSettings(client_id="cid", client_secret="configured-secret-0123456789")
    with pytest.raises(AuthError) as excinfo:
        obtain(
            meta_for(server.url, registration_endpoint=None),
            settings,
            bound_issuer="https://as.example",
        )
    message = failure(excinfo)
    assert "https://as.example" in message and server.url in message
    assert "configured-secret" not in message and "cid" not in message
    assert server.paths() == []


def test_a_method_that_needs_a_missing_secret_is_refused(server: RouteServer) -> None:
    settings = ClientSettings(client_id="cid", token_endpoint_auth_method="client_secret_basic")
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url), settings)
    assert "configured client" in failure(excinfo)


def test_an_unknown_method_is_refused(server: RouteServer) -> None:
    settings = ClientSettings(client_id="cid", token_endpoint_auth_method="tls_client_auth")
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url), settings)
    assert "does not implement" in failure(excinfo)


# --- 2. client ID metadata document ---


def test_a_metadata_document_url_is_the_client_id_where_supported(server: RouteServer) -> None:
    registrar(server)
    settings = ClientSettings(client_metadata_url="https://app.example.com/oauth/client.json")
    client = obtain(meta_for(server.url, client_id_metadata_document_supported=True), settings)
    assert client.client_id == "https://app.example.com/oauth/client.json"
    assert (client.auth_method, client.client_secret, client.issuer) == ("none", None, server.url)
    assert server.requests == []
    keyed = attrs.evolve(settings, client_key=SigningKey.generate_dpop())
    client = obtain(meta_for(server.url, client_id_metadata_document_supported=True), keyed)
    assert client.auth_method == "private_key_jwt"


def test_without_server_support_the_document_is_skipped(server: RouteServer) -> None:
    registrar(server)
    settings = ClientSettings(client_metadata_url="https://app.example.com/oauth/client.json")
    client = obtain(meta_for(server.url), settings)
    assert client.client_id == "dyn-1"
    assert server.paths() == ["/register"]


@pytest.mark.parametrize(
    "url",
    [
        "https://app.example.com",
        "https://app.example.com/",
        "http://app.example.com/client.json",
        "https://app.example.com/client.json#x",
        "https://user@app.example.com/client.json",
    ],
)
def test_an_unusable_metadata_document_url_is_refused(server: RouteServer, url: str) -> None:
    settings = ClientSettings(client_metadata_url=url)
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url, client_id_metadata_document_supported=True), settings)
    assert "client ID metadata document" in failure(excinfo)


# --- 3. stored registration ---


def test_a_registration_stored_for_this_issuer_is_reused(server: RouteServer) -> None:
    registrar(server)
    store = MemoryTokenStore()
    first = obtain(meta_for(server.url), store=store)
    second = obtain(meta_for(server.url), store=store)
    assert first == second and first.client_id == "dyn-1"
    assert server.paths() == ["/register"]
    assert store.load_client(server.url) == first


DEVICE_GRANTS = ("urn:ietf:params:oauth:grant-type:device_code", "refresh_token")
CODE_GRANTS = ("authorization_code", "refresh_token")


def test_a_registration_records_its_grant_types(server: RouteServer) -> None:
    registrar(server)
    store = MemoryTokenStore()
    client = obtain(meta_for(server.url), ClientSettings(grant_types=DEVICE_GRANTS), store, ())
    assert client.grant_types == DEVICE_GRANTS  # the reply named none: what was asked
    assert server.requests[0].json()["grant_types"] == list(DEVICE_GRANTS)
    assert store.load_client(server.url) == client


def test_the_grant_types_the_server_registered_are_recorded(server: RouteServer) -> None:
    # RFC 7591 §3.2.1: the server may register other values than those asked.
    registrar(server, json_answer({"client_id": "c", "grant_types": ["authorization_code", 7]}))
    client = obtain(meta_for(server.url))
    assert client.grant_types == ("authorization_code",)


@pytest.mark.parametrize(
    ("first", "then", "registrations"),
    [
        (CODE_GRANTS, CODE_GRANTS, 1),
        (DEVICE_GRANTS, DEVICE_GRANTS, 1),
        # Each flow needs a client registered for its own grant.
        (CODE_GRANTS, DEVICE_GRANTS, 2),
        (DEVICE_GRANTS, CODE_GRANTS, 2),
    ],
)
def test_a_stored_registration_is_reused_only_for_its_grant(
    server: RouteServer,
    first: tuple[str, ...],
    then: tuple[str, ...],
    registrations: int,
) -> None:
    registrar(server)
    store = MemoryTokenStore()
    old = obtain(meta_for(server.url), ClientSettings(grant_types=first), store)
    new = obtain(meta_for(server.url), ClientSettings(grant_types=then), store)
    assert server.paths() == ["/register"] * registrations
    assert (new == old) is (registrations == 1)
    assert new.grant_types == then and store.load_client(server.url) == new


def test_a_registration_stored_without_grant_types_serves_the_code_grant(
    server: RouteServer,
) -> None:
    # What a store holds from before grant types were recorded: a code-flow client.
    registrar(server)
    store = MemoryTokenStore()
    store.save_client(ClientInfo("old-client", issuer=server.url))
    assert obtain(meta_for(server.url), store=store).client_id == "old-client"
    assert server.paths() == []
    device = obtain(meta_for(server.url), ClientSettings(grant_types=DEVICE_GRANTS), store)
    assert device.client_id == "dyn-1" and server.paths() == ["/register"]


def test_another_issuers_registration_is_never_reused() -> None:
    with RouteServer() as first_as, RouteServer() as second_as:
        registrar(first_as)
        second_as.routes["/register"] = json_answer({"client_id": "second-client"}, status=201)
        store = MemoryTokenStore()
        old = obtain(meta_for(first_as.url), store=store)
        # The MCP server moved to another authorization server: a new registration.
        new = obtain(meta_for(second_as.url), store=store)
        assert (old.client_id, new.client_id) == ("dyn-1", "second-client")
        assert new.issuer == second_as.url
        assert second_as.paths() == ["/register"]
        assert store.load_client(first_as.url) == old
        assert store.load_client(second_as.url) == new


def test_a_store_answering_with_another_issuers_client_is_not_trusted(
    server: RouteServer,
) -> None:
    registrar(server)

    class ConfusedStore(MemoryTokenStore):
        def load_client(self, issuer: str) -> ClientInfo | None:
            return ClientInfo("foreign", issuer="https://other-as.example")

    client = obtain(meta_for(server.url), store=ConfusedStore())
    assert client.client_id == "dyn-1" and client.issuer == server.url


def test_a_path_issuer_and_its_origin_are_different_issuers(server: RouteServer) -> None:
    registrar(server, path="/t1/register")
    store = MemoryTokenStore()
    store.save_client(ClientInfo("origin-client", issuer=server.url))
    meta = meta_for(server.url + "/t1")
    client = obtain(meta, store=store)
    assert client.client_id == "dyn-1" and client.issuer == server.url + "/t1"


# --- 4. dynamic registration ---


def test_the_registration_request(server: RouteServer) -> None:
    registrar(server)
    client = obtain(meta_for(server.url), ClientSettings(client_name="My App"), scopes=("a", "b"))
    assert (client.client_id, client.auth_method, client.client_secret) == ("dyn-1", "none", None)
    [request] = server.requests
    assert request.method == "POST" and request.headers["content-type"] == "application/json"
    assert request.json() == {
        "client_name": "My App",
        "redirect_uris": list(REDIRECTS),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
        "scope": "a b",
    }


@pytest.mark.parametrize(
    ("redirects", "configured", "expected"),
    [
        (("http://127.0.0.1:5000/callback",), "web", "native"),
        (("http://localhost:5000/callback", "http://[::1]:5/cb"), "web", "native"),
        (("https://app.example.com/callback",), "web", "web"),
        (("https://app.example.com/callback", "http://127.0.0.1/cb"), "web", "web"),
        (("https://app.example.com/callback",), "native", "native"),
        ((), "web", "web"),
    ],
)
def test_application_type(
    server: RouteServer, redirects: tuple[str, ...], configured: str, expected: str
) -> None:
    registrar(server)
    obtain(
        meta_for(server.url), ClientSettings(application_type=configured), redirect_uris=redirects
    )
    body = server.requests[0].json()
    assert body["application_type"] == expected
    assert body["redirect_uris"] == list(redirects)
    assert "scope" not in body


def test_a_signing_key_registers_its_public_jwk(server: RouteServer) -> None:
    registrar(server)
    key = SigningKey.generate_dpop()
    client = obtain(meta_for(server.url), ClientSettings(client_key=key))
    body = server.requests[0].json()
    assert body["token_endpoint_auth_method"] == "private_key_jwt"
    [jwk] = body["jwks"]["keys"]
    assert jwk["kty"] == "EC" and jwk["alg"] == "ES256" and "d" not in jwk
    assert client.auth_method == "private_key_jwt"


@pytest.mark.parametrize(
    ("reply", "method", "secret"),
    [
        (json_answer({"client_id": "c"}, status=200), "none", None),
        (
            json_answer({"client_id": "c", "client_secret": SECRET}, status=201),
            "client_secret_basic",
            SECRET,
        ),
        (
            json_answer(
                {
                    "client_id": "c",
                    "client_secret": SECRET,
                    "token_endpoint_auth_method": "client_secret_post",
                },
                status=201,
            ),
            "client_secret_post",
            SECRET,
        ),
        (json_answer({"client_id": "c", "client_secret": ""}, status=201), "none", None),
    ],
)
def test_the_registration_reply_is_honored(
    server: RouteServer, reply: Answer, method: str, secret: str | None
) -> None:
    registrar(server, reply)
    store = MemoryTokenStore()
    client = obtain(meta_for(server.url), store=store)
    assert (client.client_id, client.auth_method, client.client_secret) == ("c", method, secret)
    assert store.load_client(server.url) == client


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            json_answer({"error": "invalid_redirect_uri"}, status=400),
            "HTTP 400, invalid_redirect_uri",
        ),
        (
            json_answer(
                {
                    "error": "invalid_client_metadata",
                    "error_description": "bad\x1b[31m" + "x" * 500,
                },
                status=400,
            ),
            "invalid_client_metadata: bad [31m",
        ),
        (json_answer({}, status=201), "no client_id"),
        (json_answer({"client_id": 7}, status=201), "no client_id"),
        (Answer(body="<html>", content_type="text/html", status=201), "no client_id"),
        (json_answer({"client_id": "c"}, status=202), "HTTP 202"),
        (json_answer({"client_id": "c\x00d"}, status=201), "unusable"),
    ],
)
def test_a_failed_registration_is_classified(
    server: RouteServer, reply: Answer, expected: str
) -> None:
    registrar(server, reply)
    store = MemoryTokenStore()
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url), store=store)
    message = failure(excinfo)
    assert expected in message
    assert len(message) < 400 and "\x1b" not in message
    assert store.load_client(server.url) is None


@pytest.mark.parametrize(("status", "elsewhere"), [(303, False), (307, True), (308, True)])
def test_a_registration_redirect_is_not_followed(
    server: RouteServer, status: int, elsewhere: bool
) -> None:
    # A POST follows only a 307/308 on its own origin (the rule MCP traffic has):
    # the registration never goes to another origin, nor turns into a GET.
    target = server.url.replace("127.0.0.1", "localhost") if elsewhere else ""
    registrar(server, Answer(status=status, headers={"Location": f"{target}/elsewhere"}))
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url))
    assert "redirect" in failure(excinfo)
    assert server.paths() == ["/register"]


def test_a_secret_never_reaches_an_error(server: RouteServer) -> None:
    registrar(server, json_answer({"client_id": "c\x00", "client_secret": SECRET}, status=201))
    with pytest.raises(AuthError) as excinfo:
        obtain(meta_for(server.url))
    assert SECRET not in f"{excinfo.value} {excinfo.value!r}"


# --- 5. nothing left ---


def test_no_way_to_register(server: RouteServer) -> None:
    meta = meta_for(server.url, registration_endpoint=None)
    settings = ClientSettings(client_metadata_url="https://app.example.com/c.json")
    with pytest.raises(AuthError) as excinfo:
        obtain(meta, settings)
    assert failure(excinfo) == f"no way to register a client with {server.url}"
    assert server.requests == []
