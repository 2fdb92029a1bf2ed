"""``Interactions.start``: a server request served without blocking its caller.

A submitted call answers an ``input_required`` round one entry after the
other, starting the next from the callback of the one before: that callback
runs once the handler's pool slot is free, so a pool of one admits it. A
blocking caller is bounded by the request's deadline even when no binding
holds the deadline watcher (it settles the request itself).
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterator

import pytest

import mcpclient
from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.client.inbound.interactions import Interactions, RefusedError
from mcpclient.calls import CancelToken


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # never leave a handler blocked


def _interactions(roots: object, limit: int = 8) -> Interactions:
    return Interactions(
        "srv",
        mcpclient.Handlers(roots=roots),  # type: ignore[arg-type]
        mcpclient.Limits(max_inbound_requests=limit),
        mcpclient.Timeouts(),
        lambda _event: 0,
    )


def test_the_next_request_started_from_the_callback_is_admitted_by_a_pool_of_one() -> None:
    interactions = _interactions(lambda ctx: [mcpclient.Root("file:///a")], limit=1)
    try:
        second: concurrent.futures.Future[object] = concurrent.futures.Future()

        def then(first: concurrent.futures.Future[object]) -> None:
            follow = interactions.start("roots/list", {}, CancelToken(), now() + 5)
            follow.add_done_callback(lambda f: second.set_result(f.exception() or f.result()))

        interactions.start("roots/list", {}, CancelToken(), now() + 5).add_done_callback(then)
        answer = second.result(timeout=5)
        assert not isinstance(answer, BaseException), answer  # not refused as busy
        assert answer[0] == {"roots": [{"uri": "file:///a"}]}  # type: ignore[index]
    finally:
        interactions.close()


def test_a_full_pool_refuses_at_once(release: threading.Event) -> None:
    interactions = _interactions(lambda ctx: release.wait(5) and [], limit=1)
    try:
        interactions.start("roots/list", {}, CancelToken(), now() + 5)
        refused = interactions.start("roots/list", {}, CancelToken(), now() + 5)
        assert refused.done()
        assert isinstance(refused.exception(timeout=0), RefusedError)
    finally:
        interactions.close()


def test_a_blocking_caller_ends_at_the_deadline_without_the_watcher(
    release: threading.Event,
) -> None:
    if watcher._holders:  # the precondition that makes this test mean something
        pytest.skip("a binding of another test holds the watcher")
    interactions = _interactions(lambda ctx: release.wait(10) and [])
    token = CancelToken()
    try:
        with pytest.raises(RefusedError) as info:
            interactions.run("roots/list", {}, token, now() + 0.2)
        assert info.value.failure_class is mcpclient.FailureClass.DEADLINE
        assert not release.is_set()  # it returned while the handler still ran
        assert token.cancelled  # the handler was told
    finally:
        interactions.close()
