"""mcpclient.auth.authorize: PKCE, state, URL checks, and the loopback redirect listener.

The listener is exercised over real loopback sockets with ``http.client`` and
raw sockets (for requests a browser would never send).
"""

from __future__ import annotations

import hmac
import http.client
import re
import socket
import threading
import urllib.parse
import webbrowser
from collections.abc import Iterator
from typing import Any

import pytest

from mcpclient._core.deadline import now
from mcpclient.auth import authorize
from mcpclient.auth.authorize import (
    LoopbackReceiver,
    authorization_url,
    check_browser_url,
    code_from_redirect,
    new_pkce,
    new_state,
    open_system_browser,
    s256_challenge,
)
from mcpclient.errors import AuthError, FailureClass

ISSUER = "https://as.example/tenant"
STATE = "state-SECRET-0123456789"
CODE = "code-SECRET-abcdef"
MARK = "REFLECTED-MARK-7f3a"


# --- PKCE and state ---


def test_pkce_s256_matches_rfc7636_appendix_b() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert s256_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_new_pkce_is_fresh_43_char_unreserved_verifier_with_its_challenge() -> None:
    pairs = {new_pkce() for _ in range(20)}
    assert len(pairs) == 20
    for verifier, challenge in pairs:
        assert len(verifier) == 43
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", verifier)
        assert challenge == s256_challenge(verifier)
        assert len(challenge) == 43


def test_new_state_is_fresh_and_unguessable() -> None:
    states = {new_state() for _ in range(20)}
    assert len(states) == 20
    assert all(len(s) >= 43 for s in states)


# --- the authorization URL ---


def query_of(url: str) -> list[tuple[str, str]]:
    return urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True)


def test_authorization_url_keeps_the_endpoint_query_and_our_params_win() -> None:
    url = authorization_url(
        "https://as.example/authorize?tenant=t1&client_id=evil#frag",
        {"client_id": "mine", "scope": "a b", "state": STATE},
    )
    parts = urllib.parse.urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == (
        "https",
        "as.example",
        "/authorize",
        "",
    )
    assert query_of(url) == [
        ("tenant", "t1"),
        ("client_id", "mine"),
        ("scope", "a b"),
        ("state", STATE),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "https://as.example/authorize?x=1",
        "https://AS.example:8443/a",
        "http://127.0.0.1:9000/authorize",
        "http://localhost/authorize",
        "http://[::1]:8080/authorize",
    ],
)
def test_check_browser_url_accepts_https_and_loopback_http(url: str) -> None:
    check_browser_url(url, allow_loopback_http=True)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("javascript:alert(1)", True),
        ("JavaScript:alert(document.cookie)//https://as.example", True),
        ("data:text/html,<script>alert(1)</script>", True),
        ("file:///etc/passwd", True),
        ("vbscript:msgbox", True),
        ("ftp://as.example/authorize", True),
        ("http://as.example/authorize", True),
        ("http://10.0.0.1/authorize", True),
        ("http://127.0.0.1/authorize", False),
        ("https://user:pw@as.example/authorize", True),
        ("https:///no-host", True),
        ("https://as.example/a b", True),
        ("https://as.example/a\nb", True),
        ("https://as.example/" + "a" * 9000, True),
        ("", True),
    ],
)
def test_check_browser_url_refuses(url: str, loopback: bool) -> None:
    with pytest.raises(AuthError) as caught:
        check_browser_url(url + f"?state={STATE}", allow_loopback_http=loopback)
    assert caught.value.failure_class is FailureClass.AUTH_FAILED
    assert STATE not in str(caught.value)


