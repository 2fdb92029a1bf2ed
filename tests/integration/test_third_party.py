"""The client against real third-party servers nobody on this project wrote.

Seven servers from the npm and Python registries, pinned and installed by tox
(see ``third_party.py``), on four server frameworks:

* the TypeScript SDK: ``server-filesystem`` (roots), ``server-memory``
  (a resource with subscriptions), ``server-sequential-thinking``;
* the Python SDK 2.x ``MCPServer``: ``mcp-server-time`` (both eras on stdio);
* the Python SDK 1.x low-level ``Server``: ``mcp-server-sqlite`` (tools,
  prompts, resources; no templates handler, so ``resources/templates/list``
  answers -32601);
* FastMCP: ``mcp-server-calculator`` (the SDK 1.x FastMCP) and
  ``fsext-mcp-server`` (FastMCP 3, over stdio, Streamable HTTP and HTTP+SSE).

Each test connects over one transport, checks every family the server
declares was listed, calls tools, reads a resource and gets a prompt where
the server has them, closes, and checks the server process (and its process
group) is gone; the suite's leak guard checks threads and child processes.
Every server runs offline.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import (
    Audio,
    Catalog,
    ClientCapabilities,
    Definition,
    Handlers,
    Image,
    ResourceUpdated,
    State,
    StreamableHTTPTransport,
    Text,
    Tolerance,
    export,
)
from tests.support import Events, wait_until
from tests.support.http_servers import ServerProcess, free_port
from tests.support.processes import wait_until_gone
from tests.support.spawning import Spawner

from ..conftest import child_processes
from .conftest import make_definition
from .third_party import npm_peer, venv_peer

pytestmark = pytest.mark.peer

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
TAG = "MCPCLIENT_TEST_PEER_TAG"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))


@contextlib.contextmanager
def connected(
    definition: Definition, handlers: Handlers | None = None
) -> Iterator[mcpclient.Client]:
    """Connect, yield, close; then check the binding closed and its server is gone."""
    before = child_processes()
    client = mcpclient.connect(definition, handlers, timeout=60)
    spawned = child_processes() - before
    try:
        status = client.status()
        assert status.state is State.READY, status
        assert status.failure is None
        if definition.transport.kind == "stdio":
            assert len(spawned) == 1, f"expected one server process, got {spawned}"
        yield client
        client.ping()
    finally:
        spawned |= child_processes() - before  # a server respawned meanwhile
        client.close()
    assert client.status().state is State.CLOSED
    left = wait_until_gone(sorted(spawned))
    assert not left, f"the server left processes running after close: {left}"


def check_families(
    catalog: Catalog,
    *,
    tools: Collection[str],
    prompts: Collection[str] = (),
    resources: Collection[str] = (),
    templates: Collection[str] = (),
    declared: Collection[str] = ("tools",),
    tolerated: bool = False,
) -> None:
    """Every family the server declares was listed, and holds exactly what it serves.

    Unless ``tolerated``, the catalog needed no tolerance and carries no warning.
    """
    if not tolerated:
        assert catalog.warnings == ()
        assert catalog.applied_tolerances == ()
    caps = catalog.capabilities
    assert {f for f in ("tools", "prompts", "resources") if getattr(caps, f)} == set(declared)
    assert {t.raw_name for t in catalog.tools} == set(tools)
    assert {p.name for p in catalog.prompts} == set(prompts)
    assert {r.uri for r in catalog.resources} == set(resources)
    assert {t.uri_template for t in catalog.resource_templates} == set(templates)
    for tool in catalog.tools:
        assert tool.model_name == f"mcp__{catalog.binding}__{tool.raw_name}"


def assert_ok(result: mcpclient.ToolResult) -> None:
    """A successful result that needed no warning (its structured part fits its schema)."""
    assert not result.is_error, result.text
    assert result.warnings == ()


def tagged(tag: str) -> dict[str, str]:
    # The era a client detects is cached per server command for the process:
    # a tag in the environment gives each test its own command.
    return {TAG: tag}


# ------------------------------------------------------------------ TypeScript SDK


FILESYSTEM_TOOLS = {
    "create_directory",
    "directory_tree",
    "edit_file",
    "get_file_info",
    "list_allowed_directories",
    "list_directory",
    "list_directory_with_sizes",
    "move_file",
    "read_file",
    "read_media_file",
    "read_multiple_files",
    "read_text_file",
    "search_files",
    "write_file",
}


def test_filesystem_server_over_stdio_with_roots(tmp_path: Path) -> None:
    """server-filesystem (TS SDK) asks for the client's roots and confines itself to them."""
    command, *args = npm_peer("@modelcontextprotocol/server-filesystem")
    initial = tmp_path / "initial"
    root = (tmp_path / "root").resolve()
    initial.mkdir()
    root.mkdir()
    second = (tmp_path / "second").resolve()
    second.mkdir()
    asked = threading.Event()
    current = [root]

    def roots(_ctx: mcpclient.HandlerContext) -> list[mcpclient.Root]:
        asked.set()
        return [mcpclient.Root(path.as_uri(), name=path.name) for path in current]

    definition = make_definition(
        "filesystem",
        command,
        [*args, str(initial)],
        capabilities=ClientCapabilities(roots=True),
        allow_parallel_calls=True,
    )
    with connected(definition, Handlers(roots=roots)) as client:
        catalog = client.catalog()
        assert catalog.server.name == "secure-filesystem-server"
        assert client.status().protocol_version == LATEST_LEGACY
        check_families(catalog, tools=FILESYSTEM_TOOLS)
        assert asked.wait(10), "the server never asked for roots"
        # The server swaps its allowed directories for the roots after it asked.
        assert wait_until(
            lambda: str(root) in client.call_tool("list_allowed_directories").text, timeout=10
        )
        hello = root / "hello.txt"
        written = client.call_tool("write_file", {"path": str(hello), "content": "hi there"})
        assert_ok(written)
        assert hello.read_text() == "hi there"
        read = client.call_tool("read_text_file", {"path": str(hello)})
        assert read.text == "hi there"
        assert read.structured == {"content": "hi there"}
        (root / "dot.png").write_bytes(PNG)
        media = client.call_tool("read_media_file", {"path": str(root / "dot.png")})
        images = [c for c in media.content if isinstance(c, Image)]
        assert [(i.data, i.mime_type) for i in images] == [(PNG, "image/png")]
        (root / "tone.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt ")
        sound = client.call_tool("read_media_file", {"path": str(root / "tone.wav")})
        assert [(a.data[:4], a.mime_type) for a in sound.content if isinstance(a, Audio)] == [
            (b"RIFF", "audio/wav")
        ]
        listing = client.call_tool("list_directory", {"path": str(root)})
        assert "[FILE] hello.txt" in listing.text
        # The initial directory is no longer allowed: a tool error, not an exception.
        outside = client.call_tool("read_text_file", {"path": str(initial / "x.txt")})
        assert outside.is_error
        assert "denied" in outside.text.lower() or "outside" in outside.text.lower()
        # The roots change: told so, the server asks again and follows.
        current.append(second)
        client.notify_roots_changed()
        assert wait_until(
            lambda: str(second) in client.call_tool("list_allowed_directories").text, timeout=10
        )
        # Calls in parallel on one connection, each answered with its own result.
        for index in range(8):
            (second / f"f{index}.txt").write_text(f"file {index}")
        futures = [
            client.submit_tool_call("read_text_file", {"path": str(second / f"f{index}.txt")})
            for index in range(8)
        ]
        assert [f.result(timeout=30).text for f in futures] == [f"file {i}" for i in range(8)]


