"""``run_tool_calls`` end to end: a recorded provider response -> the testing server -> results.

Each provider's fixture (``tests/fixtures/export/<provider>_response.json``,
in the shape its documentation gives) asks for the same calls: an echo, an
``add`` with structured content, a tool error, invalid arguments, an unknown
tool, an image result (the ``hostile`` tool answering with a given result),
a call that outlives the deadline (``slow``), and for OpenAI malformed JSON
arguments. The result messages must fit the provider's documented format
and say what happened to each call, by its id.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import pytest

import mcpclient
from mcpclient import export
from tests.support.export_formats import conforms, response
from tests.support.servers import SLACK, definition

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
TIMEOUT = 3.0
EXPORTERS = {
    "openai_chat": export.to_openai_chat,
    "openai_responses": export.to_openai_responses,
    "anthropic": export.to_anthropic,
    "gemini": export.to_gemini,
}


@pytest.fixture(scope="module")
def client() -> Iterator[mcpclient.Client]:
    defn = definition("--era", "modern", name="export", allow_parallel_calls=True)
    with mcpclient.connect(defn) as c:
        yield c


def _by_id(provider: str, results: list[dict[str, Any]]) -> dict[str, tuple[bool, Any]]:
    """call id (without its provider prefix) -> (is_error, the result's payload)."""
    out: dict[str, tuple[bool, Any]] = {}
    if provider == "openai_chat":
        for message in results:
            text = message["content"]
            out[message["tool_call_id"].removeprefix("call_")] = (text.startswith("Error:"), text)
    elif provider == "openai_responses":
        for item in results:
            output = item["output"]
            error = output.startswith("Error:") if isinstance(output, str) else False
            out[item["call_id"].removeprefix("call_")] = (error, output)
    elif provider == "anthropic":
        (message,) = results
        for block in message["content"]:
            out[block["tool_use_id"].removeprefix("toolu_01")] = (
                block["is_error"],
                block["content"],
            )
    else:
        (message,) = results
        names = {"mcp__export__" + n: n for n in ("echo", "add", "fail", "hostile", "slow")}
        order = ["echo", "add", "fail", "badargs", "unknown", "image", "slow"]
        for index, part in enumerate(message["parts"]):
            fr = part["functionResponse"]
            assert fr.get("id", f"fc-{order[index]}") == f"fc-{order[index]}"
            assert fr["name"] in (*names, "mcp__export__nonexistent")
            out[order[index]] = ("error" in fr["response"], fr)
    return out


def _text(provider: str, payload: Any) -> str:
    if provider == "anthropic":
        return "\n".join(b.get("text", "") for b in payload)
    if provider == "gemini":
        value = payload["response"].get("output", payload["response"].get("error"))
        return value if isinstance(value, str) else json.dumps(value)
    return payload if isinstance(payload, str) else json.dumps(payload)


@pytest.mark.parametrize("provider", sorted(EXPORTERS))
def test_recorded_response_round_trip(client: mcpclient.Client, provider: str) -> None:
    exported = EXPORTERS[provider](client)
    assert conforms(provider, "tool_list", exported.tools) == ""
    assert {"mcp__export__echo", "mcp__export__slow"} <= set(exported.names)

    started = time.monotonic()
    results = client.run_tool_calls(response(provider), provider=provider, timeout=TIMEOUT)
    elapsed = time.monotonic() - started

    assert conforms(provider, "result_messages", results) == ""
    outcome = _by_id(provider, results)
    expected = {"echo", "add", "fail", "badargs", "unknown", "image", "slow"}
    if provider.startswith("openai"):
        expected.add("badjson")
    assert set(outcome) == expected

    assert outcome["echo"][0] is False and "hello" in _text(provider, outcome["echo"][1])
    assert outcome["add"][0] is False and '"sum": 3' in _text(provider, outcome["add"][1])
    assert outcome["fail"][0] is True and "boom" in _text(provider, outcome["fail"][1])
    assert outcome["badargs"][0] is True
    assert "invalid arguments" in _text(provider, outcome["badargs"][1])
    assert outcome["unknown"][0] is True
    assert "unknown tool 'mcp__export__nonexistent'" in _text(provider, outcome["unknown"][1])
    assert outcome["slow"][0] is True
    assert "did not finish in time" in _text(provider, outcome["slow"][1])
    if "badjson" in outcome:
        assert outcome["badjson"][0] is True
        assert "not valid JSON" in _text(provider, outcome["badjson"][1])
    # One deadline for all: the slow call was cut at it, nothing waited longer.
    assert elapsed < TIMEOUT + SLACK
    _check_image(provider, outcome["image"])


def _check_image(provider: str, outcome: tuple[bool, Any]) -> None:
    is_error, payload = outcome
    assert is_error is False
    encoded = base64.b64encode(PNG).decode()
    if provider == "anthropic":
        images = [b for b in payload if b["type"] == "image"]
        assert images == [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": encoded},
            }
        ]
        assert {"type": "text", "text": "a chart"} in payload
    elif provider == "openai_responses":
        assert {"type": "input_image", "image_url": f"data:image/png;base64,{encoded}"} in payload
        assert {"type": "input_text", "text": "a chart"} in payload
    elif provider == "openai_chat":
        # Tool messages carry text only: the image is described, not sent.
        assert payload.startswith("a chart\n[image image/png, ")
        assert encoded not in payload
    else:
        assert payload["parts"] == [{"inlineData": {"mimeType": "image/png", "data": encoded}}]
        assert "a chart" in payload["response"]["output"]


