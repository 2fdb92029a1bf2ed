"""Issue 31, progressive discovery in ``mcpclient.export``: search mode and native deferral.

* ``mode="search"`` exports the two meta-tools and the loaded tools' full
  definitions, in each provider's shape;
* ``run_tool_calls`` answers the meta-calls locally (the target is never
  called for them) in each provider's response shape, and runs the rest;
* ``LoadedTools.after`` reads the same ``load_tools`` calls into the next
  value, which the next export honours;
* bounds, unknown names and malformed meta-calls are error results;
* ``mode="native"`` uses the provider's own tool search where it has one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpclient import ConfigError, ToolSpec, export
from mcpclient.catalog import ToolUI
from mcpclient.content import Text, ToolResult
from mcpclient.export import _meta, _runner
from mcpclient.export._meta import MAX_LOAD_NAMES, MAX_LOADED, MAX_META_RESULTS, LoadedTools
from mcpclient.export._search import MAX_QUERY_CHARS, SearchIndex, ToolMatch
from tests.support.export_formats import conforms

PROVIDERS = list(export.PROVIDERS)
EXPORTERS = {
    "openai_chat": export.to_openai_chat,
    "openai_responses": export.to_openai_responses,
    "anthropic": export.to_anthropic,
    "gemini": export.to_gemini,
}


def spec(name: str, description: str, *params: str, **extra: Any) -> ToolSpec:
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in params}}
    return ToolSpec(
        raw_name=name,
        model_name=f"mcp__s__{name}",
        description=description,
        input_schema=schema,
        **extra,
    )


TOOLS = [
    spec("send_message", "Post a message to a Slack channel", "channel", "text"),
    spec("read_file", "Read a file from disk", "path"),
    spec("create_issue", "Open a new issue in a repository", "repo", "title"),
    spec("get_weather", "The weather forecast for a city", "city"),
    *(spec(f"filler_{i}", f"Filler tool number {i}") for i in range(20)),
]


class Target:
    """A ToolTarget without ``search_tools``: the runner builds its own index."""

    def __init__(self, tools: list[ToolSpec] | None = None) -> None:
        self.tools = TOOLS if tools is None else tools
        self.called: list[tuple[str, dict[str, Any]]] = []

    def catalog(self) -> list[ToolSpec]:
        return self.tools

    def call_tool(
        self, name: str, arguments: Any = None, /, *, timeout: float | None = None
    ) -> ToolResult:
        self.called.append((name, dict(arguments or {})))
        return ToolResult(content=(Text(f"ran {name}"),))


def reply(provider: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A response of ``provider`` whose tool calls are ``calls`` (name, arguments)."""
    ids = [f"call_{i}" for i in range(len(calls))]
    if provider == "openai_chat":
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in zip(ids, calls, strict=True)
        ]
        return {"choices": [{"message": {"role": "assistant", "tool_calls": tool_calls}}]}
    if provider == "openai_responses":
        output = [
            {"type": "function_call", "call_id": i, "name": n, "arguments": json.dumps(a)}
            for i, (n, a) in zip(ids, calls, strict=True)
        ]
        return {"output": output}
    if provider == "anthropic":
        blocks = [
            {"type": "tool_use", "id": i, "name": n, "input": a}
            for i, (n, a) in zip(ids, calls, strict=True)
        ]
        return {"type": "message", "content": blocks, "stop_reason": "tool_use"}
    parts = [
        {"functionCall": {"id": i, "name": n, "args": a}}
        for i, (n, a) in zip(ids, calls, strict=True)
    ]
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def answers(provider: str, messages: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    """(is_error, text) of each result, in call order, from the provider's result messages."""
    if provider == "openai_chat":
        return [(m["content"].startswith("Error:"), m["content"]) for m in messages]
    if provider == "openai_responses":
        return [(m["output"].startswith("Error:"), m["output"]) for m in messages]
    if provider == "anthropic":
        blocks = messages[0]["content"]
        return [(b["is_error"], "\n".join(c["text"] for c in b["content"])) for b in blocks]
    out = []
    for part in messages[0]["parts"]:
        response = part["functionResponse"]["response"]
        value = response.get("error", response.get("output"))
        out.append(("error" in response, value if isinstance(value, str) else json.dumps(value)))
    return out


def exported_names(provider: str, tools: list[dict[str, Any]]) -> list[str]:
    if provider == "gemini":
        return [d["name"] for d in tools[0]["functionDeclarations"]] if tools else []
    if provider == "openai_chat":
        return [t["function"]["name"] for t in tools]
    return [t["name"] for t in tools]


# -- the export ---------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_search_mode_exports_the_meta_tools_and_the_loaded_tools(provider: str) -> None:
    to = EXPORTERS[provider]
    assert exported_names(provider, to(TOOLS, mode="search").tools) == [
        "search_tools",
        "load_tools",
    ]
    loaded = LoadedTools(["mcp__s__read_file", "mcp__s__send_message"])
    exported = to(TOOLS, mode="search", loaded=loaded)
    # Loaded tools come after the meta-tools, in load order (a stable prefix).
    assert exported_names(provider, exported.tools) == [
        "search_tools",
        "load_tools",
        "mcp__s__read_file",
        "mcp__s__send_message",
    ]
    assert conforms(provider, "tool_list", exported.tools) == ""
    assert set(exported.names) == {"mcp__s__read_file", "mcp__s__send_message"}
    # The loaded tool's definition is the full one, as the full export has it.
    full = to(TOOLS)
    index = exported_names(provider, full.tools).index("mcp__s__read_file")
    if provider == "gemini":
        assert (
            exported.tools[0]["functionDeclarations"][2]
            == (full.tools[0]["functionDeclarations"][index])
        )
    else:
        assert exported.tools[2] == full.tools[index]


def test_full_mode_is_the_default_and_unchanged() -> None:
    for to in EXPORTERS.values():
        assert to(TOOLS).tools == to(TOOLS, mode="full").tools
        assert len(to(TOOLS).names) == len(TOOLS)


def test_strict_search_mode_keeps_the_meta_tools_strict_and_out_of_the_report() -> None:
    exported = export.to_openai_chat(TOOLS, strict=True, mode="search")
    assert [t["function"]["strict"] for t in exported.tools] == [True, True]
    assert exported.report == ()
    # Strict mode makes the optional limit nullable; a null limit is the default.
    target = Target()
    messages = export.run_tool_calls(
        target,
        reply("openai_chat", ("search_tools", {"query": "filler", "limit": None})),
        provider="openai_chat",
        loaded=LoadedTools(),
    )
    [(error, text)] = answers("openai_chat", messages)
    assert not error
    assert len(json.loads(text.split("\n")[0])["matches"]) == _meta.DEFAULT_META_RESULTS


def test_loaded_names_no_longer_in_the_catalog_are_left_out() -> None:
    loaded = LoadedTools(["mcp__s__gone", "mcp__s__read_file"])
    exported = export.to_anthropic(TOOLS, mode="search", loaded=loaded)
    assert exported_names("anthropic", exported.tools)[2:] == ["mcp__s__read_file"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mode": "everything"}, "mode must be one of"),
        ({"mode": "full", "loaded": LoadedTools()}, "needs mode='search'"),
        ({"mode": "search", "loaded": ["mcp__s__read_file"]}, "LoadedTools"),
    ],
)
def test_bad_modes_are_config_errors(kwargs: dict[str, Any], match: str) -> None:
    for to in EXPORTERS.values():
        with pytest.raises(ConfigError, match=match):
            to(TOOLS, **kwargs)


