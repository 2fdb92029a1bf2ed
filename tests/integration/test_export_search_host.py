"""Issue 31, progressive discovery end to end against real testing servers.

* a ``Host`` of two testing servers (one with 200 generated tools) in
  ``mode="search"``: the model sees two meta-tools; search, load and call go
  through ``run_tool_calls``, and the loaded tool is in the next export;
* a ``Client`` (its own ``search_tools``, calling by raw name) the same way,
  and its index follows an adopted catalog generation.
"""

from __future__ import annotations

import json
from typing import Any

import mcpclient
from mcpclient import Host, export
from tests.support import definition, wait_until


def _anthropic(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    blocks = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}
        for i, (name, arguments) in enumerate(calls)
    ]
    return {"type": "message", "role": "assistant", "content": blocks, "stop_reason": "tool_use"}


def _results(messages: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    [message] = messages
    return [
        (block["is_error"], "\n".join(item["text"] for item in block["content"]))
        for block in message["content"]
    ]


def test_host_search_load_and_call_through_run_tool_calls() -> None:
    servers = {
        "one": definition(name="one"),
        "big": definition("--item-count", "tools=200", name="big"),
    }
    with Host(servers) as host:
        assert len(host.catalog().tools) > 200
        loaded = export.LoadedTools()
        first = export.to_anthropic(host, mode="search", loaded=loaded)
        assert [tool["name"] for tool in first.tools] == ["search_tools", "load_tools"]

        search = _anthropic(("search_tools", {"query": "add two numbers", "limit": 5}))
        [(error, text)] = _results(host.run_tool_calls(search, provider="anthropic", loaded=loaded))
        assert not error
        matches = json.loads(text.split("\n")[0])["matches"]
        # Both servers have an "add": the two best matches, in model-name order.
        assert [host.route(m["name"]) for m in matches[:2]] == [("big", "add"), ("one", "add")]
        name = matches[1]["name"]

        load = _anthropic(("load_tools", {"names": [name]}), ("echo_nonexistent", {}))
        results = _results(export.run_tool_calls(host, load, provider="anthropic", loaded=loaded))
        assert not results[0][0] and name in results[0][1]
        assert results[1][0] and "unknown tool" in results[1][1]
        loaded = loaded.after(host, load, provider="anthropic")
        assert loaded.names == (name,)

        second = export.to_anthropic(host, mode="search", loaded=loaded)
        assert [tool["name"] for tool in second.tools] == ["search_tools", "load_tools", name]
        assert second.tools[2]["input_schema"]["required"] == ["a", "b"]

        call = _anthropic((name, {"a": 2, "b": 3}), ("search_tools", {"query": "t0007"}))
        [(error, text), (search_error, found)] = _results(
            export.run_tool_calls(host, call, provider="anthropic", loaded=loaded)
        )
        assert (error, json.loads(text)) == (False, {"sum": 5})
        assert (
            not search_error
            and host.route(json.loads(found.split("\n")[0])["matches"][0]["name"])[0] == "big"
        )
        assert loaded.after(host, call, provider="anthropic") is loaded


def test_client_search_tools_and_search_mode_through_run_tool_calls() -> None:
    with mcpclient.connect(definition(name="solo")) as client:
        hits = client.search_tools("echo the message", limit=3)
        assert hits[0].tool.raw_name == "echo" and hits[0].binding == "solo"
        name = hits[0].model_name

        loaded = export.LoadedTools()
        output = [
            {"type": "function_call", "call_id": "c1", "name": "search_tools",
             "arguments": json.dumps({"query": "echo"})},
            {"type": "function_call", "call_id": "c2", "name": "load_tools",
             "arguments": json.dumps({"names": [name]})},
        ]  # fmt: skip
        messages = client.run_tool_calls(
            {"output": output}, provider="openai_responses", loaded=loaded
        )
        assert name in messages[0]["output"] and name in messages[1]["output"]
        loaded = loaded.after(client, {"output": output}, provider="openai_responses")
        tools = export.to_openai_responses(client, mode="search", loaded=loaded).tools
        assert [t["name"] for t in tools] == ["search_tools", "load_tools", name]

        echo = {"type": "function_call", "call_id": "c3", "name": name,
                "arguments": json.dumps({"message": "hi"})}  # fmt: skip
        [result] = client.run_tool_calls(
            {"output": [echo]}, provider="openai_responses", loaded=loaded
        )
        assert result["output"] == "hi"

        # The client's index follows an adopted generation, not a candidate.
        assert client.search_tools("zanzibarfresh") == []
        client.call_tool("mutate_catalog", {"add": "zanzibarfresh"})
        assert wait_until(lambda: client.candidate() is not None, 10.0)
        assert client.search_tools("zanzibarfresh") == []
        candidate = client.candidate()
        assert candidate is not None
        client.adopt(candidate.generation)
        assert [h.tool.raw_name for h in client.search_tools("zanzibarfresh")] == ["zanzibarfresh"]
