"""The shared HTTP plumbing (``mcpclient._internal.transport.http``) against local servers.

Each server is a :class:`tests.support.scripted_http.RouteServer` on 127.0.0.1
whose routes write their replies by hand; it is shut down (and its handler
threads joined) at teardown.
Every test also checks that no socket of this process is left open.
"""

from __future__ import annotations

import datetime
import gc
import ipaddress
import logging
import math
import os
import pickle
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests.utils

import mcpclient
from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.transport import http as plumbing
from mcpclient._internal.transport.http_origins import AddressPolicy
from mcpclient._internal.transport.sse import iter_events
from mcpclient.errors import (
    AuthError,
    ConfigError,
    ConnectionLostError,
    DeadlineExceededError,
    FailureClass,
    LimitExceededError,
    ProtocolError,
)
from tests.support import soon
from tests.support.scripted_http import Recorded, RouteServer

SECRET = "s3cr3t-t0ken"


# ---------------------------------------------------------------- local servers


def _socket_fds() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


@pytest.fixture(autouse=True)
def no_socket_left() -> Iterator[None]:
    before = _socket_fds()
    yield
    deadline = time.monotonic() + 3
    while True:
        gc.collect()
        left = _socket_fds() - before
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"sockets left open: {len(left)}"


@pytest.fixture(autouse=True)
def deadline_watcher() -> Iterator[None]:
    watcher.acquire()
    yield
    watcher.release()


@pytest.fixture
def server() -> Iterator[RouteServer]:
    srv = RouteServer()
    yield srv
    srv.close()


@pytest.fixture
def other_server() -> Iterator[RouteServer]:
    srv = RouteServer()
    yield srv
    srv.close()


@dataclass
class Client:
    factory: plumbing.HttpClientFactory
    sessions: list[plumbing.HttpSession] = field(default_factory=list)

    def session(self) -> plumbing.HttpSession:
        session = self.factory.new_session()
        self.sessions.append(session)
        return session


@pytest.fixture
def make_client() -> Iterator[Callable[..., Client]]:
    clients: list[Client] = []

    def make(url: str, **kwargs: Any) -> Client:
        kwargs.setdefault("headers", {"X-Static": "static-value"})
        kwargs.setdefault("auth", lambda: SECRET)
        factory = plumbing.HttpClientFactory(url, schedule=watcher.schedule, binding="b1", **kwargs)
        client = Client(factory)
        clients.append(client)
        return client

    yield make
    for client in clients:
        for session in client.sessions:
            session.close()


JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# ---------------------------------------------------------------- JSON bodies


def test_json_round_trip_with_credentials(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def echo(seen: Recorded) -> None:
        handler = seen.handler
        handler.reply(200, seen.body, {"Content-Type": "application/json"})

    server.routes["/mcp"] = echo
    client = make_client(server.url_for("/mcp"))
    session = client.session()
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    for _ in range(2):  # the second request reuses the pooled connection
        response = plumbing.request(
            session, "POST", server.url_for("/mcp"), body=body, headers=JSON, deadline=soon()
        )
        assert response.status_code == 200
        assert plumbing.read_body(response, max_bytes=1024, deadline=soon()) == body
    first, second = server.requests_to("/mcp")
    assert first.client_port == second.client_port  # a cleanly read body frees its connection
    seen = first
    assert seen.headers["Authorization"] == f"Bearer {SECRET}"
    assert seen.headers["X-Static"] == "static-value"
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["Accept-Encoding"] == "identity"
    assert seen.headers["User-Agent"].startswith("mcpclient/")
    assert "Cookie" not in seen.headers
    for shown in (repr(session), repr(client.factory), repr(session.mcp_config)):
        assert SECRET not in shown and "static-value" not in shown and "/mcp" not in shown


def test_pass_statuses_returns_error_bodies(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}'
    server.routes["/mcp"] = lambda s: s.handler.reply(
        404, error, {"Content-Type": "application/json"}
    )
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session,
        "POST",
        server.url_for("/mcp"),
        body=b"{}",
        headers=JSON,
        deadline=soon(),
        pass_statuses={404},
    )
    assert response.status_code == 404
    assert plumbing.read_body(response, max_bytes=1024, deadline=soon()) == error


