"""Definition(keepalive=...): pings on an idle HTTP binding; reconnect after failed ones."""

from __future__ import annotations

import time
from typing import Any

import pytest

import mcpclient
from mcpclient import Keepalive, KeepaliveFailed, KeepaliveLost, State
from mcpclient._core import watcher
from mcpclient._internal.client.lifecycle.keepalive import KeepaliveWatch
from mcpclient.testing.proxy import IdleDropProxy
from tests.integration.test_fork import in_fork, library_threads_in_child
from tests.support import Events, wait_until
from tests.support.http_servers import ScriptedServer, body_method, http_definition

from .conftest import SpawnHttp

FAST_RETRY = mcpclient.ReconnectPolicy(
    retry=mcpclient.RetryPolicy(attempts=64, base_delay=0.05, max_delay=0.2)
)
QUICK = Keepalive(interval=0.2)


@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def server(era: str, spawn_http: SpawnHttp) -> ScriptedServer:
    return spawn_http("--era", era)


def _pings(server: ScriptedServer, tag: str) -> int:
    """The keepalive probes the server got: ``ping``, or in the 2026-07-28 era (no
    ping) a ``server/discover`` after the connect's own (its catalog pages follow it)."""
    probes, listed = 0, False
    for entry in server.records(tag):
        method = body_method(entry)
        listed = listed or (method or "").endswith("/list")
        probes += method == "ping" or (method == "server/discover" and listed)
    return probes


def _live_watch_timers() -> int:
    """Keepalive ticks still pending on the process-wide watcher."""
    with watcher._cond:
        return sum(
            not timer.cancelled
            and getattr(timer.callback, "__self__", None).__class__ is KeepaliveWatch
            for _, _, timer in watcher._heap
        )


def test_pings_reach_the_server_only_while_idle(server: ScriptedServer) -> None:
    events = Events()
    defn = http_definition(server.url, tag="idle", keepalive=QUICK)
    with mcpclient.connect(defn, mcpclient.Handlers(event=events)) as client:
        assert wait_until(lambda: _pings(server, "idle") >= 2, 5.0)
        # A call in flight is activity: no ping while it runs (one already on
        # its way when the call started may still arrive).
        before = _pings(server, "idle")
        assert client.call_tool("slow", {"seconds": 1.2}).text == "slept 1.2 s"
        assert _pings(server, "idle") <= before + 1
        # Calls one after another: never idle for an interval, so no ping.
        before = _pings(server, "idle")
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            assert client.call_tool("echo", {"message": "busy"}).text == "busy"
        assert _pings(server, "idle") <= before + 1
        # Idle again: the pings resume.
        after = _pings(server, "idle")
        assert wait_until(lambda: _pings(server, "idle") >= after + 2, 5.0)
        # Every ping was answered (the modern era's -32601 too): nothing failed.
        assert not events.of(KeepaliveFailed) and not events.of(mcpclient.ConnectionLost)


def test_unanswered_pings_lose_the_connection_and_the_binding_reconnects(
    era: str, spawn_http: SpawnHttp
) -> None:
    srv = spawn_http("--era", era, "--ignore-pings")
    events = Events()
    defn = http_definition(
        srv.url,
        tag="deaf",
        keepalive=Keepalive(interval=0.2, failures=2),
        reconnect=FAST_RETRY,
    )
    with mcpclient.connect(defn, mcpclient.Handlers(event=events)) as client:
        if era == "modern":
            # The probe is server/discover, which this server no longer
            # answers after the connect's: the reconnect cannot finish
            # either (a server that stopped answering), so stop at the loss.
            events.wait(mcpclient.ConnectionLost, timeout=10.0)
            assert wait_until(lambda: client.status().state is State.RECONNECTING, 5.0)
        else:
            events.wait(mcpclient.ConnectionRestored, timeout=10.0)
        kinds = (KeepaliveFailed, KeepaliveLost, mcpclient.ConnectionLost)
        first = [e for e in events if isinstance(e, kinds)][:4]
        assert [type(e) for e in first] == [KeepaliveFailed, KeepaliveFailed, *kinds[1:]]
        assert [e.failures for e in first[:2]] == [1, 2]
        assert first[0].problem  # says what went wrong (a passed deadline)
        assert first[2].failures == 2
        assert first[3].retrying is True
        if era == "modern":
            return
        states = [e.to_state for e in events if isinstance(e, mcpclient.StateChanged)]
        reconnecting = states.index(State.RECONNECTING)
        assert State.READY in states[reconnecting:]
        # The restored binding works, and its watch starts again.
        assert client.call_tool("echo", {"message": "back"}).text == "back"
        lost = len(events.of(KeepaliveLost))
        events.wait(KeepaliveLost, lost + 1, timeout=10.0)


