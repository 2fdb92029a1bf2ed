"""The sequential call path's shortcuts (issue #10) give what the general paths give.

* a plain all-text ``tools/call`` result is converted by a fast path: the same
  value, bounds and validation as the full conversion;
* tool arguments are encoded once, where they are checked, and the session
  splices those very bytes into the frame;
* call serialization and the request slots share one lock, and an uncontended
  call takes (and gives back) both in one step, without barging past a queued
  ticket.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpclient import Limits
from mcpclient._core import canonical, jsonio
from mcpclient._core.deadline import now
from mcpclient._internal import wire as convert
from mcpclient._internal.client.calls.gate import Gate, enter_pair, leave_pair
from mcpclient._internal.client.calls.tools import prepare_tool_call
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session.rpc import JSONArguments, _encode_request
from mcpclient._internal.wire import to_tool_result
from mcpclient._internal.wire.fast import plain_text_result
from mcpclient.catalog import Catalog, ToolSpec
from mcpclient.definition import ToolFilter
from mcpclient.errors import DeadlineExceededError, InvalidArgumentsError, ShutdownError

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

LIMITS = Limits()


def _full(raw: dict[str, Any], limits: Limits = LIMITS) -> Any:
    """The general conversion: a read-only mapping never takes the dict fast path."""
    return to_tool_result(types.MappingProxyType(raw), limits)


def _same(a: Any, b: Any) -> None:
    assert a == b
    assert repr(a) == repr(b)
    assert hash(a) == hash(b)
    assert a.text == b.text
    assert a.warnings == b.warnings
    assert a.structured == b.structured
    assert a.meta == b.meta


# ------------------------------------------------------------------------ tool results

PLAIN = [
    {"content": []},
    {},
    {"content": [{"type": "text", "text": "hello"}]},
    {"content": [{"type": "text", "text": "hello"}], "isError": False},
    {"content": [{"type": "text", "text": "boom"}], "isError": True},
    {"content": [{"type": "text", "text": "x"}], "isError": "yes"},  # only true is true
    {"content": [{"type": "text", "text": "a"}, {"text": "b\u00e9\U0001f600", "type": "text"}]},
    {"content": [{"type": "text", "text": ""}]},
]


@pytest.mark.parametrize("raw", PLAIN)
def test_a_plain_text_result_takes_the_fast_path_and_equals_the_full_conversion(
    raw: dict[str, Any],
) -> None:
    fast = plain_text_result(raw, LIMITS)
    assert fast is not None
    _same(fast, _full(raw))
    _same(to_tool_result(raw, LIMITS), _full(raw))


NOT_PLAIN = [
    {"content": [{"type": "text", "text": "a"}], "structuredContent": {"n": 1}},
    {"content": [{"type": "text", "text": "a"}], "_meta": {"k": "v"}},
    {"content": [{"type": "text", "text": "a"}], "resultType": "complete"},
    {"content": [{"type": "text", "text": "a", "annotations": {"priority": 0.5}}]},
    {"content": [{"type": "text", "text": "a", "_meta": {"k": 1}}]},
    {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    {"content": [{"type": "text", "text": 5}]},
    {"content": [{"type": "text"}]},
    {"content": [{"type": "texts", "text": "a"}]},
    {"content": ["text"]},
    {"content": {"type": "text", "text": "a"}},
    {"content": [{"type": "text", "text": "a"}] * 17},
]


@pytest.mark.parametrize("raw", NOT_PLAIN)
def test_anything_else_takes_the_full_conversion(raw: dict[str, Any]) -> None:
    assert plain_text_result(raw, LIMITS) is None
    try:
        expected = _full(raw)
    except convert.ConversionError:
        with pytest.raises(convert.ConversionError):
            to_tool_result(raw, LIMITS)
        return
    _same(to_tool_result(raw, LIMITS), expected)


def test_a_text_that_may_need_truncating_is_truncated_by_the_full_path() -> None:
    limits = Limits(max_text_result_bytes=64)
    fits = {"content": [{"type": "text", "text": "\U0001f600" * 16}]}  # 64 bytes, 16 chars
    assert plain_text_result(fits, limits) is not None
    assert not to_tool_result(fits, limits).content[0].truncated
    over = {"content": [{"type": "text", "text": "\U0001f600" * 17}]}  # 68 bytes
    assert plain_text_result(over, limits) is None
    result = to_tool_result(over, limits)
    assert result.content[0].truncated
    assert len(result.content[0].text.encode()) <= 64
    _same(result, _full(over, limits))


_texts = st.text(max_size=40)
_items = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _texts}),
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "x"]), "text": _texts}),
    st.dictionaries(st.sampled_from(["type", "text", "annotations", "_meta"]), _texts),
    st.integers(),
)
_results = st.fixed_dictionaries(
    {"content": st.lists(_items, max_size=20)},
    optional={
        "isError": st.sampled_from([True, False, None, 1, "true"]),
        "_meta": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
        "structuredContent": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    },
)


@PROPERTY
@given(raw=_results, max_bytes=st.sampled_from([8, 64, 1 << 20]))
def test_the_fast_path_never_differs_from_the_full_conversion(
    raw: dict[str, Any], max_bytes: int
) -> None:
    limits = Limits(max_text_result_bytes=max_bytes)
    _same(to_tool_result(raw, limits), _full(raw, limits))


# ------------------------------------------------------------------ arguments, encoded once


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every value jsonio.encode is asked to encode, in order."""
    seen: list[Any] = []
    original = jsonio.encode

    def spy(message: Any) -> bytes:
        seen.append(message)
        return original(message)

    monkeypatch.setattr(jsonio, "encode", spy)
    yield seen


