"""HTTP rows of the resilience proving ground: a restarted server, a 404 storm."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import CallOpts, FailureClass, Handlers, State
from tests.support import Events, wait_until
from tests.support.http_servers import (
    ScriptedServer,
    ServerProcess,
    free_port,
    restartable_testing_server,
)

from .conftest import SpawnHttp

FAST_RETRY = mcpclient.ReconnectPolicy(
    retry=mcpclient.RetryPolicy(attempts=64, base_delay=0.05, max_delay=0.2)
)


@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def server(era: str, tmp_path: Path) -> Iterator[ServerProcess]:
    """The testing server in HTTP mode on a fixed port, restartable."""
    with restartable_testing_server(tmp_path, "--era", era) as srv:
        yield srv


def _lost_and_restored(events: Events) -> tuple[int, int]:
    # Events reach their handler on a lane of their own, maybe after the call
    # that saw the binding back has returned: wait for the restore to arrive.
    wait_until(lambda: any(isinstance(e, mcpclient.ConnectionRestored) for e in events))
    lost = sum(isinstance(e, mcpclient.ConnectionLost) for e in events)
    restored = sum(isinstance(e, mcpclient.ConnectionRestored) for e in events)
    return lost, restored


def test_server_restarted_on_the_same_port(server: ServerProcess) -> None:
    events = Events()
    defn = mcpclient.Definition(
        "restart", mcpclient.StreamableHTTPTransport(server.url), reconnect=FAST_RETRY
    )
    with mcpclient.connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        assert client.call_tool("echo", {"message": "before"}).text == "before"
        server.close()
        with pytest.raises(
            (mcpclient.ConnectionLostError, mcpclient.DeadlineExceededError)
        ) as info:
            client.call_tool("echo", {"message": "down"}, CallOpts(timeout=1))
        # A request that never reached a server is not indeterminate, and the
        # error is the public class, not a transport-internal one. (When the
        # ended listen stream saw the loss first, the call waits for the
        # reconnect within its deadline instead.)
        assert type(info.value) in (mcpclient.ConnectionLostError, mcpclient.DeadlineExceededError)
        server.start()
        started = time.monotonic()
        assert client.call_tool("echo", {"message": "after"}, CallOpts(timeout=15)).text == "after"
        assert time.monotonic() - started < 15
        assert client.status().state is State.READY
        assert client.catalog() == adopted
        lost, restored = _lost_and_restored(events)
        assert lost >= 1
        assert restored == 1


def test_a_404_storm_is_ridden_out(server: ServerProcess, era: str) -> None:
    if era == "modern":
        pytest.skip("sessions (and so 404s for them) exist only in the legacy era")
    events = Events()
    defn = mcpclient.Definition(
        "storm", mcpclient.StreamableHTTPTransport(server.url), reconnect=FAST_RETRY
    )
    with mcpclient.connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        client.call_tool("hostile", {"action": "session_404_storm", "count": 4})
        result = client.call_tool("echo", {"message": "through"}, CallOpts(timeout=15))
        assert result.text == "through"
        assert client.status().state is State.READY
        assert client.catalog() == adopted
        assert _lost_and_restored(events)[1] >= 1


# A 404 is the server's word that it did not process the request: re-sent once
# on the new session, never more (docs/errors.md, "NotProcessedError").


@pytest.fixture
def legacy_server(spawn_http: SpawnHttp) -> ScriptedServer:
    """A legacy testing server of this test's own (its 404 knob is process-wide)."""
    return spawn_http("--era", "legacy")


def _runs(client: mcpclient.Client, key: str) -> int:
    """How often the server ran ``count`` of ``key`` before this call."""
    text = client.call_tool("hostile", {"action": "count", "key": key}).text
    return int(text.rsplit(" ", 1)[1]) - 1


@pytest.mark.parametrize("submitted", [False, True], ids=["call", "submit"])
def test_a_404_resends_the_call_once_and_it_runs_once(
    legacy_server: ServerProcess, submitted: bool, started_threads: list[str]
) -> None:
    defn = mcpclient.Definition(
        "once", mcpclient.StreamableHTTPTransport(legacy_server.url), reconnect=FAST_RETRY
    )
    with mcpclient.connect(defn) as client:
        client.call_tool(
            "hostile", {"action": "session_404_storm", "count": 1, "method": "tools/call"}
        )
        args = {"action": "count", "key": "k"}
        if submitted:
            result = client.submit_tool_call("hostile", args, CallOpts(timeout=15)).result(20)
            # Sent again on the new session without a thread of its own.
            assert not [n for n in started_threads if n.startswith("mcpclient-call-")]
        else:
            result = client.call_tool("hostile", args, CallOpts(timeout=15))
        assert result.text == "count k: 1"  # re-sent on the new session, run there once
        assert _runs(client, "k") == 1


