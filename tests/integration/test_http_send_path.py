"""The Streamable HTTP send path against the testing server.

* A 404 to the optional GET stream is "no stream" unless the GET named a
  session (then the session is lost, as before).
* Notifications and answers to server requests go, in order, through the one
  send lane, each within a bounded deadline: no thread per message, and
  ``close()`` aborts one the server holds.
* A request whose response stream was cut and whose resumption is refused
  was delivered: a ``tools/call`` is ``indeterminate``, never "not sent".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    ClientCapabilities,
    ConnectionLost,
    FailureClass,
    Handlers,
    IndeterminateError,
    Root,
    State,
)
from tests.support import Events, delivered, threads_ended, wait_until
from tests.support.http_servers import ScriptedServer, body_method, header, http_definition

from .conftest import SpawnHttp
from .test_http import MODERN

ERAS = [("modern", "auto"), ("legacy", "legacy")]
NO_RECONNECT = mcpclient.ReconnectPolicy(disabled=True)


#: The HTTP pool's size (``Limits.max_concurrent_requests``, the default).
POOL_SIZE = mcpclient.Limits().max_concurrent_requests


def _threads(binding: str) -> list[str]:
    """Live threads of one binding that carry messages (pool, lane, streams)."""
    return [
        t.name
        for t in threading.enumerate()
        if t.is_alive()
        and t.name.endswith(f"-{binding}")
        and t.name.startswith(("mcpclient-http-", "mcpclient-send-", "mcpclient-listen-"))
    ]


def _answers(server: ScriptedServer, tag: str) -> list[Any]:
    """The ids of the answers to the server's pings, in the order they arrived."""
    out: list[Any] = []
    for entry in server.records(tag):
        body = entry.get("body")
        if (
            entry["method"] == "POST"
            and isinstance(body, dict)
            and "method" not in body
            and str(body.get("id", "")).startswith("ping-")
        ):
            out.append(body["id"])
    return out


def _count(server: ScriptedServer, tag: str, method: str, rpc: str | None = None) -> int:
    return sum(
        1
        for e in server.records(tag)
        if e["method"] == method and (rpc is None or body_method(e) == rpc)
    )


# ---------------------------------------------------------------- 404 on the GET stream


def _get_stream_settled(client: mcpclient.Client, binding: str = "web") -> None:
    """Wait until the GET stream's thread has handled its answer and anything it posted arrived.

    ``mcpclient-listen-<binding>`` ends once a 404 (or 405) is read, after
    reporting a lost session if it was one; :func:`delivered` then lets what
    that posted reach the recorder.
    """
    name = f"mcpclient-listen-{binding}"
    assert threads_ended(name), name
    delivered(client)


def test_get_404_without_a_session_id_is_no_stream(spawn_http: SpawnHttp, tag: str) -> None:
    # A legacy server that issues no session id and answers GET with 404 (an
    # app with only a POST route): the GET offered no stream, nothing is lost.
    server = spawn_http("--era", "legacy", "--no-session-id", "--get-status", "404")
    recorder = Events()
    definition = http_definition(server.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition, Handlers(event=recorder.on_event)) as client:
        assert wait_until(lambda: _count(server, tag, "GET") >= 1), "no GET stream was tried"
        assert client.call_tool("echo", {"message": "one"}).text == "one"
        _get_stream_settled(client)  # a loss would show by now
        assert client.call_tool("echo", {"message": "two"}).text == "two"
        assert client.status().state is State.READY
        assert recorder.of(ConnectionLost) == []
    records = server.records(tag)
    assert all(header(e, "Mcp-Session-Id") is None for e in records)
    assert _count(server, tag, "POST", "initialize") == 1, "the binding reconnected"
    assert _count(server, tag, "GET") == 1, "a stream not offered is not asked for again"


def test_get_404_in_the_modern_era_loses_nothing(spawn_http: SpawnHttp, tag: str) -> None:
    # 2026-07-28 is stateless: no session id, and a server answering every
    # GET with 404 serves the binding as well as any other.
    server = spawn_http("--era", "modern", "--get-status", "404")
    recorder = Events()
    definition = http_definition(server.url, tag=tag)
    with mcpclient.connect(definition, Handlers(event=recorder.on_event)) as client:
        assert client.status().protocol_version == MODERN
        assert client.call_tool("echo", {"message": "one"}).text == "one"
        delivered(client)  # (no GET stream in this era: its listen thread is another stream)
        assert client.call_tool("echo", {"message": "two"}).text == "two"
        assert client.status().state is State.READY
        assert recorder.of(ConnectionLost) == []
    assert _count(server, tag, "POST", "server/discover") == 1


def test_get_404_with_a_session_id_is_a_lost_session(spawn_http: SpawnHttp, tag: str) -> None:
    # With a session id a 404 keeps its meaning: the server forgot the session.
    server = spawn_http("--era", "legacy", "--get-status", "404")
    recorder = Events()
    definition = http_definition(server.url, tag=tag, protocol="legacy", reconnect=NO_RECONNECT)
    # The GET opens right after the handshake: the loss lands during the
    # catalog fetch (connect fails) or just after it (the binding is lost).
    try:
        with mcpclient.connect(definition, Handlers(event=recorder.on_event)):
            assert wait_until(lambda: len(recorder.of(ConnectionLost)) == 1)
    except mcpclient.ConnectionLostError as exc:
        assert "no longer knows this session" in exc.message
    gets = [e for e in server.records(tag) if e["method"] == "GET"]
    assert gets and header(gets[0], "Mcp-Session-Id") is not None


# ------------------------------------------------- notifications and answers: the lane


