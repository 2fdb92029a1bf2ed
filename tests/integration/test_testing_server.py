"""The scriptable test server, driven as a real subprocess with raw JSON lines."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
DEFAULT_TOOLS = ["echo", "add", "slow", "progress", "fail", "log", "hostile", "mutate_catalog"]


class ServerProcess:
    """One server subprocess with a reader thread queueing its stdout lines."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpclient.testing.server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO_ROOT,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self._reader = threading.Thread(target=self._read, name="test-server-stdout", daemon=True)
        self._err_reader = threading.Thread(
            target=self._read_err, name="test-server-stderr", daemon=True
        )
        self._reader.start()
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            self.stderr += chunk

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv_raw(self, timeout: float = 5.0) -> bytes | None:
        return self.lines.get(timeout=timeout)

    def recv(self, timeout: float = 5.0) -> Any:
        line = self.recv_raw(timeout)
        assert line is not None, "server closed stdout"
        return json.loads(line)

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv()

    def initialize(self, version: str = "2025-11-25") -> Any:
        answer = self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def assert_silent(self, seconds: float) -> None:
        with pytest.raises(queue.Empty):
            self.lines.get(timeout=seconds)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)
        self._reader.join(timeout=5)
        self._err_reader.join(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


@pytest.fixture
def spawn() -> Iterator[Any]:
    servers: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        server = ServerProcess(*args)
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.close()


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


def test_legacy_initialize_list_and_echo(spawn: Any) -> None:
    server = spawn("--era", "legacy", "--instructions", "be nice", "--server-version", "9.9")
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


def test_legacy_before_initialize_and_version_fallback(spawn: Any) -> None:
    server = spawn("--era", "legacy")
    assert server.request(1, "tools/list")["error"]["code"] == -32600
    assert server.request(2, "ping")["result"] == {}
    assert server.request(3, "server/discover", {"_meta": META})["error"]["code"] == -32601
    assert server.initialize("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"
    assert server.initialize()["error"]["code"] == -32600  # a second initialize


def test_legacy_batches_only_with_2025_03_26(spawn: Any) -> None:
    server = spawn("--era", "legacy")
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
    other = spawn("--era", "legacy")
    other.initialize("2025-06-18")
    other.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert other.recv()["error"]["code"] == -32600


def test_legacy_log_level_filters_log_tool(spawn: Any) -> None:
    server = spawn("--era", "legacy")
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


def test_capabilities_flag_gates_methods(spawn: Any) -> None:
    server = spawn("--era", "legacy", "--capabilities", "tools")
    assert server.initialize()["result"]["capabilities"] == {"tools": {"listChanged": True}}
    assert server.request(1, "prompts/list")["error"]["code"] == -32601
    assert "tools" in server.request(2, "tools/list")["result"]


# ----------------------------------------------------------------------------- modern


def test_modern_discover_call_and_version_errors(spawn: Any) -> None:
    server = spawn("--era", "modern", "--instructions", "hello")
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


def test_modern_progress_and_cancel(spawn: Any) -> None:
    server = spawn("--era", "modern")
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


def test_dual_serves_both_eras(spawn: Any) -> None:
    server = spawn("--era", "dual")
    assert server.request(1, "server/discover", {"_meta": META})["result"]["supportedVersions"]
    assert server.initialize("2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    legacy = server.request(2, "tools/call", call("echo", {"message": "old"}))
    assert text_of(legacy) == "old"
    assert "resultType" not in legacy["result"]
    modern = server.request(3, "tools/call", call("echo", {"message": "new"}, META))
    assert text_of(modern) == "new"
    assert modern["result"]["resultType"] == "complete"
    assert server.request(4, "ping")["result"] == {}


def test_dual_modern_first_without_initialize(spawn: Any) -> None:
    server = spawn("--era", "dual")
    assert text_of(server.request(1, "tools/call", call("echo", {"message": "m"}, META))) == "m"
    assert server.request(2, "tools/list")["error"]["code"] == -32600  # legacy, not initialized


# ----------------------------------------------------------------------------- catalog


def test_pagination_walks_every_page(spawn: Any) -> None:
    server = spawn("--era", "legacy", "--page-size", "3")
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


def test_catalog_file_and_record(spawn: Any, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps({"tools": ["echo", {"name": "custom", "inputSchema": {"type": "object"}}]})
    )
    record = tmp_path / "record.jsonl"
    server = spawn("--era", "legacy", "--catalog", str(catalog), "--record", str(record))
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


def test_hostile_garbage_line_then_answer(spawn: Any) -> None:
    server = spawn("--era", "legacy")
    server.initialize()
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hostile("garbage_line")}
    )
    assert server.recv_raw() == b"this is not json\n"
    assert server.recv()["id"] == 1
    server.send_raw(b"not json either\n")
    assert server.recv()["error"]["code"] == -32700
    assert server.request(2, "ping")["result"] == {}


def test_hostile_duplicate_and_unknown_id(spawn: Any) -> None:
    server = spawn("--era", "modern")
    params = dict(hostile("duplicate_response"), _meta=META)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    first, second = server.recv(), server.recv()
    assert first == second
    assert first["id"] == 1
    params = dict(hostile("unknown_id"), _meta=META)
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    assert server.recv()["id"] == 987654321
    assert server.recv()["id"] == 2


def test_hostile_exit_mid_call(spawn: Any) -> None:
    server = spawn("--era", "legacy")
    server.initialize()
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hostile("exit", code=7)}
    )
    assert server.recv_raw() is None
    assert server.proc.wait(timeout=5) == 7


def test_hostile_invalid_utf8_and_deep_json(spawn: Any) -> None:
    server = spawn("--era", "legacy")
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


def test_hostile_server_request_round_trip(spawn: Any) -> None:
    server = spawn("--era", "legacy")
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


def test_mutate_catalog_notifies_legacy_client(spawn: Any) -> None:
    server = spawn("--era", "legacy")
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


def test_exits_cleanly_on_stdin_eof(spawn: Any) -> None:
    server = spawn("--era", "legacy")
    server.initialize()
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    started = time.monotonic()
    assert server.proc.wait(timeout=5) == 0
    assert time.monotonic() - started < 2