MEMORY_TOOLS = {
    "add_observations",
    "create_entities",
    "create_relations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "open_nodes",
    "read_graph",
    "search_nodes",
}
GRAPH_URI = "memory://knowledge-graph"


def test_memory_server_over_stdio(tmp_path: Path) -> None:
    """server-memory (TS SDK): tools with structured results, a resource, a subscription."""
    command, *args = npm_peer("@modelcontextprotocol/server-memory")
    memory_file = tmp_path / "memory.jsonl"
    events = Events()
    definition = make_definition(
        "memory", command, args, env={"MEMORY_FILE_PATH": str(memory_file)}
    )
    with connected(definition, Handlers(event=events)) as client:
        catalog = client.catalog()
        assert catalog.server.name == "memory-server"
        check_families(
            catalog, tools=MEMORY_TOOLS, resources={GRAPH_URI}, declared=("tools", "resources")
        )
        assert catalog.capabilities.resources_subscribe
        assert catalog.resources[0].mime_type == "application/json"
        client.subscribe(GRAPH_URI)
        created = client.call_tool(
            "create_entities",
            {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote"]}]},
        )
        assert_ok(created)
        assert created.structured["entities"][0]["name"] == "Ada"
        related = client.call_tool(
            "create_relations",
            {"relations": [{"from": "Ada", "to": "Ada", "relationType": "knows"}]},
        )
        assert_ok(related)
        found = client.call_tool("search_nodes", {"query": "Ada"})
        assert [e["name"] for e in found.structured["entities"]] == ["Ada"]
        resource = client.read_resource(GRAPH_URI)
        (content,) = resource.contents
        assert isinstance(content, mcpclient.ResourceContent)
        assert content.mime_type == "application/json"
        graph = json.loads(content.text)
        assert [e["name"] for e in graph["entities"]] == ["Ada"]
        assert graph["relations"][0]["relationType"] == "knows"
        assert wait_until(lambda: len(events.of(ResourceUpdated)) >= 2, timeout=10)
        assert {e.uri for e in events.of(ResourceUpdated)} == {GRAPH_URI}
        client.unsubscribe(GRAPH_URI)
    assert "Ada" in memory_file.read_text()


def test_memory_server_killed_is_respawned_with_its_subscription(tmp_path: Path) -> None:
    """A killed server-memory is respawned; the graph file and the subscription carry over."""
    command, *args = npm_peer("@modelcontextprotocol/server-memory")
    events = Events()
    definition = make_definition(
        "memory", command, args, env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    )
    before = child_processes()
    with connected(definition, Handlers(event=events)) as client:
        (first,) = child_processes() - before
        client.subscribe(GRAPH_URI)
        entity = {"name": "Ada", "entityType": "person", "observations": []}
        assert not client.call_tool("create_entities", {"entities": [entity]}).is_error
        assert wait_until(lambda: len(events.of(ResourceUpdated)) == 1, timeout=10)
        os.kill(first, signal.SIGKILL)
        assert wait_until(lambda: bool(events.of(mcpclient.ConnectionRestored)), timeout=30)
        assert client.status().state is State.READY
        (second,) = child_processes() - before - {first}
        graph = client.call_tool("read_graph")
        assert [e["name"] for e in graph.structured["entities"]] == ["Ada"]
        added = client.call_tool(
            "add_observations", {"observations": [{"entityName": "Ada", "contents": ["came back"]}]}
        )
        assert_ok(added)
        # The renewed subscription: the new process notifies too.
        assert wait_until(lambda: len(events.of(ResourceUpdated)) == 2, timeout=10)
        lost = events.of(mcpclient.ConnectionLost)
        assert [e.failure_class for e in lost] == [mcpclient.FailureClass.TRANSPORT_CLOSED]
    assert wait_until_gone([first, second]) == []


def test_sequential_thinking_server_over_stdio() -> None:
    """server-sequential-thinking (TS SDK): one tool; its stderr chatter is not a protocol."""
    command, *args = npm_peer("@modelcontextprotocol/server-sequential-thinking")
    with connected(make_definition("thinking", command, args)) as client:
        catalog = client.catalog()
        assert catalog.server.name == "sequential-thinking-server"
        check_families(catalog, tools={"sequentialthinking"})
        for number in (1, 2):
            result = client.call_tool(
                "sequentialthinking",
                {
                    "thought": f"step {number}",
                    "thoughtNumber": number,
                    "totalThoughts": 2,
                    "nextThoughtNeeded": number < 2,
                },
            )
            assert_ok(result)
            assert result.structured["thoughtNumber"] == number
            assert result.structured["thoughtHistoryLength"] == number
        # Checked against the tool's input schema before anything is sent.
        with pytest.raises(mcpclient.InvalidArgumentsError, match="thoughtNumber"):
            client.call_tool("sequentialthinking", {"thought": "no numbers"})


# ------------------------------------------------------------ Python SDK MCPServer


@pytest.mark.parametrize(("protocol", "expected"), [("auto", MODERN), ("legacy", LATEST_LEGACY)])
def test_time_server_over_stdio(protocol: str, expected: str) -> None:
    """mcp-server-time (SDK 2.x MCPServer) in both eras over stdio."""
    command = venv_peer("py-time", "mcp-server-time")
    definition = make_definition(
        "time",
        command,
        ["--local-timezone", "UTC"],
        protocol=protocol,
        env={**tagged(f"time-{protocol}"), "TZ": "UTC"},
    )
    with connected(definition) as client:
        assert client.status().protocol_version == expected
        catalog = client.catalog()
        assert catalog.server.name == "mcp-time"
        assert catalog.server.version == "2026.10.19"
        # Declared but empty: listed, and nothing in them.
        check_families(
            catalog,
            tools={"convert_time", "get_current_time"},
            declared=("tools", "prompts", "resources"),
        )
        get_time = catalog.tool_by_raw_name("get_current_time")
        assert get_time is not None and get_time.annotations is not None
        assert get_time.annotations.read_only_hint
        now = client.call_tool("get_current_time", {"timezone": "UTC"})
        assert_ok(now)
        assert now.structured["timezone"] == "UTC"
        assert now.structured["is_dst"] is False
        converted = client.call_tool(
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert_ok(converted)
        assert "T21:00:00" in converted.structured["target"]["datetime"]
        assert converted.structured["time_difference"] == "+9.0h"
        bad = client.call_tool("get_current_time", {"timezone": "Nowhere/Atlantis"})
        assert bad.is_error
        assert "Nowhere/Atlantis" in bad.text


# ---------------------------------------------------- Python SDK 1.x low-level Server


SQLITE_TOOLS = {
    "append_insight",
    "create_table",
    "describe_table",
    "list_tables",
    "read_query",
    "write_query",
}


def test_sqlite_server_over_stdio(tmp_path: Path) -> None:
    """mcp-server-sqlite (SDK 1.x low-level Server): tools, a resource, a prompt.

    It declares resources but has no templates handler: the SDK answers
    ``resources/templates/list`` with -32601, which the default profile takes
    as an empty family (issue 14, defect 6).
    """
    command = venv_peer("py-mcp1", "mcp-server-sqlite")
    database = tmp_path / "test.db"
    events = Events()
    definition = make_definition("sqlite", command, ["--db-path", str(database)])
    with connected(definition, Handlers(event=events)) as client:
        catalog = client.catalog()
        assert catalog.server.name == "sqlite"
        check_families(
            catalog,
            tools=SQLITE_TOOLS,
            prompts={"mcp-demo"},
            resources={"memo://insights"},
            declared=("tools", "prompts", "resources"),
            tolerated=True,
        )
        assert Tolerance.MISSING_LIST_METHOD in catalog.applied_tolerances
        assert any("resources/templates/list" in w for w in catalog.warnings)
        (demo,) = catalog.prompts
        assert [(a.name, a.required) for a in demo.arguments] == [("topic", True)]

        created = client.call_tool(
            "create_table", {"query": "CREATE TABLE birds (name TEXT, wings INTEGER)"}
        )
        assert_ok(created)
        wrote = client.call_tool(
            "write_query", {"query": "INSERT INTO birds VALUES ('wren', 2), ('kiwi', 2)"}
        )
        assert_ok(wrote)
        rows = client.call_tool("read_query", {"query": "SELECT name FROM birds ORDER BY name"})
        assert "kiwi" in rows.text and "wren" in rows.text
        assert "birds" in client.call_tool("list_tables").text
        # This server reports its refusals as plain text, not as isError.
        refused = client.call_tool("read_query", {"query": "DELETE FROM birds"})
        assert refused.text.startswith("Error: Only SELECT queries")

        insight = client.call_tool("append_insight", {"insight": "kiwis cannot fly"})
        assert_ok(insight)
        memo = client.read_resource("memo://insights")
        (content,) = memo.contents
        assert isinstance(content, mcpclient.ResourceContent)
        assert "kiwis cannot fly" in content.text

        prompt = client.get_prompt("mcp-demo", {"topic": "birds"})
        assert prompt.messages and prompt.messages[0].role == "user"
        first = prompt.messages[0].content
        assert isinstance(first, Text) and "birds" in first.text
    assert database.is_file()


# --------------------------------------------------------------------------- FastMCP


def test_calculator_server_over_stdio() -> None:
    """mcp-server-calculator (the SDK 1.x FastMCP): one tool, empty prompt and resource families."""
    command = venv_peer("py-mcp1", "mcp-server-calculator")
    with connected(make_definition("calculator", command)) as client:
        catalog = client.catalog()
        assert catalog.server.name == "calculator"
        check_families(catalog, tools={"calculate"}, declared=("tools", "prompts", "resources"))
        (tool,) = catalog.tools
        assert tool.input_schema["required"] == ["expression"]
        assert client.call_tool("calculate", {"expression": "2 * (3 + 4) ^ 2"}).text == "98"
        bad = client.call_tool("calculate", {"expression": "__import__('os')"})
        assert bad.is_error


FSEXT_TOOLS = {
    "fs_copy_directory",
    "fs_copy_file",
    "fs_create_file",
    "fs_delete_file",
    "fs_file_replace",
    "fs_get_file_info",
    "fs_image_crop",
    "fs_image_resize",
    "fs_image_rotate",
    "fs_is_file_exists",
    "fs_list_directory",
    "fs_move_directory",
    "fs_move_file",
    "fs_ocr_extract_text",
    "fs_read_binary_chunk",
    "fs_read_full_text",
    "fs_read_text_range",
    "fs_search_files_by_content",
    "fs_search_in_file_by_content",
    "fs_search_in_files_by_content",
    "fs_write_binary",
    "fs_write_text",
}


def exercise_fsext(client: mcpclient.Client, root: Path, name: str) -> None:
    """The same checks whatever the transport: catalog, write, read, a refused path."""
    catalog = client.catalog()
    assert catalog.server.name == "fsext-mcp-server"
    check_families(catalog, tools=FSEXT_TOOLS, declared=("tools", "prompts", "resources"))
    target = root / f"{name}.txt"
    wrote = client.call_tool("fs_write_text", {"file_path": str(target), "text": f"via {name}"})
    assert_ok(wrote)
    assert target.read_text() == f"via {name}"
    read = client.call_tool("fs_read_full_text", {"file_path": str(target)})
    assert_ok(read)
    assert f"via {name}" in json.dumps(read.structured)
    exists = client.call_tool("fs_is_file_exists", {"file_path": str(target)})
    assert_ok(exists)
    # A refusal is a structured result of its own, not isError.
    escape = client.call_tool("fs_read_full_text", {"file_path": "/etc/hostname"})
    assert escape.structured["res"]["success"] is False
    assert escape.structured["res"]["info"]["code"] == "WORKSPACE_ESCAPE_FORBIDDEN"


@pytest.fixture(scope="module")
def fsext_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fsext-root").resolve()


@pytest.fixture(scope="module")
def fsext_http(
    fsext_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ServerProcess]]:
    """fsext-mcp-server over Streamable HTTP (``/mcp``) and HTTP+SSE (``/sse``).

    Both start at once: FastMCP 3 takes seconds to import.
    """
    command = venv_peer("py-mcp1", "fsext-mcp-server")
    log_dir = tmp_path_factory.mktemp("fsext-logs")
    servers: dict[str, ServerProcess] = {}
    with Spawner(ServerProcess) as start:
        for transport, path in (("http", "/mcp"), ("sse", "/sse")):
            port = free_port()
            argv = [command, "--transport", transport, "--port", str(port)]
            servers[transport] = start(
                [*argv, "--lock-root", str(fsext_root)],
                port=port,
                url=f"http://127.0.0.1:{port}{path}",
                log_dir=log_dir,
                ready=False,
                startup=60.0,
            )
        for server in servers.values():
            server.wait_ready()
        yield servers


def test_fsext_server_over_stdio(fsext_root: Path) -> None:
    """fsext-mcp-server (FastMCP 3) over stdio."""
    command = venv_peer("py-mcp1", "fsext-mcp-server")
    definition = make_definition("fsext", command, ["--lock-root", str(fsext_root)])
    with connected(definition) as client:
        assert client.status().protocol_version == LATEST_LEGACY
        exercise_fsext(client, fsext_root, "stdio")


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_fsext_server_over_streamable_http(
    fsext_http: dict[str, ServerProcess], fsext_root: Path, protocol: str
) -> None:
    """fsext-mcp-server (FastMCP 3, stateless Streamable HTTP): GET is 405, no session."""
    server = fsext_http["http"]
    definition = Definition("fsext", StreamableHTTPTransport(server.url), protocol=protocol)
    with connected(definition) as client:
        status = client.status()
        assert status.transport_kind == "streamablehttp"
        assert status.protocol_version == LATEST_LEGACY
        exercise_fsext(client, fsext_root, f"http-{protocol}")
    assert server.proc.poll() is None, "closing the client must not end a server it did not start"


def test_fsext_streamable_url_falls_back_to_its_legacy_sse(
    fsext_http: dict[str, ServerProcess], fsext_root: Path
) -> None:
    """A Streamable HTTP transport on FastMCP 3's ``/sse`` URL: the POST is refused (405),
    and the legacy profile falls back to HTTP+SSE on the same URL."""
    server = fsext_http["sse"]
    definition = Definition(
        "fsext", StreamableHTTPTransport(server.url), compat=mcpclient.PROFILE_LEGACY
    )
    with connected(definition) as client:
        assert client.status().protocol_version in mcpclient.definition.LEGACY_VERSIONS
        exercise_fsext(client, fsext_root, "fallback")


def test_fsext_server_over_legacy_sse(
    fsext_http: dict[str, ServerProcess], fsext_root: Path
) -> None:
    """fsext-mcp-server (FastMCP 3) over the deprecated HTTP+SSE transport."""
    server = fsext_http["sse"]
    definition = Definition(
        "fsext",
        mcpclient.LegacySSETransport(server.url),
        compat=mcpclient.PROFILE_LEGACY,
    )
    with connected(definition) as client:
        status = client.status()
        assert status.transport_kind == "sse"
        assert status.protocol_version in mcpclient.definition.LEGACY_VERSIONS
        exercise_fsext(client, fsext_root, "sse")
    assert server.proc.poll() is None


def test_a_host_of_third_party_servers_searched_and_called_in_search_mode(tmp_path: Path) -> None:
    """Issue 31 over real servers (TS and Python SDKs): search ranks each server's own tool
    first for its job, and a search-mode turn loads and calls one through run_tool_calls."""
    memory, *memory_args = npm_peer("@modelcontextprotocol/server-memory")
    thinking, *thinking_args = npm_peer("@modelcontextprotocol/server-sequential-thinking")
    servers = {
        "memory": make_definition(
            "memory", memory, memory_args, env={"MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")}
        ),
        "thinking": make_definition("thinking", thinking, thinking_args),
        "time": make_definition(
            "time", venv_peer("py-time", "mcp-server-time"), ["--local-timezone", "UTC"]
        ),
        "calculator": make_definition("calculator", venv_peer("py-mcp1", "mcp-server-calculator")),
        "sqlite": make_definition(
            "sqlite",
            venv_peer("py-mcp1", "mcp-server-sqlite"),
            ["--db-path", str(tmp_path / "s.db")],
        ),
    }
    with mcpclient.Host(servers, required=tuple(servers)).connect() as host:
        best = {
            query: host.search_tools(query, limit=1)[0].model_name
            for query in (
                "calculate a math expression",
                "current time in a timezone",
                "create entities in the knowledge graph",
                "run a SQL select query",
                "reflective problem-solving through thoughts",
            )
        }
        assert best == {
            "calculate a math expression": "mcp__calculator__calculate",
            "current time in a timezone": "mcp__time__get_current_time",
            "create entities in the knowledge graph": "mcp__memory__create_entities",
            "run a SQL select query": "mcp__sqlite__read_query",
            "reflective problem-solving through thoughts": "mcp__thinking__sequentialthinking",
        }, best
        loaded = export.LoadedTools()
        names = [t["name"] for t in export.to_anthropic(host, mode="search", loaded=loaded).tools]
        assert names == ["search_tools", "load_tools"]
        load = {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "load_tools",
                    "input": {"names": ["mcp__calculator__calculate"]},
                }
            ]
        }
        host.run_tool_calls(load, provider="anthropic", loaded=loaded, timeout=20)
        loaded = loaded.after(host, load, provider="anthropic")
        exported = export.to_anthropic(host, mode="search", loaded=loaded).tools
        assert [t["name"] for t in exported][-1] == "mcp__calculator__calculate"
        call = {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "mcp__calculator__calculate",
                    "input": {"expression": "6 * 7"},
                }
            ]
        }
        [answer] = host.run_tool_calls(call, provider="anthropic", loaded=loaded, timeout=20)
        assert answer["content"][0]["content"][0]["text"] == "42"


