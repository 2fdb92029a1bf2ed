"""The request table's Future across threads: every waiter wakes at the one completion.

A :class:`Pending` is its own condition (a gate released once, that each
waiter passes on to the next): several threads blocked in ``result()``,
``concurrent.futures.wait`` and the table's own deadline wait all return when
the request completes, each with the same outcome.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.request_table import RequestTable


def test_every_kind_of_waiter_wakes_at_the_one_completion() -> None:
    table = RequestTable("waiters", send_cancel=lambda request_id, reason: None)
    entry = table.new("tools/call", CallContext(op="call_tool", deadline=table.clock() + 60))
    assert table.enter(entry)
    seen: list[Any] = []
    lock = threading.Lock()

    def by_result() -> None:
        value = entry.result(timeout=30)
        with lock:
            seen.append(("result", value))

    def by_wait() -> None:
        done, _ = concurrent.futures.wait([entry], timeout=30)
        with lock:
            seen.append(("wait", entry in done))

    def by_table() -> None:
        table.wait(entry)
        with lock:
            seen.append(("table", entry.result(timeout=0)))

    threads = [
        threading.Thread(target=target, name=f"test-waiter-{i}")
        for i, target in enumerate([by_result, by_result, by_wait, by_table, by_table])
    ]
    for thread in threads:
        thread.start()
    # Let them block (they need not have: a late waiter passes the open gate).
    threading.Event().wait(0.2)
    assert table.answer(entry.request_id, "the answer")
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert sorted(seen) == sorted(
        [
            ("result", "the answer"),
            ("result", "the answer"),
            ("wait", True),
            ("table", "the answer"),
            ("table", "the answer"),
        ]
    )
    assert entry.wait_done(0), "the gate stays open for anyone who comes later"


def test_a_waiter_wakes_when_the_future_is_cancelled() -> None:
    table = RequestTable("waiters", send_cancel=lambda request_id, reason: None)
    entry = table.new("tools/call", CallContext(op="call_tool", deadline=table.clock() + 60))
    assert table.enter(entry)
    outcome: list[BaseException] = []

    def waiter() -> None:
        try:
            entry.result(timeout=30)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=waiter, name="test-cancel-waiter")
    thread.start()
    threading.Event().wait(0.1)
    assert entry.cancel()
    thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], concurrent.futures.CancelledError)
