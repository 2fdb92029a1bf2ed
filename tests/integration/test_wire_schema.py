"""Every message our client writes validates against the official JSON schema.

The scriptable test server records each inbound message (``--record FILE``):
that is exactly what the client sent. Each recorded message is validated
against ``tests/fixtures/spec/<version>/schema.json`` of the version it speaks (the
version named in its modern ``_meta``, else the negotiated legacy version):
once as a JSON-RPC message, and once as the specific client request or
notification its method names in that schema (``CallToolRequest``,
``DiscoverRequest``, ``CancelledNotification`` …).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpclient
from mcpclient import CallOpts, CancelToken, PromptRef, RequestCancelledError, State

from .conftest import REPO_ROOT, make_definition

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "mcpclient", "version": mcpclient.__version__}

# (server era, Definition.protocol, the version the client must negotiate)
RUNS = [
    ("modern", "auto", MODERN),
    ("modern", MODERN, MODERN),
    ("legacy", "auto", LATEST_LEGACY),  # the modern probe first, then the handshake
    ("legacy", "legacy", LATEST_LEGACY),
    ("legacy", "2025-11-25", "2025-11-25"),
    ("legacy", "2025-06-18", "2025-06-18"),
    ("legacy", "2025-03-26", "2025-03-26"),
    ("legacy", "2024-11-05", "2024-11-05"),
]


class Schema:
    """One version's schema: validators for a named definition, and the client's methods."""

    def __init__(self, path: Path) -> None:
        self.document = json.loads(path.read_text(encoding="utf-8"))
        self.defs_key = "$defs" if "$defs" in self.document else "definitions"
        self.defs: dict[str, Any] = self.document[self.defs_key]
        cls = jsonschema.validators.validator_for(self.document)
        cls.check_schema(self.document)
        self._cls = cls
        self.requests = self._methods("ClientRequest")
        self.notifications = self._methods("ClientNotification")

    def _methods(self, union: str) -> dict[str, str]:
        """``method -> definition name`` for every member of a client union."""
        node = self.defs[union]
        refs = [m["$ref"] for m in node["anyOf"]] if "anyOf" in node else None
        members = [ref.rsplit("/", 1)[1] for ref in refs] if refs else [union]
        table = {}
        for name in members:
            method = self.defs[name]["properties"]["method"]["const"]
            table[method] = name
        return table

    def errors(self, definition: str, instance: Any) -> list[str]:
        """Validation errors of ``instance`` against ``#/<defs>/<definition>``."""
        assert definition in self.defs, f"the schema has no {definition}"
        schema = dict(self.document)
        schema["$ref"] = f"#/{self.defs_key}/{definition}"
        validator = self._cls(schema)
        return [
            f"{definition}: {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator.iter_errors(instance)
        ]


@pytest.fixture(scope="module")
def schemas(spec_dir: Path) -> Iterator[Any]:
    @cache
    def load(version: str) -> Schema:
        path = spec_dir / version / "schema.json"
        assert path.is_file(), f"{path} is not vendored (tests/fixtures/spec/README.md)"
        return Schema(path)

    yield load


def message_version(message: dict[str, Any], negotiated: str) -> str:
    """The version a message speaks: its modern ``_meta`` version, else the negotiated one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get(META_VERSION), str):
        return str(meta[META_VERSION])
    return negotiated


def validate(schemas: Any, message: Any, negotiated: str) -> list[str]:
    """Every schema violation of one recorded message (empty: valid)."""
    if not isinstance(message, dict) or "_invalid" in message:
        return [f"not a JSON object: {message!r}"]
    version = message_version(message, negotiated)
    schema: Schema = schemas(version)
    problems = [f"[{version}] {p}" for p in schema.errors("JSONRPCMessage", message)]
    method = message.get("method")
    if "id" in message and method is not None:
        problems += [f"[{version}] {p}" for p in schema.errors("JSONRPCRequest", message)]
        name = schema.requests.get(method)
        if name is None:
            return [*problems, f"[{version}] {method!r} is not a client request in {version}"]
        problems += [f"[{version}] {p}" for p in schema.errors(name, message)]
    elif method is not None:
        problems += [f"[{version}] {p}" for p in schema.errors("JSONRPCNotification", message)]
        name = schema.notifications.get(method)
        if name is None:
            return [*problems, f"[{version}] {method!r} is not a client notification in {version}"]
        problems += [f"[{version}] {p}" for p in schema.errors(name, message)]
    else:
        problems.append(f"[{version}] the client sent a response: {message!r}")
    return problems


def python_path() -> str:
    """The child's PYTHONPATH: this checkout first, so it runs the code under test."""
    return os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))


