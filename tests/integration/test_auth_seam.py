"""The auth provider seam, with a provider of our own (not OAuth): DESIGN.md §7.

The testing server's OAuth protection (``--oauth-issuer``) checks HS256 access
tokens; the provider here mints them itself, so these tests pin down what the
client does around any provider: a 401/403 at connect or on a live binding runs
``recover`` once per flow (every caller rejected meanwhile joins it), the
rejected request is sent again (a ``tools/call`` too: the server never ran it),
the binding shows ``authenticating`` meanwhile, the time a person spends does
not count against the startup budget, and a failed flow leaves the binding
where it was with the failure recorded.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
import requests

import mcpclient
from mcpclient import (
    AuthError,
    CallOpts,
    FailureClass,
    Handlers,
    State,
    StateChanged,
    StreamableHTTPTransport,
)
from mcpclient.testing.oauth_common import encode_hs256
from mcpclient.transports import AuthChallenge, AuthProvider
from tests.support import Events
from tests.support.http_servers import ScriptedServer

from .conftest import SpawnHttp

ISSUER = "http://127.0.0.1:9/issuer"  # never contacted: the provider mints its own tokens


class MintingProvider:
    """An :class:`AuthProvider` that mints a fresh valid token in ``recover``."""

    def __init__(
        self,
        secret: bytes,
        resource: str,
        *,
        person_seconds: float = 0.0,
        fail: AuthError | None = None,
        scopes: str = "",
    ) -> None:
        self._secret = secret
        self._resource = resource
        self._person_seconds = person_seconds
        self._fail = fail
        self._scopes = scopes
        self._lock = threading.Lock()
        self._token: str | None = None
        self.challenges: list[AuthChallenge] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def headers_for(self, method: str, url: str) -> Mapping[str, str]:
        with self._lock:
            token = self._token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def recover(
        self, challenge: AuthChallenge, *, deadline: float, cancelled: threading.Event
    ) -> float:
        with self._lock:
            self.challenges.append(challenge)
        self.entered.set()
        assert self.release.wait(10), "the test never released the flow"
        if self._person_seconds:
            time.sleep(self._person_seconds)  # a person at a browser
        if self._fail is not None:
            raise self._fail
        claims = {
            "iss": ISSUER,
            "aud": self._resource,
            "iat": int(time.time()) + 1,  # after any revocation made this second
            "exp": int(time.time()) + 600,
            "scope": self._scopes,
            "client_id": "seam",
            "jti": secrets.token_hex(8),
        }
        with self._lock:
            self._token = encode_hs256(claims, self._secret)
        return self._person_seconds


@pytest.fixture
def protected(spawn_http: SpawnHttp) -> tuple[ScriptedServer, bytes]:
    secret = secrets.token_bytes(32)
    server = spawn_http(
        "--oauth-issuer",
        ISSUER,
        "--oauth-secret",
        secret.hex(),
        "--oauth-tool-scope",
        "echo=tools:echo",
    )
    return server, secret


def _control(server: ScriptedServer, **change: Any) -> dict[str, Any]:
    base = server.url.rsplit("/", 1)[0]
    answer = requests.post(f"{base}/oauth-control", json=change, timeout=5)
    answer.raise_for_status()
    result: dict[str, Any] = answer.json()
    return result


def _calls(server: ScriptedServer, tool: str) -> list[dict[str, Any]]:
    return [
        e
        for e in server.records()
        if e["method"] == "POST"
        and isinstance(e.get("body"), dict)
        and e["body"].get("method") == "tools/call"
        and e["body"].get("params", {}).get("name") == tool
    ]


def _states(recorder: Events) -> list[State]:
    return [e.to_state for e in recorder.of(StateChanged)]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_connect_authorizes_and_shows_authenticating(
    protected: tuple[ScriptedServer, bytes], protocol: str
) -> None:
    server, secret = protected
    provider = MintingProvider(secret, server.url, scopes="tools:echo")
    assert isinstance(provider, AuthProvider)
    recorder = Events()
    definition = mcpclient.Definition(
        "seam", StreamableHTTPTransport(server.url, auth=provider), protocol=protocol
    )
    with mcpclient.connect(definition, Handlers(event=recorder.on_event), timeout=20) as client:
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "in"}).text == "in"
    assert len(provider.challenges) == 1
    challenge = provider.challenges[0]
    assert challenge.status == 401
    assert challenge.sent_authorization is None  # nothing was sent the first time
    assert challenge.url == server.url
    assert challenge.www_authenticate is not None
    assert "Bearer" in challenge.www_authenticate
    states = _states(recorder)
    assert states[:2] == [State.STARTING, State.AUTHENTICATING]
    assert State.READY in states
    assert "sent_authorization" not in repr(challenge)


def test_the_startup_clock_pauses_while_a_person_authorizes(
    protected: tuple[ScriptedServer, bytes],
) -> None:
    server, secret = protected
    # The person takes longer than the whole startup budget.
    provider = MintingProvider(secret, server.url, person_seconds=2.5)
    definition = mcpclient.Definition("seam", StreamableHTTPTransport(server.url, auth=provider))
    with mcpclient.connect(definition, timeout=2.0) as client:
        assert client.status().state is State.READY


def test_a_rejected_call_is_sent_again_after_one_shared_flow(
    protected: tuple[ScriptedServer, bytes],
) -> None:
    server, secret = protected
    provider = MintingProvider(secret, server.url, scopes="tools:echo")
    recorder = Events()
    definition = mcpclient.Definition(
        "seam",
        StreamableHTTPTransport(server.url, auth=provider),
        allow_parallel_calls=True,
    )
    with mcpclient.connect(definition, Handlers(event=recorder.on_event), timeout=20) as client:
        time.sleep(1.1)  # the revocation below must postdate the token's iat
        _control(server, revoke=True)
        provider.entered.clear()
        provider.release.clear()
        results: list[str] = []
        errors: list[BaseException] = []

        def call(n: int) -> None:
            try:
                results.append(
                    client.call_tool("echo", {"message": f"m{n}"}, CallOpts(timeout=20)).text
                )
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=call, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        assert provider.entered.wait(10)
        # The flow is running: the binding says so, and the other callers wait.
        assert client.status().state is State.AUTHENTICATING
        time.sleep(0.3)
        provider.release.set()
        for thread in threads:
            thread.join(20)
        assert errors == []
        assert sorted(results) == ["m0", "m1", "m2", "m3"]
        assert client.status().state is State.READY
    # One flow for the connect and at most one more per wave of rejections
    # (the first one, and any request rejected with the old token after it
    # replaced the token is answered at once by the provider's own check).
    assert 2 <= len(provider.challenges) <= 5
    rejected = [c for c in provider.challenges[1:] if c.sent_authorization]
    assert rejected, "the calls' rejections carried the token they sent"
    statuses = [e["status"] for e in _control(server)["log"] if e.get("tool") == "echo"]
    assert statuses.count(None) == 4  # each call ran exactly once
    assert State.AUTHENTICATING in _states(recorder)[3:]


@pytest.mark.parametrize("submitted", [False, True], ids=["call", "submit"])
def test_a_403_is_recovered_too(
    protected: tuple[ScriptedServer, bytes], submitted: bool, started_threads: list[str]
) -> None:
    server, secret = protected
    provider = MintingProvider(secret, server.url, scopes="")  # lacks tools:echo
    definition = mcpclient.Definition("seam", StreamableHTTPTransport(server.url, auth=provider))
    with mcpclient.connect(definition, timeout=20) as client:
        provider._scopes = "tools:echo"  # what the step-up would obtain
        if submitted:
            # The submitted call joins the flow and is sent again without a thread of its own.
            assert client.submit_tool_call("echo", {"message": "up"}).result(20).text == "up"
            assert not [n for n in started_threads if n.startswith("mcpclient-call-")]
        else:
            assert client.call_tool("echo", {"message": "up"}).text == "up"
    assert [c.status for c in provider.challenges] == [401, 403]
    assert len(_calls(server, "echo")) == 2  # rejected, then run


@pytest.mark.parametrize("how", ["deadline", "cancel"])
def test_a_submitted_call_waiting_for_a_flow_ends_by_its_deadline_or_cancel(
    protected: tuple[ScriptedServer, bytes], how: str
) -> None:
    server, secret = protected
    provider = MintingProvider(secret, server.url, scopes="tools:echo")
    definition = mcpclient.Definition("seam", StreamableHTTPTransport(server.url, auth=provider))
    with mcpclient.connect(definition, timeout=20) as client:
        time.sleep(1.1)  # the revocation below must postdate the token's iat
        _control(server, revoke=True)
        provider.entered.clear()
        provider.release.clear()  # the flow waits for the test
        timeout = 0.5 if how == "deadline" else 20
        future = client.submit_tool_call("echo", {"message": "x"}, CallOpts(timeout=timeout))
        assert provider.entered.wait(10)
        if how == "cancel":
            assert future.cancel()
        else:
            with pytest.raises(mcpclient.DeadlineExceededError) as info:
                future.result(10)  # the watcher ends it while the flow still runs
            assert "authenticating" in info.value.message
        assert not provider.release.is_set()
        provider.release.set()
        # The flow goes on for the binding: the next call uses its token.
        assert client.call_tool("echo", {"message": "next"}, CallOpts(timeout=20)).text == "next"


@pytest.mark.parametrize("submitted", [False, True], ids=["call", "submit"])
def test_a_failed_flow_fails_the_call_and_keeps_the_binding(
    protected: tuple[ScriptedServer, bytes], submitted: bool
) -> None:
    server, secret = protected
    provider = MintingProvider(secret, server.url, scopes="tools:echo")
    definition = mcpclient.Definition("seam", StreamableHTTPTransport(server.url, auth=provider))
    with mcpclient.connect(definition, timeout=20) as client:
        time.sleep(1.1)
        _control(server, revoke=True)
        provider._fail = AuthError("the user said no", failure_class=FailureClass.AUTH_DENIED)
        with pytest.raises(AuthError) as info:
            if submitted:
                client.submit_tool_call("echo", {"message": "no"}, CallOpts(timeout=20)).result(25)
            else:
                client.call_tool("echo", {"message": "no"}, CallOpts(timeout=20))
        assert info.value.failure_class is FailureClass.AUTH_DENIED
        status = client.status()
        assert status.state is State.READY
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.AUTH_DENIED


def test_without_a_provider_a_401_is_auth_required(
    protected: tuple[ScriptedServer, bytes],
) -> None:
    server, _secret = protected
    definition = mcpclient.Definition(
        "seam", StreamableHTTPTransport(server.url, auth=lambda: "not-a-valid-token")
    )
    with pytest.raises(AuthError) as info:
        mcpclient.connect(definition, timeout=20)
    assert info.value.failure_class is FailureClass.AUTH_REQUIRED
    assert type(info.value) is AuthError


def test_a_provider_that_ignores_its_deadline_cannot_hold_connect(
    protected: tuple[ScriptedServer, bytes],
) -> None:
    # Issue 27 item 4, for any provider: connect() waits for a flow no longer
    # than Timeouts.auth (and a short grace), then abandons it.
    server, secret = protected
    provider = MintingProvider(secret, server.url)
    provider.release.clear()
    definition = mcpclient.Definition(
        "seam",
        StreamableHTTPTransport(server.url, auth=provider),
        timeouts=mcpclient.Timeouts(startup=5.0, auth=0.5),
    )
    started = time.monotonic()
    try:
        with pytest.raises(AuthError) as info:
            mcpclient.connect(definition)
        elapsed = time.monotonic() - started
    finally:
        provider.release.set()
    assert provider.entered.is_set()
    assert info.value.failure_class is FailureClass.AUTH_REQUIRED
    assert "did not finish within Timeouts.auth" in info.value.message
    assert elapsed < 6.0, elapsed  # the provider alone would have held it 10 s
    for thread in threading.enumerate():
        if thread.name.startswith("mcpclient-auth-"):
            thread.join(5.0)
