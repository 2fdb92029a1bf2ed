"""The ``export`` phase: what the model is handed per turn, full export vs search mode.

Run inside a worker (``worker.py``), for mcpclient only, with no server and no network:
``sizes.export_tools`` (500) generated ``ToolSpec`` values stand for the catalog of a
host of 10 servers with 50 tools each (model names ``mcp__<server>__<verb>_<noun>``, a
description of one or two sentences, 2-5 parameters with their own descriptions, some
enums and a required one), fixed by a seeded generator so every run measures the same
catalog. The worker's ``era`` is the provider (``mcpclient.export.PROVIDERS``).

Per turn the model is handed the tool list, measured as the bytes of its compact JSON
(UTF-8) and a token estimate of bytes ÷ 4 (a rough rule for English text and JSON; no
tokenizer is involved):

- *full*: ``to_<provider>(tools)``, the whole catalog;
- *search*: ``mode="search"``, the two meta-tools with nothing loaded;
- *search, K loaded*: the meta-tools plus ``sizes.export_loaded`` (5) loaded tools;
- the *search answer*: the result message of one ``search_tools`` call (8 matches),
  handed once, when the model searches.

The ratio is *search, K loaded* ÷ *full*. Also timed: building each export (median of
``sizes.export_reps``).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any

from mcpclient import ToolSpec, export
from mcpclient.export._search import SearchIndex

_QUERY = "create an issue in github"
_SERVERS = ("github", "slack", "jira", "drive", "calendar", "sentry", "grafana", "db", "fs", "mail")
_VERBS = (
    "list",
    "get",
    "create",
    "update",
    "delete",
    "search",
    "archive",
    "export",
    "sync",
    "watch",
)
_NOUNS = (
    "issue",
    "message",
    "file",
    "event",
    "alert",
    "dashboard",
    "record",
    "user",
    "channel",
    "report",
)
_WORDS = (
    "the", "a", "item", "given", "project", "workspace", "current", "account", "with", "by",
    "identifier", "optional", "filter", "returns", "matching", "recent", "owner", "status",
)  # fmt: skip
_EXPORTERS = {
    "openai_chat": export.to_openai_chat,
    "openai_responses": export.to_openai_responses,
    "anthropic": export.to_anthropic,
    "gemini": export.to_gemini,
}


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def catalog(count: int) -> list[ToolSpec]:
    """``count`` tools of a 10-server host, the same for every run."""
    rng = random.Random(31)
    tools = []
    for index in range(count):
        server = _SERVERS[index % len(_SERVERS)]
        verb, noun = _VERBS[(index // 10) % 10], _NOUNS[(index // 100 + index) % 10]
        name = f"{verb}_{noun}_{index // 100}" if index >= 100 else f"{verb}_{noun}"
        properties: dict[str, Any] = {}
        for p in range(rng.randint(2, 5)):
            prop: dict[str, Any] = {"type": rng.choice(("string", "integer", "boolean"))}
            prop["description"] = _sentence(rng, rng.randint(4, 10))
            if p == 1 and prop["type"] == "string" and rng.random() < 0.4:
                prop["enum"] = ["open", "closed", "all"]
            properties[
                f"{rng.choice(_NOUNS)}_{rng.choice(('id', 'name', 'limit', 'state'))}_{p}"
            ] = prop
        schema = {"type": "object", "properties": properties, "required": [next(iter(properties))]}
        description = f"{verb.capitalize()} a {noun} in {server}. " + _sentence(
            rng, rng.randint(8, 20)
        )
        tools.append(
            ToolSpec(
                raw_name=name,
                model_name=f"mcp__{server}__{name}",
                title=f"{verb.capitalize()} {noun}",
                description=description,
                input_schema=schema,
            )
        )
    return tools


def _bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _timed(reps: int, build: Any) -> tuple[Any, float]:
    times, out = [], None
    for _ in range(max(1, reps)):
        start = time.perf_counter()
        out = build()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times) * 1e3


class _Target:
    def __init__(self, tools: list[ToolSpec]) -> None:
        self.tools = tools

    def catalog(self) -> list[ToolSpec]:
        return self.tools

    def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a meta-call never reaches the target")


def _search_call(provider: str) -> dict[str, Any]:
    arguments = {"query": _QUERY}
    if provider == "openai_chat":
        function = {"name": "search_tools", "arguments": json.dumps(arguments)}
        call = {"id": "c", "type": "function", "function": function}
        return {"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]}
    if provider == "openai_responses":
        item = {"type": "function_call", "call_id": "c", "name": "search_tools",
                "arguments": json.dumps(arguments)}  # fmt: skip
        return {"output": [item]}
    if provider == "anthropic":
        block = {"type": "tool_use", "id": "c", "name": "search_tools", "input": arguments}
        return {"type": "message", "content": [block], "stop_reason": "tool_use"}
    part = {"functionCall": {"id": "c", "name": "search_tools", "args": arguments}}
    return {"candidates": [{"content": {"role": "model", "parts": [part]}}]}


def measure(provider: str, sizes: dict[str, Any]) -> dict[str, Any]:
    """The bytes (and tokens ≈ bytes/4) of each export of ``provider``, and their ratio."""
    tools = catalog(sizes["export_tools"])
    to = _EXPORTERS[provider]
    reps = sizes["export_reps"]
    full, full_ms = _timed(reps, lambda: to(tools).tools)
    empty, _ = _timed(1, lambda: to(tools, mode="search").tools)
    target = _Target(tools)
    answer = export.run_tool_calls(
        target, _search_call(provider), provider=provider, loaded=export.LoadedTools()
    )
    # The model loads the best matches of the same search (what its answer listed).
    hits = SearchIndex([("", tools)]).search(_QUERY, sizes["export_loaded"])
    loaded = export.LoadedTools(hit.model_name for hit in hits)
    searched, search_ms = _timed(reps, lambda: to(tools, mode="search", loaded=loaded).tools)
    out = {
        "tools": len(tools),
        "loaded": len(loaded),
        "full_bytes": _bytes(full),
        "search_bytes": _bytes(empty),
        "search_loaded_bytes": _bytes(searched),
        "answer_bytes": _bytes(answer),
        "full_ms": full_ms,
        "search_ms": search_ms,
    }
    for key in ("full", "search", "search_loaded", "answer"):
        out[f"{key}_tokens"] = round(out[f"{key}_bytes"] / 4)
    out["ratio"] = out["search_loaded_bytes"] / out["full_bytes"]
    return out