def _catalog(schema: dict[str, Any]) -> Catalog:
    tool = ToolSpec(raw_name="echo", model_name="mcp__srv__echo", input_schema=schema)
    return Catalog(binding="srv", generation=1, tools=[tool])


def test_tool_arguments_are_encoded_once_and_sent_as_checked(encodes: list[Any]) -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    arguments = {"text": "hi \u00e9", "n": [1, 2.5, None]}
    prepared = prepare_tool_call(
        "echo",
        arguments,
        binding="srv",
        tool_filter=ToolFilter(),
        adopted=_catalog(schema),
        schemas=SchemaCache(),
    )
    sent = prepared.params["arguments"]
    assert isinstance(sent, JSONArguments)
    assert sent == arguments
    assert sent is not arguments  # our own copy
    frame = _encode_request(7, "tools/call", prepared.params)
    assert json.loads(frame) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }
    assert sent.encoded in frame
    assert [m for m in encodes if isinstance(m, dict)] == [arguments], "encoded more than once"


@pytest.mark.parametrize("shape", ["cycle", "deep"])
def test_arguments_json_cannot_hold_are_refused_as_invalid_arguments(shape: str) -> None:
    arguments: dict[str, Any] = {}
    if shape == "cycle":
        arguments["self"] = arguments
    else:
        inner = arguments
        for _ in range(100_000):  # deeper than the interpreter's recursion limit
            inner["a"] = {}
            inner = inner["a"]
    with pytest.raises(InvalidArgumentsError, match="not representable as JSON"):
        prepare_tool_call(
            "echo",
            arguments,
            binding="srv",
            tool_filter=ToolFilter(),
            adopted=_catalog({"type": "object"}),
            schemas=SchemaCache(),
        )


def test_the_frame_carries_the_checked_bytes_verbatim() -> None:
    arguments = JSONArguments({"a": 1})
    arguments.encoded = jsonio.encode(arguments)
    arguments["a"] = 2  # never happens in the client; shows the bytes are not re-made
    frame = _encode_request(1, "tools/call", {"name": "t", "arguments": arguments})
    assert json.loads(frame)["params"]["arguments"] == {"a": 1}


def _arguments(value: dict[str, Any]) -> JSONArguments:
    arguments = JSONArguments(value)
    arguments.encoded = jsonio.encode(value)
    return arguments


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"name": "echo"},
        {"name": "echo", "arguments": {"x": 1}},  # a plain dict: encoded with the message
        {"name": "echo", "arguments": _arguments({"x": [1, "\u00e9"]})},
        {"arguments": _arguments({})},
        {"name": "echo", "arguments": _arguments({}), "_meta": {"progressToken": "t-1"}},
        {"_meta": {"a": {"b": None}}, "arguments": _arguments({"k": "v"}), "name": "echo"},
        {"name": 3, "arguments": _arguments({"k": "v"})},
    ],
)
def test_spliced_frames_decode_to_the_message(params: dict[str, Any] | None) -> None:
    frame = _encode_request(42, "tools/call", params)
    expected: dict[str, Any] = {"jsonrpc": "2.0", "id": 42, "method": "tools/call"}
    if params is not None:
        expected["params"] = params
    assert json.loads(frame) == json.loads(json.dumps(expected))
    assert jsonio.decode(frame) == expected


