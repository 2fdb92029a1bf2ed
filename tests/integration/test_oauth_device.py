"""The device authorization grant (RFC 8628) end to end: ``DeviceCodeGrant`` against
the bundled authorization server and the protected test server over loopback.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

import mcpclient
from mcpclient.auth import ClientInfo, DeviceCode, DeviceCodeGrant, MemoryTokenStore, OAuth
from mcpclient.auth import device as device_module
from mcpclient.errors import AuthError, FailureClass
from tests.support.waiting import wait_until

from .auth_support import AuthServer, OAuthPeers, ProtectedServer, oauth_peers

__all__ = ["oauth_peers"]

GRANT_DEVICE = "urn:ietf:params:oauth:grant-type:device_code"
#: Tiny server intervals keep the tests short; the client honors what it is told.
INTERVAL = 0.05


class Device:
    """One test's peers and the codes its grant was shown."""

    def __init__(self, peers: OAuthPeers, **knobs: Any) -> None:
        knobs.setdefault("device", True)
        knobs.setdefault("device_interval", INTERVAL)
        self.auth: AuthServer = peers.auth(scopes_supported=("mcp",), **knobs)
        self.server: ProtectedServer = peers.protected(self.auth, "--oauth-scopes", "mcp")
        self.codes: list[DeviceCode] = []
        self.shown = threading.Event()
        self.clients: list[mcpclient.Client] = []
        self._threads: list[threading.Thread] = []
        self.at_once: Callable[[DeviceCode], None] | None = None

    def on_code(self, code: DeviceCode) -> None:
        self.codes.append(code)
        if self.at_once is not None:
            self.at_once(code)  # before the first poll
        self.shown.set()

    def decide_at_once(self, action: str) -> None:
        """``action`` the code from the callback itself, before any poll."""
        self.at_once = lambda code: self.auth.decide_device(code.user_code, action)

    def then(self, action: Callable[[DeviceCode], None]) -> None:
        """Run ``action`` with the code, on a thread, once the grant showed it."""

        def run() -> None:
            assert self.shown.wait(10.0)
            action(self.codes[0])

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self._threads.append(thread)

    def after_polls(self, count: int, action: str) -> None:
        """``action`` the code once the token endpoint was polled ``count`` times for it."""

        def run(code: DeviceCode) -> None:
            assert wait_until(lambda: len(self.auth.device_polls(code.user_code)) >= count, 10.0)
            self.auth.decide_device(code.user_code, action)

        self.then(run)

    def connect(
        self, *, auth_seconds: float = 10.0, store: MemoryTokenStore | None = None, **kw: Any
    ) -> mcpclient.Client:
        store = store if store is not None else MemoryTokenStore()
        provider = OAuth(grant=DeviceCodeGrant(on_code=self.on_code), store=store)
        transport = mcpclient.StreamableHTTPTransport(self.server.url, auth=provider)
        timeouts = mcpclient.Timeouts(startup=auth_seconds + 5.0, auth=auth_seconds)
        client = mcpclient.connect(mcpclient.Definition("dev", transport, timeouts=timeouts), **kw)
        self.clients.append(client)
        return client

    def connect_fails(self, failure_class: FailureClass) -> AuthError:
        with pytest.raises(AuthError) as info:
            self.connect()
        assert info.value.failure_class is failure_class, info.value
        return info.value

    def polls(self) -> list[float]:
        return self.auth.device_polls(self.codes[0].user_code)

    def close(self) -> None:
        for client in self.clients:
            client.close()
        for thread in self._threads:
            thread.join(10.0)


@pytest.fixture
def device(oauth_peers: OAuthPeers) -> Iterator[Callable[..., Device]]:
    made: list[Device] = []

    def make(**knobs: Any) -> Device:
        made.append(Device(oauth_peers, **knobs))
        return made[-1]

    try:
        yield make
    finally:
        for each in made:
            each.close()


def test_pending_then_approved_the_call_succeeds(device: Callable[..., Device]) -> None:
    env = device()
    env.after_polls(2, "approve")
    client = env.connect()
    assert client.call_tool("echo", {"message": "from the couch"}).text == "from the couch"
    [code] = env.codes
    assert code.verification_uri == env.auth.issuer + "/device"
    assert code.verification_uri_complete == f"{code.verification_uri}?user_code={code.user_code}"
    assert code.expires_at > time.time()
    [asked] = env.auth.requests_to("device")
    assert asked.form["scope"] == "mcp" and asked.form["resource"] == env.server.url
    polls = [r for r in env.auth.requests_to("token") if r.form["grant_type"] == GRANT_DEVICE]
    assert [r.error for r in polls] == ["authorization_pending", "authorization_pending", None]
    # A device client registers for its own grant, with no redirect URIs.
    [registered] = env.auth.requests_to("register")
    assert registered.json["grant_types"] == [GRANT_DEVICE, "refresh_token"]
    assert registered.json["redirect_uris"] == [] and registered.json["response_types"] == []


