"""How the POSIX stdio backend watches its child's exit: pidfd, kqueue (macOS) or a probe.

Linux has no kqueue, so the kqueue path is driven with a fake ``select`` module;
tests/integration/test_stdio_exit_watch.py runs a real child with the probe forced.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from mcpclient._internal.transport import stdio_group
from mcpclient._internal.transport.stdio_platform import exit_watch


@pytest.mark.parametrize(
    ("has_pidfd", "has_kqueue", "expected"),
    [
        (True, False, "pidfd"),  # Linux
        (True, True, "pidfd"),  # a pidfd wins where both exist
        (False, True, "kqueue"),  # macOS, the BSDs
        (False, False, "probe"),
    ],
)
def test_the_exit_watch_is_a_pidfd_then_a_kqueue_then_a_probe(
    has_pidfd: bool, has_kqueue: bool, expected: str
) -> None:
    assert exit_watch(has_pidfd=has_pidfd, has_kqueue=has_kqueue) == expected


class FakeKqueue:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.changes: list[Any] = []
        self.closed = False

    def control(self, changes: list[Any], max_events: int, timeout: float) -> list[Any]:
        assert (max_events, timeout) == (0, 0)  # register only, never wait here
        self.changes.extend(changes)
        return []

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        self.closed = True


class FakeSelect:
    KQ_FILTER_PROC = -5
    KQ_EV_ADD = 0x1
    KQ_EV_ONESHOT = 0x10
    KQ_NOTE_EXIT = 0x80000000

    def __init__(self, fd: int) -> None:
        self.queue = FakeKqueue(fd)

    def kqueue(self) -> FakeKqueue:
        return self.queue

    def kevent(self, ident: int, *, filter: int, flags: int, fflags: int) -> dict[str, int]:
        return {"ident": ident, "filter": filter, "flags": flags, "fflags": fflags}


def test_a_kqueue_watch_registers_note_exit_for_the_pid_and_owns_a_duplicate_fd() -> None:
    read_end, write_end = os.pipe()
    kernel = FakeSelect(read_end)
    try:
        fd = stdio_group.kqueue_exit_fd(4242, kernel)
        try:
            assert kernel.queue.changes == [
                {
                    "ident": 4242,
                    "filter": FakeSelect.KQ_FILTER_PROC,
                    "flags": FakeSelect.KQ_EV_ADD | FakeSelect.KQ_EV_ONESHOT,
                    "fflags": FakeSelect.KQ_NOTE_EXIT,
                }
            ]
            # The queue object is closed; the fd returned is a duplicate the caller owns.
            assert kernel.queue.closed
            assert fd != read_end and os.fstat(fd).st_ino == os.fstat(read_end).st_ino
        finally:
            os.close(fd)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_kqueue_that_refuses_the_pid_is_closed_and_the_error_surfaces() -> None:
    read_end, write_end = os.pipe()
    kernel = FakeSelect(read_end)

    def refuse(changes: list[Any], max_events: int, timeout: float) -> list[Any]:
        raise ProcessLookupError("no such process")

    kernel.queue.control = refuse  # type: ignore[method-assign]
    try:
        with pytest.raises(ProcessLookupError):
            stdio_group.kqueue_exit_fd(4242, kernel)
        assert kernel.queue.closed
    finally:
        os.close(read_end)
        os.close(write_end)


def test_the_platform_without_pidfd_but_with_kqueue_gets_a_kqueue_fd(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_end, write_end = os.pipe()
    kernel = FakeSelect(read_end)
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    monkeypatch.setattr(stdio_group, "select", kernel)
    try:
        shared = stdio_group.open_exit_fd(4242)
        assert shared is not None and kernel.queue.changes[0]["ident"] == 4242
        shared.retire()
    finally:
        os.close(read_end)
        os.close(write_end)
