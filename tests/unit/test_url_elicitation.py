"""2025-11-25's -32042 (URL elicitation required): elicit, then send the request once more."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import mcpclient
from mcpclient._core.deadline import now
from mcpclient._internal.client.calls.mrtr import exchange
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.lifecycle.connection import URLElicitationRequiredError
from mcpclient._internal.session.context import CallContext

ELICITATIONS = [
    {"mode": "url", "message": "Sign in", "url": "https://auth.example/x", "elicitationId": "e1"}
]


class _Protocol:
    modern = False


class _Conn:
    """A connection whose first request needs a URL elicitation."""

    binding = "srv"
    protocol = _Protocol()

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.sent = 0

    def request(self, method: str, params: Any, ctx: CallContext) -> Any:
        self.sent += 1
        if self.failures:
            self.failures -= 1
            raise URLElicitationRequiredError(
                "needs a URL elicitation", ELICITATIONS, binding="srv", op="call_tool"
            )
        return {"content": [{"type": "text", "text": "done"}]}


@pytest.fixture
def opened() -> Iterator[list[Interactions]]:
    """Every Interactions a test opens, closed at its end (its pool's thread ends with it)."""
    made: list[Interactions] = []
    yield made
    for interactions in made:
        interactions.close()


def _interactions(
    opened: list[Interactions], action: mcpclient.ElicitAction, seen: list[Any]
) -> Interactions:
    def elicit(request: mcpclient.ElicitRequest, ctx: mcpclient.HandlerContext) -> Any:
        seen.append(request)
        return mcpclient.ElicitResult(action)

    interactions = Interactions(
        "srv",
        mcpclient.Handlers(elicitation=elicit),
        mcpclient.Limits(),
        mcpclient.Timeouts(),
        lambda _event: 0,
    )
    opened.append(interactions)
    return interactions


def _run(conn: _Conn, interactions: Interactions) -> Any:
    return exchange(
        conn,  # type: ignore[arg-type]
        "tools/call",
        {"name": "t"},
        CallContext(op="call_tool", deadline=now() + 5, indeterminate_on_loss=True),
        interactions=interactions,
        limits=mcpclient.Limits(),
    )


def test_accepted_url_elicitation_resends_the_request_once(opened: list[Interactions]) -> None:
    seen: list[Any] = []
    conn = _Conn(failures=1)
    result = _run(conn, _interactions(opened, mcpclient.ElicitAction.ACCEPT, seen))
    assert result["content"][0]["text"] == "done"
    assert conn.sent == 2
    (request,) = seen
    assert request.mode is mcpclient.ElicitMode.URL
    assert request.url == "https://auth.example/x"
    assert request.elicitation_id == "e1"


def test_a_second_demand_is_not_answered_again(opened: list[Interactions]) -> None:
    conn = _Conn(failures=2)
    with pytest.raises(mcpclient.ProtocolError):
        _run(conn, _interactions(opened, mcpclient.ElicitAction.ACCEPT, []))
    assert conn.sent == 2


@pytest.mark.parametrize(
    ("action", "failure"),
    [
        (mcpclient.ElicitAction.DECLINE, mcpclient.FailureClass.ELICITATION_DECLINED),
        (mcpclient.ElicitAction.CANCEL, mcpclient.FailureClass.ELICITATION_CANCELLED),
    ],
)
def test_a_refused_url_elicitation_fails_the_call(
    opened: list[Interactions], action: mcpclient.ElicitAction, failure: mcpclient.FailureClass
) -> None:
    conn = _Conn(failures=1)
    with pytest.raises(mcpclient.InteractionError) as info:
        _run(conn, _interactions(opened, action, []))
    assert info.value.failure_class is failure
    assert conn.sent == 1
