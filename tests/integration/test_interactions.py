"""Server-initiated interactions end to end: sampling, elicitation, roots and logs.

Legacy era: the testing server's ``hostile`` action ``server_request`` sends a
server-to-client request and answers with the client's response as text.
Modern era (2026-07-28): the testing server's ``ask`` tool (``--mrtr``) asks
through ``input_required`` rounds (MRTR). Also against server-everything
(legacy, stdio) and the official SDK peer (both eras, its resolvers).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    ClientCapabilities,
    ConfigError,
    ElicitAction,
    ElicitationRequested,
    ElicitationResolved,
    ElicitMode,
    ElicitRequest,
    ElicitResult,
    FailureClass,
    HandlerContext,
    Handlers,
    InteractionError,
    LimitExceededError,
    Limits,
    LogMessage,
    ProtocolError,
    Root,
    SampleOutcome,
    SampleRequest,
    SampleResult,
    SamplingRequested,
    SamplingResolved,
    Timeouts,
)
from tests import support
from tests.support.processes import library_threads

from .conftest import MakeDefinition
from .engine_support import SLACK, Recording, definition, text_of, wait_until

ALL = ClientCapabilities(sampling=True, elicitation=True, roots=True)
FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


def text_message(text: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": {"type": "text", "text": text}}


def sampling_params(text: str = "hello", max_tokens: int = 50, **extra: Any) -> dict[str, Any]:
    return {
        "messages": [text_message(text)],
        "maxTokens": max_tokens,
        "systemPrompt": "be brief",
        **extra,
    }


class Events(support.Events):
    """The shared recorder, lingering after each wait so a duplicate event would show up."""

    settle = 0.05


class Sampler:
    """A sampling handler that records what it was asked."""

    def __init__(self, text: str = "sampled", model: str = "test-model") -> None:
        self.text = text
        self.model = model
        self.requests: list[SampleRequest] = []
        self.contexts: list[HandlerContext] = []

    def __call__(self, request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        self.requests.append(request)
        self.contexts.append(ctx)
        return SampleResult(self.model, self.text)


class Elicitor:
    """An elicitation handler answering a fixed result, recording the requests."""

    def __init__(self, result: ElicitResult | None = None) -> None:
        self.result = result or ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})
        self.requests: list[ElicitRequest] = []

    def __call__(self, request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        self.requests.append(request)
        return self.result


def roots_none(ctx: HandlerContext) -> list[Root]:
    return []


def server_request(
    client: mcpclient.Client, method: str, params: Any = None, **opts: Any
) -> tuple[dict[str, Any], bool]:
    """Make the testing server ask ``method``; return its decoded report and ``is_error``."""
    args: dict[str, Any] = {"action": "server_request", "method": method}
    if params is not None:
        args["params"] = params
    result = client.call_tool("hostile", args, CallOpts(**opts) if opts else None)
    return json.loads(text_of(result)), result.is_error


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / "record.jsonl"


def legacy(
    handlers: Handlers, record: Path | None = None, *flags: str, **fields: Any
) -> mcpclient.Client:
    fields.setdefault("capabilities", ALL)
    return mcpclient.connect(
        definition("--era", "legacy", *flags, record=record, **fields), handlers
    )


def modern(
    handlers: Handlers, record: Path | None = None, *flags: str, **fields: Any
) -> mcpclient.Client:
    fields.setdefault("capabilities", ALL)
    client = mcpclient.connect(
        definition("--era", "modern", "--mrtr", *flags, record=record, **fields), handlers
    )
    assert client.status().protocol_version == "2026-07-28"
    return client


def handlers(**kw: Any) -> Handlers:
    kw.setdefault("sampling", Sampler())
    kw.setdefault("elicitation", Elicitor())
    kw.setdefault("roots", roots_none)
    return Handlers(**kw)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event blocked handlers wait on; set at teardown so abandoned threads end."""
    event = threading.Event()
    yield event
    event.set()


# =====================================================================  legacy: sampling


def test_sampling_answered_with_one_event_pair_each() -> None:
    events, sampler = Events(), Sampler()
    with legacy(
        handlers(sampling=sampler, event=events), limits=Limits(max_sampling_tokens=100)
    ) as c:
        report, is_error = server_request(c, "sampling/createMessage", sampling_params())
    assert not is_error, report
    assert report["result"] == {
        "role": "assistant",
        "content": {"type": "text", "text": "sampled"},
        "model": "test-model",
        "stopReason": "endTurn",
    }
    [request] = sampler.requests
    assert request.max_tokens == 50
    assert request.system_prompt == "be brief"
    assert [(str(m.role), m.text) for m in request.messages] == [("user", "hello")]
    assert sampler.contexts[0].depth == 1
    requested = events.wait(SamplingRequested)
    resolved = events.wait(SamplingResolved)
    assert len(requested) == 1 and len(resolved) == 1
    assert (requested[0].messages, requested[0].max_tokens, requested[0].depth) == (1, 50, 1)
    assert resolved[0].outcome is SampleOutcome.COMPLETED
    assert resolved[0].model == "test-model"


