"""mcpclient.auth._net on the shared HTTP stack: URL and address checks, pinning, redirects, bounds.

Every exchange runs against a real loopback peer (tests/support/scripted_http.py, or a raw
socket server from tests/integration/auth_http_support.py);
hostile DNS answers come from an injected resolver.
"""

from __future__ import annotations

import base64
import itertools
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpclient._core.deadline import now
from mcpclient.auth._net import (
    MAX_BODY_BYTES,
    JSONResponse,
    SafeHTTP,
    URLPolicy,
    check_address,
    check_url,
    origin_of,
)
from mcpclient.errors import AuthError, FailureClass
from tests.support import soon
from tests.support.scripted_http import Answer, RouteServer, json_answer

from .auth_http_support import (
    LoopbackPKI,
    RawServer,
    counting,
    make_pki,
    read_request_head,
    static_resolver,
)

LOOPBACK = URLPolicy(allow_loopback=True)
REMOTE = URLPolicy(allow_loopback=False)
PRIVATE = URLPolicy(allow_loopback=False, allow_private_networks=True)


def failed(excinfo: pytest.ExceptionInfo[AuthError]) -> str:
    assert excinfo.value.failure_class is FailureClass.AUTH_FAILED
    return excinfo.value.message


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LoopbackPKI:
    return make_pki(tmp_path_factory.mktemp("pki"), ("auth.test", "rebind.test"))


# --- check_url ---


@pytest.mark.parametrize(
    "url",
    [
        "https://as.example.com",
        "https://as.example.com/tenant/1?x=y",
        "https://as.example.com:8443/.well-known/oauth-authorization-server",
        "https://93.184.216.34/token",
        "https://[2606:4700::1111]/token",
        "https://AS.Example.COM./x",
    ],
)
def test_check_url_accepts_https(url: str) -> None:
    check_url(url, REMOTE, what="token endpoint")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "missing"),
        ("ftp://as.example.com/x", "must be https"),
        ("javascript:alert(1)", "must be https"),
        ("http://as.example.com/token", "must be https"),
        ("/token", "must be https"),
        ("https:///token", "no host"),
        ("https://user:pw@as.example.com/", "user information"),
        ("https://as.example.com@evil.example/", "user information"),
        ("https://as.example.com/#frag", "fragment"),
        ("https://as.example.com/#", "fragment"),
        ("https://as.example.com/a b", "space"),
        ("https://as.example.com/\x00", "control"),
        ("https://as.example.com/\r\nX: y", "control"),
        ("https://exämple.com/", "non-ASCII"),
        ("https://as.example.com\\@evil/", "backslash"),
        ("https://as.example.com:0/", "port 0"),
        ("https://as.example.com:99999/", "malformed"),
        ("https://as.example.com:x/", "malformed"),
        ("https://[fe80::1%25eth0]/", "IPv6"),
        ("https://[::1/", "malformed"),
        ("https://127.1/", "numeric"),
        ("https://0x7f000001/", "numeric"),
        ("https://2130706433/", "numeric"),
        ("https://a..b/", "host name"),
        ("https://a_b!.example/", "host name"),
        ("https://as.example.com/" + "a" * 2048, "longer than 2048"),
    ],
)
def test_check_url_refuses(url: str, reason: str) -> None:
    with pytest.raises(AuthError) as excinfo:
        check_url(url, LOOPBACK, what="token endpoint")
    message = failed(excinfo)
    assert reason in message
    assert message.startswith("the token endpoint URL")


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]:9/", "https://127.0.0.1/"],
)
def test_loopback_urls_need_a_loopback_policy(url: str) -> None:
    check_url(url, LOOPBACK, what="metadata")
    with pytest.raises(AuthError) as excinfo:
        check_url(url, REMOTE, what="metadata")
    assert "loopback" in failed(excinfo)
    with pytest.raises(AuthError):
        check_url(url, PRIVATE, what="metadata")  # private networks do not include loopback


def test_origin_of_hides_path_query_and_userinfo() -> None:
    assert origin_of("https://u:p@as.example.com:8443/a?secret=1") == "https://as.example.com:8443"
    assert origin_of("not a url") == "?"
    assert origin_of("https://[::1]:9/x") == "https://[::1]:9"


