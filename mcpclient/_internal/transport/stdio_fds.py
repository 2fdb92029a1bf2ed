"""The stdio transport's fds: shared between threads, and the wake fd that ends every wait.

* :class:`SharedFd` lets several threads use an fd and closes it only once it
  is retired *and* no thread is inside a call that uses it, so no thread ever
  reads, writes or polls a closed (or reused) fd number.
* :class:`Wake` is a level-triggered wake-up fd: once fired it stays readable.
  Every blocking wait of the transport polls it beside its own fd, so firing it
  ends the wait even when an escaped process still holds the other end of a
  pipe (closing an fd from another thread would not unblock a reader on Linux).
* :class:`PipeReader` is the raw stdout reader: it returns EOF once the wake
  fd fires or the child exited (its pidfd, polled beside stdout; once the
  exit is seen only what is already in the pipe is read), and drains the
  child's stderr from the same ``poll``.

Threads:
    * :class:`SharedFd` and :class:`Wake`: any thread.
    * :class:`PipeReader`: only the session's reader thread.

Locks:
    * each :class:`SharedFd` has a lock guarding its fd numbers and its user
      count; it is never held across I/O (closing happens after it is released).

Shutdown:
    The owner fires the wake fd first, then retires each :class:`SharedFd`; an
    fd is closed by the last thread to leave it.
"""

from __future__ import annotations

import io
import logging
import math
import os
import select
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpclient._core.deadline import now as deadline_now

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = [
    "PIPE_BUF",
    "PIPE_MAX",
    "READ_CHUNK",
    "STDERR_CHUNKS_PER_WAKE",
    "PipeReader",
    "SharedFd",
    "Wake",
    "close_quietly",
    "poll_ms",
]

logger = logging.getLogger(__name__)

# The stdout buffer and the stderr read size. 8 KiB holds any ordinary frame
# in one read; a bigger buffer is memory every idle binding pays for (a long
# line is assembled from several reads by BufferedReader.readline, in C).
READ_CHUNK = 8 * 1024
# At most this many stderr chunks per wake of the reader, so a child flooding
# stderr cannot keep its stdout waiting (the rest is read on the next poll).
STDERR_CHUNKS_PER_WAKE = 8
# Without a pidfd (macOS), how often the stdout reader probes whether the child
# exited (a descendant may hold its stdout open after it died).
EXIT_PROBE = 0.5
# A write of at most PIPE_BUF bytes to a pipe is atomic: with O_NONBLOCK it
# either takes all of it or nothing (POSIX).
PIPE_BUF: int = getattr(select, "PIPE_BUF", 512)
# What a child's stdout pipe can hold at most, so all it wrote before it exited:
# Linux's default pipe-max-size (64 KiB unless the child grew its pipe, up to this).
PIPE_MAX = 1024 * 1024


class SharedFd:
    """An fd used by several threads; closed once retired and no longer in use.

    A ``companion`` fd (stderr, beside stdout) lives and dies with it, and a
    ``pinned`` guard (the wake fd's) is held as one use until then: whoever
    holds this guard may use all three, so the reader takes one guard per
    frame for everything it polls.

    Thread safety: all methods may be called from any thread.
    """

    __slots__ = ("_companion", "_fd", "_lock", "_pinned", "_retired", "_users")

    def __init__(self, fd: int, companion: int = -1, pinned: SharedFd | None = None) -> None:
        self._fd = fd
        self._companion = companion
        self._pinned = pinned  # the caller acquired it once for us; released on close
        self._lock = threading.Lock()  # guards _fd, _companion, _pinned, _users, _retired
        self._users = 0
        self._retired = False

    def acquire(self) -> int:
        """Return the fd for use until :meth:`release`, or -1 once retired."""
        with self._lock:
            if self._retired or self._fd < 0:
                return -1
            self._users += 1
            return self._fd

    def release(self) -> None:
        """End one use begun by a successful :meth:`acquire`."""
        with self._lock:
            self._users -= 1
            if not self._retired:  # the usual case: nothing to close
                return
            taken = self._take_if_idle()
        self._close(taken)

    @property
    def retired(self) -> bool:
        """Whether :meth:`retire` was called; read without the lock, so a hint only."""
        return self._retired

    def retire(self) -> None:
        """Refuse new users; close now if idle, else when the last user leaves."""
        with self._lock:
            self._retired = True
            taken = self._take_if_idle()
        self._close(taken)

    def _take_if_idle(self) -> tuple[int, int, SharedFd | None] | None:
        # Caller holds _lock.
        if self._retired and self._users == 0 and self._fd >= 0:
            taken = (self._fd, self._companion, self._pinned)
            self._fd = self._companion = -1
            self._pinned = None
            return taken
        return None

    @staticmethod
    def _close(taken: tuple[int, int, SharedFd | None] | None) -> None:
        if taken is not None:
            fd, companion, pinned = taken
            close_quietly(fd)
            close_quietly(companion)
            if pinned is not None:
                pinned.release()