def test_sampling_tokens_above_the_cap_are_capped_not_refused() -> None:
    events, sampler = Events(), Sampler()
    with legacy(
        handlers(sampling=sampler, event=events), limits=Limits(max_sampling_tokens=100)
    ) as c:
        report, is_error = server_request(
            c, "sampling/createMessage", sampling_params(max_tokens=5000)
        )
    assert not is_error and "result" in report
    assert sampler.requests[0].max_tokens == 100
    assert events.wait(SamplingRequested)[0].max_tokens == 100


def test_oversized_sampling_conversation_is_refused() -> None:
    events, sampler = Events(), Sampler()
    limits = Limits(max_text_result_bytes=1000)
    with legacy(handlers(sampling=sampler, event=events), limits=limits) as c:
        report, is_error = server_request(
            c, "sampling/createMessage", sampling_params(text="x" * 2000)
        )
        assert c.status().state is mcpclient.State.READY
    assert is_error and "error" in report, report
    assert sampler.requests == []
    [resolved] = events.wait(SamplingResolved)
    assert resolved.outcome is SampleOutcome.DENIED


def test_sampling_flood_beyond_concurrency_is_refused(release: threading.Event) -> None:
    entered = threading.Semaphore(0)
    count = {"n": 0}
    lock = threading.Lock()

    def blocking(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        with lock:
            count["n"] += 1
        entered.release()
        release.wait(10)
        return SampleResult("m", "late")

    events = Events()
    with legacy(
        handlers(sampling=blocking, event=events),
        limits=Limits(max_sampling_concurrency=2),
        allow_parallel_calls=True,
    ) as c:
        args = {
            "action": "server_request",
            "method": "sampling/createMessage",
            "params": sampling_params(),
        }
        futures = [c.submit_tool_call("hostile", args) for _ in range(4)]
        assert entered.acquire(timeout=5) and entered.acquire(timeout=5)
        # The excess two are refused at once, while the first two still block.
        assert wait_until(lambda: sum(f.done() for f in futures) == 2, 5)
        refused = [f.result() for f in futures if f.done()]
        assert all(r.is_error and "error" in json.loads(text_of(r)) for r in refused)
        release.set()
        results = [f.result(timeout=5) for f in futures]
    assert sum(not r.is_error for r in results) == 2
    assert count["n"] == 2
    outcomes = sorted(str(e.outcome) for e in events.wait(SamplingResolved, 4))
    assert outcomes == ["completed", "completed", "denied", "denied"]


def test_nested_sampling_beyond_max_depth_is_denied_without_deadlock() -> None:
    holder: dict[str, mcpclient.Client] = {}
    seen: list[tuple[int, str]] = []

    def nesting(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        # Calls are serialized (allow_parallel_calls=False): a handler's own
        # call must bypass the queue or this deadlocks.
        report, is_error = server_request(
            holder["c"], "sampling/createMessage", sampling_params(), timeout=8
        )
        outcome = "error" if is_error else report["result"]["content"]["text"]
        seen.append((ctx.depth, outcome))
        return SampleResult("m", f"depth {ctx.depth} saw [{outcome}]")

    events = Events()
    limits = Limits(max_sampling_depth=2, max_sampling_concurrency=4)
    with legacy(handlers(sampling=nesting, event=events), limits=limits) as c:
        holder["c"] = c
        started = time.monotonic()
        report, is_error = server_request(c, "sampling/createMessage", sampling_params())
        assert time.monotonic() - started < 8
    assert not is_error, report
    assert report["result"]["content"]["text"] == "depth 1 saw [depth 2 saw [error]]"
    assert seen == [(2, "error"), (1, "depth 2 saw [error]")]
    depths = sorted(e.depth for e in events.wait(SamplingRequested, 3))
    assert depths == [1, 2, 3]
    outcomes = sorted(str(e.outcome) for e in events.wait(SamplingResolved, 3))
    assert outcomes == ["completed", "completed", "denied"]


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(
            sampling_params(tools=[{"name": "t", "inputSchema": {"type": "object"}}]),
            id="tools-without-sampling.tools",
        ),
        pytest.param(
            {
                "messages": [
                    {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "x"}}
                ],
                "maxTokens": 5,
            },
            id="image-content",
        ),
        pytest.param(sampling_params(max_tokens=0), id="zero-max-tokens"),
        pytest.param({"messages": [], "maxTokens": 5}, id="no-messages"),
        pytest.param(
            {"messages": [text_message("hi", role="system")], "maxTokens": 5}, id="bad-role"
        ),
    ],
)
def test_sampling_requests_the_host_cannot_serve_are_refused(params: dict[str, Any]) -> None:
    sampler, events = Sampler(), Events()
    with legacy(handlers(sampling=sampler, event=events)) as c:
        report, is_error = server_request(c, "sampling/createMessage", params)
    assert is_error and "error" in report, report
    assert sampler.requests == []
    assert [e.outcome for e in events.wait(SamplingResolved)] == [SampleOutcome.DENIED]