@pytest.fixture
def browser_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record what would reach the system browser instead of opening one."""
    calls: list[str] = []

    def fake_open(url: str, new: int = 0, autoraise: bool = True) -> bool:
        calls.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    return calls


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "http://as.example/authorize",
    ],
)
def test_open_system_browser_refuses_before_any_browser_opens(
    url: str, browser_calls: list[str]
) -> None:
    with pytest.raises(AuthError):
        open_system_browser(url)
    assert browser_calls == []


def test_open_system_browser_opens_an_allowed_url(browser_calls: list[str]) -> None:
    open_system_browser("https://as.example/authorize?state=x")
    open_system_browser("http://127.0.0.1:8000/authorize")
    assert browser_calls == [
        "https://as.example/authorize?state=x",
        "http://127.0.0.1:8000/authorize",
    ]


def test_open_system_browser_without_a_browser_is_auth_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(webbrowser, "open", lambda *a, **k: False)
    with pytest.raises(AuthError) as caught:
        open_system_browser("https://as.example/authorize")
    assert caught.value.failure_class is FailureClass.AUTH_REQUIRED


# --- callback checks on a redirect URL (headless) ---


def redirect(**params: str) -> str:
    return "http://127.0.0.1/callback?" + urllib.parse.urlencode(params)


def code_of(url: str, *, iss_required: bool = False) -> str:
    return code_from_redirect(url, state=STATE, issuer=ISSUER, iss_required=iss_required)


def failure_of(url: str, *, iss_required: bool = False) -> AuthError:
    with pytest.raises(AuthError) as caught:
        code_of(url, iss_required=iss_required)
    for secret in (STATE, CODE):
        assert secret not in str(caught.value)
        assert secret not in repr(caught.value)
    return caught.value


def test_redirect_with_state_and_code() -> None:
    assert code_of(redirect(code=CODE, state=STATE)) == CODE
    assert code_of(redirect(code=CODE, state=STATE, iss=ISSUER), iss_required=True) == CODE


def test_redirect_state_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert code_of(redirect(code=CODE, state=STATE)) == CODE
    assert seen == [(STATE.encode(), STATE.encode())]


@pytest.mark.parametrize(
    "url",
    [
        redirect(code=CODE, state="wrong"),
        redirect(code=CODE, state=STATE[:-1]),
        redirect(code=CODE),
        redirect(code=CODE, state=""),
        redirect(code=CODE, state=STATE) + "&state=" + STATE,
    ],
)
def test_redirect_with_a_wrong_or_missing_state_fails(url: str) -> None:
    error = failure_of(url)
    assert error.failure_class is FailureClass.AUTH_FAILED
    assert "state" in error.message


@pytest.mark.parametrize(
    "iss",
    [
        "https://evil.example/tenant",
        ISSUER + "/",  # normalized-but-different: trailing slash
        "https://AS.example/tenant",  # normalized-but-different: case
        "https://as.example:443/tenant",  # normalized-but-different: default port
        "",
    ],
)
def test_redirect_with_a_different_iss_fails_and_hides_its_error_fields(iss: str) -> None:
    url = redirect(code=CODE, state=STATE, iss=iss, error="access_denied", error_description=MARK)
    error = failure_of(url)
    assert error.failure_class is FailureClass.AUTH_FAILED
    assert "iss mismatch" in error.message
    assert MARK not in error.message


def test_redirect_missing_iss_fails_only_when_required() -> None:
    error = failure_of(redirect(code=CODE, state=STATE), iss_required=True)
    assert error.failure_class is FailureClass.AUTH_FAILED
    assert "iss" in error.message
    assert code_of(redirect(code=CODE, state=STATE), iss_required=False) == CODE


def test_redirect_errors_are_classified_and_bounded() -> None:
    denied = failure_of(redirect(state=STATE, error="access_denied"))
    assert denied.failure_class is FailureClass.AUTH_DENIED
    long_text = "x" * 1000 + "\x1b[31m"
    other = failure_of(redirect(state=STATE, error="server_error", error_description=long_text))
    assert other.failure_class is FailureClass.AUTH_FAILED
    assert "server_error" in other.message
    assert "x" * 201 not in other.message
    assert "\x1b" not in other.message
    none = failure_of(redirect(state=STATE))
    assert none.failure_class is FailureClass.AUTH_FAILED
    assert "no code" in none.message


# --- the loopback listener ---


@pytest.fixture
def receiver() -> Iterator[LoopbackReceiver]:
    with LoopbackReceiver() as made:
        yield made


def port_of(receiver: LoopbackReceiver) -> int:
    return urllib.parse.urlsplit(receiver.redirect_uri).port or 0


def get(receiver: LoopbackReceiver, target: str, method: str = "GET") -> tuple[int, bytes, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port_of(receiver), timeout=5)
    try:
        conn.request(method, target)
        reply = conn.getresponse()
        return reply.status, reply.read(), str(reply.headers)
    finally:
        conn.close()


def raw(receiver: LoopbackReceiver, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port_of(receiver)), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def callback(**params: str) -> str:
    return "/callback?" + urllib.parse.urlencode(params)


def still_waiting(receiver: LoopbackReceiver) -> bool:
    try:
        receiver.wait(deadline=now() + 0.2, cancelled=threading.Event())
    except AuthError as exc:
        return exc.failure_class is FailureClass.AUTH_REQUIRED and "in time" in exc.message
    return False


def test_receiver_listens_on_127_0_0_1_callback(receiver: LoopbackReceiver) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", receiver.redirect_uri)
    assert port_of(receiver) > 0
    assert STATE not in repr(receiver)


def test_receiver_returns_the_code_and_shows_a_fixed_page(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, True)
    status, body, headers = get(receiver, callback(code=CODE, state=STATE, iss=ISSUER))
    assert status == 200
    assert b"Authorization complete" in body
    assert CODE.encode() not in body
    assert CODE not in headers
    assert receiver.wait(deadline=now() + 5, cancelled=threading.Event()) == CODE


def test_receiver_ignores_a_forged_callback_and_keeps_waiting(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    status, body, headers = get(receiver, callback(code=MARK, state="forged-" + MARK))
    assert status == 400
    assert MARK.encode() not in body
    assert MARK not in headers
    assert still_waiting(receiver)
    # an attacker's error=access_denied cannot end the flow either
    status, _, _ = get(receiver, callback(error="access_denied", state="forged"))
    assert status == 400
    assert still_waiting(receiver)
    status, _, _ = get(receiver, callback(code=CODE, state=STATE))
    assert status == 200
    assert receiver.wait(deadline=now() + 5, cancelled=threading.Event()) == CODE


def test_receiver_ignores_callbacks_before_it_is_armed(receiver: LoopbackReceiver) -> None:
    status, _, _ = get(receiver, callback(code=CODE, state=STATE))
    assert status == 400
    receiver.arm(STATE, ISSUER, False)
    assert still_waiting(receiver)


def test_receiver_compares_state_in_constant_time(
    receiver: LoopbackReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        seen.append(b)
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    receiver.arm(STATE, ISSUER, False)
    get(receiver, callback(code=CODE, state="nope"))
    get(receiver, callback(code=CODE, state=STATE))
    assert seen == [STATE.encode(), STATE.encode()]


@pytest.mark.parametrize("path", ["/", "/favicon.ico", "/callback/extra", "/Callback", f"/{MARK}"])
def test_receiver_answers_404_elsewhere_and_reflects_nothing(
    receiver: LoopbackReceiver, path: str
) -> None:
    receiver.arm(STATE, ISSUER, False)
    status, body, headers = get(receiver, f"{path}?code={MARK}&state={STATE}")
    assert status == 404
    assert MARK.encode() not in body
    assert MARK not in headers
    assert still_waiting(receiver)


def test_receiver_refuses_other_methods_and_junk_without_reflecting(
    receiver: LoopbackReceiver,
) -> None:
    receiver.arm(STATE, ISSUER, False)
    status, body, _ = get(receiver, callback(code=CODE, state=STATE), method="POST")
    assert status == 405
    assert CODE.encode() not in body
    for junk in (
        f"{MARK} /callback HTTP/1.1\r\n\r\n".encode(),
        f"GET /callback?{MARK} HTTP/9.{MARK}\r\n\r\n".encode(),
        f"GET {MARK}\r\n\r\n".encode(),
        b"\x16\x03\x01" + MARK.encode() + b"\r\n\r\n",
    ):
        answer = raw(receiver, junk)
        assert answer  # answered (with a fixed text), not just dropped
        assert MARK.encode() not in answer
    assert still_waiting(receiver)
    status, _, _ = get(receiver, callback(code=CODE, state=STATE))
    assert status == 200


def test_receiver_bounds_the_request_head(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    filler = b"".join(b"X-Fill-%d: %s\r\n" % (n, b"y" * 1000) for n in range(80))
    answer = raw(
        receiver,
        f"GET {callback(code=CODE, state=STATE)} HTTP/1.1\r\nHost: x\r\n".encode()
        + filler
        + b"\r\n",
    )
    assert answer.startswith(b"HTTP/1.0 431") or answer.startswith(b"HTTP/1.0 400")
    assert still_waiting(receiver)  # an oversized request never resolves the flow


def test_receiver_is_one_shot_and_closes(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    get(receiver, callback(code=CODE, state=STATE))
    assert receiver.wait(deadline=now() + 5, cancelled=threading.Event()) == CODE
    with pytest.raises(ConnectionRefusedError):
        get(receiver, callback(code="second", state=STATE))
    assert receiver.wait(deadline=now() + 5, cancelled=threading.Event()) == CODE


def test_receiver_close_releases_the_port_and_its_thread() -> None:
    with LoopbackReceiver() as made:
        port = port_of(made)
        assert any(t.name == "mcpclient-auth-callback" for t in threading.enumerate())
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert not any(t.name == "mcpclient-auth-callback" for t in threading.enumerate())
    made.close()  # idempotent


def test_receiver_reports_denial_and_iss_failures(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    status, body, _ = get(receiver, callback(error="access_denied", state=STATE))
    assert status == 400
    assert b"did not complete" in body
    with pytest.raises(AuthError) as caught:
        receiver.wait(deadline=now() + 5, cancelled=threading.Event())
    assert caught.value.failure_class is FailureClass.AUTH_DENIED


@pytest.mark.parametrize(
    ("iss", "required"),
    [
        ("https://evil.example/tenant", False),
        (ISSUER + "/", False),
        ("HTTPS://as.example/tenant", False),
        (None, True),
    ],
)
def test_receiver_checks_iss(iss: str | None, required: bool) -> None:
    with LoopbackReceiver() as receiver:
        receiver.arm(STATE, ISSUER, required)
        params = {"code": CODE, "state": STATE}
        if iss is not None:
            params["iss"] = iss
        status, _, _ = get(receiver, callback(**params))
        assert status == 400
        with pytest.raises(AuthError) as caught:
            receiver.wait(deadline=now() + 5, cancelled=threading.Event())
        assert caught.value.failure_class is FailureClass.AUTH_FAILED
        assert CODE not in str(caught.value)


def test_receiver_wait_honors_cancel_and_deadline(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    cancelled = threading.Event()
    cancelled.set()
    started = now()
    with pytest.raises(AuthError, match="cancelled") as caught:
        receiver.wait(deadline=now() + 60, cancelled=cancelled)
    assert caught.value.failure_class is FailureClass.AUTH_REQUIRED
    with pytest.raises(AuthError, match="in time"):
        receiver.wait(deadline=now() + 0.1, cancelled=threading.Event())
    assert now() - started < 5


def test_receiver_cancel_from_another_thread_wakes_the_waiter(receiver: LoopbackReceiver) -> None:
    receiver.arm(STATE, ISSUER, False)
    cancelled = threading.Event()
    timer = threading.Timer(0.2, cancelled.set)
    timer.start()
    started = now()
    try:
        with pytest.raises(AuthError, match="cancelled"):
            receiver.wait(deadline=now() + 60, cancelled=cancelled)
    finally:
        timer.join()
    assert now() - started < 5


def test_receiver_survives_an_idle_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(authorize, "SOCKET_TIMEOUT", 0.3)
    monkeypatch.setattr(authorize._Handler, "timeout", 0.3)
    with LoopbackReceiver() as receiver:
        receiver.arm(STATE, ISSUER, False)
        with socket.create_connection(("127.0.0.1", port_of(receiver)), timeout=5) as idle:
            # the idle peer is cut after the socket timeout; the real callback then gets through
            status, _, _ = get(receiver, callback(code=CODE, state=STATE))
            assert status == 200
            assert idle.recv(100) == b""  # the listener hung up on the idle peer
        assert receiver.wait(deadline=now() + 5, cancelled=threading.Event()) == CODE
