"""Resilience over stdio with reconnection ON: losses, restarts, budgets, floods, a soak.

Every binding here uses the default ``ReconnectPolicy()`` shape with a short
retry budget (``RetryPolicy(attempts=..., base_delay=0.05, max_delay=0.2)``),
so a lost server is restarted within a fraction of a second. Servers are found
through ``/proc``: each binding's command line carries a unique
``--server-version`` marker (``engine_support.definition``), so a test can
SIGKILL/SIGSTOP exactly its own live server. A ``--record`` file is appended
to by every server start, so "the last run" is the tail after the last
handshake message.

The suite's leak guard (tests/conftest.py) checks after every test that no
``mcpclient-*`` thread and no child process is left.
"""

from __future__ import annotations

import array
import concurrent.futures
import fcntl
import json
import os
import random
import signal
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    CancelToken,
    CatalogCandidate,
    CatalogRefreshed,
    ConnectionLost,
    ConnectionLostError,
    ConnectionRestored,
    DeadlineExceededError,
    Error,
    FailureClass,
    Handlers,
    IndeterminateError,
    Limits,
    ReconnectPolicy,
    RequestCancelledError,
    ResourceUpdated,
    RetryPolicy,
    State,
    StateChanged,
    ToolUnavailableError,
    connect,
)
from tests import support

from .engine_support import (
    SLACK,
    Recording,
    children_of,
    definition,
    proc_state,
    reaped,
    text_of,
    wait_until,
)

T = TypeVar("T")
MiB = 1024 * 1024
URI = "test://static/hello"
#: A short budget: three attempts, a few tens of milliseconds apart.
POLICY = ReconnectPolicy(retry=RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.2))
#: How long a restart may take on a loaded 2-core machine (it is ~0.3 s idle).
RESTART = 10.0
#: The handshake message that starts each server run in a recording.
RUN_START = {"modern": "server/discover", "legacy": "initialize"}


# ----------------------------------------------------------------------------- helpers


class Events(support.Events):
    """The shared recorder: waits default to a restart's worth, and tells the connection's story."""

    timeout = RESTART

    def connection_story(self) -> list[str]:
        """Lost/restored/catalog/state events after startup, as short strings."""
        story = []
        for e in list(self.items):
            if isinstance(e, StateChanged) and e.from_state not in (
                State.CONFIGURED,
                State.STARTING,
                State.DISCOVERING,
            ):
                story.append(f"{e.from_state}->{e.to_state}")
            elif isinstance(e, ConnectionLost):
                story.append(f"lost(retrying={e.retrying})")
            elif isinstance(e, ConnectionRestored):
                story.append("restored")
            elif isinstance(e, CatalogRefreshed):
                story.append("refreshed")
            elif isinstance(e, CatalogCandidate):
                story.append("candidate")
        return story


def marker_of(defn: mcpclient.Definition) -> str:
    """The unique ``--server-version`` value that names this binding's servers."""
    args = list(defn.transport.args)  # type: ignore[union-attr]
    return str(args[args.index("--server-version") + 1])


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def live_servers(defn: mcpclient.Definition) -> list[int]:
    """Pids of this binding's server processes that are alive (not zombies)."""
    marker = marker_of(defn).encode()
    return sorted(
        pid
        for pid in children_of(os.getpid())
        if proc_state(pid) not in (None, "Z", "X") and marker in _cmdline(pid).split(b"\0")
    )


def the_server(defn: mcpclient.Definition, timeout: float = RESTART) -> int:
    """The one live server of this binding (waits for it to be the only one)."""
    found: list[int] = []

    def one() -> bool:
        found[:] = live_servers(defn)
        return len(found) == 1

    assert wait_until(one, timeout), f"expected one live server, found {found}"
    return found[0]


def unread_stdin_bytes(pid: int) -> int:
    """Bytes written to the server's stdin pipe that it has not read yet."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        count = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
        return count[0]
    finally:
        os.close(fd)


def stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)
    assert wait_until(lambda: proc_state(pid) == "T"), "the server did not stop"


def in_thread(fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
    """Run ``fn(*args)`` on a fresh thread; its outcome on the returned future."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="test-caller", daemon=True).start()
    return future


def last_run(rec: Recording, era: str) -> list[dict[str, Any]]:
    """The messages the most recent server start received."""
    messages = rec.messages()
    starts = [i for i, m in enumerate(messages) if m.get("method") == RUN_START[era]]
    assert starts, "no server run recorded"
    return messages[starts[-1] :]


def runs(rec: Recording, era: str) -> int:
    return sum(1 for m in rec.messages() if m.get("method") == RUN_START[era])


