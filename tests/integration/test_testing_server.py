"""The scriptable test server, driven as a real subprocess with raw JSON lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.stdio import LineServer

from .conftest import SpawnLineServer

REPO_ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
DEFAULT_TOOLS = ["echo", "add", "slow", "progress", "fail", "log", "hostile", "mutate_catalog"]


def text_of(response: dict[str, Any]) -> str:
    content = response["result"]["content"]
    assert content[0]["type"] == "text"
    return str(content[0]["text"])


def call(
    name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return params


# ----------------------------------------------------------------------------- legacy


def test_legacy_initialize_list_and_echo(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server(
        "--era", "legacy", "--instructions", "be nice", "--server-version", "9.9"
    )
    init = server.initialize("2025-06-18")
    assert init["id"] == 0
    result = init["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"] == {"name": "mcpclient-testing", "version": "9.9"}
    assert result["instructions"] == "be nice"
    assert result["capabilities"] == {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "logging": {},
        "completions": {},
    }
    tools = server.request(1, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == DEFAULT_TOOLS
    assert all(t["inputSchema"]["type"] == "object" for t in tools)
    assert "nextCursor" not in server.request(2, "tools/list", {})["result"]
    echo = server.request(3, "tools/call", call("echo", {"message": "hi there"}))
    assert echo["id"] == 3
    assert text_of(echo) == "hi there"
    assert "resultType" not in echo["result"]
    add = server.request(4, "tools/call", call("add", {"a": 2, "b": 3}))
    assert add["result"]["structuredContent"] == {"sum": 5}
    failed = server.request(5, "tools/call", call("fail", {}))
    assert failed["result"]["isError"] is True
    unknown = server.request(6, "tools/call", call("nope", {}))
    assert unknown["error"]["code"] == -32602
    assert server.request(7, "ping") == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert server.request(8, "no/such/method")["error"]["code"] == -32601


def test_legacy_before_initialize_and_version_fallback(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    assert server.request(1, "tools/list")["error"]["code"] == -32600
    assert server.request(2, "ping")["result"] == {}
    assert server.request(3, "server/discover", {"_meta": META})["error"]["code"] == -32601
    assert server.initialize("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"
    assert server.initialize()["error"]["code"] == -32600  # a second initialize


def test_legacy_batches_only_with_2025_03_26(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize("2025-03-26")
    server.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": call("echo", {"message": "b"}),
            },
        ]
    )
    answers = server.recv()
    assert isinstance(answers, list)
    assert sorted(a["id"] for a in answers) == [1, 2]
    other = spawn_stdio_server("--era", "legacy")
    other.initialize("2025-06-18")
    other.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert other.recv()["error"]["code"] == -32600


def test_legacy_log_level_filters_log_tool(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    assert server.request(1, "logging/setLevel", {"level": "warning"})["result"] == {}
    assert text_of(server.request(2, "tools/call", call("log", {"message": "m"}))) == "filtered"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": call("log", {"message": "loud", "level": "error"}),
        }
    )
    note = server.recv()
    assert note["method"] == "notifications/message"
    assert note["params"] == {"level": "error", "data": "loud"}
    assert text_of(server.recv()) == "logged"


def test_capabilities_flag_gates_methods(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy", "--capabilities", "tools")
    assert server.initialize()["result"]["capabilities"] == {"tools": {"listChanged": True}}
    assert server.request(1, "prompts/list")["error"]["code"] == -32601
    assert "tools" in server.request(2, "tools/list")["result"]


# ----------------------------------------------------------------------------- modern


def test_modern_discover_call_and_version_errors(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "modern", "--instructions", "hello")
    discover = server.request(1, "server/discover", {"_meta": META})["result"]
    assert discover["supportedVersions"] == [MODERN]
    assert discover["resultType"] == "complete"
    assert discover["ttlMs"] == 0
    assert discover["cacheScope"] == "public"
    assert discover["instructions"] == "hello"
    assert discover["_meta"][SERVER_INFO_KEY]["name"] == "mcpclient-testing"
    assert "tools" in discover["capabilities"]

    echo = server.request(2, "tools/call", call("echo", {"message": "modern"}, META))
    assert text_of(echo) == "modern"
    assert echo["result"]["resultType"] == "complete"
    assert echo["result"]["_meta"][SERVER_INFO_KEY]["version"] == "1.0.0"

    listed = server.request(3, "tools/list", {"_meta": META})["result"]
    assert [t["name"] for t in listed["tools"]] == DEFAULT_TOOLS
    assert listed["cacheScope"] == "public"

    missing = server.request(4, "tools/call", call("echo", {"message": "x"}))
    assert missing["error"]["code"] == -32602
    old = dict(META, **{"io.modelcontextprotocol/protocolVersion": "2025-06-18"})
    unsupported = server.request(5, "tools/list", {"_meta": old})["error"]
    assert unsupported["code"] == -32022
    assert unsupported["data"] == {"supported": [MODERN], "requested": "2025-06-18"}
    init = server.request(6, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert init["error"]["code"] == -32601
    assert server.request(7, "ping", {"_meta": META})["error"]["code"] == -32601


def test_modern_progress_and_cancel(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "modern")
    meta = dict(META, progressToken="tok")
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": call("progress", {"steps": 2, "interval": 0.01}, meta),
        }
    )
    first, second, done = server.recv(), server.recv(), server.recv()
    assert first["method"] == "notifications/progress"
    assert first["params"]["progressToken"] == "tok"
    assert [first["params"]["progress"], second["params"]["progress"]] == [1, 2]
    assert done["id"] == 1

    server.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": call("slow", {"seconds": 30}, META),
        }
    )
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "test"},
        }
    )
    # The server keeps serving, and the cancelled call is never answered.
    assert server.request(3, "tools/list", {"_meta": META})["id"] == 3
    server.assert_silent(0.3)


# ----------------------------------------------------------------------------- dual


def test_dual_serves_both_eras(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "dual")
    assert server.request(1, "server/discover", {"_meta": META})["result"]["supportedVersions"]
    assert server.initialize("2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    legacy = server.request(2, "tools/call", call("echo", {"message": "old"}))
    assert text_of(legacy) == "old"
    assert "resultType" not in legacy["result"]
    modern = server.request(3, "tools/call", call("echo", {"message": "new"}, META))
    assert text_of(modern) == "new"
    assert modern["result"]["resultType"] == "complete"
    assert server.request(4, "ping")["result"] == {}


def test_dual_modern_first_without_initialize(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "dual")
    assert text_of(server.request(1, "tools/call", call("echo", {"message": "m"}, META))) == "m"
    assert server.request(2, "tools/list")["error"]["code"] == -32600  # legacy, not initialized


# ----------------------------------------------------------------------------- catalog


def test_pagination_walks_every_page(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy", "--page-size", "3")
    server.initialize()
    names: list[str] = []
    cursor = None
    for rid in range(1, 10):
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        result = server.request(rid, "tools/list", params)["result"]
        assert len(result["tools"]) <= 3
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == DEFAULT_TOOLS
    assert server.request(20, "tools/list", {"cursor": "bogus"})["error"]["code"] == -32602
    prompts = server.request(21, "prompts/list")["result"]
    assert [p["name"] for p in prompts["prompts"]] == ["greet"]


def test_catalog_file_and_record(spawn_stdio_server: SpawnLineServer, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps({"tools": ["echo", {"name": "custom", "inputSchema": {"type": "object"}}]})
    )
    record = tmp_path / "record.jsonl"
    server = spawn_stdio_server(
        "--era", "legacy", "--catalog", str(catalog), "--record", str(record)
    )
    server.initialize()
    tools = server.request(1, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo", "custom"]
    custom = server.request(2, "tools/call", call("custom", {"b": 1, "a": [2]}))
    assert json.loads(text_of(custom)) == {"a": [2], "b": 1}
    assert server.request(3, "tools/call", call("add", {"a": 1, "b": 1}))["error"]["code"] == -32602
    got = server.request(4, "prompts/get", {"name": "greet", "arguments": {"name": "Ann"}})
    assert got["result"]["messages"][0]["content"]["text"] == "Hello, Ann!"
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert [m.get("method") for m in recorded] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "tools/call",
        "prompts/get",
    ]


# ----------------------------------------------------------------------------- hostile


def hostile(action: str, **extra: Any) -> dict[str, Any]:
    return call("hostile", {"action": action, **extra})


def test_hostile_garbage_line_then_answer(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hostile("garbage_line")}
    )
    assert server.recv_raw() == b"this is not json\n"
    assert server.recv()["id"] == 1
    server.send_raw(b"not json either\n")
    assert server.recv()["error"]["code"] == -32700
    assert server.request(2, "ping")["result"] == {}


def test_hostile_duplicate_and_unknown_id(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "modern")
    params = dict(hostile("duplicate_response"), _meta=META)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    first, second = server.recv(), server.recv()
    assert first == second
    assert first["id"] == 1
    params = dict(hostile("unknown_id"), _meta=META)
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    assert server.recv()["id"] == 987654321
    assert server.recv()["id"] == 2


def test_hostile_exit_mid_call(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hostile("exit", code=7)}
    )
    assert server.recv_raw() is None
    assert server.proc.wait(timeout=5) == 7


def test_hostile_invalid_utf8_and_deep_json(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hostile("invalid_utf8")}
    )
    line = server.recv_raw()
    assert line is not None
    with pytest.raises(UnicodeDecodeError):
        line.decode("utf-8")
    assert server.recv()["id"] == 1
    server.send(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": hostile("deep_json", depth=5)}
    )
    assert server.recv_raw() == b"[[[[[]]]]]\n"
    assert server.recv()["id"] == 2


def test_hostile_server_request_round_trip(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": hostile("server_request", method="roots/list"),
        }
    )
    outbound = server.recv()
    assert outbound["method"] == "roots/list"
    roots = {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
    server.send({"jsonrpc": "2.0", "id": outbound["id"], "result": roots})
    answer = server.recv()
    assert answer["id"] == 1
    assert json.loads(text_of(answer)) == {"result": roots}


def test_mutate_catalog_notifies_legacy_client(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": call("mutate_catalog", {"add": "extra", "remove": "fail"}),
        }
    )
    assert server.recv()["method"] == "notifications/tools/list_changed"
    assert server.recv()["id"] == 1
    names = [t["name"] for t in server.request(2, "tools/list")["result"]["tools"]]
    assert "extra" in names
    assert "fail" not in names


def test_exits_cleanly_on_stdin_eof(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "legacy")
    server.initialize()
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    started = time.monotonic()
    assert server.proc.wait(timeout=5) == 0
    assert time.monotonic() - started < 2


# ----------------------------------------------------------------------------- list knobs

LIST_METHODS = {
    "tools": "tools/list",
    "prompts": "prompts/list",
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
}


def start(spawn_stdio_server: SpawnLineServer, era: str, *flags: str) -> LineServer:
    """A server in ``era``, initialized when the era needs it."""
    server: LineServer = spawn_stdio_server("--era", era, *flags)
    if era == "legacy":
        server.initialize()
    return server


def list_page(
    server: LineServer, rid: int, family: str, era: str, cursor: str | None = None
) -> Any:
    """One raw list request of ``family`` in ``era``; the whole response message."""
    params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
    if era != "legacy":
        params["_meta"] = META
    return server.request(rid, LIST_METHODS[family], params)


def mutate(server: LineServer, rid: int, era: str, **args: Any) -> tuple[list[Any], Any]:
    """Call ``mutate_catalog``; the notifications sent before its answer, and the answer."""
    params = call("mutate_catalog", args, META if era != "legacy" else None)
    server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    notes: list[Any] = []
    while True:
        message = server.recv()
        if message.get("id") == rid:
            return notes, message
        notes.append(message)


def assert_cache_hints(result: dict[str, Any], era: str, ttl_ms: int = 0) -> None:
    if era == "legacy":
        assert "ttlMs" not in result
        assert "cacheScope" not in result
    else:
        assert result["ttlMs"] == ttl_ms
        assert result["cacheScope"] == "public"
        assert result["resultType"] == "complete"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_cursor_loop_repeats_the_cursor(spawn_stdio_server: SpawnLineServer, era: str) -> None:
    server = start(spawn_stdio_server, era, "--page-size", "3", "--cursor-loop", "tools,prompts")
    first = list_page(server, 1, "tools", era)["result"]
    assert [t["name"] for t in first["tools"]] == DEFAULT_TOOLS[:3]
    loop = first["nextCursor"]
    for rid in (2, 3):
        again = list_page(server, rid, "tools", era, loop)["result"]
        assert [t["name"] for t in again["tools"]] == DEFAULT_TOOLS[3:6]
        assert again["nextCursor"] == loop
        assert_cache_hints(again, era)
    # A listing that fits on the first page still gets the looping cursor.
    prompts = list_page(server, 4, "prompts", era)["result"]
    assert [p["name"] for p in prompts["prompts"]] == ["greet"]
    second = list_page(server, 5, "prompts", era, prompts["nextCursor"])["result"]
    assert second["prompts"] == []
    assert second["nextCursor"] == prompts["nextCursor"]
    # Other families page normally.
    assert "nextCursor" not in list_page(server, 6, "resources", era)["result"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_endless_pages_never_end(spawn_stdio_server: SpawnLineServer, era: str) -> None:
    server = start(
        spawn_stdio_server, era, "--endless-pages", "resources", "--endless-pages", "templates"
    )
    uris: list[str] = []
    cursors: list[str] = []
    cursor = None
    for rid in range(1, 26):
        result = list_page(server, rid, "resources", era, cursor)["result"]
        assert len(result["resources"]) == 1
        assert_cache_hints(result, era)
        uris.append(result["resources"][0]["uri"])
        cursor = result["nextCursor"]
        cursors.append(cursor)
    assert uris[:3] == ["test://static/hello", "test://gen/0001", "test://gen/0002"]
    assert uris[-1] == "test://gen/0024"
    assert len(set(uris)) == len(uris)
    assert len(set(cursors)) == len(cursors)
    read = server.request(30, "resources/read", {"uri": "test://gen/0024", "_meta": META})
    assert read["result"]["contents"][0]["text"] == "Contents of test://gen/0024"
    templates = list_page(server, 31, "resourceTemplates", era)["result"]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["test://items/{id}"]
    more = list_page(server, 32, "resourceTemplates", era, templates["nextCursor"])["result"]
    assert more["resourceTemplates"][0]["uriTemplate"] == "test://gen/0001/{id}"
    assert more["nextCursor"] != templates["nextCursor"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_huge_cursor_is_5000_bytes_and_valid(spawn_stdio_server: SpawnLineServer, era: str) -> None:
    server = start(spawn_stdio_server, era, "--page-size", "5", "--huge-cursor", "tools,prompts")
    first = list_page(server, 1, "tools", era)["result"]
    assert len(first["nextCursor"].encode()) == 5000
    rest = list_page(server, 2, "tools", era, first["nextCursor"])["result"]
    assert [t["name"] for t in first["tools"] + rest["tools"]] == DEFAULT_TOOLS
    assert "nextCursor" not in rest
    assert_cache_hints(rest, era)
    prompts = list_page(server, 3, "prompts", era)["result"]
    assert len(prompts["nextCursor"]) == 5000
    end = list_page(server, 4, "prompts", era, prompts["nextCursor"])["result"]
    assert end["prompts"] == []
    assert "nextCursor" not in end


def walk(server: LineServer, family: str, era: str, first_id: int) -> list[list[Any]]:
    """Every page of ``family``, following the cursors."""
    pages: list[list[Any]] = []
    cursor = None
    for rid in range(first_id, first_id + 50):
        result = list_page(server, rid, family, era, cursor)["result"]
        pages.append(result[family])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages
    raise AssertionError("pagination did not end")


def test_item_count_generates_items(spawn_stdio_server: SpawnLineServer, tmp_path: Path) -> None:
    era = "legacy"
    server = start(
        spawn_stdio_server,
        era,
        "--page-size",
        "100",
        "--item-count",
        "tools=250",
        "--item-count",
        "prompts=3",
        "--item-count",
        "resources=2",
        "--item-count",
        "templates=1",
    )
    pages = walk(server, "tools", era, 1)
    assert [len(page) for page in pages] == [100, 100, 58]
    tools = [tool for page in pages for tool in page]
    assert [t["name"] for t in tools] == DEFAULT_TOOLS + [f"t{i:04d}" for i in range(250)]
    assert tools[-1]["inputSchema"] == {"type": "object"}
    echoed = server.request(10, "tools/call", call("t0123", {"x": 1}))
    assert json.loads(text_of(echoed)) == {"x": 1}
    prompts = list_page(server, 11, "prompts", era)["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["greet", "p0000", "p0001", "p0002"]
    resources = list_page(server, 12, "resources", era)["result"]["resources"]
    assert [r["uri"] for r in resources] == [
        "test://static/hello",
        "test://gen/0000",
        "test://gen/0001",
    ]
    templates = list_page(server, 13, "resourceTemplates", era)["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://items/{id}", "test://gen/0000/{id}"]

    # With the family emptied by a catalog file, the listing is exactly the generated items.
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"tools": []}))
    exact = start(
        spawn_stdio_server, "modern", "--catalog", str(catalog), "--item-count", "tools=3"
    )
    listed = list_page(exact, 1, "tools", "modern")["result"]["tools"]
    assert [t["name"] for t in listed] == ["t0000", "t0001", "t0002"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_fail_lists_induces_errors(spawn_stdio_server: SpawnLineServer, era: str) -> None:
    server = start(spawn_stdio_server, era)
    notes, answer = mutate(server, 1, era, fail_lists=2)
    assert notes == []
    assert json.loads(text_of(answer)) == {"fail_lists": 2}
    for rid, family in ((2, "tools"), (3, "prompts")):
        error = list_page(server, rid, family, era)["error"]
        assert error == {"code": -32603, "message": "induced failure"}
    assert "resourceTemplates" in list_page(server, 4, "resourceTemplates", era)["result"]
    mutate(server, 5, era, fail_lists=-1)
    for rid, family in enumerate(LIST_METHODS, start=6):
        assert list_page(server, rid, family, era)["error"]["code"] == -32603
    mutate(server, 10, era, fail_lists=0)
    assert_cache_hints(list_page(server, 11, "tools", era)["result"], era)


def test_set_tools_notify_and_storm_legacy(spawn_stdio_server: SpawnLineServer) -> None:
    era = "legacy"
    server = start(spawn_stdio_server, era)
    malformed = [{"name": "bad", "inputSchema": "not a schema"}, 42]
    notes, answer = mutate(server, 1, era, set_tools=["mutate_catalog", *malformed])
    assert [n["method"] for n in notes] == ["notifications/tools/list_changed"]
    assert json.loads(text_of(answer)) == {"set_tools": 3}
    tools = list_page(server, 2, "tools", era)["result"]["tools"]
    assert tools[0]["name"] == "mutate_catalog"
    assert tools[1:] == malformed
    notes, answer = mutate(server, 3, era, set_tools=["no-such-builtin"])
    assert notes == []
    assert answer["result"]["isError"] is True
    assert len(list_page(server, 4, "tools", era)["result"]["tools"]) == 3

    notes, answer = mutate(server, 5, era, notify="prompts")
    assert notes == [{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}]
    assert json.loads(text_of(answer)) == {"notified": "prompts"}
    notes, answer = mutate(server, 6, era, storm={"family": "resources", "count": 5})
    assert [n["method"] for n in notes] == ["notifications/resources/list_changed"] * 5
    assert json.loads(text_of(answer)) == {"storm": {"count": 5, "family": "resources"}}
    notes, answer = mutate(server, 7, era, storm={"family": "nope"})
    assert notes == []
    assert answer["result"]["isError"] is True


def test_notify_and_storm_on_modern_listen_streams(spawn_stdio_server: SpawnLineServer) -> None:
    era = "modern"
    server = start(spawn_stdio_server, era)
    wanted = {"toolsListChanged": True, "promptsListChanged": True}
    server.send(
        {
            "jsonrpc": "2.0",
            "id": "listen",
            "method": "subscriptions/listen",
            "params": {"notifications": wanted, "_meta": META},
        }
    )
    assert server.recv()["method"] == "notifications/subscriptions/acknowledged"
    stream_meta = {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen"}}
    notes, _ = mutate(server, 1, era, notify="tools")
    assert notes == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": stream_meta}
    ]
    notes, _ = mutate(server, 2, era, storm={"family": "prompts", "count": 3})
    assert [n["method"] for n in notes] == ["notifications/prompts/list_changed"] * 3
    assert all(n["params"] == stream_meta for n in notes)
    notes, _ = mutate(server, 3, era, notify="resources")  # not asked for on the stream
    assert notes == []
    notes, _ = mutate(server, 4, era, set_tools=["echo", "mutate_catalog"])
    assert [n["method"] for n in notes] == ["notifications/tools/list_changed"]
    listed = list_page(server, 5, "tools", era)["result"]
    assert [t["name"] for t in listed["tools"]] == ["echo", "mutate_catalog"]


def test_list_delay_lets_notifications_overtake(spawn_stdio_server: SpawnLineServer) -> None:
    era = "legacy"
    server = start(spawn_stdio_server, era, "--list-delay", "0.2")
    started = time.monotonic()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    notes, _ = mutate(server, 2, era, notify="tools")  # answered while the list waits
    assert [n["method"] for n in notes] == ["notifications/tools/list_changed"]
    listed = server.recv()
    assert listed["id"] == 1
    assert time.monotonic() - started >= 0.2
    # A cancelled delayed list is never answered.
    server.send({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"})
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
    server.assert_silent(0.35)
    # Runtime: no delay, then a delay again.
    mutate(server, 4, era, list_delay=0)
    assert "tools" in list_page(server, 5, "tools", era)["result"]
    mutate(server, 6, era, list_delay=0.1)
    server.send({"jsonrpc": "2.0", "id": 7, "method": "resources/list"})
    assert server.request(8, "ping")["id"] == 8
    assert server.recv()["id"] == 7


def test_record_counts_list_requests(spawn_stdio_server: SpawnLineServer, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    era = "dual"
    server = start(spawn_stdio_server, era, "--page-size", "3", "--record", str(record))
    assert len(walk(server, "tools", era, 1)) == 3
    mutate(server, 10, era, fail_lists=1)
    assert list_page(server, 11, "prompts", era)["error"]["code"] == -32603
    list_page(server, 12, "prompts", era)
    server.request(13, "resources/templates/list", {"_meta": META})
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    methods = [m.get("method") for m in recorded]
    assert methods.count("tools/list") == 3
    assert methods.count("prompts/list") == 2
    assert methods.count("resources/templates/list") == 1
    cursors = [m["params"].get("cursor") for m in recorded if m.get("method") == "tools/list"]
    assert cursors[0] is None
    assert all(isinstance(c, str) for c in cursors[1:])


@pytest.mark.parametrize("era", ["modern", "dual"])
def test_ttl_ms_on_every_modern_list(spawn_stdio_server: SpawnLineServer, era: str) -> None:
    server = start(spawn_stdio_server, era, "--ttl-ms", "1234", "--page-size", "1")
    for rid, family in enumerate(LIST_METHODS, start=1):
        result = list_page(server, rid, family, era)["result"]
        assert_cache_hints(result, era, 1234)
    second = list_page(server, 9, "tools", era)
    page2 = list_page(server, 10, "tools", era, second["result"]["nextCursor"])["result"]
    assert page2["tools"][0]["name"] == "add"
    assert_cache_hints(page2, era, 1234)


def test_list_knob_flags_are_validated() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    for flags in (["--cursor-loop", "bogus"], ["--item-count", "tools"], ["--list-delay", "-1"]):
        done = subprocess.run(
            [sys.executable, "-m", "mcpclient.testing.server", *flags],
            capture_output=True,
            cwd=REPO_ROOT,
            env=env,
            timeout=10,
            check=False,
        )
        assert done.returncode == 2, flags
        assert b"error:" in done.stderr
