"""The listen re-open schedule (subscriptions.py): at most every 5 s, never after close."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.client.inbound import subscriptions
from mcpclient._internal.client.inbound.subscriptions import Subscriptions


@pytest.fixture(autouse=True)
def _watcher() -> Any:
    """A live binding holds the deadline watcher; so does each test here."""
    watcher.acquire()
    yield
    watcher.release()


class _Conn:
    """Stands in for a Connection: the re-open only hands it back to the binding."""


def _watch(reopened: list[Any], event: threading.Event) -> Subscriptions:
    def ended(conn: Any) -> None:
        reopened.append(conn)
        event.set()

    return Subscriptions("t", ended)


def test_a_reopen_due_sooner_waits_for_the_rest_of_the_interval(monkeypatch: Any) -> None:
    monkeypatch.setattr(subscriptions, "_REOPEN_INTERVAL", 0.3)
    reopened: list[Any] = []
    event = threading.Event()
    subs = _watch(reopened, event)
    conn = _Conn()
    subs._reopen(conn)  # the first is immediate
    assert reopened == [conn]
    event.clear()
    subs._reopen(conn)  # too soon: deferred, not dropped
    subs._reopen(conn)  # and not scheduled twice
    assert reopened == [conn]
    assert event.wait(3.0)
    assert reopened == [conn, conn]
    subs.close()


def test_no_reopen_is_scheduled_or_run_after_close(monkeypatch: Any) -> None:
    monkeypatch.setattr(subscriptions, "_REOPEN_INTERVAL", 0.3)
    reopened: list[Any] = []
    event = threading.Event()
    subs = _watch(reopened, event)
    conn = _Conn()
    subs._reopen(conn)
    event.clear()
    subs._reopen(conn)  # deferred on the watcher...
    subs.close()  # ...and dropped
    subs._reopen(conn)  # a late end (a reconnect closing its connection) changes nothing
    # The watcher runs its timers in deadline order: once a marker due just after
    # the dropped re-open has run, that re-open would have run too.
    passed = threading.Event()
    watcher.schedule(now() + 0.35, passed.set)
    assert passed.wait(5.0)
    assert not event.is_set()
    assert reopened == [conn]
    assert subs._reopen_timer is None
