"""``ResultBudget``: tool results cut to fit, for each provider's result shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpclient.content import Audio, EmbeddedResource, Image, ResourceLink, Text, ToolResult
from mcpclient.errors import ConfigError
from mcpclient.export import PROVIDERS, ResultBudget
from mcpclient.export._budget import _head, _tail, apply_budget
from mcpclient.export._calls import ToolCall
from mcpclient.export._results import shape_results

BIG = "H" * 3_000_000 + "T" * 3_000_000  # 6 MB
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 3000
CALL = ToolCall(call_id="c1", name="big", arguments={})


def _texts(provider: str, messages: list[dict[str, Any]]) -> str:
    """Every text the model reads in the shaped results, joined."""
    if provider == "openai_chat":
        return "\n".join(m["content"] for m in messages)
    if provider == "openai_responses":
        out = messages[0]["output"]
        if isinstance(out, str):
            return out
        return "\n".join(p.get("text", "") for p in out)
    if provider == "anthropic":
        block = messages[0]["content"][0]
        return "\n".join(p.get("text", "") for p in block["content"])
    response = messages[0]["parts"][0]["functionResponse"]["response"]
    value = response.get("output", response.get("error"))
    return value if isinstance(value, str) else json.dumps(value)


def _sent_image(provider: str, messages: list[dict[str, Any]]) -> bool:
    return any(k in json.dumps(messages) for k in ("input_image", '"image"', "inlineData"))


def _run(
    provider: str, result: ToolResult, budget: ResultBudget | None, full: dict[str, Any] | None
) -> list[dict[str, Any]]:
    return shape_results(provider, apply_budget(provider, [(CALL, result)], budget, full))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_big_text_is_cut_to_head_and_tail_with_a_note(provider: str) -> None:
    full: dict[str, ToolResult] = {}
    result = ToolResult(content=(Text(BIG),))
    text = _texts(provider, _run(provider, result, ResultBudget(max_chars=2000), full))
    assert len(text) <= 2000
    assert text.startswith("HHHH") and text.endswith("TTTT")
    assert f"of {len(BIG)} characters" in text
    assert "kept by the application" in text
    assert full == {"c1": result}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_token_budget_uses_four_chars_per_token(provider: str) -> None:
    result = ToolResult(content=(Text(BIG),))
    text = _texts(provider, _run(provider, result, ResultBudget(max_tokens=500), None))
    assert 1500 < len(text) <= 2000
    assert "the rest is not available" in text  # nobody keeps it: the note does not pretend


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_note_names_the_resource_link(provider: str) -> None:
    link = ResourceLink(uri="file:///logs/big.txt", name="big.txt")
    result = ToolResult(content=(Text(BIG), link))
    text = _texts(provider, _run(provider, result, ResultBudget(max_chars=2000), {}))
    assert "the full result is at the resource link file:///logs/big.txt" in text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_under_budget_are_unchanged(provider: str) -> None:
    result = ToolResult(
        content=(Text("small"), Image(PNG, mime_type="image/png")), structured={"a": 1}
    )
    full: dict[str, ToolResult] = {}
    budgeted = _run(provider, result, ResultBudget(max_chars=100_000), full)
    assert budgeted == _run(provider, result, None, None)
    assert full == {}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_json_cut_says_so(provider: str) -> None:
    rows = [{"row": i, "value": "x" * 50} for i in range(20_000)]
    result = ToolResult(content=(), structured={"rows": rows})
    text = _texts(provider, _run(provider, result, ResultBudget(max_chars=3000), {}))
    assert len(text) <= 3000
    assert text.startswith('{"rows": [{"row": 0')
    assert "JSON (so it is not valid JSON as shown)" in text


@pytest.mark.parametrize("provider", ["openai_responses", "anthropic", "gemini"])
def test_image_pass_is_sent_when_it_fits(provider: str) -> None:
    result = ToolResult(content=(Text(BIG), Image(PNG, mime_type="image/png")))
    messages = _run(provider, result, ResultBudget(max_chars=20_000, media="pass"), {})
    assert _sent_image(provider, messages)
    assert "were cut" in _texts(provider, messages)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_image_pass_over_budget_falls_back_to_describe(provider: str) -> None:
    result = ToolResult(content=(Text("see"), Image(b"\0" * 100_000, mime_type="image/png")))
    messages = _run(provider, result, ResultBudget(max_chars=10_000, media="pass"), {})
    assert not _sent_image(provider, messages)
    text = _texts(provider, messages)
    assert "image image/png, 100000 bytes; not sent: over the result budget" in text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("policy", "words"),
    [("describe", "described, not sent, by the result budget"), ("drop", "dropped by")],
)
def test_image_describe_and_drop(provider: str, policy: str, words: str) -> None:
    result = ToolResult(content=(Text("see"), Image(PNG, mime_type="image/png")))
    full: dict[str, ToolResult] = {}
    messages = _run(provider, result, ResultBudget(max_chars=100_000, media=policy), full)
    assert not _sent_image(provider, messages)
    text = _texts(provider, messages)
    assert f"image image/png, {len(PNG)} bytes; {words}" in text
    assert "see" in text
    assert full == {"c1": result}


def test_many_text_items_cut_say_how_many_items() -> None:
    result = ToolResult(content=tuple(Text(f"line {i:05}") for i in range(1000)))
    [message] = _run("openai_chat", result, ResultBudget(max_chars=1000), {})
    text = message["content"]
    assert len(text) <= 1000
    assert text.startswith("line 00000\nline 00001") and text.endswith("line 00999")
    assert "of 10999 characters, 9" in text and "of 1000 text items whole," in text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("policy", ["describe", "drop"])
def test_audio_and_blobs_follow_the_media_policy(provider: str, policy: str) -> None:
    audio = Audio(b"\0" * 4000, mime_type="audio/wav")
    pdf = EmbeddedResource(uri="file:///a.pdf", mime_type="application/pdf", data=b"%PDF" * 999)
    result = ToolResult(content=(audio, pdf))
    messages = _run(provider, result, ResultBudget(max_chars=100_000, media=policy), {})
    dumped = json.dumps(messages)
    assert "AAAA" not in dumped and "JVBER" not in dumped  # no base64 sent
    text = _texts(provider, messages)
    assert "audio audio/wav, 4000 bytes" in text
    assert "resource file:///a.pdf (application/pdf, 3996 bytes" in text


def test_error_texts_are_never_cut() -> None:
    calls = [(CALL, "unknown tool 'x'")]
    assert apply_budget("anthropic", calls, ResultBudget(max_chars=256), {}) == calls


def test_head_and_tail_across_items() -> None:
    assert _head(["abc", "de", "f"], 5) == "abc\nd"
    assert _tail(["abc", "de", "f"], 5) == "\nde\nf"
    assert _head(["abc"], 10) == "abc" and _tail(["abc"], 10) == "abc"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_chars": 1000, "max_tokens": 100},
        {"max_chars": 10},
        {"max_tokens": 10},
        {"max_chars": True},
        {"max_chars": 1000.0},
        {"max_chars": "1000"},
        {"max_chars": 1000, "media": "keep"},
    ],
)
def test_bad_budgets_raise_config_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ResultBudget(**kwargs)


def test_run_tool_calls_refuses_a_budget_of_the_wrong_type() -> None:
    from mcpclient.export import run_tool_calls

    with pytest.raises(ConfigError):
        run_tool_calls([], [], provider="anthropic", budget=1000)  # type: ignore[arg-type]