def test_sampling_handler_returning_the_wrong_type_is_an_error() -> None:
    def wrong(request: SampleRequest, ctx: HandlerContext) -> Any:
        return "just a string"

    with legacy(handlers(sampling=wrong)) as c:
        report, is_error = server_request(c, "sampling/createMessage", sampling_params())
        assert c.status().state is mcpclient.State.READY
    assert is_error and "error" in report


# =====================================================================  legacy: elicitation


def test_elicitation_form_accepted_and_validated() -> None:
    events = Events()
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada", "age": 36}))
    with legacy(handlers(elicitation=elicitor, event=events)) as c:
        report, is_error = server_request(
            c, "elicitation/create", {"message": "Who are you?", "requestedSchema": FORM}
        )
    assert not is_error
    assert report["result"] == {"action": "accept", "content": {"name": "Ada", "age": 36}}
    [request] = elicitor.requests
    assert request.mode is ElicitMode.FORM
    assert request.message == "Who are you?"
    assert request.schema == FORM
    assert [e.mode for e in events.wait(ElicitationRequested)] == [ElicitMode.FORM]
    [resolved] = events.wait(ElicitationResolved)
    assert resolved.action is ElicitAction.ACCEPT


def test_elicitation_fields_left_out_take_the_forms_defaults() -> None:
    # SEP-1034: a default is what the person saw pre-filled; leaving it means it.
    form = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
            "nick": {"type": "string"},
        },
    }
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"}))
    with legacy(handlers(elicitation=elicitor)) as c:
        report, is_error = server_request(
            c, "elicitation/create", {"message": "Who?", "requestedSchema": form}
        )
    assert not is_error
    assert report["result"] == {
        "action": "accept",
        # What the person gave is kept; a field with no default stays absent.
        "content": {"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": True},
    }


def test_elicitation_answer_failing_the_schema_is_sent_as_cancel() -> None:
    events = Events()
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"age": "old"}))
    with legacy(handlers(elicitation=elicitor, event=events)) as c:
        report, is_error = server_request(
            c, "elicitation/create", {"message": "Who?", "requestedSchema": FORM}
        )
    assert not is_error
    assert report["result"] == {"action": "cancel"}
    [resolved] = events.wait(ElicitationResolved)
    assert resolved.action is ElicitAction.CANCEL


def test_oversized_elicitation_prompt_is_refused_without_calling_the_handler() -> None:
    elicitor = Elicitor()
    limits = Limits(max_elicit_message_bytes=100)
    with legacy(handlers(elicitation=elicitor), limits=limits) as c:
        report, is_error = server_request(
            c, "elicitation/create", {"message": "é" * 60, "requestedSchema": FORM}
        )
        assert c.status().state is mcpclient.State.READY
    assert is_error and "error" in report
    assert elicitor.requests == []


def test_url_elicitation_passes_the_url_and_never_fetches_it() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/pay?x=1"
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT))
    events = Events()
    try:
        with legacy(handlers(elicitation=elicitor, event=events)) as c:
            report, is_error = server_request(
                c,
                "elicitation/create",
                {"mode": "url", "message": "Pay here", "url": url, "elicitationId": "e-1"},
            )
        # Closed: every thread of the binding has ended, so a fetch (had one been
        # made) has connected; the kernel completes a connect without accept().
        assert wait_until(lambda: not library_threads())
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
    assert not is_error
    assert report["result"] == {"action": "accept"}
    [request] = elicitor.requests
    assert (request.mode, request.url, request.elicitation_id) == (ElicitMode.URL, url, "e-1")
    assert events.wait(ElicitationResolved)[0].mode is ElicitMode.URL


def test_url_elicitation_is_refused_before_2025_11_25() -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT))
    with legacy(handlers(elicitation=elicitor), None, "--legacy-versions", "2025-06-18") as c:
        assert c.status().protocol_version == "2025-06-18"
        report, is_error = server_request(
            c, "elicitation/create", {"mode": "url", "message": "Pay", "url": "https://x.test/"}
        )
    assert elicitor.requests == []
    assert is_error and report["error"]["code"] == -32602


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_elicitation_does_not_exist_before_2025_06_18(version: str) -> None:
    elicitor = Elicitor()
    with legacy(handlers(elicitation=elicitor), None, "--legacy-versions", version) as c:
        assert c.status().protocol_version == version
        report, is_error = server_request(
            c, "elicitation/create", {"message": "Who?", "requestedSchema": FORM}
        )
    assert elicitor.requests == []
    assert is_error and "error" in report


