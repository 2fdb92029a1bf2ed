"""Call hooks around Client/Host.call_tool and run_tool_calls(approve=...), testing server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import mcpclient
from mcpclient import CallDeniedError, HookFailedError, ToolResult
from mcpclient.errors import FailureClass
from mcpclient.hooks import CallHooks, CallInfo, Decision
from tests.support.servers import definition


@pytest.fixture
def client() -> Iterator[mcpclient.Client]:
    with mcpclient.connect(definition()) as c:
        yield c


def _connect(hooks: CallHooks) -> mcpclient.Client:
    return mcpclient.connect(definition(), hooks=hooks)


def test_before_sees_binding_tool_arguments_and_untrusted_annotations() -> None:
    seen: list[CallInfo] = []
    with _connect(CallHooks(before=(seen.append,))) as c:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
    (info,) = seen
    assert (info.binding, info.tool, info.model_name) == ("engine", "echo", None)
    assert info.arguments == {"message": "hi"}
    assert info.annotations is not None and info.annotations.read_only_hint is True
    assert info.hints_trusted is False


def test_deny_raises_a_classified_error_and_sends_nothing() -> None:
    after: list[Any] = []
    hooks = CallHooks(
        before=(lambda info: Decision.deny("no echo today"),),
        after=(lambda info, result: after.append(result),),
    )
    with _connect(hooks) as c, pytest.raises(CallDeniedError, match="no echo today") as caught:
        c.call_tool("echo", {"message": "hi"})
    assert caught.value.failure_class is FailureClass.CALL_DENIED
    assert isinstance(caught.value, PermissionError)
    assert after == []


def test_replace_changes_the_arguments_the_next_hook_and_the_server_see() -> None:
    seen: list[dict[str, Any]] = []
    hooks = CallHooks(
        before=(
            lambda info: Decision.replace({"message": info.arguments["message"].upper()}),
            lambda info: seen.append(dict(info.arguments)),
        )
    )
    with _connect(hooks) as c:
        assert c.call_tool("echo", {"message": "hi"}).text == "HI"
    assert seen == [{"message": "HI"}]


def test_replaced_arguments_are_checked_against_the_schema() -> None:
    hooks = CallHooks(before=(lambda info: Decision.replace({"message": 5}),))
    with _connect(hooks) as c, pytest.raises(mcpclient.InvalidArgumentsError):
        c.call_tool("echo", {"message": "hi"})


def test_after_can_replace_the_result() -> None:
    def redact(info: CallInfo, result: ToolResult) -> ToolResult:
        return ToolResult(content=(mcpclient.Text("[redacted]"),))

    with _connect(CallHooks(after=(lambda i, r: None, redact))) as c:
        assert c.call_tool("echo", {"message": "secret"}).text == "[redacted]"


def test_on_error_sees_the_error_and_it_is_raised() -> None:
    errors: list[BaseException] = []
    hooks = CallHooks(on_error=(lambda info, exc: errors.append(exc),))
    with _connect(hooks) as c, pytest.raises(mcpclient.ToolUnavailableError):
        c.call_tool("no_such_tool", {})
    assert len(errors) == 1 and isinstance(errors[0], mcpclient.ToolUnavailableError)


@pytest.mark.parametrize("stage", ["before", "after", "on_error", "wrong_type"])
def test_a_failing_hook_is_classified_never_swallowed(stage: str) -> None:
    def boom(*args: Any) -> Any:
        raise RuntimeError("hook bug")

    hooks = {
        "before": CallHooks(before=(boom,)),
        "after": CallHooks(after=(boom,)),
        "on_error": CallHooks(on_error=(boom,)),
        "wrong_type": CallHooks(before=(lambda info: "yes",)),
    }[stage]
    tool = "no_such_tool" if stage == "on_error" else "echo"
    with _connect(hooks) as c, pytest.raises(HookFailedError) as caught:
        c.call_tool(tool, {"message": "hi"})
    assert caught.value.failure_class is FailureClass.HOOK_FAILED
    if stage != "wrong_type":
        assert isinstance(caught.value.__cause__, RuntimeError)
    if stage == "on_error":
        assert isinstance(caught.value.__cause__.__context__, mcpclient.ToolUnavailableError)


def test_hooks_must_be_callhooks_and_callables() -> None:
    with pytest.raises(mcpclient.ConfigError):
        mcpclient.connect(definition(), hooks=[print])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CallHooks(before=("not callable",))  # type: ignore[arg-type]


def test_host_hooks_see_the_host_model_name() -> None:
    seen: list[CallInfo] = []
    hooks = CallHooks(before=(seen.append,))
    with mcpclient.Host({"engine": definition()}, hooks=hooks).connect() as host:
        assert host.call_tool("mcp__engine__echo", {"message": "hi"}).text == "hi"
    (info,) = seen
    assert (info.binding, info.tool, info.model_name) == ("engine", "echo", "mcp__engine__echo")


def _anthropic_reply(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(calls)
        ]
    }


def test_run_tool_calls_turns_a_denial_into_an_error_result(client: mcpclient.Client) -> None:
    reply = _anthropic_reply(
        ("mcp__engine__echo", {"message": "ok"}), ("mcp__engine__add", {"a": 1, "b": 2})
    )

    def approve(info: CallInfo) -> Decision | None:
        return None if info.tool == "echo" else Decision.deny("adding is not allowed")

    (message,) = client.run_tool_calls(reply, provider="anthropic", approve=approve)
    first, second = message["content"]
    assert not first.get("is_error") and "ok" in str(first["content"])
    assert second["is_error"] is True
    assert "denied" in str(second["content"]) and "adding is not allowed" in str(second["content"])


def test_run_tool_calls_approve_can_replace_and_a_failing_approve_is_an_error_result(
    client: mcpclient.Client,
) -> None:
    reply = _anthropic_reply(("mcp__engine__echo", {"message": "ok"}))
    (message,) = client.run_tool_calls(
        reply, provider="anthropic", approve=lambda info: Decision.replace({"message": "new"})
    )
    assert "new" in str(message["content"][0]["content"])

    def broken(info: CallInfo) -> Decision:
        raise RuntimeError("policy bug")

    (message,) = client.run_tool_calls(reply, provider="anthropic", approve=broken)
    result = message["content"][0]
    assert result["is_error"] is True and "hook_failed" in str(result["content"])


def test_host_run_tool_calls_approve_sees_the_server() -> None:
    seen: list[CallInfo] = []
    reply = _anthropic_reply(("mcp__engine__echo", {"message": "ok"}))
    with mcpclient.Host({"engine": definition()}).connect() as host:
        host.run_tool_calls(reply, provider="anthropic", approve=seen.append)
    (info,) = seen
    assert (info.binding, info.tool, info.model_name) == ("engine", "echo", "mcp__engine__echo")
