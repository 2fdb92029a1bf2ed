"""Many threads on one binding: uncrossed results, bounded concurrency, prompt close."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    DeadlineExceededError,
    Error,
    Handlers,
    IndeterminateError,
    Limits,
    ShutdownError,
    State,
    connect,
)
from tests.support import Events

from .engine_support import (
    SLACK,
    Recording,
    children_of,
    definition,
    reaped,
    server_pid,
    states,
    text_of,
    wait_until,
)

THREADS = 64


def _parallel_definition(**fields: object) -> mcpclient.Definition:
    return definition(
        "--era",
        "modern",
        allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=THREADS),
        **fields,  # type: ignore[arg-type]
    )


def _run_threads(count: int, target: object, timeout: float = 30.0) -> None:
    threads = [
        threading.Thread(target=target, args=(i,), name=f"test-caller-{i}")  # type: ignore[arg-type]
        for i in range(count)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a caller thread hung"


def test_64_threads_get_their_own_results() -> None:
    rounds = 3
    barrier = threading.Barrier(THREADS)
    results: dict[str, str] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()
    with connect(_parallel_definition()) as client:

        def caller(i: int) -> None:
            try:
                barrier.wait(10)
                for r in range(rounds):
                    message = f"thread-{i}-round-{r}-" + "x" * (i * 37 % 300)
                    result = client.call_tool("echo", {"message": message}, CallOpts(timeout=20))
                    with lock:
                        results[message] = text_of(result)
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        _run_threads(THREADS, caller)
        assert errors == []
        assert len(results) == THREADS * rounds
        crossed = {sent: got for sent, got in results.items() if sent != got}
        assert crossed == {}
        assert client.status().state is State.READY


def test_structured_results_are_not_crossed_either() -> None:
    errors: list[BaseException] = []
    with connect(_parallel_definition()) as client:

        def caller(i: int) -> None:
            try:
                for j in range(3):
                    result = client.call_tool("add", {"a": i, "b": j * 1000}, CallOpts(timeout=20))
                    assert result.structured == {"sum": i + j * 1000}
            except BaseException as exc:
                errors.append(exc)

        _run_threads(32, caller)
    assert errors == []


def test_serialized_calls_from_many_threads_are_correct() -> None:
    # allow_parallel_calls=False (the default): one call at a time, still all correct.
    errors: list[BaseException] = []
    with connect(definition("--era", "modern")) as client:

        def caller(i: int) -> None:
            try:
                for r in range(3):
                    message = f"serial-{i}-{r}"
                    got = text_of(client.call_tool("echo", {"message": message}))
                    assert got == message
            except BaseException as exc:
                errors.append(exc)

        _run_threads(16, caller)
    assert errors == []


def test_submit_fan_out_from_one_thread() -> None:
    with connect(_parallel_definition()) as client:
        futures = {
            f"fan-{i}": client.submit_tool_call(
                "echo", {"message": f"fan-{i}"}, CallOpts(timeout=20)
            )
            for i in range(THREADS)
        }
        for message, future in futures.items():
            assert text_of(future.result(timeout=20)) == message


def test_concurrency_limit_queues_calls_within_their_deadline(tmp_path: Path) -> None:
    # Two slots: the third and fourth calls wait, and a waiting call still ends by
    # its own deadline.
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era",
        "modern",
        record=rec.path,
        allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=2),
    )
    with connect(defn) as client:
        busy = [
            client.submit_tool_call("slow", {"seconds": 1.5}, CallOpts(timeout=20))
            for _ in range(2)
        ]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 2)
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool("echo", {"message": "late"}, CallOpts(timeout=0.5))
        assert time.monotonic() - start < 0.5 + SLACK
        # It never reached the server.
        assert rec.tool_call_ids("echo") == []
        for future in busy:
            assert not future.result(timeout=10).is_error
        assert text_of(client.call_tool("echo", {"message": "now"})) == "now"


def test_close_with_64_calls_in_flight_ends_them_all_promptly(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    outcomes: dict[int, BaseException | None] = {}
    ended: dict[int, float] = {}
    lock = threading.Lock()
    before = children_of(os.getpid())
    client = connect(_parallel_definition(record=rec.path), Handlers(event=events))
    pid = server_pid(before)

    def caller(i: int) -> None:
        outcome: BaseException | None = None
        try:
            client.call_tool("slow", {"seconds": 60 + i}, CallOpts(timeout=30))
        except BaseException as exc:
            outcome = exc
        with lock:
            outcomes[i] = outcome
            ended[i] = time.monotonic()

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    try:
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == THREADS, 15), (
            f"only {len(rec.tool_call_ids('slow'))} calls reached the server"
        )
    finally:
        closed_at = time.monotonic()
        closer = threading.Thread(target=client.close, kwargs={"timeout": 5})
        closer.start()
        closer.join(10)
        close_took = time.monotonic() - closed_at
        for t in threads:
            t.join(10)
    assert not closer.is_alive()
    assert close_took < 5, f"close took {close_took:.2f} s"
    assert not any(t.is_alive() for t in threads)
    assert len(outcomes) == THREADS
    assert all(e is not None for e in outcomes.values())
    latest = max(ended.values())
    assert latest - closed_at < 5, "a call outlived close()"
    kinds = {type(e).__name__ for e in outcomes.values()}
    assert kinds <= {"IndeterminateError", "ShutdownError"}, kinds
    # Every one of them was sent (the server recorded all 64): each is indeterminate.
    assert all(isinstance(e, IndeterminateError) for e in outcomes.values()), kinds
    assert reaped(pid)
    assert client.status().state is State.CLOSED
    assert states(events)[-2:] == [("ready", "closing"), ("closing", "closed")]


def test_close_with_calls_waiting_for_slots(tmp_path: Path) -> None:
    # More callers than slots: the sent ones are indeterminate, the waiting ones
    # were never sent and end with ShutdownError.
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era",
        "modern",
        record=rec.path,
        allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=4),
    )
    outcomes: list[BaseException | None] = []
    lock = threading.Lock()
    client = connect(defn)

    def caller(i: int) -> None:
        outcome: BaseException | None = None
        try:
            client.call_tool("slow", {"seconds": 60}, CallOpts(timeout=30))
        except BaseException as exc:
            outcome = exc
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    # Every slot is taken: the server has the four calls that hold them.
    assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 4)
    start = time.monotonic()
    client.close(timeout=3)
    for t in threads:
        t.join(10)
    assert time.monotonic() - start < 3 + SLACK
    assert not any(t.is_alive() for t in threads)
    assert all(isinstance(e, ShutdownError | IndeterminateError) for e in outcomes), outcomes
    assert sum(isinstance(e, IndeterminateError) for e in outcomes) == 4
    assert sum(isinstance(e, ShutdownError) for e in outcomes) == 8


def test_calls_racing_close_all_end_classified() -> None:
    # Calls keep starting while close() runs: each ends with a result or a classified
    # error, none hangs, and nothing leaks (the leak guard checks).
    errors: list[BaseException] = []
    unclassified: list[BaseException] = []
    answered: list[int] = []
    stop = threading.Event()
    client = connect(_parallel_definition())

    def caller(i: int) -> None:
        while not stop.is_set():
            try:
                client.call_tool("echo", {"message": f"race-{i}"}, CallOpts(timeout=10))
                answered.append(i)
            except Error as exc:
                errors.append(exc)
                if isinstance(exc, ShutdownError):
                    return
            except BaseException as exc:
                unclassified.append(exc)
                return

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    # Calls are flowing from every caller (each answered at least once) when close() runs.
    assert wait_until(lambda: len(set(answered)) == len(threads), 10)
    client.close(timeout=3)
    stop.set()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert unclassified == []
    assert any(isinstance(e, ShutdownError) for e in errors)
    allowed = (ShutdownError, IndeterminateError)
    assert all(isinstance(e, allowed) for e in errors), {type(e).__name__ for e in errors}


def test_status_and_catalog_are_safe_under_load() -> None:
    errors: list[BaseException] = []
    with connect(_parallel_definition()) as client:
        digest = client.catalog().digest

        def caller(i: int) -> None:
            try:
                for _ in range(20):
                    if i % 2:
                        assert client.status().state is State.READY
                        assert client.catalog().digest == digest
                    else:
                        client.call_tool("echo", {"message": str(i)}, CallOpts(timeout=20))
            except BaseException as exc:
                errors.append(exc)

        _run_threads(16, caller)
    assert errors == []
