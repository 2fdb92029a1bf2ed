"""``submit_tool_call`` against the testing server: no thread per call.

A submission queued behind a busy turn waits in the binding's gate as an
entry, with no thread of its own; it is sent by whichever thread frees the
turn, in submission order. Its deadline, a cancel, and ``close()`` take it out
of the queue unsent. The first call of each test is a ``slow`` tool holding
the turn, and ``--record`` shows what reached the server, in order.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from pathlib import Path

import pytest

from mcpclient import (
    CallOpts,
    CancelToken,
    Client,
    ClientCapabilities,
    DeadlineExceededError,
    ElicitAction,
    ElicitRequest,
    ElicitResult,
    FailureClass,
    HandlerContext,
    Handlers,
    Limits,
    RequestCancelledError,
    ShutdownError,
    ToolResult,
    connect,
)

from .engine_support import SLACK, Recording, definition, wait_until

QUEUED = 50


def _library_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("mcpclient-")}


def _echoed(rec: Recording) -> list[str]:
    return [
        m["params"]["arguments"]["message"]
        for m in rec.requests("tools/call")
        if m["params"]["name"] == "echo"
    ]


def _busy(client: Client, rec: Recording, seconds: float) -> concurrent.futures.Future[ToolResult]:
    """A ``slow`` call holding the turn, once the server has it."""
    future = client.submit_tool_call("slow", {"seconds": seconds}, CallOpts(timeout=30))
    assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 1)
    return future


def test_queued_submissions_have_no_thread_of_their_own(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        busy = _busy(client, rec, 1.0)
        names, count = _library_threads(), threading.active_count()
        futures = [
            client.submit_tool_call("echo", {"message": str(i)}, CallOpts(timeout=30))
            for i in range(QUEUED)
        ]
        new = _library_threads() - names
        assert not new, f"threads started for queued submissions: {sorted(new)}"
        assert threading.active_count() <= count
        assert not busy.done() and not any(f.done() for f in futures)
        assert _echoed(rec) == [], "a queued submission was sent while the turn was held"
        peak = count
        while not all(f.done() for f in futures):  # nor while the queue drains
            peak = max(peak, threading.active_count())
            time.sleep(0.005)
        assert peak <= count + 1, peak  # at most the on-demand event lane or writer
        assert busy.result(timeout=10).text == "slept 1 s"
        assert [f.result(timeout=10).text for f in futures] == [str(i) for i in range(QUEUED)]
        assert _echoed(rec) == [str(i) for i in range(QUEUED)], "not sent in submission order"


def test_submissions_and_blocking_calls_share_one_fifo(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "legacy", record=rec.path)) as client:
        busy = _busy(client, rec, 0.8)
        first = [client.submit_tool_call("echo", {"message": f"s{i}"}) for i in range(3)]
        blocking: list[str] = []
        caller = threading.Thread(
            target=lambda: blocking.append(client.call_tool("echo", {"message": "b"}).text)
        )
        caller.start()
        # The blocking caller has its place in the queue once it waits there.
        serial = client._calls.serial
        assert serial is not None
        assert wait_until(lambda: serial._sync.waiting == 1)
        later = [client.submit_tool_call("echo", {"message": f"t{i}"}) for i in range(3)]
        caller.join(10)
        assert blocking == ["b"]
        for future in (busy, *first, *later):
            future.result(timeout=10)
        assert _echoed(rec) == ["s0", "s1", "s2", "b", "t0", "t1", "t2"]


@pytest.mark.parametrize("how", ["future", "token"])
def test_a_cancelled_queued_submission_is_never_sent(how: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        busy = _busy(client, rec, 0.8)
        token = CancelToken()
        before = client.submit_tool_call("echo", {"message": "before"})
        doomed = client.submit_tool_call("echo", {"message": "doomed"}, CallOpts(cancel=token))
        after = client.submit_tool_call("echo", {"message": "after"})
        if how == "future":
            assert doomed.cancel() is True
            assert doomed.cancelled()
            with pytest.raises(concurrent.futures.CancelledError):
                doomed.result(timeout=1)
        else:
            token.cancel("changed my mind")
            exc = doomed.exception(timeout=1)
            assert isinstance(exc, RequestCancelledError), exc
            assert exc.failure_class is FailureClass.CANCELLED
            assert "before it was sent" in exc.message
        assert not busy.done(), "the cancel took effect while the call waited"
        assert before.result(timeout=10).text == "before"
        assert after.result(timeout=10).text == "after"
        assert busy.result(timeout=10).text == "slept 0.8 s"
        assert _echoed(rec) == ["before", "after"]


def test_a_queued_submission_ends_by_its_own_deadline_unsent(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        busy = _busy(client, rec, 1.5)
        start = time.monotonic()
        late = client.submit_tool_call("echo", {"message": "late"}, CallOpts(timeout=0.3))
        waiting = client.submit_tool_call("echo", {"message": "waiting"}, CallOpts(timeout=20))
        exc = late.exception(timeout=5)
        assert time.monotonic() - start < 0.3 + SLACK
        assert isinstance(exc, DeadlineExceededError), exc
        assert exc.failure_class is FailureClass.DEADLINE
        assert exc.op == "call_tool"
        assert "earlier call" in exc.message and "allow_parallel_calls" in exc.message
        assert not busy.done(), "it ended by its own deadline, not the other call's end"
        assert busy.result(timeout=10).text == "slept 1.5 s"
        assert waiting.result(timeout=10).text == "waiting"
        assert _echoed(rec) == ["waiting"], "the expired submission was sent"


def test_close_fails_every_queued_submission_with_shutdown(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    client = connect(definition("--era", "modern", record=rec.path))
    try:
        busy = _busy(client, rec, 30)
        queued = [client.submit_tool_call("echo", {"message": str(i)}) for i in range(5)]
    finally:
        client.close()
    for future in queued:
        exc = future.exception(timeout=5)
        assert isinstance(exc, ShutdownError), exc
        assert exc.failure_class is FailureClass.SHUTDOWN
    assert busy.exception(timeout=5) is not None
    assert _echoed(rec) == []


def test_request_slots_queue_submissions_without_threads(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era",
        "modern",
        record=rec.path,
        allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=2),
    )
    with connect(defn) as client:
        slow = [client.submit_tool_call("slow", {"seconds": 1.0}) for _ in range(2)]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 2)
        names = _library_threads()
        late = client.submit_tool_call("echo", {"message": "late"}, CallOpts(timeout=0.3))
        queued = [client.submit_tool_call("echo", {"message": str(i)}) for i in range(10)]
        assert _library_threads() - names == set()
        exc = late.exception(timeout=5)
        assert isinstance(exc, DeadlineExceededError), exc
        assert "max_concurrent_requests" in exc.message
        assert [f.result(timeout=10).text for f in queued] == [str(i) for i in range(10)]
        for future in slow:
            future.result(timeout=10)
        assert _echoed(rec) == [str(i) for i in range(10)]


def test_done_callbacks_run_off_the_reader_and_may_call_again(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        seen: list[tuple[str, str]] = []
        finished = threading.Event()

        def again(future: concurrent.futures.Future[ToolResult]) -> None:
            # A blocking call from a done-callback: on the reader it could never
            # be answered (the reader would be the one waiting).
            text = client.call_tool("echo", {"message": "nested"}, CallOpts(timeout=5)).text
            seen.append((threading.current_thread().name, text))
            finished.set()

        busy = _busy(client, rec, 0.3)
        queued = client.submit_tool_call("echo", {"message": "first"})
        queued.add_done_callback(again)
        assert finished.wait(10)
        assert busy.result(timeout=5).text == "slept 0.3 s"
        ((name, text),) = seen
        assert text == "nested"
        assert name.startswith("mcpclient-dispatch-"), name
        # Added once done: it runs at once, on the caller's thread, as Future does.
        here: list[str] = []
        queued.add_done_callback(lambda _f: here.append(threading.current_thread().name))
        assert here == [threading.current_thread().name]


def _no_call_thread(started: list[str] | None = None) -> None:
    # A submitted call never has a thread of its own (the old on-demand one).
    names = _library_threads() if started is None else set(started)
    assert not [n for n in names if n.startswith("mcpclient-call-")]


def test_a_submitted_call_needing_input_rounds_finishes_holding_its_turn(
    tmp_path: Path, started_threads: list[str]
) -> None:
    # A modern input_required answer needs the elicitation handler: each round
    # is answered on a handler thread and sent again from there, with no
    # thread of the call's own, still holding the turn, so the call queued
    # behind it is sent only once it is over.
    rec = Recording(tmp_path / "rec.jsonl")
    asked: list[str] = []

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        _no_call_thread()
        asked.append(request.message)
        return ElicitResult(ElicitAction.ACCEPT, content={"name": "Ada"})

    form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    ask = {
        "key": "who",
        "method": "elicitation/create",
        "params": {"message": "Who?", "requestedSchema": form},
    }
    defn = definition(
        "--era",
        "modern",
        "--mrtr",
        record=rec.path,
        capabilities=ClientCapabilities(elicitation=True),
    )
    with connect(defn, Handlers(elicitation=elicit)) as client:
        busy = _busy(client, rec, 0.5)
        asking = client.submit_tool_call("ask", {"inputs": [ask], "rounds": 2, "state": "s"})
        behind = client.submit_tool_call("echo", {"message": "behind"})
        answer = json.loads(asking.result(timeout=10).text)
        assert answer["rounds"] == 2
        assert answer["inputResponses"] == {"who": {"action": "accept", "content": {"name": "Ada"}}}
        assert asked == ["Who?", "Who?"]
        assert behind.result(timeout=10).text == "behind"
        busy.result(timeout=10)
        sent = [m["params"]["name"] for m in rec.requests("tools/call")]
        assert sent == ["slow", "ask", "ask", "ask", "echo"]
        _no_call_thread(started_threads)


def test_a_submitted_call_does_the_url_elicitations_of_a_32042_then_is_sent_again(
    tmp_path: Path, started_threads: list[str]
) -> None:
    # 2025-11-25's -32042 as call_tool meets it: the URL elicitation goes to
    # the handler, then the call is sent once more (it failed before).
    rec = Recording(tmp_path / "rec.jsonl")
    asked: list[str] = []

    def elicit(request: ElicitRequest, ctx: HandlerContext) -> ElicitResult:
        _no_call_thread()
        asked.append(request.url or "")
        return ElicitResult(ElicitAction.ACCEPT)

    needed = {
        "action": "error",
        "code": -32042,
        "message": "sign in first",
        "data": {
            "elicitations": [
                {
                    "mode": "url",
                    "message": "Sign in",
                    "url": "https://auth.example/sign-in",
                    "elicitationId": "e1",
                }
            ]
        },
        "times": 1,
        "key": "signin",
    }
    defn = definition(record=rec.path, capabilities=ClientCapabilities(elicitation=True))
    with connect(defn, Handlers(elicitation=elicit)) as client:
        result = client.submit_tool_call("hostile", needed).result(timeout=10)
        assert result.text == "answered after 1 errors"
        assert asked == ["https://auth.example/sign-in"]
        assert len(rec.requests("tools/call")) == 2
        _no_call_thread(started_threads)