# --- check_address ---


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",  # CGNAT
        "100.127.255.254",
        "169.254.169.254",  # cloud metadata (link-local)
        "fe80::1",
        "fc00::1",
        "::ffff:10.0.0.1",  # IPv4-mapped
        "::ffff:169.254.169.254",
        "::ffff:100.64.0.1",
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "192.0.2.1",  # documentation
    ],
)
def test_private_and_link_local_addresses_are_refused(address: str) -> None:
    with pytest.raises(AuthError) as excinfo:
        check_address(address, LOOPBACK, what="metadata")
    assert "refused" in failed(excinfo)
    check_address(address, PRIVATE, what="metadata")  # the host may admit them


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
def test_loopback_addresses_only_when_allowed(address: str) -> None:
    check_address(address, LOOPBACK, what="metadata")
    for policy in (REMOTE, PRIVATE):
        with pytest.raises(AuthError) as excinfo:
            check_address(address, policy, what="metadata")
        assert "loopback address" in failed(excinfo)


@pytest.mark.parametrize(
    "address", ["0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "ff02::1", "240.0.0.1", "255.255.255.255"]
)
def test_unusable_addresses_are_always_refused(address: str) -> None:
    everything = URLPolicy(allow_loopback=True, allow_private_networks=True)
    with pytest.raises(AuthError):
        check_address(address, everything, what="metadata")


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"])
def test_public_addresses_pass(address: str) -> None:
    check_address(address, REMOTE, what="metadata")


def test_a_malformed_resolver_answer_is_refused() -> None:
    with pytest.raises(AuthError):
        check_address("not-an-ip", LOOPBACK, what="metadata")


# --- resolution and pinning ---


@pytest.mark.parametrize(
    "answer",
    [
        ["10.0.0.1"],
        ["169.254.169.254"],
        ["100.64.0.1"],
        ["::ffff:192.168.0.1"],
        ["93.184.216.34", "10.0.0.1"],  # mixed: refused as a whole
        ["127.0.0.1"],  # loopback while the policy is remote
    ],
)
def test_a_name_resolving_to_a_refused_address_is_never_contacted(answer: list[str]) -> None:
    http = SafeHTTP(REMOTE, resolve=static_resolver({"as.example.com": answer}))
    with pytest.raises(AuthError) as excinfo:
        http.get_json("https://as.example.com/meta", deadline=soon(), what="AS metadata")
    assert "address" in failed(excinfo)


def test_a_mixed_answer_is_refused_before_connecting() -> None:
    with RouteServer({"/meta": json_answer({"ok": True})}) as server:
        resolve = static_resolver({"as.localhost": ["127.0.0.1", "10.0.0.1"]})
        http = SafeHTTP(LOOPBACK, resolve=resolve)
        with pytest.raises(AuthError) as excinfo:
            http.get_json(f"http://as.localhost:{server.port}/meta", deadline=soon(), what="m")
        assert "private address (10.0.0.1)" in failed(excinfo)
        assert server.requests == []


def test_the_connection_goes_to_the_checked_address() -> None:
    # Two servers on the same port, on 127.0.0.1 and 127.0.0.2. The resolver
    # answers 127.0.0.1 first and 127.0.0.2 afterwards: a client that
    # resolved again when connecting would reach the second server.
    first = RouteServer({"/meta": json_answer({"server": "first"})})
    try:
        second = RouteServer(
            {"/meta": json_answer({"server": "second"})}, host="127.0.0.2", port=first.port
        )
    except OSError:
        first.close()
        pytest.skip("127.0.0.2 is not bindable here")
    with first, second:
        resolve, asked = counting(itertools.chain([["127.0.0.1"]], itertools.repeat(["127.0.0.2"])))
        http = SafeHTTP(LOOPBACK, resolve=resolve)
        url = f"http://rebind.localhost:{first.port}/meta"
        reply = http.get_json(url, deadline=soon(), what="metadata")
        assert reply is not None and reply.body == {"server": "first"}
        assert asked == ["rebind.localhost"]
        assert second.requests == []
        assert first.requests[0].headers["host"] == f"rebind.localhost:{first.port}"


def test_the_name_is_never_given_to_the_system_resolver() -> None:
    # "rebind.test" does not exist in DNS: the request can only succeed if the
    # connection uses the injected resolver's (checked) answer.
    with RouteServer({"/x": json_answer([1])}) as server:
        http = SafeHTTP(LOOPBACK, resolve=static_resolver({"pinned.localhost": ["127.0.0.1"]}))
        reply = http.get_json(f"http://pinned.localhost:{server.port}/x", deadline=soon(), what="x")
        assert reply is not None and reply.body == [1]


def test_tls_pins_the_address_but_verifies_the_name(pki: LoopbackPKI) -> None:
    with RouteServer({"/meta": json_answer({"tls": True})}, tls=pki.server_context) as server:
        resolve = static_resolver({"auth.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
        policy = URLPolicy(allow_loopback=True, ca_bundle=str(pki.ca_file))
        http = SafeHTTP(policy, resolve=resolve)
        reply = http.get_json(f"https://auth.test:{server.port}/meta", deadline=soon(), what="m")
        assert reply is not None and reply.body == {"tls": True}
        assert server.requests[0].headers["host"] == f"auth.test:{server.port}"
        # Same address, a name the certificate does not cover: refused.
        with pytest.raises(AuthError) as excinfo:
            http.get_json(f"https://other.test:{server.port}/meta", deadline=soon(), what="m")
        assert "certificate verify failed" in failed(excinfo)
        # Default trust anchors do not know the test CA.
        plain = SafeHTTP(URLPolicy(allow_loopback=True), resolve=resolve)
        with pytest.raises(AuthError) as excinfo:
            plain.get_json(f"https://auth.test:{server.port}/meta", deadline=soon(), what="m")
        assert "certificate verify failed" in failed(excinfo)


def test_a_ca_directory_works_like_a_ca_file(pki: LoopbackPKI, tmp_path: Path) -> None:
    # The same TLS rule as MCP traffic: a hashed CA directory (openssl rehash).
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to hash a CA directory")
    directory = tmp_path / "cas"
    directory.mkdir()
    shutil.copy(pki.ca_file, directory / "ca.pem")
    subprocess.run(["openssl", "rehash", str(directory)], check=True, capture_output=True)
    with RouteServer({"/meta": json_answer({"dir": True})}, tls=pki.server_context) as server:
        policy = URLPolicy(allow_loopback=True, ca_bundle=str(directory))
        http = SafeHTTP(policy, resolve=static_resolver({"auth.test": ["127.0.0.1"]}))
        reply = http.get_json(f"https://auth.test:{server.port}/meta", deadline=soon(), what="m")
        assert reply is not None and reply.body == {"dir": True}


def test_an_unreadable_ca_bundle_is_a_clean_error(tmp_path: Path) -> None:
    policy = URLPolicy(allow_loopback=True, ca_bundle=str(tmp_path / "missing.pem"))
    http = SafeHTTP(policy, resolve=static_resolver({"auth.test": ["127.0.0.1"]}))
    with pytest.raises(AuthError) as excinfo:
        http.get_json("https://auth.test:9/x", deadline=soon(), what="m")
    assert "CA bundle" in failed(excinfo)


def test_environment_proxies_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with RouteServer({"/x": json_answer({"direct": True})}) as server:
        reply = SafeHTTP(LOOPBACK).get_json(f"{server.url}/x", deadline=soon(), what="x")
        assert reply is not None and reply.body == {"direct": True}


def test_an_unresolvable_name_fails_cleanly() -> None:
    http = SafeHTTP(REMOTE, resolve=static_resolver({}))
    with pytest.raises(AuthError) as excinfo:
        http.get_json("https://nowhere.example/x", deadline=soon(), what="PRM")
    assert "could not be resolved" in failed(excinfo)
    empty = SafeHTTP(REMOTE, resolve=static_resolver({"nowhere.example": []}))
    with pytest.raises(AuthError) as excinfo:
        empty.get_json("https://nowhere.example/x", deadline=soon(), what="PRM")
    assert "no address" in failed(excinfo)


def test_a_refused_connection_names_the_endpoint_kind() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(AuthError) as excinfo:
        SafeHTTP(LOOPBACK).post_form(
            f"http://127.0.0.1:{port}/token?code=SECRET",
            {"code": "SECRET"},
            deadline=soon(),
            what="token endpoint",
        )
    message = failed(excinfo)
    assert message == f"the token endpoint failed: connection to http://127.0.0.1:{port} refused"


# --- requests and replies ---


def test_get_sends_accept_and_user_agent_and_returns_headers() -> None:
    answer = json_answer({"a": 1}, **{"X-Thing": "v", "DPoP-Nonce": "n1"})
    with RouteServer({"/m?x=1": answer}) as server:
        reply = SafeHTTP(LOOPBACK, user_agent="ua/1").get_json(
            f"{server.url}/m?x=1",
            deadline=soon(),
            what="m",
            headers={"MCP-Protocol-Version": "2025-03-26"},
        )
        assert isinstance(reply, JSONResponse)
        assert (reply.status, reply.body) == (200, {"a": 1})
        assert reply.headers["dpop-nonce"] == "n1" and reply.headers["X-THING"] == "v"
        got = server.requests[0]
        assert got.headers["accept"] == "application/json"
        assert got.headers["user-agent"] == "ua/1"
        assert got.headers["mcp-protocol-version"] == "2025-03-26"
        assert repr(reply) == "<JSONResponse 200>"


def test_get_404_is_none_and_other_statuses_are_returned() -> None:
    routes = {"/err": json_answer({"error": "x"}, status=500)}
    with RouteServer(routes) as server:
        http = SafeHTTP(LOOPBACK)
        assert http.get_json(f"{server.url}/missing", deadline=soon(), what="m") is None
        reply = http.get_json(f"{server.url}/err", deadline=soon(), what="m")
        assert reply is not None and (reply.status, reply.body) == (500, {"error": "x"})


def test_post_form_encodes_the_form_and_basic_credentials() -> None:
    with RouteServer({"/token": json_answer({"access_token": "t"})}) as server:
        reply = SafeHTTP(LOOPBACK).post_form(
            f"{server.url}/token",
            {"grant_type": "client_credentials", "scope": "a b"},
            deadline=soon(),
            what="token endpoint",
            basic=("id with:colon", "p@ss:w%rd+"),
            headers={"DPoP": "proof"},
        )
        assert reply.body == {"access_token": "t"}
        got = server.requests[0]
        assert got.method == "POST"
        assert got.headers["content-type"] == "application/x-www-form-urlencoded"
        assert got.body == b"grant_type=client_credentials&scope=a+b"
        assert got.headers["dpop"] == "proof"
        scheme, _, encoded = got.headers["authorization"].partition(" ")
        assert scheme == "Basic"
        # RFC 6749 §2.3.1: each part form-urlencoded before base64.
        assert base64.b64decode(encoded) == b"id+with%3Acolon:p%40ss%3Aw%25rd%2B"


def test_post_json_sends_compact_json_and_returns_any_status() -> None:
    with RouteServer(
        {"/register": json_answer({"error": "invalid_redirect_uri"}, status=400)}
    ) as server:
        reply = SafeHTTP(LOOPBACK).post_json(
            f"{server.url}/register",
            {"client_name": "c", "redirect_uris": ["x"]},
            deadline=soon(),
            what="reg",
        )
        assert (reply.status, reply.body) == (400, {"error": "invalid_redirect_uri"})
        assert server.requests[0].headers["content-type"] == "application/json"
        assert server.requests[0].json() == {"client_name": "c", "redirect_uris": ["x"]}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Host", "evil.example"),
        ("Content-Length", "12345"),
        ("X-A", "SECRET\r\nX-Injected: 1"),
        ("Bad Name", "SECRET"),
        ("X", "SECRET\u00e9"),
    ],
)
def test_caller_headers_cannot_break_framing(name: str, value: str) -> None:
    with RouteServer({"/x": json_answer({})}) as server:
        with pytest.raises(ValueError) as excinfo:
            SafeHTTP(LOOPBACK).get_json(
                f"{server.url}/x", deadline=soon(), what="m", headers={name: value}
            )
        assert value not in str(excinfo.value)  # a header value may be a credential
        assert server.requests == []


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/json", b'{"a":1}', {"a": 1}),
        ("Application/JSON; charset=utf-8", b'{"a":1}', {"a": 1}),
        ("application/problem+json", b'{"a":1}', {"a": 1}),
        ("text/html", b'{"a":1}', None),
        ("text/plain", b'{"a":1}', None),
        (None, b'{"a":1}', None),
        ("application/json", b"", None),
        ("application/json", b"{not json", None),
        ("application/json", b'{"a":NaN}', None),
        ("application/json", b'"\\ud800"', None),
        ("application/json", b"\xff\xfe", None),
    ],
)
def test_a_body_is_json_only_with_a_json_media_type(
    content_type: str | None, body: bytes, expected: object
) -> None:
    with RouteServer({"/x": Answer(body=body, content_type=content_type)}) as server:
        reply = SafeHTTP(LOOPBACK).get_json(f"{server.url}/x", deadline=soon(), what="m")
        assert reply is not None and reply.body == expected