def test_a_stored_code_flow_registration_is_not_used_for_the_device_grant(
    device: Callable[..., Device],
) -> None:
    # The same store served a browser sign-in at this authorization server
    # first: its client is registered for the code grant only, which the
    # server refuses for a device authorization (unauthorized_client).
    env = device()
    reply = requests.post(
        env.auth.registration_endpoint,
        json={"redirect_uris": ["http://127.0.0.1:1/cb"], "token_endpoint_auth_method": "none"},
        timeout=10.0,
    )
    assert reply.status_code == 201, reply.text
    code_client = reply.json()["client_id"]
    store = MemoryTokenStore()
    # As a store written before grant types were recorded holds it.
    store.save_client(ClientInfo(code_client, issuer=env.auth.issuer))
    env.decide_at_once("approve")
    client = env.connect(store=store)
    assert client.call_tool("echo", {"message": "hi"}).text == "hi"
    [asked] = env.auth.requests_to("device")
    assert asked.form["client_id"] != code_client
    assert store.load_client(env.auth.issuer).grant_types == (GRANT_DEVICE, "refresh_token")


def test_slow_down_grows_the_interval(
    device: Callable[..., Device], monkeypatch: pytest.MonkeyPatch
) -> None:
    # RFC 8628 adds 5 s per slow_down; the module constant is patched to keep the
    # test short, and the growth is read from the server's record of the polls.
    step = 0.3
    monkeypatch.setattr(device_module, "SLOW_DOWN_SECONDS", step)
    env = device()
    env.decide_at_once("slow_down")
    env.after_polls(3, "approve")
    client = env.connect()
    assert client.call_tool("echo", {"message": "slow"}).text == "slow"
    first, second, third, *_ = env.polls()
    polls = [r for r in env.auth.requests_to("token") if r.form["grant_type"] == GRANT_DEVICE]
    assert [r.error for r in polls[:3]] == [
        "slow_down",
        "authorization_pending",
        "authorization_pending",
    ]
    assert polls[-1].error is None
    # Each wait after the slow_down is the base interval plus the increment, for good.
    assert second - first >= INTERVAL + step
    assert third - second >= INTERVAL + step


def test_an_expired_code_is_auth_expired(device: Callable[..., Device]) -> None:
    env = device()
    env.decide_at_once("expire")
    error = env.connect_fails(FailureClass.AUTH_EXPIRED)
    assert "expired_token" in error.message


def test_a_code_past_its_expires_in_is_auth_expired(device: Callable[..., Device]) -> None:
    # The server says expires_in 1 s and never decides: the client stops polling itself.
    env = device(device_lifetime=1.0)
    error = env.connect_fails(FailureClass.AUTH_EXPIRED)
    assert env.codes and env.polls()
    assert "expired" in error.message


def test_a_denied_code_is_auth_denied(device: Callable[..., Device]) -> None:
    env = device()
    env.after_polls(1, "deny")
    error = env.connect_fails(FailureClass.AUTH_DENIED)
    assert "access_denied" in error.message


def test_no_device_endpoint_is_a_classified_error(device: Callable[..., Device]) -> None:
    env = device(device=False)
    error = env.connect_fails(FailureClass.AUTH_FAILED)
    assert "device_authorization_endpoint" in error.message
    assert not env.codes and not env.auth.requests_to("device")


def test_cancelling_connect_ends_the_polling_promptly(device: Callable[..., Device]) -> None:
    # A 60 s interval: only the flow's cancelled event can end the wait early.
    env = device(device_interval=60.0)
    cancel = mcpclient.CancelToken()
    env.then(lambda code: cancel.cancel())
    started = time.monotonic()
    with pytest.raises(mcpclient.Error) as info:
        env.connect(auth_seconds=120.0, cancel=cancel)
    assert info.value.failure_class is FailureClass.CANCELLED
    assert time.monotonic() - started < 30.0
    assert env.codes and not env.polls()
    flows = [t for t in threading.enumerate() if t.name.startswith("mcpclient-auth-")]
    for thread in flows:
        thread.join(5.0)
    assert not [t.name for t in flows if t.is_alive()]
