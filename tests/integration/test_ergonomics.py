"""Issue 14 defect 13: the ergonomics of calls, end to end against real peers.

* every call method takes ``timeout=``, ``progress=`` and ``cancel=`` (sugar
  over ``CallOpts``; both → ``ConfigError``, nothing sent);
* ``LogMessage``/``ServerLog`` carry the server's raw ``data`` (bounded);
* a call whose deadline passes behind an earlier call on a serialized binding
  says so and names ``allow_parallel_calls``;
* the same failure reports the same ``op`` on every path (in flight or
  queued, ``call_tool`` or ``submit_tool_call``, stdio or HTTP);
* a "not found" answer to ``prompts/get``/``resources/read`` is ``not_found``
  (the official SDK's server, server-everything, the testing server);
* the package docstring's example runs against server-everything.
"""

from __future__ import annotations

import doctest
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    CancelToken,
    ConfigError,
    DeadlineExceededError,
    FailureClass,
    Handlers,
    IndeterminateError,
    LogMessage,
    PromptRef,
    RequestCancelledError,
    ServerLog,
    ToolUnavailableError,
)

from .conftest import MakeDefinition, SpawnHttp
from .engine_support import Recording, definition, wait_until

ERAS = ("legacy", "modern")
HELLO = "test://static/hello"


@pytest.fixture(scope="module", params=ERAS)
def recorded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[mcpclient.Client, Recording]]:
    """A binding per era to the testing server, recording what reaches it."""
    rec = Recording(tmp_path_factory.mktemp(f"ergo-{request.param}") / "rec.jsonl")
    client = mcpclient.connect(definition("--era", request.param, record=rec.path))
    try:
        yield client, rec
    finally:
        client.close()


#: Each call method, called with the keywords given.
CALLS: dict[str, Callable[..., Any]] = {
    "call_tool": lambda c, **kw: c.call_tool("echo", {"message": "hi"}, **kw),
    "submit_tool_call": lambda c, **kw: c.submit_tool_call("echo", {"message": "hi"}, **kw).result(
        10
    ),
    "get_prompt": lambda c, **kw: c.get_prompt("greet", {"name": "Ada"}, **kw),
    "read_resource": lambda c, **kw: c.read_resource(HELLO, **kw),
    "complete": lambda c, **kw: c.complete(PromptRef("greet"), "name", "A", **kw),
    "subscribe": lambda c, **kw: c.subscribe(HELLO, **kw),
}
#: The wire method of each (a progress token rides on the request itself).
WIRE = {
    "call_tool": "tools/call",
    "submit_tool_call": "tools/call",
    "get_prompt": "prompts/get",
    "read_resource": "resources/read",
    "complete": "completion/complete",
}


@pytest.mark.parametrize("method", CALLS)
def test_every_call_method_takes_the_keywords(
    recorded: tuple[mcpclient.Client, Recording], method: str
) -> None:
    client, _ = recorded
    call = CALLS[method]
    call(client, timeout=10)  # a plain timeout works like CallOpts(timeout=10)
    token = CancelToken()
    token.cancel("not now")
    with pytest.raises(RequestCancelledError) as info:
        call(client, cancel=token)  # the keyword reaches the call: it is refused unsent
    assert info.value.failure_class is FailureClass.CANCELLED


@pytest.mark.parametrize("method", WIRE)
def test_the_progress_keyword_asks_for_progress(
    recorded: tuple[mcpclient.Client, Recording], method: str
) -> None:
    client, rec = recorded
    before = len(rec.requests(WIRE[method]))
    CALLS[method](client, progress=lambda _p: None)
    sent = rec.requests(WIRE[method])[before:]
    assert sent, "nothing was sent"
    assert "progressToken" in (sent[-1]["params"].get("_meta") or {})


def test_the_keywords_drive_a_real_call(recorded: tuple[mcpclient.Client, Recording]) -> None:
    client, _ = recorded
    seen: list[mcpclient.Progress] = []
    result = client.call_tool(
        "progress", {"steps": 3, "interval": 0.01}, timeout=10, progress=seen.append
    )
    assert not result.is_error
    assert wait_until(lambda: len(seen) == 3)
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError):
        client.call_tool("slow", {"seconds": 5}, timeout=0.3)
    assert time.monotonic() - started < 2.5
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    with pytest.raises(RequestCancelledError):
        client.submit_tool_call("slow", {"seconds": 5}, cancel=token).result(5)


@pytest.mark.parametrize("method", CALLS)
def test_opts_and_keywords_together_are_refused_unsent(
    recorded: tuple[mcpclient.Client, Recording], method: str
) -> None:
    client, rec = recorded
    before = len(rec.messages())
    with pytest.raises(ConfigError) as info:
        CALLS[method](client, opts=CallOpts(timeout=5), timeout=5)
    assert info.value.op == method
    assert "not both" in info.value.message
    time.sleep(0.05)
    assert len(rec.messages()) == before


