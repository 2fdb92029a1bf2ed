"""OpenTelemetry end to end: spans, attributes, histograms and trace propagation.

Against the testing server over stdio and HTTP (both eras), recorded by the
OTel SDK's in-memory span exporter and metric reader, installed once as the
process's providers (OpenTelemetry allows one of each per process). The
server's ``--record`` shows the trace context each request carried in
``params._meta``. The module switches telemetry back off when it is done, so
the modules that run after it see requests without trace fields, as they
would without a configured provider.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

opentelemetry = pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import baggage, context, metrics, propagate, trace  # noqa: E402
from opentelemetry.sdk.metrics import Histogram, MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import (  # noqa: E402
    AggregationTemporality,
    HistogramDataPoint,
    InMemoryMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402
from opentelemetry.trace.propagation.tracecontext import (  # noqa: E402
    TraceContextTextMapPropagator,
)

import mcpclient  # noqa: E402
from mcpclient import CallOpts, Definition, connect  # noqa: E402
from mcpclient._internal.telemetry import BUCKETS  # noqa: E402
from tests.support.http_servers import http_definition  # noqa: E402
from tests.support.servers import REPO_ROOT, Recording, definition  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402

from .conftest import SpawnHttp  # noqa: E402

EXPORTER = InMemorySpanExporter()
# Delta: each collection holds only what was recorded since the last one.
READER = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
CALLER = trace.get_tracer("tests.caller")
ADVISED = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


@pytest.fixture(scope="module", autouse=True)
def _providers() -> Iterator[None]:
    trace.set_tracer_provider(_tracer_provider())
    metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))
    mcpclient.telemetry.enable()
    try:
        yield
    finally:
        mcpclient.telemetry.disable()


def _tracer_provider() -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    return provider


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    mcpclient.telemetry.enable()
    READER.get_metrics_data()  # drop what earlier tests recorded
    EXPORTER.clear()
    yield
    mcpclient.telemetry.enable()


def _spans(name: str | None = None) -> list[ReadableSpan]:
    spans = list(EXPORTER.get_finished_spans())
    return [s for s in spans if name is None or s.name == name]


def _one(name: str) -> ReadableSpan:
    assert wait_until(lambda: len(_spans(name)) == 1), [s.name for s in _spans()]
    (span,) = _spans(name)
    return span


def _traceparent(span: ReadableSpan) -> str:
    ctx = span.get_span_context()
    assert ctx is not None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def _points(name: str) -> list[HistogramDataPoint]:
    data = READER.get_metrics_data()
    points: list[HistogramDataPoint] = []
    if data is None:
        return points
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    assert metric.unit == "s"
                    points += [p for p in metric.data.data_points]  # type: ignore[misc]
    return points


def _recorded_meta(record: Recording, method: str) -> list[dict[str, Any]]:
    return [(m.get("params") or {}).get("_meta") or {} for m in record.requests(method)]


# ----------------------------------------------------------------- spans over stdio


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_tool_call_span_attributes_and_propagation_over_stdio(tmp_path: Path, era: str) -> None:
    record = Recording(tmp_path / "record.jsonl")
    with connect(definition("--era", era, record=record.path)) as client:
        version = client.status().protocol_version
        with CALLER.start_as_current_span("caller") as caller:
            result = client.call_tool("echo", {"message": "hi"})
        assert not result.is_error
    span = _one("tools/call echo")
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": version,
        "network.transport": "pipe",
    }
    assert span.status.status_code is StatusCode.UNSET
    # The caller's span is the parent, and the server saw this span's context.
    assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id
    (meta,) = _recorded_meta(record, "tools/call")
    assert meta["traceparent"] == _traceparent(span)
    # Only the public call is traced: the connect's own requests carry no trace fields.
    assert all("traceparent" not in m for m in _recorded_meta(record, "tools/list"))


def test_baggage_and_tracestate_travel_in_meta(tmp_path: Path) -> None:
    record = Recording(tmp_path / "record.jsonl")
    with connect(definition("--era", "legacy", record=record.path)) as client:
        # A remote parent (as a server framework extracts it) carrying a tracestate.
        remote = trace.SpanContext(
            trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736,
            span_id=0x00F067AA0BA902B7,
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
            trace_state=trace.TraceState([("rojo", "00f067aa0ba902b7")]),
        )
        ambient = trace.set_span_in_context(
            trace.NonRecordingSpan(remote), baggage.set_baggage("user", "alice")
        )
        token = context.attach(ambient)
        try:
            client.call_tool("echo", {"message": "b"})
        finally:
            context.detach(token)
    (meta,) = _recorded_meta(record, "tools/call")
    span = _one("tools/call echo")
    assert meta["baggage"] == "user=alice"
    assert meta["tracestate"] == "rojo=00f067aa0ba902b7"
    assert meta["traceparent"] == _traceparent(span)
    assert meta["traceparent"].startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
    assert span.parent is not None and span.parent.span_id == remote.span_id


def test_prompt_resource_and_ping_spans(tmp_path: Path) -> None:
    record = Recording(tmp_path / "record.jsonl")
    with connect(definition("--era", "legacy", record=record.path)) as client:
        client.get_prompt("greet", {"name": "Ada"})
        client.read_resource("test://static/hello")
        client.ping()
    prompt = _one("prompts/get greet")
    assert prompt.attributes is not None
    assert prompt.attributes["gen_ai.prompt.name"] == "greet"
    assert "gen_ai.operation.name" not in prompt.attributes
    # A resource URI is an attribute, not part of the name (the conventions' default).
    resource = _one("resources/read")
    assert resource.attributes is not None
    assert resource.attributes["mcp.resource.uri"] == "test://static/hello"
    assert resource.attributes["mcp.method.name"] == "resources/read"
    ping = _one("ping")
    assert ping.attributes is not None and ping.attributes["mcp.method.name"] == "ping"
    assert _recorded_meta(record, "prompts/get")[0]["traceparent"] == _traceparent(prompt)
    assert _recorded_meta(record, "resources/read")[0]["traceparent"] == _traceparent(resource)


# ----------------------------------------------------------------- errors


def test_error_types_tool_error_deadline_and_invalid_arguments() -> None:
    with connect(definition("--era", "modern")) as client:
        assert client.call_tool("fail", {"message": "no"}).is_error
        with pytest.raises(mcpclient.DeadlineExceededError):
            client.call_tool("slow", {"seconds": 5}, CallOpts(timeout=0.3))
        with pytest.raises(mcpclient.InvalidArgumentsError):
            client.call_tool("echo", {})
        with pytest.raises(mcpclient.ToolUnavailableError):
            client.call_tool("nope", {})
    expected = {
        "tools/call fail": "tool_error",
        "tools/call slow": "deadline",
        "tools/call echo": "invalid_arguments",
        "tools/call nope": "tool_unavailable",
    }
    for name, error_type in expected.items():
        span = _one(name)
        assert span.attributes is not None
        assert span.attributes["error.type"] == error_type, name
        assert span.status.status_code is StatusCode.ERROR, name
    assert "deadline" in (_one("tools/call slow").status.description or "")


def test_a_json_rpc_error_answer_records_its_code() -> None:
    # rpc.response.status_code: the error response's code, as a string (the MCP conventions)
    with connect(definition("--era", "legacy")) as client:
        with pytest.raises(mcpclient.ProtocolError):
            client.call_tool("hostile", {"action": "error", "code": -32050, "message": "busy"})
        with pytest.raises(mcpclient.DeadlineExceededError):
            client.call_tool("slow", {"seconds": 5}, CallOpts(timeout=0.3))
        operations = _points("mcp.client.operation.duration")
    span = _one("tools/call hostile")
    assert span.attributes is not None
    assert span.attributes["rpc.response.status_code"] == "-32050"
    assert span.attributes["error.type"] == "server_protocol"
    slow = _one("tools/call slow")
    assert slow.attributes is not None and "rpc.response.status_code" not in slow.attributes
    by_tool = {(p.attributes or {}).get("gen_ai.tool.name"): p for p in operations}
    assert (by_tool["hostile"].attributes or {})["rpc.response.status_code"] == "-32050"
    assert "rpc.response.status_code" not in (by_tool["slow"].attributes or {})


# ----------------------------------------------------------------- HTTP


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_http_spans_carry_server_address_and_legacy_session_id(
    spawn_http: SpawnHttp, era: str
) -> None:
    server = spawn_http("--era", era)
    tag = f"otel-{era}"
    with connect(http_definition(server.url, tag=tag)) as client:
        version = client.status().protocol_version
        with CALLER.start_as_current_span("caller") as caller:
            client.call_tool("echo", {"message": "web"})
    span = _one("tools/call echo")
    attributes = dict(span.attributes or {})
    port = int(server.url.split(":")[2].split("/")[0])
    assert attributes["network.transport"] == "tcp"
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == port
    assert attributes["mcp.protocol.version"] == version
    calls = [
        e
        for e in server.records(tag)
        if isinstance(e.get("body"), dict) and e["body"].get("method") == "tools/call"
    ]
    (call,) = calls
    if era == "legacy":
        session = [v for k, v in call["headers"] if k.lower() == "mcp-session-id"]
        assert attributes["mcp.session.id"] == session[0]
    else:
        assert "mcp.session.id" not in attributes
    assert call["body"]["params"]["_meta"]["traceparent"] == _traceparent(span)
    assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id


def test_submitted_call_span_has_the_callers_parent_though_io_is_elsewhere(
    spawn_http: SpawnHttp,
) -> None:
    server = spawn_http("--era", "modern")
    with connect(http_definition(server.url, tag="otel-submit")) as client:
        with CALLER.start_as_current_span("caller") as caller:
            futures = [client.submit_tool_call("echo", {"message": str(i)}) for i in range(3)]
            failing = client.submit_tool_call("fail", {})
        # The caller's span has ended before the calls complete, on other threads.
        for future in futures:
            assert not future.result(10).is_error
        assert failing.result(10).is_error
        assert wait_until(lambda: len(_spans("tools/call echo")) == 3)
    for span in _spans("tools/call echo"):
        assert span.parent is not None
        assert span.parent.span_id == caller.get_span_context().span_id
        assert span.context is not None
        assert span.context.trace_id == caller.get_span_context().trace_id
    fail = _one("tools/call fail")
    assert fail.attributes is not None and fail.attributes["error.type"] == "tool_error"
    sent = {
        e["body"]["params"]["_meta"]["traceparent"]
        for e in server.records("otel-submit")
        if isinstance(e.get("body"), dict) and e["body"].get("method") == "tools/call"
    }
    assert sent == {_traceparent(s) for s in _spans() if s.name.startswith("tools/call")}


def test_submitted_call_failures_end_their_spans() -> None:
    with connect(definition("--era", "legacy")) as client:
        with pytest.raises(mcpclient.InvalidArgumentsError):
            client.submit_tool_call("echo", {})
        slow = client.submit_tool_call("slow", {"seconds": 5}, CallOpts(timeout=0.3))
        with pytest.raises(mcpclient.DeadlineExceededError):
            slow.result(10)
        assert _one("tools/call echo").attributes["error.type"] == "invalid_arguments"  # type: ignore[index]
        assert _one("tools/call slow").attributes["error.type"] == "deadline"  # type: ignore[index]
        cancelled = client.submit_tool_call("slow", {"seconds": 5})
        assert cancelled.cancel()
        assert wait_until(lambda: len(_spans("tools/call slow")) == 2)
    errors = [str((s.attributes or {})["error.type"]) for s in _spans("tools/call slow")]
    assert sorted(errors) == ["cancelled", "deadline"]


def test_a_failing_propagator_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(TraceContextTextMapPropagator):
        def inject(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError("broken propagator")

    before = propagate.get_global_textmap()
    propagate.set_global_textmap(Broken())
    try:
        with connect(definition("--era", "legacy")) as client:
            assert not client.call_tool("echo", {"message": "p"}).is_error
    finally:
        propagate.set_global_textmap(before)
    assert "failed to start a span" in caplog.text
    # The span it had started is ended, not left open.
    assert [s.name for s in _spans()] == ["tools/call echo"]


# ----------------------------------------------------------------- metrics


def test_operation_and_session_histograms_with_the_advised_buckets() -> None:
    assert list(BUCKETS) == ADVISED
    with connect(definition("--era", "legacy")) as client:
        version = client.status().protocol_version
        client.call_tool("echo", {"message": "m"})
        client.call_tool("echo", {"message": "m"})
        client.call_tool("fail", {})
        operations = _points("mcp.client.operation.duration")
    by_tool = {(p.attributes or {}).get("gen_ai.tool.name"): p for p in operations}
    echo = by_tool["echo"]
    assert echo.count == 2
    assert list(echo.explicit_bounds) == ADVISED
    assert dict(echo.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": version,
        "network.transport": "pipe",
    }
    assert (by_tool["fail"].attributes or {})["error.type"] == "tool_error"
    (session,) = _points("mcp.client.session.duration")
    assert session.count == 1
    assert list(session.explicit_bounds) == ADVISED
    assert dict(session.attributes or {}) == {
        "mcp.protocol.version": version,
        "network.transport": "pipe",
    }
    assert 0 < session.sum < 60


def test_a_failed_connect_records_its_session_with_the_error_type() -> None:
    defn = Definition(
        "dies",
        mcpclient.StdioTransport(sys.executable, ["-c", "pass"], shutdown_grace=0.2),
        timeouts=mcpclient.Timeouts(startup=10),
    )
    with pytest.raises(mcpclient.Error) as failed:
        connect(defn)
    (session,) = _points("mcp.client.session.duration")
    attributes = dict(session.attributes or {})
    assert attributes["error.type"] == str(failed.value.failure_class)
    assert attributes["network.transport"] == "pipe"
    assert "mcp.protocol.version" not in attributes


def test_http_operation_metrics_leave_the_session_id_out(
    spawn_http: SpawnHttp,
) -> None:
    server = spawn_http("--era", "legacy")
    with connect(http_definition(server.url, tag="otel-metrics")) as client:
        client.read_resource("test://static/hello")
        (point,) = _points("mcp.client.operation.duration")
    attributes = dict(point.attributes or {})
    assert attributes["server.address"] == "127.0.0.1"
    assert "mcp.session.id" not in attributes and "mcp.resource.uri" not in attributes
    (session,) = _points("mcp.client.session.duration")
    assert (session.attributes or {})["network.transport"] == "tcp"


# ----------------------------------------------------------------- off switches


def test_definition_telemetry_false_records_and_injects_nothing(tmp_path: Path) -> None:
    record = Recording(tmp_path / "record.jsonl")
    defn = definition("--era", "legacy", record=record.path, telemetry=False)
    with connect(defn) as client, CALLER.start_as_current_span("caller"):
        client.call_tool("echo", {"message": "off"})
    assert [s.name for s in _spans()] == ["caller"]
    assert "traceparent" not in _recorded_meta(record, "tools/call")[0]
    assert _points("mcp.client.operation.duration") == []
    assert _points("mcp.client.session.duration") == []


def test_the_process_switch_turns_it_off_and_on(tmp_path: Path) -> None:
    record = Recording(tmp_path / "record.jsonl")
    with connect(definition("--era", "legacy", record=record.path)) as client:
        mcpclient.telemetry.disable()
        assert not mcpclient.telemetry.enabled()
        client.call_tool("echo", {"message": "1"})
        assert _spans() == [] and _points("mcp.client.operation.duration") == []
        mcpclient.telemetry.enable()
        client.call_tool("echo", {"message": "2"})
    metas = _recorded_meta(record, "tools/call")
    assert "traceparent" not in metas[0]
    assert metas[1]["traceparent"] == _traceparent(_one("tools/call echo"))


def test_a_definition_rejects_a_non_bool_telemetry() -> None:
    with pytest.raises(mcpclient.ConfigError, match="telemetry must be a bool"):
        Definition("x", mcpclient.StdioTransport("true"), telemetry="yes")  # type: ignore[arg-type]


# ----------------------------------------------------------------- without the package


def test_without_opentelemetry_nothing_is_imported_and_calls_work(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["opentelemetry"] = None  # as if the extra were not installed
        import mcpclient
        from tests.support.servers import definition
        from pathlib import Path
        with mcpclient.connect(definition("--era", "legacy", record=Path({str(record)!r}))) as c:
            print("RESULT", c.call_tool("echo", {{"message": "x"}}).is_error)
        mcpclient.telemetry.disable(); mcpclient.telemetry.enable()
        loaded = [m for m, v in sys.modules.items() if m.startswith("opentelemetry") and v]
        print("LOADED", loaded)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO_ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "RESULT False" in done.stdout
    assert "LOADED []" in done.stdout
    calls = [
        json.loads(line)
        for line in record.read_text(encoding="utf-8").splitlines()
        if '"tools/call"' in line
    ]
    assert len(calls) == 1 and "traceparent" not in json.dumps(calls[0])


def test_import_mcpclient_does_not_import_opentelemetry_and_no_provider_costs_nothing(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        import mcpclient
        print("IMPORTED", sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        from tests.support.servers import definition
        from pathlib import Path
        with mcpclient.connect(definition("--era", "legacy", record=Path({str(record)!r}))) as c:
            c.call_tool("echo", {{"message": "x"}})
            # Installed but no provider set: the call path starts no (no-op) span at all.
            print("START", c._calls._telemetry.start("tools/call", {{"name": "echo"}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "IMPORTED []" in done.stdout
    assert "START None" in done.stdout
    assert "traceparent" not in record.read_text(encoding="utf-8")


# ------------------------------------------------------------------ redaction


def test_credentials_a_server_echoes_are_redacted_from_errors_and_span_status(
    spawn_http: SpawnHttp,
) -> None:
    # Issue 27 item 11: a server that quotes the request back (headers, the
    # URL's query, the bearer token) in its error must not get them into the
    # exception's message or the span's status.
    server = spawn_http()
    header_secret = "hdr-" + secrets.token_hex(12)
    query_secret = "qry" + secrets.token_hex(12)
    bearer = "tok" + secrets.token_hex(16)
    transport = mcpclient.StreamableHTTPTransport(
        f"{server.url}?api_key={query_secret}",
        headers={"X-Api-Key": header_secret, "X-Team": f"Token {header_secret}-2"},
        auth=lambda: bearer,
    )
    with (
        connect(Definition("echoing", transport)) as client,
        pytest.raises(mcpclient.Error) as info,
    ):
        client.call_tool("hostile", {"action": "echo_request"})
    span = _one("tools/call hostile")
    assert span.status.status_code is StatusCode.ERROR
    shown = [info.value.message, str(info.value), repr(info.value), span.status.description or ""]
    echoed = [e for e in server.records() if "hostile" in json.dumps(e.get("body"))]
    assert echoed and header_secret in json.dumps(echoed[-1]["headers"])  # it was sent
    assert "cannot serve POST" in info.value.message  # the server's text is still quoted
    assert "[redacted]" in info.value.message
    for secret in (header_secret, f"{header_secret}-2", query_secret, bearer):
        for text in shown:
            assert secret not in text, (secret, text)


def _cache_lookups() -> dict[str, int]:
    data = READER.get_metrics_data()
    counts: dict[str, int] = {}
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "mcp.client.resource_cache.lookups":
                    for point in metric.data.data_points:
                        result = str((point.attributes or {})["mcp.cache.result"])
                        counts[result] = counts.get(result, 0) + int(point.value)  # type: ignore[union-attr]
    return counts


def test_resource_cache_hits_and_misses_are_counted() -> None:
    before = _cache_lookups()
    hint = "test://static/hello=600000"
    with connect(definition("--era", "modern", "--read-hint", hint)) as client:
        client.read_resource("test://static/hello")
        client.read_resource("test://static/hello")
        client.read_resource("test://static/hello")
        client.read_resource("test://static/hello", cache=False)  # not a lookup
    after = _cache_lookups()
    assert after.get("miss", 0) - before.get("miss", 0) == 1
    assert after.get("hit", 0) - before.get("hit", 0) == 2