@pytest.mark.parametrize("to", [export.to_openai_chat, export.to_gemini])
def test_native_mode_is_refused_where_the_provider_has_no_tool_search(to: Any) -> None:
    with pytest.raises(ConfigError, match="no native tool search"):
        to(TOOLS, mode="native")


@pytest.mark.parametrize(
    ("provider", "search_tool"),
    [
        ("openai_responses", {"type": "tool_search"}),
        ("anthropic", {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}),
    ],
)
def test_native_mode_defers_every_tool_but_the_loaded(
    provider: str, search_tool: dict[str, Any]
) -> None:
    to = EXPORTERS[provider]
    loaded = LoadedTools(["mcp__s__get_weather"])
    exported = to(TOOLS, mode="native", loaded=loaded)
    first, *definitions = exported.tools
    assert first == search_tool
    deferred = {d["name"]: d.pop("defer_loading", False) for d in definitions}
    assert deferred == {t.model_name: t.model_name != "mcp__s__get_weather" for t in TOOLS}
    # Without the flag, each is the full export's definition.
    assert definitions == to(TOOLS).tools
    assert conforms(provider, "tool_list", definitions) == ""
    assert len(exported.names) == len(TOOLS)  # every tool stays callable


def test_a_catalog_tool_named_like_a_meta_tool_is_shadowed_in_search_mode() -> None:
    own = ToolSpec(raw_name="search_tools", model_name="search_tools", input_schema={})
    tools = [*TOOLS, own]
    exported = export.to_anthropic(tools, mode="search", loaded=LoadedTools(["search_tools"]))
    assert exported_names("anthropic", exported.tools) == ["search_tools", "load_tools"]
    assert [(c.tool, c.action) for c in exported.report] == [("search_tools", "dropped")]
    call = reply("anthropic", ("search_tools", {"query": "slack"}))
    target = Target(tools)
    [(error, text)] = answers(
        "anthropic", export.run_tool_calls(target, call, provider="anthropic", loaded=LoadedTools())
    )
    assert not error and "mcp__s__send_message" in text and target.called == []
    # Outside search mode the catalog's own tool of that name runs.
    export.run_tool_calls(target, call, provider="anthropic")
    assert target.called == [("search_tools", {"query": "slack"})]


