"""The one implementation of a ``spawn`` fixture: start things, close every one at the end.

A :class:`Spawner` is called like the ``make`` it wraps and returns what
``make`` returns, remembering it; :meth:`Spawner.close` (or leaving its
``with`` block) closes everything it started, in start order. Every fixture
that hands a test a factory of servers or children is one of these::

    @pytest.fixture
    def spawn_http(tmp_path):
        with Spawner(functools.partial(ScriptedServer, tmp_path)) as spawn:
            yield spawn
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _close(item: Any) -> None:
    item.close()


class Spawner(Generic[T]):
    """Start things with ``make`` and close each of them (``close(item)``) at the end.

    ``close`` defaults to ``item.close()``. Closing goes on past one that
    fails, so a test's every server is stopped, and then raises the first
    failure. A factory that must be told about its item before starting it
    (so a failed start is still cleaned up) calls :meth:`adopt` first.
    """

    def __init__(self, make: Callable[..., T], *, close: Callable[[T], object] = _close) -> None:
        self._make = make
        self._close = close
        self.started: list[T] = []

    def __call__(self, *args: Any, **kwargs: Any) -> T:
        return self.adopt(self._make(*args, **kwargs))

    def adopt(self, item: T) -> T:
        """Close ``item`` with the rest at the end; returns it."""
        self.started.append(item)
        return item

    def close(self) -> None:
        """Close everything started so far, in start order (idempotent)."""
        started, self.started = self.started, []
        failure: BaseException | None = None
        for item in started:
            try:
                self._close(item)
            except BaseException as exc:  # every item is closed before the first failure
                failure = failure or exc
        if failure is not None:
            raise failure

    def __enter__(self) -> Spawner[T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