@pytest.mark.parametrize(("era", "protocol"), ERAS, ids=[era for era, _ in ERAS])
def test_answers_to_server_requests_arrive_in_order(
    spawn_http: SpawnHttp, tag: str, era: str, protocol: str
) -> None:
    server = spawn_http("--era", era)
    definition = http_definition(server.url, tag=tag, protocol=protocol)
    count = 40
    expected = [f"ping-{i}" for i in range(1, count + 1)]
    with mcpclient.connect(definition) as client:
        client.call_tool("hostile", {"action": "ping_flood", "count": count})
        assert wait_until(lambda: len(_answers(server, tag)) >= count, 10.0)
        assert _answers(server, tag) == expected


@pytest.mark.parametrize(("era", "protocol"), ERAS, ids=[era for era, _ in ERAS])
def test_no_thread_per_answer(spawn_http: SpawnHttp, tag: str, era: str, protocol: str) -> None:
    # The server holds each answer 0.1 s: one thread per answer would show
    # as 20 threads alive at once; the lane is one thread, sending in turn.
    server = spawn_http("--era", era)
    definition = http_definition(server.url, tag=tag, protocol=protocol, name="lane")
    with mcpclient.connect(definition) as client:
        client.call_tool("hostile", {"action": "hold_accepts", "seconds": 0.1})
        client.call_tool("hostile", {"action": "ping_flood", "count": 20})
        assert wait_until(lambda: len(_answers(server, tag)) >= 2)
        during = _threads("lane")
        # One lane sends them all, in turn; the pool's workers (discovery asks
        # for the families at once) and a listen stream are not per answer.
        assert during.count("mcpclient-send-lane") == 1, during
        assert len(during) <= 1 + POOL_SIZE + 1, during
        assert wait_until(lambda: len(_answers(server, tag)) >= 20, 10.0)
        assert _answers(server, tag) == [f"ping-{i}" for i in range(1, 21)]
        assert client.status().state is State.READY


def test_no_thread_per_notification(spawn_http: SpawnHttp, tag: str) -> None:
    server = spawn_http("--era", "legacy")
    definition = http_definition(
        server.url,
        tag=tag,
        protocol="legacy",
        name="roots",
        capabilities=ClientCapabilities(roots=True),
    )
    handlers = Handlers(roots=lambda _ctx: [Root("file:///tmp")])
    with mcpclient.connect(definition, handlers) as client:
        client.call_tool("hostile", {"action": "hold_accepts", "seconds": 0.1})
        for _ in range(20):
            client.notify_roots_changed()
        during = _threads("roots")
        assert during.count("mcpclient-send-roots") == 1, during  # one lane, not 20 threads
        assert len(during) <= 1 + POOL_SIZE + 1, during
        assert wait_until(
            lambda: _count(server, tag, "POST", "notifications/roots/list_changed") == 20, 10.0
        )


@pytest.mark.parametrize(("era", "protocol"), ERAS, ids=[era for era, _ in ERAS])
def test_close_aborts_an_answer_the_server_holds(
    spawn_http: SpawnHttp, tag: str, era: str, protocol: str
) -> None:
    server = spawn_http("--era", era)
    definition = http_definition(server.url, tag=tag, protocol=protocol, name="held")
    client = mcpclient.connect(definition)
    try:
        client.call_tool("hostile", {"action": "hold_accepts", "seconds": 60})
        client.call_tool("hostile", {"action": "ping_flood", "count": 3})
        assert wait_until(lambda: len(_answers(server, tag)) >= 1)
    finally:
        started = time.monotonic()
        client.close()
        took = time.monotonic() - started
    assert took < 3.0
    assert wait_until(lambda: _threads("held") == [], 2.0), _threads("held")
    time.sleep(0.2)
    assert _answers(server, tag) == ["ping-1"], "queued answers are dropped at close"


# ------------------------------------------------- a resumption refused: delivered


def _drop_and_resume(client: mcpclient.Client, retry_ms: int) -> Callable[[], Any]:
    """Start a call whose response stream is dropped; return a function joining it."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = client.call_tool(
                "hostile", {"action": "drop_stream", "retry": retry_ms}, CallOpts(timeout=20)
            )
        except mcpclient.Error as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="test-call")
    thread.start()

    def join() -> Any:
        thread.join(25)
        assert not thread.is_alive()
        return outcome

    return join


def test_a_resumption_refused_by_a_dead_server_is_indeterminate(
    spawn_http: SpawnHttp, tag: str
) -> None:
    server = spawn_http("--era", "legacy")
    definition = http_definition(server.url, tag=tag, protocol="legacy", reconnect=NO_RECONNECT)
    with mcpclient.connect(definition) as client:
        join = _drop_and_resume(client, retry_ms=1500)
        assert wait_until(
            lambda: any(
                e["method"] == "POST" and "drop_stream" in str(e.get("body"))
                for e in server.records(tag)
            )
        )
        server.close()  # gone before the client resumes: the GET is refused
        outcome = join()
    error = outcome.get("error")
    assert isinstance(error, IndeterminateError), outcome
    assert error.failure_class is FailureClass.INDETERMINATE


def test_a_resumption_answered_503_is_indeterminate(spawn_http: SpawnHttp, tag: str) -> None:
    server = spawn_http("--era", "legacy", "--get-status", "503")
    definition = http_definition(server.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition) as client:
        outcome = _drop_and_resume(client, retry_ms=50)()
        error = outcome.get("error")
        assert isinstance(error, IndeterminateError), outcome
        resumes = [
            e for e in server.records(tag) if e["method"] == "GET" and header(e, "Last-Event-ID")
        ]
        assert len(resumes) == 1
        posts = [e for e in server.records(tag) if "drop_stream" in str(e.get("body"))]
        assert len(posts) == 1, "a delivered call is never sent again"
        assert client.status().state is State.READY