def test_json_depth_is_bounded() -> None:
    shallow = "[" * 32 + "]" * 32
    deep = "[" * 33 + "]" * 33
    very_deep = "[" * 100_000 + "]" * 100_000
    routes = {
        "/ok": Answer(body=shallow),
        "/deep": Answer(body=deep),
        "/very": Answer(body=very_deep),
    }
    with RouteServer(routes) as server:
        http = SafeHTTP(LOOPBACK)
        reply = http.get_json(f"{server.url}/ok", deadline=soon(), what="m")
        assert reply is not None and reply.body is not None
        with pytest.raises(AuthError) as excinfo:
            http.get_json(f"{server.url}/deep", deadline=soon(), what="m")
        assert "nested deeper" in failed(excinfo)
        reply = http.get_json(f"{server.url}/very", deadline=soon(), what="m")
        assert reply is not None and reply.body is None  # jsonio refuses it as not JSON


def test_body_size_is_bounded_with_and_without_a_length() -> None:
    at_limit = b'"' + b"a" * (MAX_BODY_BYTES - 2) + b'"'
    over = b'"' + b"a" * (MAX_BODY_BYTES - 1) + b'"'
    with RouteServer({"/ok": Answer(body=at_limit), "/big": Answer(body=over)}) as server:
        http = SafeHTTP(LOOPBACK)
        reply = http.get_json(f"{server.url}/ok", deadline=soon(), what="m")
        assert reply is not None and len(reply.body) == MAX_BODY_BYTES - 2
        with pytest.raises(AuthError) as excinfo:
            http.post_form(f"{server.url}/big", {}, deadline=soon(), what="token endpoint")
        assert "larger than" in failed(excinfo)

    def unbounded(conn: socket.socket, stop: threading.Event) -> None:
        read_request_head(conn)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"a" * 65536
        while not stop.is_set():
            conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))

    with RawServer(unbounded) as raw:
        with pytest.raises(AuthError) as excinfo:
            SafeHTTP(LOOPBACK).get_json(f"{raw.url}/x", deadline=soon(), what="m")
        assert "larger than" in failed(excinfo)


