"""The values the exporters return: the provider's tool list and a report of every change."""

from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from typing import Any

import attrs

from mcpclient.catalog import ToolSpec

__all__ = [
    "ANTHROPIC",
    "GEMINI",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "PROVIDERS",
    "Change",
    "Export",
]

#: OpenAI Chat Completions (``tools=[{"type": "function", "function": {...}}]``).
OPENAI_CHAT = "openai_chat"
#: OpenAI Responses API (``tools=[{"type": "function", "name": ...}]``).
OPENAI_RESPONSES = "openai_responses"
#: Anthropic Messages API (``tools=[{"name", "description", "input_schema"}]``).
ANTHROPIC = "anthropic"
#: Google Gemini API (``tools=[{"functionDeclarations": [...]}]``).
GEMINI = "gemini"
#: Every provider name :func:`~mcpclient.export.run_tool_calls` accepts.
PROVIDERS = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, GEMINI)


def _read_only(names: Mapping[str, ToolSpec]) -> Mapping[str, ToolSpec]:
    return types.MappingProxyType(dict(names))


@attrs.frozen
class Change:
    """One change an exporter made to a tool so that the provider accepts it.

    Attributes:
        tool: the tool's exported name (what the provider sees).
        path: a JSON Pointer into the tool's input schema (``""`` for the
            root, ``"/name"`` for the tool's name itself).
        action: what was done: ``"dropped"``, ``"converted"``, ``"inlined"``,
            ``"cut"``, ``"added"``, ``"renamed"``, ``"not_strict"``, ``"kept"``.
        detail: what and why, for a person reading the report.
    """

    tool: str
    path: str
    action: str
    detail: str

    def __str__(self) -> str:
        return f"{self.tool}{'#' + self.path if self.path else ''}: {self.action}: {self.detail}"


@attrs.frozen(kw_only=True)
class Export:
    """A provider's tool list, as plain dicts, with the changes made to get there.

    Example:
        >>> exported = mcpclient.export.to_anthropic(client)   # doctest: +SKIP
        >>> anthropic.messages.create(..., tools=exported.tools)   # doctest: +SKIP
        >>> for change in exported.report: print(change)   # doctest: +SKIP

    Attributes:
        provider: one of :data:`PROVIDERS`.
        tools: the tool list to send (a fresh deep copy on each access).
        report: every change made to a schema or a name, in tool order.
        names: exported name -> the :class:`~mcpclient.ToolSpec` it stands for.

    Thread safety: immutable (``tools`` hands out copies).
    """

    provider: str
    _tools: tuple[dict[str, Any], ...] = attrs.field(alias="tools", repr=False)
    report: tuple[Change, ...] = ()
    names: Mapping[str, ToolSpec] = attrs.field(factory=dict, repr=False, converter=_read_only)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The provider's tool list: plain dicts, ready to pass to its API or SDK."""
        return copy.deepcopy(list(self._tools))

    def tool_for(self, name: str) -> ToolSpec | None:
        """The tool a model called by its exported ``name``, or ``None``."""
        return self.names.get(name)
