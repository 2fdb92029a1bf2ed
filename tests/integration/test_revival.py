"""A failed binding comes back: a call after the reconnect budget is spent starts one attempt.

The first outage keeps its bounded budget; after it, the binding is ``failed``
and the next call on it moves it to ``reconnecting`` and starts one attempt,
waiting for it within the call's own deadline. Attempts after that are spaced
by the policy's ``max_delay``; a call before the next one is due fails at once
with the last failure and says when. ``ReconnectPolicy(disabled=True)`` keeps
a failed binding failed until ``reconnect()``.

Over stdio the server is the testing server with ``--exit-at-startup-file``
(each start exits while the file exists: a server that fails N times, then
works once the file is gone); over HTTP, the testing server on a fixed port,
closed and started again on the same address.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    ConnectionLostError,
    ConnectionRestored,
    DeadlineExceededError,
    FailureClass,
    Handlers,
    Host,
    ReconnectPolicy,
    RetryPolicy,
    State,
    connect,
)
from tests.support.http_servers import (
    ServerProcess,
    restartable_testing_server,
)

from .engine_support import SLACK, definition, text_of, wait_until
from .test_resilience import RESTART, Events, the_server

DUE = "next reconnect attempt is due in"


def _exits(gate: Path) -> int:
    """How many server starts exited because the gate file was there."""
    try:
        return len(gate.read_text().splitlines())
    except FileNotFoundError:
        return 0


def gated(gate: Path, *, max_delay: float = 60.0, **fields: object) -> mcpclient.Definition:
    """The testing server over stdio, exiting at startup while ``gate`` exists."""
    fields.setdefault(
        "reconnect",
        ReconnectPolicy(retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=max_delay)),
    )
    return definition(
        "--era",
        "legacy",
        "--exit-at-startup-file",
        str(gate),
        protocol="legacy",  # one server start per attempt (no era probe)
        **fields,  # type: ignore[arg-type]
    )


def fail_the_binding(client: mcpclient.Client, defn: mcpclient.Definition, gate: Path) -> None:
    """Kill the server with the gate up; wait until the budget is spent (``failed``)."""
    gate.write_text("")
    os.kill(the_server(defn), signal.SIGKILL)
    assert wait_until(lambda: client.status().state is State.FAILED, RESTART)


# ----------------------------------------------------------------------------- stdio


def test_a_call_on_a_failed_binding_reconnects_once_the_server_works_again(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "down"
    events = Events()
    defn = gated(gate)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        fail_the_binding(client, defn, gate)
        assert _exits(gate) == 2
        gate.unlink()  # the server is fixed (a redeploy), long after the budget was spent
        result = client.call_tool("echo", {"message": "back"}, CallOpts(timeout=RESTART))
        assert text_of(result) == "back"
        assert client.status().state is State.READY
        assert client.status().failure is None
        assert client.catalog().digest == adopted.digest
        assert events.wait(ConnectionRestored)
        assert events.connection_story()[:6] == [
            "ready->reconnecting",
            "lost(retrying=True)",
            "reconnecting->failed",
            "lost(retrying=False)",
            "failed->reconnecting",
            "reconnecting->ready",
        ]
        # A later outage gets a whole budget again (its first attempt is not "due later").
        os.kill(the_server(defn), signal.SIGKILL)
        assert events.wait(ConnectionRestored, 2)
        assert text_of(client.call_tool("echo", {"message": "again"})) == "again"


def test_concurrent_calls_on_a_failed_binding_start_one_attempt(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    defn = gated(gate, allow_parallel_calls=True)
    with connect(defn) as client:
        fail_the_binding(client, defn, gate)
        assert _exits(gate) == 2
        callers = 6
        barrier = threading.Barrier(callers)
        errors: list[BaseException] = []
        lock = threading.Lock()

        def call() -> None:
            barrier.wait(10)
            try:
                client.call_tool("echo", {"message": "x"}, CallOpts(timeout=RESTART))
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(RESTART + 5)
        assert len(errors) == callers
        assert all(isinstance(e, ConnectionLostError) for e in errors), errors
        assert all(DUE in e.message for e in errors), errors  # type: ignore[attr-defined]
        assert _exits(gate) == 3  # one attempt for all of them
        assert client.status().state is State.FAILED


def test_a_revival_that_outlasts_the_call_ends_the_call_at_its_deadline(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    # Every start sleeps 1 s before serving (after the gate check), so an
    # attempt outlasts a 0.3 s call.
    defn = definition(
        "--era",
        "legacy",
        "--exit-at-startup-file",
        str(gate),
        "--startup-delay",
        "1.0",
        protocol="legacy",
        reconnect=ReconnectPolicy(retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=60)),
    )
    with connect(defn) as client:
        fail_the_binding(client, defn, gate)
        gate.unlink()
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError, match="reconnecting"):
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=0.3))
        assert time.monotonic() - start < 0.3 + SLACK
        # The attempt it started goes on and installs the connection.
        assert wait_until(lambda: client.status().state is State.READY, RESTART)
        assert text_of(client.call_tool("echo", {"message": "after"})) == "after"


def test_disabled_reconnection_keeps_a_failed_binding_failed(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    defn = gated(
        gate,
        reconnect=ReconnectPolicy(
            disabled=True, retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=0.05)
        ),
    )
    with connect(defn) as client:
        gate.write_text("")
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.DEGRADED, RESTART)
        client.reconnect()  # a budget of two attempts, both exit
        assert wait_until(lambda: client.status().state is State.FAILED, RESTART)
        assert _exits(gate) == 2
        time.sleep(0.1)  # past max_delay: a revival would be due now
        for _ in range(2):
            start = time.monotonic()
            with pytest.raises(ConnectionLostError) as info:
                client.call_tool("echo", {"message": "x"}, CallOpts(timeout=RESTART))
            assert time.monotonic() - start < 0.5
            assert DUE not in info.value.message
        assert _exits(gate) == 2
        assert client.status().state is State.FAILED


# ----------------------------------------------------------------------------- HTTP


@pytest.fixture(params=["modern", "legacy"])
def http_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """The testing server over HTTP on a fixed port, restartable on the same address."""
    with restartable_testing_server(tmp_path, "--era", request.param) as srv:
        yield srv


def test_an_http_binding_comes_back_after_its_server_was_down_past_the_budget(
    http_server: ServerProcess,
) -> None:
    events = Events()
    max_delay = 0.5
    defn = mcpclient.Definition(
        "redeploy",
        mcpclient.StreamableHTTPTransport(http_server.url),
        reconnect=ReconnectPolicy(
            retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=max_delay)
        ),
    )
    with connect(defn, Handlers(event=events)) as client:
        assert client.call_tool("echo", {"message": "before"}).text == "before"
        http_server.close()
        # The loss shows on the listen stream or on a call; either way the
        # budget of two attempts is spent on a refused connection.
        with contextlib.suppress(mcpclient.Error):
            client.call_tool("echo", {"message": "down"}, CallOpts(timeout=2))
        assert wait_until(lambda: client.status().state is State.FAILED, RESTART)
        refused = client.status().failure
        assert refused is not None
        # A call while the server is still down starts one attempt, which fails.
        with pytest.raises(mcpclient.Error) as info:
            client.call_tool("echo", {"message": "still down"}, CallOpts(timeout=RESTART))
        assert info.value.failure_class is refused.failure_class
        assert DUE in info.value.message
        # The next call before max_delay passes fails at once, saying when.
        start = time.monotonic()
        with pytest.raises(mcpclient.Error) as info:
            client.call_tool("echo", {"message": "too soon"}, CallOpts(timeout=RESTART))
        assert time.monotonic() - start < 0.5
        assert DUE in info.value.message
        http_server.start()  # the same address, the redeployed server

        def answered() -> bool:
            try:
                result = client.call_tool("echo", {"message": "after"}, CallOpts(timeout=RESTART))
            except mcpclient.Error as exc:
                assert DUE in exc.message, exc
                return False
            return result.text == "after"

        assert wait_until(answered, RESTART)
        assert client.status().state is State.READY
        assert len(events.wait(ConnectionRestored)) == 1  # the lane delivers after the call
        assert "failed->reconnecting" in events.connection_story()


# ----------------------------------------------------------------------------- Host


def test_a_host_call_on_a_failed_binding_reconnects_it(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    flaky = gated(gate, name="flaky", max_delay=0.3)
    with Host({"flaky": flaky, "steady": definition(name="steady")}) as host:
        client = host.clients["flaky"]
        fail_the_binding(client, flaky, gate)
        assert not any(t.model_name.startswith("mcp__flaky__") for t in host.catalog().tools)
        # Still down: the call reaches the binding, which tries once and says why it failed.
        with pytest.raises(ConnectionLostError) as info:
            host.call_tool("mcp__flaky__echo", {"message": "x"}, timeout=RESTART)
        assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
        assert DUE in info.value.message
        assert _exits(gate) == 3
        # Fixed: the first call once the next attempt is due brings it back.
        gate.unlink()

        def answered() -> bool:
            try:
                result = host.call_tool("mcp__flaky__echo", {"message": "back"}, timeout=RESTART)
            except ConnectionLostError as exc:
                assert DUE in exc.message, exc
                return False
            return text_of(result) == "back"

        assert wait_until(answered, RESTART)
        assert wait_until(
            lambda: any(t.model_name == "mcp__flaky__echo" for t in host.catalog().tools)
        )


def test_a_submitted_call_on_a_failed_binding_revives_it(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    defn = gated(gate)
    with connect(defn) as client:
        fail_the_binding(client, defn, gate)
        gate.unlink()
        future = client.submit_tool_call("echo", {"message": "queued"}, timeout=RESTART)
        assert text_of(future.result(RESTART + 5)) == "queued"
        assert client.status().state is State.READY
