"""The wire package's own machinery (issue 16): one converter per Limits, per-call
budgets, cattrs' errors translated in one place, and discovery's schema work done
once per distinct schema."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    StructureHandlerNotFoundError,
)

from mcpclient import PROFILE_DEFAULT, Image, Limits, ServerCapabilities, ServerIdentity
from mcpclient._internal.client.catalog.discovery import discover
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.wire import ConversionError, converter_for, to_tool_result
from mcpclient._internal.wire import catalog as wire_catalog
from mcpclient._internal.wire.errors import DroppedError, translated, warning_of
from mcpclient._internal.wire.trusted import trusted
from mcpclient.catalog import ToolAnnotations, ToolSpec
from mcpclient.content import Text

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}


def test_one_converter_per_limits_value_built_once() -> None:
    assert converter_for(Limits()) is converter_for(Limits())
    small = Limits(max_text_result_bytes=64)
    assert converter_for(small) is converter_for(Limits(max_text_result_bytes=64))
    assert converter_for(small) is not converter_for(Limits())
    # A limit read per call (the binary budget) needs no converter of its own.
    assert converter_for(Limits(max_binary_items=3)) is converter_for(Limits())


def test_the_binary_budget_belongs_to_one_call() -> None:
    limits = Limits(max_binary_items=1)
    raw = {"content": [IMAGE, IMAGE]}
    for _ in range(3):  # a budget kept across calls would refuse the later calls' images
        result = to_tool_result(raw, limits)
        assert isinstance(result.content[0], Image)
        assert not isinstance(result.content[1], Image)
        assert result.warnings == ("image item dropped: more than max_binary_items binary items",)


def test_concurrent_calls_keep_their_own_budget_and_warnings() -> None:
    limits = Limits(max_binary_items=2)
    barrier = threading.Barrier(4)
    results: list[Any] = []

    def run() -> None:
        barrier.wait()
        for _ in range(50):
            results.append(to_tool_result({"content": [IMAGE, IMAGE, {"type": "x"}]}, limits))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 200
    for result in results:
        assert [type(item) for item in result.content[:2]] == [Image, Image]
        assert result.warnings == ("content of unsupported kind 'x' kept as a placeholder",)


@pytest.mark.parametrize(
    "exc",
    [
        ClassValidationError("While structuring X", [TypeError("bad")], object),
        IterableValidationError("While structuring list", [KeyError("k")], list),
        StructureHandlerNotFoundError("no handler", object),
        ForbiddenExtraKeysError("", object, {"zzz"}),
        TypeError("unexpected"),
        KeyError("name"),
    ],
)
def test_cattrs_errors_become_one_classified_conversion_error(exc: Exception) -> None:
    with pytest.raises(ConversionError) as caught, translated("the thing"):
        raise exc
    assert str(caught.value).startswith("the thing: ")
    assert caught.value.__cause__ is None  # cattrs' exception does not leak as the cause


def test_our_own_refusals_pass_through_untouched() -> None:
    with pytest.raises(ConversionError, match=r"^mine$"), translated("the thing"):
        raise ConversionError("mine")
    assert warning_of("tool 3", DroppedError("it has no name")) == "tool 3 dropped: it has no name"


def test_a_trusted_build_equals_the_validated_value() -> None:
    build = trusted(ToolSpec)
    fields: dict[str, Any] = {
        "raw_name": "t",
        "model_name": "mcp__b__t",
        "title": "T",
        "input_schema": {"type": "object"},
        "annotations": ToolAnnotations(read_only_hint=True),
        "warnings": ("w",),
    }
    checked = ToolSpec(**fields)
    fast = build(**{**fields, "input_schema": checked._input_schema})
    assert fast == checked
    assert repr(fast) == repr(checked)
    assert hash(fast) == hash(checked)
    assert trusted(Text)(text="x") == Text("x")
    unset = build(raw_name="a", model_name="b", input_schema=checked._input_schema)
    assert unset.output_schema is None
    assert unset.warnings == ()
    assert unset.annotations is None


def _catalog(tools: list[dict[str, Any]]) -> Any:
    protocol = Protocol(
        era="legacy",
        version="2025-11-25",
        server=ServerIdentity(name="s"),
        capabilities=ServerCapabilities(tools=True),
        instructions="",
        client_caps={},
    )
    return discover(
        lambda method, params: {"tools": tools},
        binding="b",
        generation=1,
        protocol=protocol,
        limits=Limits(),
        profile=PROFILE_DEFAULT,
    )


def test_identical_schemas_are_measured_and_digested_once_per_discovery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []
    real = wire_catalog.schema_digest

    def counting(schema: Any) -> bytes:
        calls.append(schema)
        return real(schema)

    monkeypatch.setattr(wire_catalog, "schema_digest", counting)
    same = {"type": "object", "properties": {"x": {"type": "string"}}}
    tools = [{"name": f"t{i}", "inputSchema": dict(same)} for i in range(50)]
    tools.append({"name": "other", "inputSchema": {"type": "object"}, "outputSchema": same})
    catalog = _catalog(tools)
    assert len(catalog.tools) == 51
    assert len(calls) == 2  # two distinct schemas, each digested once
    digests = {t.input_schema_digest for t in catalog.tools if t.raw_name != "other"}
    assert digests == {catalog.tool_by_raw_name("other").output_schema_digest}
    # The next discovery starts with an empty memo (per call, never global).
    _catalog(tools)
    assert len(calls) == 4