def test_header_values_are_bounded() -> None:
    with RouteServer({"/x": json_answer({}, **{"WWW-Authenticate": "B" * 20000})}) as server:
        reply = SafeHTTP(LOOPBACK).get_json(f"{server.url}/x", deadline=soon(), what="m")
        assert reply is not None and len(reply.headers["www-authenticate"]) == 8192
        assert "B" not in repr(reply.headers)


# --- redirects ---


def test_get_follows_up_to_five_redirects_like_mcp_traffic() -> None:
    routes = {
        "/a": Answer(status=302, headers={"Location": "/b"}),
        "/b": Answer(status=301, headers={"Location": "c#frag"}),
        "/c": Answer(status=307, headers={"Location": "/d"}),
        "/d": Answer(status=303, headers={"Location": "/e"}),
        "/e": Answer(status=308, headers={"Location": "/f"}),
        "/f": json_answer({"end": True}),
        "/loop": Answer(status=308, headers={"Location": "/loop"}),
    }
    with RouteServer(routes) as server:
        http = SafeHTTP(LOOPBACK)
        reply = http.get_json(f"{server.url}/a", deadline=soon(), what="m")
        assert reply is not None and reply.body == {"end": True}
        assert server.paths() == ["/a", "/b", "/c", "/d", "/e", "/f"]
        with pytest.raises(AuthError) as excinfo:
            http.get_json(f"{server.url}/loop", deadline=soon(), what="PRM")
        assert "more than 5 redirects" in failed(excinfo)
        assert server.paths().count("/loop") == 6


