"""The host's aggregate model names and views (issue 17: unique across bindings)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import Catalog, ToolSpec
from mcpclient._core.digest import name_digest
from mcpclient._core.naming import assign_model_names
from mcpclient._internal.host import names as names_module
from mcpclient._internal.host.aggregate import build_view
from mcpclient._internal.host.names import aggregate_names

MODEL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tools_of(server: str, binding: str, raw_names: list[str]) -> list[tuple[str, str, str]]:
    """The (server, raw, model) triples a binding named ``binding`` would give."""
    by_raw = assign_model_names(binding, raw_names).by_raw
    return [(server, raw, by_raw[raw]) for raw in raw_names]


def check_unique_and_valid(names: dict[tuple[str, str], str]) -> None:
    assert len(set(names.values())) == len(names)
    for name in names.values():
        assert MODEL_NAME.fullmatch(name), name


def test_names_unique_across_the_host_are_kept() -> None:
    tools = tools_of("files", "files", ["read", "write"]) + tools_of("web", "web", ["read"])
    names = aggregate_names(tools)
    assert names == {
        ("files", "read"): "mcp__files__read",
        ("files", "write"): "mcp__files__write",
        ("web", "read"): "mcp__web__read",
    }


def test_two_servers_with_one_binding_name_are_both_renamed() -> None:
    tools = tools_of("a", "dup", ["echo", "only_a"]) + tools_of("b", "dup", ["echo"])
    names = aggregate_names(tools)
    check_unique_and_valid(names)
    # No arbitrary winner: every member of the colliding group is renamed ...
    assert names[("a", "echo")] == "mcp__dup__echo_" + name_digest("a", "echo")[:4].hex()
    assert names[("b", "echo")] == "mcp__dup__echo_" + name_digest("b", "echo")[:4].hex()
    # ... and a tool that collides with nothing keeps its binding's name.
    assert names[("a", "only_a")] == "mcp__dup__only_a"


def test_names_meeting_across_the_separator_are_disambiguated() -> None:
    # binding "a" tool "b__c" and binding "a__b" tool "c" are both mcp__a__b__c
    tools = tools_of("a", "a", ["b__c"]) + tools_of("a__b", "a__b", ["c"])
    assert tools[0][2] == tools[1][2] == "mcp__a__b__c"
    names = aggregate_names(tools)
    check_unique_and_valid(names)
    assert all(name.startswith("mcp__a__b__c_") for name in names.values())


def test_long_colliding_names_stay_within_64_bytes() -> None:
    raw = "x" * 80  # already cut and suffixed by the binding's own naming
    tools = tools_of("one", "same", [raw]) + tools_of("two", "same", [raw])
    assert tools[0][2] == tools[1][2] and len(tools[0][2]) == 64
    names = aggregate_names(tools)
    check_unique_and_valid(names)
    assert all(len(name) == 64 for name in names.values())


def test_the_result_does_not_depend_on_order() -> None:
    tools = (
        tools_of("a", "dup", ["echo", "add", "x.y"])
        + tools_of("b", "dup", ["echo", "x_y"])
        + tools_of("c", "c", ["echo"])
    )
    expected = aggregate_names(tools)
    shuffled = list(tools)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert aggregate_names(shuffled) == expected


def test_a_rename_never_takes_a_kept_name() -> None:
    colliding = tools_of("a", "dup", ["echo"]) + tools_of("b", "dup", ["echo"])
    first_choice = "mcp__dup__echo_" + name_digest("a", "echo")[:4].hex()
    squatter = ("c", "raw", first_choice)  # some tool already named what "a" would get
    names = aggregate_names([*colliding, squatter])
    check_unique_and_valid(names)
    assert names[("c", "raw")] == first_choice
    assert names[("a", "echo")] != first_choice
    assert names[("a", "echo")].startswith("mcp__dup__echo_")


def test_a_digest_clash_is_resolved_deterministically(monkeypatch: pytest.MonkeyPatch) -> None:
    def clashing(salt: str, raw: str) -> bytes:
        # Every first attempt clashes; salted attempts differ.
        return name_digest("x", raw) if "\x00" not in salt else name_digest(salt, raw)

    monkeypatch.setattr(names_module, "name_digest", clashing)
    tools = [("a", "echo", "mcp__d__echo"), ("b", "echo", "mcp__d__echo")]
    names = aggregate_names(tools)
    check_unique_and_valid(names)
    assert aggregate_names(list(reversed(tools))) == names
    # The first in sorted order got the first attempt; the other one was salted.
    assert names[("a", "echo")] == "mcp__d__echo_" + name_digest("x", "echo")[:4].hex()


def test_a_repeated_tool_is_refused() -> None:
    with pytest.raises(ValueError, match="appears twice"):
        aggregate_names([("a", "echo", "mcp__a__echo"), ("a", "echo", "mcp__a__other")])


servers = st.sampled_from(["a", "b", "a__b", "dup"])
raws = st.text(alphabet="abc_.-", min_size=1, max_size=70)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(servers, st.sampled_from(["a", "a__b", "dup"]), raws), max_size=30))
def test_names_are_always_unique_and_valid(
    picks: list[tuple[str, str, str]],
) -> None:
    binding_of: dict[str, str] = {}
    raws_of: dict[str, set[str]] = {}
    for server, binding, raw in picks:
        binding_of.setdefault(server, binding)
        raws_of.setdefault(server, set()).add(raw)
    tools = [
        triple
        for server, raw_names in raws_of.items()
        for triple in tools_of(server, binding_of[server], sorted(raw_names))
    ]
    names = aggregate_names(tools)
    assert set(names) == {(s, r) for s, r, _ in tools}
    check_unique_and_valid(names)


# -- views ---------------------------------------------------------------------


def catalog(binding: str, raw_names: list[str], generation: int = 1) -> Catalog:
    by_raw = assign_model_names(binding, raw_names).by_raw
    tools = [ToolSpec(raw_name=r, model_name=by_raw[r], input_schema={}) for r in raw_names]
    return Catalog(binding=binding, generation=generation, digest=f"d-{binding}", tools=tools)


def test_a_view_routes_every_model_name_back() -> None:
    pairs = [("a", catalog("dup", ["echo", "add"])), ("b", catalog("dup", ["echo"]))]
    view = build_view((1, 1), pairs, 7)
    assert view.key == (1, 1)
    assert view.catalog.generation == 7
    assert len(view.catalog.tools) == 3
    for tool in view.catalog.tools:
        assert view.catalog.tool_by_model_name(tool.model_name) is tool
    assert sorted(view.routes.values()) == [("a", "add"), ("a", "echo"), ("b", "echo")]
    kept = view.catalog.tool_by_model_name("mcp__dup__add")
    assert kept is pairs[0][1].tool_by_raw_name("add")
    with pytest.raises(TypeError):
        view.routes["x"] = ("a", "x")  # type: ignore[index]


def test_a_view_keeps_tools_whose_names_did_not_change() -> None:
    original = catalog("a", ["echo"])
    view = build_view((1,), [("a", original)], 1)
    assert view.catalog.tools[0] is original.tools[0]
    assert view.catalog.digest


def test_the_empty_view() -> None:
    view = build_view((), [], 0)
    assert view.catalog.tools == ()
    assert dict(view.routes) == {}
    assert view.catalog.digest == ""