def close_quietly(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:  # pragma: no cover - only if someone else closed our fd
            logger.debug("closing fd %d failed", fd, exc_info=True)


class Wake:
    """A level-triggered wake-up fd: once fired it stays readable.

    An eventfd where the platform has one (one fd), else a pipe.
    """

    def __init__(self) -> None:
        self._write_fd: SharedFd | None
        if hasattr(os, "eventfd"):
            fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
            self._write_fd = None
        else:  # pragma: no cover - macOS
            fd, w = os.pipe()
            os.set_blocking(w, False)
            self._write_fd = SharedFd(w)
        #: The fd to poll for POLLIN; use it only while holding ``read``.
        self.poll_fd = fd
        self.read = SharedFd(fd)
        self.fired = False

    def fire(self) -> None:
        """Make the wake fd readable; idempotent, harmless once retired."""
        self.fired = True
        target = self.read if self._write_fd is None else self._write_fd
        fd = target.acquire()
        if fd < 0:
            return
        try:
            if self._write_fd is None:
                os.eventfd_write(fd, 1)
            else:  # pragma: no cover - macOS
                os.write(fd, b"!")
        except OSError:  # a full pipe is already readable
            pass
        finally:
            target.release()

    def retire(self) -> None:
        """Close the wake fd(s) once no thread uses them any more."""
        self.read.retire()
        if self._write_fd is not None:  # pragma: no cover - macOS
            self._write_fd.retire()


class PipeReader(io.RawIOBase):
    """Raw reader over a pipe fd that returns EOF once the wake fd fires, or the child exited.

    While it waits for stdout it also drains the child's stderr (``drain``
    reads what is there without blocking and returns True at stderr's EOF),
    and it watches the child's exit: its pidfd (``exit_fd``) from the same
    ``poll``, or, without one, a probe every ``EXIT_PROBE`` seconds. A child
    that exited while a descendant still holds its stdout would otherwise never
    end the stream. ``reap`` (non-blocking: True once the child exited and was
    reaped, the rest of its process group killed first) is called when the exit
    is seen; then only what is already in the pipe is read (at most
    ``leftover_bytes``, by default :data:`PIPE_MAX`: the pipe holds at most
    that, so everything the child wrote before it exited), and the next empty poll is EOF.
    It owns none of the fds. Only the session's reader thread uses it.
    """

    def __init__(
        self,
        fd: int,
        wake: Wake,
        stderr_fd: int,
        drain: Callable[[int], bool],
        *,
        exit_fd: SharedFd | None = None,
        reap: Callable[[], bool] | None = None,
        leftover_bytes: int = PIPE_MAX,
    ) -> None:
        super().__init__()
        self._fd = fd
        self._wake = wake
        self._wake_fd = wake.poll_fd
        self._stderr_fd = stderr_fd
        self._drain = drain
        self._exit = exit_fd
        self._exit_polled = -1  # the pidfd number registered with the poller
        self._reap = reap
        self._next_probe = 0.0
        self._exited = False  # the child is gone: only the pipe's leftovers are read
        self._leftover = leftover_bytes
        self._eof = False
        # Registering only records the numbers; read_frame polls them only
        # while it holds the fds (stderr is stdout's companion, the pidfd is
        # acquired around each poll), so they cannot be closed or reused meanwhile.
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)
        self._poller.register(stderr_fd, select.POLLIN)
        self._poller.register(wake.poll_fd, select.POLLIN)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        while True:
            if self._wake.fired or self._eof:
                return 0
            if self._exited:
                return self._read_leftover(buffer)
            events = self._poll_with_exit()
            if events is None:
                continue  # the child exited: read what it left in the pipe
            ready = False
            for fd, _events in events:
                if fd == self._wake_fd:
                    return 0
                if fd == self._stderr_fd:
                    self._drain_stderr()
                elif fd == self._exit_polled:
                    if self._reap is not None and self._reap():
                        self._child_gone()
                else:
                    ready = True
            if ready and not self._exited:
                return os.readv(self._fd, [buffer])

    def _poll_with_exit(self) -> list[tuple[int, int]] | None:
        """One ``poll`` that also watches the child's exit; None once it was seen."""
        exit_shared = self._exit
        if exit_shared is None:
            if self._reap is None:
                return self._poller.poll()
            if deadline_now() >= self._next_probe:
                if self._reap():
                    self._child_gone()
                    return None
                self._next_probe = deadline_now() + EXIT_PROBE
            return self._poller.poll(poll_ms(EXIT_PROBE))
        exit_fd = exit_shared.acquire()
        if exit_fd < 0:  # retired: the child was reaped (by close, or a loss)
            self._child_gone()
            return None
        try:
            if exit_fd != self._exit_polled:
                self._poller.register(exit_fd, select.POLLIN)
                self._exit_polled = exit_fd
            return self._poller.poll()
        finally:
            exit_shared.release()

    def _child_gone(self) -> None:
        self._exited = True
        if self._exit_polled >= 0:
            self._poller.unregister(self._exit_polled)
            self._exit_polled = -1

    def _drain_stderr(self) -> None:
        if self._drain(STDERR_CHUNKS_PER_WAKE):
            # EOF (or HUP) stays readable: stop polling it.
            self._poller.unregister(self._stderr_fd)
            self._stderr_fd = -1

    def _read_leftover(self, buffer: WriteableBuffer) -> int:
        # The child is gone and its group killed: what is in the pipe now is all
        # it wrote; an escaped process still holding the pipe gets no more than
        # PIPE_MAX bytes read in all.
        ready = False
        for fd, _events in self._poller.poll(0):
            if fd == self._wake_fd:
                return 0
            if fd == self._stderr_fd:
                self._drain_stderr()
            elif fd == self._fd:
                ready = True
        if not ready or self._leftover <= 0:
            self._eof = True
            return 0
        view = memoryview(buffer).cast("B")[: self._leftover]
        n = os.readv(self._fd, [view])
        self._leftover -= n
        if n == 0:
            self._eof = True
        return n


def poll_ms(seconds: float) -> int:
    """``seconds`` as a ``poll()`` timeout: whole milliseconds, rounded up, never negative.

    Infinity is ``-1``: wait with no timeout.
    """
    if seconds == math.inf:
        return -1
    return max(0, math.ceil(seconds * 1000))
