"""Polling and deadlines for tests: the one ``wait_until`` and the one ``soon``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mcpclient._core.deadline import now


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, step: float = 0.02) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes; return whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


def threads_ended(prefix: str, timeout: float = 5.0) -> bool:
    """Wait until no live thread's name starts with ``prefix``; return whether none is left.

    Library threads are named by role and binding (``mcpclient-refresh-<binding>``,
    ``mcpclient-listen-<binding>``, ``mcpclient-abandoned-<binding>``): a worker
    that exists only while it has work is done once its thread is gone.
    """
    return wait_until(
        lambda: not any(t.name.startswith(prefix) for t in threading.enumerate()), timeout
    )


def soon(seconds: float = 5.0) -> float:
    """A deadline ``seconds`` from now on the library's clock (``_core.deadline.now``)."""
    return now() + seconds
