"""Tools for any LLM: MCP tools as OpenAI, Anthropic and Gemini tool lists, and back.

Plain dicts in, plain dicts out; no provider SDK is imported.

Example:
    >>> from mcpclient import export
    >>> tools = export.to_anthropic(client)   # doctest: +SKIP
    >>> reply = anthropic.messages.create(..., tools=tools.tools)   # doctest: +SKIP
    >>> results = export.run_tool_calls(client, reply, provider="anthropic")   # doctest: +SKIP

* ``to_openai_chat``, ``to_openai_responses``, ``to_anthropic``, ``to_gemini``
  take a ``Catalog``, anything with ``catalog()`` (a ``Client``, a ``Host``),
  or a list of ``ToolSpec``, and return an :class:`Export`: the tool list and
  a report (:class:`Change`) of every change made for the provider. Input
  schemas are never mutated, and the work on any schema is bounded.
* :func:`run_tool_calls` runs the tool calls in a provider's response under
  one deadline and returns the provider's result messages, each fitted to a
  :class:`ResultBudget` when one is given.
* ``mode="search"`` (every exporter) hands the model two meta-tools,
  ``search_tools`` and ``load_tools``, and the definitions of the tools it
  loaded, a :class:`LoadedTools` the caller keeps (``loaded.after(...)``
  each turn); ``mode="native"`` uses the provider's own deferred loading and
  tool search (OpenAI Responses, Anthropic).
* ``to_openai_mcp_tool`` and ``to_anthropic_mcp_server`` hand an HTTP server
  to the provider to call itself.
"""

from __future__ import annotations

from mcpclient.export._budget import ResultBudget
from mcpclient.export._calls import ToolCall, find_tool_calls
from mcpclient.export._meta import LoadedTools
from mcpclient.export._remote import RemoteServer, to_anthropic_mcp_server, to_openai_mcp_tool
from mcpclient.export._runner import ToolTarget, run_tool_calls
from mcpclient.export._tools import to_anthropic, to_gemini, to_openai_chat, to_openai_responses
from mcpclient.export._values import (
    ANTHROPIC,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    PROVIDERS,
    Change,
    Export,
)

__all__ = [
    "ANTHROPIC",
    "GEMINI",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "PROVIDERS",
    "Change",
    "Export",
    "LoadedTools",
    "RemoteServer",
    "ResultBudget",
    "ToolCall",
    "ToolTarget",
    "find_tool_calls",
    "run_tool_calls",
    "to_anthropic",
    "to_anthropic_mcp_server",
    "to_gemini",
    "to_openai_chat",
    "to_openai_mcp_tool",
    "to_openai_responses",
]
