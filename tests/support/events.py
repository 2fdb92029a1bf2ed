"""The one event recorder: collects events (and progress reports) from library threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, TypeVar

import mcpclient

from .waiting import wait_until

T = TypeVar("T")


class Events:
    """A thread-safe recorder of the events the library emits on its event lane.

    Use the instance itself (or :meth:`on_event`) as the ``event`` handler and
    :meth:`on_progress` as a progress callback; :meth:`handlers` builds
    :class:`mcpclient.Handlers` wired to it.
    """

    #: Seconds :meth:`wait` lingers after the awaited count arrived, so a duplicate shows up.
    settle: float = 0.0
    #: Seconds :meth:`wait` waits by default.
    timeout: float = 5.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[Any] = []
        self._progress: list[mcpclient.Progress] = []

    def __call__(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    on_event = __call__

    def on_progress(self, report: mcpclient.Progress) -> None:
        with self._lock:
            self._progress.append(report)

    @property
    def events(self) -> list[Any]:
        """A snapshot of every event so far, in arrival order."""
        with self._lock:
            return list(self._events)

    items = events

    @property
    def progress(self) -> list[mcpclient.Progress]:
        """A snapshot of every progress report so far."""
        with self._lock:
            return list(self._progress)

    def __iter__(self) -> Iterator[Any]:
        """Iterate over a snapshot of the events so far (so a recorder reads like a list)."""
        return iter(self.events)

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

    def __bool__(self) -> bool:
        # A handler is truthy even before its first event (``len`` would make it falsy).
        return True

    def all(self) -> list[Any]:
        """A snapshot of every event so far."""
        return self.events

    def of(self, kind: type[T]) -> list[T]:
        """The events of type ``kind`` so far."""
        with self._lock:
            return [e for e in self._events if isinstance(e, kind)]

    def wait(self, kind: type[T], count: int = 1, timeout: float | None = None) -> list[T]:
        """Wait for ``count`` events of type ``kind`` and return all of that type.

        Fails the test (``AssertionError``) when they do not arrive within ``timeout``
        (default :attr:`timeout`).
        """
        timeout = self.timeout if timeout is None else timeout
        arrived = wait_until(lambda: len(self.of(kind)) >= count, timeout)
        assert arrived, f"expected {count} {kind.__name__} within {timeout}s, got {self.events}"
        if self.settle:
            time.sleep(self.settle)
        return self.of(kind)

    def reset(self) -> None:
        """Forget every event and progress report so far."""
        with self._lock:
            self._events.clear()
            self._progress.clear()

    def handlers(self, **fields: Any) -> mcpclient.Handlers:
        """:class:`mcpclient.Handlers` whose ``event`` handler is this recorder."""
        return mcpclient.Handlers(event=self, **fields)


def delivered(
    client: mcpclient.Client,
    timeout: float = 5.0,
    *,
    tool: str = "progress",
    arguments: dict[str, Any] | None = None,
) -> None:
    """Return once every event ``client`` posted before this call has reached its handler.

    A barrier through the binding's event lane, which runs events, progress
    reports and log handlers one at a time in posting order: the progress
    report of a ``progress`` call started now is posted after them, so when it
    arrives they have all been delivered. Uses the testing server's ``progress``
    tool unless told another ``tool`` (and its ``arguments``) that reports
    progress; adds one ``tools/call`` to what the server sees.
    """
    arrived = threading.Event()
    options = mcpclient.CallOpts(progress=lambda report: arrived.set(), timeout=timeout)
    if arguments is None:
        arguments = {"steps": 1, "interval": 0} if tool == "progress" else {}
    result = client.call_tool(tool, arguments, options)
    assert not result.is_error, result
    assert arrived.wait(timeout), f"the barrier's progress report did not arrive in {timeout}s"
