"""Issue 14 defect 14: the seed's field comments hold.

* ``Unsupported.kind`` is one of the ``KIND_*`` constants (the server's own
  type string is in a warning);
* ``Unsupported.bytes`` is exact (the decoded size) for an item dropped on a
  size bound, computed from the base64 length and padding, never by decoding;
* a sampling handler that raises ``InteractionError(sampling_denied)`` yields
  ``SampleOutcome.DENIED`` and the spec's "user rejected" error (code -1), in
  both eras.

Against the scriptable testing server (``hostile`` ``result`` for content,
``server_request`` and ``ask`` for sampling) and server-everything.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    KIND_AUDIO,
    KIND_IMAGE,
    KIND_RESOURCE,
    KIND_TOOL_USE,
    KIND_UNKNOWN,
    CallOpts,
    ClientCapabilities,
    FailureClass,
    HandlerContext,
    Handlers,
    InteractionError,
    Limits,
    SampleOutcome,
    SampleRequest,
    SampleResult,
    SamplingResolved,
    Unsupported,
)
from mcpclient._internal.wire import content as convert
from tests.support import Events

from .conftest import MakeDefinition
from .engine_support import definition, text_of, wait_until

ERAS = ("legacy", "modern")
ERA_VERSION = {"legacy": "2025-11-25", "modern": "2026-07-28"}
#: ``max_binary_item_bytes`` of the bounded binding.
CAP = 8


@pytest.fixture(scope="module", params=ERAS)
def bounded(request: pytest.FixtureRequest) -> Iterator[mcpclient.Client]:
    """A binding per era to the testing server with an 8-byte binary bound."""
    limits = Limits(max_binary_item_bytes=CAP, max_binary_items=2)
    client = mcpclient.connect(definition("--era", request.param, limits=limits))
    try:
        assert client.status().protocol_version == ERA_VERSION[request.param]
        yield client
    finally:
        client.close()


def answered(client: mcpclient.Client, result: dict[str, Any]) -> mcpclient.ToolResult:
    """Make ``hostile`` answer exactly ``result``."""
    return client.call_tool("hostile", {"action": "result", "result": result}, CallOpts(timeout=10))


def b64(size: int) -> str:
    return base64.b64encode(bytes(range(256)) * (size // 256) + bytes(size % 256)).decode()


# ------------------------------------------------------------------ Unsupported.kind


@pytest.mark.parametrize(
    ("wire_type", "kind"),
    [("hologram", KIND_UNKNOWN), ("Image", KIND_UNKNOWN), ("tool_use", KIND_TOOL_USE)],
)
def test_an_unsupported_kind_is_a_kind_constant_and_the_type_is_in_a_warning(
    bounded: mcpclient.Client, wire_type: str, kind: str
) -> None:
    result = answered(
        bounded, {"content": [{"type": wire_type, "x": 1}, {"type": "text", "text": "t"}]}
    )
    placeholder, text = result.content
    assert placeholder == Unsupported(kind, placeholder.bytes)
    assert placeholder.bytes > 0
    assert text == mcpclient.Text("t")
    assert any(repr(wire_type) in w for w in result.warnings), result.warnings


def test_a_long_or_non_string_type_is_unknown(bounded: mcpclient.Client) -> None:
    result = answered(bounded, {"content": [{"type": "x" * 200}, {"type": 7}, {"text": "no type"}]})
    assert [item.kind for item in result.content] == [KIND_UNKNOWN] * 3  # type: ignore[union-attr]
    assert all(len(w) <= 256 for w in result.warnings)


def test_every_unsupported_kind_from_the_server_is_a_kind_constant(
    bounded: mcpclient.Client,
) -> None:
    kinds = {
        mcpclient.KIND_TEXT,
        KIND_IMAGE,
        KIND_AUDIO,
        KIND_RESOURCE,
        mcpclient.KIND_RESOURCE_LINK,
        KIND_TOOL_USE,
        mcpclient.KIND_TOOL_RESULT,
        KIND_UNKNOWN,
    }
    result = answered(
        bounded,
        {
            "content": [
                "not an object",
                {"type": "image"},
                {"type": "resource", "resource": {}},
                {"type": "resource_link"},
                {"type": "tool_result", "toolUseId": "1", "content": []},
                {"type": "audio", "data": "!!!!"},
            ]
        },
    )
    assert all(isinstance(item, Unsupported) for item in result.content)
    assert {item.kind for item in result.content} <= kinds  # type: ignore[union-attr]


# ----------------------------------------------------------------- Unsupported.bytes


@pytest.mark.parametrize("size", [CAP + 1, CAP + 2, CAP + 3, CAP + 4, 100, 1001])
def test_an_item_dropped_on_the_size_bound_reports_its_exact_decoded_size(
    bounded: mcpclient.Client, size: int
) -> None:
    data = b64(size)
    result = answered(
        bounded,
        {
            "content": [
                {"type": "image", "data": data, "mimeType": "image/png"},
                {"type": "audio", "data": data.rstrip("="), "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://b", "blob": data}},
            ]
        },
    )
    assert result.content == (
        Unsupported(KIND_IMAGE, size),
        Unsupported(KIND_AUDIO, size),  # unpadded: the same exact size
        Unsupported(KIND_RESOURCE, size),
    )
    assert all(f"{size} bytes" in w for w in result.warnings), result.warnings


def test_an_item_at_the_bound_is_decoded(bounded: mcpclient.Client) -> None:
    result = answered(bounded, {"content": [{"type": "image", "data": b64(CAP)}]})
    (image,) = result.content
    assert isinstance(image, mcpclient.Image) and len(image.data) == CAP


def test_an_oversized_item_is_never_decoded(
    bounded: mcpclient.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[int] = []
    real = base64.b64decode

    def spy(data: Any, *args: Any, **kwargs: Any) -> bytes:
        decoded.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(convert.base64, "b64decode", spy)
    result = answered(bounded, {"content": [{"type": "image", "data": b64(300_000)}]})
    assert result.content == (Unsupported(KIND_IMAGE, 300_000),)
    assert decoded == []


# ------------------------------------------------------------------ sampling denied

ALL = ClientCapabilities(sampling=True)


def denying(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
    raise InteractionError(
        "the user said no", failure_class=FailureClass.SAMPLING_DENIED, binding=request.binding
    )


SAMPLING = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
    "maxTokens": 20,
}


def test_a_denying_sampling_handler_is_a_user_rejection_in_the_legacy_era() -> None:
    events = Events()
    handlers = Handlers(sampling=denying, event=events)
    with mcpclient.connect(definition("--era", "legacy", capabilities=ALL), handlers) as c:
        result = c.call_tool(
            "hostile",
            {"action": "server_request", "method": "sampling/createMessage", "params": SAMPLING},
        )
        assert result.is_error
        assert json.loads(text_of(result)) == {
            "error": {"code": -1, "message": "User rejected sampling request"}
        }
        assert wait_until(lambda: len(events.of(SamplingResolved)) == 1)
        assert c.status().state is mcpclient.State.READY
    [resolved] = events.of(SamplingResolved)
    assert resolved.outcome is SampleOutcome.DENIED
    assert resolved.model == ""


def test_a_denying_sampling_handler_ends_an_mrtr_call_as_sampling_denied() -> None:
    events = Events()
    handlers = Handlers(sampling=denying, event=events)
    inputs = [{"key": "s", "method": "sampling/createMessage", "params": SAMPLING}]
    with mcpclient.connect(
        definition("--era", "modern", "--mrtr", capabilities=ALL), handlers
    ) as c:
        with pytest.raises(InteractionError) as info:
            c.call_tool("ask", {"inputs": inputs})
        assert info.value.failure_class is FailureClass.SAMPLING_DENIED
        assert info.value.op == "call_tool"
        assert wait_until(lambda: len(events.of(SamplingResolved)) == 1)
    assert events.of(SamplingResolved)[0].outcome is SampleOutcome.DENIED


def test_a_handler_raising_another_interaction_error_still_fails() -> None:
    def over(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        raise InteractionError("too long", failure_class=FailureClass.SAMPLING_OVER_BUDGET)

    events = Events()
    with mcpclient.connect(
        definition("--era", "legacy", capabilities=ALL), Handlers(sampling=over, event=events)
    ) as c:
        result = c.call_tool(
            "hostile",
            {"action": "server_request", "method": "sampling/createMessage", "params": SAMPLING},
        )
        assert json.loads(text_of(result))["error"]["code"] == -32603
        assert wait_until(lambda: len(events.of(SamplingResolved)) == 1)
    assert events.of(SamplingResolved)[0].outcome is SampleOutcome.FAILED


def test_everything_sees_the_user_rejection(everything_definition: MakeDefinition) -> None:
    events = Events()
    handlers = Handlers(sampling=denying, event=events)
    timeouts = mcpclient.Timeouts(startup=30, request=15)
    definition_ = everything_definition(protocol="legacy", capabilities=ALL, timeouts=timeouts)
    with mcpclient.connect(definition_, handlers) as c:
        try:
            result = c.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
            seen = result.text
        except mcpclient.ProtocolError as exc:  # the tool rethrows the client's error
            seen = exc.message
        assert wait_until(lambda: len(events.of(SamplingResolved)) == 1)
    assert "User rejected sampling request" in seen
    assert events.of(SamplingResolved)[0].outcome is SampleOutcome.DENIED