@pytest.mark.parametrize("submitted", [False, True], ids=["call", "submit"])
def test_a_second_404_fails_the_call_as_not_processed(
    legacy_server: ServerProcess, submitted: bool
) -> None:
    defn = mcpclient.Definition(
        "twice", mcpclient.StreamableHTTPTransport(legacy_server.url), reconnect=FAST_RETRY
    )
    with mcpclient.connect(defn) as client:
        client.call_tool(
            "hostile", {"action": "session_404_storm", "count": 2, "method": "tools/call"}
        )
        args = {"action": "count", "key": "k"}
        with pytest.raises(mcpclient.NotProcessedError) as info:
            if submitted:
                client.submit_tool_call("hostile", args, CallOpts(timeout=15)).result(timeout=20)
            else:
                client.call_tool("hostile", args, CallOpts(timeout=15))
        error = info.value
        assert type(error) is mcpclient.NotProcessedError
        assert isinstance(error, mcpclient.ConnectionLostError)
        assert error.failure_class is mcpclient.FailureClass.NOT_PROCESSED
        assert error.op == "call_tool"
        assert "404" in error.message and "not sent a third time" in error.message
        assert "retried" not in error.message
        assert _runs(client, "k") == 0  # neither 404 ran it
        assert client.status().state is State.READY


# A server at one URL redeployed from the 2025 era to 2026-07-28 (docs/concepts.md).

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"


NEW_ERAS = [["--era", "modern"], ["--era", "dual", "--lock-era"]]
NEW_ERA_IDS = ["modern", "dual-locked"]


def _lock_modern(defn: mcpclient.Definition, new_era: list[str]) -> None:
    if "--lock-era" in new_era:
        # Another client reaches the dual server first, the modern way, and
        # locks it to 2026-07-28 (as the official SDK 2.x and FastMCP 4 lock).
        other = mcpclient.Definition("first", defn.transport, protocol=MODERN)
        with mcpclient.connect(other) as first:
            assert first.status().protocol_version == MODERN


@pytest.mark.parametrize("new_era", NEW_ERAS, ids=NEW_ERA_IDS)
def test_a_fresh_connect_follows_a_redeploy_into_the_modern_era(
    tmp_path: Path, new_era: list[str]
) -> None:
    port = free_port()
    defn = mcpclient.Definition(
        "redeploy", mcpclient.StreamableHTTPTransport(f"http://127.0.0.1:{port}/mcp")
    )
    with (
        restartable_testing_server(tmp_path, "--era", "legacy", port=port),
        mcpclient.connect(defn) as client,  # the era (legacy) is remembered for the URL
    ):
        assert client.status().protocol_version == LATEST_LEGACY
    with restartable_testing_server(tmp_path, *new_era, port=port):
        _lock_modern(defn, new_era)
        with mcpclient.connect(defn) as client:
            assert client.status().protocol_version == MODERN
            assert client.call_tool("echo", {"message": "new era"}).text == "new era"


#: (the era the binding connects in, the server it then meets, who locks it first, the new version)
MOVES = {
    "legacy-to-modern": (["--era", "legacy"], ["--era", "modern"], None, MODERN),
    # Locked from the start, as by another client that reached the dual server
    # first (the official SDK 2.x and FastMCP 4 lock so): the live binding's own
    # reconnect can never win a race to lock it to its old era.
    "legacy-to-locked-modern": (
        ["--era", "legacy"],
        ["--era", "dual", "--locked-era", "modern"],
        MODERN,
        MODERN,
    ),
    "modern-to-locked-legacy": (
        ["--era", "modern"],
        ["--era", "dual", "--locked-era", "legacy"],
        LATEST_LEGACY,
        LATEST_LEGACY,
    ),
}


@pytest.mark.parametrize("move", list(MOVES))
def test_a_live_binding_reconnects_into_the_new_era(tmp_path: Path, move: str) -> None:
    old_era, new_era, locker, version = MOVES[move]
    port = free_port()
    events = Events()
    defn = mcpclient.Definition(
        "redeployed",
        mcpclient.StreamableHTTPTransport(f"http://127.0.0.1:{port}/mcp"),
        reconnect=FAST_RETRY,
    )
    srv = restartable_testing_server(tmp_path, *old_era, port=port)
    try:
        with mcpclient.connect(defn, Handlers(event=events)) as client:
            assert client.status().protocol_version != version
            srv.close()
            srv = restartable_testing_server(tmp_path, *new_era, port=port)
            if locker is not None:
                # Another client of the locked era connects as usual.
                first = mcpclient.Definition("first", defn.transport, protocol=locker)
                with mcpclient.connect(first) as other:
                    assert other.status().protocol_version == locker
            # The first call may meet the old era's session, or the new era's
            # refusal; whatever it meets, the binding follows the server.
            with contextlib.suppress(mcpclient.Error):
                client.call_tool("echo", {"message": "meets the change"}, CallOpts(timeout=10))
            assert wait_until(lambda: client.status().protocol_version == version, timeout=15)
            result = client.call_tool("echo", {"message": "new era"}, CallOpts(timeout=15))
            assert result.text == "new era"
            assert client.status().state is State.READY
            assert _lost_and_restored(events)[1] >= 1
            if move == "legacy-to-modern":  # the others meet a 404 or a reset first
                lost = [e for e in events if isinstance(e, mcpclient.ConnectionLost)]
                assert lost[0].failure_class is FailureClass.UNSUPPORTED_PROTOCOL
                assert "no longer speaks protocol" in lost[0].message
    finally:
        srv.close()
