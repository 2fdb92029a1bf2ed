"""Call hooks around ``submit_tool_call`` (and so ``run_tool_calls``), testing server.

``before`` runs on the submitter's thread (a denial raises there, nothing is
queued); ``after`` and ``on_error`` run where the Future's done-callbacks run
(the binding's event lane), and the Future completes after them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import CallDeniedError, CallOpts, HookFailedError, ToolResult, export
from mcpclient.errors import FailureClass
from mcpclient.hooks import CallHooks, CallInfo, Decision
from tests.support.servers import Recording, definition
from tests.support.waiting import wait_until


def test_before_may_replace_the_arguments_and_after_the_result(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    where: list[str] = []

    def shout(info: CallInfo) -> Decision:
        where.append(threading.current_thread().name)
        return Decision.replace({"message": info.arguments["message"].upper()})

    def wrap(info: CallInfo, result: ToolResult) -> ToolResult:
        where.append(threading.current_thread().name)
        return ToolResult(content=(mcpclient.Text(f"<{result.text}>"),))

    hooks = CallHooks(before=(shout,), after=(wrap,))
    with mcpclient.connect(definition(record=rec.path), hooks=hooks) as client:
        assert client.submit_tool_call("echo", {"message": "hi"}).result(10).text == "<HI>"
    sent = [m["params"]["arguments"] for m in rec.requests("tools/call")]
    assert sent == [{"message": "HI"}]
    assert where[0] == threading.current_thread().name  # before: the submitter's thread
    assert where[1].startswith("mcpclient-dispatch-"), where  # after: the event lane


def test_a_denial_raises_at_submit_and_queues_nothing(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    hooks = CallHooks(before=(lambda info: Decision.deny("not now"),))
    with mcpclient.connect(definition(record=rec.path), hooks=hooks) as client:
        with pytest.raises(CallDeniedError, match="not now") as caught:
            client.submit_tool_call("echo", {"message": "hi"})
        assert caught.value.failure_class is FailureClass.CALL_DENIED
        client.ping()  # the server has read everything before this
    assert rec.requests("tools/call") == []


def test_on_error_sees_the_calls_error_and_a_failing_after_hook_is_classified() -> None:
    errors: list[BaseException] = []

    def boom(info: CallInfo, result: ToolResult) -> ToolResult:
        raise RuntimeError("hook bug")

    hooks = CallHooks(after=(boom,), on_error=(lambda info, exc: errors.append(exc),))
    with mcpclient.connect(definition(), hooks=hooks) as client:
        late = client.submit_tool_call("slow", {"seconds": 5}, CallOpts(timeout=0.2))
        assert isinstance(late.exception(10), mcpclient.DeadlineExceededError)
        assert len(errors) == 1 and isinstance(errors[0], mcpclient.DeadlineExceededError)
        failed = client.submit_tool_call("echo", {"message": "hi"}).exception(10)
        assert isinstance(failed, HookFailedError)
        assert failed.failure_class is FailureClass.HOOK_FAILED
        assert isinstance(failed.__cause__, RuntimeError)


def test_cancelling_the_hooked_future_cancels_the_call_on_the_wire(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    seen: list[Any] = []
    hooks = CallHooks(after=(lambda info, result: seen.append(result),))
    with mcpclient.connect(definition(record=rec.path), hooks=hooks) as client:
        future = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 1)
        assert future.cancel()
        (call_id,) = rec.tool_call_ids("slow")
        assert wait_until(lambda: call_id in rec.cancelled_ids())
    assert seen == []  # no result, so no after hook


def test_host_hooks_run_around_submitted_calls_and_run_tool_calls() -> None:
    seen: list[CallInfo] = []
    results: list[str] = []
    hooks = CallHooks(
        before=(seen.append,), after=(lambda info, result: results.append(result.text),)
    )
    with mcpclient.Host({"engine": definition()}, hooks=hooks).connect() as host:
        future = host.submit_tool_call("mcp__engine__echo", {"message": "one"})
        assert future.result(10).text == "one"
        reply = {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "mcp__engine__echo",
                    "input": {"message": "two"},
                }
            ]
        }
        (message,) = export.run_tool_calls(host, reply, provider="anthropic", timeout=10)
    assert [i.model_name for i in seen] == ["mcp__engine__echo", "mcp__engine__echo"]
    assert results == ["one", "two"]
    assert message["content"][0]["type"] == "tool_result"
