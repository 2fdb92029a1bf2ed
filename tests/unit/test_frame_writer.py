"""The pipe writer on its on-demand thread: order, idle exit, stop, failures.

A real pipe that fills cannot be paused at will; a scripted transport that
never takes a frame at once (so every frame goes through the thread) and
whose writes the test holds shows the thread's own promises.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcpclient._internal.session import writer as writer_module
from mcpclient._internal.session.writer import FrameWriter
from mcpclient.errors import ConnectionLostError, Error
from tests.support import wait_until

WAIT = 5.0
NAME = "mcpclient-writer-fw"


class Pipe:
    """A transport whose pipe is always full for the caller; the writer thread writes."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.fail: BaseException | None = None

    def read_frame(self) -> Any:  # pragma: no cover - not used
        return None

    def write_frame(self, data: bytes) -> None:
        self.entered.set()
        assert self.hold.wait(WAIT)
        if self.fail is not None:
            raise self.fail
        self.written.append(data)

    def try_write_frame(self, data: bytes) -> bool:
        return False

    def loss_reason(self) -> str:  # pragma: no cover - not used
        return ""

    def close(self, timeout: float | None = None) -> None:  # pragma: no cover - not used
        pass


def alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == NAME and t.is_alive()]


def test_frames_are_written_in_order_and_the_thread_leaves_when_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(writer_module, "_IDLE", 0.05)
    pipe = Pipe()
    errors: list[Error] = []
    w = FrameWriter(pipe, binding="fw", on_error=errors.append)
    assert alive() == []
    frames = [b"%d\n" % n for n in range(50)]
    for frame in frames:
        w.send(frame)
    assert wait_until(lambda: pipe.written == frames)
    assert wait_until(lambda: alive() == [])  # idle: gone
    w.send(b"again\n")  # the next frame starts a thread again
    assert wait_until(lambda: pipe.written[-1:] == [b"again\n"])
    w.stop()
    w.join(WAIT)
    assert alive() == [] and errors == []


def test_stop_drops_what_is_queued_and_ends_the_thread() -> None:
    pipe = Pipe()
    pipe.hold.clear()
    w = FrameWriter(pipe, binding="fw", on_error=lambda exc: None)
    w.send(b"first\n")
    assert pipe.entered.wait(WAIT)  # the thread is writing it
    w.send(b"second\n")
    w.send(b"third\n")
    w.stop()
    pipe.hold.set()
    w.join(WAIT)
    assert alive() == []
    assert pipe.written == [b"first\n"]
    w.send(b"late\n")  # after stop: neither written nor a thread
    assert alive() == [] and pipe.written == [b"first\n"]


@pytest.mark.parametrize("raised", ["classified", "unexpected"])
def test_a_failed_write_is_reported_once_as_a_classified_error(
    raised: str, caplog: pytest.LogCaptureFixture
) -> None:
    pipe = Pipe()
    pipe.fail = (
        ConnectionLostError("the pipe broke", binding="fw")
        if raised == "classified"
        else OSError("EPIPE")
    )
    errors: list[Error] = []
    w = FrameWriter(pipe, binding="fw", on_error=errors.append)
    w.send(b"frame\n")
    assert wait_until(lambda: len(errors) == 1)
    assert isinstance(errors[0], ConnectionLostError)
    if raised == "unexpected":
        assert "EPIPE" in errors[0].message
    w.stop()
    w.join(WAIT)
    assert alive() == []


def test_drain_waits_for_the_queue_and_no_longer_than_its_timeout() -> None:
    """What close() relies on: every queued frame written, or the grace is up."""
    pipe = Pipe()
    pipe.hold.clear()
    w = FrameWriter(pipe, binding="fw", on_error=lambda _exc: None)
    try:
        w.send(b"cancel\n")
        assert pipe.entered.wait(WAIT)
        assert w.drain(0.05) is False  # held: the grace runs out, drain returns
        done: list[bool] = []
        drainer = threading.Thread(target=lambda: done.append(w.drain(WAIT)))
        drainer.start()
        pipe.hold.set()
        drainer.join(WAIT)
        assert done == [True] and pipe.written == [b"cancel\n"]
        assert w.drain(0) is True  # nothing queued: at once
    finally:
        w.stop()
        w.join(WAIT)


def test_a_stopped_writer_does_not_hold_up_drain() -> None:
    pipe = Pipe()
    pipe.hold.clear()
    w = FrameWriter(pipe, binding="fw", on_error=lambda _exc: None)
    w.send(b"one\n")
    assert pipe.entered.wait(WAIT)
    w.stop()
    assert w.drain(WAIT) is True  # stopped: nothing more will be written, no wait
    pipe.hold.set()
    w.join(WAIT)