@pytest.mark.parametrize(
    "location",
    [
        "http://as.example.com/x",  # plain http off loopback
        "https://internal.example/x",  # resolves to a private address
        "https://169.254.169.254/latest",
        "file:///etc/passwd",
        "https://user@as.example.com/",
    ],
)
def test_every_redirect_hop_is_checked(location: str) -> None:
    with RouteServer({"/a": Answer(status=302, headers={"Location": location})}) as server:
        resolve = static_resolver(
            {"internal.example": ["10.1.2.3"], "as.example.com": ["93.184.216.34"]}
        )
        with pytest.raises(AuthError) as excinfo:
            SafeHTTP(LOOPBACK, resolve=resolve).get_json(
                f"{server.url}/a", deadline=soon(), what="m"
            )
        failed(excinfo)


def test_a_redirect_to_another_origin_drops_the_callers_headers() -> None:
    with RouteServer({"/b": json_answer({})}) as target:
        routes = {
            "/a": Answer(status=302, headers={"Location": f"{target.url}/b"}),
            "/c": Answer(status=302, headers={"Location": "/d"}),
            "/d": json_answer({}),
        }
        with RouteServer(routes) as first:
            http = SafeHTTP(LOOPBACK)
            http.get_json(f"{first.url}/a", deadline=soon(), what="m", headers={"X-Extra": "1"})
            assert first.requests[0].headers["x-extra"] == "1"
            assert "x-extra" not in target.requests[0].headers
            http.get_json(f"{first.url}/c", deadline=soon(), what="m", headers={"X-Extra": "2"})
            assert first.requests[-1].headers["x-extra"] == "2"  # same origin keeps them


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_post_is_never_turned_into_a_get(status: int) -> None:
    routes = {
        "/token": Answer(status=status, headers={"Location": "/other"}),
        "/other": json_answer({"access_token": "x"}),
    }
    with RouteServer(routes) as server:
        http = SafeHTTP(LOOPBACK)
        with pytest.raises(AuthError) as excinfo:
            http.post_form(
                f"{server.url}/token", {"code": "c"}, deadline=soon(), what="token endpoint"
            )
        assert f"HTTP {status} redirect" in failed(excinfo)
        assert "never turned into a GET" in failed(excinfo)
        with pytest.raises(AuthError):
            http.post_json(f"{server.url}/token", {}, deadline=soon(), what="registration endpoint")
        assert server.paths() == ["/token", "/token"]