# -- meta-calls answered by run_tool_calls --------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_search_then_load_then_call_in_each_provider_shape(provider: str) -> None:
    target = Target()
    loaded = LoadedTools()
    first = reply(provider, ("search_tools", {"query": "post to a slack channel", "limit": 3}))
    [(error, text)] = answers(
        provider, export.run_tool_calls(target, first, provider=provider, loaded=loaded)
    )
    assert not error
    matches = json.loads(text.split("\n")[0])["matches"] if provider != "gemini" else None
    if matches is None:  # Gemini gets the structured value as its output object
        matches = json.loads(text)["matches"]
    assert matches[0] == {
        "name": "mcp__s__send_message",
        "description": "Post a message to a Slack channel",
    }
    assert len(matches) <= 3
    assert loaded.after(target, first, provider=provider) is loaded  # a search loads nothing

    second = reply(provider, ("load_tools", {"names": ["mcp__s__send_message"]}))
    [(error, text)] = answers(
        provider, export.run_tool_calls(target, second, provider=provider, loaded=loaded)
    )
    assert not error and "mcp__s__send_message" in text
    loaded = loaded.after(target, second, provider=provider)
    assert loaded.names == ("mcp__s__send_message",)
    tools = EXPORTERS[provider](target, mode="search", loaded=loaded).tools
    assert "mcp__s__send_message" in exported_names(provider, tools)
    assert target.called == []  # the meta-calls never reach the target

    third = reply(provider, ("mcp__s__send_message", {"channel": "c", "text": "hi"}))
    [(error, text)] = answers(
        provider, export.run_tool_calls(target, third, provider=provider, loaded=loaded)
    )
    assert (error, text) == (False, "ran mcp__s__send_message")
    assert target.called == [("mcp__s__send_message", {"channel": "c", "text": "hi"})]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_meta_call_and_a_real_call_in_one_response(provider: str) -> None:
    target = Target()
    both = reply(
        provider,
        ("load_tools", {"names": ["mcp__s__create_issue", "mcp__s__get_weather"]}),
        ("mcp__s__read_file", {"path": "/x"}),
        ("search_tools", {"query": "weather forecast"}),
    )
    results = answers(
        provider, export.run_tool_calls(target, both, provider=provider, loaded=LoadedTools())
    )
    assert [error for error, _ in results] == [False, False, False]
    assert "mcp__s__create_issue" in results[0][1] and "mcp__s__get_weather" in results[0][1]
    assert results[1][1] == "ran mcp__s__read_file"
    assert "mcp__s__get_weather" in results[2][1]
    assert target.called == [("mcp__s__read_file", {"path": "/x"})]
    after = LoadedTools().after(target, both, provider=provider)
    assert after.names == ("mcp__s__create_issue", "mcp__s__get_weather")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_meta_calls_are_answered_even_without_loaded_when_the_catalog_lacks_them(
    provider: str,
) -> None:
    target = Target()
    call = reply(provider, ("search_tools", {"query": "issue"}))
    [(error, text)] = answers(provider, export.run_tool_calls(target, call, provider=provider))
    assert not error and "mcp__s__create_issue" in text


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "non-empty 'query'"),
        ({"query": "   "}, "non-empty 'query'"),
        ({"query": 3}, "non-empty 'query'"),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"longer than {MAX_QUERY_CHARS}"),
        ({"query": "file", "limit": 0}, "'limit' must be"),
        ({"query": "file", "limit": MAX_META_RESULTS + 1}, "'limit' must be"),
        ({"query": "file", "limit": True}, "'limit' must be"),
        ({"query": "file", "limit": "3"}, "'limit' must be"),
    ],
)
def test_bad_search_calls_are_error_results(arguments: dict[str, Any], problem: str) -> None:
    call = reply("anthropic", ("search_tools", arguments))
    [(error, text)] = answers(
        "anthropic",
        export.run_tool_calls(Target(), call, provider="anthropic", loaded=LoadedTools()),
    )
    assert error and problem in text


