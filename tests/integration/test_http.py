"""The client over Streamable HTTP (both eras) and the deprecated HTTP+SSE transport.

Peers:
    * the official SDK's server (``peers/sdk_server.py --http``, uvicorn on
      127.0.0.1): it routes each POST by its ``MCP-Protocol-Version`` header, so
      one stateful server serves the modern probe (2026-07-28) and pinned legacy
      sessions (2025-11-25); a ``--stateless`` one serves legacy without sessions;
    * server-everything in ``streamableHttp`` mode (legacy only: the client falls
      back from the probe) and in ``sse`` mode (``LegacySSETransport``);
    * the scriptable testing server (``--transport http``) for the hostile cases,
      its ``--record`` file read back to check the headers byte for byte.

Each test tags its requests with a static ``X-Test-Case`` header, so it picks its
own lines out of a shared server's record. Servers whose knobs are process-wide
(``status``, ``--redirect-to``, ``--modern-versions``) are started per test.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

import mcpclient
from mcpclient import (
    CallOpts,
    CancelToken,
    ConfigError,
    ConnectionLost,
    ConnectionRestored,
    DeadlineExceededError,
    FailureClass,
    Handlers,
    LegacySSETransport,
    LimitExceededError,
    Limits,
    PromptRef,
    ProtocolError,
    RequestCancelledError,
    RequestProgress,
    ResourceUpdated,
    ShutdownError,
    State,
    StreamableHTTPTransport,
)
from mcpclient._internal.transport import streamable_http
from tests.support import Events, wait_until
from tests.support.http_servers import (
    TAG_HEADER,
    TESTING_SERVER,
    ScriptedServer,
    ServerProcess,
    body_method,
    everything_over_http,
    header,
    http_definition,
    is_request,
)

from .conftest import REPO_ROOT, SpawnHttp, make_definition

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
#: (test id, Definition.protocol, the version it must negotiate)
ERAS = [("modern", "auto", MODERN), ("legacy", "legacy", LATEST_LEGACY)]
ERA_IDS = [era for era, _, _ in ERAS]
SDK_TOOLS = {"add", "audio", "boom", "echo", "embedded", "image", "link", "slow"}
UNICODE_URI = "test://ünï/ресурс"
SMALL = 64 * 1024  # the limits the oversized answers are measured against
LIMIT_EXCEEDED = {FailureClass.LIMIT_EXCEEDED, FailureClass.CATALOG_OVER_LIMIT}
SESSION_ID = re.compile(r"[0-9a-f]{32}")

#: The shared testing server's catalog: the built-ins, two tools with
#: ``x-mcp-header`` annotations, one with an invalid annotation, and a resource
#: whose URI is not header-safe.
CATALOG: dict[str, Any] = {
    "tools": [
        "echo",
        "add",
        "slow",
        "progress",
        "fail",
        "log",
        "hostile",
        "mutate_catalog",
        {
            "name": "hdr",
            "description": "Mirrors arguments into Mcp-Param-* headers.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                    "note": {"type": "string", "x-mcp-header": "Note"},
                    "plain": {"type": "string"},
                },
            },
        },
        {
            # unevaluatedProperties keeps the client from compiling the schema
            # (DESIGN.md §7 "Validation"), so a null argument reaches the wire.
            "name": "hdrnull",
            "description": "A null argument must not become a header.",
            "inputSchema": {
                "type": "object",
                "unevaluatedProperties": True,
                "properties": {
                    "opt": {"type": "string", "x-mcp-header": "Opt"},
                    "keep": {"type": "string", "x-mcp-header": "Keep"},
                },
            },
        },
        {
            "name": "badhdr",
            "description": "x-mcp-header on an object property: invalid.",
            "inputSchema": {
                "type": "object",
                "properties": {"obj": {"type": "object", "x-mcp-header": "Obj"}},
            },
        },
    ],
    "resources": [
        {"uri": "test://static/hello", "name": "hello", "mimeType": "text/plain"},
        {"uri": UNICODE_URI, "name": "unicode", "mimeType": "text/plain"},
    ],
}


# ----------------------------------------------------------------------------- helpers


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def library_threads() -> list[str]:
    """Live ``mcpclient-*`` threads, the process-wide deadline watcher included."""
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith("mcpclient-")
        and not t.name.startswith("mcpclient-abandoned-")
        and t.is_alive()
    )


def sentinel(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def texts_of(*things: Any) -> str:
    """Every rendering of ``things`` a credential could hide in."""
    parts: list[str] = []
    for thing in things:
        parts.extend((repr(thing), str(thing)))
        if isinstance(thing, BaseException):
            parts.extend(repr(arg) for arg in thing.args)
    return "\n".join(parts)


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-peers")


@pytest.fixture(scope="module")
def dual(log_dir: Path, spawn_shared_http: SpawnHttp) -> ScriptedServer:
    """The shared dual-era testing server, with :data:`CATALOG`."""
    catalog = log_dir / "catalog.json"
    catalog.write_text(json.dumps(CATALOG, ensure_ascii=False), encoding="utf-8")
    return spawn_shared_http("--era", "dual", "--catalog", str(catalog))


@pytest.fixture(scope="module")
def sdk_http(sdk_server_command: list[str], log_dir: Path) -> Iterator[ServerProcess]:
    """The SDK peer over Streamable HTTP, stateful (sessions), with its extras."""
    with ServerProcess(
        [*sdk_server_command, "--http"],
        log_dir=log_dir,
        env={"MCPCLIENT_SDK_PEER_EXTRAS": "1"},
    ) as server:
        yield server


@pytest.fixture(scope="module")
def sdk_http_stateless(sdk_server_command: list[str], log_dir: Path) -> Iterator[ServerProcess]:
    """The SDK peer over Streamable HTTP without sessions."""
    with ServerProcess([*sdk_server_command, "--http", "--stateless"], log_dir=log_dir) as server:
        yield server


@pytest.fixture(scope="module")
def everything_sse(everything_command: list[str], log_dir: Path) -> Iterator[ServerProcess]:
    """server-everything over the deprecated HTTP+SSE transport (``/sse``)."""
    with everything_over_http(everything_command, log_dir, "sse") as server:
        yield server


# ---------------------------------------------------------------------- the official SDK


SDK_CASES = [
    ("modern", "auto", MODERN, "stateful"),
    ("legacy", "legacy", LATEST_LEGACY, "stateful"),
    ("modern-stateless", "auto", MODERN, "stateless"),
    ("legacy-stateless", "legacy", LATEST_LEGACY, "stateless"),
]


@pytest.mark.peer
@pytest.mark.parametrize(
    ("protocol", "expected", "flavor"),
    [case[1:] for case in SDK_CASES],
    ids=[case[0] for case in SDK_CASES],
)
def test_sdk_over_http(
    sdk_http: ServerProcess,
    sdk_http_stateless: ServerProcess,
    protocol: str,
    expected: str,
    flavor: str,
) -> None:
    # Both servers are fixtures of the test (not getfixturevalue), so they start
    # before the leak guard takes its snapshot.
    server = sdk_http if flavor == "stateful" else sdk_http_stateless
    recorder = Events()
    definition = mcpclient.Definition("sdk", StreamableHTTPTransport(server.url), protocol=protocol)
    client = mcpclient.connect(definition, Handlers(event=recorder.on_event), timeout=20)
    try:
        status = client.status()
        assert status.state is State.READY
        assert status.protocol_version == expected
        assert client.catalog().protocol_version == expected
        assert status.transport_kind == "streamablehttp"
        assert status.redacted_origin == server.url.rsplit("/", 1)[0]
        assert status.server.name == "sdk-peer"
        catalog = client.catalog()
        assert {t.raw_name for t in catalog.tools} >= SDK_TOOLS
        assert {p.name for p in catalog.prompts} >= {"greet"}
        assert client.call_tool("echo", {"message": "over http"}).text == "over http"
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.is_error is False
        assert added.structured == {"sum": 5}
        reports = Events()
        slow = client.call_tool(
            "slow", {"seconds": 0.3}, CallOpts(progress=reports.on_progress, timeout=15)
        )
        assert slow.text == "slept 0.3"
        assert wait_until(lambda: len(reports.progress) >= 1)
        assert all(r.binding == "sdk" and r.total == 10.0 for r in reports.progress)
        values = [r.progress for r in reports.progress]
        assert values == sorted(values) and values[-1] <= 10.0
        assert wait_until(lambda: len(recorder.of(RequestProgress)) >= 1)
        prompt = client.get_prompt("greet", {"name": "Ada"})
        assert "Hello, Ada!" in prompt.messages[0].content.text
        assert client.read_resource("test://static/text").contents[0].text == "static text"
        completion = client.complete(PromptRef("greet"), "name", "Al")
        assert tuple(completion.values) == ("Alice", "Albert")
        client.ping()
        assert client.status().state is State.READY
    finally:
        client.close()
    assert client.status().state is State.CLOSED
    with pytest.raises(ShutdownError):
        client.call_tool("echo", {"message": "x"})


@pytest.mark.peer
@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_sdk_subscribe_over_http(sdk_http: ServerProcess, protocol: str, expected: str) -> None:
    recorder = Events()
    definition = mcpclient.Definition(
        "sdk-sub", StreamableHTTPTransport(sdk_http.url), protocol=protocol
    )
    with mcpclient.connect(definition, Handlers(event=recorder.on_event), timeout=20) as client:
        assert client.status().protocol_version == expected
        assert client.catalog().capabilities.resources_subscribe
        uri = "test://static/text"
        client.subscribe(uri)
        assert client.call_tool("touch", {"uri": uri}).text == f"touched {uri}"
        assert wait_until(lambda: any(e.uri == uri for e in recorder.of(ResourceUpdated)))
        client.unsubscribe(uri)
        assert client.status().state is State.READY


# ------------------------------------------------------------------- server-everything


@pytest.mark.peer
def test_everything_streamable_http(everything_http: ServerProcess) -> None:
    recorder = Events()
    definition = mcpclient.Definition("everything", StreamableHTTPTransport(everything_http.url))
    client = mcpclient.connect(definition, Handlers(event=recorder.on_event), timeout=20)
    try:
        status = client.status()
        assert status.state is State.READY
        # Legacy only: its 400 to the modern probe carries no modern error, so the
        # client falls back to the handshake.
        assert status.protocol_version == LATEST_LEGACY
        assert status.transport_kind == "streamablehttp"
        names = {t.raw_name for t in client.catalog().tools}
        assert {"echo", "get-sum", "trigger-long-running-operation"} <= names
        assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        reports = Events()
        result = client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.6, "steps": 3},
            CallOpts(progress=reports.on_progress, timeout=20),
        )
        assert result.is_error is False
        assert "Long running operation completed" in result.text
        assert wait_until(lambda: len(reports.progress) >= 1)
        assert all(r.total == 3.0 for r in reports.progress)
        client.ping()
    finally:
        client.close()
    assert client.status().state is State.CLOSED


@pytest.mark.peer
def test_everything_legacy_sse(everything_sse: ServerProcess) -> None:
    transport = LegacySSETransport(everything_sse.url)
    refused = mcpclient.Definition("everything-sse", transport)
    with pytest.raises(ConfigError):  # the default profile does not permit LEGACY_SSE
        refused.validate()
    definition = mcpclient.Definition("everything-sse", transport, compat=mcpclient.PROFILE_LEGACY)
    client = mcpclient.connect(definition, timeout=20)
    try:
        status = client.status()
        assert status.state is State.READY
        assert status.transport_kind == "sse"
        assert status.protocol_version == LATEST_LEGACY
        assert "echo" in {t.raw_name for t in client.catalog().tools}
        assert client.call_tool("echo", {"message": "sse"}).text == "Echo: sse"
        reports = Events()
        result = client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 2},
            CallOpts(progress=reports.on_progress, timeout=20),
        )
        assert result.is_error is False
        assert wait_until(lambda: len(reports.progress) >= 1)
    finally:
        client.close()
    assert client.status().state is State.CLOSED


@pytest.fixture(scope="module")
def sdk_sse(sdk_server_command: list[str], log_dir: Path) -> Iterator[ServerProcess]:
    """The SDK peer over the deprecated HTTP+SSE transport."""
    with ServerProcess([*sdk_server_command, "--http", "--sse"], log_dir=log_dir) as server:
        yield server


@pytest.mark.peer
def test_sdk_over_legacy_sse(sdk_sse: ServerProcess) -> None:
    definition = mcpclient.Definition(
        "sdk-sse", LegacySSETransport(sdk_sse.url), compat=mcpclient.PROFILE_LEGACY
    )
    with mcpclient.connect(definition, timeout=20) as client:
        status = client.status()
        assert status.state is State.READY
        assert status.transport_kind == "sse"
        assert status.protocol_version in mcpclient.definition.LEGACY_VERSIONS
        assert {t.raw_name for t in client.catalog().tools} >= SDK_TOOLS
        assert client.call_tool("echo", {"message": "over sse"}).text == "over sse"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured == {"sum": 5}
        reports = Events()
        slow = client.call_tool(
            "slow", {"seconds": 0.3}, CallOpts(progress=reports.on_progress, timeout=15)
        )
        assert slow.text == "slept 0.3"
        assert wait_until(lambda: len(reports.progress) >= 1)


@pytest.mark.peer
@pytest.mark.parametrize("peer", ["sdk", "everything"])
def test_a_streamable_url_falls_back_to_legacy_sse(
    sdk_sse: ServerProcess, everything_sse: ServerProcess, peer: str
) -> None:
    # The spec's backwards-compatibility procedure: the POST is refused (4xx),
    # so the client opens the old transport's GET stream on the same URL, but
    # only when the profile permits legacy_sse.
    server = sdk_sse if peer == "sdk" else everything_sse
    transport = StreamableHTTPTransport(server.url)
    with pytest.raises(ProtocolError) as info:
        mcpclient.connect(mcpclient.Definition("no-fallback", transport), timeout=20)
    assert info.value.failure_class is FailureClass.REMOTE_HTTP
    definition = mcpclient.Definition(
        "fallback", transport, compat=mcpclient.PROFILE_LEGACY, protocol="legacy"
    )
    for _ in range(2):  # the second connect goes straight to HTTP+SSE (era cache)
        with mcpclient.connect(definition, timeout=20) as client:
            assert client.status().state is State.READY
            assert client.status().protocol_version in mcpclient.definition.LEGACY_VERSIONS
            # Status names the transport in use, not the one configured.
            assert client.status().transport_kind == "sse"
            assert "echo" in {t.raw_name for t in client.catalog().tools}
        assert client.status().transport_kind == "streamablehttp"  # closed: the configured one


# ------------------------------------------------------------- headers, byte for byte


def test_modern_headers_byte_for_byte(dual: ScriptedServer, tag: str) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag)) as client:
        assert client.status().protocol_version == MODERN
        names = {t.raw_name for t in client.catalog().tools}
        assert {"hdr", "hdrnull"} <= names
        client.call_tool(
            "hdr", {"region": "us west 1", "count": 42, "flag": True, "note": "héllo wörld"}
        )
        client.call_tool(
            "hdr", {"region": " padded ", "count": -7, "flag": False, "plain": "not mirrored"}
        )
        client.call_tool("hdr", {"region": "=?base64?Zm9v?=", "count": 0})
        client.call_tool("hdrnull", {"opt": None, "keep": "kept"})
        assert client.read_resource(UNICODE_URI).contents[0].text == f"Contents of {UNICODE_URI}"
        client.read_resource("test://static/hello")
        client.get_prompt("greet", {"name": "Ada"})
    records = dual.records(tag)
    assert records
    for entry in records:
        # Every modern request is a POST with exactly one of each routing header.
        assert entry["method"] == "POST"
        assert header(entry, "MCP-Protocol-Version") == MODERN
        assert header(entry, "Mcp-Method") == body_method(entry)
        assert header(entry, "Mcp-Session-Id") is None

    def mcp_headers(entry: dict[str, Any]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for key, value in entry["headers"]:
            if key.lower().startswith(("mcp-param-", "mcp-name")):
                assert key.lower() not in found, f"{key} sent twice"
                found[key.lower()] = value.encode("latin-1")  # the bytes on the wire
        return found

    calls = [e for e in records if body_method(e) == "tools/call"]
    assert [mcp_headers(e) for e in calls] == [
        {
            "mcp-name": b"hdr",
            "mcp-param-region": b"us west 1",  # interior spaces stay plain
            "mcp-param-count": b"42",
            "mcp-param-flag": b"true",
            "mcp-param-note": sentinel("héllo wörld").encode("ascii"),
        },
        {
            "mcp-name": b"hdr",
            "mcp-param-region": sentinel(" padded ").encode("ascii"),
            "mcp-param-count": b"-7",
            "mcp-param-flag": b"false",
        },
        {
            "mcp-name": b"hdr",
            "mcp-param-region": sentinel("=?base64?Zm9v?=").encode("ascii"),
            "mcp-param-count": b"0",
        },
        {"mcp-name": b"hdrnull", "mcp-param-keep": b"kept"},  # null: no header
    ]
    reads = [e for e in records if body_method(e) == "resources/read"]
    assert [mcp_headers(e) for e in reads] == [
        {"mcp-name": sentinel(UNICODE_URI).encode("ascii")},
        {"mcp-name": b"test://static/hello"},
    ]
    prompts = [e for e in records if body_method(e) == "prompts/get"]
    assert [mcp_headers(e) for e in prompts] == [{"mcp-name": b"greet"}]
    lists = [e for e in records if body_method(e) in ("tools/list", "server/discover")]
    assert lists and all(mcp_headers(e) == {} for e in lists)


def test_invalid_x_mcp_header_dropped_on_http_kept_on_stdio(
    dual: ScriptedServer, tag: str, tmp_path: Path
) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag)) as client:
        catalog = client.catalog()
        names = {t.raw_name for t in catalog.tools}
        assert "badhdr" not in names
        assert {"hdr", "hdrnull", "echo"} <= names
        assert any("x-mcp-header" in w for w in catalog.warnings), catalog.warnings
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps(CATALOG, ensure_ascii=False), encoding="utf-8")
    definition = make_definition(
        "stdio-hdr",
        TESTING_SERVER[0],
        [*TESTING_SERVER[1:], "--era", "modern", "--catalog", str(catalog_file)],
        cwd=REPO_ROOT,
    )
    with mcpclient.connect(definition) as client:
        catalog = client.catalog()
        assert client.status().protocol_version == MODERN
        assert {"badhdr", "hdr", "hdrnull"} <= {t.raw_name for t in catalog.tools}
        assert not any("x-mcp-header" in w for w in catalog.warnings)


def test_legacy_session_id_echoed_and_deleted_on_close(dual: ScriptedServer, tag: str) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag, protocol="legacy")) as client:
        assert client.status().protocol_version == LATEST_LEGACY
        client.call_tool("echo", {"message": "legacy"})
        client.read_resource(UNICODE_URI)
    records = dual.records(tag)
    first, *rest = records
    assert body_method(first) == "initialize"
    assert header(first, "Mcp-Session-Id") is None
    session_ids = {header(e, "Mcp-Session-Id") for e in rest}
    assert len(session_ids) == 1
    (session_id,) = session_ids
    assert session_id is not None and SESSION_ID.fullmatch(session_id)
    for entry in rest:
        if is_request(entry):
            assert header(entry, "MCP-Protocol-Version") == LATEST_LEGACY
            assert header(entry, "Mcp-Method") is None  # SEP-2243 headers are modern only
    assert {e["method"] for e in rest} == {"POST", "GET", "DELETE"}
    assert rest[-1]["method"] == "DELETE"  # close() ends the session
    assert sum(e["method"] == "DELETE" for e in rest) == 1


def test_legacy_protocol_version_header_on_every_request(dual: ScriptedServer, tag: str) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag, protocol="legacy")) as client:
        client.call_tool("echo", {"message": "x"})
    records = dual.records(tag)
    assert body_method(records[0]) == "initialize"
    missing = [
        (e["method"], body_method(e))
        for e in records[1:]
        if header(e, "MCP-Protocol-Version") != LATEST_LEGACY
    ]
    assert missing == []


# ----------------------------------------------------------------------- lost sessions


def test_expired_session_reinitializes(dual: ScriptedServer, tag: str) -> None:
    recorder = Events()
    definition = http_definition(dual.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition, Handlers(event=recorder.on_event)) as client:
        generation = client.catalog().generation
        expired = client.call_tool("hostile", {"action": "expire_session"})
        assert expired.is_error is False
        # The next request meets the 404. Whatever becomes of it, it is classified.
        try:
            client.call_tool("echo", {"message": "meets the 404"})
        except mcpclient.Error as exc:
            assert exc.failure_class in (FailureClass.INDETERMINATE, FailureClass.TRANSPORT_CLOSED)
        assert wait_until(lambda: len(recorder.of(ConnectionRestored)) == 1)
        lost = recorder.of(ConnectionLost)
        assert len(lost) == 1 and lost[0].retrying is True
        events = recorder.all()
        assert events.index(lost[0]) < events.index(recorder.of(ConnectionRestored)[0])
        assert client.call_tool("echo", {"message": "after"}).text == "after"
        status = client.status()
        assert status.state is State.READY
        assert status.protocol_version == LATEST_LEGACY
        assert client.catalog().generation == generation  # the adopted catalog is kept
    records = dual.records(tag)
    inits = [i for i, e in enumerate(records) if body_method(e) == "initialize"]
    assert len(inits) == 2
    old = {header(e, "Mcp-Session-Id") for e in records[1 : inits[1]]} - {None}
    # The old session's DELETE may arrive after the new initialize: not counted.
    new = {header(e, "Mcp-Session-Id") for e in records[inits[1] + 1 :] if e["method"] != "DELETE"}
    assert len(old) == 1 and len(new) == 1 and old.isdisjoint(new)
    assert header(records[inits[1]], "Mcp-Session-Id") is None  # a fresh initialize
    after = [
        e
        for e in records
        if body_method(e) == "tools/call"
        and e["body"]["params"]["arguments"] == {"message": "after"}
    ]
    assert [header(e, "Mcp-Session-Id") for e in after] == list(new)


def test_request_rejected_by_404_is_resent(dual: ScriptedServer, tag: str) -> None:
    definition = http_definition(dual.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition) as client:
        client.call_tool("hostile", {"action": "expire_session"})
        assert client.call_tool("echo", {"message": "resent"}).text == "resent"
        assert client.read_resource("test://static/hello").contents[0].text
    records = dual.records(tag)
    resent = [
        header(e, "Mcp-Session-Id")
        for e in records
        if body_method(e) == "tools/call"
        and e["body"]["params"]["arguments"] == {"message": "resent"}
    ]
    assert len(resent) == 2 and resent[0] != resent[1]


def test_call_in_flight_when_the_session_is_lost(dual: ScriptedServer, tag: str) -> None:
    definition = http_definition(dual.url, tag=tag, protocol="legacy", allow_parallel_calls=True)
    with mcpclient.connect(definition) as client:
        in_flight = client.submit_tool_call("slow", {"seconds": 1.5}, CallOpts(timeout=20))
        assert wait_until(
            lambda: any(
                body_method(e) == "tools/call" and e["body"]["params"]["name"] == "slow"
                for e in dual.records(tag)
            )
        )
        client.call_tool("hostile", {"action": "expire_session"})
        with contextlib.suppress(mcpclient.Error):
            client.call_tool("echo", {"message": "meets the 404"})
        error = in_flight.exception(timeout=10)
        # The server accepted it: its outcome is unknown, and it is never re-sent.
        assert isinstance(error, mcpclient.Error), error
        assert error.failure_class in (FailureClass.INDETERMINATE, FailureClass.TRANSPORT_CLOSED)
        assert wait_until(lambda: client.status().state is State.READY)
        assert client.call_tool("echo", {"message": "after"}).text == "after"
    slow_calls = [
        e
        for e in dual.records(tag)
        if body_method(e) == "tools/call" and e["body"]["params"]["name"] == "slow"
    ]
    assert len(slow_calls) == 1


def test_legacy_get_stream_is_reopened_after_the_server_ends_it(
    dual: ScriptedServer, tag: str
) -> None:
    def count(method: str, rpc: str | None = None) -> int:
        return sum(
            1
            for e in dual.records(tag)
            if e["method"] == method and (rpc is None or body_method(e) == rpc)
        )

    definition = http_definition(dual.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition) as client:
        assert wait_until(lambda: count("GET") == 1)
        (get,) = [e for e in dual.records(tag) if e["method"] == "GET"]
        session_id = header(get, "Mcp-Session-Id")
        assert session_id is not None
        # A second GET on the session supersedes the client's: the server ends the
        # client's response (as a 2025-11-25 server may at any time).
        with requests.get(
            dual.url,
            headers={"Accept": "text/event-stream", "Mcp-Session-Id": session_id},
            stream=True,
            timeout=5,
        ) as other:
            assert other.status_code == 200
        assert wait_until(lambda: count("GET") >= 2, 3.0), "the GET stream was not re-opened"
        lists = count("POST", "tools/list")
        client.call_tool("mutate_catalog", {"add": "fresh"})
        assert wait_until(lambda: count("POST", "tools/list") > lists, 3.0)


# ------------------------------------------------------------------------ hostile answers


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_oversized_body_is_refused(
    dual: ScriptedServer, tag: str, protocol: str, expected: str
) -> None:
    definition = http_definition(
        dual.url, tag=tag, protocol=protocol, limits=Limits(max_body_bytes=SMALL)
    )
    with mcpclient.connect(definition) as client:
        assert client.status().protocol_version == expected
        started = time.monotonic()
        with pytest.raises(LimitExceededError) as info:
            client.call_tool("hostile", {"action": "oversized_body", "bytes": 4 * SMALL})
        assert time.monotonic() - started < 5
        assert info.value.failure_class in LIMIT_EXCEEDED
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_oversized_sse_event_is_refused(
    dual: ScriptedServer, tag: str, protocol: str, expected: str
) -> None:
    definition = http_definition(
        dual.url, tag=tag, protocol=protocol, limits=Limits(max_frame_bytes=SMALL)
    )
    with mcpclient.connect(definition) as client:
        assert client.status().protocol_version == expected
        with pytest.raises(LimitExceededError) as info:
            client.call_tool("hostile", {"action": "oversized_event", "bytes": 4 * SMALL})
        assert info.value.failure_class in LIMIT_EXCEEDED
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


def test_oversized_sse_event_error_names_the_binding(dual: ScriptedServer, tag: str) -> None:
    definition = http_definition(dual.url, tag=tag, limits=Limits(max_frame_bytes=SMALL))
    with mcpclient.connect(definition) as client:
        with pytest.raises(LimitExceededError) as info:
            client.call_tool("hostile", {"action": "oversized_event", "bytes": 4 * SMALL})
        assert info.value.binding == "web"
        assert info.value.op in ("tools/call", "call_tool")


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_trickling_stream_ends_by_the_deadline(
    dual: ScriptedServer, tag: str, protocol: str, expected: str
) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag, protocol=protocol)) as client:
        assert client.status().protocol_version == expected
        started = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool("hostile", {"action": "trickle", "seconds": 8}, CallOpts(timeout=1.0))
        elapsed = time.monotonic() - started
        assert 0.9 <= elapsed < 1.0 + 1.5
        assert info.value.failure_class is FailureClass.DEADLINE
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_status_500_is_remote_http(
    spawn_http: SpawnHttp, tag: str, protocol: str, expected: str
) -> None:
    server = spawn_http("--era", "dual")
    with mcpclient.connect(http_definition(server.url, tag=tag, protocol=protocol)) as client:
        assert client.status().protocol_version == expected
        # The next HTTP request (any) is answered 500.
        client.call_tool("hostile", {"action": "status", "code": 500, "body": "it broke"})
        with pytest.raises(ProtocolError) as info:
            client.call_tool("echo", {"message": "meets the 500"})
        assert info.value.failure_class is FailureClass.REMOTE_HTTP
        assert "500" in info.value.message
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


@pytest.mark.parametrize("era", ["modern", "dual"])
def test_unsupported_modern_version_in_the_probe(spawn_http: SpawnHttp, tag: str, era: str) -> None:
    # The probe meets 400 + -32022 whose data.supported shares nothing with the
    # client: a recognized modern error, so no fallback to initialize (spec §2.2).
    server = spawn_http("--era", era, "--modern-versions", "2099-01-01")
    started = time.monotonic()
    with pytest.raises(ProtocolError) as info:
        mcpclient.connect(http_definition(server.url, tag=tag), timeout=10)
    assert time.monotonic() - started < 5
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    methods = [body_method(e) for e in server.records(tag)]
    assert methods and set(methods) == {"server/discover"}


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_cancelled_call_closes_its_stream(
    dual: ScriptedServer, tag: str, protocol: str, expected: str
) -> None:
    with mcpclient.connect(http_definition(dual.url, tag=tag, protocol=protocol)) as client:
        assert client.status().protocol_version == expected
        token = CancelToken()
        started = threading.Event()
        future = client.submit_tool_call(
            "progress",
            {"steps": 200, "interval": 0.05},
            CallOpts(progress=lambda _report: started.set(), cancel=token, timeout=30),
        )
        assert started.wait(10), "the call never reported progress"
        cancelled_at = time.monotonic()
        token.cancel()
        error = future.exception(timeout=5)
        assert time.monotonic() - cancelled_at < 1.0
        assert isinstance(error, RequestCancelledError)
        assert error.failure_class is FailureClass.CANCELLED
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"
    calls = [
        e
        for e in dual.records(tag)
        if body_method(e) == "tools/call" and e["body"]["params"]["name"] == "progress"
    ]
    assert len(calls) == 1  # the server saw it, once

    def cancels() -> list[Any]:
        return [
            e["body"]["params"]["requestId"]
            for e in dual.records(tag)
            if body_method(e) == "notifications/cancelled"
        ]

    if protocol == "auto":
        assert cancels() == []  # modern: closing the response stream is the cancellation
    else:
        # Legacy: disconnecting is not cancelling; the notification says it.
        assert wait_until(lambda: cancels() == [calls[0]["body"]["id"]])


# -------------------------------------------------------------------------------- origins


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_redirect_to_another_origin_is_refused(
    spawn_http: SpawnHttp, tag: str, protocol: str
) -> None:
    target = spawn_http("--era", "dual")
    redirecting = spawn_http("--era", "dual", "--redirect-to", target.url)
    definition = http_definition(
        redirecting.url, tag=tag, protocol=protocol, auth=lambda: "never-sent-elsewhere"
    )
    with pytest.raises(ProtocolError) as info:
        mcpclient.connect(definition, timeout=10)
    assert info.value.failure_class is FailureClass.REMOTE_HTTP
    assert target.base not in str(info.value)  # the Location is not echoed
    assert redirecting.records(tag), "the first server saw nothing"
    assert target.records() == []  # nothing, credentials least of all, went elsewhere


def test_legacy_sse_endpoint_on_another_origin_is_refused(spawn_http: SpawnHttp, tag: str) -> None:
    target = spawn_http("--era", "legacy")
    source = spawn_http("--era", "legacy", "--endpoint-url", f"{target.base}/messages?session=x")
    transport = LegacySSETransport(
        f"{source.base}/sse", headers={TAG_HEADER: tag}, auth=lambda: "t"
    )
    definition = mcpclient.Definition("sse", transport, compat=mcpclient.PROFILE_LEGACY)
    with pytest.raises(ProtocolError) as info:
        mcpclient.connect(definition, timeout=10)
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    assert [e["method"] for e in source.records(tag)] == ["GET"]
    assert target.records() == []


# ------------------------------------------------------------------------------- security


@pytest.mark.parametrize(
    "url",
    ["http://example.com/mcp", "http://10.0.0.1:8080/mcp", "http://[2001:db8::1]/mcp"],
)
def test_plain_http_to_a_remote_host_is_refused(url: str) -> None:
    with pytest.raises(ConfigError):
        StreamableHTTPTransport(url)
    with pytest.raises(ConfigError):
        LegacySSETransport(url)
    assert StreamableHTTPTransport(url, allow_insecure_http=True).url == url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/mcp",
        "http://localhost/mcp",
        "http://[::1]:9/mcp",
        "https://example.com/mcp",
    ],
)
def test_loopback_http_and_https_are_accepted(url: str) -> None:
    assert StreamableHTTPTransport(url).url == url


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_credentials_reach_the_server_and_nothing_else(
    spawn_http: SpawnHttp,
    tag: str,
    protocol: str,
    expected: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    static_secret = "hdr-s3cr3t-0f9e8d7c6b5a"
    token_secret = "tok-s3cr3t-a1b2c3d4e5f6"
    server = spawn_http("--era", "dual")
    recorder = Events()
    logs: list[Any] = []
    definition = http_definition(
        server.url,
        tag=tag,
        protocol=protocol,
        headers={"X-Api-Key": static_secret},
        auth=lambda: token_secret,
    )
    errors: list[BaseException] = []
    client = mcpclient.connect(definition, Handlers(event=recorder.on_event, log=logs.append))
    try:
        assert client.status().protocol_version == expected
        client.call_tool("echo", {"message": "hello"})
        client.call_tool("log", {"message": "a server log line", "level": "error"})
        client.call_tool("progress", {"steps": 2}, CallOpts(progress=lambda _r: None))
        client.call_tool("hostile", {"action": "status", "code": 500, "body": "boom"})
        with pytest.raises(ProtocolError) as failed:
            client.call_tool("echo", {"message": "meets the 500"})
        errors.append(failed.value)
        with pytest.raises(DeadlineExceededError) as late:
            client.call_tool("hostile", {"action": "trickle", "seconds": 4}, CallOpts(timeout=0.3))
        errors.append(late.value)
        with pytest.raises(mcpclient.ToolUnavailableError) as unknown:  # not_found
            client.read_resource("test://no/such/thing")
        errors.append(unknown.value)
        rendered = texts_of(client, client.status(), definition, definition.transport)
    finally:
        client.close()
    with pytest.raises(ShutdownError) as closed:
        client.call_tool("echo", {"message": "x"})
    errors.append(closed.value)
    assert wait_until(lambda: any(isinstance(e, mcpclient.StateChanged) for e in recorder.all()))
    records = server.records(tag)
    assert records
    for entry in records:  # every request, GET and DELETE included, carries both
        assert header(entry, "Authorization") == f"Bearer {token_secret}"
        assert header(entry, "X-Api-Key") == static_secret
    secrets = [static_secret, token_secret]
    session_ids = {header(e, "Mcp-Session-Id") for e in records} - {None}
    secrets.extend(s for s in session_ids if s)  # a session id is a secret too (spec §2.21)
    everything_shown = "\n".join(
        [
            rendered,
            texts_of(client, client.status(), *errors, *recorder.all(), *logs),
            caplog.text,
        ]
    )
    for secret in secrets:
        assert secret not in everything_shown


# ---------------------------------------------------------------------------------- leaks


@pytest.mark.parametrize(("protocol", "expected"), [(p, v) for _, p, v in ERAS], ids=ERA_IDS)
def test_nothing_left_after_close(
    dual: ScriptedServer, tag: str, protocol: str, expected: str
) -> None:
    assert wait_until(lambda: library_threads() == [], 5.0), library_threads()
    start = fd_count()
    for _ in range(3):
        definition = http_definition(
            dual.url, tag=tag, protocol=protocol, allow_parallel_calls=True
        )
        client = mcpclient.connect(definition)
        try:
            assert client.status().protocol_version == expected
            futures = [client.submit_tool_call("slow", {"seconds": 0.1}) for _ in range(4)]
            assert [f.result(10).text for f in futures]
            client.subscribe("test://static/hello")
            client.read_resource("test://static/hello")
            assert fd_count() > start  # the connections are open now
        finally:
            client.close()
        # Threads: the HTTP workers, the send lane, the stream readers and the
        # deadline watcher all end after close().
        assert wait_until(lambda: library_threads() == [], 3.0), library_threads()
    # Sockets: back to where it started (three connect/close cycles would show a leak
    # of even one socket per cycle).
    assert wait_until(lambda: fd_count() <= start, 3.0), (start, fd_count())


# ------------------------------------------------------------------ response streams that end early
#
# Legacy: a POST's SSE response that ends after a priming event (an id and a
# ``retry``) is resumed with a GET carrying ``Last-Event-ID``; the answer comes on
# that GET and the request is never sent twice. A stream with no id to resume
# from fails its request at once (a tools/call is indeterminate), not at its
# deadline, and the binding stays up. Modern: a subscriptions/listen stream that
# ends (here cut after a silence, the 5-minute idle limit shortened) is opened
# again and catalog changes keep arriving.


def _rpc(entry: dict[str, Any]) -> str | None:
    body = entry.get("body")
    return body.get("method") if isinstance(body, dict) else None


def _tool(entry: dict[str, Any]) -> str | None:
    body = entry.get("body")
    if isinstance(body, dict) and isinstance(body.get("params"), dict):
        return body["params"].get("name")
    return None


def test_a_dropped_legacy_response_stream_is_resumed(dual: ScriptedServer, tag: str) -> None:
    definition = http_definition(dual.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition) as client:
        result = client.call_tool(
            "hostile", {"action": "drop_stream", "retry": 50}, CallOpts(timeout=20)
        )
        assert not result.is_error
        assert "drop_stream" in result.text
        records = dual.records(tag)
        posts = [e for e in records if e["method"] == "POST" and _tool(e) == "hostile"]
        assert len(posts) == 1, "the call was sent again instead of resumed"
        resumed = [e for e in records if e["method"] == "GET" and header(e, "Last-Event-ID")]
        assert len(resumed) == 1
        assert header(resumed[0], "Mcp-Session-Id") == header(posts[0], "Mcp-Session-Id")
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


def test_a_stream_without_ids_fails_its_call_at_once(dual: ScriptedServer, tag: str) -> None:
    # Modern streams carry no event ids: nothing to resume from. The call must
    # not wait for its (long) deadline, and it may have run: indeterminate.
    definition = http_definition(dual.url, tag=tag)
    with mcpclient.connect(definition) as client:
        with pytest.raises(mcpclient.IndeterminateError) as info:
            client.call_tool(
                "hostile", {"action": "drop_stream", "retry": 50}, CallOpts(timeout=60)
            )
        assert "ended the response stream" in info.value.message
        posts = [e for e in dual.records(tag) if e["method"] == "POST" and _tool(e) == "hostile"]
        assert len(posts) == 1, "an indeterminate call must never be sent again"
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "still"}).text == "still"


def test_a_silent_legacy_get_stream_is_cut_and_opened_again(
    dual: ScriptedServer, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real limit is 5 silent minutes; the same code path with 1 second. A
    # half-open connection cannot silently stop the server's messages.
    monkeypatch.setattr(streamable_http, "_STREAM_IDLE", 1.0)

    def gets() -> int:
        return sum(1 for e in dual.records(tag) if e["method"] == "GET")

    recorder = Events()
    definition = http_definition(dual.url, tag=tag, protocol="legacy")
    with mcpclient.connect(definition, Handlers(event=recorder.on_event)) as client:
        assert wait_until(lambda: gets() >= 2, 8.0), "the GET stream was not opened again"
        before = sum(
            1 for e in dual.records(tag) if e["method"] == "POST" and _rpc(e) == "tools/list"
        )
        client.call_tool("mutate_catalog", {"add": "fresh"})
        assert wait_until(
            lambda: (
                sum(
                    1
                    for e in dual.records(tag)
                    if e["method"] == "POST" and _rpc(e) == "tools/list"
                )
                > before
            ),
            8.0,
        )
        assert client.status().state is State.READY
        assert recorder.of(ConnectionLost) == []


def test_a_silent_listen_stream_is_cut_and_opened_again(
    dual: ScriptedServer, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real limit is 5 silent minutes; the same code path with 1 second.
    monkeypatch.setattr(streamable_http, "_STREAM_IDLE", 1.0)

    def listens() -> int:
        return sum(
            1
            for e in dual.records(tag)
            if e["method"] == "POST" and _rpc(e) == "subscriptions/listen"
        )

    def lists() -> int:
        return sum(
            1 for e in dual.records(tag) if e["method"] == "POST" and _rpc(e) == "tools/list"
        )

    recorder = Events()
    definition = http_definition(dual.url, tag=tag)
    with mcpclient.connect(definition, Handlers(event=recorder.on_event)) as client:
        assert client.status().protocol_version == "2026-07-28"
        assert wait_until(lambda: listens() >= 1)
        # Cut after 1 s of silence; the first re-open is immediate, later ones
        # at most every 5 s.
        assert wait_until(lambda: listens() >= 2, 8.0), "the listen was not opened again"
        assert client.status().state is State.READY
        before = lists()
        client.call_tool("mutate_catalog", {"add": "fresh"})
        # The change arrives on a listen opened after a cut (the notification
        # leads to a tools/list), whichever listen is open at that moment.
        assert wait_until(lambda: lists() > before, 8.0)
        bodies = [
            json.dumps(e["body"])
            for e in dual.records(tag)
            if e["method"] == "POST" and _rpc(e) == "subscriptions/listen"
        ]
        assert all("toolsListChanged" in body for body in bodies)
        # Only the stream ended: the binding was never lost (no reconnect).
        assert recorder.of(ConnectionLost) == []


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_a_call_in_flight_when_the_server_dies_says_what_became_of_it(
    spawn_http: SpawnHttp, protocol: str
) -> None:
    # Issue 25, defect 6: the error named the resumption's refused connection
    # ("connection to ... refused") as if the request had never been sent.
    server = spawn_http()
    definition = mcpclient.Definition(
        "web", mcpclient.StreamableHTTPTransport(server.url), protocol=protocol
    )
    with mcpclient.connect(definition) as client:
        started = threading.Event()
        in_flight = client.submit_tool_call(
            "progress",
            {"steps": 100, "interval": 0.1},
            CallOpts(timeout=30, progress=lambda _p: started.set()),
        )
        assert started.wait(10), "no progress arrived"
        os.killpg(server.proc.pid, signal.SIGKILL)
        error = in_flight.exception(timeout=20)
    assert isinstance(error, mcpclient.IndeterminateError), error
    assert not error.message.startswith("connection to"), error.message
    assert "may or may not have run it" in error.message
    assert any(
        words in error.message
        for words in ("reached the server", "in flight", "while reading the response")
    ), error.message
