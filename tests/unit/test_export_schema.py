"""``mcpclient.export``'s tool lists: each provider's documented format and restrictions.

The formats are the JSON Schemas of ``tests/fixtures/export`` (written from
the vendors' documentation); the restrictions checked here are the ones each
provider states: Gemini's schema subset, OpenAI strict mode's rules, the
object root Anthropic and OpenAI need, and each provider's tool names.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpclient
from mcpclient import ToolSpec, export
from mcpclient.export._gemini import GEMINI_KEYWORDS, to_gemini_schema
from mcpclient.export._openai import NotStrict, to_loose_schema, to_strict_schema
from mcpclient.export._schema import MAX_DEPTH, MAX_NODES, MAX_REPORT, Walk
from tests.support.export_formats import conforms, schemas_in, strict_problems

EXPORTERS = {
    "openai_chat": export.to_openai_chat,
    "openai_responses": export.to_openai_responses,
    "anthropic": export.to_anthropic,
    "gemini": export.to_gemini,
}


def spec(schema: Any, name: str = "mcp__t__tool", **fields: Any) -> ToolSpec:
    return ToolSpec(
        raw_name=fields.pop("raw", name), model_name=name, input_schema=schema, **fields
    )


def gemini_parameters(schema: Any) -> dict[str, Any]:
    exported = export.to_gemini([spec(schema)])
    assert conforms("gemini", "tool_list", exported.tools) == ""
    declaration = exported.tools[0]["functionDeclarations"][0]
    parameters: dict[str, Any] = declaration.get("parameters", {})
    return parameters


def actions(exported: export.Export) -> set[tuple[str, str]]:
    return {(c.path, c.action) for c in exported.report}


# --- every exporter, the testing server's kind of schemas ---

SAMPLES = [
    {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    {"type": "object", "properties": {"data": {}, "n": {"type": "integer", "minimum": 0}}},
    {"type": "object", "additionalProperties": True, "properties": {"a": {"enum": ["x", "y"]}}},
    {"type": "object"},
    {},
    {
        "type": "object",
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {"p": {"$ref": "#/$defs/P"}, "l": {"type": "array"}},
    },
]


@pytest.mark.parametrize("provider", sorted(EXPORTERS))
@pytest.mark.parametrize("index", range(len(SAMPLES)))
def test_exports_fit_the_documented_tool_format(provider: str, index: int) -> None:
    exported = EXPORTERS[provider]([spec(SAMPLES[index], description="Does a thing.")])
    assert exported.provider == provider
    assert conforms(provider, "tool_list", exported.tools) == ""
    assert set(exported.names) == {"mcp__t__tool"}


def test_export_accepts_a_catalog_a_client_like_object_and_a_list() -> None:
    tools = (spec(SAMPLES[0], "mcp__a__x"), spec(SAMPLES[1], "mcp__a__y"))
    catalog = mcpclient.Catalog(binding="a", generation=1, tools=tools)

    class HostLike:
        def catalog(self) -> Any:
            return type("Aggregate", (), {"tools": tools})()

    for source in (catalog, HostLike(), list(tools)):
        assert [t["name"] for t in export.to_anthropic(source).tools] == ["mcp__a__x", "mcp__a__y"]
    with pytest.raises(mcpclient.ConfigError, match="list of ToolSpec"):
        export.to_anthropic([{"name": "x"}])


def test_tools_are_fresh_copies() -> None:
    exported = export.to_anthropic([spec(SAMPLES[0])])
    with pytest.raises(TypeError):
        exported.names["other"] = spec({})  # type: ignore[index]
    exported.tools[0]["input_schema"]["properties"].clear()
    assert exported.tools[0]["input_schema"]["properties"] == {"message": {"type": "string"}}


# --- Gemini ---


def test_gemini_drops_additional_properties_and_reports_it() -> None:
    schema = {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {}, "additionalProperties": False}},
        "additionalProperties": {"type": "string"},
    }
    exported = export.to_gemini([spec(schema)])
    parameters = exported.tools[0]["functionDeclarations"][0]["parameters"]
    assert all("additionalProperties" not in node for _, node in schemas_in(parameters))
    # The model still reads the constraint.
    assert parameters["description"] == '(additionalProperties: {"type": "string"})'
    assert ("/additionalProperties", "dropped") in actions(exported)
    assert ("/properties/o/additionalProperties", "dropped") in actions(exported)


def test_gemini_inlines_references_and_cuts_recursion() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "string"}, "next": {"$ref": "#/$defs/Node"}},
            }
        },
        "properties": {"head": {"$ref": "#/$defs/Node"}},
    }
    exported = export.to_gemini([spec(schema)])
    parameters = exported.tools[0]["functionDeclarations"][0]["parameters"]
    head = parameters["properties"]["head"]
    assert head["properties"]["value"] == {"type": "string"}
    assert "$ref" not in json.dumps(parameters) and "$defs" not in json.dumps(parameters)
    assert ("/properties/head", "inlined") in actions(exported)
    cut = [c for c in exported.report if c.action == "cut"]
    assert [c.path for c in cut] == ["/properties/head/properties/next"]
    assert "recursive" in cut[0].detail


def test_gemini_type_lists_become_nullable_or_any_of() -> None:
    parameters = gemini_parameters(
        {
            "type": "object",
            "properties": {
                "maybe": {"type": ["string", "null"], "description": "d"},
                "either": {"type": ["string", "integer"], "minLength": 2, "minimum": 1},
                "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            },
        }
    )
    props = parameters["properties"]
    assert props["maybe"] == {"type": "string", "description": "d", "nullable": True}
    assert props["either"] == {
        "anyOf": [{"type": "string", "minLength": 2}, {"type": "integer", "minimum": 1}]
    }
    assert props["opt"] == {"type": "integer", "nullable": True}


def test_gemini_const_becomes_a_one_value_enum_and_number_enums_are_noted() -> None:
    parameters = gemini_parameters(
        {
            "type": "object",
            "properties": {
                "kind": {"const": "fixed"},
                "level": {"type": "integer", "enum": [1, 2, 3]},
            },
        }
    )
    assert parameters["properties"]["kind"] == {"type": "string", "enum": ["fixed"]}
    level = parameters["properties"]["level"]
    assert level["type"] == "integer" and "enum" not in level
    assert "enum: [1, 2, 3]" in level["description"]


def test_gemini_drops_every_unsupported_keyword() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 5},
            "s": {"type": "string", "not": {"const": "x"}, "$comment": "c"},
            "o": {"type": "object", "patternProperties": {"^x": {}}, "properties": {"a": {}}},
        },
        "required": ["n", "missing"],
    }
    exported = export.to_gemini([spec(schema)])
    assert conforms("gemini", "tool_list", exported.tools) == ""
    parameters = exported.tools[0]["functionDeclarations"][0]["parameters"]
    for _, node in schemas_in(parameters):
        assert set(node) <= GEMINI_KEYWORDS
    assert parameters["required"] == ["n"]
    assert "exclusiveMinimum: 0" in parameters["properties"]["n"]["description"]
    dropped = {c.path for c in exported.report if c.action == "dropped"}
    assert {
        "/$schema",
        "/properties/n/exclusiveMinimum",
        "/properties/n/multipleOf",
        "/properties/s/not",
        "/properties/s/$comment",
        "/properties/o/patternProperties",
        "/required",
    } <= dropped


def test_gemini_reports_what_it_keeps_but_may_be_refused() -> None:
    schema = {"type": "object", "properties": {"my-arg": {"type": "array"}}}
    exported = export.to_gemini([spec(schema)])
    assert {("/properties/my-arg", "kept"), ("/properties/my-arg/items", "kept")} <= actions(
        exported
    )
    parameters = exported.tools[0]["functionDeclarations"][0]["parameters"]
    assert parameters["properties"] == {"my-arg": {"type": "array"}}


def test_all_of_is_merged_nested_and_through_references() -> None:
    schema = {
        "$defs": {
            "Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
        },
        "allOf": [
            {"$ref": "#/$defs/Base"},
            {"allOf": [{"properties": {"n": {"type": "integer"}}, "required": ["n"]}]},
        ],
    }
    parameters = gemini_parameters(schema)
    assert parameters == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["id", "n"],
    }
    exported = export.to_openai_chat([spec(schema)], strict=True)
    function = exported.tools[0]["function"]
    assert function["strict"] is True and strict_problems(function["parameters"]) == []
    assert function["parameters"]["required"] == ["id", "n"]


def test_gemini_tool_without_parameters_has_no_parameters_key() -> None:
    exported = export.to_gemini([spec({"type": "object"})])
    assert exported.tools == [{"functionDeclarations": [{"name": "mcp__t__tool"}]}]
    assert export.to_gemini([]).tools == []


# --- OpenAI ---


def test_openai_strict_makes_every_property_required_and_objects_closed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1},
            "limit": {"type": "integer"},
            "mode": {"enum": ["a", "b"]},
            "filter": {
                "type": "object",
                "properties": {"tag": {"type": "string", "format": "uri"}},
                "required": ["tag"],
            },
        },
        "required": ["q"],
    }
    exported = export.to_openai_chat([spec(schema)], strict=True)
    assert conforms("openai_chat", "tool_list", exported.tools) == ""
    function = exported.tools[0]["function"]
    assert function["strict"] is True
    parameters = function["parameters"]
    assert strict_problems(parameters) == []
    props = parameters["properties"]
    assert props["q"] == {"type": "string", "description": "(minLength: 1)"}
    assert props["limit"] == {"type": ["integer", "null"]}
    assert props["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert props["filter"]["type"] == ["object", "null"]
    assert props["filter"]["properties"]["tag"] == {
        "type": "string",
        "description": '(format: "uri")',
    }
    assert ("/properties/limit", "converted") in actions(exported)
    assert ("/properties/q/minLength", "dropped") in actions(exported)


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"d": {"type": "object"}}}, "free-form object"),
        ({"type": "object", "properties": {"x": {}}}, "accepts any value"),
        (
            {
                "type": "object",
                "additionalProperties": True,
                "properties": {"a": {"type": "string"}},
            },
            "open",
        ),
        (
            {
                "type": "object",
                "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}},
                "properties": {"n": {"$ref": "#/$defs/N"}},
            },
            "recursive",
        ),
    ],
)
def test_openai_strict_falls_back_per_tool_and_says_why(
    schema: dict[str, Any], reason: str
) -> None:
    good = spec({"type": "object", "properties": {"a": {"type": "string"}}}, "mcp__t__good")
    exported = export.to_openai_responses([good, spec(schema, "mcp__t__bad")], strict=True)
    assert conforms("openai_responses", "tool_list", exported.tools) == ""
    strict = {tool["name"]: tool["strict"] for tool in exported.tools}
    assert strict == {"mcp__t__good": True, "mcp__t__bad": False}
    (refusal,) = [c for c in exported.report if c.action == "not_strict"]
    assert refusal.tool == "mcp__t__bad" and reason in refusal.detail
    # Nothing the strict attempt did is reported for the tool sent non-strict.
    assert all(c.action != "converted" for c in exported.report if c.tool == "mcp__t__bad")
    assert exported.tools[1]["parameters"] == schema


def test_openai_non_strict_keeps_the_schema_and_adds_missing_items() -> None:
    schema = {"type": "object", "properties": {"l": {"type": "array"}, "x": {"minLength": 2}}}
    exported = export.to_openai_chat([spec(schema)])
    function = exported.tools[0]["function"]
    assert "strict" not in function
    assert function["parameters"]["properties"] == {
        "l": {"type": "array", "items": {}},
        "x": {"minLength": 2},
    }
    assert actions(exported) == {("/properties/l/items", "added")}
    responses = export.to_openai_responses([spec(schema)])
    assert responses.tools[0]["strict"] is False


# --- Anthropic ---


def test_anthropic_input_schema_is_always_an_object_schema() -> None:
    exported = export.to_anthropic(
        [
            spec({"properties": {"a": {"type": "string"}}}, "mcp__t__a"),
            spec({"type": "string"}, "mcp__t__b"),
            spec({"type": ["object", "null"], "properties": {}}, "mcp__t__c"),
        ]
    )
    assert conforms("anthropic", "tool_list", exported.tools) == ""
    schemas = [tool["input_schema"] for tool in exported.tools]
    assert schemas == [
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object"},
        {"type": "object", "properties": {}},
    ]
    assert {(c.tool, c.action) for c in exported.report} == {
        ("mcp__t__a", "added"),
        ("mcp__t__b", "converted"),
        ("mcp__t__c", "converted"),
    }


# --- names ---


@pytest.mark.parametrize("provider", sorted(EXPORTERS))
def test_names_are_valid_unique_deterministic_and_map_back(provider: str) -> None:
    names = ["files.read", "files_read", "9lives", "x" * 80, "x" * 81, "ok-name", "caf\u00e9", ""]
    specs = [spec({"type": "object"}, name, raw=f"raw{i}") for i, name in enumerate(names)]
    exported = EXPORTERS[provider](specs)
    assert conforms(provider, "tool_list", exported.tools) == ""
    mapped = exported.names
    assert len(mapped) == len(specs)
    assert {s.raw_name for s in mapped.values()} == {s.raw_name for s in specs}
    # Valid names that no other tool has are kept as they are.
    assert mapped["files_read"].raw_name == "raw1" and mapped["ok-name"].raw_name == "raw5"
    if provider == "gemini":
        assert mapped["_9lives"].raw_name == "raw2"
    assert exported.tool_for("files_read") is mapped["files_read"]
    # The same set in another order gets the same names.
    again = EXPORTERS[provider](list(reversed(specs)))
    assert {n: s.raw_name for n, s in again.names.items()} == {
        n: s.raw_name for n, s in mapped.items()
    }
    renamed = {c.detail.split("'")[1] for c in exported.report if c.action == "renamed"}
    assert "files.read" in renamed and "files_read" not in renamed


def test_two_tools_sharing_a_valid_name_both_get_distinct_names() -> None:
    first = spec({"type": "object"}, "mcp__a__x", raw="one")
    second = spec({"type": "object"}, "mcp__a__x", raw="two")
    exported = export.to_openai_chat([first, second])
    names = [tool["function"]["name"] for tool in exported.tools]
    assert len(set(names)) == 2 and all(n.startswith("mcp__a__x_") for n in names)
    assert {exported.names[n].raw_name for n in names} == {"one", "two"}


def test_the_same_tool_twice_is_exported_once() -> None:
    tool = spec({"type": "object"})
    exported = export.to_anthropic([tool, tool])
    assert len(exported.tools) == 1
    assert [c.action for c in exported.report] == ["dropped"]


# --- bounds and hostile schemas ---


def test_a_deep_schema_is_cut_at_the_depth_bound() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "object", "properties": {"a": schema}}
    for provider, exporter in EXPORTERS.items():
        exported = exporter([spec(schema)])
        assert conforms(provider, "tool_list", exported.tools) == ""
        depth = max(path.count("/properties/") for path, _ in schemas_in(exported.tools[0]))
        assert depth <= MAX_DEPTH + 2
        assert any(c.action == "cut" for c in exported.report), provider


def test_a_reference_bomb_is_bounded() -> None:
    # Each level refers to the one below twice: 2**40 nodes if fully inlined.
    defs = {"L0": {"type": "string"}}
    for level in range(1, 41):
        below = f"#/$defs/L{level - 1}"
        defs[f"L{level}"] = {
            "type": "object",
            "properties": {"a": {"$ref": below}, "b": {"$ref": below}},
        }
    schema = {"type": "object", "$defs": defs, "properties": {"top": {"$ref": "#/$defs/L40"}}}
    started = time.monotonic()
    for exporter in (export.to_gemini, lambda t: export.to_openai_chat(t, strict=True)):
        exported = exporter([spec(schema)])
        assert len(json.dumps(exported.tools)) < 50 * MAX_NODES * 10
        assert any(c.action == "cut" for c in exported.report) or any(
            c.action == "not_strict" for c in exported.report
        )
        assert len(exported.report) <= MAX_REPORT + 2
    assert time.monotonic() - started < 30  # bounded work, not 2**40


# --- property tests ---

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))
_KEYWORDS = [
    "description", "title", "format", "pattern", "minLength", "maximum", "default", "examples",
    "uniqueItems", "$comment", "nullable", "exclusiveMinimum", "multipleOf", "readOnly",
]  # fmt: skip
_TYPE_NAMES = ["string", "number", "integer", "boolean", "array", "object", "null", "weird"]


def _schemas() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.builds(dict),
        st.booleans(),
        st.fixed_dictionaries({"type": st.sampled_from(_TYPE_NAMES)}),
        st.fixed_dictionaries({"const": _SCALARS}),
        st.fixed_dictionaries({"enum": st.lists(_SCALARS, max_size=4)}),
        st.fixed_dictionaries(
            {"$ref": st.sampled_from(["#", "#/$defs/a", "#/nowhere", "http://x/y"])}
        ),
        st.dictionaries(st.sampled_from(_KEYWORDS), _SCALARS, max_size=3),
    )

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        names = st.text(max_size=5)
        return st.one_of(
            st.fixed_dictionaries(
                {
                    "type": st.just("object"),
                    "properties": st.dictionaries(names, children, max_size=4),
                },
                optional={
                    "required": st.lists(names, max_size=3),
                    "additionalProperties": st.one_of(st.booleans(), children),
                },
            ),
            st.fixed_dictionaries(
                {"type": st.sampled_from(["array", ["array", "null"]])},
                optional={"items": children},
            ),
            st.sampled_from(["anyOf", "oneOf", "allOf"]).flatmap(
                lambda key: st.fixed_dictionaries({key: st.lists(children, max_size=3)})
            ),
            st.fixed_dictionaries(
                {"type": st.lists(st.sampled_from(_TYPE_NAMES), max_size=3)},
                optional={"properties": st.dictionaries(names, children, max_size=2)},
            ),
            st.fixed_dictionaries({"$defs": st.fixed_dictionaries({"a": children})}),
        )

    return st.recursive(leaf, extend, max_leaves=25)


_ROOT = st.one_of(
    _schemas(),
    st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(st.text(max_size=5), _schemas(), max_size=5),
        },
        optional={"$defs": st.fixed_dictionaries({"a": _schemas()})},
    ),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_ROOT)
def test_any_schema_exports_within_the_rules(schema: Any) -> None:
    tool = spec(schema)
    for provider, exporter in EXPORTERS.items():
        exported = exporter([tool])
        assert conforms(provider, "tool_list", exported.tools) == "", (provider, exported.tools)
        assert all(isinstance(c, export.Change) and c.tool for c in exported.report)
        assert len(exported.report) <= MAX_REPORT + 2
    for exporter in (export.to_openai_chat, export.to_openai_responses):
        exported = exporter([tool], strict=True)
        tool_dict = exported.tools[0]
        function = tool_dict.get("function", tool_dict)
        if function["strict"]:
            assert strict_problems(function["parameters"]) == [], function["parameters"]
        else:
            assert any(c.action == "not_strict" for c in exported.report)
    gemini = export.to_gemini([tool]).tools[0]["functionDeclarations"][0]
    for _, node in schemas_in(gemini.get("parameters", {})):
        assert set(node) <= GEMINI_KEYWORDS


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_ROOT)
def test_conversion_never_mutates_its_input(schema: Any) -> None:
    before = copy.deepcopy(schema)
    to_gemini_schema(Walk("t", schema, []), schema)
    to_loose_schema(Walk("t", schema, []), schema, array_items=True)
    with contextlib.suppress(NotStrict):
        to_strict_schema(Walk("t", schema, []), schema)
    assert schema == before
