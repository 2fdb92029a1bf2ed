"""Client-side schema validation and result conversion, without a server.

``mcpclient._internal.schema`` must never fetch anything, never backtrack on a
pattern, never refuse what it cannot judge, and never write into the caller's
data (DESIGN.md §6, §7 "Validation"); ``mcpclient._internal.wire`` must turn
any JSON a server sends into a bounded value or a ``ConversionError``, never
another exception.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import math
import time
import urllib.request
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import (
    Audio,
    EmbeddedResource,
    Image,
    Limits,
    ResourceContent,
    Text,
    ToolResult,
    Unsupported,
)
from mcpclient._core import jsonio
from mcpclient._core.canonical import compact
from mcpclient._internal.schema import SchemaCache, Validator, compile_schema, unsupported_reason
from mcpclient._internal.wire import (
    ConversionError,
    to_prompt,
    to_resource,
    to_tool_result,
)

PROPERTY = settings(max_examples=50, deadline=None, database=None)


@contextlib.contextmanager
def no_fetch() -> Iterator[list[str]]:
    """Record (and refuse) every ``urlopen`` made while the block runs."""
    fetched: list[str] = []

    def refuse(url: Any, *args: Any, **kwargs: Any) -> Any:
        fetched.append(str(getattr(url, "full_url", url)))
        raise OSError("fetching is not allowed in this test")

    with mock.patch.object(urllib.request, "urlopen", refuse):
        yield fetched


def compiled(schema: Any) -> Validator:
    with no_fetch() as fetched:
        validator = compile_schema(schema)
    assert fetched == []
    assert isinstance(validator, Validator), validator
    return validator


# ----------------------------------------------------------------------------- unsupported_reason

# DESIGN.md §7 "Validation", written out independently of the library's own table.
UNSUPPORTED = [
    "prefixItems",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
    "dependentRequired",
]


def _nest(node: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` at the root and in the usual subschema positions."""
    return [
        node,
        {"type": "object", "properties": {"a": node}},
        {"type": "array", "items": node},
        {"type": "array", "items": [{"type": "string"}, node]},
        {"allOf": [{"type": "object"}, node]},
        {"anyOf": [node]},
        {"not": node},
        {"if": node, "then": {}, "else": {}},
        {"$defs": {"d": node}},
        {"definitions": {"d": node}},
        {"patternProperties": {"^x": node}},
        {"additionalProperties": node},
        {"properties": {"a": {"properties": {"b": {"items": node}}}}},
    ]


@pytest.mark.parametrize("keyword", UNSUPPORTED)
def test_unsupported_keywords_anywhere_prevent_compiling(keyword: str) -> None:
    value: Any = [{"type": "string"}] if keyword == "prefixItems" else {"x": {}}
    if keyword in ("$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef"):
        value = "#x"
    if keyword in ("unevaluatedProperties", "unevaluatedItems"):
        value = False
    if keyword == "dependentRequired":
        value = {"a": ["b"]}
    for schema in _nest({keyword: value}):
        reason = unsupported_reason(schema)
        assert reason is not None, schema
        assert isinstance(compile_schema(schema), str)


@pytest.mark.parametrize(
    "ref",
    [
        "http://127.0.0.1:9/schema.json",
        "https://example.invalid/s.json#/definitions/a",
        "file:///etc/passwd",
        "ftp://example.invalid/x",
        "data:application/json,{}",
        "urn:example:schema",
        "other.json",
        "other.json#/a",
        "//example.invalid/x",
        "",
    ],
)
def test_non_fragment_refs_prevent_compiling(ref: str) -> None:
    for schema in _nest({"$ref": ref}):
        reason = unsupported_reason(schema)
        assert reason is not None and "$ref" in reason, schema
        with no_fetch() as fetched:
            assert isinstance(compile_schema(schema), str)
        assert fetched == []


@pytest.mark.parametrize("ref", [5, None, ["#"], {"a": "#"}])
def test_non_string_refs_prevent_compiling(ref: Any) -> None:
    assert unsupported_reason({"properties": {"a": {"$ref": ref}}}) is not None