def test_a_wall_clock_deadline_is_refused_before_anything_is_sent(
    recorded: tuple[mcpclient.Client, Recording],
) -> None:
    client, rec = recorded
    before = len(rec.messages())
    with pytest.raises(ConfigError):
        client.call_tool("echo", {"message": "x"}, CallOpts(deadline=time.time() + 30))
    assert len(rec.messages()) == before


# ----------------------------------------------------------------------- log data


def logging_client(**fields: Any) -> tuple[mcpclient.Client, list[LogMessage], list[ServerLog]]:
    messages: list[LogMessage] = []
    events: list[ServerLog] = []

    def on_event(event: Any) -> None:
        if isinstance(event, ServerLog):
            events.append(event)

    client = mcpclient.connect(
        definition("--era", "legacy", **fields), Handlers(log=messages.append, event=on_event)
    )
    return client, messages, events


@pytest.mark.parametrize(
    "data",
    [
        {"event": "started", "items": [1, 2.5, None, True], "who": "é☃"},
        ["a", {"b": 1}],
        42,
        "plain text",
    ],
    ids=["object", "array", "number", "string"],
)
def test_a_log_carries_the_raw_data_beside_the_text(data: Any) -> None:
    client, messages, events = logging_client()
    with client:
        client.call_tool("log", {"message": "unused", "data": data, "logger": "app"})
        assert wait_until(lambda: len(messages) == 1 and len(events) == 1)
    [message], [event] = messages, events
    assert message.data == data and event.data == data
    assert message.data is not message.data or not isinstance(data, dict | list)  # fresh copies
    expected_text = data if isinstance(data, str) else json.loads(message.text)
    assert (message.text if isinstance(data, str) else expected_text) == data
    assert message.logger == "app"


