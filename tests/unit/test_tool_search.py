"""Issue 31, tool search: the BM25 index over names, titles, descriptions and parameters."""

from __future__ import annotations

from typing import Any

import pytest

from mcpclient import ConfigError, ToolSpec
from mcpclient.export._search import (
    MAX_QUERY_CHARS,
    MAX_SEARCH_RESULTS,
    IndexCache,
    SearchIndex,
    terms_of,
)


def spec(
    name: str, description: str = "", params: tuple[str, ...] = (), title: str = ""
) -> ToolSpec:
    schema: dict[str, Any] = {"type": "object", "properties": {p: {} for p in params}}
    return ToolSpec(
        raw_name=name,
        model_name=f"mcp__s__{name}",
        title=title,
        description=description,
        input_schema=schema,
    )


TOOLS = [
    spec("create_issue", "Open a new issue in a repository", ("repo", "title", "body")),
    spec("listPullRequests", "List pull requests of a repository", ("repo", "state")),
    spec("send_message", "Post a message to a Slack channel", ("channel", "text")),
    spec("read_file", "Read a file from disk", ("path",)),
    spec("search_web", "Search the web", ("query",), title="Web search"),
]


def test_names_split_on_snake_kebab_and_camel_case() -> None:
    assert terms_of("listPullRequests") == ["list", "pull", "requests", "listpullrequests"]
    assert terms_of("create_issue") == ["create", "issue"]
    assert terms_of("HTTPServer-v2") == ["http", "server", "httpserver", "v", "2", "v2"]


def test_ranks_by_name_description_and_parameter() -> None:
    index = SearchIndex([("s", TOOLS)])
    assert index.search("pull requests")[0].tool.raw_name == "listPullRequests"
    assert index.search("slack")[0].tool.raw_name == "send_message"  # description
    assert index.search("channel")[0].tool.raw_name == "send_message"  # parameter name
    assert index.search("web search")[0].tool.raw_name == "search_web"  # title and name
    hit = index.search("open issue")[0]
    assert (hit.model_name, hit.binding, hit.score > 0) == ("mcp__s__create_issue", "s", True)


def test_no_match_and_no_terms_find_nothing() -> None:
    index = SearchIndex([("s", TOOLS)])
    assert index.search("zebra") == []
    assert index.search("  ,;  ") == []
    assert SearchIndex(()).search("issue") == []


def test_order_is_deterministic_ties_broken_by_model_name() -> None:
    same = [spec(n, "Fetch the weather") for n in ("zeta", "alpha", "mid")]
    index = SearchIndex([("s", same)])
    assert [m.tool.raw_name for m in index.search("weather")] == ["alpha", "mid", "zeta"]
    reordered = SearchIndex([("s", list(reversed(same)))])
    assert index.search("weather") == reordered.search("weather")


def test_limit_bounds_the_results() -> None:
    many = [spec(f"tool_{i}", "does things") for i in range(300)]
    index = SearchIndex([("s", many)])
    assert len(index.search("things", limit=3)) == 3
    assert len(index.search("things", limit=MAX_SEARCH_RESULTS)) == MAX_SEARCH_RESULTS
    for bad in (0, MAX_SEARCH_RESULTS + 1, True, 2.0):
        with pytest.raises(ConfigError):
            index.search("things", limit=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        index.search(b"things")  # type: ignore[arg-type]


def test_query_is_cut_to_its_bound() -> None:
    index = SearchIndex([("s", TOOLS)])
    long_query = "x " * MAX_QUERY_CHARS + "slack"
    assert index.search(long_query) == []  # "slack" is past the bound
    assert index.search("slack " + "x " * 10**6)[0].tool.raw_name == "send_message"


def test_tools_hidden_from_the_model_are_not_indexed() -> None:
    from mcpclient.catalog import ToolUI

    hidden = ToolSpec(
        raw_name="panel",
        model_name="mcp__s__panel",
        description="slack panel",
        input_schema={"type": "object"},
        ui=ToolUI(resource_uri="ui://p", visibility=("app",)),
    )
    index = SearchIndex([("s", [hidden, *TOOLS])])
    assert [m.tool.raw_name for m in index.search("slack panel")] == ["send_message"]


def test_a_hostile_schema_is_bounded() -> None:
    props = {f"p{i}": {} for i in range(100_000)}
    wide = ToolSpec(
        raw_name="wide",
        model_name="mcp__s__wide",
        input_schema={"type": "object", "properties": props},
    )
    index = SearchIndex([("s", [wide])])
    assert "p10" in index._frequency  # an early parameter is indexed
    assert "p99999" not in index._frequency  # one beyond the bound is not


def test_the_cache_rebuilds_only_for_a_new_source() -> None:
    cache = IndexCache()
    built: list[int] = []

    def entries(n: int) -> Any:
        def make() -> list[tuple[str, list[ToolSpec]]]:
            built.append(n)
            return [("s", TOOLS[:n])]

        return make

    first, second = object(), object()
    a = cache.index(first, entries(2))
    assert cache.index(first, entries(5)) is a and len(a) == 2
    b = cache.index(second, entries(5))
    assert b is not a and len(b) == 5
    assert built == [2, 5]