@pytest.mark.parametrize("base", ["http://example.invalid/s.json", "urn:x", "#frag", ""])
def test_dollar_id_prevents_compiling(base: str) -> None:
    for schema in _nest({"$id": base, "type": "string"}):
        reason = unsupported_reason(schema)
        assert reason is not None and "$id" in reason, schema


@pytest.mark.parametrize("base", ["http://127.0.0.1:9/x#frag", "http://127.0.0.1:9/x"])
def test_draft4_id_prevents_compiling(base: str) -> None:
    schema = {"properties": {"a": {"id": base, "properties": {"b": {"$ref": "#/definitions/z"}}}}}
    assert unsupported_reason(schema) is not None


def test_draft4_id_is_never_fetched() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "id": "http://127.0.0.1:9/draft4.json#frag",
                "properties": {"b": {"$ref": "#/definitions/z"}},
            }
        },
    }
    with no_fetch() as fetched:
        compile_schema(schema)
    assert fetched == []


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/p"}}, "$defs": {"p": {}}},
        {"definitions": {"n": {"type": "integer"}}, "items": {"$ref": "#/definitions/n"}},
        {"type": "object", "required": ["$ref", "$id", "prefixItems"]},
    ],
)
def test_fragment_refs_are_fine(schema: dict[str, Any]) -> None:
    assert unsupported_reason(schema) is None
    compiled(schema)


def test_property_names_are_not_keywords() -> None:
    names = ["$ref", "$id", "prefixItems", "unevaluatedProperties", "$anchor", "id", "pattern"]
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "patternProperties": {"^\\$dynamicRef$": {"type": "integer"}},
    }
    assert unsupported_reason(schema) is None
    validator = compiled(schema)
    assert validator.check({name: 1 for name in names}) is None
    assert validator.check({"$ref": "one"}) == "$.$ref: must be integer"
    assert validator.check({"$dynamicRef": "x"}) is not None


def test_values_are_not_keywords() -> None:
    harmless = {"prefixItems": [], "$anchor": "a", "unevaluatedProperties": False}
    for key in ("enum", "const", "default", "examples"):
        value = [harmless] if key in ("enum", "examples") else harmless
        schema = {"type": "object", "properties": {"a": {key: value}}}
        assert unsupported_reason(schema) is None, key
        compiled(schema)


@pytest.mark.parametrize("key", ["enum", "const", "default", "examples"])
def test_refs_inside_values_are_never_fetched(key: str) -> None:
    hostile = {"$ref": "http://127.0.0.1:9/value.json"}
    value = [hostile] if key in ("enum", "examples") else hostile
    with no_fetch() as fetched:
        compile_schema({"type": "object", "properties": {"a": {key: value}}})
    assert fetched == []


@pytest.mark.parametrize(
    "pattern",
    ["^(a)\\1$", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "a++", "(?P=name)", "\\Z"],
)
def test_patterns_re2_cannot_run_prevent_compiling(pattern: str) -> None:
    placements: list[dict[str, Any]] = [
        {"type": "string", "pattern": pattern},
        {"properties": {"s": {"pattern": pattern}}},
        {"patternProperties": {pattern: {}}},
        {"propertyNames": {"pattern": pattern}},
    ]
    for schema in placements:
        reason = unsupported_reason(schema)
        assert reason is not None and "pattern" in reason, schema


@pytest.mark.parametrize(
    "pattern", ["^(a+)+$", "^[a-z]+$", "\\d{3}-\\d{4}", "^\\p{L}+$", "(a|b)*c"]
)
def test_patterns_re2_can_run_are_fine(pattern: str) -> None:
    assert unsupported_reason({"pattern": pattern}) is None


def test_non_schema_inputs_have_no_reason() -> None:
    inputs: list[Any] = [True, False, {}, [], None, 5, "string"]
    for schema in inputs:
        assert unsupported_reason(schema) is None


# ----------------------------------------------------------------------------- compile_schema


