"""Tasks, 2026-07-28 extension form (SEP-2663), against the testing server's ``task`` tool.

Every state (completed, an isError result, failed, cancelled by the server,
input_required), expiry, a task that never finishes (the call's one deadline
still holds and the task is cancelled on the wire), a hostile server that
revives a finished task, a server that chooses not to create one, the
handle API, a reconnect the task outlives, and HTTP's ``Mcp-Name`` routing.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    CancelToken,
    ClientCapabilities,
    DeadlineExceededError,
    ElicitAction,
    ElicitRequest,
    ElicitResult,
    FailureClass,
    HandlerContext,
    Handlers,
    ProtocolError,
    RequestCancelledError,
    State,
    TaskState,
    ToolUnavailableError,
)
from mcpclient.definition import TASKS_EXTENSION
from tests.support import Events, Recording, children_of, definition, server_pid, wait_until
from tests.support.http_servers import body_method, header, http_definition
from tests.support.servers import MODERN, SLACK

from .conftest import SpawnHttp

TASKS = {TASKS_EXTENSION: {}}
FAST = mcpclient.ReconnectPolicy(
    retry=mcpclient.RetryPolicy(attempts=64, base_delay=0.05, max_delay=0.2)
)


def _definition(record: Path | None = None, **fields: Any) -> mcpclient.Definition:
    fields.setdefault("extensions", TASKS)
    return definition("--extension", TASKS_EXTENSION, record=record, protocol=MODERN, **fields)


@pytest.fixture
def rec(tmp_path: Path) -> Recording:
    return Recording(tmp_path / "record.jsonl")


@pytest.fixture
def client(rec: Recording) -> Iterator[mcpclient.Client]:
    with mcpclient.connect(_definition(rec.path)) as c:
        assert c.status().extensions == (TASKS_EXTENSION,)
        yield c


def _cancels(rec: Recording) -> list[str]:
    return [m["params"]["taskId"] for m in rec.requests("tasks/cancel")]


# ------------------------------------------------------------------ call_tool: every state


def test_completed(client: mcpclient.Client, rec: Recording) -> None:
    result = client.call_tool("task", {"behavior": "complete", "label": "a"}, timeout=10)
    assert result.is_error is False and result.text == "task done: a"
    gets = rec.requests("tasks/get")
    assert gets, "the task was polled"
    # Every tasks/* request declares the extension (the server answers -32021 otherwise).
    meta = gets[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert TASKS_EXTENSION in meta["extensions"]
    assert not _cancels(rec)


def test_a_task_created_already_completed(client: mcpclient.Client, rec: Recording) -> None:
    # seconds=0: the CreateTaskResult already says completed (no payload in it).
    result = client.call_tool("task", {"behavior": "complete", "seconds": 0, "label": "z"})
    assert result.text == "task done: z"
    assert len(rec.requests("tasks/get")) == 1  # one get for the payload, no polling


def test_polls_at_the_suggested_interval(client: mcpclient.Client, rec: Recording) -> None:
    started = time.monotonic()
    client.call_tool("task", {"behavior": "complete", "seconds": 1.0, "poll_ms": 250}, timeout=10)
    elapsed = time.monotonic() - started
    polls = len(rec.requests("tasks/get"))
    # ~1 s at 250 ms: about four polls, never a tight loop.
    assert 3 <= polls <= 7, polls
    assert elapsed < 1.0 + SLACK


def test_a_zero_interval_is_held_to_the_floor(client: mcpclient.Client, rec: Recording) -> None:
    client.call_tool("task", {"behavior": "complete", "seconds": 0.5, "poll_ms": 0}, timeout=10)
    # The 50 ms floor: at most ~10 polls in 0.5 s (plus slack for the last one).
    assert len(rec.requests("tasks/get")) <= 13


def test_is_error_result_is_a_completed_task(client: mcpclient.Client) -> None:
    result = client.call_tool("task", {"behavior": "is_error"}, timeout=10)
    assert result.is_error is True and result.text == "the tool failed"


def test_failed(client: mcpclient.Client) -> None:
    with pytest.raises(ProtocolError) as info:
        client.call_tool("task", {"behavior": "fail"}, timeout=10)
    assert "-32603" in info.value.message and "the work failed" in info.value.message
    assert client.status().state is State.READY


def test_cancelled_by_the_server(client: mcpclient.Client, rec: Recording) -> None:
    with pytest.raises(RequestCancelledError) as info:
        client.call_tool("task", {"behavior": "server_cancel"}, timeout=10)
    assert "server cancelled" in info.value.message
    assert not _cancels(rec)  # nothing to cancel: it is over


def test_expired_task_is_not_found(client: mcpclient.Client) -> None:
    with pytest.raises(ToolUnavailableError) as info:
        client.call_tool("task", {"behavior": "expire", "ttl_ms": 300}, timeout=10)
    assert info.value.failure_class is FailureClass.NOT_FOUND


def test_a_task_that_never_finishes_ends_by_the_deadline_and_is_cancelled(
    client: mcpclient.Client, rec: Recording
) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError):
        client.call_tool("task", {"behavior": "never", "poll_ms": 400}, timeout=1.0)
    assert time.monotonic() - started < 1.0 + SLACK
    assert wait_until(lambda: len(_cancels(rec)) == 1, 5)


def test_caller_cancel_cancels_the_task(client: mcpclient.Client, rec: Recording) -> None:
    token = CancelToken()
    timer = threading.Timer(0.5, token.cancel)
    timer.start()
    try:
        started = time.monotonic()
        with pytest.raises(RequestCancelledError):
            client.call_tool("task", {"behavior": "never"}, timeout=30, cancel=token)
        assert time.monotonic() - started < 0.5 + SLACK
    finally:
        timer.cancel()
    assert wait_until(lambda: len(_cancels(rec)) == 1, 5)


def test_input_required_is_answered_once_with_tasks_update(rec: Recording) -> None:
    asked: list[ElicitRequest] = []

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        asked.append(request)
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})

    defn = _definition(rec.path, capabilities=ClientCapabilities(elicitation=True))
    with mcpclient.connect(defn, Handlers(elicitation=elicit)) as c:
        result = c.call_tool("task", {"behavior": "input", "seconds": 0.2}, timeout=10)
    assert result.text == "hello Ada"
    assert len(asked) == 1 and asked[0].message == "Your name?"
    (update,) = rec.requests("tasks/update")
    assert update["params"]["inputResponses"]["name"]["action"] == "accept"


def test_an_input_the_client_cannot_give_fails_the_call_and_cancels_the_task(
    client: mcpclient.Client, rec: Recording
) -> None:
    # No elicitation capability or handler: the task's input request is refused.
    with pytest.raises(mcpclient.Error) as info:
        client.call_tool("task", {"behavior": "input", "seconds": 0.1}, timeout=10)
    assert not isinstance(info.value, DeadlineExceededError)
    assert not rec.requests("tasks/update")
    assert wait_until(lambda: len(_cancels(rec)) == 1, 5)


def test_the_server_may_answer_without_a_task(client: mcpclient.Client) -> None:
    assert client.call_tool("task", {"behavior": "immediate"}).text == "done at once"
    handle = client.start_task("task", {"behavior": "immediate"})
    assert handle.task_id == "" and handle.status().state is TaskState.COMPLETED
    assert handle.result().text == "done at once"


def test_without_the_extension_a_task_tool_is_refused(tmp_path: Path) -> None:
    with mcpclient.connect(_definition(extensions={})) as c:
        assert c.status().extensions == ()
        with pytest.raises(ProtocolError) as info:
            c.call_tool("task", {"behavior": "complete"})
        assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL  # -32021
        with pytest.raises(ProtocolError):
            c.start_task("task", {"behavior": "complete"})
        with pytest.raises(ProtocolError):
            c.call_tool("echo", {"message": "x"}, task=True)
        with pytest.raises(ProtocolError) as info:
            c.list_tasks()  # 2026-07-28 has no tasks/list
        assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL


def test_a_submission_does_not_declare_tasks_so_no_task_is_left_running(
    client: mcpclient.Client, rec: Recording
) -> None:
    # A submission cannot drive a task: its request leaves the tasks extension out
    # of its capabilities, so the server may not answer it with one (it refuses the
    # task tool with -32021) and no task is created behind the caller's back.
    future = client.submit_tool_call("task", {"behavior": "never"}, mcpclient.CallOpts(timeout=10))
    with pytest.raises(ProtocolError) as info:
        future.result(timeout=15)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    [sent] = rec.requests("tools/call")
    caps = sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert TASKS_EXTENSION not in caps.get("extensions", {})
    assert not rec.requests("tasks/get")
    # The other calls of the binding still declare it.
    assert client.call_tool("task", {"behavior": "complete", "seconds": 0}).text.startswith(
        "task done"
    )


# ------------------------------------------------------------------ handles


def test_handle_status_result_and_the_task_keeps_running(client: mcpclient.Client) -> None:
    handle = client.start_task("task", {"behavior": "complete", "seconds": 1.0, "label": "h"})
    status = handle.status()
    assert status.state is TaskState.WORKING and status.poll_interval == 0.1
    assert status.created_at.endswith("Z") and not status.terminal
    with pytest.raises(DeadlineExceededError):
        handle.result(timeout=0.2)  # the handle leaves its task running
    assert handle.result(timeout=10).text == "task done: h"
    assert handle.status().state is TaskState.COMPLETED


def test_handle_cancel(client: mcpclient.Client, rec: Recording) -> None:
    handle = client.start_task("task", {"behavior": "never"})
    handle.cancel()
    assert _cancels(rec) == [handle.task_id]
    assert handle.status().state is TaskState.CANCELLED
    with pytest.raises(RequestCancelledError):
        handle.result(timeout=5)


def test_a_hostile_server_cannot_revive_a_finished_task(
    client: mcpclient.Client, caplog: pytest.LogCaptureFixture
) -> None:
    handle = client.start_task("task", {"behavior": "revive", "seconds": 0.1})
    assert handle.result(timeout=10).text == "task done: "
    with caplog.at_level(logging.WARNING, logger="mcpclient.tasks"):
        # The server now claims "working": refused, the handle stays completed.
        assert handle.status().state is TaskState.COMPLETED
    assert any("illegal transition completed -> working" in r.getMessage() for r in caplog.records)
    assert handle.task_id not in caplog.text
    assert client.status().state is State.READY


def test_a_handle_survives_a_reconnect_when_the_task_does() -> None:
    events = Events()
    before = children_of(os.getpid())
    defn = _definition(reconnect=FAST)
    with mcpclient.connect(defn, Handlers(event=events)) as c:
        pid = server_pid(before)
        handle = c.start_task("task", {"behavior": "complete", "seconds": 1.5, "label": "r"})
        os.kill(pid, signal.SIGKILL)
        assert wait_until(
            lambda: any(isinstance(e, mcpclient.ConnectionRestored) for e in events), 10
        )
        # The new server process knows the task (its id carries it): the handle goes on.
        assert handle.result(timeout=10).text == "task done: r"


def test_a_persisted_task_id_is_resumed_by_another_binding(rec: Recording) -> None:
    with mcpclient.connect(_definition(rec.path)) as first:
        task_id = first.start_task("task", {"behavior": "complete", "seconds": 0.5}).task_id
    # A later process (another binding, another server process) picks it up.
    with mcpclient.connect(_definition()) as later:
        handle = later.resume_task(task_id)
        assert handle.task_id == task_id
        assert handle.result(timeout=10).text == "task done: "
        with pytest.raises(ToolUnavailableError) as info:
            later.resume_task("no-such-task").status()
        assert info.value.failure_class is FailureClass.NOT_FOUND
        with pytest.raises(mcpclient.ConfigError):
            later.resume_task("")


# ------------------------------------------------------------------ Streamable HTTP


def test_http_tasks_carry_mcp_name(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "modern", "--extension", TASKS_EXTENSION)
    defn = http_definition(server.url, tag="tasks", protocol=MODERN, extensions=TASKS)
    with mcpclient.connect(defn) as c:
        handle = c.start_task("task", {"behavior": "complete", "seconds": 0.3})
        assert handle.result(timeout=10).text == "task done: "
        with pytest.raises(DeadlineExceededError):
            c.call_tool("task", {"behavior": "never"}, timeout=0.6)
        assert wait_until(
            lambda: any(body_method(e) == "tasks/cancel" for e in server.records("tasks")), 5
        )
    records = server.records("tasks")
    routed = [e for e in records if body_method(e) in ("tasks/get", "tasks/cancel")]
    assert {body_method(e) for e in routed} == {"tasks/get", "tasks/cancel"}
    for entry in routed:
        # The server refuses (-32020) a header that disagrees with the body.
        assert header(entry, "Mcp-Name") == entry["body"]["params"]["taskId"]
        assert header(entry, "Mcp-Method") == body_method(entry)
