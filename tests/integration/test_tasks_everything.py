"""Tasks, 2025-11-25 form, against the reference server-everything.

Its ``simulate-research-query`` tool is ``execution.taskSupport: "required"``
and the server declares ``tasks.{list,cancel,requests.tools.call}``: four
stages of one second each, ``pollInterval`` 1000 ms, and (``ambiguous``) an
elicitation sent while the client blocks in ``tasks/result``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

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
    Handlers,
    ProtocolError,
    RequestCancelledError,
    State,
    TaskHandle,
    TaskState,
)

from .conftest import MakeDefinition

TOOL = "simulate-research-query"


@pytest.fixture
def everything(everything_definition: MakeDefinition) -> Iterator[mcpclient.Client]:
    client = mcpclient.connect(everything_definition())
    try:
        spec = client.catalog().tool_by_raw_name(TOOL)
        if spec is None or (spec.execution or {}).get("taskSupport") != "required":
            pytest.skip("this server-everything has no task-required tool")
        yield client
    finally:
        client.close()


def _open_tasks(client: mcpclient.Client) -> list[TaskState]:
    # tasks/list through the binding's runner (the states of the server's tasks).
    tasks = client._calls.tasks.list(op="test", deadline=time.monotonic() + 10)
    return [t.status for t in tasks]


def test_call_tool_runs_a_task_required_tool_to_completion(everything: mcpclient.Client) -> None:
    started = time.monotonic()
    result = everything.call_tool(TOOL, {"topic": "tides"}, timeout=30)
    assert result.is_error is False
    assert "Research Report: tides" in result.text
    # Four one-second stages, polled at the server's 1 s interval.
    assert 3.5 < time.monotonic() - started < 15
    assert everything.status().state is State.READY


def test_deadline_cancels_the_task_on_the_wire(everything: mcpclient.Client) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError):
        everything.call_tool(TOOL, {"topic": "late"}, timeout=1.2)
    assert time.monotonic() - started < 2.5  # the one deadline holds
    # The best-effort tasks/cancel reached the server.
    deadline = time.monotonic() + 5
    while TaskState.CANCELLED not in _open_tasks(everything) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert TaskState.CANCELLED in _open_tasks(everything)


def test_caller_cancel_cancels_the_task(everything: mcpclient.Client) -> None:
    token = CancelToken()
    import threading

    timer = threading.Timer(0.8, token.cancel)
    timer.start()
    try:
        with pytest.raises(RequestCancelledError):
            everything.call_tool(TOOL, {"topic": "stop"}, timeout=30, cancel=token)
    finally:
        timer.cancel()
    deadline = time.monotonic() + 5
    while TaskState.CANCELLED not in _open_tasks(everything) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert TaskState.CANCELLED in _open_tasks(everything)


def test_start_task_handle_status_result(everything: mcpclient.Client) -> None:
    handle = everything.start_task(TOOL, {"topic": "moons"}, timeout=10)
    assert isinstance(handle, TaskHandle)
    assert handle.task_id and handle.task_id not in repr(handle)
    first = handle.status()
    assert first.state is TaskState.WORKING
    assert first.poll_interval == 1.0 and first.ttl == 300.0
    with pytest.raises(DeadlineExceededError):
        handle.result(timeout=0.3)  # the task goes on
    result = handle.result(timeout=30)
    assert "Research Report: moons" in result.text
    assert handle.status().state is TaskState.COMPLETED


def test_handle_cancel(everything: mcpclient.Client) -> None:
    handle = everything.start_task(TOOL, {"topic": "void"}, timeout=10)
    handle.cancel()
    assert handle.status().state is TaskState.CANCELLED
    with pytest.raises(RequestCancelledError):
        handle.result(timeout=5)
    with pytest.raises(ProtocolError):
        handle.cancel()  # a terminal task: -32602


def test_input_required_is_served_by_the_elicitation_handler(
    everything_definition: MakeDefinition,
) -> None:
    asked: list[ElicitRequest] = []

    def elicit(request: ElicitRequest, cancel: CancelToken) -> ElicitResult:
        asked.append(request)
        return ElicitResult(ElicitAction.ACCEPT, content={"interpretation": "snake"})

    definition = everything_definition(capabilities=ClientCapabilities(elicitation=True))
    with mcpclient.connect(definition, Handlers(elicitation=elicit)) as client:
        if client.catalog().tool_by_raw_name(TOOL) is None:
            pytest.skip("this server-everything has no task-required tool")
        result = client.call_tool(TOOL, {"topic": "python", "ambiguous": True}, timeout=30)
    assert len(asked) == 1
    assert "python (snake)" in result.text


def test_submit_refuses_a_task_required_tool(everything: mcpclient.Client) -> None:
    with pytest.raises(ProtocolError) as info:
        everything.submit_tool_call(TOOL, {"topic": "x"})
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL


def test_task_false_on_a_required_tool_is_refused(everything: mcpclient.Client) -> None:
    with pytest.raises(ProtocolError) as info:
        everything.call_tool(TOOL, {"topic": "x"}, task=False)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL


def test_task_true_on_a_forbidden_tool_is_refused(everything: mcpclient.Client) -> None:
    with pytest.raises(ProtocolError) as info:
        everything.call_tool("echo", {"message": "x"}, task=True)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