# ------------------------------------------------------------------- the one-shot encoder


def test_the_reusable_c_encoder_is_in_use_on_this_python() -> None:
    # Built once from json's private C core: if its signature changes, the
    # modules fall back to the plain (slower) path, and this test says so.
    assert jsonio._core is not None, "json.encoder.c_make_encoder changed: the fast encoder is off"
    assert canonical._C_COMPACT is not None and canonical._C_AS_READ is not None


@pytest.mark.parametrize(
    "value",
    [
        {"text": "hello"},
        {"a": [1, -2.5, 1e300, '\u00e9\n"', None, True, False, {"b": []}]},
        ["x", {"y": {"z": [0.1, -0]}}],
        {"\u2603": "\U0001f600", "k": 10**30},
        "a string",
        17,
        None,
    ],
)
def test_the_encoder_writes_what_the_standard_library_writes(value: Any) -> None:
    standard = json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    assert jsonio.encode(value) == standard.encode("ascii")


def test_the_encoder_refuses_what_json_cannot_hold_with_classified_errors() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="refers to itself"):
        jsonio.encode({"a": cycle})
    with pytest.raises(ValueError, match="not JSON compliant"):
        jsonio.encode({"a": float("nan")})
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonio.encode({"a": object()})
    # The reusable encoder keeps no state from a failed call.
    assert jsonio.encode({"a": [1]}) == b'{"a":[1]}'


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@PROPERTY
@given(
    value=_JSON,
    before=st.sampled_from(["", " ", "\n\t"]),
    after=st.sampled_from(["", " ", "\r\n", "x", " 1", "]"]),
)
def test_the_decoder_reads_what_the_standard_library_reads(
    value: Any, before: str, after: str
) -> None:
    text = before + json.dumps(value) + after
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(jsonio.FrameError):
            jsonio.decode(text.encode())
        return
    assert jsonio.decode(text.encode()) == expected


# --------------------------------------------------------------------------------- gates


def _gates(slots: int = 2) -> tuple[Gate, Gate]:
    inner = Gate(slots, binding="b")
    return Gate(1, binding="b", share=inner), inner


PAST = -1.0  # a deadline already passed: a gate refuses at once instead of waiting


def test_an_uncontended_pair_is_taken_and_given_back_together() -> None:
    serial, slots = _gates(slots=2)
    enter_pair(serial, slots, now() + 60, None, "call_tool")
    with pytest.raises(DeadlineExceededError):
        serial.enter(PAST, None, "call_tool")  # the turn is taken
    slots.enter(PAST, None, "read_resource")  # one slot left...
    with pytest.raises(DeadlineExceededError):
        slots.enter(PAST, None, "read_resource")  # ...and now none
    slots.leave()
    leave_pair(serial, slots)
    serial.enter(PAST, None, "call_tool")  # both free again
    slots.enter(PAST, None, "call_tool")
    slots.enter(PAST, None, "call_tool")


def test_when_the_slots_refuse_the_turn_is_given_back() -> None:
    serial, slots = _gates(slots=1)
    slots.enter(PAST, None, "prompts/get")
    with pytest.raises(DeadlineExceededError):
        enter_pair(serial, slots, PAST, None, "call_tool")
    serial.enter(PAST, None, "call_tool")  # the turn was not kept


def test_a_closed_pair_refuses_with_shutdown() -> None:
    serial, slots = _gates()
    slots.close()
    with pytest.raises(ShutdownError):
        enter_pair(serial, slots, now() + 60, None, "call_tool")
    serial.enter(PAST, None, "call_tool")  # the turn was given back


def test_gates_of_different_locks_pair_up_too() -> None:
    serial, slots = Gate(1, binding="b"), Gate(1, binding="b")
    enter_pair(serial, slots, now() + 60, None, "call_tool")
    with pytest.raises(DeadlineExceededError):
        serial.enter(PAST, None, "call_tool")
    with pytest.raises(DeadlineExceededError):
        slots.enter(PAST, None, "call_tool")
    leave_pair(serial, slots)
    enter_pair(None, slots, PAST, None, "ping")
    leave_pair(None, slots)
    serial.enter(PAST, None, "call_tool")
