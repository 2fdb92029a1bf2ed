"""Discovery and catalog building (origin-client.md §7.2-7.8), with a fake ``fetch``.

No I/O: ``discover`` is driven by a scripted list function, so every rule of a
generation (advertised families only, pagination bounds, per-item drops,
build-time failures, ordering, model names, tolerances, digest) is pinned
exactly, and the properties (digest independent of server order and schema key
order; model names always valid and unique) run on generated catalogs.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import (
    PROFILE_DEFAULT,
    PROFILE_STRICT,
    CatalogError,
    FailureClass,
    LimitExceededError,
    Limits,
    Profile,
    ProtocolError,
    ServerCapabilities,
    ServerIdentity,
    Tolerance,
)
from mcpclient._core.digest import name_digest
from mcpclient._internal.client.catalog.discovery import discover
from mcpclient._internal.client.lifecycle.connection import MethodNotFoundError
from mcpclient._internal.session.protocol import Protocol
from mcpclient.catalog import Catalog

MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PROPERTY = settings(max_examples=50, deadline=None, database=None)
LIST_KEYS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
ALL_CAPS = ServerCapabilities(tools=True, prompts=True, resources=True)
OBJ: dict[str, Any] = {"type": "object"}


class FakeServer:
    """Serves scripted list pages and records every list request.

    ``pages[method]`` is a list of pages (lists of raw items); page k carries
    ``nextCursor`` ``cursors[method][k]`` (default ``"c<k+1>"`` when more pages
    follow). ``results[method]`` replaces whole results verbatim.
    """

    def __init__(
        self,
        pages: dict[str, list[list[Any]]] | None = None,
        cursors: dict[str, list[str | None]] | None = None,
        results: dict[str, list[Any]] | None = None,
    ) -> None:
        self.pages = pages or {}
        self.cursors = cursors or {}
        self.results = results or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def fetch(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append((method, dict(params)))
        index = sum(1 for m, _ in self.calls if m == method) - 1
        if method in self.results:
            return self.results[method][index]
        pages = self.pages.get(method, [[]])
        result: dict[str, Any] = {LIST_KEYS[method]: pages[index]}
        scripted = self.cursors.get(method)
        if scripted is not None:
            cursor = scripted[index]
        else:
            cursor = f"c{index + 1}" if index + 1 < len(pages) else None
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]


def protocol(caps: ServerCapabilities = ALL_CAPS, **fields: Any) -> Protocol:
    values: dict[str, Any] = {
        "era": "legacy",
        "version": "2025-11-25",
        "server": ServerIdentity(name="fake", version="1.0"),
        "capabilities": caps,
        "instructions": "",
        "client_caps": {},
    }
    values.update(fields)
    return Protocol(**values)


def run(
    server: FakeServer,
    *,
    caps: ServerCapabilities = ALL_CAPS,
    limits: Limits | None = None,
    profile: Profile = PROFILE_DEFAULT,
    binding: str = "srv",
    generation: int = 1,
) -> Catalog:
    return discover(
        server.fetch,
        binding=binding,
        generation=generation,
        protocol=protocol(caps),
        limits=limits or Limits(),
        profile=profile,
    )


def tool(name: Any, schema: Any = OBJ, **extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "inputSchema": schema}
    raw.update(extra)
    return raw


def tools_server(*tools: Any, page: int = 0) -> FakeServer:
    items = list(tools)
    step = page or max(1, len(items))
    pages = [items[i : i + step] for i in range(0, len(items), step)] or [[]]
    return FakeServer({"tools/list": pages})


def nested(depth: int) -> dict[str, Any]:
    """An object schema whose JSON nesting depth is exactly ``depth`` (>= 1)."""
    schema: dict[str, Any] = {}
    for _ in range(depth - 1):
        schema = {"not": schema}
    return schema


# ------------------------------------------------------------- families


@pytest.mark.parametrize(
    ("caps", "methods"),
    [
        (ServerCapabilities(tools=True), ["tools/list"]),
        (ServerCapabilities(prompts=True), ["prompts/list"]),
        (ServerCapabilities(resources=True), ["resources/list", "resources/templates/list"]),
        (ALL_CAPS, list(LIST_KEYS)),
        (ServerCapabilities(), []),
    ],
    ids=["tools", "prompts", "resources", "all", "none"],
)
def test_only_advertised_families_are_fetched_in_fixed_order(
    caps: ServerCapabilities, methods: list[str]
) -> None:
    server = FakeServer()
    catalog = run(server, caps=caps)
    assert server.methods() == methods
    assert catalog.capabilities == caps
    assert catalog.generation == 1
    assert catalog.valid


def test_first_page_has_no_cursor_and_later_pages_send_the_served_cursor() -> None:
    server = FakeServer(
        {"tools/list": [[tool("a")], [tool("b")], [tool("c")]]},
        cursors={"tools/list": ["first", "second", None]},
    )
    catalog = run(server, caps=ServerCapabilities(tools=True))
    assert server.calls == [
        ("tools/list", {}),
        ("tools/list", {"cursor": "first"}),
        ("tools/list", {"cursor": "second"}),
    ]
    assert [t.raw_name for t in catalog.tools] == ["a", "b", "c"]


def test_empty_next_cursor_ends_the_listing() -> None:
    server = FakeServer({"tools/list": [[tool("a")]]}, cursors={"tools/list": [""]})
    assert [t.raw_name for t in run(server).tools] == ["a"]
    assert server.methods().count("tools/list") == 1


# ------------------------------------------------------------- pagination bounds


@pytest.mark.parametrize("pages", [1, 3, 5])
def test_exactly_max_catalog_pages_is_accepted(pages: int) -> None:
    server = tools_server(*(tool(f"t{i}") for i in range(pages)), page=1)
    catalog = run(server, limits=Limits(max_catalog_pages=5))
    assert len(catalog.tools) == pages


def test_one_page_past_max_catalog_pages_is_over_limit_and_not_fetched() -> None:
    server = FakeServer(
        {"tools/list": [[tool(f"t{i}")] for i in range(10)]},
        cursors={"tools/list": [f"c{i}" for i in range(1, 11)]},
    )
    with pytest.raises(LimitExceededError) as info:
        run(server, limits=Limits(max_catalog_pages=4))
    assert info.value.failure_class is FailureClass.CATALOG_OVER_LIMIT
    assert server.methods().count("tools/list") == 4
    assert "max_catalog_pages" in info.value.message


def test_repeated_cursor_is_a_defect_without_the_cursor_in_the_message() -> None:
    secret = "cursor-SECRET-abc"
    server = FakeServer(
        {"tools/list": [[tool("a")], [tool("b")], [tool("c")]]},
        cursors={"tools/list": [secret, secret, None]},
    )
    with pytest.raises(CatalogError) as info:
        run(server)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert secret not in str(info.value)
    assert server.methods().count("tools/list") == 2


def test_cursor_cycle_over_two_cursors_is_caught() -> None:
    server = FakeServer(
        {"prompts/list": [[], [], [], []]}, cursors={"prompts/list": ["x", "y", "x", None]}
    )
    with pytest.raises(CatalogError) as info:
        run(server)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID


@pytest.mark.parametrize(("size", "ok"), [(4096, True), (4097, False), (5000, False)])
def test_cursor_size_bound(size: int, ok: bool) -> None:
    cursor = "k" * size
    server = FakeServer(
        {"tools/list": [[tool("a")], [tool("b")]]}, cursors={"tools/list": [cursor, None]}
    )
    if ok:
        assert len(run(server).tools) == 2
        return
    with pytest.raises(CatalogError) as info:
        run(server)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert cursor not in str(info.value)
    assert server.methods().count("tools/list") == 1  # the huge cursor is never sent back


@pytest.mark.parametrize("bad", [7, ["a"], {"c": 1}])
def test_non_string_cursor_is_a_defect(bad: Any) -> None:
    server = FakeServer({"tools/list": [[tool("a")], []]}, cursors={"tools/list": [bad, None]})
    with pytest.raises(CatalogError):
        run(server)


@pytest.mark.parametrize(
    "result", [None, [], {"tools": None}, {"tools": {"a": 1}}, {"items": []}, "text"]
)
def test_malformed_list_result_fails_discovery(result: Any) -> None:
    server = FakeServer(results={"tools/list": [result]})
    with pytest.raises(ProtocolError):
        run(server, caps=ServerCapabilities(tools=True))


def test_list_error_fails_the_whole_discovery() -> None:
    def fetch(method: str, params: dict[str, Any]) -> Any:
        if method == "resources/list":
            raise ProtocolError("boom", binding="srv", op=method)
        return {LIST_KEYS[method]: [tool("a")] if method == "tools/list" else []}

    with pytest.raises(ProtocolError):
        discover(
            fetch,
            binding="srv",
            generation=1,
            protocol=protocol(),
            limits=Limits(),
            profile=PROFILE_DEFAULT,
        )


# ------------------------------------------------------------- item caps


def _items(method: str, count: int) -> list[Any]:
    if method == "tools/list":
        return [tool(f"t{i:04d}") for i in range(count)]
    if method == "prompts/list":
        return [{"name": f"p{i:04d}"} for i in range(count)]
    if method == "resources/list":
        return [{"uri": f"test://r/{i}", "name": f"r{i}"} for i in range(count)]
    return [{"uriTemplate": f"test://t/{i}/{{id}}", "name": f"t{i}"} for i in range(count)]


@pytest.mark.parametrize(
    ("method", "field"),
    [
        ("tools/list", "max_catalog_items"),
        ("prompts/list", "max_prompt_count"),
        ("resources/list", "max_resource_count"),
        ("resources/templates/list", "max_resource_count"),
    ],
)
@pytest.mark.parametrize(("count", "ok"), [(6, True), (7, False)])
def test_family_item_caps_over_several_pages(method: str, field: str, count: int, ok: bool) -> None:
    items = _items(method, count)
    server = FakeServer({method: [items[:3], items[3:]]})
    limits = Limits(**{field: 6})
    if ok:
        catalog = run(server, limits=limits)
        family = {
            "tools/list": catalog.tools,
            "prompts/list": catalog.prompts,
            "resources/list": catalog.resources,
            "resources/templates/list": catalog.resource_templates,
        }[method]
        assert len(family) == count
        return
    with pytest.raises(LimitExceededError) as info:
        run(server, limits=limits)
    assert info.value.failure_class is FailureClass.CATALOG_OVER_LIMIT


def test_resources_and_templates_are_capped_separately() -> None:
    server = FakeServer(
        {
            "resources/list": [_items("resources/list", 5)],
            "resources/templates/list": [_items("resources/templates/list", 5)],
        }
    )
    catalog = run(server, limits=Limits(max_resource_count=5))
    assert len(catalog.resources) == 5
    assert len(catalog.resource_templates) == 5


def test_dropped_items_do_not_count_against_the_cap() -> None:
    server = tools_server(
        *(tool(f"t{i}") for i in range(3)), *(tool(f"bad{i}", None) for i in range(5))
    )
    catalog = run(server, limits=Limits(max_catalog_items=3))
    assert [t.raw_name for t in catalog.tools] == ["t0", "t1", "t2"]


# ------------------------------------------------------------- per-item drops


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"name": "x"}, "input schema is missing"),
        (tool("x", None), "input schema is missing"),
        (tool("x", "object"), "not a JSON object"),
        (tool("x", ["type", "object"]), "not a JSON object"),
        (tool("x", True), "not a JSON object"),
        (tool("x", 3), "not a JSON object"),
        ({"inputSchema": OBJ}, "no name"),
        (tool(""), "no name"),
        (tool(7), "no name"),
        ("just a string", "not an object"),
        (None, "not an object"),
    ],
    ids=[
        "missing",
        "null",
        "string",
        "list",
        "true",
        "number",
        "no-name",
        "empty-name",
        "int-name",
        "not-object",
        "none",
    ],
)
def test_defective_tool_is_dropped_with_a_warning_never_widened(raw: Any, reason: str) -> None:
    catalog = run(tools_server(tool("keep"), raw))
    assert [t.raw_name for t in catalog.tools] == ["keep"]
    assert any(w.startswith("tool 1 dropped:") and reason in w for w in catalog.warnings), (
        catalog.warnings
    )
    assert catalog.tool_by_raw_name("x") is None
    assert catalog.applied_tolerances == ()


def test_schema_size_bound() -> None:
    limits = Limits(max_schema_bytes=200)
    fits = {"type": "object", "description": "d" * 100}
    big = {"type": "object", "description": "d" * 300}
    catalog = run(tools_server(tool("fits", fits), tool("big", big)), limits=limits)
    assert [t.raw_name for t in catalog.tools] == ["fits"]
    assert any("max_schema_bytes" in w for w in catalog.warnings)


@pytest.mark.parametrize(("depth", "kept"), [(4, True), (5, False), (40, False)])
def test_schema_depth_bound(depth: int, kept: bool) -> None:
    catalog = run(tools_server(tool("deep", nested(depth))), limits=Limits(max_schema_depth=4))
    assert bool(catalog.tools) is kept
    assert any("max_schema_depth" in w for w in catalog.warnings) is not kept


def test_page_warnings_are_capped_with_a_true_count() -> None:
    bad = [tool(f"bad{i}", None) for i in range(10)]
    catalog = run(tools_server(tool("ok"), *bad))
    dropped = [w for w in catalog.warnings if " dropped:" in w]
    assert len(dropped) == 7
    assert any("10" in w and "further" in w for w in catalog.warnings), catalog.warnings
    assert [t.raw_name for t in catalog.tools] == ["ok"]


def test_catalog_warnings_are_capped_at_64_with_a_summary() -> None:
    pages = [[tool(f"bad{p}-{i}", None) for i in range(7)] for p in range(12)]
    server = FakeServer({"tools/list": pages})
    catalog = run(server)
    assert len(catalog.warnings) == 64
    assert "84 raised in all" in catalog.warnings[-1]


@pytest.mark.parametrize(
    "raw",
    [
        {"name": "p", "arguments": [{"name": f"a{i}"} for i in range(65)]},
        {"name": "p", "arguments": [{"description": "no name"}]},
        {"name": ""},
        {"title": "no name"},
    ],
    ids=["65-args", "arg-without-name", "empty-name", "no-name"],
)
def test_defective_prompt_is_dropped(raw: dict[str, Any]) -> None:
    server = FakeServer({"prompts/list": [[{"name": "keep"}, raw]]})
    catalog = run(server)
    assert [p.name for p in catalog.prompts] == ["keep"]
    assert any(w.startswith("prompt 1 dropped") for w in catalog.warnings)


def test_prompt_arguments_keep_server_order() -> None:
    args = [{"name": n, "required": n == "b"} for n in ("z", "b", "m")]
    server = FakeServer({"prompts/list": [[{"name": "p", "arguments": args}]]})
    prompt = run(server).prompts[0]
    assert [a.name for a in prompt.arguments] == ["z", "b", "m"]
    assert [a.required for a in prompt.arguments] == [False, True, False]


def test_resource_and_template_without_identifier_are_dropped() -> None:
    server = FakeServer(
        {
            "resources/list": [[{"uri": "test://a"}, {"name": "no uri"}, {"uri": ""}]],
            "resources/templates/list": [[{"uriTemplate": "test://{x}"}, {"name": "none"}]],
        }
    )
    catalog = run(server)
    assert [r.uri for r in catalog.resources] == ["test://a"]
    assert [t.uri_template for t in catalog.resource_templates] == ["test://{x}"]
    assert sum(" dropped" in w for w in catalog.warnings) == 3


# ------------------------------------------------------------- output schema tolerance


@pytest.mark.parametrize("bad_output", ["string", ["x"], True, nested(40)], ids=str)
def test_invalid_output_schema_is_dropped_under_the_default_profile(bad_output: Any) -> None:
    catalog = run(
        tools_server(tool("t", outputSchema=bad_output), tool("u")),
        limits=Limits(max_schema_depth=8),
    )
    spec = catalog.tool_by_raw_name("t")
    assert spec is not None
    assert spec.output_schema is None
    assert spec.output_schema_digest == ""
    assert any(w.startswith("output schema dropped:") for w in spec.warnings)
    assert catalog.applied_tolerances == (Tolerance.INVALID_OUTPUT_SCHEMA,)
    assert "compatibility: applied tolerance invalid_output_schema" in catalog.warnings
    assert catalog.tool_by_raw_name("u") is not None


def test_invalid_output_schema_fails_the_generation_under_strict() -> None:
    with pytest.raises(CatalogError) as info:
        run(tools_server(tool("t", outputSchema="nope")), profile=PROFILE_STRICT)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert "invalid_output_schema" in info.value.message


def test_null_output_schema_is_normal() -> None:
    catalog = run(tools_server(tool("t", outputSchema=None)), profile=PROFILE_STRICT)
    spec = catalog.tools[0]
    assert spec.output_schema is None
    assert spec.warnings == ()
    assert catalog.applied_tolerances == ()


def test_faithful_server_needs_no_tolerance_under_any_profile() -> None:
    raws = [tool("echo"), tool("add", outputSchema={"type": "object"})]
    for profile in (PROFILE_STRICT, PROFILE_DEFAULT):
        catalog = run(tools_server(*raws), profile=profile)
        assert catalog.applied_tolerances == ()
        assert not any(w.startswith("compatibility:") for w in catalog.warnings)


def test_tolerances_listed_in_order_with_one_warning_each() -> None:
    catalog = run(tools_server(tool("a.b", outputSchema="bad"), tool("c")))
    assert catalog.applied_tolerances == (
        Tolerance.INVALID_OUTPUT_SCHEMA,
        Tolerance.DISPLAY_NAME_NORMALIZATION,
    )
    compat = [w for w in catalog.warnings if w.startswith("compatibility:")]
    assert compat == [
        "compatibility: applied tolerance invalid_output_schema",
        "compatibility: applied tolerance display_name_normalization",
    ]


# ------------------------------------------------------------- missing list method tolerance


def _not_implemented(method: str) -> MethodNotFoundError:
    """What ``Connection.request`` raises for a -32601 answer."""
    return MethodNotFoundError(
        f"the server does not implement {method}: Method not found", binding="srv", op=method
    )


class MissingMethods(FakeServer):
    """A FakeServer whose ``missing`` methods answer -32601 (from page ``from_page`` on)."""

    def __init__(self, *missing: str, from_page: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.missing = set(missing)
        self.from_page = from_page

    def fetch(self, method: str, params: dict[str, Any]) -> Any:
        page = sum(1 for m, _ in self.calls if m == method)
        if method in self.missing and page >= self.from_page:
            self.calls.append((method, dict(params)))
            raise _not_implemented(method)
        return super().fetch(method, params)


@pytest.mark.parametrize("method", list(LIST_KEYS))
def test_a_missing_list_method_is_an_empty_family_under_the_default_profile(method: str) -> None:
    server = MissingMethods(method, pages={"tools/list": [[tool("a")]]})
    catalog = run(server)
    assert server.methods() == list(LIST_KEYS)  # every other family is still fetched
    assert catalog.applied_tolerances == (Tolerance.MISSING_LIST_METHOD,)
    assert "compatibility: applied tolerance missing_list_method" in catalog.warnings
    family = method.split("/", maxsplit=1)[0]
    assert any(
        w.startswith(f"{method}: the server declares {family} but does not implement")
        for w in catalog.warnings
    )
    if method != "tools/list":
        assert [t.raw_name for t in catalog.tools] == ["a"]
    else:
        assert catalog.tools == ()


def test_every_list_method_missing_is_an_empty_catalog_with_one_tolerance() -> None:
    catalog = run(MissingMethods(*LIST_KEYS))
    assert (catalog.tools, catalog.prompts, catalog.resources, catalog.resource_templates) == (
        (),
        (),
        (),
        (),
    )
    assert catalog.applied_tolerances == (Tolerance.MISSING_LIST_METHOD,)
    assert sum(1 for w in catalog.warnings if "does not implement" in w) == 4


@pytest.mark.parametrize("method", list(LIST_KEYS))
def test_strict_profile_refuses_a_missing_list_method(method: str) -> None:
    with pytest.raises(CatalogError) as info:
        run(MissingMethods(method), profile=PROFILE_STRICT)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert method in info.value.message
    assert "missing_list_method" in info.value.message
    assert "strict/v1" in info.value.message


def test_a_missing_method_after_a_served_page_is_a_failure() -> None:
    server = MissingMethods("tools/list", from_page=1, pages={"tools/list": [[tool("a")], []]})
    with pytest.raises(MethodNotFoundError):
        run(server)


def test_other_list_errors_still_fail_the_generation() -> None:
    def fetch(method: str, params: dict[str, Any]) -> Any:
        raise ProtocolError(
            "the server answered error -32603: boom",
            failure_class=FailureClass.SERVER_PROTOCOL,
            binding="srv",
            op=method,
        )

    with pytest.raises(ProtocolError) as info:
        discover(
            fetch,
            binding="srv",
            generation=1,
            protocol=protocol(),
            limits=Limits(),
            profile=PROFILE_DEFAULT,
        )
    assert not isinstance(info.value, MethodNotFoundError)


# ------------------------------------------------------------- schemas verbatim


def test_schemas_are_kept_verbatim() -> None:
    schema = {
        "type": "object",
        "$defs": {"pos": {"$anchor": "pos", "type": "integer", "minimum": 1}},
        "properties": {"n": {"$ref": "#/$defs/pos"}, "m": {"$ref": "#pos"}},
        "if": {"properties": {"n": {"const": 1}}},
        "then": {"required": ["m"]},
        "else": {"required": []},
        "additionalProperties": False,
        "x-vendor": {"big": 12345678901234567890},
    }
    output = {"type": "object", "unevaluatedProperties": False, "prefixItems": [{}]}
    spec = run(tools_server(tool("t", schema, outputSchema=output))).tools[0]
    assert spec.input_schema == schema
    assert spec.output_schema == output
    # a fresh copy on each access
    spec.input_schema["type"] = "mutated"
    assert spec.input_schema == schema


# ------------------------------------------------------------- build-time failures


@pytest.mark.parametrize(
    "name",
    ["bad\nname", "esc\x1bname", "del\x7f", "x" * 513],
    ids=["newline", "escape", "del", "513-bytes"],
)
def test_defective_tool_identifier_fails_the_generation(name: str) -> None:
    with pytest.raises(CatalogError) as info:
        run(tools_server(tool("ok"), tool(name)))
    assert info.value.failure_class is FailureClass.CATALOG_INVALID


def test_identifier_of_512_bytes_is_accepted() -> None:
    catalog = run(tools_server(tool("é" * 256)))
    assert catalog.tools[0].raw_name == "é" * 256
    assert MODEL_NAME.match(catalog.tools[0].model_name)


@pytest.mark.parametrize(
    ("method", "items"),
    [
        ("tools/list", [tool("echo"), tool("other"), tool("echo", {"type": "object", "a": 1})]),
        ("prompts/list", [{"name": "p"}, {"name": "p"}]),
        ("resources/list", [{"uri": "test://a"}, {"uri": "test://a", "name": "again"}]),
        ("resources/templates/list", [{"uriTemplate": "t/{x}"}, {"uriTemplate": "t/{x}"}]),
    ],
)
@pytest.mark.parametrize("profile", [PROFILE_DEFAULT, PROFILE_STRICT], ids=str)
def test_duplicates_fail_the_generation(method: str, items: list[Any], profile: Profile) -> None:
    server = FakeServer({method: [items[:1], items[1:]]})
    with pytest.raises(CatalogError) as info:
        run(server, profile=profile)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID


def test_failure_in_a_later_family_publishes_nothing() -> None:
    server = FakeServer(
        {"tools/list": [[tool("a")]], "prompts/list": [[{"name": "p"}, {"name": "p"}]]}
    )
    with pytest.raises(CatalogError):
        run(server)
    assert server.methods()[0] == "tools/list"


# ------------------------------------------------------------- ordering and names


def test_tools_sorted_bytewise_by_raw_name() -> None:
    names = ["b", "B", "a", "é", "Z", "_x", "a0", "ä"]
    catalog = run(tools_server(*(tool(n) for n in names)))
    assert [t.raw_name for t in catalog.tools] == sorted(names, key=lambda n: n.encode())


def test_other_families_sorted() -> None:
    server = FakeServer(
        {
            "prompts/list": [[{"name": "b"}, {"name": "a"}]],
            "resources/list": [[{"uri": "test://z"}, {"uri": "test://a"}]],
            "resources/templates/list": [[{"uriTemplate": "y/{a}"}, {"uriTemplate": "x/{a}"}]],
        }
    )
    catalog = run(server)
    assert [p.name for p in catalog.prompts] == ["a", "b"]
    assert [r.uri for r in catalog.resources] == ["test://a", "test://z"]
    assert [t.uri_template for t in catalog.resource_templates] == ["x/{a}", "y/{a}"]


def test_colliding_names_are_all_suffixed() -> None:
    raws = ["a.b", "a/b", "a b", "a:b"]
    catalog = run(tools_server(*(tool(n) for n in raws), tool("echo")))
    for raw in raws:
        spec = catalog.tool_by_raw_name(raw)
        assert spec is not None
        assert spec.model_name == "mcp__srv__a_b_" + name_digest("srv", raw)[:4].hex()
        assert catalog.tool_by_model_name(spec.model_name) is spec
    assert catalog.tool_by_raw_name("echo").model_name == "mcp__srv__echo"  # type: ignore[union-attr]
    assert len({t.model_name for t in catalog.tools}) == 5
    assert Tolerance.DISPLAY_NAME_NORMALIZATION in catalog.applied_tolerances
    assert "compatibility: applied tolerance display_name_normalization" in catalog.warnings


def test_lone_sanitized_name_is_not_suffixed() -> None:
    catalog = run(tools_server(tool("a/b")))
    assert catalog.tools[0].model_name == "mcp__srv__a_b"
    assert catalog.applied_tolerances == (Tolerance.DISPLAY_NAME_NORMALIZATION,)


@pytest.mark.parametrize("raw", ["a/b", "a.b", "café", "x" * 60])
def test_strict_profile_refuses_name_normalization(raw: str) -> None:
    with pytest.raises(CatalogError) as info:
        run(tools_server(tool(raw)), profile=PROFILE_STRICT)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert "display_name_normalization" in info.value.message


def test_adding_a_colliding_tool_renames_the_existing_one() -> None:
    before = run(tools_server(tool("a_b")))
    after = run(tools_server(tool("a_b"), tool("a.b")))
    assert before.tools[0].model_name == "mcp__srv__a_b"
    assert after.tool_by_raw_name("a_b").model_name != "mcp__srv__a_b"  # type: ignore[union-attr]
    assert before.digest != after.digest


# ------------------------------------------------------------- digest


def test_digest_ignores_generation_and_warnings_but_not_binding() -> None:
    base = run(tools_server(tool("a")), generation=1)
    later = run(tools_server(tool("a")), generation=7)
    noisy = run(tools_server(tool("a"), tool("bad", None)), generation=2)
    other = run(tools_server(tool("a")), binding="other")
    assert base.digest == later.digest == noisy.digest
    assert noisy.warnings and not base.warnings
    assert other.digest != base.digest
    assert re.fullmatch(r"[0-9a-f]{64}", base.digest)


def test_digest_moves_with_a_schema_value() -> None:
    one = run(tools_server(tool("a", {"type": "object", "maxProperties": 1})))
    two = run(tools_server(tool("a", {"type": "object", "maxProperties": 2})))
    assert one.digest != two.digest
    assert one.tools[0].input_schema_digest != two.tools[0].input_schema_digest


# ------------------------------------------------------------- properties

_NAME_ALPHABET = "ab_-.:/ é\u00e4Z0"
names_strategy = st.one_of(
    st.text(alphabet=_NAME_ALPHABET, min_size=1, max_size=6),
    st.text(alphabet="xy._", min_size=50, max_size=70),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.text(max_size=5),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=4), inner, max_size=4),
    ),
    max_leaves=10,
)
schema_strategy = st.dictionaries(
    st.sampled_from(["type", "properties", "required", "description", "x-a", "$defs", "enum"]),
    json_values,
    max_size=5,
)


def shuffled_keys(value: Any, rng: random.Random) -> Any:
    """``value`` with every object's keys in a random insertion order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled_keys(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled_keys(v, rng) for v in value]
    return value