def test_oversized_log_data_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    big = {"blob": "x" * 2000}
    client, messages, events = logging_client(limits=mcpclient.Limits(max_log_message_bytes=512))
    with caplog.at_level(logging.WARNING, logger="mcpclient"), client:
        client.call_tool("log", {"message": "unused", "data": big})
        client.call_tool("log", {"message": "unused", "data": {"small": 1}})
        assert wait_until(lambda: len(messages) == 2 and len(events) == 2)
    assert [m.data for m in messages] == [None, {"small": 1}]
    assert [e.data for e in events] == [None, {"small": 1}]
    assert len(messages[0].text.encode()) <= 512  # the text stays, bounded
    warnings = [r for r in caplog.records if "max_log_message_bytes" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "x" * 50 not in warnings[0].getMessage()


# ------------------------------------------------------------- a serialized binding


@pytest.mark.parametrize("era", ERAS)
def test_a_call_that_times_out_behind_an_earlier_one_names_allow_parallel_calls(
    era: str,
) -> None:
    with mcpclient.connect(definition("--era", era)) as client:
        first = client.submit_tool_call("slow", {"seconds": 1.0})
        time.sleep(0.1)  # the first holds the turn
        for call in (
            lambda: client.call_tool("echo", {"message": "x"}, timeout=0.3),
            lambda: client.submit_tool_call("echo", {"message": "x"}, timeout=0.3).result(5),
        ):
            with pytest.raises(DeadlineExceededError) as info:
                call()
            assert "allow_parallel_calls" in info.value.message
            assert "earlier" in info.value.message
            assert info.value.op == "call_tool"
        assert not first.result(5).is_error


# --------------------------------------------------------------------- the same op


def _ops(client: mcpclient.Client) -> dict[str, tuple[type, str]]:
    """The class and op of each way a tool call can fail by its deadline."""
    seen: dict[str, tuple[type, str]] = {}

    def record(name: str, call: Callable[[], Any]) -> None:
        with pytest.raises(mcpclient.Error) as info:
            call()
        seen[name] = (type(info.value), info.value.op)

    never = {"action": "never_answer"}
    record("in flight", lambda: client.call_tool("hostile", never, timeout=0.3))
    record("submitted", lambda: client.submit_tool_call("hostile", never, timeout=0.3).result(5))
    first = client.submit_tool_call("slow", {"seconds": 1.0})
    time.sleep(0.1)
    record("queued", lambda: client.call_tool("echo", {"message": "x"}, timeout=0.3))
    record(
        "queued submitted",
        lambda: client.submit_tool_call("echo", {"message": "x"}, timeout=0.3).result(5),
    )
    first.result(5)
    return seen


def _lost_ops(connect: Callable[[], mcpclient.Client]) -> set[tuple[type, str]]:
    """The class and op of a tool call (called, then submitted) the server died under."""
    seen = set()
    for submit in (False, True):
        with connect() as client:
            with pytest.raises(mcpclient.Error) as info:
                if submit:
                    client.submit_tool_call("hostile", {"action": "exit"}, timeout=10).result(10)
                else:
                    client.call_tool("hostile", {"action": "exit"}, timeout=10)
            seen.add((type(info.value), info.value.op))
    return seen


NO_RECONNECT = mcpclient.ReconnectPolicy(disabled=True)


@pytest.mark.parametrize("era", ERAS)
def test_the_same_failure_reports_the_same_op_over_stdio(era: str) -> None:
    with mcpclient.connect(definition("--era", era)) as client:
        ops = _ops(client)
    assert set(ops.values()) == {(DeadlineExceededError, "call_tool")}, ops
    lost = _lost_ops(lambda: mcpclient.connect(definition("--era", era, reconnect=NO_RECONNECT)))
    assert lost == {(IndeterminateError, "call_tool")}


@pytest.mark.parametrize("era", ERAS)
def test_the_same_failure_reports_the_same_op_over_http(era: str, spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", era)
    with mcpclient.connect(
        mcpclient.Definition("web", mcpclient.StreamableHTTPTransport(server.url))
    ) as client:
        ops = _ops(client)
    assert set(ops.values()) == {(DeadlineExceededError, "call_tool")}, ops

    def connect() -> mcpclient.Client:
        transport = mcpclient.StreamableHTTPTransport(spawn_http("--era", era).url)
        return mcpclient.connect(mcpclient.Definition("web", transport, reconnect=NO_RECONNECT))

    lost = _lost_ops(connect)
    assert lost == {(IndeterminateError, "call_tool")}


def test_a_lost_read_reports_its_own_op() -> None:
    with mcpclient.connect(definition("--era", "legacy", reconnect=NO_RECONNECT)) as client:
        dying = client.submit_tool_call("hostile", {"action": "exit"})
        with pytest.raises(mcpclient.ConnectionLostError) as info:
            client.read_resource(HELLO, timeout=5)
            client.read_resource(HELLO, timeout=5)  # if the first won the race
        with pytest.raises(IndeterminateError):
            dying.result(5)
    assert info.value.op == "read_resource"


# ---------------------------------------------------------------------- not found


def _not_found(call: Callable[[], Any], op: str) -> None:
    with pytest.raises(ToolUnavailableError) as info:
        call()
    assert info.value.failure_class is FailureClass.NOT_FOUND
    assert info.value.op == op


@pytest.mark.parametrize("era", ERAS)
def test_the_testing_server_not_found_answers_are_not_found(era: str) -> None:
    with mcpclient.connect(definition("--era", era)) as client:
        _not_found(lambda: client.get_prompt("nope"), "get_prompt")
        _not_found(lambda: client.read_resource("test://nope/x"), "read_resource")
        assert client.status().state is mcpclient.State.READY


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_the_sdk_server_unknown_resource_is_not_found(
    sdk_definition: MakeDefinition, protocol: str
) -> None:
    with mcpclient.connect(sdk_definition(protocol=protocol)) as client:
        _not_found(lambda: client.read_resource("test://nope/x"), "read_resource")
        assert client.read_resource("test://static/text").contents


def test_the_everything_server_not_found_answers_are_not_found(
    everything_definition: MakeDefinition,
) -> None:
    with mcpclient.connect(everything_definition(timeouts=mcpclient.Timeouts(startup=30))) as c:
        _not_found(lambda: c.get_prompt("nope"), "get_prompt")
        _not_found(lambda: c.read_resource("test://nope/x"), "read_resource")


# ------------------------------------------------------------- the package example


def test_the_package_docstring_example_runs(
    everything_command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = mcpclient.__doc__
    assert doc is not None
    examples = doctest.DocTestParser().get_examples(doc)
    source = "".join(example.source for example in examples)
    # As written: npx -y fetches and runs the pinned package. Here npx is
    # swapped for the copy already installed under the peers folder.
    assert '"npx", ["-y", "@modelcontextprotocol/server-everything"' in source
    assert "+SKIP" not in doc
    node, entry, *_ = everything_command
    transport = mcpclient.StdioTransport

    def local(command: str, args: list[str], **kwargs: Any) -> mcpclient.StdioTransport:
        assert command == "npx" and args[0] == "-y"
        assert args[1].startswith("@modelcontextprotocol/server-everything")
        return transport(node, [entry, *args[2:]], **kwargs)

    monkeypatch.setattr(mcpclient, "StdioTransport", local)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = doctest.DocTestParser().get_doctest(doc, {}, "mcpclient", None, 0)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)
    assert runner.tries == len(examples) and runner.tries >= 3