def test_failures_name_the_json_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "a": {
                "type": "object",
                "properties": {"b": {"type": "array", "items": {"type": "integer"}}},
            },
        },
        "required": ["message"],
    }
    validator = compiled(schema)
    assert validator.check({"message": "hi"}) is None
    assert validator.check({"message": 5}) == "$.message: must be string"
    failure = validator.check({"message": "x", "a": {"b": [1, "two"]}})
    assert failure is not None and failure.startswith("$.a.b[1]: ")
    missing = validator.check({})
    assert missing is not None and missing.startswith("$: ") and "message" in missing
    assert validator.check([]) == "$: must be object"


def test_defaults_are_never_written_into_the_instance() -> None:
    schema = {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "default": 7},
            "o": {
                "type": "object",
                "default": {"d": 1},
                "properties": {"y": {"type": "integer", "default": 2}},
            },
        },
    }
    validator = compiled(schema)
    instances: list[dict[str, Any]] = [{}, {"o": {}}, {"x": 1}]
    for instance in instances:
        before = copy.deepcopy(instance)
        assert validator.check(instance) is None
        assert instance == before


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        ("email", "a@b"),
        ("email", "not-an-email"),
        ("date-time", "yesterday"),
        ("uri", "::"),
        ("ipv4", "999.1.1.1"),
        ("hostname", "-bad-"),
        ("regex", "(unclosed"),
        ("uuid", "nope"),
    ],
)
def test_formats_are_not_enforced(fmt: str, value: str) -> None:
    validator = compiled({"type": "string", "format": fmt})
    assert validator.check(value) is None
    assert validator.check(5) == "$: must be string"


def test_catastrophic_pattern_is_decided_in_microseconds() -> None:
    validator = compiled({"type": "object", "properties": {"s": {"pattern": "^(a+)+$"}}})
    start = time.monotonic()
    assert validator.check({"s": "a" * 50 + "!"}) is not None
    assert validator.check({"s": "a" * 5000 + "!"}) is not None
    assert time.monotonic() - start < 0.5
    assert validator.check({"s": "a" * 50}) is None


def test_catastrophic_pattern_property_is_decided_quickly() -> None:
    validator = compiled({"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}})
    start = time.monotonic()
    assert validator.check({"a" * 60 + "!": "not checked: the name does not match"}) is None
    assert validator.check({"aaaa": "x"}) is not None
    assert time.monotonic() - start < 0.5


def test_patterns_keep_their_original_anchors() -> None:
    validator = compiled({"type": "string", "pattern": "^abc$"})
    assert validator.check("abc") is None
    assert validator.check("abcd") is not None
    assert validator.check("xabc") is not None
    unanchored = compiled({"type": "string", "pattern": "b"})
    assert unanchored.check("abc") is None  # `pattern` searches, it does not match whole


def test_boolean_schemas() -> None:
    assert compiled(True).check({"anything": [1]}) is None
    assert compiled({"properties": {"a": True}}).check({"a": 1}) is None
    assert compiled({"properties": {"a": False}}).check({"a": 1}) is not None


@pytest.mark.parametrize(
    "schema",
    [{"type": "bogus"}, {"$ref": "#/definitions/missing"}, {"minimum": "ten"}, 5, "str"],
)
def test_uncompilable_schemas_give_a_reason_not_an_exception(schema: Any) -> None:
    result = compile_schema(schema)
    assert isinstance(result, str) and result


def test_schema_cache_compiles_once_per_digest_and_evicts() -> None:
    cache = SchemaCache(capacity=2)
    calls: list[str] = []

    def schema(name: str) -> Any:
        def build() -> Any:
            calls.append(name)
            return {"type": "object", "required": [name]}

        return build

    first = cache.get("d1", schema("a"))
    assert isinstance(first, Validator)
    assert cache.get("d1", schema("ignored")) is first
    assert calls == ["a"]
    cache.get("d2", schema("b"))
    cache.get("d3", schema("c"))  # evicts d1, the least recently used
    assert calls == ["a", "b", "c"]
    again = cache.get("d1", schema("a"))
    assert again is not first and calls == ["a", "b", "c", "a"]
    reason = cache.get("d4", lambda: {"prefixItems": []})
    assert isinstance(reason, str)
    assert cache.get("d4", lambda: {}) == reason


# ----------------------------------------------------------------------------- fuzzing schemas

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
# Keys that would name a reference are left to the deterministic tests above.
_keys = st.text(max_size=8).filter(lambda k: k not in ("id", "$id", "$ref"))
json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=20,
)
_patterns = st.sampled_from(
    ["^a$", "^(a+)+$", "^(a)\\1$", "(?=x)", "[", "\\d+", "^\\p{L}*$", "a{2,3}", ""]
)
_refs = st.sampled_from(
    ["#", "#/definitions/a", "#/properties/x", "#nope", "http://127.0.0.1:9/x", "o.json", "#/"]
)
_types = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])


