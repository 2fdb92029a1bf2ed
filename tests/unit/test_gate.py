"""The admission gates' queued entries: calls waiting with no thread of their own.

No peer can show the gate's own bookkeeping (who admits an entry, on which
thread, exactly once); the integration tests in ``test_submit.py`` show the
same behaviour end to end against the testing server.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import pytest

from mcpclient import CancelToken, DeadlineExceededError, RequestCancelledError, ShutdownError
from mcpclient._core.deadline import now
from mcpclient._internal.client.calls.gate import (
    Entry,
    Gate,
    enter_pair,
    leave_entry,
    leave_pair,
    queue_entry,
)
from mcpclient.errors import Error


class Log:
    """Records each entry's one outcome and the thread it ran on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.admitted: list[str] = []
        self.failed: list[tuple[str, Error]] = []
        self.threads: dict[str, str] = {}

    def entry(
        self,
        name: str,
        gates: tuple[Gate, ...],
        *,
        timeout: float = 30.0,
        leave_at_once: bool = False,
    ) -> Entry:
        holder: list[Entry] = []

        def admit() -> None:
            with self.lock:
                self.admitted.append(name)
                self.threads[name] = threading.current_thread().name
            if leave_at_once:
                leave_entry(holder[0])

        def fail(exc: Error) -> None:
            with self.lock:
                self.failed.append((name, exc))

        entry = Entry(gates, deadline=now() + timeout, op="call_tool", on_admit=admit, on_fail=fail)
        holder.append(entry)
        return entry

    def outcomes(self) -> int:
        return len(self.admitted) + len(self.failed)


def pair(slots: int = 8) -> tuple[Gate, Gate]:
    inner = Gate(slots, binding="b")
    outer = Gate(1, binding="b", share=inner, serializes=True)
    return outer, inner


def test_entries_are_admitted_in_order_by_the_thread_that_frees_the_turn() -> None:
    outer, inner = pair()
    log = Log()
    first = log.entry("first", (outer, inner))
    queue_entry(first, None)
    assert log.admitted == ["first"], "a free gate admits at once, on the submitter's thread"
    entries = [log.entry(str(i), (outer, inner)) for i in range(5)]
    for entry in entries:
        queue_entry(entry, None)
    assert log.admitted == ["first"]
    releaser = threading.Thread(target=leave_entry, args=(first,), name="releaser")
    releaser.start()
    releaser.join()
    assert log.admitted == ["first", "0"]
    assert log.threads["0"] == "releaser"
    for entry in entries:
        leave_entry(entry)
    assert log.admitted == ["first", "0", "1", "2", "3", "4"]
    assert outer._busy == inner._busy == 0


def test_a_blocked_caller_keeps_its_place_between_entries() -> None:
    outer, inner = pair()
    log = Log()
    holder = log.entry("holder", (outer, inner))
    queue_entry(holder, None)
    before = log.entry("before", (outer, inner), leave_at_once=True)
    queue_entry(before, None)
    order: list[str] = []

    def blocking() -> None:
        enter_pair(outer, inner, now() + 10, None, "call_tool")
        order.append("blocking")
        with log.lock:
            order.extend(log.admitted)
        leave_pair(outer, inner)

    caller = threading.Thread(target=blocking)
    caller.start()
    assert _wait(lambda: outer._sync.waiting == 1)
    after = log.entry("after", (outer, inner), leave_at_once=True)
    queue_entry(after, None)
    leave_entry(holder)
    caller.join(5)
    assert order == ["blocking", "holder", "before"], "the entry behind it waited its turn"
    assert _wait(lambda: log.admitted == ["holder", "before", "after"])


def test_an_entry_holding_the_turn_waits_for_a_request_slot() -> None:
    outer, inner = pair(slots=1)
    log = Log()
    inner.enter(now() + 5, None, "read_resource")  # the one slot, held by another request
    entry = log.entry("call", (outer, inner))
    queue_entry(entry, None)
    assert log.admitted == []
    assert outer._busy == 1, "it passed serialization and waits in the slots"
    inner.leave()
    assert log.admitted == ["call"]
    leave_entry(entry)
    assert outer._busy == inner._busy == 0