def test_raising_handlers_answer_an_error_or_cancel_and_the_binding_stays_ready() -> None:
    def bad_sampler(request: SampleRequest, ctx: HandlerContext) -> SampleResult:
        raise RuntimeError("no model")

    def bad_elicitor(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        raise RuntimeError("no person")

    events = Events()
    with legacy(handlers(sampling=bad_sampler, elicitation=bad_elicitor, event=events)) as c:
        report, is_error = server_request(c, "sampling/createMessage", sampling_params())
        assert is_error and "error" in report
        report, is_error = server_request(
            c, "elicitation/create", {"message": "Who?", "requestedSchema": FORM}
        )
        assert report == {"result": {"action": "cancel"}}
        assert c.status().state is mcpclient.State.READY
        assert text_of(c.call_tool("echo", {"message": "still here"})) == "still here"
    assert events.wait(SamplingResolved)[0].outcome is SampleOutcome.FAILED
    assert events.wait(ElicitationResolved)[0].action is ElicitAction.CANCEL


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"mode": "telepathy", "message": "Hi"}, id="unknown-mode"),
        pytest.param({"message": "Hi"}, id="form-without-schema"),
        pytest.param({"mode": "url", "message": "Hi"}, id="url-without-url"),
        pytest.param({"requestedSchema": FORM}, id="no-message"),
    ],
)
def test_malformed_elicitations_are_refused(params: dict[str, Any]) -> None:
    elicitor = Elicitor()
    with legacy(handlers(elicitation=elicitor)) as c:
        report, is_error = server_request(c, "elicitation/create", params)
    assert is_error and report["error"]["code"] == -32602
    assert elicitor.requests == []


def test_late_elicitation_answer_is_dropped(record: Path, release: threading.Event) -> None:
    returned = threading.Event()

    def slow(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        try:
            release.wait(30)
            return ElicitResult(ElicitAction.ACCEPT, content={"name": "late"})
        finally:
            returned.set()

    timeouts = Timeouts(startup=15, request=10, elicitation=0.3)
    with legacy(handlers(elicitation=slow), record, timeouts=timeouts) as c:
        report, _ = server_request(
            c, "elicitation/create", {"message": "Who?", "requestedSchema": FORM}
        )
        assert report == {"result": {"action": "cancel"}}
        release.set()
        assert returned.wait(5)
        # The abandoned job is over (its thread has its own name back once the
        # library has handled the late answer): whatever it wrote precedes the echo.
        assert support.threads_ended("mcpclient-abandoned-")
        assert text_of(c.call_tool("echo", {"message": "after"})) == "after"
    responses = [m for m in Recording(record).messages() if "method" not in m and m.get("id") == 1]
    assert responses == [{"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}]


@pytest.mark.parametrize("cap", [8, 3])
def test_a_flood_of_server_requests_is_served_by_one_bounded_pool(cap: int) -> None:
    # 2000 elicitations sent back to back: at most `cap` handler calls (and
    # handler threads) at once, each request answered, the excess refused at once.
    lock = threading.Lock()
    seen = {"active": 0, "max_active": 0, "max_threads": 0, "calls": 0}
    full = threading.Event()

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        with lock:
            seen["calls"] += 1
            seen["active"] += 1
            seen["max_active"] = max(seen["max_active"], seen["active"])
            threads = sum(
                t.name.startswith(("mcpclient-handler-", "mcpclient-abandoned-"))
                for t in threading.enumerate()
            )
            seen["max_threads"] = max(seen["max_threads"], threads)
            if seen["active"] >= cap:
                full.set()
        try:
            full.wait(10)  # the first `cap` calls hold their slots until all are taken
            return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})
        finally:
            with lock:
                seen["active"] -= 1

    limits = mcpclient.Limits() if cap == 8 else mcpclient.Limits(max_inbound_requests=cap)
    args = {
        "action": "server_request_flood",
        "method": "elicitation/create",
        "params": {"message": "Who?", "requestedSchema": FORM},
        "count": 2000,
        "timeout": 60,
    }
    with legacy(handlers(elicitation=elicit), limits=limits) as c:
        result = c.call_tool("hostile", args, CallOpts(timeout=90))
        report = json.loads(text_of(result))
        assert not result.is_error, report
        assert text_of(c.call_tool("echo", {"message": "after"})) == "after"
    assert report["unanswered"] == 0
    assert set(report["errors"]) <= {"-32000"}, report  # the pool's busy refusal only
    refused = report["errors"].get("-32000", 0)
    assert report["results"] + refused == 2000
    assert report["results"] == seen["calls"] and refused > 0
    assert seen["max_active"] == cap, seen
    assert seen["max_threads"] <= cap, seen


def test_elicitation_timeout_cancels_at_the_deadline(release: threading.Event) -> None:
    entered = threading.Event()

    def stuck(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        entered.set()
        release.wait(30)
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "too late"})

    events = Events()
    timeouts = Timeouts(startup=15, request=10, elicitation=0.5)
    client = legacy(handlers(elicitation=stuck, event=events), timeouts=timeouts)
    try:
        started = time.monotonic()
        report, _ = server_request(
            client, "elicitation/create", {"message": "Who?", "requestedSchema": FORM}
        )
        elapsed = time.monotonic() - started
        assert entered.is_set()
        assert report == {"result": {"action": "cancel"}}
        assert 0.4 < elapsed < 0.5 + SLACK
        [resolved] = events.wait(ElicitationResolved)
        assert resolved.action is ElicitAction.CANCEL
        assert any(t.name.startswith("mcpclient-abandoned-") for t in threading.enumerate())
    finally:
        started = time.monotonic()
        client.close()
        closed_in = time.monotonic() - started
    assert closed_in < SLACK, "close() waited for the abandoned handler"
    assert not release.is_set()