def test_body_over_limit_by_content_length(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(200, b"x" * 5000)
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    with pytest.raises(LimitExceededError) as info:
        plumbing.read_body(response, max_bytes=1000, deadline=soon())
    assert info.value.failure_class is FailureClass.LIMIT_EXCEEDED
    assert "5000 bytes declared" in info.value.message


def test_chunked_body_over_limit_is_cut_while_reading(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    written = []

    def endless(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked()
        try:
            for _ in range(2000):
                handler.chunk(b"y" * 1000)
                written.append(1000)
        except OSError:
            return
        handler.end_chunks()

    server.routes["/mcp"] = endless
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    with pytest.raises(LimitExceededError):
        plumbing.read_body(response, max_bytes=2500, deadline=soon())
    assert response.raw.closed


# ---------------------------------------------------------------- SSE streams


def test_sse_stream_with_priming_event(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def stream(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        handler.chunk(b"id: prime-0\nretry: 1500\n\n")
        handler.chunk(b": keep-alive\n\n")
        handler.chunk(b'event: message\nid: 1\ndata: {"jsonrpc":"2.0",')
        handler.chunk(b'"method":"notifications/progress"}\n\n')
        handler.chunk(b'data: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n')
        handler.end_chunks()

    server.routes["/mcp"] = stream
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    assert response.headers["Content-Type"] == "text/event-stream"
    chunks = plumbing.response_chunks(response, deadline=soon())
    found = list(iter_events(chunks, max_event_bytes=4096))
    assert [(e.id, e.retry, e.data) for e in found] == [
        ("prime-0", 1500, ""),
        ("1", None, '{"jsonrpc":"2.0","method":"notifications/progress"}'),
        (None, None, '{"jsonrpc":"2.0","id":1,"result":{}}'),
    ]


def test_oversized_sse_event(server: RouteServer, make_client: Callable[..., Client]) -> None:
    def stream(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        handler.chunk(b"data: small\n\n")
        try:
            handler.chunk(b"data: " + b"z" * 20_000 + b"\n\n")
            handler.end_chunks()
        except OSError:
            pass

    server.routes["/mcp"] = stream
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    events = iter_events(plumbing.response_chunks(response, deadline=soon()), max_event_bytes=4096)
    assert next(events).data == "small"
    with pytest.raises(LimitExceededError):
        next(events)
    events.close()
    assert response.raw.closed


def test_trickling_stream_is_cut_at_its_deadline(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def trickle(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        try:
            while not handler.server.owner.stop.wait(0.05):
                handler.chunk(b"x")  # one byte of a data line that never ends
        except OSError:
            pass

    server.routes["/mcp"] = trickle
    session = make_client(server.url_for("/mcp")).session()
    started = now()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=started + 1.0
    )
    with pytest.raises(DeadlineExceededError) as info:
        for _ in iter_events(
            plumbing.response_chunks(response, deadline=started + 1.0), max_event_bytes=1 << 20
        ):
            pass
    elapsed = now() - started
    assert 0.9 <= elapsed < 2.0
    assert info.value.failure_class is FailureClass.DEADLINE


def test_headers_never_wait_past_the_deadline(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.server.owner.stop.wait(30)
    session = make_client(server.url_for("/mcp")).session()
    started = now()
    with pytest.raises(DeadlineExceededError) as info:
        plumbing.request(
            session,
            "POST",
            server.url_for("/mcp"),
            body=b"{}",
            headers=JSON,
            deadline=started + 0.5,
        )
    assert now() - started < 1.5
    assert "no response headers" in info.value.message


def test_stalled_json_body_is_cut_at_its_deadline(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def stall(seen: Recorded) -> None:
        handler = seen.handler
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        handler.wfile.write(b"{")
        handler.wfile.flush()
        handler.server.owner.stop.wait(30)

    server.routes["/mcp"] = stall
    session = make_client(server.url_for("/mcp")).session()
    started = now()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=started + 0.5
    )
    with pytest.raises(DeadlineExceededError):
        plumbing.read_body(response, max_bytes=1000, deadline=started + 0.5)
    assert now() - started < 1.5


def test_idle_timeout_bounds_silence_on_a_long_lived_stream(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def silent(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        handler.chunk(b": hello\n\n")
        handler.server.owner.stop.wait(30)

    server.routes["/mcp"] = silent
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "GET", server.url_for("/mcp"), headers={}, deadline=soon(), idle_timeout=0.3
    )
    started = now()
    with pytest.raises(ConnectionLostError) as info:
        list(plumbing.response_chunks(response, deadline=math.inf))
    assert now() - started < 1.5
    assert "no data" in info.value.message


def test_keepalive_is_on(server: RouteServer, make_client: Callable[..., Client]) -> None:
    def stream(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        handler.chunk(b"data: 1\n\n")
        handler.end_chunks()

    server.routes["/mcp"] = stream
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(session, "GET", server.url_for("/mcp"), headers={}, deadline=soon())
    conn = response.raw._connection
    assert conn is not None and conn.sock is not None
    sock = conn.sock
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    response.close()


# ---------------------------------------------------------------- redirects


def test_307_same_origin_is_followed_with_body_and_credentials(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(307, headers={"Location": "/mcp/"})
    server.routes["/mcp/"] = lambda s: s.handler.reply(200, s.body)
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b'{"x":1}', headers=JSON, deadline=soon()
    )
    assert plumbing.read_body(response, max_bytes=100, deadline=soon()) == b'{"x":1}'
    moved = server.requests_to("/mcp/")
    assert [s.method for s in moved] == ["POST"]
    assert moved[0].headers["Authorization"] == f"Bearer {SECRET}"


def test_redirect_body_is_never_read(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    # requests reads a redirect's whole body even with allow_redirects=False.
    def endless_redirect(seen: Recorded) -> None:
        handler = seen.handler
        handler.send_response(307)
        handler.send_header("Location", "/mcp/")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        try:
            while not handler.server.owner.stop.wait(0.01):
                handler.chunk(b"r" * 65536)
        except OSError:
            pass

    server.routes["/mcp"] = endless_redirect
    server.routes["/mcp/"] = lambda s: s.handler.reply(200, b"moved")
    session = make_client(server.url_for("/mcp")).session()
    started = now()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    assert plumbing.read_body(response, max_bytes=100, deadline=soon()) == b"moved"
    assert now() - started < 1.0


@pytest.mark.parametrize("status", [301, 302, 303])
def test_post_is_never_turned_into_a_get(
    server: RouteServer, make_client: Callable[..., Client], status: int
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(status, headers={"Location": "/other"})
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPStatusError) as info:
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert info.value.failure_class is FailureClass.REMOTE_HTTP
    assert info.value.status == status
    assert server.requests_to("/other") == []


def test_get_follows_302_on_the_same_origin(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/sse"] = lambda s: s.handler.reply(302, headers={"Location": "/sse2?x=1"})
    server.routes["/sse2"] = lambda s: s.handler.reply(200, b"ok")
    session = make_client(server.url_for("/sse")).session()
    response = plumbing.request(session, "GET", server.url_for("/sse"), headers={}, deadline=soon())
    assert plumbing.read_body(response, max_bytes=10, deadline=soon()) == b"ok"


def test_redirect_to_another_origin_is_refused(
    server: RouteServer, other_server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(
        307, headers={"Location": other_server.url_for("/mcp")}
    )
    other_server.routes["/mcp"] = lambda s: s.handler.reply(200, b"stolen")
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPStatusError) as info:
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert "another origin" in info.value.message
    assert str(other_server.port) not in str(info.value)
    assert other_server.requests == []


@pytest.mark.parametrize("method", ["PUT", "get", "PATCH"])
def test_request_sends_only_get_post_or_delete(
    server: RouteServer, make_client: Callable[..., Client], method: str
) -> None:
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(ValueError, match="method must be one of"):
        plumbing.request(session, method, server.url_for("/mcp"), deadline=soon())
    assert server.requests == []


def test_localhost_is_another_origin_than_127_0_0_1(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    target = f"http://localhost:{server.port}/mcp/"
    server.routes["/mcp"] = lambda s: s.handler.reply(308, headers={"Location": target})
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPStatusError):
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert server.requests_to("/mcp/") == []


def test_redirect_loop_is_bounded(server: RouteServer, make_client: Callable[..., Client]) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(307, headers={"Location": "/mcp"})
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPStatusError, match="more than 5 redirects"):
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert len(server.requests_to("/mcp")) == 1 + plumbing.MAX_REDIRECTS


def test_request_to_another_origin_is_refused_before_io(
    server: RouteServer, other_server: RouteServer, make_client: Callable[..., Client]
) -> None:
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(ProtocolError) as info:
        plumbing.request(
            session, "POST", other_server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    assert other_server.requests == []


# ---------------------------------------------------------------- headers and statuses


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\x00b", "a\rb"])
def test_header_injection_is_refused_before_sending(
    server: RouteServer, make_client: Callable[..., Client], value: str
) -> None:
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(ConfigError) as info:
        plumbing.request(
            session,
            "POST",
            server.url_for("/mcp"),
            body=b"{}",
            headers={"Mcp-Name": value},
            deadline=soon(),
        )
    assert "Mcp-Name" in info.value.message
    assert value not in info.value.message
    bad_token = make_client(server.url_for("/mcp"), auth=lambda: "tok\r\nX-Evil: 1").session()
    with pytest.raises(ConfigError):
        plumbing.request(
            bad_token, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert server.requests == []


def test_auth_provider_failure_is_auth_failed(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def broken() -> str:
        raise RuntimeError("boom")

    session = make_client(server.url_for("/mcp"), auth=broken).session()
    with pytest.raises(AuthError) as info:
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert info.value.failure_class is FailureClass.AUTH_FAILED
    assert server.requests == []


def test_401_keeps_the_challenge_out_of_the_message(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    challenge = 'Bearer resource_metadata="https://as.example/meta?k=hidden", scope="mcp"'
    server.routes["/mcp"] = lambda s: s.handler.reply(401, headers={"WWW-Authenticate": challenge})
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPAuthError) as info:
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    err = info.value
    assert isinstance(err, AuthError)
    assert err.failure_class is FailureClass.AUTH_REQUIRED
    assert err.status == 401
    assert err.www_authenticate == challenge
    assert "hidden" not in str(err) and "hidden" not in repr(err)
    assert pickle.loads(pickle.dumps(err)).www_authenticate == challenge


def test_500_and_429_are_remote_http(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(500, b"trace with secrets")
    server.routes["/busy"] = lambda s: s.handler.reply(429, headers={"Retry-After": "7"})
    date = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=60)).strftime(
        "%a, %d %b %Y %H:%M:%S GMT"
    )
    server.routes["/later"] = lambda s: s.handler.reply(503, headers={"Retry-After": date})
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(ProtocolError) as info:
        plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert info.value.failure_class is FailureClass.REMOTE_HTTP
    assert "500" in info.value.message and "secrets" not in info.value.message
    with pytest.raises(plumbing.HTTPStatusError) as busy:
        plumbing.request(
            session, "POST", server.url_for("/busy"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert busy.value.status == 429 and busy.value.retry_after == 7.0
    with pytest.raises(plumbing.HTTPStatusError) as later:
        plumbing.request(
            session, "POST", server.url_for("/later"), body=b"{}", headers=JSON, deadline=soon()
        )
    assert later.value.retry_after is not None and 50 < later.value.retry_after <= 60
    restored = pickle.loads(pickle.dumps(busy.value))
    assert restored.status == 429 and restored.failure_class is FailureClass.REMOTE_HTTP


@pytest.mark.parametrize("status", [404, 405])
def test_404_and_405_are_remote_http(
    server: RouteServer, make_client: Callable[..., Client], status: int
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(status)
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPStatusError) as info:
        plumbing.request(session, "GET", server.url_for("/mcp"), headers={}, deadline=soon())
    assert info.value.status == status
    assert str(status) in info.value.message


# ---------------------------------------------------------------- connection failures


def test_connection_refused_was_not_sent(make_client: Callable[..., Client]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = make_client(f"http://127.0.0.1:{port}/mcp").session()
    with pytest.raises(plumbing.HTTPSendError) as info:
        plumbing.request(
            session,
            "POST",
            f"http://127.0.0.1:{port}/mcp",
            body=b"{}",
            headers=JSON,
            deadline=soon(),
        )
    err = info.value
    assert isinstance(err, ConnectionLostError)
    assert err.failure_class is FailureClass.TRANSPORT_CLOSED
    assert err.sent is False and err.aborted is False
    assert "refused" in err.message
    restored = pickle.loads(pickle.dumps(err))
    assert restored.sent is False and restored.message == err.message


def test_reset_after_the_request_was_written_counts_as_sent(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def hang_up(seen: Recorded) -> None:
        handler = seen.handler
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)

    server.routes["/mcp"] = hang_up
    session = make_client(server.url_for("/mcp")).session()
    with pytest.raises(plumbing.HTTPSendError) as info:
        plumbing.request(
            session,
            "POST",
            server.url_for("/mcp"),
            body=b'{"method":"tools/call"}',
            headers=JSON,
            deadline=soon(),
        )
    assert info.value.sent is True
    assert server.requests_to("/mcp")[0].body == b'{"method":"tools/call"}'


def test_proxies_are_resolved_once(
    server: RouteServer, make_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = requests.utils.get_environ_proxies

    def counting(url: str, no_proxy: str | None = None) -> dict[str, str]:
        calls.append(url)
        return real(url, no_proxy)

    monkeypatch.setattr(requests.utils, "get_environ_proxies", counting)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server.routes["/mcp"] = lambda s: s.handler.reply(200, b"{}")
    client = make_client(server.url_for("/mcp"))
    for session in (client.session(), client.session(), client.session()):
        response = plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
        plumbing.read_body(response, max_bytes=10, deadline=soon())
    assert len(calls) == 1


def test_explicit_proxy_is_used_without_the_environment(
    server: RouteServer, make_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    def forbidden(url: str, no_proxy: str | None = None) -> dict[str, str]:
        raise AssertionError("the environment must not be read")

    monkeypatch.setattr(requests.utils, "get_environ_proxies", forbidden)
    # The "proxy" is our server: a proxied request carries the absolute URL.
    server.routes["http://upstream.invalid/mcp"] = lambda s: s.handler.reply(200, b"via proxy")
    client = make_client("http://upstream.invalid/mcp", proxy=server.url)
    session = client.session()
    response = plumbing.request(
        session, "POST", "http://upstream.invalid/mcp", body=b"{}", headers=JSON, deadline=soon()
    )
    assert plumbing.read_body(response, max_bytes=100, deadline=soon()) == b"via proxy"


# ---------------------------------------------------------------- abort


def test_abort_from_another_thread_unblocks_a_reader(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    def stall(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        handler.chunk(b"data: first\n\n")
        handler.server.owner.stop.wait(30)

    server.routes["/mcp"] = stall
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(session, "GET", server.url_for("/mcp"), headers={}, deadline=soon())
    outcome: list[BaseException] = []
    first = threading.Event()

    def read() -> None:
        try:
            for event in iter_events(
                plumbing.response_chunks(response, deadline=math.inf), max_event_bytes=1024
            ):
                assert event.data == "first"
                first.set()
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, name="test-reader")
    reader.start()
    assert first.wait(5)
    started = now()
    plumbing.abort(response)
    plumbing.abort(response)  # twice is fine
    reader.join(5)
    assert not reader.is_alive()
    assert now() - started < 1.0
    assert len(outcome) == 1
    err = outcome[0]
    assert isinstance(err, plumbing.HTTPSendError) and err.aborted
    assert err.failure_class is FailureClass.TRANSPORT_CLOSED


def test_abort_handle_before_headers(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.server.owner.stop.wait(30)
    session = make_client(server.url_for("/mcp")).session()
    handle = plumbing.AbortHandle()
    timer = threading.Timer(0.2, handle.abort)
    timer.start()
    started = now()
    try:
        with pytest.raises(plumbing.HTTPSendError) as info:
            plumbing.request(
                session,
                "POST",
                server.url_for("/mcp"),
                body=b"{}",
                headers=JSON,
                deadline=soon(10),
                abort_handle=handle,
            )
    finally:
        timer.join()
    assert now() - started < 1.5
    assert info.value.aborted and info.value.sent
    # An aborted handle stops a request before any I/O.
    count = len(server.requests)
    with pytest.raises(plumbing.HTTPSendError):
        plumbing.request(
            session,
            "POST",
            server.url_for("/mcp"),
            body=b"{}",
            headers=JSON,
            deadline=soon(),
            abort_handle=handle,
        )
    assert len(server.requests) == count


def test_abort_after_the_body_ended_does_nothing(
    server: RouteServer, make_client: Callable[..., Client]
) -> None:
    server.routes["/mcp"] = lambda s: s.handler.reply(200, b"{}")
    session = make_client(server.url_for("/mcp")).session()
    response = plumbing.request(
        session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
    )
    assert plumbing.read_body(response, max_bytes=10, deadline=soon()) == b"{}"
    plumbing.abort(response)


# ---------------------------------------------------------------- redaction and TLS


def test_no_query_or_token_in_messages_or_logs(
    server: RouteServer, make_client: Callable[..., Client], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.routes["/mcp"] = lambda s: s.handler.reply(502)
    url = server.url_for("/mcp?session=QUERYSECRET")
    session = make_client(url).session()
    with pytest.raises(ProtocolError) as info:
        plumbing.request(session, "POST", url, body=b"{}", headers=JSON, deadline=soon())
    text = str(info.value) + repr(info.value)
    assert "QUERYSECRET" not in text and SECRET not in text and "/mcp" not in text
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "QUERYSECRET" not in logged and SECRET not in logged
    assert plumbing.origin_of("https://user:pw@h.example:8443/p?q=1#f") == "https://h.example:8443"


def test_factory_from_a_transport(server: RouteServer) -> None:
    transport = mcpclient.StreamableHTTPTransport(
        server.url_for("/mcp"), headers={"X-Api-Key": SECRET}, auth=lambda: "tok"
    )
    factory = plumbing.HttpClientFactory.from_transport(
        transport, schedule=watcher.schedule, binding="t"
    )
    assert factory.origin == f"http://127.0.0.1:{server.port}"
    assert factory.is_same_origin(server.url_for("/other?x=1"))
    assert not factory.is_same_origin(f"http://localhost:{server.port}/mcp")
    server.routes["/mcp"] = lambda s: s.handler.reply(200, b"{}")
    session = factory.new_session()
    try:
        response = plumbing.request(
            session, "POST", server.url_for("/mcp"), body=b"{}", headers=JSON, deadline=soon()
        )
        plumbing.read_body(response, max_bytes=10, deadline=soon())
    finally:
        session.close()
    seen = server.requests_to("/mcp")[0]
    assert seen.headers["X-Api-Key"] == SECRET
    assert seen.headers["Authorization"] == "Bearer tok"


def test_factory_refuses_bad_configuration() -> None:
    with pytest.raises(ConfigError):
        plumbing.HttpClientFactory("ftp://h/x", schedule=watcher.schedule)
    with pytest.raises(ConfigError):
        plumbing.HttpClientFactory("http://u:p@127.0.0.1/x", schedule=watcher.schedule)
    with pytest.raises(ConfigError):
        plumbing.HttpClientFactory(
            "https://127.0.0.1/x", schedule=watcher.schedule, ca_bundle="/nonexistent/ca.pem"
        )


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[RouteServer, Path]]:
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    moment = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(moment - datetime.timedelta(days=1))
        .not_valid_after(moment + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = tmp_path / "cert.pem"
    key_path = tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    srv = RouteServer(tls=context)
    yield srv, cert_path
    srv.close()


def test_tls_is_verified(
    tls_server: tuple[RouteServer, Path], make_client: Callable[..., Client]
) -> None:
    srv, cert_path = tls_server
    srv.routes["/mcp"] = lambda s: s.handler.reply(200, b"secure")
    url = f"https://127.0.0.1:{srv.port}/mcp"
    untrusted = make_client(url).session()
    with pytest.raises(plumbing.HTTPSendError) as info:
        plumbing.request(untrusted, "POST", url, body=b"{}", headers=JSON, deadline=soon())
    assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
    assert info.value.sent is False
    assert "certificate verify failed" in info.value.message
    trusted = make_client(url, ca_bundle=str(cert_path)).session()
    response = plumbing.request(trusted, "POST", url, body=b"{}", headers=JSON, deadline=soon())
    assert plumbing.read_body(response, max_bytes=100, deadline=soon()) == b"secure"
    context = trusted.get_adapter(url)._mcp_ssl_context  # type: ignore[attr-defined]
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def test_tls_stream_is_cut_at_its_deadline(
    tls_server: tuple[RouteServer, Path], make_client: Callable[..., Client]
) -> None:
    srv, cert_path = tls_server

    def trickle(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked("text/event-stream")
        try:
            while not handler.server.owner.stop.wait(0.05):
                handler.chunk(b"x")
        except OSError:
            pass

    srv.routes["/mcp"] = trickle
    url = f"https://127.0.0.1:{srv.port}/mcp"
    session = make_client(url, ca_bundle=str(cert_path)).session()
    started = now()
    response = plumbing.request(
        session, "POST", url, body=b"{}", headers=JSON, deadline=started + 0.6
    )
    with pytest.raises(DeadlineExceededError):
        list(plumbing.response_chunks(response, deadline=started + 0.6))
    assert now() - started < 1.6


def test_plain_http_builds_no_tls_state(make_client: Callable[..., Client]) -> None:
    session = make_client("http://127.0.0.1:9/mcp").session()
    adapter = session.get_adapter("http://127.0.0.1:9/mcp")
    assert adapter._mcp_ssl_context is None  # type: ignore[attr-defined]


# ---------------------------------------------------------------- endpoint factories (OAuth)


@pytest.fixture
def endpoints() -> Iterator[Callable[..., plumbing.HttpSession]]:
    sessions: list[plumbing.HttpSession] = []

    def make(resolve: Callable[[str, int], list[str]], **kwargs: Any) -> plumbing.HttpSession:
        kwargs.setdefault("admit", lambda url: None)
        pin = AddressPolicy(allow_loopback=True, resolve=resolve)
        factory = plumbing.HttpClientFactory.for_endpoints(pin=pin, tls=False, **kwargs)
        session = factory.new_session()
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        session.close()


def test_the_connect_hook_connects_to_the_checked_address(
    server: RouteServer, endpoints: Callable[..., plumbing.HttpSession]
) -> None:
    # "pinned.invalid" resolves nowhere: only the checked answer can reach the server.
    server.routes["/meta"] = lambda s: s.handler.reply(200, b"pinned")
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    session = endpoints(resolve)
    url = f"http://pinned.invalid:{server.port}/meta"
    response = plumbing.request(session, "GET", url, deadline=soon())
    assert plumbing.read_body(response, max_bytes=100, deadline=soon()) == b"pinned"
    assert asked == ["pinned.invalid"]
    assert server.requests[0].headers["Host"] == f"pinned.invalid:{server.port}"


def test_a_refused_address_is_never_contacted(
    server: RouteServer, endpoints: Callable[..., plumbing.HttpSession]
) -> None:
    session = endpoints(lambda host, port: ["127.0.0.1", "10.0.0.7"])
    with pytest.raises(plumbing.HTTPSendError) as info:
        plumbing.request(session, "GET", f"http://mixed.invalid:{server.port}/x", deadline=soon())
    assert info.value.sent is False
    assert "private address (10.0.0.7), which is refused" in info.value.message
    assert server.requests == []


def test_a_redirect_hop_is_checked_by_the_admit_rule(
    server: RouteServer, other_server: RouteServer, endpoints: Callable[..., plumbing.HttpSession]
) -> None:
    server.routes["/a"] = lambda s: s.handler.reply(
        302, headers={"Location": other_server.url_for("/b")}
    )
    other_server.routes["/b"] = lambda s: s.handler.reply(200, b"reached")
    refused = f":{other_server.port}"
    session = endpoints(
        lambda host, port: ["127.0.0.1"],
        admit=lambda url: "not this one" if refused in url else None,
    )
    with pytest.raises(plumbing.HTTPStatusError) as info:
        plumbing.request(session, "GET", server.url_for("/a"), deadline=soon())
    assert "not this one" in info.value.message
    assert other_server.requests == []


def test_without_a_watcher_every_read_is_bounded_by_the_deadline(
    server: RouteServer, endpoints: Callable[..., plumbing.HttpSession]
) -> None:
    def trickle(seen: Recorded) -> None:
        handler = seen.handler
        handler.start_chunked()
        while not handler.server.owner.stop.wait(0.05):
            handler.chunk(b" ")

    server.routes["/slow"] = trickle
    session = endpoints(lambda host, port: ["127.0.0.1"])  # schedule=None: no watcher
    started = now()
    response = plumbing.request(session, "GET", server.url_for("/slow"), deadline=started + 0.5)
    with pytest.raises(DeadlineExceededError):
        plumbing.read_body(response, max_bytes=1 << 20, deadline=started + 0.5)
    assert 0.4 <= now() - started < 2.0
