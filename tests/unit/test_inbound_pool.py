"""The one bounded pool of a binding's server requests (client/inbound/inbound_pool.py)."""

from __future__ import annotations

import threading

from mcpclient._internal.client.inbound.inbound_pool import InboundPool, Ticket


def _held(pool: InboundPool, count: int, release: threading.Event) -> list[threading.Event]:
    entered = []
    for _ in range(count):
        started = threading.Event()

        def job(started: threading.Event = started) -> None:
            started.set()
            release.wait(10)

        assert pool.submit(job, Ticket("b"))
        entered.append(started)
    for started in entered:
        assert started.wait(5)
    return entered


def test_the_job_past_the_cap_is_refused_at_once_and_a_slot_frees_on_return() -> None:
    pool = InboundPool("b", limit=3)
    release = threading.Event()
    _held(pool, 3, release)
    assert pool.in_flight == 3
    ran: list[int] = []
    assert not pool.submit(lambda: ran.append(1), Ticket("b"))
    handler_threads = [t for t in threading.enumerate() if t.name == "mcpclient-handler-b"]
    assert len(handler_threads) == 3
    release.set()
    done = threading.Event()
    while not pool.submit(done.set, Ticket("b")):
        threading.Event().wait(0.01)  # the held jobs are returning
    assert done.wait(5)
    assert ran == []
    pool.close()
    assert not pool.submit(lambda: None, Ticket("b"))


def test_an_abandoned_job_keeps_its_slot_and_its_thread_gets_its_name_back() -> None:
    pool = InboundPool("b", limit=1)
    release, entered = threading.Event(), threading.Event()
    names: list[str] = []
    ticket = Ticket("b")

    def job() -> None:
        entered.set()
        release.wait(10)
        names.append(threading.current_thread().name)

    assert pool.submit(job, ticket)
    assert entered.wait(5)
    ticket.abandon()
    assert names == [] and any(t.name == "mcpclient-abandoned-b" for t in threading.enumerate())
    assert not pool.submit(lambda: None, Ticket("b"))  # still running: the slot is taken
    release.set()
    after = threading.Event()
    while not pool.submit(
        lambda: names.append(threading.current_thread().name) or after.set(), Ticket("b")
    ):
        threading.Event().wait(0.01)
    assert after.wait(5)
    assert names == ["mcpclient-abandoned-b", "mcpclient-handler-b"]
    pool.close()