# =====================================================================  legacy: roots, logs


def test_roots_are_asked_afresh_every_time() -> None:
    calls: list[int] = []

    def provider(ctx: HandlerContext) -> list[Root]:
        calls.append(1)
        return [Root("file:///work/a", name=f"A{len(calls)}"), Root("file:///work/b")]

    with legacy(handlers(roots=provider)) as c:
        first, _ = server_request(c, "roots/list")
        second, _ = server_request(c, "roots/list")
    assert len(calls) == 2
    assert first["result"] == {
        "roots": [{"uri": "file:///work/a", "name": "A1"}, {"uri": "file:///work/b"}]
    }
    assert second["result"]["roots"][0]["name"] == "A2"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param([Root(f"file:///r/{i}") for i in range(65)], id="65-roots"),
        pytest.param(["file:///not-a-root-value"], id="not-root-values"),
    ],
)
def test_bad_roots_are_refused(answer: list[Any]) -> None:
    with legacy(handlers(roots=lambda ctx: answer)) as c:
        report, is_error = server_request(c, "roots/list")
        assert c.status().state is mcpclient.State.READY
    assert is_error and "error" in report


def test_exactly_64_roots_pass() -> None:
    roots = [Root(f"file:///r/{i}") for i in range(64)]
    with legacy(handlers(roots=lambda ctx: roots)) as c:
        report, is_error = server_request(c, "roots/list")
    assert not is_error and len(report["result"]["roots"]) == 64


def test_root_values_accept_only_file_uris() -> None:
    with pytest.raises(ValueError):
        Root("https://example.com/")


def test_notify_roots_changed_sends_the_notification(record: Path) -> None:
    with legacy(handlers(), record) as c:
        c.notify_roots_changed()
        rec = Recording(record)
        assert wait_until(lambda: "notifications/roots/list_changed" in rec.methods())
    init = Recording(record).requests("initialize")[0]
    assert init["params"]["capabilities"].get("roots", {}).get("listChanged") is True


def test_notify_roots_changed_is_silent_in_the_modern_era(record: Path) -> None:
    with modern(handlers(), record) as c:
        c.notify_roots_changed()
        c.call_tool("echo", {"message": "sync"})
    assert "notifications/roots/list_changed" not in Recording(record).methods()


@pytest.mark.parametrize("capability", ["sampling", "elicitation", "roots"])
def test_capability_without_handler_is_a_config_error(capability: str) -> None:
    kw: dict[str, Any] = {"sampling": Sampler(), "elicitation": Elicitor(), "roots": roots_none}
    kw.pop(capability)
    with pytest.raises(ConfigError) as info:
        mcpclient.connect(definition("--era", "legacy", capabilities=ALL), Handlers(**kw))
    assert info.value.failure_class is FailureClass.INVALID_CONFIG
    assert capability in info.value.message


def test_log_handler_receives_messages_and_set_level_is_sent(record: Path) -> None:
    got: list[LogMessage] = []
    with legacy(Handlers(log=got.append), record, capabilities=ClientCapabilities()) as c:
        c.call_tool("log", {"message": "hello logs", "level": "warning", "logger": "unit"})
        assert wait_until(lambda: any(m.text == "hello logs" for m in got))
    [message] = [m for m in got if m.text == "hello logs"]
    assert str(message.level) == "warning" and message.logger == "unit"
    assert len(Recording(record).requests("logging/setLevel")) == 1


def test_no_set_level_without_a_log_handler(record: Path) -> None:
    with legacy(Handlers(), record, capabilities=ClientCapabilities()) as c:
        c.call_tool("log", {"message": "unheard"})
    assert Recording(record).requests("logging/setLevel") == []


# =====================================================================  modern: MRTR


def ask_requests(record: Path) -> list[dict[str, Any]]:
    return [
        m
        for m in Recording(record).requests("tools/call")
        if (m.get("params") or {}).get("name") == "ask"
    ]