def _schema_nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": _types | st.lists(_types, max_size=3) | json_values,
            "properties": st.dictionaries(_keys, children, max_size=3),
            "items": children | st.lists(children, max_size=2),
            "required": st.lists(_keys, max_size=3),
            "pattern": _patterns,
            "patternProperties": st.dictionaries(_patterns, children, max_size=2),
            "additionalProperties": st.booleans() | children,
            "minimum": st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False),
            "maxLength": st.integers(0, 5),
            "enum": st.lists(json_values, max_size=3),
            "const": json_values,
            "$ref": _refs,
            "$id": st.just("urn:x"),
            "definitions": st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
            "allOf": st.lists(children, max_size=2),
            "anyOf": st.lists(children, max_size=2),
            "not": children,
            "format": st.sampled_from(["email", "date-time", "uri", "regex"]),
            "default": json_values,
            "prefixItems": st.lists(children, max_size=2),
        },
    )


schemas = st.recursive(st.booleans() | _schema_nodes(st.just({})), _schema_nodes, max_leaves=8)


@PROPERTY
@given(schema=schemas | json_values, instance=json_values)
def test_any_schema_compiles_or_is_refused_and_never_fetches(schema: Any, instance: Any) -> None:
    original = copy.deepcopy(schema)
    with no_fetch() as fetched:
        validator = compile_schema(schema)
        if isinstance(validator, Validator):
            before = copy.deepcopy(instance)
            outcome = validator.check(instance)
            assert outcome is None or (isinstance(outcome, str) and outcome.startswith("$"))
            assert instance == before
        else:
            assert isinstance(validator, str) and validator
    assert fetched == []
    assert unsupported_reason(original) == unsupported_reason(schema)


# ----------------------------------------------------------------------------- to_tool_result


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


_text_items = st.fixed_dictionaries(
    {"type": st.just("text")},
    optional={
        "text": st.text(max_size=40) | json_values,
        "annotations": st.fixed_dictionaries(
            {},
            optional={
                "audience": st.lists(st.sampled_from(["user", "assistant", 5]), max_size=3),
                "priority": st.floats(0, 1) | json_values,
                "lastModified": st.text(max_size=10) | json_values,
            },
        )
        | json_values,
        "_meta": json_values,
    },
)
_binary_items = st.fixed_dictionaries(
    {"type": st.sampled_from(["image", "audio"])},
    optional={
        "data": st.binary(max_size=24).map(_b64)
        | st.sampled_from(["!!!", "AAA", ""])
        | json_values,
        "mimeType": st.text(max_size=10) | json_values,
    },
)
_resource_contents = st.fixed_dictionaries(
    {},
    optional={
        "uri": st.text(max_size=20) | json_values,
        "text": st.text(max_size=40) | json_values,
        "blob": st.binary(max_size=24).map(_b64) | json_values,
        "mimeType": st.text(max_size=10),
    },
)
_other_items = st.fixed_dictionaries(
    {"type": st.sampled_from(["resource", "resource_link", "hologram", "x" * 40]) | json_values},
    optional={
        "resource": _resource_contents | json_values,
        "uri": st.text(max_size=20) | json_values,
        "name": st.text(max_size=10) | json_values,
        "description": st.text(max_size=40) | json_values,
    },
)
content_items = _text_items | _binary_items | _other_items | json_values
results = st.fixed_dictionaries(
    {},
    optional={
        "content": st.lists(content_items, max_size=6) | json_values,
        "structuredContent": json_values,
        "isError": st.booleans() | json_values,
        "_meta": json_values,
        "resultType": st.sampled_from(["complete", "bogus"]),
    },
)
limits = st.builds(
    Limits,
    max_text_result_bytes=st.integers(1, 64),
    max_binary_item_bytes=st.integers(1, 16),
    max_binary_items=st.integers(1, 3),
    max_structured_bytes=st.integers(1, 128),
    max_schema_depth=st.integers(1, 6),
)