def test_one_deadline_for_serialized_calls() -> None:
    # Calls a binding runs one at a time still share the one deadline:
    # three 5 s calls with a 1 s budget end within it, all reported as timed out.
    calls = [
        {"type": "tool_use", "id": f"t{i}", "name": "mcp__serial__slow", "input": {"seconds": 5}}
        for i in range(3)
    ]
    with mcpclient.connect(definition("--era", "modern", name="serial")) as client:
        started = time.monotonic()
        (message,) = client.run_tool_calls({"content": calls}, provider="anthropic", timeout=1.0)
        elapsed = time.monotonic() - started
    assert [b["tool_use_id"] for b in message["content"]] == ["t0", "t1", "t2"]
    assert all(b["is_error"] for b in message["content"])
    assert elapsed < 1.0 + SLACK


def test_no_thread_per_call(client: mcpclient.Client) -> None:
    calls = [
        {"functionCall": {"name": "mcp__export__slow", "args": {"seconds": 0.3}}} for _ in range(20)
    ]
    before = {t.name for t in threading.enumerate()}
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(t.name for t in threading.enumerate())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, name="test-watcher")
    watcher.start()
    try:
        (content,) = client.run_tool_calls({"parts": calls}, provider="gemini", timeout=10)
    finally:
        done.set()
        watcher.join()
    assert len(content["parts"]) == 20
    assert all("output" in p["functionResponse"]["response"] for p in content["parts"])
    assert not any(name.startswith("mcpclient-toolcall") for name in seen - before)


class _ByModelName:
    """A Host-like target: ``call_tool`` takes model names, and there is no submit."""

    def __init__(self, client: mcpclient.Client) -> None:
        self.client = client
        self.called: list[str] = []

    def catalog(self) -> mcpclient.Catalog:
        # An aggregate names no binding: run_tool_calls then calls by model name.
        return attrs.evolve(self.client.catalog(), binding="")

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> mcpclient.ToolResult:
        self.called.append(name)
        spec = self.client.catalog().tool_by_model_name(name)
        assert spec is not None
        return self.client.call_tool(spec.raw_name, arguments, timeout=timeout)


def test_a_target_without_submit_runs_calls_on_a_short_pool(client: mcpclient.Client) -> None:
    target = _ByModelName(client)
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {
                    "name": "mcp__export__echo",
                    "arguments": json.dumps({"message": str(i)}),
                },
            }
            for i in range(3)
        ]
        + [
            {
                "id": "late",
                "type": "function",
                "function": {"name": "mcp__export__slow", "arguments": '{"seconds": 30}'},
            }
        ],
    }
    started = time.monotonic()
    results = export.run_tool_calls(target, message, provider="openai_chat", timeout=1.0)
    assert time.monotonic() - started < 1.0 + SLACK
    assert [m["content"] for m in results[:3]] == ["0", "1", "2"]
    assert results[3]["content"].startswith("Error: the tool call did not finish in time")
    assert sorted(target.called) == ["mcp__export__echo"] * 3 + ["mcp__export__slow"]


def test_nulls_strict_mode_asks_for_are_not_sent_to_the_server(client: mcpclient.Client) -> None:
    # In strict mode the optional `message` of `fail` is required and nullable;
    # the model's null means "absent", and the server's schema takes no null.
    exported = export.to_openai_chat(client, strict=True)
    (fail,) = [
        t["function"] for t in exported.tools if t["function"]["name"] == "mcp__export__fail"
    ]
    assert fail["strict"] is True
    assert fail["parameters"]["properties"]["message"]["type"] == ["string", "null"]
    call = {
        "id": "n1",
        "type": "function",
        "function": {"name": "mcp__export__fail", "arguments": '{"message": null}'},
    }
    (result,) = client.run_tool_calls({"tool_calls": [call]}, provider="openai_chat", timeout=10)
    assert result["content"] == "Error: this tool always fails"


def test_the_generic_function_calls_a_client_by_raw_name(client: mcpclient.Client) -> None:
    assert client.catalog().binding == "export"
    block = {"type": "tool_use", "id": "e", "name": "mcp__export__echo", "input": {"message": "x"}}
    (message,) = export.run_tool_calls(client, {"content": [block]}, provider="anthropic")
    assert message["content"][0]["content"] == [{"type": "text", "text": "x"}]
