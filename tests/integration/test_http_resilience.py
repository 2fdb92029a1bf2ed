"""HTTP rows of the resilience proving ground: a restarted server, a 404 storm."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import CallOpts, Handlers, State
from tests.support import Events
from tests.support.http_servers import free_port

REPO = Path(__file__).resolve().parents[2]
FAST_RETRY = mcpclient.ReconnectPolicy(
    retry=mcpclient.RetryPolicy(attempts=64, base_delay=0.05, max_delay=0.2)
)


class _Server:
    """The testing server in HTTP mode on a fixed port, restartable."""

    def __init__(self, era: str, port: int) -> None:
        self.era = era
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcpclient.testing.server",
                "--transport",
                "http",
                "--port",
                str(self.port),
                "--era",
                self.era,
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().startswith("listening on")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            if self.process.stdout is not None:
                self.process.stdout.close()
            self.process = None


@pytest.fixture(params=["modern", "legacy"])
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    srv = _Server(request.param, free_port())
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _lost_and_restored(events: Events) -> tuple[int, int]:
    lost = sum(isinstance(e, mcpclient.ConnectionLost) for e in events)
    restored = sum(isinstance(e, mcpclient.ConnectionRestored) for e in events)
    return lost, restored


def test_server_restarted_on_the_same_port(server: _Server) -> None:
    events = Events()
    defn = mcpclient.Definition(
        "restart", mcpclient.StreamableHTTPTransport(server.url), reconnect=FAST_RETRY
    )
    with mcpclient.connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        assert client.call_tool("echo", {"message": "before"}).text == "before"
        server.stop()
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


def test_a_404_storm_is_ridden_out(server: _Server) -> None:
    if server.era == "modern":
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
