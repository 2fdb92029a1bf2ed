"""A tool call's HTTP headers come from the catalog it was checked against.

``Mcp-Param-*`` is computed when the call is prepared, from the adopted
generation its arguments were validated with, and travels down with the
request: a generation adopted while the call waits for its turn does not
change the headers it is sent with (the session never looks the tool up
again at send time), and every MRTR round re-sends the same ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import CatalogCandidate
from tests.support import Events
from tests.support.http_servers import ScriptedServer, body_method, header_values, http_definition

from .conftest import SpawnHttp

MODERN = "2026-07-28"


def _ask_with_header() -> dict[str, Any]:
    # The testing server's ask tool (MRTR rounds), one argument mirrored.
    return {
        "name": "ask",
        "description": "input_required rounds; region mirrored into a header.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "inputs": {"type": "array"},
                "rounds": {"type": "integer"},
                "state": {"type": "string"},
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
        },
    }


def _hdr(header_name: str) -> dict[str, Any]:
    return {
        "name": "hdr",
        "description": "One argument mirrored into a header.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": header_name}},
        },
    }


@pytest.fixture
def server(tmp_path: Path, spawn_http: SpawnHttp) -> ScriptedServer:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps({"tools": ["mutate_catalog", "slow", _hdr("Region"), _ask_with_header()]}),
        encoding="utf-8",
    )
    return spawn_http("--era", "dual", "--catalog", str(catalog))


def test_a_queued_call_keeps_the_headers_of_the_catalog_it_was_checked_against(
    server: ScriptedServer,
) -> None:
    events = Events()
    tag = "gen-headers"
    with mcpclient.connect(http_definition(server.url, tag=tag), events.handlers()) as client:
        assert client.status().protocol_version == MODERN
        # The server's hdr now mirrors the argument into Mcp-Param-Zone; the
        # client keeps generation 1 (Region) until the host adopts.
        changed = client.call_tool(
            "mutate_catalog", {"set_tools": ["mutate_catalog", "slow", _hdr("Zone")]}
        )
        assert not changed.is_error
        busy = client.submit_tool_call("slow", {"seconds": 1.5})  # holds the turn
        queued = client.submit_tool_call("hdr", {"region": "eu"})  # checked against gen 1
        candidate = events.wait(CatalogCandidate)[0]
        client.adopt(candidate.generation)  # before the queued call is sent
        assert client.catalog().generation == candidate.generation
        busy.result(10)
        queued.result(10)
    (sent,) = [
        e
        for e in server.records(tag)
        if body_method(e) == "tools/call" and e["body"]["params"]["name"] == "hdr"
    ]
    assert header_values(sent, "Mcp-Param-Region") == ["eu"]
    assert header_values(sent, "Mcp-Param-Zone") == []
    assert header_values(sent, "Mcp-Name") == ["hdr"]


def test_every_mrtr_round_carries_the_calls_headers(server: ScriptedServer) -> None:
    tag = "mrtr-headers"
    with mcpclient.connect(http_definition(server.url, tag=tag)) as client:
        result = client.call_tool(
            "ask", {"inputs": [], "rounds": 2, "state": "s", "region": "=?base64?x?="}
        )
        assert not result.is_error
    sent = [
        e
        for e in server.records(tag)
        if body_method(e) == "tools/call" and e["body"]["params"]["name"] == "ask"
    ]
    assert len(sent) == 3  # the call and its two rounds
    assert [e["body"]["params"].get("requestState") for e in sent] == [None, "r1:s", "r2:s"]
    for entry in sent:
        assert header_values(entry, "Mcp-Name") == ["ask"]
        assert header_values(entry, "Mcp-Param-Region") == ["=?base64?PT9iYXNlNjQ/eD89?="]
