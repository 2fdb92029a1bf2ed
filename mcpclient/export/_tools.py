"""The exporters: a catalog's tools as each provider's tool list.

Each exporter has three modes:

* ``mode="full"`` (the default): every tool the model may call.
* ``mode="search"``: progressive discovery for any provider. The two
  meta-tools of :mod:`._meta` (``search_tools``, ``load_tools``) plus the
  full definitions of the tools in ``loaded`` (a :class:`LoadedTools` the
  caller keeps), newest last, so the list's prefix stays stable for the
  provider's prompt cache.
* ``mode="native"`` (OpenAI Responses and Anthropic only): the provider's
  own deferred loading. Every tool is sent with ``"defer_loading": true``
  (except those in ``loaded``, which stay in the model's context) beside the
  provider's tool-search tool, which the provider runs itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpclient.catalog import ToolSpec
from mcpclient.errors import ConfigError
from mcpclient.export._gemini import to_gemini_schema
from mcpclient.export._meta import META_NAMES, LoadedTools, meta_specs
from mcpclient.export._names import export_names
from mcpclient.export._openai import NotStrict, object_root, to_loose_schema, to_strict_schema
from mcpclient.export._schema import Walk
from mcpclient.export._sources import Tools, names_for, tool_specs
from mcpclient.export._values import (
    ANTHROPIC,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    Change,
    Export,
)

__all__ = [
    "MODES",
    "Tools",
    "names_for",
    "to_anthropic",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
    "tool_specs",
]

#: The exporters' modes: every tool, the meta-tools, or the provider's own deferral.
MODES = ("full", "search", "native")

#: The provider's own tool-search tool, sent first in ``mode="native"``.
_NATIVE_SEARCH: dict[str, dict[str, Any]] = {
    # OpenAI Responses API, hosted tool search: a {"type": "tool_search"} tool, and the
    # functions to search marked "defer_loading": true; the search runs on OpenAI's side
    # (tool_search_call / tool_search_output items), the loaded functions come back as
    # ordinary function_call items. gpt-5.4 and later only.
    # https://developers.openai.com/api/docs/guides/tools-tool-search
    OPENAI_RESPONSES: {"type": "tool_search"},
    # Anthropic Messages API, tool search tool (BM25 variant): type
    # "tool_search_tool_bm25_20251119", name "tool_search_tool_bm25"; tools marked
    # "defer_loading": true are found by it (server_tool_use / tool_search_tool_result
    # blocks) and then called as ordinary tool_use blocks. Needs the beta header
    # "anthropic-beta: advanced-tool-use-2025-11-20", which the caller's request sets.
    # https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
    # (the name: the official SDK's BetaToolSearchToolBm25_20251119, https://rubydoc.info/
    # github/anthropics/anthropic-sdk-ruby/Anthropic/Models/Beta/BetaToolSearchToolBm25_20251119)
    ANTHROPIC: {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
}
_SHADOWED = "shadowed by the search-mode meta-tool of the same name"

Build = Callable[[list[tuple[str, ToolSpec]], list[Change]], list[dict[str, Any]]]


def _check_mode(provider: str, op: str, mode: Any, loaded: Any) -> LoadedTools:
    if mode not in MODES:
        raise ConfigError(f"{op}() mode must be one of {', '.join(MODES)}; got {mode!r}", op=op)
    if mode == "native" and provider not in _NATIVE_SEARCH:
        raise ConfigError(
            f"{op}(mode='native'): this provider has no native tool search; use mode='search'",
            op=op,
        )
    if loaded is not None and not isinstance(loaded, LoadedTools):
        raise ConfigError(f"{op}() loaded must be a LoadedTools or None", op=op)
    if loaded is not None and mode == "full":
        raise ConfigError(f"{op}() loaded= needs mode='search' or mode='native'", op=op)
    return loaded if loaded is not None else LoadedTools()


def _export(
    provider: str, tools: Tools, op: str, *, mode: str, loaded: LoadedTools | None, build: Build
) -> tuple[list[dict[str, Any]], list[Change], dict[str, ToolSpec]]:
    """The definitions to send, the report, and exported name -> tool, for ``mode``."""
    chosen = _check_mode(provider, op, mode, loaded)
    named, changes = export_names(provider, tool_specs(tools, op))
    if mode == "full":
        return build(named, changes), changes, dict(named)
    if mode == "native":
        out = build(named, changes)
        for (_, spec), definition in zip(named, out, strict=True):
            if spec.model_name not in chosen:
                definition["defer_loading"] = True
        return [dict(_NATIVE_SEARCH[provider]), *out], changes, dict(named)
    kept: list[tuple[str, ToolSpec]] = []
    for name, spec in named:
        if name in META_NAMES:
            changes.append(Change(name, "/name", "dropped", _SHADOWED))
        elif spec.model_name in chosen:
            kept.append((name, spec))
    order = {model_name: index for index, model_name in enumerate(chosen.names)}
    kept.sort(key=lambda item: order[item[1].model_name])
    # The meta-tools' own conversion (strict mode's nullable limit) is no news to the caller.
    meta = build([(spec.model_name, spec) for spec in meta_specs()], [])
    return [*meta, *build(kept, changes)], changes, dict(kept)


def _description(spec: ToolSpec) -> str:
    return spec.description or spec.title


def _function_schema(
    name: str, spec: ToolSpec, strict: bool, changes: list[Change]
) -> tuple[dict[str, Any], bool]:
    """The parameters for OpenAI, and whether they are strict."""
    source = spec.input_schema  # a fresh copy: read once, walked, never changed
    if strict:
        trial: list[Change] = []
        try:
            schema = to_strict_schema(Walk(name, source, trial), source)
        except NotStrict as refused:
            reason = f"sent with strict: false: {refused.reason}"
            changes.append(Change(name, refused.path, "not_strict", reason))
        else:
            changes.extend(trial)
            return schema, True
    walk = Walk(name, source, changes)
    return to_loose_schema(walk, source, array_items=True), False


def to_openai_chat(
    tools: Tools, *, strict: bool = False, mode: str = "full", loaded: LoadedTools | None = None
) -> Export:
    """Tools for OpenAI Chat Completions: ``[{"type": "function", "function": {...}}]``.

    With ``strict=True`` each tool whose schema strict mode can express is
    converted to it (``"strict": true``); any other is sent non-strict, and
    the report says why. Optional properties become required and nullable in
    strict mode; :func:`run_tool_calls` drops the nulls the model sends for them.

    ``mode="search"`` sends the meta-tools ``search_tools`` and
    ``load_tools`` and the tools in ``loaded`` instead of the catalog (see
    :class:`LoadedTools`); ``names`` then holds the loaded tools only. Chat
    Completions has no native deferral: ``mode="native"`` is refused.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``; an
            unknown ``mode``, ``mode="native"``, or ``loaded`` with
            ``mode="full"``.
    """

    def build(named: list[tuple[str, ToolSpec]], changes: list[Change]) -> list[dict[str, Any]]:
        out = []
        for name, spec in named:
            parameters, is_strict = _function_schema(name, spec, strict, changes)
            function: dict[str, Any] = {"name": name}
            if _description(spec):
                function["description"] = _description(spec)
            function["parameters"] = parameters
            if strict:
                function["strict"] = is_strict
            out.append({"type": "function", "function": function})
        return out

    out, changes, names = _export(
        OPENAI_CHAT, tools, "to_openai_chat", mode=mode, loaded=loaded, build=build
    )
    return Export(provider=OPENAI_CHAT, tools=tuple(out), report=tuple(changes), names=names)


def to_openai_responses(
    tools: Tools, *, strict: bool = False, mode: str = "full", loaded: LoadedTools | None = None
) -> Export:
    """Tools for the OpenAI Responses API: ``[{"type": "function", "name": ...}]``.

    ``strict`` is always written out, because the Responses API's own default
    differs from Chat Completions'. Conversion is as in :func:`to_openai_chat`.

    ``mode="search"`` sends the meta-tools and the ``loaded`` tools (as in
    :func:`to_openai_chat`). ``mode="native"`` sends every tool with
    ``"defer_loading": true`` (those in ``loaded`` without it) after a
    ``{"type": "tool_search"}`` tool: OpenAI's hosted tool search, which
    only gpt-5.4 and later models support.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``; an
            unknown ``mode``, or ``loaded`` with ``mode="full"``.
    """

    def build(named: list[tuple[str, ToolSpec]], changes: list[Change]) -> list[dict[str, Any]]:
        out = []
        for name, spec in named:
            parameters, is_strict = _function_schema(name, spec, strict, changes)
            tool: dict[str, Any] = {"type": "function", "name": name}
            if _description(spec):
                tool["description"] = _description(spec)
            tool["parameters"] = parameters
            tool["strict"] = is_strict
            out.append(tool)
        return out

    op = "to_openai_responses"
    out, changes, names = _export(
        OPENAI_RESPONSES, tools, op, mode=mode, loaded=loaded, build=build
    )
    return Export(provider=OPENAI_RESPONSES, tools=tuple(out), report=tuple(changes), names=names)


def to_anthropic(tools: Tools, *, mode: str = "full", loaded: LoadedTools | None = None) -> Export:
    """Tools for the Anthropic Messages API: ``[{"name", "description", "input_schema"}]``.

    The schema is kept as written (bounded), with an object root.

    ``mode="search"`` sends the meta-tools and the ``loaded`` tools (as in
    :func:`to_openai_chat`). ``mode="native"`` sends every tool with
    ``"defer_loading": true`` (those in ``loaded`` without it) after
    Anthropic's tool search tool (BM25 variant); the request needs the beta
    header ``anthropic-beta: advanced-tool-use-2025-11-20``.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``; an
            unknown ``mode``, or ``loaded`` with ``mode="full"``.
    """

    def build(named: list[tuple[str, ToolSpec]], changes: list[Change]) -> list[dict[str, Any]]:
        out = []
        for name, spec in named:
            source = spec.input_schema
            tool: dict[str, Any] = {"name": name}
            if _description(spec):
                tool["description"] = _description(spec)
            walk = Walk(name, source, changes)
            tool["input_schema"] = to_loose_schema(walk, source, array_items=False)
            out.append(tool)
        return out

    out, changes, names = _export(
        ANTHROPIC, tools, "to_anthropic", mode=mode, loaded=loaded, build=build
    )
    return Export(provider=ANTHROPIC, tools=tuple(out), report=tuple(changes), names=names)


def to_gemini(tools: Tools, *, mode: str = "full", loaded: LoadedTools | None = None) -> Export:
    """Tools for the Gemini API: ``[{"functionDeclarations": [...]}]`` (one tool).

    Schemas are converted to Gemini's OpenAPI subset (see the package
    docstring); a tool without parameters has no ``parameters`` key.

    ``mode="search"`` declares the meta-tools and the ``loaded`` tools (as
    in :func:`to_openai_chat`); Gemini has no native deferral, so
    ``mode="native"`` is refused.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``; an
            unknown ``mode``, ``mode="native"``, or ``loaded`` with
            ``mode="full"``.
    """

    def build(named: list[tuple[str, ToolSpec]], changes: list[Change]) -> list[dict[str, Any]]:
        declarations = []
        for name, spec in named:
            schema = spec.input_schema
            walk = Walk(name, schema, changes)
            declaration: dict[str, Any] = {"name": name}
            if _description(spec):
                declaration["description"] = _description(spec)
            parameters = to_gemini_schema(walk, object_root(walk, schema))
            if parameters.get("properties"):
                declaration["parameters"] = parameters
            declarations.append(declaration)
        return declarations

    declarations, changes, names = _export(
        GEMINI, tools, "to_gemini", mode=mode, loaded=loaded, build=build
    )
    out = ({"functionDeclarations": declarations},) if declarations else ()
    return Export(provider=GEMINI, tools=out, report=tuple(changes), names=names)
