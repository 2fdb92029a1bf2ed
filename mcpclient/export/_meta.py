"""Progressive tool discovery: the search-mode meta-tools, answered locally.

In ``mode="search"`` an exporter hands the model two small tools instead of
the whole catalog: ``search_tools`` (a query → ranked matches: name, title,
one line of description) and ``load_tools`` (names → their full definitions
in the next turn's tool list). Which tools are loaded is a value the caller
keeps, :class:`LoadedTools`; nothing is remembered anywhere else.
:func:`~mcpclient.export.run_tool_calls` answers the meta-calls here
(:func:`answer_meta_call`) and runs the rest as usual, and
:meth:`LoadedTools.after` reads the same ``load_tools`` calls into the next
value. Every bound is checked here, and a bad meta-call (a missing query, an
unknown name, too many names) is an error result for the model, never an
exception.

Pure and value-aware: no I/O of its own (a search may ask the target's own
``search_tools``), no threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from mcpclient.catalog import ToolSpec
from mcpclient.content import Text, ToolResult
from mcpclient.errors import ConfigError, Error
from mcpclient.export._calls import ToolCall, find_tool_calls
from mcpclient.export._search import MAX_QUERY_CHARS, SearchIndex, ToolMatch
from mcpclient.export._sources import Tools, names_for, tool_specs

__all__ = [
    "DEFAULT_META_RESULTS",
    "LOAD_TOOL",
    "MAX_LOADED",
    "MAX_LOAD_NAMES",
    "MAX_META_RESULTS",
    "META_NAMES",
    "SEARCH_TOOL",
    "LoadedTools",
    "answer_meta_call",
    "is_meta_call",
    "meta_specs",
]

#: The meta-tool that searches the catalog.
SEARCH_TOOL = "search_tools"
#: The meta-tool that loads tools' definitions into the next turn.
LOAD_TOOL = "load_tools"
#: Both meta-tool names; a catalog tool of one of these names is shadowed in search mode.
META_NAMES = frozenset({SEARCH_TOOL, LOAD_TOOL})
#: Matches a ``search_tools`` call returns when it gives no limit.
DEFAULT_META_RESULTS = 8
#: The largest ``limit`` a ``search_tools`` call may ask for.
MAX_META_RESULTS = 20
#: Names one ``load_tools`` call may give.
MAX_LOAD_NAMES = 16
#: Tools a :class:`LoadedTools` holds; loading more unloads the oldest.
MAX_LOADED = 64
#: A match's description is cut to its first line and this many characters.
_DESCRIPTION_CHARS = 200

_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What the tool should do, in a few words (names, verbs, topics).",
            "maxLength": MAX_QUERY_CHARS,
        },
        "limit": {
            "type": "integer",
            "description": f"How many matches to return (default {DEFAULT_META_RESULTS}).",
            "minimum": 1,
            "maximum": MAX_META_RESULTS,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
_LOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "names": {
            "type": "array",
            "description": "Tool names exactly as search_tools returned them.",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": MAX_LOAD_NAMES,
        }
    },
    "required": ["names"],
    "additionalProperties": False,
}
_META_SPECS = (
    ToolSpec(
        raw_name=SEARCH_TOOL,
        model_name=SEARCH_TOOL,
        description=(
            "Search the available tools, which are not all listed here. Returns the best"
            " matches (name, title, description). To use one, call load_tools with its"
            " name: its definition is added to your tools in the next turn."
        ),
        input_schema=_SEARCH_SCHEMA,
    ),
    ToolSpec(
        raw_name=LOAD_TOOL,
        model_name=LOAD_TOOL,
        description=(
            "Load tools found with search_tools by name. Their full definitions are added"
            " to your tools from the next turn on; call them then."
        ),
        input_schema=_LOAD_SCHEMA,
    ),
)


def meta_specs() -> tuple[ToolSpec, ...]:
    """The meta-tools as ``ToolSpec`` values, for the exporters to convert like any tool."""
    return _META_SPECS


def _names_of(value: Any) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ConfigError("LoadedTools names must be an iterable of str", op="LoadedTools")
    names = list(value)
    if not all(isinstance(name, str) for name in names):
        raise ConfigError("LoadedTools names must be an iterable of str", op="LoadedTools")
    return _bounded(names)


def _bounded(names: Iterable[str]) -> tuple[str, ...]:
    # Later wins: a name loaded again moves to the newest place; past MAX_LOADED
    # the oldest are unloaded.
    ordered = list(dict.fromkeys(reversed(list(names))))
    return tuple(reversed(ordered[:MAX_LOADED]))


@attrs.frozen
class LoadedTools:
    """Which tools a search-mode conversation has loaded: model names, oldest first.

    The caller keeps it beside the conversation and hands it to the
    exporter each turn; it is never stored anywhere else.

    Example:
        >>> loaded = export.LoadedTools()
        >>> while True:   # doctest: +SKIP
        ...     tools = export.to_anthropic(host, mode="search", loaded=loaded).tools
        ...     reply = anthropic.messages.create(..., tools=tools)
        ...     messages += export.run_tool_calls(host, reply, provider="anthropic", loaded=loaded)
        ...     loaded = loaded.after(host, reply, provider="anthropic")

    Attributes:
        names: the loaded tools' model names (``ToolSpec.model_name``), at
            most :data:`MAX_LOADED`; loading more unloads the oldest.

    Thread safety: immutable.
    """

    names: tuple[str, ...] = attrs.field(default=(), converter=_names_of)

    def __contains__(self, model_name: object) -> bool:
        return model_name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def add(self, *model_names: str) -> LoadedTools:
        """A copy with ``model_names`` loaded too (the caller may preload tools).

        Raises:
            ConfigError: a name is not a str.
        """
        return LoadedTools((*self.names, *model_names))

    def after(self, target: Tools, response: Any, *, provider: str) -> LoadedTools:
        """The loaded set once the ``load_tools`` calls in ``response`` are applied.

        ``target`` and ``provider`` are those given to :func:`run_tool_calls`
        for the same ``response``: a call that it answered with an error (an
        unknown name, too many names) loads nothing here either.

        Raises:
            ConfigError: an unknown ``provider``, a ``target`` without a
                catalog, or a ``response`` not shaped like that provider's.
        """
        calls = find_tool_calls(response, provider)
        if not any(call.name == LOAD_TOOL for call in calls):
            return self
        names = names_for(provider, tool_specs(target, "LoadedTools.after"))
        added: list[str] = []
        for call in calls[:_MAX_CALLS]:
            if call.name != LOAD_TOOL or call.problem or call.arguments is None:
                continue
            specs = _resolve_load(call.arguments, names)
            if not isinstance(specs, str):
                added.extend(spec.model_name for spec in specs)
        return LoadedTools((*self.names, *added)) if added else self


#: ``_runner.MAX_CALLS``: past it a call is not run, so it loads nothing either (the
#: runner imports this module, so the number is repeated; a unit test keeps them equal).
_MAX_CALLS = 128


def is_meta_call(name: str, names: Mapping[str, ToolSpec], loaded: LoadedTools | None) -> bool:
    """Whether a call named ``name`` is a meta-call to answer here.

    In search mode (``loaded`` given) the meta-tools shadow any catalog tool
    of the same name; otherwise a catalog tool of that name is that tool.
    """
    return name in META_NAMES and (loaded is not None or name not in names)


def answer_meta_call(
    target: Any, call: ToolCall, names: Mapping[str, ToolSpec]
) -> ToolResult | str:
    """The answer to one meta-call: a result for the model, or the error text.

    ``names`` is the provider's exported name → tool of the whole catalog
    (what :func:`run_tool_calls` looks calls up in).
    """
    arguments = call.arguments or {}
    if call.name == SEARCH_TOOL:
        return _search(target, arguments, names)
    specs = _resolve_load(arguments, names)
    if isinstance(specs, str):
        return specs
    exported = _exported(names)
    listed = ", ".join(exported.get(spec.model_name, spec.model_name) for spec in specs)
    return _result(
        f"Loaded: {listed}. Their definitions are in your tools from the next turn; call them"
        " then.",
        {"loaded": [exported.get(spec.model_name, spec.model_name) for spec in specs]},
    )


def _exported(names: Mapping[str, ToolSpec]) -> dict[str, str]:
    """Model name → exported name, without the names the meta-tools shadow."""
    return {spec.model_name: name for name, spec in names.items() if name not in META_NAMES}


def _result(text: str, structured: Any) -> ToolResult:
    return ToolResult(content=(Text(text),), structured=structured)


def _one_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    if len(line) > _DESCRIPTION_CHARS:
        line = line[: _DESCRIPTION_CHARS - 1].rstrip() + "…"
    return line


def _search(
    target: Any, arguments: Mapping[str, Any], names: Mapping[str, ToolSpec]
) -> ToolResult | str:
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return "search_tools needs a non-empty 'query' string"
    if len(query) > MAX_QUERY_CHARS:
        return f"the query is longer than {MAX_QUERY_CHARS} characters"
    limit = arguments.get("limit")
    if limit is None:  # strict mode sends null for an optional limit
        limit = DEFAULT_META_RESULTS
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_META_RESULTS:
        return f"'limit' must be an integer from 1 to {MAX_META_RESULTS}"
    exported = _exported(names)
    # Ask for a few more than the limit: shadowed or hidden tools are dropped below.
    asked = min(limit + len(META_NAMES), 100)
    try:
        hits = _matches(target, query, asked, names)
    except Error as exc:
        return f"the search failed ({exc.failure_class}): {exc.message}"
    matches = []
    for hit in hits:
        name = exported.get(hit.model_name)
        if name is None:
            continue
        match = {
            "name": name,
            "title": hit.tool.title,
            "description": _one_line(hit.tool.description),
        }
        matches.append({key: value for key, value in match.items() if value or key == "name"})
        if len(matches) == limit:
            break
    if not matches:
        return _result(
            f"No tool matches {query!r}. Try other words (a verb, an object, a service).",
            {"matches": []},
        )
    text = json.dumps({"matches": matches}, ensure_ascii=False)
    return _result(text + "\nCall load_tools with the names you need.", {"matches": matches})


def _matches(target: Any, query: str, limit: int, names: Mapping[str, ToolSpec]) -> list[ToolMatch]:
    search = getattr(target, "search_tools", None)
    if callable(search):  # a Host or a Client keeps its index per catalog generation
        found: list[ToolMatch] = search(query, limit)
        return found
    # Any other target: an index over the tools the model may call, built for this search.
    return SearchIndex([("", list(names.values()))]).search(query, limit)


def _resolve_load(
    arguments: Mapping[str, Any], names: Mapping[str, ToolSpec]
) -> list[ToolSpec] | str:
    """The tools a ``load_tools`` call names (all or none), or the error text for the model."""
    given = arguments.get("names")
    if isinstance(given, str):
        given = [given]
    if not isinstance(given, Sequence) or not given:
        return "load_tools needs 'names': a non-empty list of tool names from search_tools"
    if len(given) > MAX_LOAD_NAMES:
        return f"load_tools takes at most {MAX_LOAD_NAMES} names at once; got {len(given)}"
    by_model = {spec.model_name: spec for name, spec in names.items() if name not in META_NAMES}
    specs: list[ToolSpec] = []
    unknown: list[str] = []
    for name in given:
        spec = None
        if isinstance(name, str) and name not in META_NAMES:
            spec = names.get(name) or by_model.get(name)
        if spec is None or not spec.model_visible:
            unknown.append(repr(name[:80]) if isinstance(name, str) else repr(name)[:80])
        elif spec not in specs:
            specs.append(spec)
    if unknown:
        listed = ", ".join(unknown)
        return f"unknown tool names: {listed}; nothing was loaded. Use search_tools to find names."
    return specs
