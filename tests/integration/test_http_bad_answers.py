"""An HTTP answer that cannot be used fails its call at once, naming what was wrong.

A POST's answer (its JSON body, or an event of its SSE stream) that is not
JSON, is cut short, holds NaN, answers another id or nests 20000 deep is the
server's answer to that one request: the call fails with a protocol error
there and then, instead of the answer being dropped while the call waits for
its deadline. The testing server's ``bad_answer`` action sends each kind
(docs/testing-server.md); the binding stays usable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import CallOpts, FailureClass, State
from tests.support.http_servers import ScriptedServer, http_definition

from .conftest import SpawnHttp

#: kind -> words the error must carry, naming what was wrong.
KINDS = {
    "not_json": "not valid JSON",
    "truncated": "not valid JSON",
    "nan": "NaN",
    "wrong_id": "id",
    "deep": "deeper",
}
#: Long enough never to be met by a call that fails at once, even under load.
TIMEOUT = 20.0


@pytest.fixture(scope="module")
def server(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    return spawn_shared_http("--era", "dual")


@pytest.fixture(params=["auto", "legacy"], ids=["modern", "legacy"])
def client(request: pytest.FixtureRequest, server: ScriptedServer) -> Iterator[mcpclient.Client]:
    defn = http_definition(server.url, tag="bad-answers", protocol=request.param)
    with mcpclient.connect(defn) as bound:
        yield bound


@pytest.mark.parametrize("form", ["json", "sse"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_an_unusable_answer_fails_the_call_at_once(
    client: mcpclient.Client, kind: str, form: str
) -> None:
    args = {"action": "bad_answer", "kind": kind, "form": form}
    with pytest.raises(mcpclient.Error) as info:
        client.call_tool("hostile", args, CallOpts(timeout=TIMEOUT))
    error = info.value
    assert type(error) is mcpclient.ProtocolError, repr(error)
    assert error.failure_class is FailureClass.SERVER_PROTOCOL
    assert error.op == "call_tool"
    assert KINDS[kind] in error.message, error.message
    assert ("SSE event" if form == "sse" else "JSON body") in error.message
    # Only that call failed: the binding goes on.
    assert client.call_tool("echo", {"message": "after"}).text == "after"
    assert client.status().state is State.READY


def test_a_body_that_answers_nothing_fails_at_once(
    client: mcpclient.Client, server: ScriptedServer, tmp_path: Path
) -> None:
    # A JSON body holding a notification instead of the response.
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
    client.call_tool(
        "hostile",
        {"action": "status", "code": 200, "body": note, "content_type": "application/json"},
    )
    with pytest.raises(mcpclient.ProtocolError) as info:
        client.call_tool("echo", {"message": "x"}, CallOpts(timeout=TIMEOUT))
    assert "no response" in info.value.message
