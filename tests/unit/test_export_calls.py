"""Finding tool calls in provider responses, and shaping results the way each provider takes them.

The round trip against a real server is ``tests/integration/test_export_roundtrip.py``;
here are the cases no server can produce on demand (content kinds the
testing server never sends, malformed responses) and the argument checks.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    ToolResult,
    Unsupported,
    export,
)
from mcpclient.export._calls import ToolCall
from mcpclient.export._results import shape_results
from mcpclient.export._runner import drop_injected_nulls
from tests.support.export_formats import conforms, response

PROVIDERS = ["anthropic", "gemini", "openai_chat", "openai_responses"]
ORDER = ["echo", "add", "fail", "add", "nonexistent", "hostile", "slow"]


class _Dumped:
    """An SDK-style response object: only ``model_dump()``."""

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def model_dump(self) -> dict[str, Any]:
        return self.value


@pytest.mark.parametrize("provider", PROVIDERS)
def test_finds_every_call_of_a_recorded_response_in_order(provider: str) -> None:
    calls = export.find_tool_calls(response(provider), provider)
    names = [c.name.removeprefix("mcp__export__") for c in calls]
    expected = list(ORDER)
    if provider.startswith("openai"):
        expected.insert(5, "echo")  # the call with malformed JSON arguments
    assert names == expected
    assert calls[0].arguments == {"message": "hello"} and calls[0].problem == ""
    assert export.find_tool_calls(_Dumped(response(provider)), provider) == calls
    if provider.startswith("openai"):
        bad = calls[5]
        assert bad.arguments is None and "not valid JSON" in bad.problem


def test_accepts_the_inner_parts_of_responses_too() -> None:
    chat = response("openai_chat")["choices"][0]["message"]
    assert len(export.find_tool_calls(chat, "openai_chat")) == 8
    output = response("openai_responses")["output"]
    assert len(export.find_tool_calls(output, "openai_responses")) == 8
    content = response("gemini")["candidates"][0]["content"]
    assert len(export.find_tool_calls(content, "gemini")) == 7
    blocks = response("anthropic")["content"]
    assert len(export.find_tool_calls(blocks, "anthropic")) == 7


@pytest.mark.parametrize(
    ("provider", "reply"),
    [
        ("openai_chat", {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}),
        ("openai_responses", {"output": [{"type": "message", "content": []}]}),
        ("anthropic", {"content": [{"type": "text", "text": "hi"}]}),
        ("gemini", {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}),
    ],
)
def test_a_response_without_calls_needs_no_target(provider: str, reply: Any) -> None:
    class Untouchable:
        def catalog(self) -> Any:
            raise AssertionError("not needed")

        def call_tool(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("not needed")

    assert export.run_tool_calls(Untouchable(), reply, provider=provider) == []


@pytest.mark.parametrize(
    ("provider", "reply", "match"),
    [
        ("openai_chat", {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}, "'id'"),
        ("openai_chat", {"choices": [{}]}, "choices"),
        ("openai_responses", {"output": "x"}, "output list"),
        ("anthropic", {"content": [{"type": "tool_use", "id": "t", "input": {}}]}, "'name'"),
        ("gemini", {"candidates": [{"content": {"parts": 3}}]}, "parts"),
        ("cohere", {}, "provider must be one of"),
    ],
)
def test_malformed_responses_are_config_errors(provider: str, reply: Any, match: str) -> None:
    with pytest.raises(mcpclient.ConfigError, match=match):
        export.find_tool_calls(reply, provider)


@pytest.mark.parametrize("timeout", [0, -1, True, "1", float("nan")])
def test_run_tool_calls_refuses_a_bad_timeout(timeout: Any) -> None:
    with pytest.raises(mcpclient.ConfigError, match="timeout"):
        export.run_tool_calls(object(), {"content": []}, provider="anthropic", timeout=timeout)  # type: ignore[arg-type]


def test_arguments_that_are_not_an_object_are_a_problem_for_the_model() -> None:
    chat = {
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "t", "arguments": "[1]"}}
        ]
    }
    (call,) = export.find_tool_calls(chat, "openai_chat")
    assert call.arguments is None and "JSON object" in call.problem
    (block,) = export.find_tool_calls(
        {"content": [{"type": "tool_use", "id": "b", "name": "t", "input": "x"}]}, "anthropic"
    )
    assert block.arguments is None and block.problem
    custom = {"tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "t", "input": "x"}}]}
    (other,) = export.find_tool_calls(custom, "openai_chat")
    assert "not MCP tools" in other.problem


# --- result shaping ---

PNG = b"\x89PNG\r\n\x1a\n fake"
PDF = b"%PDF-1.7 fake"
RICH = ToolResult(
    content=(
        Text("first"),
        Image(PNG, mime_type="image/png"),
        Image(b"BM", mime_type="image/bmp"),
        Audio(b"RIFF", mime_type="audio/wav"),
        EmbeddedResource("file:///r/report.pdf", mime_type="application/pdf", data=PDF),
        EmbeddedResource("file:///r/notes.txt", mime_type="text/plain", text="notes"),
        ResourceLink("file:///r/more", name="more"),
        Unsupported("unknown", bytes=12),
    )
)
STRUCTURED = ToolResult(content=(), structured={"sum": 3})
ERROR = ToolResult(is_error=True, content=(Text("it broke"),))
CALLS = [
    (ToolCall("c1", "mcp__t__rich", {}), RICH),
    (ToolCall("c2", "mcp__t__sum", {}), STRUCTURED),
    (ToolCall("c3", "mcp__t__err", {}), ERROR),
    (ToolCall("", "mcp__t__gone", {}), "unknown tool 'mcp__t__gone'"),
]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_fit_the_documented_format(provider: str) -> None:
    calls = CALLS if provider == "gemini" else [(c, o) for c, o in CALLS if c.call_id]
    assert conforms(provider, "result_messages", shape_results(provider, calls)) == ""


def test_openai_chat_results_are_text_describing_what_cannot_be_sent() -> None:
    rich, summed, error = shape_results("openai_chat", CALLS[:3])
    text = rich["content"]
    assert text.splitlines() == [
        "first",
        f"[image image/png, {len(PNG)} bytes; not shown: tool messages carry text only]",
        "[image image/bmp, 2 bytes; not shown: tool messages carry text only]",
        "[audio audio/wav, 4 bytes; not shown: tool messages carry text only]",
        f"[resource file:///r/report.pdf (application/pdf, {len(PDF)} bytes); not shown:"
        " tool messages carry text only]",
        "notes",
        "[resource link more file:///r/more]",
        "[content omitted: unknown, 12 bytes]",
    ]
    assert summed == {"role": "tool", "tool_call_id": "c2", "content": '{"sum": 3}'}
    assert error["content"] == "Error: it broke"


def test_anthropic_results_carry_images_and_documents_in_one_user_message() -> None:
    (message,) = shape_results("anthropic", CALLS[:3])
    rich, summed, error = message["content"]
    assert rich["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": _b64(PNG)},
    }
    assert rich["content"][4] == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": _b64(PDF)},
    }
    assert rich["content"][2]["type"] == "text"  # BMP is not a type Claude takes
    assert rich["is_error"] is False
    assert summed["content"] == [{"type": "text", "text": '{"sum": 3}'}]
    assert error["is_error"] is True and error["content"] == [{"type": "text", "text": "it broke"}]


def test_responses_results_carry_images_and_files() -> None:
    rich, summed, error = shape_results("openai_responses", CALLS[:3])
    output = rich["output"]
    assert {"type": "input_image", "image_url": f"data:image/png;base64,{_b64(PNG)}"} in output
    assert {
        "type": "input_file",
        "filename": "report.pdf",
        "file_data": f"data:application/pdf;base64,{_b64(PDF)}",
    } in output
    assert summed["output"] == '{"sum": 3}'
    assert error["output"] == "Error: it broke"


def test_gemini_results_are_response_objects_with_inline_parts() -> None:
    (content,) = shape_results("gemini", CALLS)
    rich, summed, error, gone = (p["functionResponse"] for p in content["parts"])
    assert rich["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": _b64(PNG)}},
        {"inlineData": {"mimeType": "application/pdf", "data": _b64(PDF)}},
    ]
    assert rich["id"] == "c1" and "first" in rich["response"]["output"]
    assert summed["response"] == {"output": {"sum": 3}}
    assert error["response"] == {"error": "it broke"}
    assert gone == {"name": "mcp__t__gone", "response": {"error": "unknown tool 'mcp__t__gone'"}}


# --- the nulls strict mode makes a model send ---


def test_injected_nulls_are_dropped_only_where_the_tool_does_not_take_null() -> None:
    schema = {
        "type": "object",
        "properties": {
            "opt": {"type": "string"},
            "nullable": {"type": ["string", "null"]},
            "req": {"type": "string"},
            "nested": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "rows": {
                "type": "array",
                "items": {"type": "object", "properties": {"y": {"type": "number"}}},
            },
        },
        "required": ["req"],
    }
    arguments = {
        "opt": None,
        "nullable": None,
        "req": None,
        "nested": {"x": None},
        "rows": [{"y": None}, {"y": 1}],
        "extra": None,
    }
    assert drop_injected_nulls(schema, arguments) == {
        "nullable": None,
        "req": None,
        "nested": {},
        "rows": [{}, {"y": 1}],
        "extra": None,
    }


class _Recorder:
    """A target that records what it is asked to run (no server can show what it was sent)."""

    def __init__(self, schema: dict[str, Any], binding: str = "r") -> None:
        self.tools = (
            mcpclient.ToolSpec(raw_name="t", model_name="mcp__r__t", input_schema=schema),
        )
        self.binding = binding  # like a Client's catalog: one binding's tools, called by raw name
        self.sent: list[Any] = []

    def catalog(self) -> Any:
        return self

    def call_tool(
        self, name: str, arguments: Any = None, *, timeout: float | None = None
    ) -> ToolResult:
        self.sent.append((name, arguments, timeout))
        return ToolResult(content=(Text("ok"),))


@pytest.mark.parametrize("provider", ["openai_chat", "openai_responses"])
def test_run_tool_calls_drops_the_nulls_strict_mode_asked_for(provider: str) -> None:
    schema = {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {"x": {"type": "string"}}}},
    }
    target = _Recorder(schema)
    arguments = '{"o": {"x": null}}'
    if provider == "openai_chat":
        reply: Any = {
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "mcp__r__t", "arguments": arguments},
                }
            ]
        }
    else:
        reply = [
            {"type": "function_call", "call_id": "a", "name": "mcp__r__t", "arguments": arguments}
        ]
    results = export.run_tool_calls(target, reply, provider=provider, timeout=5)
    assert len(results) == 1
    ((name, sent, timeout),) = target.sent
    assert (name, sent) == ("t", {"o": {}})
    assert timeout is not None and 0 < timeout <= 5
    # Other providers never make a model send such nulls: the arguments go as given.
    block = {"type": "tool_use", "id": "b", "name": "mcp__r__t", "input": {"o": {"x": None}}}
    export.run_tool_calls(target, {"content": [block]}, provider="anthropic")
    assert target.sent[-1][1:] == ({"o": {"x": None}}, None)


def test_a_response_with_too_many_calls_runs_only_the_first_ones() -> None:
    from mcpclient.export._runner import MAX_CALLS

    target = _Recorder({"type": "object"})
    blocks = [
        {"type": "tool_use", "id": f"t{i}", "name": "mcp__r__t", "input": {}}
        for i in range(MAX_CALLS + 2)
    ]
    (message,) = export.run_tool_calls(target, {"content": blocks}, provider="anthropic")
    assert len(target.sent) == MAX_CALLS
    results = message["content"]
    assert [r["is_error"] for r in results[-3:]] == [False, True, True]
    assert "more than 128 tool calls" in results[-1]["content"][0]["text"]


def test_call_by_follows_the_catalog_unless_given() -> None:
    block = {"type": "tool_use", "id": "b", "name": "mcp__r__t", "input": {}}
    one_binding = _Recorder({"type": "object"})
    export.run_tool_calls(one_binding, {"content": [block]}, provider="anthropic")
    aggregate = _Recorder({"type": "object"}, binding="")  # a Host's catalog names no binding
    export.run_tool_calls(aggregate, {"content": [block]}, provider="anthropic")
    export.run_tool_calls(aggregate, {"content": [block]}, provider="anthropic", call_by="raw_name")
    assert [s[0] for s in one_binding.sent + aggregate.sent] == ["t", "mcp__r__t", "t"]
    with pytest.raises(mcpclient.ConfigError, match="call_by"):
        export.run_tool_calls(aggregate, {"content": [block]}, provider="anthropic", call_by="x")


@pytest.mark.parametrize("given", PROVIDERS)
@pytest.mark.parametrize("actual", PROVIDERS)
def test_another_providers_response_is_refused_naming_its_shape(given: str, actual: str) -> None:
    if given == actual:
        return
    # Read as the wrong provider, a response used to give [] and no call ever ran.
    with pytest.raises(mcpclient.ConfigError) as info:
        export.run_tool_calls(object(), response(actual), provider=given)  # type: ignore[arg-type]
    assert f"pass provider={actual!r}" in info.value.message
    assert "the response looks like" in info.value.message


def test_the_cli_and_the_library_name_providers_alike() -> None:
    from mcpclient.cli.commands.export import PROVIDERS as CLI_PROVIDERS

    assert sorted(CLI_PROVIDERS) == sorted(export.PROVIDERS)


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("provider", PROVIDERS)
def test_deeply_nested_arguments_are_a_problem_for_the_model(provider: str) -> None:
    # issue 27, item 10: 5000 levels ended in RecursionError out of run_tool_calls.
    text = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    nested = {"a": _deep(5000)}
    target = _Recorder({"type": "object"})
    reply: Any
    if provider == "openai_chat":
        reply = {
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "mcp__r__t", "arguments": t}}
                for t in (text, nested)
            ]
        }
    elif provider == "openai_responses":
        reply = [{"type": "function_call", "call_id": "a", "name": "mcp__r__t", "arguments": text}]
    elif provider == "anthropic":
        reply = {"content": [{"type": "tool_use", "id": "b", "name": "mcp__r__t", "input": nested}]}
    else:
        reply = {"parts": [{"functionCall": {"name": "mcp__r__t", "args": nested}}]}
    calls = export.find_tool_calls(reply, provider)
    assert calls and all(c.arguments is None for c in calls)
    assert all("nest deeper than 64 levels" in c.problem for c in calls)
    results = export.run_tool_calls(target, reply, provider=provider, timeout=5)
    assert results and target.sent == []
    # 64 levels is still a call.
    shallow = {
        "content": [{"type": "tool_use", "id": "c", "name": "mcp__r__t", "input": _deep(63)}]
    }
    export.run_tool_calls(target, shallow, provider="anthropic", timeout=5)
    assert len(target.sent) == 1
