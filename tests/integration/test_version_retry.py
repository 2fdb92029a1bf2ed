"""A version refusal that lists a common version is retried once (issue 14, defect 2).

A rolling deploy can reach an older instance once: it answers -32022
(UnsupportedProtocolVersion) with ``data.supported``, or, for the legacy
``initialize``, -32602 with the same data (the 2025-11-25 spec's example). The
client picks the highest version both sides support and sends once more,
inside the same deadline; only when there is no common version, or the retry
is refused too, does it fail, as ``unsupported_protocol``.

The testing server produces the refusals: ``--reject-versions N`` (the first N
version-naming requests: the probe, ``initialize``) and its runtime control
``reject_versions`` (the next requests of one method), over stdio and HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    CatalogRefreshed,
    CatalogRejected,
    FailureClass,
    ProtocolError,
    State,
    StreamableHTTPTransport,
    connect,
)
from mcpclient._internal.client.lifecycle import connection
from tests.support.http_servers import ScriptedServer, body_method, header, is_request

from .conftest import SpawnHttp
from .engine_support import MODERN, Recording, definition, text_of
from .test_catalog import Events

LATEST_LEGACY = "2025-11-25"


def discover_requests(rec: Recording) -> list[dict[str, Any]]:
    return rec.requests("server/discover")


# ------------------------------------------------------------------------ stdio, at connect


def test_the_modern_probe_is_retried_after_one_refusal(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--reject-versions", "1", record=rec.path)) as client:
        assert client.status().protocol_version == MODERN
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"
    probes = discover_requests(rec)
    assert len(probes) == 2
    versions = [p["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] for p in probes]
    assert versions == [MODERN, MODERN]
    assert "initialize" not in rec.methods()  # a modern refusal never falls back


def test_a_probe_refused_twice_is_unsupported_and_never_falls_back(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with pytest.raises(ProtocolError) as info:
        connect(definition("--reject-versions", "2", record=rec.path))
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert info.value.op == "server/discover"
    assert "again" in info.value.message
    assert len(discover_requests(rec)) == 2
    assert "initialize" not in rec.methods()


def test_no_common_modern_version_is_refused_without_a_retry(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with pytest.raises(ProtocolError) as info:
        connect(definition("--era", "modern", "--modern-versions", "2099-01-01", record=rec.path))
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert "2099-01-01" in info.value.message
    assert len(discover_requests(rec)) == 1


@pytest.mark.parametrize("protocol", ["legacy", LATEST_LEGACY])
def test_initialize_is_retried_after_one_refusal(protocol: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "legacy", "--reject-versions", "1", record=rec.path)
    with connect(mcpclient.Definition(defn.name, defn.transport, protocol=protocol)) as client:
        assert client.status().protocol_version == LATEST_LEGACY
        assert client.call_tool("echo", {"message": "ok"}).text == "ok"
    offers = [r["params"]["protocolVersion"] for r in rec.requests("initialize")]
    assert offers == [LATEST_LEGACY, LATEST_LEGACY]


def test_initialize_is_retried_at_the_highest_common_version(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    flags = ("--era", "legacy", "--legacy-versions", "2024-11-05,2025-03-26")
    defn = definition(*flags, "--reject-versions", "1", record=rec.path, protocol="legacy")
    with connect(defn) as client:
        assert client.status().protocol_version == "2025-03-26"
    offers = [r["params"]["protocolVersion"] for r in rec.requests("initialize")]
    assert offers == [LATEST_LEGACY, "2025-03-26"]


def test_a_pinned_version_the_server_does_not_list_is_unsupported(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    flags = ("--era", "legacy", "--legacy-versions", "2025-03-26")
    defn = definition(*flags, "--reject-versions", "1", record=rec.path, protocol=LATEST_LEGACY)
    with pytest.raises(ProtocolError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert info.value.op == "initialize"
    assert "2025-03-26" in info.value.message
    assert len(rec.requests("initialize")) == 1


def test_initialize_refused_twice_is_unsupported(tmp_path: Path) -> None:
    defn = definition("--era", "legacy", "--reject-versions", "2", protocol="legacy")
    with pytest.raises(ProtocolError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert "again" in info.value.message


# ------------------------------------------------------------------------ stdio, one request


@pytest.fixture
def modern(tmp_path: Path) -> Iterator[tuple[mcpclient.Client, Recording]]:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        yield client, rec


def reject_next(client: mcpclient.Client, method: str, **spec: Any) -> None:
    result = client.call_tool(
        "mutate_catalog", {"reject_versions": {"method": method, "count": 1, **spec}}
    )
    assert not result.is_error, text_of(result)


def test_a_refused_submitted_call_is_sent_once_more_and_succeeds(
    modern: tuple[mcpclient.Client, Recording],
) -> None:
    """submit_tool_call follows call_tool's rule (issue 26, defect 4): retried, not fatal."""
    client, rec = modern
    reject_next(client, "tools/call")
    future = client.submit_tool_call("echo", {"message": "submitted"}, CallOpts(timeout=5))
    assert future.result(timeout=10).text == "submitted"
    sent = echo_calls(rec, "submitted")
    assert len(sent) == 2 and sent[0]["id"] != sent[1]["id"]
    assert client.status().state is State.READY


def test_a_submitted_call_refused_twice_is_unsupported(
    modern: tuple[mcpclient.Client, Recording],
) -> None:
    client, rec = modern
    reject_next(client, "tools/call", count=2)
    future = client.submit_tool_call("echo", {"message": "twice"}, CallOpts(timeout=5))
    error = future.exception(timeout=10)
    assert isinstance(error, ProtocolError), error
    assert error.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert len(echo_calls(rec, "twice")) == 2


