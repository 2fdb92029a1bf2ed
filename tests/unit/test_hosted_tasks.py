"""Client-hosted tasks (2025-11-25): the receiver's contract, with a recording responder.

Real :class:`Interactions` (handler threads; no socket, no process): a server
asks for an elicitation as a task, polls, fetches the result, cancels.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpclient import CancelToken, ElicitAction, ElicitRequest, ElicitResult, HandlerContext
from mcpclient._internal.client.inbound.hosted_tasks import HostedTasks
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.session.protocol import client_capabilities
from mcpclient._internal.wire.tasks import RELATED_TASK
from mcpclient.definition import TASKS_EXTENSION, ClientCapabilities, Extension, Limits, Timeouts
from mcpclient.handlers import Handlers

FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


class Responses:
    """Records every answer (the session's ``respond``)."""

    def __init__(self) -> None:
        self.answered = threading.Condition()
        self.by_id: dict[Any, tuple[Any, Any]] = {}

    def respond(self, request_id: Any, result: Any = None, error: Any = None) -> None:
        with self.answered:
            self.by_id[request_id] = (result, error)
            self.answered.notify_all()

    def wait(self, request_id: Any, timeout: float = 5.0) -> tuple[Any, Any]:
        # Woken by each answer, not polled.
        with self.answered:
            if not self.answered.wait_for(lambda: request_id in self.by_id, timeout):
                raise AssertionError(f"no answer to {request_id}")
            return self.by_id[request_id]


class Gate:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()  # the handler runs
        self.contexts: list[HandlerContext] = []

    def __call__(self, request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        self.contexts.append(ctx)
        self.entered.set()
        self.release.wait(5)
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def hosted(gate: Gate) -> Any:
    interactions = Interactions(
        "b",
        Handlers(elicitation=gate),
        Limits(),
        Timeouts(),
        lambda _e: 0,
        version=lambda: "2025-11-25",
    )
    store = HostedTasks("b", interactions, allowed={"elicitation"})
    yield store
    gate.release.set()
    interactions.close()


def _ask(store: HostedTasks, session: Responses, rid: Any, **task: Any) -> str:
    params = {"mode": "form", "message": "Name?", "requestedSchema": FORM, "task": task}
    assert store.handles("elicitation/create", params)
    store.serve(session, rid, "elicitation/create", params, CancelToken())
    result, error = session.wait(rid)
    assert error is None and result["task"]["status"] == "working"
    return str(result["task"]["taskId"])


def _call(store: HostedTasks, session: Responses, rid: Any, method: str, **params: Any) -> Any:
    store.serve(session, rid, method, params, CancelToken())
    return session.wait(rid)


def test_a_task_runs_in_the_background_and_its_result_is_fetched(
    hosted: HostedTasks, gate: Gate
) -> None:
    session = Responses()
    task_id = _ask(hosted, session, 1, ttl=60_000)
    assert len(task_id) >= 24  # unguessable
    got, _ = _call(hosted, session, 2, "tasks/get", taskId=task_id)
    assert got["status"] == "working" and got["ttl"] == 60_000 and got["pollInterval"] > 0
    listed, _ = _call(hosted, session, 3, "tasks/list")
    assert [t["taskId"] for t in listed["tasks"]] == [task_id]
    hosted.serve(session, 4, "tasks/result", {"taskId": task_id}, CancelToken())
    time.sleep(0.1)  # a real pause: "no answer yet" has no event to wait on
    assert 4 not in session.by_id  # tasks/result blocks while the task runs
    gate.release.set()
    result, error = session.wait(4)
    assert error is None and result["action"] == "accept" and result["content"] == {"name": "Ada"}
    assert result["_meta"][RELATED_TASK] == {"taskId": task_id}
    got, _ = _call(hosted, session, 5, "tasks/get", taskId=task_id)
    assert got["status"] == "completed"
    _, error = _call(hosted, session, 6, "tasks/cancel", taskId=task_id)
    assert error["code"] == -32602  # already terminal


def test_cancel_moves_to_cancelled_first_and_reaches_the_handler(
    hosted: HostedTasks, gate: Gate
) -> None:
    session = Responses()
    task_id = _ask(hosted, session, 1)
    assert gate.entered.wait(5)
    cancelled, error = _call(hosted, session, 2, "tasks/cancel", taskId=task_id)
    assert error is None and cancelled["status"] == "cancelled"
    assert gate.contexts[0].cancelled.cancelled
    gate.release.set()
    time.sleep(0.1)  # a real pause: the late answer must have had time to (wrongly) land
    got, _ = _call(hosted, session, 3, "tasks/get", taskId=task_id)
    assert got["status"] == "cancelled"  # stays cancelled although the handler answered
    _, error = _call(hosted, session, 4, "tasks/result", taskId=task_id)
    assert error["code"] == -32602 and "cancelled" in error["message"]


def test_unknown_and_expired_tasks_are_not_found(hosted: HostedTasks, gate: Gate) -> None:
    session = Responses()
    _, error = _call(hosted, session, 1, "tasks/get", taskId="nope")
    assert error["code"] == -32602
    task_id = _ask(hosted, session, 2, ttl=50)
    time.sleep(0.1)  # a real pause: the 50 ms ttl must pass on the clock
    _, error = _call(hosted, session, 3, "tasks/get", taskId=task_id)
    assert error["code"] == -32602
    assert gate.contexts and gate.contexts[0].cancelled.cancelled  # expiry ends the work


def test_off_unless_declared() -> None:
    interactions = Interactions("b", Handlers(), Limits(), Timeouts(), lambda _e: 0)
    store = HostedTasks("b", interactions, allowed=set())
    assert not store.handles("elicitation/create", {"task": {}})
    assert not store.handles("tasks/get", {"taskId": "x"})
    interactions.close()


def test_the_capability_is_declared_only_at_2025_11_25_with_the_opt_in() -> None:
    caps = ClientCapabilities(elicitation=True, sampling=True)
    opted = (Extension(TASKS_EXTENSION),)
    wire = client_capabilities(caps, "2025-11-25", opted)
    assert wire["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}},
    }
    assert "tasks" not in client_capabilities(caps, "2025-11-25")
    assert "tasks" not in client_capabilities(caps, "2025-06-18", opted)
    assert "tasks" not in client_capabilities(caps, "2026-07-28", opted)
    assert "tasks" not in client_capabilities(ClientCapabilities(roots=True), "2025-11-25", opted)


def test_a_response_to_a_task_tagged_request_echoes_the_related_task() -> None:
    # 2025-11-25 input_required: the server's elicitation during tasks/result is
    # tagged with the task; the client's answer must carry the same key.
    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})

    interactions = Interactions(
        "b", Handlers(elicitation=elicit), Limits(), Timeouts(), lambda _e: 0,
        version=lambda: "2025-11-25",
    )  # fmt: skip
    session = Responses()
    tagged = {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": FORM,
        "_meta": {RELATED_TASK: {"taskId": "T-1"}},
    }
    interactions.serve_request(session, 1, "elicitation/create", tagged, CancelToken())
    plain = {k: v for k, v in tagged.items() if k != "_meta"}
    interactions.serve_request(session, 2, "elicitation/create", plain, CancelToken())
    result, _ = session.wait(1)
    assert result["_meta"][RELATED_TASK] == {"taskId": "T-1"} and result["action"] == "accept"
    result, _ = session.wait(2)
    assert RELATED_TASK not in (result.get("_meta") or {})
    interactions.close()