def _check_bounds(result: ToolResult, limits: Limits) -> None:
    binary = 0
    for item in result.content:
        if isinstance(item, Text):
            assert len(item.text.encode()) <= limits.max_text_result_bytes
        elif isinstance(item, Image | Audio):
            binary += 1
            assert len(item.data) <= limits.max_binary_item_bytes
        elif isinstance(item, EmbeddedResource):
            if item.data:
                binary += 1
            assert len(item.data) <= limits.max_binary_item_bytes
            assert len(item.text.encode()) <= limits.max_text_result_bytes
        else:
            assert not isinstance(item, ResourceContent)
    assert binary <= limits.max_binary_items
    if result.structured is not None:
        assert len(compact(result.structured)) <= limits.max_structured_bytes
    assert len(result.warnings) <= 8
    hash(result)


@PROPERTY
@given(raw=results | json_values, limits=limits)
def test_any_json_becomes_a_bounded_tool_result_or_a_conversion_error(
    raw: Any, limits: Limits
) -> None:
    before = copy.deepcopy(raw)
    try:
        result = to_tool_result(raw, limits)
    except ConversionError:
        return
    finally:
        assert raw == before, "conversion changed its input"
    assert isinstance(result, ToolResult)
    _check_bounds(result, limits)


@PROPERTY
@given(
    raw=st.fixed_dictionaries(
        {},
        optional={
            "messages": st.lists(
                st.fixed_dictionaries({}, optional={"role": json_values, "content": content_items})
                | json_values,
                max_size=4,
            )
            | json_values,
            "contents": st.lists(_resource_contents | json_values, max_size=4) | json_values,
            "description": json_values,
        },
    )
    | json_values,
    limits=limits,
)
def test_prompts_and_resources_convert_or_raise_conversion_error(raw: Any, limits: Limits) -> None:
    for convert in (to_prompt, to_resource):
        with contextlib.suppress(ConversionError):
            hash(convert(raw, limits))


def test_malformed_tool_results_are_conversion_errors() -> None:
    malformed: list[Any] = [None, [], "text", 5, {"content": "text"}, {"content": {"type": "x"}}]
    for raw in malformed:
        with pytest.raises(ConversionError):
            to_tool_result(raw, Limits())


def test_long_unknown_kinds_are_labelled_unknown() -> None:
    result = to_tool_result({"content": [{"type": "k" * 33}, {"type": 5}]}, Limits())
    first, second = result.content
    assert isinstance(first, Unsupported) and isinstance(second, Unsupported)
    assert first.kind == second.kind == "unknown"


def test_a_huge_integer_priority_is_not_an_overflow() -> None:
    raw = jsonio.decode(
        b'{"content":[{"type":"text","text":"x","annotations":{"priority":1' + b"0" * 400 + b"}}]}"
    )
    try:
        result = to_tool_result(raw, Limits())
    except ConversionError:
        return
    item = result.content[0]
    assert isinstance(item, Text) and item.text == "x"


def test_an_infinite_priority_is_dropped() -> None:
    # The frame decoder refuses 1e400 outright; a converter handed an infinite
    # float anyway (defence in depth) must not crash either.
    with pytest.raises(jsonio.FrameError):
        jsonio.decode(b'{"priority":1e400}')
    raw = {"content": [{"type": "text", "text": "x", "annotations": {"priority": math.inf}}]}
    try:
        result = to_tool_result(raw, Limits())
    except ConversionError:
        return
    item = result.content[0]
    assert isinstance(item, Text) and item.text == "x"