def vm_rss() -> int:
    """This process's resident set size, in bytes (/proc/self/status VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def echo(client: mcpclient.Client, message: str = "still here", timeout: float = 10) -> None:
    result = client.call_tool("echo", {"message": message}, CallOpts(timeout=timeout))
    assert not result.is_error
    assert text_of(result) == message


def assert_intact(client: mcpclient.Client, adopted: mcpclient.Catalog) -> None:
    """The adopted catalog is the one adopted at connect (generation and digest)."""
    now = client.catalog()
    assert (now.generation, now.digest) == (adopted.generation, adopted.digest)
    assert [t.raw_name for t in now.tools] == [t.raw_name for t in adopted.tools]


def assert_restored(
    client: mcpclient.Client, events: Events, adopted: mcpclient.Catalog
) -> ConnectionRestored:
    """One loss, one restore with a fresh identical discovery, and a healthy binding."""
    assert events.wait(CatalogRefreshed), events.connection_story()
    (restored,) = events.of(ConnectionRestored)
    assert restored.adopted == adopted.generation
    assert restored.generation > adopted.generation
    assert restored.drift == ""
    assert events.connection_story() == [
        "ready->reconnecting",
        "lost(retrying=True)",
        "reconnecting->ready",
        "restored",
        "refreshed",
    ]
    (lost,) = events.of(ConnectionLost)
    assert lost.adopted == adopted.generation
    (refreshed,) = events.of(CatalogRefreshed)
    assert (refreshed.generation, refreshed.digest) == (adopted.generation, adopted.digest)
    status = client.status()
    assert status.state is State.READY
    assert status.failure is None
    assert status.reconnect_attempt == 0
    assert status.candidate_generation == 0
    assert client.candidate() is None
    assert_intact(client, adopted)
    return restored


# ----------------------------------------------------------------------------- losses


LOSSES = {
    "sigkill": None,
    "exit": {"action": "exit", "code": 3},
    "close_stdout": {"action": "close_stdout"},
    "half_frame": {"action": "exit", "partial": True},
}


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_a_lost_connection_is_claimed_once_and_restored(
    tmp_path: Path, loss: str, era: str
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", era, record=rec.path, reconnect=POLICY, allow_parallel_calls=True)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        client.subscribe(URI)
        pid = the_server(defn)
        slow = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
        assert wait_until(lambda: bool(rec.tool_call_ids("slow")))
        hostile = LOSSES[loss]
        if hostile is None:
            # A read in flight too: stop the server so it stays unanswered, and
            # wait until the request sits in the server's stdin pipe.
            stop(pid)
            before = unread_stdin_bytes(pid)
            read = in_thread(client.read_resource, URI, CallOpts(timeout=20))
            assert wait_until(lambda: unread_stdin_bytes(pid) > before), "the read was not sent"
            start = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            exc = read.exception(timeout=SLACK)
            assert isinstance(exc, ConnectionLostError), exc
            assert not isinstance(exc, IndeterminateError)
            assert exc.failure_class is FailureClass.TRANSPORT_CLOSED
        else:
            start = time.monotonic()
            with pytest.raises(IndeterminateError) as info:
                client.call_tool("hostile", hostile, CallOpts(timeout=20))
            assert info.value.failure_class is FailureClass.INDETERMINATE
        # The sent tools/call fails at once: its outcome is unknown, never resent.
        assert isinstance(slow.exception(timeout=SLACK), IndeterminateError)
        assert time.monotonic() - start < SLACK, "in-flight calls waited"

        restored = assert_restored(client, events, adopted)
        assert restored.server == client.status().server
        (lost,) = events.of(ConnectionLost)
        assert lost.failure_class is FailureClass.TRANSPORT_CLOSED
        assert reaped(pid)

        # Subscriptions are re-established on the new connection.
        tail = last_run(rec, era)
        if era == "legacy":
            assert [
                m["params"]["uri"] for m in tail if m.get("method") == "resources/subscribe"
            ] == [URI]
        else:
            listens = [m for m in tail if m.get("method") == "subscriptions/listen"]
            assert listens, "the listen was not re-opened"
            assert listens[-1]["params"]["notifications"].get("resourceSubscriptions") == [URI]
        client.call_tool("mutate_catalog", {"touch": URI}, CallOpts(timeout=10))
        assert events.wait(ResourceUpdated)
        assert [e.uri for e in events.of(ResourceUpdated)] == [URI]

        # The binding serves on the new connection; nothing was replayed.
        echo(client)
        assert len(rec.tool_call_ids("slow")) == 1
        assert runs(rec, era) == 2
        assert len(live_servers(defn)) == 1


def test_a_loss_is_claimed_once_however_many_calls_see_it(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(
        "--era",
        "modern",
        record=rec.path,
        reconnect=POLICY,
        allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=32),
    )
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        pid = the_server(defn)
        calls = [
            client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
            for _ in range(16)
        ]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 16)
        os.kill(pid, signal.SIGKILL)
        for call in calls:
            assert isinstance(call.exception(timeout=SLACK), IndeterminateError)
        assert_restored(client, events, adopted)
        echo(client)


@pytest.mark.parametrize("same", [True, False], ids=["same-version", "new-version"])
def test_a_restarted_server_reports_identity_drift(tmp_path: Path, same: bool) -> None:
    version = tmp_path / "version"
    version.write_text("1.0.0\n")
    events = Events()
    defn = definition("--era", "modern", "--server-version-file", str(version), reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        assert client.status().server.version == "1.0.0"
        new = "1.0.0" if same else "2.0.0"
        version.write_text(new)
        os.kill(the_server(defn), signal.SIGKILL)
        assert events.wait(ConnectionRestored)
        (restored,) = events.of(ConnectionRestored)
        assert restored.server.version == new
        if same:
            assert restored.drift == ""
        else:
            assert restored.drift, "the version change was not named"
            assert "version" in restored.drift
            assert "1.0.0" in restored.drift and "2.0.0" in restored.drift
        assert wait_until(lambda: client.status().state is State.READY)
        assert client.status().server.version == new
        if same:  # an identical catalog: refreshed, nothing to adopt
            assert events.wait(CatalogRefreshed)
            assert events.of(CatalogCandidate) == []
        else:  # the server identity is part of the catalog digest: a candidate
            assert events.wait(CatalogCandidate)
            assert events.of(CatalogRefreshed) == []
            (offered,) = events.of(CatalogCandidate)
            assert offered.generation == restored.generation
            candidate = client.candidate()
            assert candidate is not None and candidate.server.version == new
            assert client.catalog().server.version == "1.0.0"
        # Drift is reported, never enforced: the adopted catalog stays, calls work.
        assert_intact(client, adopted)
        echo(client)


def test_a_restarted_server_with_another_catalog_offers_a_candidate(tmp_path: Path) -> None:
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps({"tools": ["echo", "mutate_catalog"]}))
    events = Events()
    defn = definition("--era", "modern", "--catalog", str(catalog_file), reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        assert [t.raw_name for t in adopted.tools] == ["echo", "mutate_catalog"]
        catalog_file.write_text(json.dumps({"tools": ["add", "echo", "mutate_catalog"]}))
        os.kill(the_server(defn), signal.SIGKILL)
        assert events.wait(CatalogCandidate), events.connection_story()
        assert events.connection_story() == [
            "ready->reconnecting",
            "lost(retrying=True)",
            "reconnecting->ready",
            "restored",
            "candidate",
        ]
        (restored,) = events.of(ConnectionRestored)
        (offered,) = events.of(CatalogCandidate)
        assert offered.generation == restored.generation > adopted.generation
        assert offered.adopted == adopted.generation
        # Never adopted on its own: the old catalog is in force.
        time.sleep(0.2)
        assert_intact(client, adopted)
        candidate = client.candidate()
        assert candidate is not None and candidate.generation == offered.generation
        assert "add" in [t.raw_name for t in candidate.tools]
        with pytest.raises(ToolUnavailableError):
            client.call_tool("add", {"a": 1, "b": 2}, CallOpts(timeout=5))
        echo(client)
        client.adopt(offered.generation)
        assert client.catalog().generation == offered.generation
        result = client.call_tool("add", {"a": 1, "b": 2}, CallOpts(timeout=5))
        assert not result.is_error
        assert json.loads(text_of(result)) == {"sum": 3}


# ----------------------------------------------------------------------------- waiting callers


def test_calls_made_while_reconnecting_wait_within_their_deadline(
    tmp_path: Path, started_threads: list[str]
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    # Every start takes 0.8 s, so the reconnect outlasts a short deadline.
    defn = definition(
        "--era",
        "modern",
        "--startup-delay",
        "0.8",
        record=rec.path,
        reconnect=POLICY,
        allow_parallel_calls=True,
    )
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.RECONNECTING)
        waiting = client.submit_tool_call("echo", {"message": "waited"}, CallOpts(timeout=10))
        token = CancelToken()
        cancelled = in_thread(
            client.call_tool, "echo", {"message": "cancelled"}, CallOpts(timeout=10, cancel=token)
        )

        start = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool("echo", {"message": "too short"}, CallOpts(timeout=0.3))
        elapsed = time.monotonic() - start
        assert 0.25 <= elapsed < 0.3 + SLACK
        assert info.value.failure_class is FailureClass.DEADLINE

        token.cancel()
        assert isinstance(cancelled.exception(timeout=SLACK), RequestCancelledError)
        assert not waiting.done()
        result = waiting.result(timeout=RESTART)
        assert text_of(result) == "waited"
        assert_restored(client, events, adopted)
        # The submitted call waited for the new connection without a thread.
        assert not [n for n in started_threads if n.startswith("mcpclient-call-")]
        # Only the call that waited was ever sent, and on the new connection.
        tail = last_run(rec, "modern")
        sent = [
            m["params"]["arguments"]["message"] for m in tail if m.get("method") == "tools/call"
        ]
        assert sent == ["waited"]
        assert not [m for m in rec.messages() if m.get("method") == "resources/read"]


def test_every_kind_of_call_made_while_reconnecting_waits() -> None:
    defn = definition("--era", "modern", "--startup-delay", "0.5", reconnect=POLICY)
    with connect(defn) as client:
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.RECONNECTING)
        opts = CallOpts(timeout=10)
        calls = {
            "read_resource": in_thread(client.read_resource, URI, opts),
            "get_prompt": in_thread(client.get_prompt, "greet", {"name": "x"}, opts),
            "complete": in_thread(client.complete, mcpclient.PromptRef("greet"), "name", "a"),
            "ping": in_thread(client.ping, opts),
            "subscribe": in_thread(client.subscribe, URI, opts),
        }
        failed = {}
        for name, call in calls.items():
            exc = call.exception(timeout=RESTART)
            if exc is not None:
                failed[name] = exc
        assert failed == {}


def test_a_call_right_after_the_kill_runs_on_the_new_connection(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", "legacy", record=rec.path, reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is not State.READY)
        echo(client, "after the kill")
        assert runs(rec, "legacy") == 2
        tail = last_run(rec, "legacy")
        assert [m["params"]["name"] for m in tail if m.get("method") == "tools/call"] == ["echo"]
        assert_restored(client, events, adopted)


# ----------------------------------------------------------------------------- budgets


def _exits(gate: Path) -> int:
    try:
        return len(gate.read_text().splitlines())
    except FileNotFoundError:
        return 0


def test_a_spent_budget_fails_the_binding_until_a_call_or_reconnect_revives_it(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "down"
    events = Events()
    attempts = 3
    defn = definition(
        "--era",
        "legacy",
        "--exit-at-startup-file",
        str(gate),
        protocol="legacy",  # one server start per attempt (no era probe)
        # A long max_delay spaces the revivals far apart; the budget's own
        # delays (0.05 s, 0.1 s) stay under it.
        reconnect=ReconnectPolicy(
            retry=RetryPolicy(attempts=attempts, base_delay=0.05, max_delay=60)
        ),
    )
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        gate.write_text("")
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.FAILED, RESTART)
        assert events.wait(ConnectionLost, 2)
        # The budget is spent: its worker ends, and no attempt after it starts.
        assert support.threads_ended(f"mcpclient-reconnect-{defn.name}")
        assert _exits(gate) == attempts
        assert [e.retrying for e in events.of(ConnectionLost)] == [True, False]
        assert events.connection_story() == [
            "ready->reconnecting",
            "lost(retrying=True)",
            "reconnecting->failed",
            "lost(retrying=False)",
        ]
        status = client.status()
        assert status.state is State.FAILED
        assert status.reconnect_attempt == attempts
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.TRANSPORT_CLOSED
        assert events.of(ConnectionLost)[-1].failure_class is status.failure.failure_class
        # The next call starts one attempt at once (the server still exits) and
        # fails with it; the next attempt is then due max_delay later.
        with pytest.raises(ConnectionLostError) as info:
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=RESTART))
        assert _exits(gate) == attempts + 1
        assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
        assert "next reconnect attempt is due in" in info.value.message
        assert events.wait(ConnectionLost, 3)  # the lane delivers after the call returned
        assert events.connection_story()[4:] == [
            "failed->reconnecting",
            "reconnecting->failed",
            "lost(retrying=False)",
        ]
        status = client.status()
        assert (status.state, status.reconnect_attempt) == (State.FAILED, 1)
        assert status.failure is not None
        # Until then, calls raise the recorded failure at once, saying when.
        for call in (
            lambda: client.call_tool("echo", {"message": "x"}, CallOpts(timeout=10)),
            lambda: client.read_resource(URI, CallOpts(timeout=10)),
        ):
            start = time.monotonic()
            with pytest.raises(ConnectionLostError) as info:
                call()
            assert time.monotonic() - start < 0.5
            assert info.value.failure_class is status.failure.failure_class
            assert "next reconnect attempt is due in" in info.value.message
            assert status.failure.message in info.value.message
        assert _exits(gate) == attempts + 1
        assert len(events.connection_story()) == 7
        assert_intact(client, adopted)

        # reconnect() starts a fresh budget at once.
        gate.unlink()
        client.reconnect()
        assert events.wait(CatalogRefreshed)
        assert wait_until(lambda: client.status().state is State.READY)
        status = client.status()
        assert (status.failure, status.reconnect_attempt) == (None, 0)
        assert events.connection_story()[7:] == [
            "failed->reconnecting",
            "reconnecting->ready",
            "restored",
            "refreshed",
        ]
        echo(client)
        assert_intact(client, adopted)
        client.reconnect()  # a connected binding is left alone
        time.sleep(0.1)
        assert len(events.connection_story()) == 11


def test_disabled_reconnect_leaves_the_binding_degraded_until_reconnect(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", "modern", record=rec.path, reconnect=ReconnectPolicy(disabled=True))
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        os.kill(the_server(defn), signal.SIGKILL)
        assert events.wait(ConnectionLost)
        time.sleep(0.3)
        assert live_servers(defn) == [], "a server was restarted although reconnect is off"
        assert runs(rec, "modern") == 1
        status = client.status()
        assert status.state is State.DEGRADED
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.TRANSPORT_CLOSED
        assert [e.retrying for e in events.of(ConnectionLost)] == [False]
        start = time.monotonic()
        with pytest.raises(ConnectionLostError):
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=10))
        assert time.monotonic() - start < 0.5
        client.reconnect()
        assert events.wait(CatalogRefreshed)
        assert wait_until(lambda: client.status().state is State.READY)
        assert client.status().failure is None
        assert events.connection_story() == [
            "ready->degraded",
            "lost(retrying=False)",
            "degraded->reconnecting",
            "reconnecting->ready",
            "restored",
            "refreshed",
        ]
        echo(client)
        assert_intact(client, adopted)


# ----------------------------------------------------------------------------- reconnect defects
#
# Each test below pins a defect found (and fixed) while writing this file.
# Two of them widen a race window through a private hook of the reconnect
# worker, so the race is hit every time instead of once in a while.


def test_a_subscribe_in_flight_fails_at_once_when_the_connection_is_lost() -> None:
    defn = definition("--era", "modern", reconnect=POLICY)
    with connect(defn) as client:
        pid = the_server(defn)
        stop(pid)
        before = unread_stdin_bytes(pid)
        pending = in_thread(client.subscribe, URI, CallOpts(timeout=2))
        assert wait_until(lambda: unread_stdin_bytes(pid) > before), "the listen was not sent"
        start = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        exc = pending.exception(timeout=2 + SLACK)
        elapsed = time.monotonic() - start
        assert isinstance(exc, ConnectionLostError), exc
        assert elapsed < 1.0


def test_the_listen_is_reopened_before_the_rediscovery(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", "modern", record=rec.path, reconnect=POLICY)
    with connect(defn, Handlers(event=events)):
        first = [m.get("method") for m in rec.messages()]
        assert first.index("subscriptions/listen") < first.index("tools/list")
        os.kill(the_server(defn), signal.SIGKILL)
        assert events.wait(CatalogRefreshed)
        again = [m.get("method") for m in last_run(rec, "modern")]
        assert again.index("subscriptions/listen") < again.index("tools/list"), again


def test_an_unexpected_failure_in_a_reconnect_attempt_is_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import mcpclient._internal.client.catalog.catalog_refresh as client_module

    real = client_module.discover
    armed = threading.Event()

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if armed.is_set():
            armed.clear()
            raise ValueError("Out of range float values are not JSON compliant")
        return real(*args, **kwargs)

    monkeypatch.setattr(client_module, "discover", flaky)
    events = Events()
    defn = definition("--era", "modern", reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        armed.set()
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: not armed.is_set())
        assert events.wait(ConnectionRestored, timeout=3), client.status()
        assert wait_until(lambda: client.status().state is State.READY)


def test_a_loss_right_after_a_restore_is_reconnected_too() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        reconnector = client._life.reconnector
        real = reconnector._attempt
        once = threading.Event()

        def attempt(number: int) -> None:
            real(number)
            if not once.is_set():
                once.set()
                # The restored server dies before the worker has exited.
                os.kill(the_server(defn), signal.SIGKILL)
                wait_until(lambda: client.status().state is State.RECONNECTING, 5)

        reconnector._attempt = attempt  # type: ignore[method-assign]
        os.kill(the_server(defn), signal.SIGKILL)
        assert once.wait(RESTART)
        assert wait_until(lambda: len(events.of(ConnectionRestored)) == 2, 3), (
            events.connection_story()
        )
        assert client.status().state is State.READY


def test_reconnect_right_after_the_budget_is_spent_starts_a_new_budget(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    events = Events()
    defn = definition(
        "--era",
        "legacy",
        "--exit-at-startup-file",
        str(gate),
        protocol="legacy",
        reconnect=ReconnectPolicy(retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=0.1)),
    )
    with connect(defn, Handlers(event=events)) as client:
        reconnector = client._life.reconnector
        real = reconnector._on_failure

        def on_failure(exc: Error, retrying: bool) -> None:
            real(exc, retrying)
            if not retrying:
                time.sleep(0.5)  # the spent worker is slow to exit

        reconnector._on_failure = on_failure  # type: ignore[method-assign]
        gate.write_text("")
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.FAILED, RESTART)
        gate.unlink()
        client.reconnect()
        assert wait_until(lambda: client.status().state is State.READY, 3), client.status()


# ----------------------------------------------------------------------------- close


def _reconnector_alive(binding: str = "engine") -> bool:
    return any(
        t.name == f"mcpclient-reconnect-{binding}" and t.is_alive() for t in threading.enumerate()
    )


def test_close_during_a_reconnect_backoff_is_prompt(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    # Long backoffs: after the first failed attempt the worker sleeps (up to 30 s).
    slow_retry = ReconnectPolicy(retry=RetryPolicy(attempts=5, base_delay=30, max_delay=30))
    defn = definition(
        "--era",
        "legacy",
        "--exit-at-startup-file",
        str(gate),
        protocol="legacy",
        reconnect=slow_retry,
    )
    client = connect(defn)
    try:
        gate.write_text("")
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: _exits(gate) >= 1 and client.status().reconnect_attempt >= 1)
        assert wait_until(lambda: client.status().failure is not None)
        time.sleep(0.1)
        assert client.status().state is State.RECONNECTING
        assert _reconnector_alive()
        start = time.monotonic()
        client.close()
        assert time.monotonic() - start < 1.0
        assert client.status().state is State.CLOSED
        assert not _reconnector_alive()
        assert live_servers(defn) == []
    finally:
        client.close()


def test_close_during_a_reconnect_attempt_is_prompt() -> None:
    # A restart that takes 2 s: close() lands while the attempt waits for it.
    defn = definition("--era", "modern", "--startup-delay", "2", reconnect=POLICY)
    client = connect(defn)
    try:
        old = the_server(defn)
        os.kill(old, signal.SIGKILL)
        assert wait_until(lambda: any(pid != old for pid in live_servers(defn)), RESTART)
        new = [pid for pid in live_servers(defn) if pid != old]
        start = time.monotonic()
        client.close()
        assert time.monotonic() - start < 1.0 + SLACK
        assert client.status().state is State.CLOSED
        assert not _reconnector_alive()
        assert all(reaped(pid) for pid in new)
    finally:
        client.close()


def test_calls_waiting_for_a_reconnect_end_with_shutdown_at_close() -> None:
    defn = definition(
        "--era", "modern", "--startup-delay", "2", reconnect=POLICY, allow_parallel_calls=True
    )
    client = connect(defn)
    try:
        os.kill(the_server(defn), signal.SIGKILL)
        assert wait_until(lambda: client.status().state is State.RECONNECTING)
        waiting = [
            client.submit_tool_call("echo", {"message": str(i)}, CallOpts(timeout=20))
            for i in range(4)
        ]
        time.sleep(0.2)
        start = time.monotonic()
        client.close()
        for future in waiting:
            assert isinstance(future.exception(timeout=SLACK), mcpclient.ShutdownError)
        assert time.monotonic() - start < 1.0 + SLACK
    finally:
        client.close()


# ----------------------------------------------------------------------------- proving ground


def test_server_exiting_at_startup_fails_connect_and_leaks_nothing(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    gate.write_text("")
    before = children_of(os.getpid())
    start = time.monotonic()
    with pytest.raises(ConnectionLostError) as info:
        connect(definition("--exit-at-startup-file", str(gate), reconnect=POLICY))
    assert time.monotonic() - start < 5.0
    assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
    assert "exit status 1" in info.value.message
    assert wait_until(lambda: children_of(os.getpid()) <= before)


def test_server_never_answering_initialize_is_a_startup_timeout() -> None:
    defn = definition("--era", "legacy", "--no-initialize-answer", reconnect=POLICY)
    start = time.monotonic()
    with pytest.raises(DeadlineExceededError) as info:
        connect(defn, timeout=1.0)
    assert 0.9 <= time.monotonic() - start < 1.0 + SLACK
    assert info.value.failure_class is FailureClass.STARTUP_TIMEOUT


def test_a_stopped_server_costs_calls_their_deadline_and_close_still_ends_it() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=POLICY, allow_parallel_calls=True)
    client = connect(defn, Handlers(event=events))
    try:
        adopted = client.catalog()
        pid = the_server(defn)
        stop(pid)
        calls = [
            in_thread(client.call_tool, "echo", {"message": "x"}, CallOpts(timeout=0.5)),
            in_thread(client.read_resource, URI, CallOpts(timeout=0.5)),
            in_thread(client.ping, CallOpts(timeout=0.5)),
        ]
        start = time.monotonic()
        for call in calls:
            exc = call.exception(timeout=0.5 + SLACK)
            assert isinstance(exc, DeadlineExceededError), exc
            assert exc.failure_class is FailureClass.DEADLINE
        assert time.monotonic() - start < 0.5 + SLACK
        # A stopped server is not a lost connection.
        assert client.status().state is State.READY
        assert events.of(ConnectionLost) == []
        assert_intact(client, adopted)
        start = time.monotonic()
        client.close(timeout=2)
        assert time.monotonic() - start < 2 + SLACK
        assert reaped(pid)
    finally:
        client.close()


def test_a_10_mib_garbage_line_under_the_limit_is_dropped() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=POLICY, limits=Limits(max_frame_bytes=12 * MiB))
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        start = time.monotonic()
        # The cut-off answer is dropped as malformed; the real one never comes.
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool(
                "hostile", {"action": "oversized_line", "bytes": 10 * MiB}, CallOpts(timeout=2)
            )
        assert time.monotonic() - start < 2 + SLACK
        assert info.value.failure_class is FailureClass.DEADLINE
        assert client.status().state is State.READY
        assert events.of(ConnectionLost) == []
        echo(client)
        assert_intact(client, adopted)


def test_a_10_mib_garbage_line_over_the_limit_is_a_loss_and_a_reconnect() -> None:
    events = Events()
    defn = definition("--era", "modern", reconnect=POLICY, limits=Limits(max_frame_bytes=8 * MiB))
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        start = time.monotonic()
        # The line names no request (its id is in the middle): the connection goes.
        with pytest.raises(IndeterminateError) as info:
            client.call_tool(
                "hostile",
                {"action": "oversized_line", "bytes": 10 * MiB, "id_at": "none"},
                CallOpts(timeout=10),
            )
        assert time.monotonic() - start < SLACK + 1.0
        assert "max_frame_bytes" in info.value.message
        assert_restored(client, events, adopted)
        (lost,) = events.of(ConnectionLost)
        assert lost.failure_class is FailureClass.LIMIT_EXCEEDED
        echo(client)


FLOOD = 100_000


@pytest.mark.parametrize("kind", ["progress", "log"])
def test_a_notification_flood_is_bounded(kind: str) -> None:
    seen = [0]

    def count(_item: object) -> None:
        seen[0] += 1

    events = Events()
    handlers = Handlers(event=events, log=count if kind == "log" else None)
    defn = definition("--era", "legacy", reconnect=POLICY)
    with connect(defn, handlers) as client:
        adopted = client.catalog()
        rss_before = vm_rss()
        start = time.monotonic()
        result = client.call_tool(
            "hostile",
            {"action": "notification_flood", "count": FLOOD, "kind": kind},
            CallOpts(timeout=60, progress=count if kind == "progress" else None),
        )
        assert text_of(result) == "hostile notification_flood: done"
        took = time.monotonic() - start
        assert wait_until(lambda: seen[0] + client.status().dropped_notifications >= FLOOD, 30), (
            seen[0],
            client.status().dropped_notifications,
        )
        growth = vm_rss() - rss_before
        assert growth < 200 * MiB, f"RSS grew by {growth / MiB:.0f} MiB"
        assert seen[0] > 0
        assert client.status().state is State.READY
        assert events.of(ConnectionLost) == []
        echo(client)
        assert_intact(client, adopted)
        assert took < 60


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_list_changed_storm_is_coalesced(tmp_path: Path, era: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", era, record=rec.path, reconnect=POLICY)
    with connect(defn, Handlers(event=events)) as client:
        adopted = client.catalog()
        lists_before = len(rec.requests("tools/list"))
        rss_before = vm_rss()
        result = client.call_tool(
            "mutate_catalog", {"storm": {"family": "tools", "count": 20_000}}, CallOpts(timeout=30)
        )
        assert not result.is_error
        assert vm_rss() - rss_before < 200 * MiB
        assert events.wait(CatalogRefreshed, timeout=20)
        assert wait_until(lambda: client.status().stale_families == (), 20)
        refetches = len(rec.requests("tools/list")) - lists_before
        # Coalesced: refreshes follow the storm's duration, not its 20 000 notifications.
        assert 1 <= refetches <= 200, f"{refetches} tools/list requests for one storm"
        assert events.of(CatalogCandidate) == []
        assert client.status().state is State.READY
        assert_intact(client, adopted)
        echo(client)


def test_late_answers_to_cancelled_requests_are_dropped(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era", "modern", record=rec.path, reconnect=POLICY, allow_parallel_calls=True
    )
    with connect(defn) as client:
        adopted = client.catalog()
        ignored = [
            in_thread(
                client.call_tool,
                "hostile",
                {"action": "ignore_cancel", "seconds": 0.8},
                CallOpts(timeout=0.3),
            )
            for _ in range(4)
        ]
        for call in ignored:
            exc = call.exception(timeout=0.3 + SLACK)
            assert isinstance(exc, DeadlineExceededError)
        assert wait_until(lambda: len(rec.cancelled_ids()) == 4)
        # While the late answers arrive, fresh calls get their own results.
        outcomes = [
            in_thread(client.call_tool, "echo", {"message": f"m{i}"}, CallOpts(timeout=5))
            for i in range(20)
        ]
        for i, outcome in enumerate(outcomes):
            assert text_of(outcome.result(timeout=5 + SLACK)) == f"m{i}"
            time.sleep(0.05)
        assert client.status().state is State.READY
        assert_intact(client, adopted)


def test_duplicate_responses_never_answer_another_request() -> None:
    defn = definition("--era", "modern", reconnect=POLICY, allow_parallel_calls=True)
    with connect(defn) as client:
        adopted = client.catalog()
        calls = []
        for i in range(10):
            calls.append(
                (
                    "hostile duplicate_response: done",
                    in_thread(
                        client.call_tool,
                        "hostile",
                        {"action": "duplicate_response"},
                        CallOpts(timeout=5),
                    ),
                )
            )
            calls.append(
                (
                    f"m{i}",
                    in_thread(client.call_tool, "echo", {"message": f"m{i}"}, CallOpts(timeout=5)),
                )
            )
        for expected, call in calls:
            assert text_of(call.result(timeout=5 + SLACK)) == expected
        assert client.status().state is State.READY
        assert_intact(client, adopted)


# ----------------------------------------------------------------------------- soak


SOAK_SECONDS = float(os.environ.get("MCPCLIENT_SOAK_SECONDS", "8"))
SOAK_BINDINGS = 8
SOAK_CALLERS = 32
#: What a call may end with while servers die around it.
SOAK_CLASSES = {
    FailureClass.DEADLINE,
    FailureClass.INDETERMINATE,
    FailureClass.TRANSPORT_CLOSED,
}
#: How far past its deadline a call may return on a loaded 2-core machine.
SOAK_OVERRUN = 3.0


def _in_parallel(fn: Callable[[int], T], count: int) -> list[T]:
    futures = [in_thread(fn, i) for i in range(count)]
    concurrent.futures.wait(futures, timeout=60)
    return [f.result(timeout=0) for f in futures]


@pytest.mark.slow
def test_soak() -> None:
    policy = ReconnectPolicy(retry=RetryPolicy(attempts=20, base_delay=0.05, max_delay=0.2))
    defns = [
        definition(
            "--era",
            "modern" if i % 2 else "legacy",
            name=f"soak{i}",
            reconnect=policy,
            allow_parallel_calls=True,
            limits=Limits(max_concurrent_requests=16),
        )
        for i in range(SOAK_BINDINGS)
    ]
    recorders = [Events() for _ in defns]
    connecting = [
        in_thread(connect, d, Handlers(event=r)) for d, r in zip(defns, recorders, strict=True)
    ]
    concurrent.futures.wait(connecting, timeout=60)
    clients = [f.result(timeout=0) for f in connecting if f.done() and f.exception() is None]
    if len(clients) < len(defns):
        for client in clients:
            client.close()
        pytest.fail(f"connect failed: {[f.exception(timeout=0) for f in connecting]}")
    stop_now = threading.Event()
    problems: list[str] = []
    outcomes: dict[str, int] = {}
    lock = threading.Lock()
    kills = [0]

    def caller(seed: int) -> None:
        rng = random.Random(seed)
        n = 0
        while not stop_now.is_set():
            n += 1
            client = rng.choice(clients)
            op = rng.choice(("echo", "slow", "progress"))
            timeout = rng.uniform(0.2, 1.0)
            start = time.monotonic()
            try:
                if op == "echo":
                    message = f"{seed}-{n}"
                    result = client.call_tool(
                        "echo", {"message": message}, CallOpts(timeout=timeout)
                    )
                    if text_of(result) != message:
                        with lock:
                            problems.append(f"crossed result: {text_of(result)!r} for {message!r}")
                elif op == "slow":
                    result = client.call_tool("slow", {"seconds": 0.05}, CallOpts(timeout=timeout))
                else:
                    result = client.call_tool(
                        "progress",
                        {"steps": 3, "interval": 0.01},
                        CallOpts(timeout=timeout, progress=lambda _p: None),
                    )
                outcome = "error-result" if result.is_error else "ok"
            except Error as exc:
                outcome = str(exc.failure_class)
                if exc.failure_class not in SOAK_CLASSES:
                    with lock:
                        problems.append(f"{op}: unexpected {exc!r}")
            except BaseException as exc:  # anything unclassified is a bug
                outcome = "unclassified"
                with lock:
                    problems.append(f"{op}: unclassified {exc!r}")
            overrun = time.monotonic() - start - timeout
            with lock:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if overrun > SOAK_OVERRUN:
                    problems.append(f"{op} returned {overrun:.2f} s after its deadline")

    def killer() -> None:
        rng = random.Random(0)
        while not stop_now.wait(rng.uniform(0.3, 0.7)):
            pids = live_servers(rng.choice(defns))
            if pids:
                try:
                    os.kill(rng.choice(pids), signal.SIGKILL)
                    kills[0] += 1
                except ProcessLookupError:
                    pass

    try:
        threads = [
            threading.Thread(target=caller, args=(i,), name=f"soak-caller-{i}", daemon=True)
            for i in range(SOAK_CALLERS)
        ]
        threads.append(threading.Thread(target=killer, name="soak-killer", daemon=True))
        for t in threads:
            t.start()
        time.sleep(SOAK_SECONDS)
        stop_now.set()
        for t in threads:
            t.join(5 + SOAK_OVERRUN)
        assert not any(t.is_alive() for t in threads), "a soak thread hung"
        assert problems == [], problems[:20]
        assert kills[0] >= 1 and outcomes.get("ok", 0) > 0, outcomes
        # Every binding comes back to ready within a few seconds and serves.
        for client in clients:
            assert wait_until(lambda c=client: c.status().state is State.READY, 10), client.status()
        for client in clients:
            echo(client, "after the soak")
            assert client.status().failure is None
            assert client.status().reconnect_attempt == 0
        for events in recorders:
            # Each claimed loss was restored once (events arrive on the lane, soon).
            def settled(events: Events = events) -> bool:
                claimed = [e for e in events.of(ConnectionLost) if e.retrying]
                return len(claimed) == len(events.of(ConnectionRestored))

            assert wait_until(settled), events.connection_story()
            assert not [e for e in events.of(ConnectionLost) if not e.retrying]
        assert sum(len(e.of(ConnectionRestored)) for e in recorders) >= 1
    finally:
        stop_now.set()
        _in_parallel(lambda i: clients[i].close(), len(clients))
