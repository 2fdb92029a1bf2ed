"""The scriptable test server's HTTP mode (``--transport http``), driven with ``requests``."""

from __future__ import annotations

import base64
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.support.http_servers import ScriptedServer

from .conftest import SpawnHttp

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
META = {VERSION_KEY: MODERN, CAPS_KEY: {}}
TIMEOUT = 5.0
SSE = "text/event-stream"


@pytest.fixture(scope="module")
def server(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    """The shared dual-era server (it records to its ``record_path``)."""
    return spawn_shared_http()


# ----------------------------------------------------------------------------- helpers


def rpc(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "_meta": {**META, **meta}}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": f"application/json, {SSE}",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def post(url: str, message: Any, headers: dict[str, str], **kwargs: Any) -> requests.Response:
    return requests.post(url, data=json.dumps(message), headers=headers, timeout=TIMEOUT, **kwargs)


def modern_call(srv: ScriptedServer, rid: Any, name: str, arguments: dict[str, Any]) -> Any:
    response = post(
        srv.url, rpc(rid, "tools/call", call(name, arguments)), modern_headers("tools/call", name)
    )
    assert response.status_code == 200, response.text
    return response.json()


def sse_events(response: requests.Response) -> Iterator[dict[str, str]]:
    """Parse an SSE body incrementally: one dict (fields, ``data`` joined) per event."""
    buffer = b""
    fields: dict[str, str] = {}
    data: list[str] = []
    for chunk in response.iter_content(chunk_size=None):
        buffer += chunk
        while b"\n" in buffer:
            raw, buffer = buffer.split(b"\n", 1)
            line = raw.rstrip(b"\r").decode()
            if not line:
                if data or fields:
                    event = dict(fields)
                    if data:
                        event["data"] = "\n".join(data)
                    yield event
                fields, data = {}, []
            elif not line.startswith(":"):
                name, _sep, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "data":
                    data.append(value)
                else:
                    fields[name] = value


def text_of(message: dict[str, Any]) -> str:
    return str(message["result"]["content"][0]["text"])


class Legacy:
    """A legacy Streamable HTTP session on ``srv``."""

    def __init__(self, srv: ScriptedServer, version: str = "2025-11-25") -> None:
        self.srv = srv
        self.version = version
        self.next_id = 100
        init = rpc(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "http-test", "version": "0"},
            },
        )
        response = post(srv.url, init, {"Content-Type": "application/json"})
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        assert response.json()["result"]["protocolVersion"] == version
        self.sid = response.headers["Mcp-Session-Id"]
        assert response.status_code == 200
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert self.post(initialized).status_code == 202

    def headers(self) -> dict[str, str]:
        return {
            "Accept": f"application/json, {SSE}",
            "Content-Type": "application/json",
            "Mcp-Session-Id": self.sid,
            "MCP-Protocol-Version": self.version,
        }

    def post(self, message: Any, **kwargs: Any) -> requests.Response:
        return post(self.srv.url, message, self.headers(), **kwargs)

    def request(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        self.next_id += 1
        return self.post(rpc(self.next_id, method, params), **kw)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        assert response.status_code == 200, response.text
        return response.json()

    def get(self, **headers: str) -> requests.Response:
        merged = {"Accept": SSE, "Mcp-Session-Id": self.sid, **headers}
        return requests.get(self.srv.url, headers=merged, stream=True, timeout=TIMEOUT)


# ----------------------------------------------------------------------------- modern


def test_modern_json_round_trip(server: ScriptedServer) -> None:
    response = post(
        server.url,
        rpc(1, "tools/call", call("echo", {"message": "hi"})),
        modern_headers("tools/call", "echo"),
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert "Mcp-Session-Id" not in response.headers
    body = response.json()
    assert body["id"] == 1
    assert text_of(body) == "hi"
    assert body["result"]["resultType"] == "complete"
    discover = post(
        server.url, rpc("d", "server/discover", {"_meta": META}), modern_headers("server/discover")
    )
    assert discover.status_code == 200
    assert discover.json()["result"]["supportedVersions"] == [MODERN]


def test_modern_progress_answers_sse(server: ScriptedServer) -> None:
    params = call("progress", {"steps": 3, "interval": 0}, progressToken="tok")
    with post(
        server.url,
        rpc(2, "tools/call", params),
        modern_headers("tools/call", "progress"),
        stream=True,
    ) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"] == SSE
        events = list(sse_events(response))
    assert all("id" not in event for event in events)  # modern streams are not resumable
    messages = [json.loads(event["data"]) for event in events]
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[-1]["id"] == 2
    assert text_of(messages[-1]) == "completed 3 steps"


def test_modern_header_mismatch_is_32020(server: ScriptedServer) -> None:
    message = rpc(3, "tools/call", call("echo", {"message": "x"}))
    cases = [
        modern_headers("tools/list", "echo"),  # Mcp-Method disagrees
        modern_headers("tools/call", "add"),  # Mcp-Name disagrees
        modern_headers("tools/call"),  # Mcp-Name missing
        {**modern_headers("tools/call", "echo"), "MCP-Protocol-Version": "2025-11-25"},
        modern_headers("tools/call", "=?base64?bm9wZQ==?="),  # "nope"
    ]
    for headers in cases:
        response = post(server.url, message, headers)
        assert response.status_code == 400, headers
        body = response.json()
        assert body["id"] == 3
        assert body["error"]["code"] == -32020
        assert "data" not in body["error"]
    # The Base64 sentinel form is decoded; a raw non-ASCII value is not accepted.
    uri = "test://items/café"
    read = rpc(4, "resources/read", {"uri": uri, "_meta": META})
    encoded = "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
    ok = post(server.url, read, modern_headers("resources/read", encoded))
    assert ok.status_code == 200
    assert ok.json()["result"]["contents"][0]["text"] == "Item café"
    raw = post(server.url, read, modern_headers("resources/read", uri))
    assert raw.status_code == 400
    assert raw.json()["error"]["code"] == -32020


def test_modern_unsupported_version_and_unknown_method(server: ScriptedServer) -> None:
    meta = {VERSION_KEY: "2099-01-01", CAPS_KEY: {}}
    headers = {**modern_headers("tools/list"), "MCP-Protocol-Version": "2099-01-01"}
    response = post(server.url, rpc(5, "tools/list", {"_meta": meta}), headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == [MODERN]
    missing = post(
        server.url,
        rpc(6, "tools/list", {"_meta": {VERSION_KEY: MODERN}}),
        modern_headers("tools/list"),
    )
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == -32602
    unknown = post(server.url, rpc(7, "no/such", {"_meta": META}), modern_headers("no/such"))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == -32601
    tool_error = post(
        server.url, rpc(8, "tools/call", call("nope", {})), modern_headers("tools/call", "nope")
    )
    assert tool_error.status_code == 200  # an ordinary JSON-RPC error
    assert tool_error.json()["error"]["code"] == -32602


def test_modern_only_server_rejects_get_and_delete(spawn_http: SpawnHttp) -> None:
    srv = spawn_http("--era", "modern")
    assert requests.get(srv.url, headers={"Accept": SSE}, timeout=TIMEOUT).status_code == 405
    assert requests.delete(srv.url, timeout=TIMEOUT).status_code == 405
    assert requests.get(srv.base + "/sse", timeout=TIMEOUT).status_code == 404
    init = rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    response = post(srv.url, init, {"Content-Type": "application/json"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601


def test_modern_listen_stream_and_same_ids(server: ScriptedServer) -> None:
    params = {"notifications": {"toolsListChanged": True}, "_meta": META}
    with post(
        server.url,
        rpc(9, "subscriptions/listen", params),
        modern_headers("subscriptions/listen"),
        stream=True,
    ) as listen:
        assert listen.status_code == 200
        assert listen.headers["Content-Type"] == SSE
        events = sse_events(listen)
        ack = json.loads(next(events)["data"])
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"][SUBSCRIPTION_KEY] == 9
        # Same JSON-RPC id as the open listen request: another client may do that.
        answer = modern_call(server, 9, "mutate_catalog", {"notify": "tools"})
        assert answer["id"] == 9
        changed = json.loads(next(events)["data"])
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"][SUBSCRIPTION_KEY] == 9
    # Closing the stream cancelled the listen request; the server carries on.
    assert text_of(modern_call(server, 10, "echo", {"message": "still here"})) == "still here"


# ----------------------------------------------------------------------------- legacy


def test_legacy_session_flow(server: ScriptedServer) -> None:
    session = Legacy(server)
    listed = session.request("tools/list")
    assert listed.status_code == 200
    assert "Mcp-Session-Id" not in listed.headers
    assert "hostile" in [t["name"] for t in listed.json()["result"]["tools"]]
    params = {"name": "progress", "arguments": {"steps": 2, "interval": 0}}
    params["_meta"] = {"progressToken": 5}
    with session.request("tools/call", params, stream=True) as response:
        assert response.headers["Content-Type"] == SSE
        events = list(sse_events(response))
    assert len(events) == 3
    ids = [event["id"] for event in events]
    stream = ids[0].split("-")[0]
    assert ids == [f"{stream}-1", f"{stream}-2", f"{stream}-3"]
    assert text_of(json.loads(events[-1]["data"])) == "completed 2 steps"
    # Session header rules.
    bare = post(server.url, rpc(1, "tools/list"), {"Content-Type": "application/json"})
    assert bare.status_code == 400
    wrong = post(server.url, rpc(1, "tools/list"), {"Mcp-Session-Id": "nope"})
    assert wrong.status_code == 404
    bad_version = post(
        server.url,
        rpc(1, "tools/list"),
        {**session.headers(), "MCP-Protocol-Version": "2025-03-26"},
    )
    assert bad_version.status_code == 400
    assert session.post({"jsonrpc": "2.0", "id": 1, "result": {}}).status_code == 202
    deleted = requests.delete(server.url, headers={"Mcp-Session-Id": session.sid}, timeout=TIMEOUT)
    assert deleted.status_code == 200
    assert session.request("tools/list").status_code == 404


def test_legacy_server_request_rides_the_post_stream(server: ScriptedServer) -> None:
    session = Legacy(server)
    params = {"name": "hostile", "arguments": {"action": "server_request", "method": "roots/list"}}
    with session.request("tools/call", params, stream=True) as response:
        assert response.headers["Content-Type"] == SSE
        events = sse_events(response)
        asked = json.loads(next(events)["data"])
        assert asked["method"] == "roots/list"
        reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}
        assert session.post(reply).status_code == 202
        answer = json.loads(next(events)["data"])
    assert json.loads(text_of(answer)) == {"result": {"roots": []}}


def test_legacy_get_stream_and_resumption(server: ScriptedServer) -> None:
    session = Legacy(server)
    assert requests.get(server.url, headers={"Accept": SSE}, timeout=TIMEOUT).status_code == 400
    with session.get() as stream:
        assert stream.status_code == 200
        assert stream.headers["Content-Type"] == SSE
        events = sse_events(stream)
        assert (
            "notified"
            in session.call("mutate_catalog", {"notify": "tools"})["result"]["content"][0]["text"]
        )
        first = next(events)
    assert json.loads(first["data"])["method"] == "notifications/tools/list_changed"
    # Sent while no GET stream is open: kept for resumption.
    session.call("mutate_catalog", {"notify": "prompts"})
    with session.get(**{"Last-Event-ID": first["id"]}) as resumed:
        assert resumed.status_code == 200
        replayed = next(sse_events(resumed))
    assert json.loads(replayed["data"])["method"] == "notifications/prompts/list_changed"
    stream_no, seq = first["id"].split("-")
    assert replayed["id"] == f"{stream_no}-{int(seq) + 1}"


def test_hostile_drop_stream_then_resume(server: ScriptedServer) -> None:
    session = Legacy(server)
    params = {"name": "hostile", "arguments": {"action": "drop_stream"}}
    with session.request("tools/call", params, stream=True) as response:
        assert response.headers["Content-Type"] == SSE
        events = list(sse_events(response))  # the server ends the response
    assert len(events) == 1
    priming = events[0]
    assert priming["retry"] == "100"
    assert priming["data"] == ""
    with session.get(**{"Last-Event-ID": priming["id"]}) as resumed:
        replayed = list(sse_events(resumed))
    assert len(replayed) == 1
    assert text_of(json.loads(replayed[0]["data"])) == "hostile drop_stream: done"
    # Modern era: the stream ends after the priming event and the request is lost.
    modern = rpc(11, "tools/call", call("hostile", {"action": "drop_stream"}))
    with post(server.url, modern, modern_headers("tools/call", "hostile"), stream=True) as r:
        lost = list(sse_events(r))
    assert lost == [{"retry": "100", "data": ""}]


# ----------------------------------------------------------------------------- HTTP+SSE


def test_legacy_http_sse_transport(server: ScriptedServer) -> None:
    assert requests.post(server.base + "/sse", timeout=TIMEOUT).status_code == 405
    with requests.get(server.base + "/sse", stream=True, timeout=TIMEOUT) as stream:
        assert stream.headers["Content-Type"] == SSE
        events = sse_events(stream)
        endpoint = next(events)
        assert endpoint["event"] == "endpoint"
        assert endpoint["data"].startswith("/messages?session=")
        target = server.base + endpoint["data"]
        init = rpc(
            1,
            "initialize",
            {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t"}},
        )
        headers = {"Content-Type": "application/json"}
        assert post(target, init, headers).status_code == 202
        answer = next(events)
        assert answer["event"] == "message"
        assert json.loads(answer["data"])["result"]["protocolVersion"] == "2024-11-05"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert post(target, initialized, headers).status_code == 202
        echo = rpc(2, "tools/call", {"name": "echo", "arguments": {"message": "old"}})
        assert post(target, echo, headers).status_code == 202
        assert text_of(json.loads(next(events)["data"])) == "old"
    missing = post(server.base + "/messages?session=nope", echo, headers)
    assert missing.status_code == 404


def test_endpoint_url_flag(spawn_http: SpawnHttp) -> None:
    srv = spawn_http("--endpoint-url", "http://elsewhere.example:9/messages")
    with requests.get(srv.base + "/sse", stream=True, timeout=TIMEOUT) as stream:
        endpoint = next(sse_events(stream))
    assert endpoint == {"event": "endpoint", "data": "http://elsewhere.example:9/messages"}


# ----------------------------------------------------------------------------- hostile knobs


def test_hostile_expire_session(server: ScriptedServer) -> None:
    session = Legacy(server)
    answer = session.call("hostile", {"action": "expire_session"})
    assert text_of(answer) == "hostile expire_session: done"
    gone = session.request("tools/list")
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == -32001
    # Modern requests have no session to expire.
    modern = modern_call(server, 12, "hostile", {"action": "expire_session"})
    assert modern["result"]["isError"] is True


def test_hostile_session_404_storm(server: ScriptedServer) -> None:
    modern_call(server, 13, "hostile", {"action": "session_404_storm", "count": 2})
    message = rpc(14, "tools/call", call("echo", {"message": "x"}))
    statuses = [
        post(server.url, message, modern_headers("tools/call", "echo")).status_code
        for _ in range(3)
    ]
    assert statuses == [404, 404, 200]


def test_session_404_storm_flag(spawn_http: SpawnHttp) -> None:
    srv = spawn_http("--session-404-storm", "2")
    session_less = {"Content-Type": "application/json"}
    statuses = [post(srv.url, rpc(1, "ping"), session_less).status_code for _ in range(3)]
    assert statuses == [404, 404, 400]  # then the ordinary "session required"


def test_hostile_oversized_body_and_event(server: ScriptedServer) -> None:
    big = modern_call(server, 15, "hostile", {"action": "oversized_body", "bytes": 100_000})
    assert big["id"] == 15
    response = post(
        server.url,
        rpc(16, "tools/call", call("hostile", {"action": "oversized_body", "bytes": 100_000})),
        modern_headers("tools/call", "hostile"),
    )
    assert response.headers["Content-Type"] == "application/json"
    assert len(response.content) == 100_000
    assert set(text_of(response.json())) == {"x"}
    event_call = rpc(
        17, "tools/call", call("hostile", {"action": "oversized_event", "bytes": 50_000})
    )
    with post(server.url, event_call, modern_headers("tools/call", "hostile"), stream=True) as r:
        assert r.headers["Content-Type"] == SSE
        events = list(sse_events(r))
    assert len(events) == 1
    assert len(events[0]["data"].encode()) == 50_000
    assert json.loads(events[0]["data"])["id"] == 17


def test_hostile_trickle(server: ScriptedServer) -> None:
    message = rpc(18, "tools/call", call("hostile", {"action": "trickle", "seconds": 0.6}))
    started = time.monotonic()
    with post(server.url, message, modern_headers("tools/call", "hostile"), stream=True) as r:
        assert r.headers["Content-Type"] == SSE
        arrivals = []
        body = b""
        for chunk in r.iter_content(chunk_size=None):
            arrivals.append(time.monotonic() - started)
            body += chunk
    assert body.startswith(b":.\n")  # three bytes, one every 0.2 s
    assert arrivals[2] - arrivals[0] >= 0.3
    event = body[3:].decode()
    assert event.startswith("data: ") and "hostile trickle: done" in event


def test_hostile_status(server: ScriptedServer) -> None:
    arguments = {"action": "status", "code": 503, "body": "busy", "headers": {"Retry-After": "1"}}
    modern_call(server, 19, "hostile", arguments)
    response = requests.get(server.url, timeout=TIMEOUT)
    assert response.status_code == 503
    assert response.text == "busy"
    assert response.headers["Retry-After"] == "1"
    assert text_of(modern_call(server, 20, "echo", {"message": "ok"})) == "ok"  # one-shot


def test_redirect_flag(spawn_http: SpawnHttp) -> None:
    srv = spawn_http("--redirect-to", "http://127.0.0.1:9/elsewhere")
    response = post(srv.url, rpc(1, "ping"), {}, allow_redirects=False)
    assert response.status_code == 307
    assert response.headers["Location"] == "http://127.0.0.1:9/elsewhere"
    assert requests.delete(srv.url, timeout=TIMEOUT).status_code == 400  # not a POST


# ----------------------------------------------------------------------------- record


def test_record_has_method_path_and_all_headers(server: ScriptedServer) -> None:
    name = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    headers = {**modern_headers("tools/call", name), "Mcp-Param-Region": "us west 1"}
    message = rpc("recorded-1", "tools/call", call("echo", {"message": "r"}))
    assert post(server.url + "?q=1", message, headers).status_code == 200
    entries = [json.loads(line) for line in server.record_path.read_text().splitlines()]
    [entry] = [
        e
        for e in entries
        if isinstance(e.get("body"), dict) and e["body"].get("id") == "recorded-1"
    ]
    assert entry["method"] == "POST"
    assert entry["path"] == "/mcp?q=1"
    assert entry["body"] == message
    recorded = [tuple(pair) for pair in entry["headers"]]
    for pair in [
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
        ("Mcp-Param-Region", "us west 1"),
        ("MCP-Protocol-Version", MODERN),
    ]:
        assert pair in recorded
    assert any(header == "Host" for header, _value in recorded)
    gets = [e for e in entries if e["method"] == "GET"]
    assert gets and all("body" not in e for e in gets)


def test_server_ends_streams_on_sigterm(spawn_http: SpawnHttp) -> None:
    srv = spawn_http()
    params = {"notifications": {"toolsListChanged": True}, "_meta": META}
    with post(
        srv.url,
        rpc(1, "subscriptions/listen", params),
        modern_headers("subscriptions/listen"),
        stream=True,
    ) as listen:
        events = sse_events(listen)
        next(events)  # the acknowledgement
        srv.proc.terminate()
        with contextlib.suppress(requests.exceptions.ChunkedEncodingError):
            assert list(events) == []
    assert srv.proc.wait(timeout=5) == 0