def test_a_lazy_host_of_third_party_servers_starts_each_on_demand(tmp_path: Path) -> None:
    """Issue 31, servers on demand over real servers (TS and Python SDKs): a second lazy host
    starts none of them at connect, a search starts the one it returns, and a call by a
    stored catalog reaches a server started for it."""
    memory, *memory_args = npm_peer("@modelcontextprotocol/server-memory")
    servers = {
        "memory": make_definition(
            "memory", memory, memory_args, env={"MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")}
        ),
        "time": make_definition(
            "time", venv_peer("py-time", "mcp-server-time"), ["--local-timezone", "UTC"]
        ),
        "calculator": make_definition("calculator", venv_peer("py-mcp1", "mcp-server-calculator")),
    }
    catalogs = tmp_path / "catalogs"
    others = child_processes()  # the module's HTTP servers may be running
    with mcpclient.Host(servers, connect="lazy", catalog_dir=catalogs) as host:
        assert host.failed == {} and set(host.clients) == set(servers)
        tools = {t.model_name for t in host.catalog().tools}

    def states(host: mcpclient.Host) -> dict[str, State]:
        return {name: status.state for name, status in host.status().items()}

    with mcpclient.Host(servers, connect="lazy", catalog_dir=catalogs) as host:
        assert set(states(host).values()) == {State.CONFIGURED}
        assert not child_processes() - others
        assert {t.model_name for t in host.catalog().tools} == tools
        [match] = host.search_tools("calculate a math expression", limit=1)
        assert match.model_name == "mcp__calculator__calculate"
        assert wait_until(lambda: states(host)["calculator"] is State.READY, 30)
        result = host.call_tool(match.model_name, {"expression": "6 * 7"}, timeout=30)
        assert "".join(c.text for c in result.content if isinstance(c, Text)) == "42"
        graph = host.call_tool("mcp__memory__read_graph", {}, timeout=30)  # dormant until now
        assert not graph.is_error
        assert states(host) == {
            "memory": State.READY,
            "time": State.CONFIGURED,
            "calculator": State.READY,
        }