def test_search_limit_and_no_match() -> None:
    target = Target()
    many = reply(
        "openai_responses", ("search_tools", {"query": "filler", "limit": MAX_META_RESULTS})
    )
    [(_, text)] = answers(
        "openai_responses",
        export.run_tool_calls(target, many, provider="openai_responses", loaded=LoadedTools()),
    )
    assert len(json.loads(text.split("\n")[0])["matches"]) == MAX_META_RESULTS
    none = reply("openai_responses", ("search_tools", {"query": "zanzibar"}))
    [(error, text)] = answers(
        "openai_responses",
        export.run_tool_calls(target, none, provider="openai_responses", loaded=LoadedTools()),
    )
    assert not error and text.startswith("No tool matches 'zanzibar'")


def test_descriptions_in_matches_are_one_short_line() -> None:
    long = spec("long_tool", "First line about widgets " + "x" * 500 + "\nsecond line")
    call = reply("anthropic", ("search_tools", {"query": "widgets"}))
    [(_, text)] = answers(
        "anthropic",
        export.run_tool_calls(Target([long]), call, provider="anthropic", loaded=LoadedTools()),
    )
    [match] = json.loads(text.split("\n")[0])["matches"]
    assert match["description"].startswith("First line about widgets")
    assert len(match["description"]) <= 200 and "second" not in match["description"]


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        (None, "non-empty list"),
        ([], "non-empty list"),
        (3, "non-empty list"),
        ([f"mcp__s__filler_{i}" for i in range(MAX_LOAD_NAMES + 1)], f"at most {MAX_LOAD_NAMES}"),
        (["mcp__s__read_file", "mcp__s__nope"], "unknown tool names: 'mcp__s__nope'"),
        (["load_tools"], "unknown tool names: 'load_tools'"),
        ([7], "unknown tool names: 7"),
    ],
)
def test_bad_load_calls_are_error_results_and_load_nothing(names: Any, problem: str) -> None:
    target = Target()
    call = reply("anthropic", ("load_tools", {} if names is None else {"names": names}))
    [(error, text)] = answers(
        "anthropic", export.run_tool_calls(target, call, provider="anthropic", loaded=LoadedTools())
    )
    assert error and problem in text
    before = LoadedTools(["mcp__s__get_weather"])
    assert before.after(target, call, provider="anthropic") is before


