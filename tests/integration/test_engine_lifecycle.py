"""Startup, era negotiation, cancellation, close, fork and interpreter exit, end to end.

Each test starts its own testing server and closes its client; the suite's
leak guard checks that nothing (thread or process) is left behind.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    CancelToken,
    CatalogAdopted,
    ConnectionLost,
    DeadlineExceededError,
    Error,
    FailureClass,
    Handlers,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
    State,
    Timeouts,
    connect,
)
from tests.support import Events

from .engine_support import (
    LATEST_LEGACY,
    MODERN,
    REPO_ROOT,
    SLACK,
    Recording,
    children_of,
    dead,
    definition,
    reaped,
    server_pid,
    states,
    text_of,
    wait_until,
)

CONNECT_STATES = [
    ("configured", "starting"),
    ("starting", "discovering"),
    ("discovering", "ready"),
]
CLOSE_STATES = [("ready", "closing"), ("closing", "closed")]


# ----------------------------------------------------------------- negotiation


@pytest.mark.parametrize(
    ("era", "version"), [("modern", MODERN), ("dual", MODERN), ("legacy", LATEST_LEGACY)]
)
def test_auto_negotiates_each_era(tmp_path: Path, era: str, version: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, record=rec.path)) as client:
        assert client.status().protocol_version == version
        assert client.catalog().protocol_version == version
        assert text_of(client.call_tool("echo", {"message": era})) == era
    methods = rec.methods()
    assert methods[0] == "server/discover"
    assert ("initialize" in methods) == (era == "legacy")


def test_legacy_server_that_dies_of_the_probe_is_restarted_once(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition("--era", "legacy", "--exit-on-discover", record=rec.path)
    with connect(defn, Handlers(event=events)) as client:
        assert client.status().state is State.READY
        assert client.status().protocol_version == LATEST_LEGACY
        assert text_of(client.call_tool("echo", {"message": "restarted"})) == "restarted"
        # The restarted server (same record file) went straight to initialize.
        methods = rec.methods()
        assert methods.count("server/discover") == 1
        assert methods.count("initialize") == 1
        assert methods.index("server/discover") < methods.index("initialize")
    # The dead first server is not reported as a lost connection of the binding.
    assert not any(isinstance(e, ConnectionLost) for e in events)
    assert states(events) == CONNECT_STATES + CLOSE_STATES


def test_silent_probe_falls_back_to_initialize(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era", "legacy", "--silent-discover", record=rec.path, timeouts=Timeouts(startup=20)
    )
    start = time.monotonic()
    with connect(defn) as client:
        elapsed = time.monotonic() - start
        assert elapsed < 5.0 + 3.0, "the probe waited longer than its window"
        assert client.status().protocol_version == LATEST_LEGACY
        assert text_of(client.call_tool("echo", {"message": "fallback"})) == "fallback"
    methods = rec.methods()
    assert methods[:2] == ["server/discover", "initialize"]


def test_protocol_legacy_skips_the_probe(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "dual", record=rec.path, protocol="legacy")) as client:
        assert client.status().protocol_version == LATEST_LEGACY
    methods = rec.methods()
    assert "server/discover" not in methods
    assert methods[0] == "initialize"


def test_pinned_legacy_version_is_offered(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "legacy", record=rec.path, protocol="2025-03-26")) as client:
        assert client.status().protocol_version == "2025-03-26"
    (init,) = rec.requests("initialize")
    assert init["params"]["protocolVersion"] == "2025-03-26"
    assert "server/discover" not in rec.methods()


def test_pinned_modern_version_against_a_legacy_server_fails_without_fallback(
    tmp_path: Path,
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    start = time.monotonic()
    with pytest.raises(ProtocolError) as info:
        connect(definition("--era", "legacy", record=rec.path, protocol=MODERN))
    assert time.monotonic() - start < 5.0, "waited for the startup deadline"
    assert info.value.failure_class in (
        FailureClass.SERVER_PROTOCOL,
        FailureClass.UNSUPPORTED_PROTOCOL,
    )
    assert info.value.op in ("connect", "server/discover")
    assert "initialize" not in rec.methods()


def test_era_cache_skips_the_probe_on_the_second_connect(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    # unique=False: both connects use the same command line, i.e. the same cache key.
    defn = definition("--era", "legacy", record=rec.path, unique=False)
    with connect(defn) as client:
        assert client.status().protocol_version == LATEST_LEGACY
    assert rec.methods().count("server/discover") == 1
    with connect(defn) as client:
        assert client.status().protocol_version == LATEST_LEGACY
    methods = rec.methods()
    assert methods.count("server/discover") == 1, "the second connect probed again"
    assert methods.count("initialize") == 2


# ----------------------------------------------------------------- startup failures


def test_unanswered_initialize_is_a_startup_timeout() -> None:
    defn = definition("--era", "legacy", "--no-initialize-answer", timeouts=Timeouts(startup=1))
    before = children_of(os.getpid())
    start = time.monotonic()
    with pytest.raises(DeadlineExceededError) as info:
        connect(defn)
    elapsed = time.monotonic() - start
    assert 0.95 <= elapsed < 1 + SLACK
    assert info.value.failure_class is FailureClass.STARTUP_TIMEOUT
    assert info.value.op == "connect"
    assert isinstance(info.value, TimeoutError)
    # connect tore everything down before raising (the leak guard re-checks later).
    assert children_of(os.getpid()) - before == set()


def test_connect_timeout_argument_bounds_startup() -> None:
    defn = definition("--era", "legacy", "--no-initialize-answer", timeouts=Timeouts(startup=30))
    start = time.monotonic()
    with pytest.raises(DeadlineExceededError) as info:
        connect(defn, timeout=0.5)
    assert time.monotonic() - start < 0.5 + SLACK
    assert info.value.failure_class is FailureClass.STARTUP_TIMEOUT


def test_connect_timeout_message_names_the_effective_budget() -> None:
    defn = definition("--era", "legacy", "--no-initialize-answer", timeouts=Timeouts(startup=30))
    with pytest.raises(DeadlineExceededError) as info:
        connect(defn, timeout=0.5)
    assert "30 s" not in info.value.message
    assert "0.5" in info.value.message


def test_connect_with_a_timeout_succeeds_when_in_time() -> None:
    with connect(definition("--era", "modern"), timeout=10) as client:
        assert client.status().state is State.READY


def test_connect_cancelled_from_another_thread() -> None:
    defn = definition("--era", "legacy", "--no-initialize-answer", timeouts=Timeouts(startup=30))
    token = CancelToken()
    timer = threading.Timer(0.5, token.cancel)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(RequestCancelledError) as info:
            connect(defn, cancel=token)
    finally:
        timer.join()
    assert time.monotonic() - start < 0.5 + SLACK
    assert info.value.failure_class is FailureClass.CANCELLED
    assert info.value.op in ("connect", "initialize")


def test_connect_with_an_already_cancelled_token_starts_nothing() -> None:
    token = CancelToken()
    token.cancel()
    before = children_of(os.getpid())
    with pytest.raises(RequestCancelledError):
        connect(definition("--era", "modern"), cancel=token)
    assert children_of(os.getpid()) - before == set()


def test_cancelled_connect_never_cancels_initialize_on_the_wire(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era",
        "legacy",
        "--no-initialize-answer",
        record=rec.path,
        timeouts=Timeouts(startup=30),
    )
    token = CancelToken()

    def cancel_once_initialize_arrived() -> None:
        # Cancel only once the server has the request (a loaded machine may
        # take longer than any fixed delay to start the child and send it).
        wait_until(lambda: bool(rec.requests("initialize")), 20.0)
        token.cancel()

    canceller = threading.Thread(target=cancel_once_initialize_arrived, name="test-canceller")
    canceller.start()
    try:
        with pytest.raises(RequestCancelledError):
            connect(defn, cancel=token)
    finally:
        canceller.join()
    (init,) = rec.requests("initialize")
    assert init["id"] not in rec.cancelled_ids()


def test_connect_to_a_command_that_does_not_exist() -> None:
    transport = mcpclient.StdioTransport("/nonexistent/mcp-server-binary", shutdown_grace=0.2)
    with pytest.raises(Error) as info:
        connect(mcpclient.Definition(name="engine", transport=transport))
    assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED


def test_server_exiting_after_initialize_fails_connect_classified() -> None:
    defn = definition("--era", "legacy", "--exit-after-initialize", protocol="legacy")
    start = time.monotonic()
    with pytest.raises(Error) as info:
        connect(defn)
    assert time.monotonic() - start < 5.0
    # It died after the handshake, during discovery: a lost connection, not a timeout.
    assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED


# ----------------------------------------------------------------- events


def test_connect_and_close_emit_the_lifecycle_in_order() -> None:
    events: list[object] = []

    def slow_handler(event: object) -> None:
        time.sleep(0.05)  # connect must still wait for every one of its events
        events.append(event)

    client = connect(definition("--era", "modern"), Handlers(event=slow_handler))
    try:
        # connect returned only after its own events were delivered.
        assert states(events) == CONNECT_STATES
        adopted = [e for e in events if isinstance(e, CatalogAdopted)]
        assert len(adopted) == 1
        assert adopted[0].generation == 1
        assert adopted[0].previous == 0
        assert adopted[0].digest == client.catalog().digest
        ready = next(
            i
            for i, e in enumerate(events)
            if isinstance(e, mcpclient.StateChanged) and e.to_state is State.READY
        )
        assert events.index(adopted[0]) < ready
        assert all(getattr(e, "binding", None) == "engine" for e in events)
    finally:
        client.close()
    assert states(events) == CONNECT_STATES + CLOSE_STATES
    assert client.status().state is State.CLOSED


def test_failed_startup_emits_failed() -> None:
    events = Events()
    defn = definition("--era", "legacy", "--no-initialize-answer", timeouts=Timeouts(startup=1))
    with pytest.raises(DeadlineExceededError):
        connect(defn, Handlers(event=events))
    assert wait_until(lambda: ("starting", "failed") in states(events), 2.0), states(events)
    assert states(events)[0] == ("configured", "starting")


# ----------------------------------------------------------------- close


def test_close_is_idempotent_and_safe_from_many_threads() -> None:
    events = Events()
    client = connect(definition("--era", "modern"), Handlers(event=events))
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def closer() -> None:
        try:
            barrier.wait(5)
            client.close(timeout=3)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=closer) for _ in range(8)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert time.monotonic() - start < 3 + SLACK
    assert errors == []
    assert client.status().state is State.CLOSED
    client.close()
    client.close(timeout=0)
    assert states(events) == CONNECT_STATES + CLOSE_STATES


def test_calls_after_close_raise_shutdown() -> None:
    client = connect(definition("--era", "modern"))
    generation = client.catalog().generation
    client.close()
    with pytest.raises(ShutdownError):
        client.call_tool("echo", {"message": "x"})
    with pytest.raises(ShutdownError):
        client.submit_tool_call("echo", {"message": "x"})
    with pytest.raises(ShutdownError):
        client.ping()
    with pytest.raises(ShutdownError):
        client.read_resource("test://static/hello")
    with pytest.raises(ShutdownError):
        client.get_prompt("greet", {"name": "x"})
    with pytest.raises(ShutdownError):
        client.adopt(2)
    assert client.catalog().generation == generation  # still readable
    assert client.status().state is State.CLOSED


def test_close_of_a_server_ignoring_eof_and_sigterm_is_bounded() -> None:
    before = children_of(os.getpid())
    client = connect(definition("--era", "modern", "--ignore-stdin-eof"))
    pid = server_pid(before)
    start = time.monotonic()
    client.close(timeout=0.5)
    assert time.monotonic() - start < 1.5
    assert reaped(pid)


def test_close_kills_the_grandchild_too() -> None:
    before = children_of(os.getpid())
    with connect(definition("--era", "modern", "--spawn-grandchild")) as client:
        pid = server_pid(before)
        assert wait_until(lambda: bool(children_of(pid)), 5.0), "the grandchild never started"
        (grandchild,) = children_of(pid)
        assert text_of(client.call_tool("echo", {"message": "x"})) == "x"
    assert reaped(pid)
    # Our grandchild is re-parented once the server dies; PID 1 may leave it a zombie.
    assert dead(grandchild), f"grandchild {grandchild} survived close()"


@pytest.mark.parametrize("backend", ["posix", "portable"])
def test_a_server_that_dies_while_its_grandchild_holds_stdout_is_a_loss(
    monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    # The grandchild inherits the server's stdout, so the pipe never reaches EOF
    # when the server dies: the server's own exit must end the connection.
    monkeypatch.setenv("MCPCLIENT_STDIO_BACKEND", backend)
    events = Events()
    before = children_of(os.getpid())
    with connect(definition("--era", "modern", "--spawn-grandchild"), events.handlers()) as client:
        pid = server_pid(before)
        assert wait_until(lambda: bool(children_of(pid)), 5.0), "the grandchild never started"
        (grandchild,) = children_of(pid)
        start = time.monotonic()
        with pytest.raises(mcpclient.IndeterminateError) as info:
            client.call_tool("hostile", {"action": "exit"}, CallOpts(timeout=30))
        assert time.monotonic() - start < 5, "the call ran to its deadline"
        assert "exit status 1" in str(info.value)
        (lost,) = events.wait(ConnectionLost)
        assert lost.retrying and "exit status 1" in lost.message
        # The group is ended once the server is gone, and the binding reconnects.
        assert dead(grandchild), f"grandchild {grandchild} outlived its server"
        assert text_of(client.call_tool("echo", {"message": "back"})) == "back"
    assert reaped(pid)


def test_close_while_a_call_waits_for_its_turn(tmp_path: Path) -> None:
    # Calls are serialized by default: one is sent, the others wait unsent.
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        futures = [
            client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20)) for _ in range(4)
        ]
        assert wait_until(lambda: rec.tool_call_ids("slow"))  # the first is at the server
        start = time.monotonic()
        client.close(timeout=2)
        outcomes = [type(f.exception(timeout=SLACK)) for f in futures]
        assert time.monotonic() - start < 2 + SLACK
    assert outcomes.count(mcpclient.IndeterminateError) == 1, outcomes
    assert outcomes.count(ShutdownError) == 3, outcomes


def _close_from_the_event_handler() -> tuple[list[object], float]:
    """Close the binding from its own event handler upon ConnectionLost."""
    events: list[object] = []
    took: list[float] = []
    box: list[mcpclient.Client] = []

    def handler(event: object) -> None:
        events.append(event)
        if isinstance(event, ConnectionLost):
            start = time.monotonic()
            box[0].close(timeout=3)
            took.append(time.monotonic() - start)

    client = connect(definition("--era", "modern"), Handlers(event=handler))
    box.append(client)
    try:
        with pytest.raises(mcpclient.IndeterminateError):
            client.call_tool("hostile", {"action": "exit"}, CallOpts(timeout=10))
        assert wait_until(lambda: bool(took), 10), "close() from the handler never returned"
    finally:
        client.close()
    assert client.status().state is State.CLOSED
    # The last event there is to deliver; a test that needs it asserts it is there.
    wait_until(lambda: ("closing", "closed") in states(events))
    return events, took[0]


def test_close_from_the_event_handler_returns_promptly() -> None:
    # The server is already dead and reaped: nothing is left to wait for.
    _, took = _close_from_the_event_handler()
    assert took < 0.8, f"close() from the event handler took {took:.2f} s"


def test_close_from_the_event_handler_still_delivers_its_events() -> None:
    events, _ = _close_from_the_event_handler()
    assert states(events)[-3:] == [
        ("ready", "reconnecting"),
        ("reconnecting", "closing"),
        ("closing", "closed"),
    ]


# ----------------------------------------------------------------- call cancellation


def test_cancel_token_from_another_thread_cancels_on_the_wire(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        token = CancelToken()
        timer = threading.Timer(0.5, token.cancel, args=("user pressed stop",))
        timer.start()
        start = time.monotonic()
        try:
            with pytest.raises(RequestCancelledError) as info:
                client.call_tool("slow", {"seconds": 30}, CallOpts(timeout=20, cancel=token))
        finally:
            timer.join()
        assert time.monotonic() - start < 0.5 + SLACK
        assert info.value.failure_class is FailureClass.CANCELLED
        (call_id,) = rec.tool_call_ids("slow")
        assert rec.wait_cancelled(call_id)
        assert text_of(client.call_tool("echo", {"message": "next"})) == "next"


def test_submitted_future_cancel_reaches_the_wire(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        future = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
        assert wait_until(lambda: bool(rec.tool_call_ids("slow")))
        assert not future.done()
        assert future.cancel() is True
        assert future.cancelled()
        (call_id,) = rec.tool_call_ids("slow")
        assert rec.wait_cancelled(call_id)
        assert text_of(client.call_tool("echo", {"message": "next"})) == "next"


def test_submitted_future_cancel_always_succeeds_while_pending() -> None:
    with connect(definition("--era", "modern")) as client:
        results = []
        for _ in range(25):
            future = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
            time.sleep(0.05)
            assert not future.done()
            results.append(future.cancel())
            with pytest.raises(BaseException):  # noqa: B017 - cancelled or failed, either way
                future.result(timeout=SLACK)
        assert all(results), f"cancel() returned False {results.count(False)} times of 25"


@pytest.mark.parametrize("how", ["call_tool", "submit_tool_call"])
def test_precancelled_token_sends_nothing(tmp_path: Path, how: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        token = CancelToken()
        token.cancel()
        opts = CallOpts(timeout=5, cancel=token)
        with pytest.raises(RequestCancelledError):
            if how == "call_tool":
                client.call_tool("echo", {"message": "cancelled"}, opts)
            else:
                client.submit_tool_call("echo", {"message": "cancelled"}, opts).result(5)
        # A marker call: once it is recorded, anything sent before it is too.
        assert text_of(client.call_tool("echo", {"message": "marker"})) == "marker"
        assert rec.tool_call_ids("echo", {"message": "marker"})
        assert rec.tool_call_ids("echo", {"message": "cancelled"}) == []


def test_expired_deadline_sends_nothing(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        with pytest.raises(DeadlineExceededError):
            client.call_tool(
                "echo", {"message": "too late"}, CallOpts(deadline=time.monotonic() - 1)
            )
        assert text_of(client.call_tool("echo", {"message": "marker"})) == "marker"
        assert rec.tool_call_ids("echo", {"message": "too late"}) == []


class _CancelledRightAfterRegistering(CancelToken):
    """A token "another thread" cancels at the worst moment: right after the session
    registered its callback, before the request frame is written."""

    def add_callback(self, callback: Callable[[], None]) -> int:
        handle = super().add_callback(callback)
        self.cancel("cancelled at an unlucky moment")
        return handle


def test_cancel_racing_the_send_never_reaches_the_server_first(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        with pytest.raises(RequestCancelledError):
            client.call_tool(
                "echo",
                {"message": "raced"},
                CallOpts(timeout=5, cancel=_CancelledRightAfterRegistering()),
            )
        assert text_of(client.call_tool("echo", {"message": "marker"})) == "marker"
        messages = rec.messages()
        for index, message in enumerate(messages):
            if message.get("method") != "notifications/cancelled":
                continue
            request_id = message["params"]["requestId"]
            later = [m for m in messages[index + 1 :] if m.get("id") == request_id]
            assert later == [], f"request {request_id} reached the server after its cancellation"


def test_cancel_after_completion_sends_nothing(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        token = CancelToken()
        result = client.call_tool("echo", {"message": "done"}, CallOpts(timeout=5, cancel=token))
        assert text_of(result) == "done"
        token.cancel()
        assert text_of(client.call_tool("echo", {"message": "marker"})) == "marker"
        assert rec.cancelled_ids() == []


def test_one_token_cancels_every_call_sharing_it(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", record=rec.path, allow_parallel_calls=True)
    with connect(defn) as client:
        token = CancelToken()
        opts = CallOpts(timeout=20, cancel=token)
        futures = [client.submit_tool_call("slow", {"seconds": 30 + i}, opts) for i in range(4)]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 4)
        token.cancel()
        for future in futures:
            try:
                exc = future.exception(timeout=SLACK)
            except concurrent.futures.CancelledError:
                continue
            assert isinstance(exc, RequestCancelledError)
        for call_id in rec.tool_call_ids("slow"):
            assert rec.wait_cancelled(call_id)


def test_keyboard_interrupt_cancels_the_call_on_the_wire(tmp_path: Path) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread only")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not handled by Python's default handler here")
    rec = Recording(tmp_path / "rec.jsonl")
    main_id = threading.main_thread().ident
    assert main_id is not None
    with connect(definition("--era", "modern", record=rec.path)) as client:
        # A real SIGINT (what Ctrl-C sends) interrupts the blocked wait at once;
        # _thread.interrupt_main() would only be seen when the wait ends on its own.
        timer = threading.Timer(0.5, signal.pthread_kill, args=(main_id, signal.SIGINT))
        timer.start()
        start = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("slow", {"seconds": 30}, CallOpts(timeout=20))
        finally:
            timer.join()
        assert time.monotonic() - start < 0.5 + SLACK
        (call_id,) = rec.tool_call_ids("slow")
        assert rec.wait_cancelled(call_id)
        # The binding is intact: the serialization slot was released.
        assert text_of(client.call_tool("echo", {"message": "after ^C"})) == "after ^C"


# ----------------------------------------------------------------- fork


def _run_in_fork(check: object, wait: float = 3.0) -> int | str:
    """Fork; the child runs ``check()`` (returning an exit code) and ``_exit``s."""
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a multi-threaded process; that is the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 99
        try:
            code = check()  # type: ignore[operator]
        except BaseException:
            code = 98
        finally:
            os._exit(code)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def _child_sees_closed(client: mcpclient.Client) -> int:
    if client.status().state is not State.CLOSED:
        return 2
    try:
        client.call_tool("echo", {"message": "from the child"}, CallOpts(timeout=2))
    except ShutdownError:
        pass
    else:
        return 3
    client.close(timeout=1)  # harmless in the child: touches nothing of the parent's
    return 0


def test_fork_child_sees_a_closed_client_and_parent_keeps_working() -> None:
    with connect(definition("--era", "modern")) as client:
        assert _run_in_fork(lambda: _child_sees_closed(client)) == 0
        assert client.status().state is State.READY
        assert text_of(client.call_tool("echo", {"message": "parent"})) == "parent"
        assert text_of(client.call_tool("echo", {"message": "again"})) == "again"


@pytest.mark.parametrize("which", ["session", "client"])
def test_fork_while_another_thread_holds_a_binding_lock(which: str) -> None:
    # The reader thread takes the session lock for every response and callers take
    # the client lock on every call; holding each from a helper thread at fork time
    # makes that race deterministic.
    with connect(definition("--era", "modern")) as client:
        conn = client._st.conn
        assert conn is not None
        lock = conn.session._lock if which == "session" else client._st.lock
        held, release = threading.Event(), threading.Event()

        def holder() -> None:
            with lock:
                held.set()
                release.wait(10)

        thread = threading.Thread(target=holder)
        thread.start()
        try:
            assert held.wait(5)
            outcome = _run_in_fork(lambda: _child_sees_closed(client))
        finally:
            release.set()
            thread.join()
        assert text_of(client.call_tool("echo", {"message": "parent"})) == "parent"
        assert outcome == 0


# ----------------------------------------------------------------- interpreter exit

_EXIT_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import mcpclient
    from tests.support.processes import children_of as children

    transport = mcpclient.StdioTransport(
        sys.executable,
        ["-m", "mcpclient.testing.server", *sys.argv[1:]],
        cwd=os.getcwd(),
        shutdown_grace=0.2,
    )
    client = mcpclient.connect(mcpclient.Definition(name="atexit", transport=transport))

    for server in children(os.getpid()):
        print("server-pid", server, flush=True)
        for grandchild in children(server):
            print("grandchild-pid", grandchild, flush=True)
    print(client.call_tool("echo", {"message": "alive"}).content[0].text, flush=True)
    # no close(): the interpreter exits with the binding open
    """
)


