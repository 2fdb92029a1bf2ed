"""The exporters: a catalog's tools as each provider's tool list."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcpclient.catalog import ToolSpec
from mcpclient.errors import ConfigError
from mcpclient.export._gemini import to_gemini_schema
from mcpclient.export._names import export_names
from mcpclient.export._openai import NotStrict, object_root, to_loose_schema, to_strict_schema
from mcpclient.export._schema import Walk
from mcpclient.export._values import (
    ANTHROPIC,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    Change,
    Export,
)

__all__ = [
    "Tools",
    "names_for",
    "to_anthropic",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
    "tool_specs",
]

#: What an exporter accepts: a ``Catalog``, anything with ``catalog()`` (a
#: ``Client``, a ``Host``), anything with a ``tools`` sequence of ``ToolSpec``,
#: or the ``ToolSpec`` list itself.
Tools = Any


def tool_specs(tools: Tools, op: str = "export") -> list[ToolSpec]:
    """The ``ToolSpec`` list behind any accepted ``tools`` argument, for a model.

    Tools whose MCP Apps visibility lacks ``"model"`` are left out.

    Raises:
        ConfigError: ``tools`` is none of the accepted kinds.
    """
    source = tools
    catalog = getattr(source, "catalog", None)
    if callable(catalog):
        source = catalog()
    listed = getattr(source, "tools", None)
    if listed is not None and not isinstance(source, list | tuple):
        source = listed
    if isinstance(source, ToolSpec):
        source = [source]
    if isinstance(source, Iterable) and not isinstance(source, str | bytes | dict):
        specs = list(source)
        if all(isinstance(spec, ToolSpec) for spec in specs):
            # Exports are for a model: MCP Apps tools not visible to it are left out.
            return [spec for spec in specs if spec.model_visible]
    raise ConfigError(
        f"{op}() needs a Catalog, an object with catalog(), or a list of ToolSpec;"
        f" got {type(tools).__name__}",
        op=op,
    )


def _description(spec: ToolSpec) -> str:
    return spec.description or spec.title


def _each(
    provider: str, tools: Tools, op: str
) -> tuple[list[tuple[str, ToolSpec]], list[Change], dict[str, ToolSpec]]:
    named, changes = export_names(provider, tool_specs(tools, op))
    return named, changes, {name: spec for name, spec in named}


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


def to_openai_chat(tools: Tools, *, strict: bool = False) -> Export:
    """Tools for OpenAI Chat Completions: ``[{"type": "function", "function": {...}}]``.

    With ``strict=True`` each tool whose schema strict mode can express is
    converted to it (``"strict": true``); any other is sent non-strict, and
    the report says why. Optional properties become required and nullable in
    strict mode; :func:`run_tool_calls` drops the nulls the model sends for them.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``.
    """
    named, changes, names = _each(OPENAI_CHAT, tools, "to_openai_chat")
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
    return Export(provider=OPENAI_CHAT, tools=tuple(out), report=tuple(changes), names=names)


def to_openai_responses(tools: Tools, *, strict: bool = False) -> Export:
    """Tools for the OpenAI Responses API: ``[{"type": "function", "name": ...}]``.

    ``strict`` is always written out, because the Responses API's own default
    differs from Chat Completions'. Conversion is as in :func:`to_openai_chat`.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``.
    """
    named, changes, names = _each(OPENAI_RESPONSES, tools, "to_openai_responses")
    out = []
    for name, spec in named:
        parameters, is_strict = _function_schema(name, spec, strict, changes)
        tool: dict[str, Any] = {"type": "function", "name": name}
        if _description(spec):
            tool["description"] = _description(spec)
        tool["parameters"] = parameters
        tool["strict"] = is_strict
        out.append(tool)
    return Export(provider=OPENAI_RESPONSES, tools=tuple(out), report=tuple(changes), names=names)


def to_anthropic(tools: Tools) -> Export:
    """Tools for the Anthropic Messages API: ``[{"name", "description", "input_schema"}]``.

    The schema is kept as written (bounded), with an object root.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``.
    """
    named, changes, names = _each(ANTHROPIC, tools, "to_anthropic")
    out = []
    for name, spec in named:
        source = spec.input_schema
        tool: dict[str, Any] = {"name": name}
        if _description(spec):
            tool["description"] = _description(spec)
        walk = Walk(name, source, changes)
        tool["input_schema"] = to_loose_schema(walk, source, array_items=False)
        out.append(tool)
    return Export(provider=ANTHROPIC, tools=tuple(out), report=tuple(changes), names=names)


def to_gemini(tools: Tools) -> Export:
    """Tools for the Gemini API: ``[{"functionDeclarations": [...]}]`` (one tool).

    Schemas are converted to Gemini's OpenAPI subset (see the package
    docstring); a tool without parameters has no ``parameters`` key.

    Raises:
        ConfigError: ``tools`` is not a catalog or a list of ``ToolSpec``.
    """
    named, changes, names = _each(GEMINI, tools, "to_gemini")
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
    out = ({"functionDeclarations": declarations},) if declarations else ()
    return Export(provider=GEMINI, tools=out, report=tuple(changes), names=names)


def names_for(provider: str, tools: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    """Exported name -> tool, as the exporter for ``provider`` names them."""
    named, _ = export_names(provider, tools)
    return {name: spec for name, spec in named}
