"""mcpclient.auth.discovery: WWW-Authenticate parsing, RFC 9728 and RFC 8414 / OIDC discovery.

Metadata is served by real loopback servers (tests/support/scripted_http.py);
the fetch order is read from what each server recorded.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient.auth._net import SafeHTTP, URLPolicy
from mcpclient.auth.discovery import (
    MAX_CHALLENGE_PARAMS,
    BearerChallenge,
    ProtectedResource,
    ServerMetadata,
    canonical_resource,
    fetch_protected_resource,
    fetch_server_metadata,
    legacy_server_metadata,
    parse_www_authenticate,
)
from mcpclient.errors import AuthError, FailureClass
from tests.support import soon
from tests.support.scripted_http import Answer, RouteServer, json_answer

from .auth_http_support import static_resolver

PROPERTY = settings(max_examples=50, deadline=None, database=None)
LOOPBACK = URLPolicy(allow_loopback=True)
PRM = "/.well-known/oauth-protected-resource"
OAUTH = "/.well-known/oauth-authorization-server"
OIDC = "/.well-known/openid-configuration"


def failure(excinfo: pytest.ExceptionInfo[AuthError]) -> str:
    assert excinfo.value.failure_class is FailureClass.AUTH_FAILED
    return excinfo.value.message


def challenges(header: str | None) -> list[tuple[str, dict[str, str]]]:
    return [(c.scheme, dict(c.params)) for c in parse_www_authenticate(header)]


# --- WWW-Authenticate ---


def test_the_mcp_challenge() -> None:
    header = (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",'
        ' scope="files:read files:write"'
    )
    [found] = parse_www_authenticate(header)
    assert found.scheme == "bearer"
    assert found.resource_metadata == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )
    assert found.scopes == ("files:read", "files:write")
    assert found.error is None


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Basic realm="x", Bearer error="insufficient_scope", scope="a b", DPoP algs="ES256"',
            [
                ("basic", {"realm": "x"}),
                ("bearer", {"error": "insufficient_scope", "scope": "a b"}),
                ("dpop", {"algs": "ES256"}),
            ],
        ),
        (
            'BEARER Realm="R", ERROR=invalid_token',
            [("bearer", {"realm": "R", "error": "invalid_token"})],
        ),
        ('Bearer realm = "spaced" , scope= "s"', [("bearer", {"realm": "spaced", "scope": "s"})]),
        (r'Bearer realm="a \"quoted\" \\ value"', [("bearer", {"realm": 'a "quoted" \\ value'})]),
        (
            'Bearer realm="with, comma", error="e"',
            [("bearer", {"realm": "with, comma", "error": "e"})],
        ),
        ("Negotiate abc123==, Bearer realm=r", [("negotiate", {}), ("bearer", {"realm": "r"})]),
        ("Basic YWxhZGRpbjpvcGVuc2VzYW1l", [("basic", {})]),
        ("Newauth abc/+=", [("newauth", {})]),
        ("Bearer", [("bearer", {})]),
        ("Bearer, DPoP", [("bearer", {}), ("dpop", {})]),
        ("Bearer ,, , realm=x", [("bearer", {"realm": "x"})]),
        ('Bearer realm="first", realm="second"', [("bearer", {"realm": "first"})]),
        (
            'Bearer error="invalid_token", Basic',
            [("bearer", {"error": "invalid_token"}), ("basic", {})],
        ),
        ('Bearer realm="", scope=""', [("bearer", {"realm": "", "scope": ""})]),
        ('Bearer realm="caf\xe9"', [("bearer", {"realm": "caf\xe9"})]),
    ],
)
def test_challenges_per_rfc_9110(header: str, expected: list[tuple[str, dict[str, str]]]) -> None:
    assert challenges(header) == expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, []),
        ("", []),
        ("   ,  , ", []),
        ('"quoted", Bearer realm=x', [("bearer", {"realm": "x"})]),
        ("=junk, Bearer a=b", [("bearer", {"a": "b"})]),
        ('Bearer realm="closed, scope="x"', [("bearer", {"realm": "closed, scope="})]),
        ('Bearer scope="a", realm="unterminated, b=c', [("bearer", {"scope": "a"})]),
        ('Bearer a="ctl\x01char", b=c', [("bearer", {"b": "c"})]),
        ("Bearer a=b c d, e=f", [("bearer", {"a": "b", "e": "f"})]),
        ("Bearer a=, b=c", [("bearer", {"b": "c"})]),
        ("Bearer =x, Basic", [("bearer", {}), ("basic", {})]),
        ('Bea{rer realm="x", Bearer scope="y"', [("bearer", {"scope": "y"})]),
        ("Bearer realm=x\r\nInjected: 1", [("bearer", {"realm": "x"})]),
        ('Bearer scope="a\\', [("bearer", {})]),
    ],
)
def test_junk_is_skipped_never_raised(header: str | None, expected: list[Any]) -> None:
    assert challenges(header) == expected


def test_the_parser_is_bounded() -> None:
    many = "Bearer " + ", ".join(f"p{i}={i}" for i in range(100))
    [found] = parse_www_authenticate(many)
    assert len(found.params) == MAX_CHALLENGE_PARAMS
    spread = ", ".join(f"S{i} a={i}" for i in range(100))
    assert sum(len(c.params) for c in parse_www_authenticate(spread)) == MAX_CHALLENGE_PARAMS
    late = 'Bearer realm="' + "x" * 9000 + '", error="invalid_token"'
    assert parse_www_authenticate(late) == [BearerChallenge("bearer", {})]
    early = 'Bearer error="invalid_token", realm="' + "x" * 9000 + '"'
    assert challenges(early) == [("bearer", {"error": "invalid_token"})]


def test_challenge_params_are_read_only() -> None:
    [found] = parse_www_authenticate("Bearer a=b")
    with pytest.raises(TypeError):
        found.params["a"] = "c"  # type: ignore[index]


@PROPERTY
@given(st.text(max_size=300))
def test_any_text_parses_without_raising(header: str) -> None:
    found = parse_www_authenticate(header)
    assert sum(len(c.params) for c in found) <= MAX_CHALLENGE_PARAMS
    for challenge in found:
        assert challenge.scheme == challenge.scheme.lower() and challenge.scheme
        assert all(name == name.lower() for name in challenge.params)


@PROPERTY
@given(st.text(alphabet='Bearer ="\\,=\t-abc/+', max_size=200))
def test_hostile_punctuation_parses_without_raising(header: str) -> None:
    parse_www_authenticate(header)


_token = st.text(
    alphabet=string.ascii_letters + string.digits + "-_.~!#$&'*+^`|", min_size=1, max_size=12
)
_value = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=30,
)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@PROPERTY
@given(st.lists(st.tuples(_token, st.dictionaries(_token, _value, max_size=4)), max_size=4))
def test_well_formed_challenges_round_trip(items: list[tuple[str, dict[str, str]]]) -> None:
    header = ", ".join(
        scheme + (" " + ", ".join(f"{k}={_quote(v)}" for k, v in params.items()) if params else "")
        for scheme, params in items
    )
    expected = []
    for scheme, params in items:
        merged: dict[str, str] = {}
        for name, value in params.items():
            merged.setdefault(name.lower(), value)
        expected.append((scheme.lower(), merged))
    assert challenges(header) == expected


# --- canonical resource ---


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("HTTPS://MCP.Example.COM/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"),
        ("http://127.0.0.1:80/mcp", "http://127.0.0.1/mcp"),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com:8443/mcp"),
        ("https://mcp.example.com/mcp/", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/Mcp?x=1", "https://mcp.example.com/Mcp?x=1"),
        ("https://mcp.example.com", "https://mcp.example.com"),
        ("https://mcp.example.com/", "https://mcp.example.com/"),
        ("https://mcp.example.com//", "https://mcp.example.com/"),
        ("https://user:pw@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("http://[::1]:8080/mcp", "http://[::1]:8080/mcp"),
    ],
)
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


@pytest.mark.parametrize(
    "url", ["", "/mcp", "mcp.example.com/mcp", "ftp://x/y", "https://x:99999/"]
)
def test_canonical_resource_refuses_non_urls(url: str) -> None:
    with pytest.raises(AuthError):
        canonical_resource(url)


# --- RFC 9728 ---


@pytest.fixture
def server() -> Iterator[RouteServer]:
    with RouteServer() as peer:
        yield peer


def http() -> SafeHTTP:
    return SafeHTTP(LOOPBACK)


def prm(resource: str, servers: Any = ("https://as.example.com",), **extra: Any) -> Answer:
    body = {"resource": resource, "authorization_servers": list(servers), **extra}
    return json_answer(body)


def test_the_challenge_url_comes_first(server: RouteServer) -> None:
    mcp = f"{server.url}/mcp"
    server.routes["/custom/prm"] = prm(mcp, scopes_supported=["a", "b", 7, ""])
    server.routes[PRM + "/mcp"] = prm(mcp, servers=["https://other.example"])
    found = fetch_protected_resource(mcp, f"{server.url}/custom/prm", http(), deadline=soon())
    assert found == ProtectedResource(
        resource=mcp,
        authorization_servers=("https://as.example.com",),
        scopes_supported=("a", "b"),
        url=f"{server.url}/custom/prm",
    )
    assert server.paths() == ["/custom/prm"]


def test_a_missing_challenge_document_falls_back_to_the_well_known_urls(
    server: RouteServer,
) -> None:
    mcp = f"{server.url}/mcp"
    server.routes[PRM] = prm(mcp)
    found = fetch_protected_resource(mcp, f"{server.url}/gone", http(), deadline=soon())
    assert found is not None and found.url == f"{server.url}{PRM}"
    assert server.paths() == ["/gone", PRM + "/mcp", PRM]


def test_the_path_based_url_comes_before_the_root(server: RouteServer) -> None:
    mcp = f"{server.url}/tenant/mcp?x=1"
    server.routes[PRM + "/tenant/mcp?x=1"] = prm(mcp)
    server.routes[PRM] = prm(mcp, servers=["https://root.example"])
    found = fetch_protected_resource(mcp, None, http(), deadline=soon())
    assert found is not None and found.authorization_servers == ("https://as.example.com",)
    assert server.paths() == [PRM + "/tenant/mcp?x=1"]


def test_a_server_without_a_path_has_only_the_root_document(server: RouteServer) -> None:
    server.routes[PRM] = prm(server.url)
    found = fetch_protected_resource(server.url + "/", None, http(), deadline=soon())
    assert found is not None
    assert server.paths() == [PRM]


def test_no_document_anywhere_is_none(server: RouteServer) -> None:
    mcp = f"{server.url}/mcp"
    assert fetch_protected_resource(mcp, f"{server.url}/c", http(), deadline=soon()) is None
    assert server.paths() == ["/c", PRM + "/mcp", PRM]


@pytest.mark.parametrize(
    "resource",
    [
        "{url}/mcp/",
        "{url}/mcp#x",
        "{upper}/mcp",
    ],
)
def test_equivalent_resource_spellings_match(server: RouteServer, resource: str) -> None:
    upper = server.url.replace("http://", "HTTP://")
    server.routes[PRM + "/mcp"] = prm(resource.format(url=server.url, upper=upper))
    assert fetch_protected_resource(f"{server.url}/mcp", None, http(), deadline=soon())


def test_a_root_resource_matches_with_or_without_a_slash(server: RouteServer) -> None:
    server.routes[PRM] = prm(server.url + "/")
    assert fetch_protected_resource(server.url, None, http(), deadline=soon())
    server.routes[PRM] = prm(server.url)
    assert fetch_protected_resource(server.url + "/", None, http(), deadline=soon())


@pytest.mark.parametrize(
    "resource",
    ["{url}", "{url}/", "{upper}", "{url}/tenant", "{url}/tenant/", "{url}/tenant/mcp"],
)
@pytest.mark.parametrize("where", ["challenge", "path", "root"])
def test_a_same_origin_path_prefix_is_accepted_verbatim(
    server: RouteServer, resource: str, where: str
) -> None:
    # RFC 9728 with MCP's root fallback, whichever document is found.
    upper = server.url.replace("http://", "HTTP://")
    claimed = resource.format(url=server.url, upper=upper)
    mcp = f"{server.url}/tenant/mcp"
    route = {"challenge": "/custom/prm", "path": PRM + "/tenant/mcp", "root": PRM}[where]
    server.routes[route] = prm(claimed)
    found = fetch_protected_resource(mcp, f"{server.url}/custom/prm", http(), deadline=soon())
    assert found is not None and found.resource == claimed  # not canonicalized
    assert found.url == server.url + route


@pytest.mark.parametrize(
    ("resource", "server_path"),
    [
        ("{url}/ten", "/tenant/mcp"),  # a prefix of the text, not of the segments
        ("{url}/tenant/mc", "/tenant/mcp"),
        ("{url}/tenant/mcp/x", "/tenant/mcp"),
        ("{url}/Tenant", "/tenant/mcp"),  # paths are case-sensitive
        ("{url}/tenant?x=1", "/tenant/mcp"),  # a query names one resource only
        ("{url}/tenant/mcp?y=2", "/tenant/mcp?x=1"),
        ("https://127.0.0.1:{port}", "/tenant/mcp"),
        ("http://localhost:{port}/", "/tenant/mcp"),
    ],
)
def test_a_root_document_for_another_resource_is_refused(
    server: RouteServer, resource: str, server_path: str
) -> None:
    server.routes[PRM] = prm(resource.format(url=server.url, port=server.port))
    with pytest.raises(AuthError) as excinfo:
        fetch_protected_resource(server.url + server_path, None, http(), deadline=soon())
    assert "resource mismatch" in failure(excinfo)


def test_a_resource_with_the_servers_query_is_accepted(server: RouteServer) -> None:
    mcp = f"{server.url}/tenant/mcp?x=1"
    server.routes[PRM] = prm(mcp)
    found = fetch_protected_resource(mcp, None, http(), deadline=soon())
    assert found is not None and found.resource == mcp
    server.routes[PRM] = prm(f"{server.url}/tenant")  # no query: a path prefix
    assert fetch_protected_resource(mcp, None, http(), deadline=soon())


@pytest.mark.parametrize(
    "resource",
    [
        "{url}/other",
        "{url}/mcp/sub",
        "{url}/mc",
        "{url}/mcp?x=1",
        "http://127.0.0.2:{port}/mcp",
        "http://127.0.0.2:{port}",
        "https://127.0.0.1:{port}/mcp",
        "not a url",
        None,
        7,
    ],
)
def test_a_resource_mismatch_is_refused(server: RouteServer, resource: Any) -> None:
    if isinstance(resource, str):
        resource = resource.format(url=server.url, port=server.port)
    body: dict[str, Any] = {"authorization_servers": ["https://as.example.com"]}
    if resource is not None:
        body["resource"] = resource
    server.routes[PRM + "/mcp"] = json_answer(body)
    server.routes[PRM] = prm(f"{server.url}/mcp")  # never reached: a mismatch is fatal
    with pytest.raises(AuthError) as excinfo:
        fetch_protected_resource(f"{server.url}/mcp", None, http(), deadline=soon())
    assert "resource mismatch" in failure(excinfo)
    assert server.paths() == [PRM + "/mcp"]


@pytest.mark.parametrize("servers", [[], [7], "https://as.example.com", None])
def test_authorization_servers_are_required(server: RouteServer, servers: Any) -> None:
    server.routes[PRM] = json_answer({"resource": server.url, "authorization_servers": servers})
    with pytest.raises(AuthError) as excinfo:
        fetch_protected_resource(server.url, None, http(), deadline=soon())
    assert "no authorization server" in failure(excinfo)


@pytest.mark.parametrize(
    "answer",
    [
        json_answer({"error": "boom"}, status=500),
        json_answer({}, status=401),
        Answer(body="<html>", content_type="text/html"),
        json_answer(["a list"]),
    ],
)
def test_any_failure_but_404_stops_discovery(server: RouteServer, answer: Answer) -> None:
    server.routes[PRM + "/mcp"] = answer
    server.routes[PRM] = prm(f"{server.url}/mcp")
    with pytest.raises(AuthError) as excinfo:
        fetch_protected_resource(f"{server.url}/mcp", None, http(), deadline=soon())
    assert "protected resource metadata" in failure(excinfo)
    assert server.paths() == [PRM + "/mcp"]


@pytest.mark.parametrize(
    "challenge_url",
    ["http://evil.example/prm", "https://metadata.internal/prm", "https://169.254.169.254/x"],
)
def test_a_hostile_challenge_url_is_refused(server: RouteServer, challenge_url: str) -> None:
    resolve = static_resolver({"metadata.internal": ["10.0.0.7"]})
    with pytest.raises(AuthError):
        fetch_protected_resource(
            f"{server.url}/mcp", challenge_url, SafeHTTP(LOOPBACK, resolve=resolve), deadline=soon()
        )
    assert server.requests == []


# --- RFC 8414 / OIDC ---


def metadata(issuer: str, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        **extra,
    }


@pytest.mark.parametrize(
    ("served_at", "tried"),
    [
        (OAUTH + "/t1", [OAUTH + "/t1"]),
        (OIDC + "/t1", [OAUTH + "/t1", OIDC + "/t1"]),
        ("/t1" + OIDC, [OAUTH + "/t1", OIDC + "/t1", "/t1" + OIDC]),
    ],
)
def test_an_issuer_with_a_path_in_the_spec_order(
    server: RouteServer, served_at: str, tried: list[str]
) -> None:
    issuer = f"{server.url}/t1"
    server.routes[served_at] = json_answer(metadata(issuer))
    meta = fetch_server_metadata(issuer, http(), deadline=soon())
    assert meta.issuer == issuer and meta.token_endpoint == issuer + "/token"
    assert server.paths() == tried


@pytest.mark.parametrize(("served_at", "tried"), [(OAUTH, [OAUTH]), (OIDC, [OAUTH, OIDC])])
def test_an_issuer_without_a_path_uses_the_root_documents(
    server: RouteServer, served_at: str, tried: list[str]
) -> None:
    server.routes[served_at] = json_answer(metadata(server.url))
    meta = fetch_server_metadata(server.url, http(), deadline=soon())
    assert meta.issuer == server.url
    assert server.paths() == tried


def test_no_metadata_anywhere_is_an_error(server: RouteServer) -> None:
    with pytest.raises(AuthError) as excinfo:
        fetch_server_metadata(f"{server.url}/t1", http(), deadline=soon())
    assert "no authorization server metadata" in failure(excinfo)
    assert server.paths() == [OAUTH + "/t1", OIDC + "/t1", "/t1" + OIDC]


@pytest.mark.parametrize(
    "claimed",
    ["{issuer}/", "{upper}", "https://evil.example", "{url}", None, ["{issuer}"]],
)
def test_a_document_for_another_issuer_is_discarded(server: RouteServer, claimed: Any) -> None:
    issuer = f"{server.url}/t1"
    if isinstance(claimed, str):
        claimed = claimed.format(issuer=issuer, url=server.url, upper=issuer.upper())
    server.routes[OAUTH + "/t1"] = json_answer({**metadata(issuer), "issuer": claimed})
    with pytest.raises(AuthError) as excinfo:
        fetch_server_metadata(issuer, http(), deadline=soon())
    assert "issuer mismatch" in failure(excinfo)
    # A later candidate with the right issuer is used instead.
    server.routes["/t1" + OIDC] = json_answer(metadata(issuer, scopes_supported=["ok"]))
    meta = fetch_server_metadata(issuer, http(), deadline=soon())
    assert meta.scopes_supported == ("ok",)


def test_a_failing_candidate_stops_discovery(server: RouteServer) -> None:
    issuer = f"{server.url}/t1"
    server.routes[OAUTH + "/t1"] = json_answer({}, status=503)
    server.routes[OIDC + "/t1"] = json_answer(metadata(issuer))
    with pytest.raises(AuthError) as excinfo:
        fetch_server_metadata(issuer, http(), deadline=soon())
    assert "HTTP 503" in failure(excinfo)
    assert server.paths() == [OAUTH + "/t1"]


def test_metadata_fields(server: RouteServer) -> None:
    doc = metadata(
        server.url,
        registration_endpoint=server.url + "/register",
        scopes_supported=["a", "offline_access", 3, "x" * 300],
        code_challenge_methods_supported=["S256", "plain"],
        token_endpoint_auth_methods_supported=["private_key_jwt"],
        token_endpoint_auth_signing_alg_values_supported=["ES256"],
        grant_types_supported=["authorization_code", "client_credentials"],
        authorization_response_iss_parameter_supported=True,
        client_id_metadata_document_supported=True,
        dpop_signing_alg_values_supported=["ES256", "RS256"],
        authorization_grant_profiles_supported=["urn:ietf:params:oauth:grant-profile:id-jag"],
        jwks_uri="javascript:ignored",  # not used, not checked
    )
    server.routes[OAUTH] = json_answer(doc)
    meta = fetch_server_metadata(server.url, http(), deadline=soon())
    assert meta == ServerMetadata(
        issuer=server.url,
        authorization_endpoint=server.url + "/authorize",
        token_endpoint=server.url + "/token",
        registration_endpoint=server.url + "/register",
        scopes_supported=("a", "offline_access"),
        code_challenge_methods_supported=("S256", "plain"),
        token_endpoint_auth_methods_supported=("private_key_jwt",),
        token_endpoint_auth_signing_alg_values_supported=("ES256",),
        grant_types_supported=("authorization_code", "client_credentials"),
        authorization_response_iss_parameter_supported=True,
        client_id_metadata_document_supported=True,
        dpop_signing_alg_values_supported=("ES256", "RS256"),
        authorization_grant_profiles_supported=("urn:ietf:params:oauth:grant-profile:id-jag",),
        legacy_defaults=False,
    )


def test_absent_and_malformed_fields(server: RouteServer) -> None:
    server.routes[OAUTH] = json_answer(
        {
            "issuer": server.url,
            "token_endpoint": server.url + "/token",
            "scopes_supported": "a b",
            "authorization_response_iss_parameter_supported": "true",
            "client_id_metadata_document_supported": 1,
        }
    )
    meta = fetch_server_metadata(server.url, http(), deadline=soon())
    assert meta.authorization_endpoint is None and meta.registration_endpoint is None
    assert meta.code_challenge_methods_supported is None  # absent: a distinct case
    assert meta.scopes_supported == ()
    assert meta.authorization_response_iss_parameter_supported is False
    assert meta.client_id_metadata_document_supported is False
    server.routes[OAUTH] = json_answer(
        {**metadata(server.url), "code_challenge_methods_supported": "S256"}
    )
    meta = fetch_server_metadata(server.url, http(), deadline=soon())
    assert meta.code_challenge_methods_supported == ()  # present but unusable


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("token_endpoint", None),
        ("token_endpoint", "http://as.example.com/token"),
        ("token_endpoint", 42),
        ("authorization_endpoint", "javascript:alert(1)"),
        ("authorization_endpoint", "https://as.example.com/authorize#frag"),
        ("registration_endpoint", "https://user@as.example.com/register"),
        ("registration_endpoint", "file:///etc/passwd"),
    ],
)
def test_every_endpoint_is_checked(server: RouteServer, field: str, value: Any) -> None:
    doc = metadata(server.url)
    if value is None:
        del doc[field]
    else:
        doc[field] = value
    server.routes[OAUTH] = json_answer(doc)
    with pytest.raises(AuthError) as excinfo:
        fetch_server_metadata(server.url, http(), deadline=soon())
    assert field.replace("_", " ") in failure(excinfo) or field in failure(excinfo)


@pytest.mark.parametrize(
    "issuer", ["http://as.example.com", "https://as.example.com/t?x=1", "https://as.example.com/#f"]
)
def test_an_unusable_issuer_is_refused_before_any_fetch(issuer: str) -> None:
    with pytest.raises(AuthError):
        fetch_server_metadata(
            issuer, SafeHTTP(LOOPBACK, resolve=static_resolver({})), deadline=soon()
        )


# --- 2025-03-26 ---


def test_legacy_metadata_at_the_server_origin(server: RouteServer) -> None:
    server.routes[OAUTH] = json_answer(
        metadata(server.url, registration_endpoint=server.url + "/reg")
    )
    meta = legacy_server_metadata(f"{server.url}/deep/mcp", http(), deadline=soon())
    assert meta.issuer == server.url and meta.registration_endpoint == server.url + "/reg"
    assert meta.legacy_defaults is False
    assert server.paths() == [OAUTH]
    assert server.requests[0].headers["mcp-protocol-version"] == "2025-03-26"


def test_legacy_default_endpoints(server: RouteServer) -> None:
    meta = legacy_server_metadata(f"{server.url}/mcp", http(), deadline=soon())
    assert meta.legacy_defaults is True
    assert meta.issuer == server.url
    assert (meta.authorization_endpoint, meta.token_endpoint, meta.registration_endpoint) == (
        server.url + "/authorize",
        server.url + "/token",
        server.url + "/register",
    )
    assert meta.code_challenge_methods_supported is None
    assert server.paths() == [OAUTH]


def test_legacy_metadata_for_another_issuer_is_refused(server: RouteServer) -> None:
    server.routes[OAUTH] = json_answer(metadata("https://elsewhere.example"))
    with pytest.raises(AuthError) as excinfo:
        legacy_server_metadata(f"{server.url}/mcp", http(), deadline=soon())
    assert "issuer mismatch" in failure(excinfo)
    server.routes[OAUTH] = json_answer({**metadata(server.url), "issuer": server.url + "/"})
    meta = legacy_server_metadata(f"{server.url}/mcp", http(), deadline=soon())
    assert meta.issuer == server.url + "/"


def test_legacy_metadata_failure_is_fatal(server: RouteServer) -> None:
    server.routes[OAUTH] = json_answer({}, status=500)
    with pytest.raises(AuthError) as excinfo:
        legacy_server_metadata(f"{server.url}/mcp", http(), deadline=soon())
    assert "HTTP 500" in failure(excinfo)