@pytest.mark.parametrize("flags", [[], ["--ignore-stdin-eof"], ["--spawn-grandchild"]])
def test_interpreter_exit_with_an_open_client_stops_the_server(flags: list[str]) -> None:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT, "--era", "modern", *flags],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
        text=True,
        timeout=30,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert "alive" in lines
    servers = [int(lines[i + 1]) for i, word in enumerate(lines) if word == "server-pid"]
    grandchildren = [int(lines[i + 1]) for i, word in enumerate(lines) if word == "grandchild-pid"]
    assert len(servers) == 1, proc.stdout
    assert len(grandchildren) == (1 if "--spawn-grandchild" in flags else 0), proc.stdout
    assert elapsed < 10, f"interpreter exit took {elapsed:.1f} s"
    for pid in servers + grandchildren:
        assert dead(pid), f"process {pid} outlived the interpreter"


def test_close_with_zero_timeout_still_leaves_no_process() -> None:
    before = children_of(os.getpid())
    client = connect(definition("--era", "modern", "--ignore-stdin-eof"))
    pid = server_pid(before)
    start = time.monotonic()
    client.close(timeout=0)
    assert time.monotonic() - start < SLACK
    assert reaped(pid)
    assert client.status().state is State.CLOSED


def test_serialized_call_waiting_for_its_turn_ends_at_its_deadline(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        busy = client.submit_tool_call("slow", {"seconds": 1.5}, CallOpts(timeout=20))
        assert wait_until(lambda: bool(rec.tool_call_ids("slow")))
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool("echo", {"message": "queued"}, CallOpts(timeout=0.5))
        assert time.monotonic() - start < 0.5 + SLACK
        assert not busy.result(timeout=10).is_error
        assert rec.tool_call_ids("echo") == []  # it never left the client


def test_ping_in_both_eras() -> None:
    for era in ("modern", "legacy"):
        with connect(definition("--era", era)) as client:
            client.ping(CallOpts(timeout=5))