@pytest.mark.parametrize("status", [307, 308])
def test_a_post_follows_a_307_or_308_on_its_own_origin_only(status: int) -> None:
    with RouteServer({"/stolen": json_answer({"access_token": "x"})}) as other:
        routes = {
            "/token": Answer(status=status, headers={"Location": "/moved"}),
            "/moved": json_answer({"access_token": "t"}),
            "/away": Answer(status=status, headers={"Location": f"{other.url}/stolen"}),
        }
        with RouteServer(routes) as server:
            http = SafeHTTP(LOOPBACK)
            reply = http.post_form(
                f"{server.url}/token", {"code": "c"}, deadline=soon(), what="token endpoint"
            )
            assert reply.body == {"access_token": "t"}
            assert server.paths() == ["/token", "/moved"]
            assert server.requests[1].body == b"code=c"  # 307/308 keep the method and body
            with pytest.raises(AuthError) as excinfo:
                http.post_form(
                    f"{server.url}/away",
                    {"client_secret": "SECRET"},
                    deadline=soon(),
                    what="token endpoint",
                )
            assert "never redirected to another origin" in failed(excinfo)
            assert other.requests == []


# --- deadlines ---


def _trickle_body(conn: socket.socket, stop: threading.Event) -> None:
    read_request_head(conn)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    )
    while not stop.wait(0.02):
        conn.sendall(b" ")