def echo_calls(rec: Recording, message: str) -> list[dict[str, Any]]:
    return [
        r
        for r in rec.requests("tools/call")
        if (r.get("params") or {}).get("arguments") == {"message": message}
    ]


def test_a_refused_call_is_sent_once_more_and_succeeds(
    modern: tuple[mcpclient.Client, Recording],
) -> None:
    client, rec = modern
    reject_next(client, "tools/call")
    assert client.call_tool("echo", {"message": "retried"}, CallOpts(timeout=5)).text == "retried"
    sent = echo_calls(rec, "retried")
    assert len(sent) == 2
    assert sent[0]["id"] != sent[1]["id"]
    for request in sent:
        assert request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert client.status().state is State.READY


def test_every_request_kind_is_retried(modern: tuple[mcpclient.Client, Recording]) -> None:
    client, rec = modern
    reject_next(client, "prompts/get")
    assert client.get_prompt("greet", {"name": "Ada"}).messages
    reject_next(client, "resources/read")
    assert client.read_resource("test://static/hello").contents
    assert len(rec.requests("prompts/get")) == 2
    assert len(rec.requests("resources/read")) == 2


def test_a_call_refused_twice_fails_as_unsupported(
    modern: tuple[mcpclient.Client, Recording],
) -> None:
    client, rec = modern
    reject_next(client, "tools/call", count=2)
    with pytest.raises(ProtocolError) as info:
        client.call_tool("echo", {"message": "twice"})
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert info.value.op == "call_tool"
    assert "again" in info.value.message
    assert len(echo_calls(rec, "twice")) == 2
    # The binding is still usable.
    assert client.call_tool("echo", {"message": "later"}).text == "later"


def test_a_call_with_no_common_version_is_not_retried(
    modern: tuple[mcpclient.Client, Recording],
) -> None:
    client, rec = modern
    reject_next(client, "tools/call", supported=["2099-01-01", "1999-01-01"])
    with pytest.raises(ProtocolError) as info:
        client.call_tool("echo", {"message": "none"})
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert "2099-01-01" in info.value.message
    assert len(echo_calls(rec, "none")) == 1


def test_a_refused_list_on_refresh_is_retried(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    with connect(definition("--era", "modern", record=rec.path), events.handlers()) as client:
        before = len(rec.requests("tools/list"))
        reject_next(client, "tools/list")
        client.call_tool("mutate_catalog", {"notify": "tools"})
        refreshed = events.wait(CatalogRefreshed)[0]
        assert refreshed.digest == client.catalog().digest
        assert events.of(CatalogRejected) == []
        assert len(rec.requests("tools/list")) == before + 2


# ------------------------------------------------------------------------ HTTP


def posted(server: ScriptedServer, method: str) -> list[dict[str, Any]]:
    return [e for e in server.records() if is_request(e) and body_method(e) == method]


def test_http_probe_and_call_are_retried(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--reject-versions", "1")
    defn = mcpclient.Definition("web", StreamableHTTPTransport(server.url))
    with connect(defn) as client:
        assert client.status().protocol_version == MODERN
        reject_next(client, "tools/call")
        assert client.call_tool("echo", {"message": "web"}).text == "web"
    probes = posted(server, "server/discover")
    assert len(probes) == 2
    for entry in probes:
        assert header(entry, "MCP-Protocol-Version") == MODERN
    calls = [e for e in posted(server, "tools/call") if e["body"]["params"]["name"] == "echo"]
    assert len(calls) == 2
    assert "initialize" not in [body_method(e) for e in server.records()]


def test_http_initialize_is_retried(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "legacy", "--reject-versions", "1")
    defn = mcpclient.Definition("web", StreamableHTTPTransport(server.url), protocol="legacy")
    with connect(defn) as client:
        assert client.status().protocol_version == LATEST_LEGACY
        assert client.call_tool("echo", {"message": "web"}).text == "web"
    assert len(posted(server, "initialize")) == 2


def test_http_no_common_version_is_unsupported(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "modern", "--modern-versions", "2099-01-01")
    defn = mcpclient.Definition("web", StreamableHTTPTransport(server.url))
    with pytest.raises(ProtocolError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert len(posted(server, "server/discover")) == 1


def test_the_binding_keeps_the_version_a_retry_chose(
    spawn_http: SpawnHttp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This client speaks one modern version; pretend it speaks an older one too,
    # so that a refusal can name a different common version.
    older = "2026-01-01"
    monkeypatch.setattr(connection, "MODERN_VERSIONS", (older, MODERN))
    server = spawn_http("--era", "modern", "--modern-versions", f"{older},{MODERN}")
    defn = mcpclient.Definition("web", StreamableHTTPTransport(server.url))
    with connect(defn) as client:
        reject_next(client, "tools/call", supported=[older])
        assert client.call_tool("echo", {"message": "switch"}).text == "switch"
        assert client.call_tool("echo", {"message": "kept"}).text == "kept"
    sent = {
        e["body"]["params"]["arguments"]["message"]: e
        for e in posted(server, "tools/call")
        if e["body"]["params"]["name"] == "echo"
    }

    def version_of(entry: dict[str, Any]) -> tuple[str | None, str]:
        meta = entry["body"]["params"]["_meta"]
        return header(entry, "MCP-Protocol-Version"), meta[
            "io.modelcontextprotocol/protocolVersion"
        ]

    # The retry and every later request name the chosen version, header and body alike.
    assert version_of(sent["switch"]) == (older, older)
    assert version_of(sent["kept"]) == (older, older)
    switch_calls = [
        e
        for e in posted(server, "tools/call")
        if e["body"]["params"].get("arguments") == {"message": "switch"}
    ]
    assert [version_of(e) for e in switch_calls] == [(MODERN, MODERN), (older, older)]