@pytest.mark.parametrize("cancelled_already", [False, True])
def test_a_cancelled_entry_leaves_the_queue_and_the_next_one_moves_up(
    cancelled_already: bool,
) -> None:
    outer, inner = pair()
    log = Log()
    holder = log.entry("holder", (outer, inner))
    queue_entry(holder, None)
    token = CancelToken()
    if cancelled_already:
        token.cancel("early")
    doomed = log.entry("doomed", (outer, inner))
    queue_entry(doomed, token)
    nxt = log.entry("next", (outer, inner))
    queue_entry(nxt, None)
    token.cancel("late")
    ((name, exc),) = log.failed
    assert name == "doomed"
    assert isinstance(exc, RequestCancelledError) and "before it was sent" in exc.message
    leave_entry(holder)
    assert log.admitted == ["holder", "next"]
    token.cancel("again")  # nothing left to withdraw
    assert log.outcomes() == 3


def test_a_queued_entry_fails_at_its_deadline_naming_serialization() -> None:
    outer, inner = pair()
    log = Log()
    holder = log.entry("holder", (outer, inner))
    queue_entry(holder, None)
    start = time.monotonic()
    late = log.entry("late", (outer, inner), timeout=0.2)
    queue_entry(late, None)
    assert _wait(lambda: bool(log.failed))
    assert 0.15 <= time.monotonic() - start < 2.0
    ((name, exc),) = log.failed
    assert name == "late" and isinstance(exc, DeadlineExceededError)
    assert "earlier call" in exc.message and "allow_parallel_calls" in exc.message
    assert (outer._busy, outer._sync.entries) == (1, 0)
    leave_entry(holder)
    assert log.admitted == ["holder"]


def test_close_fails_every_queued_entry_in_either_gate() -> None:
    outer, inner = pair(slots=1)
    log = Log()
    inner.enter(now() + 5, None, "read_resource")
    in_slots = log.entry("in_slots", (outer, inner))  # holds the turn, waits for a slot
    queue_entry(in_slots, None)
    in_turn = [log.entry(f"turn{i}", (outer, inner)) for i in range(3)]
    for entry in in_turn:
        queue_entry(entry, None)
    inner.close()  # the order Client.close() uses: slots first
    outer.close()
    assert log.admitted == []
    assert [name for name, _ in log.failed] == ["in_slots", "turn0", "turn1", "turn2"]
    assert all(isinstance(exc, ShutdownError) for _, exc in log.failed)
    assert outer._busy == 0 and outer._sync.entries == 0
    late = log.entry("late", (outer, inner))
    queue_entry(late, None)
    assert isinstance(log.failed[-1][1], ShutdownError), "a closed gate refuses new entries"


def test_a_chain_of_admissions_does_not_recurse() -> None:
    outer, inner = pair()
    log = Log()
    holder = log.entry("holder", (outer, inner))
    queue_entry(holder, None)
    count = 5000  # each admission frees the turn at once, admitting the next
    for i in range(count):
        queue_entry(log.entry(str(i), (outer, inner), leave_at_once=True), None)
    leave_entry(holder)  # would exceed the recursion limit without the trampoline
    assert log.admitted == ["holder", *(str(i) for i in range(count))]
    assert outer._busy == inner._busy == 0


def test_each_entry_has_exactly_one_outcome_under_racing_cancels() -> None:
    outer, inner = pair(slots=2)
    log = Log()
    rng = random.Random(7)
    tokens = [CancelToken() for _ in range(300)]
    entries = [log.entry(str(i), (outer, inner), leave_at_once=True) for i in range(300)]
    holder = log.entry("holder", (outer, inner))
    queue_entry(holder, None)
    for entry, token in zip(entries, tokens, strict=True):
        queue_entry(entry, token)
    victims = rng.sample(tokens, 150)
    cancellers = [
        threading.Thread(target=lambda part=victims[i::3]: [t.cancel("race") for t in part])
        for i in range(3)
    ]
    for thread in cancellers:
        thread.start()
    leave_entry(holder)
    for thread in cancellers:
        thread.join(5)
    assert _wait(lambda: log.outcomes() == 301)
    names = log.admitted + [name for name, _ in log.failed]
    assert sorted(names) == sorted(["holder", *(str(i) for i in range(300))])
    admitted = [int(n) for n in log.admitted if n != "holder"]
    assert admitted == sorted(admitted), "admitted out of order"
    assert (outer._busy, inner._busy, outer._sync.entries) == (0, 0, 0)


def _wait(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()