def split_pages(items: Sequence[Any], rng: random.Random) -> list[list[Any]]:
    pages: list[list[Any]] = []
    rest = list(items)
    while rest:
        size = rng.randint(1, max(1, len(rest)))
        pages.append(rest[:size])
        rest = rest[size:]
    return pages or [[]]


@PROPERTY
@given(
    catalog=st.dictionaries(names_strategy, schema_strategy, min_size=1, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_digest_is_independent_of_server_order_and_key_order(
    catalog: dict[str, dict[str, Any]], seed: int
) -> None:
    rng = random.Random(seed)
    raws = [
        tool(name, {"type": "object", **schema}, description=name)
        for name, schema in catalog.items()
    ]
    reordered = [shuffled_keys(raw, rng) for raw in raws]
    rng.shuffle(reordered)
    # The server's own JSON text may differ too: round-trip through a key-shuffled dump.
    reordered = json.loads(json.dumps(reordered))
    first = run(FakeServer({"tools/list": split_pages(raws, rng)}))
    second = run(FakeServer({"tools/list": split_pages(reordered, rng)}), generation=5)
    assert first.digest == second.digest
    assert [t.raw_name for t in first.tools] == [t.raw_name for t in second.tools]
    assert [t.raw_name for t in first.tools] == sorted(catalog, key=lambda n: n.encode())
    assert [t.model_name for t in first.tools] == [t.model_name for t in second.tools]
    assert [t.input_schema_digest for t in first.tools] == [
        t.input_schema_digest for t in second.tools
    ]
    assert [t.input_schema for t in first.tools] == [t.input_schema for t in second.tools]


@PROPERTY
@given(names=st.lists(names_strategy, min_size=1, max_size=12, unique=True))
def test_model_names_are_valid_and_never_collide(names: list[str]) -> None:
    catalog = run(tools_server(*(tool(n) for n in names)))
    models = [t.model_name for t in catalog.tools]
    assert len(set(models)) == len(names)
    for spec in catalog.tools:
        assert MODEL_NAME.match(spec.model_name), spec.model_name
        assert spec.model_name.startswith("mcp__srv__")
        assert catalog.tool_by_model_name(spec.model_name) is spec
    lossy = any(not re.fullmatch(r"[A-Za-z0-9_-]+", n) or len("mcp__srv__" + n) > 64 for n in names)
    # A shared candidate needs a sanitized member, so "changed or too long" covers it.
    assert (Tolerance.DISPLAY_NAME_NORMALIZATION in catalog.applied_tolerances) is lossy


@PROPERTY
@given(names=st.lists(names_strategy, min_size=1, max_size=8, unique=True))
def test_strict_profile_fails_exactly_when_a_name_needs_normalization(names: list[str]) -> None:
    default = run(tools_server(*(tool(n) for n in names)))
    needed = Tolerance.DISPLAY_NAME_NORMALIZATION in default.applied_tolerances
    if needed:
        with pytest.raises(CatalogError):
            run(tools_server(*(tool(n) for n in names)), profile=PROFILE_STRICT)
    else:
        strict = run(tools_server(*(tool(n) for n in names)), profile=PROFILE_STRICT)
        assert strict.digest == default.digest
        assert all(t.model_name == "mcp__srv__" + t.raw_name for t in strict.tools)


def test_one_schema_in_two_key_orders_is_stored_once_in_canonical_form() -> None:
    # The memo finds a schema by its text as read, then by its canonical text:
    # the second order must land on the first one's value, sorted.
    first = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}
    second = {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "type": "object"}
    catalog = run(tools_server(tool("one", first), tool("two", second), tool("three", first)))
    one, three, two = catalog.tools
    assert one.input_schema == two.input_schema == three.input_schema
    assert one.input_schema_digest == two.input_schema_digest == three.input_schema_digest
    # Stored in canonical (sorted) form, whichever order was read first.
    assert list(one.input_schema) == ["properties", "type"]
    assert list(one.input_schema["properties"]) == ["a", "b"]


def test_with_start_every_first_page_is_asked_for_before_any_is_read() -> None:
    """Pipelined discovery (issue 30): one round trip for the first pages of all families."""
    server = FakeServer(
        {"tools/list": [[tool("a")], [tool("b")]], "prompts/list": [[{"name": "p"}]]}
    )
    events: list[str] = []

    def start(method: str, params: dict[str, Any]) -> Any:
        events.append(f"send {method}")
        result = server.fetch(method, params)

        def page() -> Any:
            events.append(f"read {method}")
            return result

        return page

    def fetch(method: str, params: dict[str, Any]) -> Any:
        events.append(f"fetch {method} {params}")
        return server.fetch(method, params)

    catalog = discover(
        fetch,
        binding="srv",
        generation=1,
        protocol=protocol(ALL_CAPS),
        limits=Limits(),
        profile=PROFILE_DEFAULT,
        start=start,
    )
    families = ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]
    assert events[:4] == [f"send {m}" for m in families]
    assert events[4:] == [
        "read tools/list",
        "fetch tools/list {'cursor': 'c1'}",  # later pages follow the cursor
        "read prompts/list",
        "read resources/list",
        "read resources/templates/list",
    ]
    assert [t.raw_name for t in catalog.tools] == ["a", "b"]
    assert [p.name for p in catalog.prompts] == ["p"]


def test_with_start_only_advertised_families_are_asked_for() -> None:
    sent: list[str] = []

    def start(method: str, params: dict[str, Any]) -> Any:
        sent.append(method)
        return lambda: {LIST_KEYS[method]: []}

    discover(
        FakeServer().fetch,
        binding="srv",
        generation=1,
        protocol=protocol(ServerCapabilities(tools=True)),
        limits=Limits(),
        profile=PROFILE_DEFAULT,
        start=start,
    )
    assert sent == ["tools/list"]