def test_keepalive_false_sends_no_ping(server: ScriptedServer) -> None:
    defn = http_definition(server.url, tag="off", keepalive=False)
    with mcpclient.connect(defn) as client:
        assert client.call_tool("echo", {"message": "x"}).text == "x"
        # Bounded: with keepalive on, pings arrive within this (the test above).
        assert not wait_until(lambda: _pings(server, "off") > 0, 1.0)
        assert _live_watch_timers() == 0


def test_close_stops_the_pings(server: ScriptedServer) -> None:
    defn = http_definition(server.url, tag="close", keepalive=QUICK)
    client = mcpclient.connect(defn)
    try:
        assert wait_until(lambda: _pings(server, "close") >= 1, 5.0)
    finally:
        client.close()
    assert _live_watch_timers() == 0
    after = _pings(server, "close")
    assert not wait_until(lambda: _pings(server, "close") > after, 1.0)


def test_a_forked_child_sends_no_ping(server: ScriptedServer) -> None:
    defn = http_definition(server.url, tag="fork", keepalive=QUICK)
    with mcpclient.connect(defn) as client:
        assert wait_until(lambda: _pings(server, "fork") >= 1, 5.0)

        def child() -> dict[str, Any]:
            # Bounded: in the parent, a tick comes every 0.2 s.
            ticked = wait_until(lambda: _live_watch_timers() > 0 or library_threads_in_child(), 1.0)
            failure = client.status().failure
            return {
                "ticked": ticked,
                "threads": library_threads_in_child(),
                "failure": str(failure.failure_class) if failure else None,
            }

        assert in_fork(child) == {"ticked": False, "threads": [], "failure": "forked"}
        # The parent's watch goes on.
        after = _pings(server, "fork")
        assert wait_until(lambda: _pings(server, "fork") > after, 5.0)


@pytest.mark.parametrize("keepalive", [True, False], ids=["on", "off"])
def test_behind_a_proxy_that_cuts_idle_connections(keepalive: bool, spawn_http: SpawnHttp) -> None:
    # The load balancer of issue 32: it cuts a connection idle for 1 s
    # without telling either side (IdleDropProxy). Probing every 0.2 s keeps
    # the connection the calls use from ever being idle, so the call after a
    # quiet spell succeeds; without the keepalive that call's bytes go nowhere
    # and it fails at its deadline.
    srv = spawn_http("--era", "legacy")
    authority, path = srv.url.split("//", 1)[1].split("/", 1)
    host, port = authority.rsplit(":", 1)
    with IdleDropProxy((host, int(port)), idle=1.0) as proxy:
        defn = http_definition(
            f"http://127.0.0.1:{proxy.port}/{path}",
            tag="proxied",
            keepalive=Keepalive(interval=0.2) if keepalive else False,
            protocol="legacy",
        )
        with mcpclient.connect(defn) as client:
            assert client.call_tool("echo", {"message": "a"}).text == "a"
            time.sleep(2.5)  # the quiet spell is the behavior under test
            assert proxy.drops >= 1  # the proxy did cut what was idle
            if keepalive:
                assert _pings(srv, "proxied") >= 2  # the probes kept it in use
                assert client.call_tool("echo", {"message": "b"}, timeout=5).text == "b"
            else:
                with pytest.raises(mcpclient.DeadlineExceededError):
                    client.call_tool("echo", {"message": "b"}, timeout=1.5)
