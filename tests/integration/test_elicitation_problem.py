"""Issue 14 defect 11: an answer that fails the form is still sent as ``cancel``, and says why.

``ElicitationResolved.problem`` names the failing field and rule (never a
value), and a WARNING on logger ``mcpclient`` says the same. Legacy era: the
testing server's ``server_request``; modern era: its ``ask`` tool (MRTR).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    ClientCapabilities,
    ElicitAction,
    ElicitationResolved,
    ElicitRequest,
    ElicitResult,
    HandlerContext,
    Handlers,
)
from tests.support import Events

from .engine_support import definition, text_of, wait_until

CAPS = ClientCapabilities(elicitation=True)
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "pin": {"type": "string", "pattern": "^[0-9]{4}$"},
    },
    "required": ["name"],
}
SECRET = "hunter2-do-not-log"


def answering(content: Any) -> Any:
    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, content=content)

    return elicit


def legacy_elicit(handler: Any, events: Events) -> dict[str, Any]:
    """Have the legacy testing server elicit once; return what it was answered."""
    handlers = Handlers(elicitation=handler, event=events)
    with mcpclient.connect(definition("--era", "legacy", capabilities=CAPS), handlers) as c:
        result = c.call_tool(
            "hostile",
            {
                "action": "server_request",
                "method": "elicitation/create",
                "params": {"message": "Who are you?", "requestedSchema": FORM},
            },
        )
        assert wait_until(lambda: len(events.of(ElicitationResolved)) == 1)
    report: dict[str, Any] = json.loads(text_of(result))
    return report


@pytest.mark.parametrize(
    ("content", "field", "rule"),
    [
        pytest.param({"name": "Ada", "age": SECRET}, "$.age", "type", id="wrong-type"),
        pytest.param({"name": "Ada", "age": -7}, "$.age", "minimum", id="below-minimum"),
        pytest.param({"name": "Ada", "pin": SECRET}, "$.pin", "pattern", id="pattern"),
        pytest.param({"age": 3, "pin": SECRET}, "$.name", "required", id="missing-required"),
    ],
)
def test_a_failing_answer_is_sent_as_cancel_with_the_field_and_rule(
    caplog: pytest.LogCaptureFixture, content: dict[str, Any], field: str, rule: str
) -> None:
    events = Events()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        report = legacy_elicit(answering(content), events)
    assert report == {"result": {"action": "cancel"}}
    [resolved] = events.of(ElicitationResolved)
    assert resolved.action is ElicitAction.CANCEL
    assert field in resolved.problem and repr(rule) in resolved.problem, resolved.problem
    assert SECRET not in resolved.problem and "-7" not in resolved.problem
    assert len(resolved.problem.encode()) <= 512
    [record] = [r for r in caplog.records if r.name == "mcpclient"]
    assert record.levelno == logging.WARNING
    logged = record.getMessage()
    assert field in logged and repr(rule) in logged and "cancel" in logged
    assert SECRET not in logged and "-7" not in logged
    assert "engine" in logged  # the binding


def test_an_answer_that_is_not_an_object_says_so(caplog: pytest.LogCaptureFixture) -> None:
    events = Events()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        report = legacy_elicit(answering([SECRET]), events)
    assert report == {"result": {"action": "cancel"}}
    [resolved] = events.of(ElicitationResolved)
    assert "not an object" in resolved.problem
    assert SECRET not in resolved.problem
    assert any("not an object" in r.getMessage() for r in caplog.records if r.name == "mcpclient")


def test_a_valid_answer_has_no_problem_and_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    events = Events()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        report = legacy_elicit(answering({"name": "Ada", "age": 36, "pin": "1234"}), events)
    assert report["result"]["action"] == "accept"
    [resolved] = events.of(ElicitationResolved)
    assert resolved.action is ElicitAction.ACCEPT
    assert resolved.problem == ""
    assert [r for r in caplog.records if r.name == "mcpclient"] == []


def test_a_raising_handler_says_it_raised() -> None:
    def broken(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        raise RuntimeError(SECRET)

    events = Events()
    report = legacy_elicit(broken, events)
    assert report == {"result": {"action": "cancel"}}
    [resolved] = events.of(ElicitationResolved)
    assert "handler failed" in resolved.problem and "RuntimeError" in resolved.problem
    assert SECRET not in resolved.problem


def test_a_failing_answer_in_an_mrtr_round_is_cancel_with_the_problem(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = Events()
    handlers = Handlers(elicitation=answering({"name": 5}), event=events)
    inputs = [
        {
            "key": "who",
            "method": "elicitation/create",
            "params": {"message": "Who?", "requestedSchema": FORM},
        }
    ]
    with (
        caplog.at_level(logging.WARNING, logger="mcpclient"),
        mcpclient.connect(
            definition("--era", "modern", "--mrtr", capabilities=CAPS), handlers
        ) as c,
    ):
        result = c.call_tool("ask", {"inputs": inputs})
        assert wait_until(lambda: len(events.of(ElicitationResolved)) == 1)
    answer = json.loads(text_of(result))
    assert answer["inputResponses"] == {"who": {"action": "cancel"}}
    [resolved] = events.of(ElicitationResolved)
    assert "$.name" in resolved.problem and "'type'" in resolved.problem
    assert any("$.name" in r.getMessage() for r in caplog.records if r.name == "mcpclient")
