"""Tasks, 2025-11-25 form, against the reference server-everything.

Its ``simulate-research-query`` tool is ``execution.taskSupport: "required"``
and the server declares ``tasks.{list,cancel,requests.tools.call}``: four
stages of one second each, ``pollInterval`` 1000 ms, and (``ambiguous``) an
elicitation sent while the client blocks in ``tasks/result``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
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
    SampleRequest,
    SampleResult,
    State,
    TaskHandle,
    TaskState,
)
from mcpclient._internal.client.inbound.hosted_tasks import HostedTasks
from mcpclient._internal.wire.tasks import RELATED_TASK
from mcpclient.definition import TASKS_EXTENSION
from tests.support import wait_until
from tests.support.http_servers import ServerProcess

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
    # tasks/list, then tasks/get of each: the states of the server's tasks.
    return [handle.status().state for handle in client.list_tasks(timeout=10)]


def test_call_tool_runs_a_task_required_tool_to_completion(everything: mcpclient.Client) -> None:
    started = time.monotonic()
    result = everything.call_tool(TOOL, {"topic": "tides"}, timeout=30)
    assert result.is_error is False
    assert "Research Report: tides" in result.text
    # Four one-second stages, polled at the server's 1 s interval.
    assert 3.5 < time.monotonic() - started < 15
    assert everything.status().state is State.READY
    # The server pushes notifications/tasks/status at each stage: they woke the poller.
    assert everything._calls.tasks.wakeups.woken >= 1


def test_deadline_cancels_the_task_on_the_wire(everything: mcpclient.Client) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError):
        everything.call_tool(TOOL, {"topic": "late"}, timeout=1.2)
    assert time.monotonic() - started < 2.5  # the one deadline holds
    # The best-effort tasks/cancel reached the server.
    assert wait_until(lambda: TaskState.CANCELLED in _open_tasks(everything), 5, step=0.1)


def test_caller_cancel_cancels_the_task(everything: mcpclient.Client) -> None:
    token = CancelToken()
    timer = threading.Timer(0.8, token.cancel)
    timer.start()
    try:
        with pytest.raises(RequestCancelledError):
            everything.call_tool(TOOL, {"topic": "stop"}, timeout=30, cancel=token)
    finally:
        timer.cancel()
    assert wait_until(lambda: TaskState.CANCELLED in _open_tasks(everything), 5, step=0.1)


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


def test_list_tasks(everything: mcpclient.Client) -> None:
    started = everything.start_task(TOOL, {"topic": "list"}, timeout=10)
    (listed,) = everything.list_tasks(timeout=10)
    assert listed.task_id == started.task_id
    assert listed.status().state is TaskState.WORKING
    assert "Research Report: list" in listed.result(timeout=30).text


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

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
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


# ------------------------------------------------------------------ client-hosted tasks


def _hosting(everything_definition: MakeDefinition, **kwargs: Any) -> mcpclient.Definition:
    return everything_definition(
        capabilities=ClientCapabilities(elicitation=True, sampling=True),
        extensions={TASKS_EXTENSION: {}},
        **kwargs,
    )


def test_the_server_runs_our_elicitation_as_a_task(
    everything_definition: MakeDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[ElicitRequest] = []
    polled = threading.Event()  # the server sent tasks/get for our hosted task
    serve = HostedTasks.serve

    def spy(self: HostedTasks, session: Any, request_id: Any, method: str, *rest: Any) -> None:
        serve(self, session, request_id, method, *rest)
        if method == "tasks/get":
            polled.set()

    monkeypatch.setattr(HostedTasks, "serve", spy)

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        asked.append(request)
        # Still working while the server polls tasks/get: answer once it has.
        assert polled.wait(15), "the server never polled tasks/get"
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})

    def sample(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        return SampleResult("test-model", "pong")

    handlers = Handlers(elicitation=elicit, sampling=sample)
    with mcpclient.connect(_hosting(everything_definition), handlers) as client:
        names = {t.raw_name for t in client.catalog().tools}
        if "trigger-elicitation-request-async" not in names:
            pytest.skip("this server-everything has no async elicitation tool")
        result = client.call_tool("trigger-elicitation-request-async", timeout=30)
        assert "[COMPLETED]" in result.text and "Name: Ada" in result.text, result.text
        assert "Poll 1: working" in result.text  # it polled our tasks/get
        sampled = client.call_tool("trigger-sampling-request-async", {"prompt": "ping"}, timeout=30)
        assert "[COMPLETED] Async sampling completed" in sampled.text, sampled.text
        assert "pong" in sampled.text
        assert RELATED_TASK in sampled.text  # tasks/result carried the related-task _meta
    assert len(asked) == 1


def test_without_the_opt_in_the_client_hosts_no_task(
    everything_definition: MakeDefinition,
) -> None:
    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        return ElicitResult(ElicitAction.DECLINE)

    definition = everything_definition(capabilities=ClientCapabilities(elicitation=True))
    with mcpclient.connect(definition, Handlers(elicitation=elicit)) as client:
        # Not declared: the server does not offer the async tools at all.
        names = {t.raw_name for t in client.catalog().tools}
        assert "trigger-elicitation-request-async" not in names
        assert "trigger-elicitation-request" in names


# ------------------------------------------------------------------ over Streamable HTTP


def test_tasks_over_streamable_http(everything_http: ServerProcess) -> None:
    # The input_required elicitation arrives on an SSE stream while tasks/result
    # is open; the server's own sampling task is polled over HTTP too.
    asked: list[ElicitRequest] = []

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        asked.append(request)
        if "clarify" in request.message:
            return ElicitResult(ElicitAction.ACCEPT, content={"interpretation": "historical"})
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})

    definition = mcpclient.Definition(
        "everything",
        mcpclient.StreamableHTTPTransport(everything_http.url),
        capabilities=ClientCapabilities(elicitation=True),
        extensions={TASKS_EXTENSION: {}},
    )
    with mcpclient.connect(definition, Handlers(elicitation=elicit), timeout=20) as client:
        assert client.status().transport_kind == "streamablehttp"
        if client.catalog().tool_by_raw_name(TOOL) is None:
            pytest.skip("this server-everything has no task-required tool")
        result = client.call_tool(TOOL, {"topic": "rome", "ambiguous": True}, timeout=30)
        assert "rome (historical)" in result.text
        hosted = client.call_tool("trigger-elicitation-request-async", timeout=30)
        assert "Name: Ada" in hosted.text, hosted.text
    assert len(asked) == 2