def elicit_input(key: str = "who", message: str = "Who are you?") -> dict[str, Any]:
    return {
        "key": key,
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": FORM},
    }


def test_mrtr_two_rounds_echo_state_with_new_ids(record: Path) -> None:
    state = 'opaque "state" \\ é ☃ {"not": "json"}  '
    elicitor = Elicitor()
    with modern(handlers(elicitation=elicitor), record) as c:
        result = c.call_tool("ask", {"inputs": [elicit_input()], "rounds": 2, "state": state})
    assert not result.is_error, text_of(result)
    answer = json.loads(text_of(result))
    assert answer["rounds"] == 2
    assert answer["requestState"] == f"r2:{state}"
    assert answer["inputResponses"] == {"who": {"action": "accept", "content": {"name": "Ada"}}}
    assert len(elicitor.requests) == 2
    sent = ask_requests(record)
    assert len(sent) == 3
    assert len({m["id"] for m in sent}) == 3, "each retry needs a new JSON-RPC id"
    first, *retries = sent
    assert "requestState" not in first["params"] and "inputResponses" not in first["params"]
    for n, retry in enumerate(retries, 1):
        params = retry["params"]
        assert params["requestState"] == f"r{n}:{state}"  # byte for byte
        assert set(params["inputResponses"]) == {"who"}
        assert all("resultType" not in r for r in params["inputResponses"].values())
        assert params["arguments"] == first["params"]["arguments"]
        assert params["name"] == "ask"


def test_mrtr_one_round_of_every_kind(record: Path) -> None:
    sampler = Sampler(text="sampled text")

    def provider(ctx: HandlerContext) -> list[Root]:
        return [Root("file:///proj", name="proj")]

    inputs = [
        elicit_input("e"),
        {"key": "s", "method": "sampling/createMessage", "params": sampling_params()},
        {"key": "r", "method": "roots/list"},
    ]
    events = Events()
    with modern(handlers(sampling=sampler, roots=provider, event=events), record) as c:
        result = c.call_tool("ask", {"inputs": inputs})
    responses = json.loads(text_of(result))["inputResponses"]
    assert responses["e"] == {"action": "accept", "content": {"name": "Ada"}}
    assert responses["s"]["role"] == "assistant"
    assert responses["s"]["content"] == {"type": "text", "text": "sampled text"}
    assert responses["s"]["model"] == "test-model"
    assert responses["r"] == {"roots": [{"uri": "file:///proj", "name": "proj"}]}
    assert all("resultType" not in r for r in responses.values())
    assert len(events.wait(SamplingResolved)) == 1
    assert len(events.wait(ElicitationResolved)) == 1


def test_mrtr_retries_carry_the_same_capabilities_and_nothing_carries_over(
    record: Path,
) -> None:
    with modern(handlers(), record) as c:
        c.call_tool("ask", {"inputs": [elicit_input()], "state": "one"})
        c.call_tool("ask", {"inputs": [elicit_input()], "state": "two"})
    key = "io.modelcontextprotocol/clientCapabilities"
    sent = ask_requests(record)
    assert len(sent) == 4
    caps = [m["params"]["_meta"][key] for m in sent]
    assert all(cap == caps[0] for cap in caps)
    assert {"elicitation", "sampling", "roots"} <= set(caps[0])
    assert [m["params"].get("requestState") for m in sent] == [None, "r1:one", None, "r1:two"]


def test_mrtr_state_only_round_retries_without_inputs(record: Path) -> None:
    sampler, elicitor = Sampler(), Elicitor()
    with modern(handlers(sampling=sampler, elicitation=elicitor), record) as c:
        result = c.call_tool("ask", {"inputs": [], "rounds": 2, "state": "poll"})
    assert json.loads(text_of(result))["requestState"] == "r2:poll"
    assert sampler.requests == [] and elicitor.requests == []
    retries = ask_requests(record)[1:]
    assert [m["params"]["requestState"] for m in retries] == ["r1:poll", "r2:poll"]
    assert all("inputResponses" not in m["params"] for m in retries)


def test_mrtr_without_request_state_sends_none(record: Path) -> None:
    with modern(handlers(), record) as c:
        result = c.call_tool("ask", {"inputs": [elicit_input()], "state": None})
    assert json.loads(text_of(result))["requestState"] is None
    retry = ask_requests(record)[1]
    assert "requestState" not in retry["params"]


def test_mrtr_round_limit(record: Path) -> None:
    elicitor = Elicitor()
    with modern(handlers(elicitation=elicitor), record, limits=Limits(max_input_rounds=3)) as c:
        with pytest.raises(LimitExceededError):
            c.call_tool("ask", {"inputs": [elicit_input()], "forever": True})
        assert c.status().state is mcpclient.State.READY
    assert len(ask_requests(record)) == 4  # the call and three retries
    assert len(elicitor.requests) == 3