def recorded_server(tmp_path: Path, era: str, protocol: str) -> tuple[mcpclient.Definition, Path]:
    record = tmp_path / "inbound.jsonl"
    definition = make_definition(
        "wire",
        sys.executable,
        ["-m", "mcpclient.testing.server", "--era", era, "--record", str(record)],
        protocol=protocol,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": python_path()},
    )
    return definition, record


def exercise(client: mcpclient.Client) -> None:
    """Connect has happened; run every kind of call whose wire form we check."""
    assert client.call_tool("echo", {"message": "wire"}).text == "wire"
    reports: list[mcpclient.Progress] = []
    client.call_tool(
        "progress", {"steps": 2, "interval": 0.01}, CallOpts(progress=reports.append, timeout=10)
    )
    client.ping()
    client.get_prompt("greet", {"name": "Ada"})
    client.read_resource("test://static/hello")
    if client.catalog().capabilities.completions:
        client.complete(PromptRef("greet"), "name", "A")
    token = CancelToken()
    # Cancel once the server has surely started: at its first progress report.
    with pytest.raises(RequestCancelledError):
        client.call_tool(
            "progress",
            {"steps": 50, "interval": 0.1},
            CallOpts(progress=lambda _r: token.cancel("wire test"), cancel=token, timeout=10),
        )


def read_record(record: Path) -> list[Any]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize(
    ("era", "protocol", "expected"), RUNS, ids=[f"{era}-{proto}" for era, proto, _ in RUNS]
)
def test_every_client_message_matches_the_schema(
    tmp_path: Path, schemas: Any, era: str, protocol: str, expected: str
) -> None:
    definition, record = recorded_server(tmp_path, era, protocol)
    client = mcpclient.connect(definition)
    try:
        assert client.status().protocol_version == expected
        exercise(client)
    finally:
        client.close()
    assert client.status().state is State.CLOSED
    messages = read_record(record)
    problems = [
        f"message {index} ({message.get('method') if isinstance(message, dict) else '?'}): {p}"
        for index, message in enumerate(messages)
        for p in validate(schemas, message, expected)
    ]
    assert problems == []

    methods = [m.get("method") for m in messages]
    requests = [m for m in messages if "id" in m]
    ids = [m["id"] for m in requests]
    assert len(ids) == len(set(ids)), "a request id was reused"
    assert methods.count("tools/call") == 3
    assert {"prompts/get", "resources/read", "tools/list"} <= set(methods)

    # The progress-requesting call carries a progress token; the others do not.
    calls = [m for m in messages if m.get("method") == "tools/call"]
    tokens = [(c["params"].get("_meta") or {}).get("progressToken") for c in calls]
    assert tokens[0] is None and tokens[1] is not None and tokens[2] is not None
    assert tokens[1] != tokens[2]

    # The cancelled call: one notifications/cancelled naming its id, after it. (Ending a
    # modern subscriptions/listen stream is the only other use the client may make of it.)
    listens = {m["id"] for m in messages if m.get("method") == "subscriptions/listen"}
    cancels = [
        m
        for m in messages
        if m.get("method") == "notifications/cancelled" and m["params"]["requestId"] not in listens
    ]
    assert len(cancels) == 1
    assert cancels[0]["params"]["requestId"] == calls[2]["id"]
    assert cancels[0]["params"]["reason"] == "wire test"
    assert messages.index(cancels[0]) > messages.index(calls[2])

    if expected == MODERN:
        check_modern(messages)
    else:
        check_legacy(messages, protocol, expected)