def test_load_accepts_one_name_as_a_string_and_the_exported_name() -> None:
    # A hand-made list with an unsafe model name: the exported name differs.
    odd = ToolSpec(raw_name="odd", model_name="odd.name", description="odd", input_schema={})
    target = Target([odd])
    call = reply("anthropic", ("load_tools", {"names": "odd_name"}))
    [(error, text)] = answers(
        "anthropic", export.run_tool_calls(target, call, provider="anthropic", loaded=LoadedTools())
    )
    assert not error and "odd_name" in text
    loaded = LoadedTools().after(target, call, provider="anthropic")
    assert loaded.names == ("odd.name",)  # the model name is kept
    exported = export.to_anthropic(target, mode="search", loaded=loaded)
    assert exported_names("anthropic", exported.tools)[2:] == ["odd_name"]


def test_a_tool_hidden_from_the_model_is_neither_found_nor_loaded() -> None:
    hidden = spec("secret_widget", "A widget tool for views only", ui=ToolUI(visibility=("app",)))
    target = Target([*TOOLS, hidden])
    search = reply("anthropic", ("search_tools", {"query": "widget"}))
    [(_, text)] = answers(
        "anthropic",
        export.run_tool_calls(target, search, provider="anthropic", loaded=LoadedTools()),
    )
    assert "secret" not in text
    load = reply("anthropic", ("load_tools", {"names": ["mcp__s__secret_widget"]}))
    [(error, _)] = answers(
        "anthropic", export.run_tool_calls(target, load, provider="anthropic", loaded=LoadedTools())
    )
    assert error


def test_run_tool_calls_refuses_a_bad_loaded() -> None:
    with pytest.raises(ConfigError, match="loaded"):
        export.run_tool_calls(Target(), {"content": []}, provider="anthropic", loaded=["x"])  # type: ignore[arg-type]


def test_a_target_with_its_own_search_is_asked() -> None:
    class Searching(Target):
        def __init__(self) -> None:
            super().__init__()
            self.queries: list[tuple[str, int]] = []

        def search_tools(self, query: str, limit: int = 10) -> list[ToolMatch]:
            self.queries.append((query, limit))
            return SearchIndex([("s", self.tools)]).search("weather", limit)

    target = Searching()
    call = reply("gemini", ("search_tools", {"query": "anything", "limit": 2}))
    [(_, text)] = answers(
        "gemini", export.run_tool_calls(target, call, provider="gemini", loaded=LoadedTools())
    )
    assert target.queries == [("anything", 4)]  # a little more, for shadowed names
    assert [m["name"] for m in json.loads(text)["matches"]] == ["mcp__s__get_weather"]


def test_load_calls_past_the_runners_call_limit_load_nothing() -> None:
    assert _meta._MAX_CALLS == _runner.MAX_CALLS
    calls = [("mcp__s__read_file", {})] * _runner.MAX_CALLS
    late = reply("anthropic", *calls, ("load_tools", {"names": ["mcp__s__get_weather"]}))
    assert LoadedTools().after(Target(), late, provider="anthropic").names == ()


# -- the LoadedTools value ------------------------------------------------------


def test_loaded_tools_is_an_ordered_bounded_set_of_names() -> None:
    loaded = LoadedTools(["a", "b", "a"])
    assert loaded.names == ("b", "a")  # loaded again: newest
    assert "a" in loaded and "c" not in loaded and len(loaded) == 2 and list(loaded) == ["b", "a"]
    assert loaded.add("c", "b").names == ("a", "c", "b")
    big = LoadedTools(f"t{i}" for i in range(MAX_LOADED + 5))
    assert len(big) == MAX_LOADED and big.names[0] == "t5"  # the oldest unloaded
    for bad in ("abc", [1], None):
        with pytest.raises(ConfigError, match="LoadedTools"):
            LoadedTools(bad)  # type: ignore[arg-type]