def _trickle_head(conn: socket.socket, stop: threading.Event) -> None:
    read_request_head(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    while not stop.wait(0.02):
        conn.sendall(b"X-A: b\r\n"[:1])


def _silent(conn: socket.socket, stop: threading.Event) -> None:
    read_request_head(conn)
    stop.wait(10)


@pytest.mark.parametrize("behave", [_trickle_body, _trickle_head, _silent])
def test_a_slow_server_cannot_outlive_the_deadline(
    behave: Callable[[socket.socket, threading.Event], None],
) -> None:
    with RawServer(behave) as raw:
        started = time.monotonic()
        with pytest.raises(AuthError) as excinfo:
            SafeHTTP(LOOPBACK).get_json(f"{raw.url}/x", deadline=now() + 0.5, what="AS metadata")
        elapsed = time.monotonic() - started
        assert "timed out" in failed(excinfo)
        assert 0.4 < elapsed < 2.0


def test_a_past_deadline_sends_nothing() -> None:
    with RouteServer({"/x": json_answer({})}) as server:
        with pytest.raises(AuthError) as excinfo:
            SafeHTTP(LOOPBACK).get_json(f"{server.url}/x", deadline=now() - 1, what="m")
        assert "timed out" in failed(excinfo)
        assert server.requests == []


def test_a_tls_handshake_that_never_finishes_is_bounded(pki: LoopbackPKI) -> None:
    with RawServer(_silent) as raw:
        policy = URLPolicy(allow_loopback=True, ca_bundle=str(pki.ca_file))
        http = SafeHTTP(policy, resolve=static_resolver({"auth.test": ["127.0.0.1"]}))
        started = time.monotonic()
        with pytest.raises(AuthError) as excinfo:
            http.get_json(f"https://auth.test:{raw.port}/x", deadline=now() + 0.5, what="m")
        assert "timed out" in failed(excinfo)
        assert time.monotonic() - started < 2.0


def test_close_cuts_an_exchange_in_progress() -> None:
    arrived = threading.Event()

    def hang(conn: socket.socket, stop: threading.Event) -> None:
        read_request_head(conn)
        arrived.set()
        stop.wait(10)

    with RawServer(hang) as raw:
        http = SafeHTTP(LOOPBACK)
        outcome: list[BaseException] = []

        def call() -> None:
            try:
                http.get_json(f"{raw.url}/x", deadline=now() + 10, what="m")
            except AuthError as exc:
                outcome.append(exc)

        worker = threading.Thread(target=call, name="test-auth-close")
        worker.start()
        assert arrived.wait(5)
        started = time.monotonic()
        http.close()
        worker.join(5)
        assert not worker.is_alive() and time.monotonic() - started < 2
        assert len(outcome) == 1 and "closed" in str(outcome[0])
        with pytest.raises(AuthError):
            http.get_json(f"{raw.url}/x", deadline=soon(), what="m")


def test_secrets_never_reach_errors() -> None:
    def reset(conn: socket.socket, stop: threading.Event) -> None:
        read_request_head(conn)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")

    with RawServer(reset) as raw:
        with pytest.raises(AuthError) as excinfo:
            SafeHTTP(LOOPBACK).post_form(
                f"{raw.url}/token?client_secret=TOPSECRET",
                {"client_secret": "TOPSECRET"},
                deadline=soon(),
                what="token endpoint",
                basic=("id", "TOPSECRET"),
            )
        err = excinfo.value
        text = f"{err} {err!r} {err.__cause__!r} {err.__context__!r}"
        assert "TOPSECRET" not in text
        assert excinfo.value.__cause__ is None


def test_importing_mcpclient_auth_leaves_the_http_stack_unloaded() -> None:
    # requests is imported by the first exchange, not by mcpclient.auth.
    script = (
        "import sys, mcpclient.auth\n"
        "print(sorted(m for m in ('requests', 'urllib3') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