def test_mrtr_too_many_inputs(record: Path) -> None:
    elicitor = Elicitor()
    limits = Limits(max_input_requests=2)
    with (
        modern(handlers(elicitation=elicitor), record, limits=limits) as c,
        pytest.raises(LimitExceededError),
    ):
        c.call_tool("ask", {"inputs": [elicit_input(f"k{i}") for i in range(3)]})
    assert elicitor.requests == []
    assert len(ask_requests(record)) == 1


def test_mrtr_sampling_refused_by_the_gates_aborts_the_call(record: Path) -> None:
    sampler = Sampler()
    bad = sampling_params(tools=[{"name": "t", "inputSchema": {"type": "object"}}])
    inputs = [{"key": "s", "method": "sampling/createMessage", "params": bad}]
    with (
        modern(handlers(sampling=sampler), record) as c,
        pytest.raises(InteractionError) as info,
    ):
        c.call_tool("ask", {"inputs": inputs})
    assert info.value.failure_class is FailureClass.SAMPLING_DENIED
    assert sampler.requests == []
    assert len(ask_requests(record)) == 1  # no retry


def test_mrtr_elicitation_declined_is_answered_decline(record: Path) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.DECLINE))
    with modern(handlers(elicitation=elicitor), record) as c:
        result = c.call_tool("ask", {"inputs": [elicit_input()]})
    assert json.loads(text_of(result))["inputResponses"] == {"who": {"action": "decline"}}


def test_mrtr_on_prompts_get_and_resources_read(record: Path) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"name": "Grace"}))
    with modern(handlers(elicitation=elicitor), record) as c:
        prompt = c.get_prompt("ask_prompt", {"state": "p-state"})
        resource = c.read_resource("test://ask")
    assert "Hello, Grace!" in repr(prompt)
    assert "Hello, Grace!" in repr(resource)
    assert len(elicitor.requests) == 2
    gets = Recording(record).requests("prompts/get")
    assert [m["params"].get("requestState") for m in gets] == [None, "r1:p-state"]
    assert gets[1]["params"]["arguments"] == {"state": "p-state"}
    reads = Recording(record).requests("resources/read")
    assert len(reads) == 2 and reads[0]["id"] != reads[1]["id"]
    assert reads[1]["params"]["uri"] == "test://ask"


@pytest.mark.parametrize(
    "result",
    [
        pytest.param({"resultType": "input_required"}, id="neither-requests-nor-state"),
        pytest.param({"resultType": "input_required", "inputRequests": []}, id="requests-list"),
        pytest.param({"resultType": "input_required", "requestState": 7}, id="state-not-string"),
        pytest.param(
            {"resultType": "input_required", "inputRequests": {"k": {"params": {}}}},
            id="entry-without-method",
        ),
        pytest.param({"resultType": "input_needed", "content": []}, id="unknown-result-type"),
        pytest.param(
            {"resultType": "input_required", "inputRequests": {"k": {"method": "ping"}}},
            id="unknown-input-method",
        ),
    ],
)
def test_malformed_input_required_is_a_protocol_error(result: dict[str, Any]) -> None:
    elicitor = Elicitor()
    with modern(handlers(elicitation=elicitor)) as c:
        with pytest.raises(ProtocolError):
            c.call_tool("hostile", {"action": "result", "result": result})
        assert c.status().state is mcpclient.State.READY
    assert elicitor.requests == []


def test_modern_client_does_not_serve_legacy_server_requests() -> None:
    # In 2026-07-28 MRTR replaces every server-initiated request (spec 2.4, 2.21):
    # the handler must not run; an error answer (or none) is fine.
    elicitor = Elicitor()
    with modern(handlers(elicitation=elicitor)) as c:
        result = c.call_tool(
            "hostile",
            {
                "action": "server_request",
                "method": "elicitation/create",
                "params": {"message": "Who?", "requestedSchema": FORM},
                "timeout": 2,
            },
        )
    assert elicitor.requests == []
    assert result.is_error


def test_input_required_where_not_allowed_is_a_protocol_error() -> None:
    elicitor = Elicitor()
    with modern(handlers(elicitation=elicitor)) as c:
        c.call_tool(
            "hostile",
            {
                "action": "script_result",
                "method": "completion/complete",
                "result": {
                    "resultType": "input_required",
                    "inputRequests": {"who": elicit_input()},
                    "requestState": "x",
                },
            },
        )
        with pytest.raises(ProtocolError):
            c.complete(mcpclient.PromptRef("greet"), "name", "A")
    assert elicitor.requests == []