@pytest.mark.parametrize(
    ("version", "message"),
    [
        # 2026-07-28 requests must carry _meta with the version and capabilities.
        (MODERN, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
        (MODERN, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),  # no ping in 2026-07-28
        (MODERN, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        (LATEST_LEGACY, {"jsonrpc": "1.0", "id": 1, "method": "ping"}),
        (LATEST_LEGACY, {"jsonrpc": "2.0", "id": None, "method": "ping"}),
        (LATEST_LEGACY, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}),
        (LATEST_LEGACY, {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}),
        ("2024-11-05", {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {}}),
        ("2024-11-05", {"jsonrpc": "2.0", "id": 1, "result": {}}),  # we never answer
        ("2024-11-05", {"_invalid": "not json"}),
    ],
)
def test_the_checker_rejects_malformed_messages(
    schemas: Any, version: str, message: dict[str, Any]
) -> None:
    assert validate(schemas, message, version) != []


def check_modern(messages: list[dict[str, Any]]) -> None:
    assert "initialize" not in [m.get("method") for m in messages]
    assert messages[0]["method"] == "server/discover"
    for message in messages:
        if "id" not in message:
            continue
        meta = message["params"]["_meta"]
        assert meta[META_VERSION] == MODERN, message
        assert isinstance(meta[META_CAPABILITIES], dict), message
        assert meta[META_CLIENT_INFO] == CLIENT_INFO, message
    # ping on a modern server is a server/discover round trip (ping does not exist there).
    methods = [m.get("method") for m in messages]
    assert "ping" not in methods
    assert methods.count("server/discover") >= 2
    # The only client notification in 2026-07-28 is notifications/cancelled.
    assert {m["method"] for m in messages if "id" not in m} == {"notifications/cancelled"}


def check_legacy(messages: list[dict[str, Any]], protocol: str, expected: str) -> None:
    methods = [m.get("method") for m in messages]
    if protocol == "auto":
        # The era probe comes first and is a well-formed modern request.
        probe = messages[0]
        assert probe["method"] == "server/discover"
        assert probe["params"]["_meta"][META_CLIENT_INFO] == CLIENT_INFO
        messages = messages[1:]
        methods = methods[1:]
    assert "server/discover" not in methods
    initialize = messages[0]
    assert initialize["method"] == "initialize"
    assert initialize["params"]["protocolVersion"] == expected
    assert initialize["params"]["clientInfo"] == CLIENT_INFO
    assert messages[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert "ping" in methods
    # No modern envelope on the legacy wire.
    for message in messages:
        meta = (message.get("params") or {}).get("_meta") or {}
        assert not [k for k in meta if k.startswith("io.modelcontextprotocol/")], message


@pytest.mark.parametrize("protocol", [LATEST_LEGACY, MODERN])
def test_extension_declarations_match_the_schema(
    tmp_path: Path, schemas: Any, protocol: str
) -> None:
    """Issue 19: declared extensions (initialize capabilities, or every modern request's)."""
    record = tmp_path / "inbound.jsonl"
    definition = make_definition(
        "wire",
        sys.executable,
        ["-m", "mcpclient.testing.server", "--apps", "--record", str(record)],
        protocol=protocol,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": python_path()},
        extensions={"io.modelcontextprotocol/skills": {}, "io.modelcontextprotocol/ui": {}},
    )
    with mcpclient.connect(definition) as client:
        client.read_resource("ui://charts/view.html")
        client.call_tool("show_chart", {"series": "a"})
    messages = read_record(record)
    first = messages[0]["params"]
    caps = first["capabilities"] if protocol != MODERN else first["_meta"][META_CAPABILITIES]
    assert set(caps["extensions"]) == {
        "io.modelcontextprotocol/skills",
        "io.modelcontextprotocol/ui",
    }
    problems = [p for message in messages for p in validate(schemas, message, protocol)]
    assert problems == []