def test_mrtr_elicitation_timeout_answers_cancel(record: Path, release: threading.Event) -> None:
    def stuck(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        release.wait(30)
        return ElicitResult(ElicitAction.DECLINE)

    events = Events()
    timeouts = Timeouts(startup=15, request=10, elicitation=0.5)
    client = modern(handlers(elicitation=stuck, event=events), record, timeouts=timeouts)
    try:
        started = time.monotonic()
        result = client.call_tool("ask", {"inputs": [elicit_input()]})
        assert time.monotonic() - started < 0.5 + SLACK
        assert json.loads(text_of(result))["inputResponses"] == {"who": {"action": "cancel"}}
        assert events.wait(ElicitationResolved)[0].action is ElicitAction.CANCEL
    finally:
        started = time.monotonic()
        client.close()
        assert time.monotonic() - started < SLACK


# =====================================================================  server-everything


def everything(make: MakeDefinition, hs: Handlers, **kw: Any) -> mcpclient.Client:
    kw.setdefault("capabilities", ALL)
    kw.setdefault("timeouts", Timeouts(startup=30, request=15))
    return mcpclient.connect(make(protocol="legacy", **kw), hs)


def test_everything_sampling(everything_definition: MakeDefinition) -> None:
    sampler, events = Sampler(text="the answer"), Events()
    limits = Limits(max_sampling_tokens=10)
    with everything(
        everything_definition, handlers(sampling=sampler, event=events), limits=limits
    ) as c:
        result = c.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 100})
    assert not result.is_error
    assert "the answer" in result.text
    [request] = sampler.requests
    assert request.max_tokens == 10
    assert "hi" in request.messages[0].text
    assert events.wait(SamplingResolved)[0].outcome is SampleOutcome.COMPLETED


def test_everything_elicitation(everything_definition: MakeDefinition) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada Lovelace"}))
    with everything(everything_definition, handlers(elicitation=elicitor)) as c:
        result = c.call_tool("trigger-elicitation-request", {})
    assert "Ada Lovelace" in result.text
    [request] = elicitor.requests
    assert request.mode is ElicitMode.FORM
    assert "name" in request.schema["properties"]


def test_everything_elicitation_declined(everything_definition: MakeDefinition) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.DECLINE))
    with everything(everything_definition, handlers(elicitation=elicitor)) as c:
        result = c.call_tool("trigger-elicitation-request", {})
    assert "decline" in result.text.lower()


def test_everything_roots(everything_definition: MakeDefinition) -> None:
    calls: list[int] = []

    def provider(ctx: HandlerContext) -> list[Root]:
        calls.append(1)
        return [Root("file:///srv/project", name="project")]

    with everything(everything_definition, handlers(roots=provider)) as c:
        assert wait_until(lambda: len(calls) >= 1, 5)  # it asks after initialization
        result = c.call_tool("get-roots-list", {})
        before = len(calls)
        c.notify_roots_changed()
        assert wait_until(lambda: len(calls) > before, 5)  # and again on list_changed
    assert "file:///srv/project" in result.text


def test_everything_logging(everything_definition: MakeDefinition) -> None:
    got: list[LogMessage] = []
    with everything(
        everything_definition,
        Handlers(log=got.append),
        capabilities=ClientCapabilities(),
        log_level=mcpclient.LogLevel.DEBUG,
    ) as c:
        c.call_tool("toggle-simulated-logging", {})
        assert wait_until(lambda: len(got) >= 1, 8)
    assert all(isinstance(m, LogMessage) and m.text for m in got)


# =====================================================================  the official SDK


SDK_ENV = {"MCPCLIENT_SDK_PEER_INTERACTIONS": "1"}


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_sdk_elicitation_in_both_eras(sdk_definition: MakeDefinition, protocol: str) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"}))
    defn = sdk_definition(
        protocol=protocol, env=SDK_ENV, capabilities=ALL, timeouts=Timeouts(startup=30, request=15)
    )
    with mcpclient.connect(defn, handlers(elicitation=elicitor)) as c:
        assert c.status().protocol_version.startswith("2026") == (protocol != "legacy")
        result = c.call_tool("ask_name", {})
    assert result.text == "Hello, Ada!"
    assert len(elicitor.requests) == 1


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_sdk_decline_and_sampling_in_both_eras(
    sdk_definition: MakeDefinition, protocol: str
) -> None:
    elicitor = Elicitor(ElicitResult(ElicitAction.DECLINE))
    sampler = Sampler(text="forty-two", model="m1")
    defn = sdk_definition(
        protocol=protocol, env=SDK_ENV, capabilities=ALL, timeouts=Timeouts(startup=30, request=15)
    )
    with mcpclient.connect(defn, handlers(elicitation=elicitor, sampling=sampler)) as c:
        declined = c.call_tool("ask_name", {})
        sampled = c.call_tool("ask_model", {"prompt": "what is it?"})
    assert declined.text == "no name (decline)"
    assert sampled.text == "m1: forty-two"
    assert sampler.requests[0].messages[0].text == "what is it?"
    assert sampler.requests[0].max_tokens == 64
