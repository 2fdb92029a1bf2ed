"""The portable stdio backend: reader threads on blocking pipes (Windows, or forced).

Windows has no ``poll`` on pipes, no process groups and no pidfd, so the POSIX
backend (:mod:`.stdio`) cannot run there. This one needs none of them and no
``fcntl``: each of the child's output pipes is read, blocking, by a thread of
its own, and the child's whole tree is held by a Job Object on Windows
(:mod:`.stdio_job`) or by its own process group elsewhere
(:class:`.stdio_group.ProcessGroup`). It is chosen by
:func:`.stdio_platform.backend`: always on Windows, and on Linux or macOS
when ``MCPCLIENT_STDIO_BACKEND=portable`` (the test switch that lets Linux CI
run the stdio tests on it). :func:`.stdio_backend.stdio_process` builds a
:class:`PortableStdioProcess` then, so its users never choose.

What differs from the POSIX backend:
    * :meth:`~PortableStdioProcess.try_write_frame` never writes (a blocking
      pipe cannot say whether a write would block): every frame goes through
      the session's writer thread.
    * A writer stuck in a full pipe is released when the child's tree ends
      (the pipe breaks); a process that escaped the tree (it left the job or
      the group) and still holds a pipe keeps the pump thread reading that
      pipe blocked until it exits. :meth:`~PortableStdioProcess.close` still
      returns in time and :meth:`~PortableStdioProcess.read_frame` returns
      None: only that thread lingers.

Threads:
    * ``mcpclient-stdout-<binding>`` reads the child's stdout (blocking) into
      a :class:`ChunkQueue` of at most ``_QUEUED_CHUNKS`` chunks, so a fast
      child still waits on the pipe, as with the POSIX backend.
    * ``mcpclient-stderr-<binding>`` reads the child's stderr (blocking) into
      the :class:`~.stdio_stderr.StderrRing`, which logs each line.
    * ``mcpclient-exit-<binding>`` waits for the child's exit (its pidfd or
      process handle, else a probe); then it ends the child's tree and, if a
      process that escaped the tree still holds stdout, the stdout stream: the
      child's exit is the end of the connection even when a descendant
      inherited its stdout.
    * The session's reader thread calls
      :meth:`~PortableStdioProcess.read_frame` (it takes from the queue); its
      writer thread writes (blocking); any thread may close.
    Each pump thread owns the read end of its pipe and closes it when it ends.

Locks:
    * :class:`ChunkQueue` has a condition guarding its chunks, its EOF and its
      closed flag; it is never held across I/O.
    * the base class's ``_state_lock``, and the stdin :class:`~.stdio_fds.SharedFd`
      (closed only once no writer is inside ``write``).

Shutdown:
    :meth:`~PortableStdioProcess.close` retires stdin (EOF to the child),
    waits ``shutdown_grace``, asks politely (SIGTERM to the group;
    ``CTRL_BREAK_EVENT`` on Windows), waits ``shutdown_grace``, ends the tree
    (SIGKILL to the group; ``TerminateJobObject``) and reaps, all bounded by
    its ``timeout``; then it closes the queue (the reader returns None), marks
    stderr finished, and joins the pump threads, bounded, as their pipes reach
    EOF.
"""

from __future__ import annotations

import io
import logging
import math
import os
import signal
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpclient._core.deadline import now, remaining
from mcpclient._internal.transport.base import RequestFailure
from mcpclient._internal.transport.stdio import StdioProcess
from mcpclient._internal.transport.stdio_fds import READ_CHUNK, SharedFd, close_quietly
from mcpclient._internal.transport.stdio_frames import FrameReader
from mcpclient._internal.transport.stdio_group import ProcessGroup
from mcpclient._internal.transport.stdio_job import JobProcess
from mcpclient.errors import ShutdownError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["ChunkQueue", "PortableStdioProcess"]

logger = logging.getLogger(__name__)

# The stdout chunks read ahead of the session: enough to keep the pipe moving,
# few enough that a flooding child waits on its pipe instead of our memory.
_QUEUED_CHUNKS = 4
# close(): how long the pump threads get to see their pipes' EOF once the tree
# is dead (they see it at once unless an escaped process holds a pipe).
_PUMP_JOIN = 0.25
# After the child exited and its tree was ended: how long the stdout pump gets
# to reach EOF before the stream ends without it (an escaped process holds it).
_LEFTOVER_WAIT = 0.5
_WINDOWS = os.name == "nt"


class ChunkQueue:
    """Chunks of the child's stdout, from its pump thread to the session's reader.

    Thread safety: one producer (:meth:`put`, :meth:`end`), one consumer
    (:meth:`get`), and any thread may :meth:`close`.
    """

    def __init__(self, max_chunks: int) -> None:
        self._max = max_chunks
        self._chunks: deque[bytes] = deque()
        self._cond = threading.Condition(threading.Lock())  # guards all below
        self._ended = False  # the pipe reached EOF (or failed)
        self._closed = False  # the transport closed: nothing more is handed out

    def put(self, chunk: bytes) -> bool:
        """Queue ``chunk``, waiting for room; False once closed (the pump stops)."""
        with self._cond:
            while len(self._chunks) >= self._max and not self._closed:
                self._cond.wait()
            if self._closed:
                return False
            self._chunks.append(chunk)
            self._cond.notify_all()
            return True

    def end(self) -> None:
        """The pipe reached EOF: :meth:`get` returns ``b""`` once the queue is empty."""
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def close(self) -> None:
        """Wake both sides; every later :meth:`get` returns ``b""``."""
        with self._cond:
            self._closed = True
            self._chunks.clear()
            self._cond.notify_all()

    def get(self) -> bytes:
        """The next chunk, waiting for one; ``b""`` at EOF or once closed."""
        with self._cond:
            while not self._chunks and not self._ended and not self._closed:
                self._cond.wait()
            if self._closed or not self._chunks:
                return b""
            chunk = self._chunks.popleft()
            self._cond.notify_all()
            return chunk


class _QueueReader(io.RawIOBase):
    """The raw stdout reader of the session's reader thread: takes from a :class:`ChunkQueue`."""

    def __init__(self, chunks: ChunkQueue) -> None:
        super().__init__()
        self._chunks = chunks
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        if not self._left:
            self._left = memoryview(self._chunks.get())
        out = memoryview(buffer).cast("B")
        n = min(len(out), len(self._left))
        out[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


class PortableStdioProcess(StdioProcess):
    """A child process spoken to over blocking pipes, read by threads of its own.

    Built by :func:`.stdio_backend.stdio_process` when :func:`.stdio_platform.backend`
    says ``portable``; same interface and same guarantees, but for those the
    module docstring lists.

    Thread safety: as :class:`~.stdio.StdioProcess`.
    """

    # Made by start(), before anything can use them (every method checks _group first).
    _chunks: ChunkQueue
    _stderr_done: threading.Event  # EOF on stderr, or closed
    _stdout_done: threading.Event  # EOF on stdout, or closed
    _pumps: list[threading.Thread]

    # ------------------------------------------------------------------ start

    def start(self) -> None:
        """Start the child (its tree in a Job Object or a process group) and its pumps.

        Raises:
            ConnectionLostError: (``transport_closed``) the command could not be
                started; the message names the command, never the environment.
            ConfigError: an argument or environment entry is invalid.
            ShutdownError: :meth:`close` was called already.
            RuntimeError: started twice.
        """
        self._mark_started()
        self._chunks = ChunkQueue(_QUEUED_CHUNKS)
        self._stderr_done = threading.Event()
        self._stdout_done = threading.Event()
        self._pumps = []
        group, in_w, out_r, err_r = self._spawn(
            JobProcess.spawn if _WINDOWS else ProcessGroup.spawn
        )
        self._group = group
        self._stdin = SharedFd(in_w)
        self._frames = FrameReader(
            io.BufferedReader(_QueueReader(self._chunks), buffer_size=READ_CHUNK),
            max_frame_bytes=self._max_frame,
            binding=self._binding,
        )
        for role, target, args in (
            ("stdout", self._pump_stdout, (out_r,)),
            ("stderr", self._pump_stderr, (err_r,)),
            ("exit", self._watch_exit, (group,)),
        ):
            thread = threading.Thread(
                target=target, args=args, name=f"mcpclient-{role}-{self._binding}", daemon=True
            )
            self._pumps.append(thread)
            thread.start()
        if self._closing_now():
            self.kill_now()
            raise ShutdownError("stdio transport was closed while starting", binding=self._binding)

    def _pump_stdout(self, fd: int) -> None:
        # Stops at EOF, or once the queue is closed (nobody reads any more).
        self._pump(fd, "stdout", lambda chunk: not chunk or not self._chunks.put(chunk))
        self._chunks.end()
        self._stdout_done.set()

    def _pump_stderr(self, fd: int) -> None:
        self._pump(fd, "stderr", self._stderr.feed)
        self._stderr_done.set()

    def _watch_exit(self, group: ProcessGroup | JobProcess) -> None:
        """Wait for the child's exit; then end its tree and the stdout stream.

        A descendant that inherited the child's stdout would otherwise keep the
        pipe, and so the stream, open after the child died: the child's own
        exit is the end of the connection.
        """
        group.wait_exited(math.inf)  # close() ends the tree, so this returns then too
        if self._closing_now():
            return
        group.kill_and_reap()
        # Ending the tree closed every writer of the pipe, unless a process
        # escaped it: the pump reaches EOF after what the child left in the
        # pipe; past a short wait the stream ends anyway.
        if not self._stdout_done.wait(_LEFTOVER_WAIT):
            logger.debug("stdout of binding %r held open past its exit", self._binding)
            self._chunks.end()

    def _pump(self, fd: int, role: str, take: Callable[[bytes], bool]) -> None:
        """Read ``fd`` (blocking) and hand each chunk to ``take`` until it says stop; close it."""
        try:
            while True:
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except OSError:
                    # A broken pipe is its end; stderr is diagnostics only.
                    logger.debug("%s of binding %r failed", role, self._binding, exc_info=True)
                    chunk = b""
                if take(chunk):
                    return
        finally:
            close_quietly(fd)

    # ------------------------------------------------------------------ read

    def read_frame(self) -> bytes | RequestFailure | None:
        """Block for the next non-empty line of the child's stdout (see the base class).

        Raises:
            LimitExceededError: (``limit_exceeded``) a line is longer than
                ``max_frame_bytes`` and names no request.
        """
        frames = self._frames
        if self._forgotten or frames is None or frames.poisoned:
            return None
        return frames.read()

    # ------------------------------------------------------------------ write

    def write_frame(self, data: bytes) -> None:
        """Write ``data`` and a newline completely (blocking until the pipe takes it).

        Raises:
            ConnectionLostError: (``transport_closed``) the child stopped reading
                (broken pipe), or the transport was closed before or during the
                write.
        """
        stdin = self._stdin
        fd = -1 if stdin is None or self._forgotten else stdin.acquire()
        if stdin is None or fd < 0:
            raise self._lost("stdin to the server is closed", op="write")
        try:
            view = memoryview(bytes(data) + b"\n")
            while view:
                try:
                    written = os.write(fd, view)
                except OSError as exc:
                    # Nothing can ever be written again: later writes (and
                    # try_write_frame) fail at once.
                    stdin.retire()
                    if self._closing_now():
                        raise self._lost("the transport closed during a write", op="write") from exc
                    raise self._write_error(exc) from exc
                view = view[written:]
        finally:
            stdin.release()

    def try_write_frame(self, data: bytes) -> bool:
        """Never writes: a blocking pipe cannot say whether a write would block.

        Returns False, so the caller queues the frame for its writer thread.

        Raises:
            ConnectionLostError: (``transport_closed``) stdin is closed.
        """
        stdin = self._stdin
        if stdin is None or stdin.retired or self._forgotten:
            raise self._lost("stdin to the server is closed", op="write")
        return False

    # ------------------------------------------------------------------ stderr

    def wait_stderr_eof(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for stderr's EOF; True once nothing more will come."""
        if self._forgotten or self._group is None:
            return True
        return self._stderr_done.wait(max(0.0, timeout))

    # ------------------------------------------------------------------ close

    def _shutdown(self, deadline: float) -> None:
        group = self._group
        if group is None:  # start() failed; it released everything
            return
        if self._stdin is not None:
            self._stdin.retire()
        exited = group.wait_exited(min(self._grace, remaining(deadline)))
        if not exited and remaining(deadline) > 0:
            group.signal(signal.SIGTERM)
            group.wait_exited(min(self._grace, remaining(deadline)))
        group.kill_and_reap()
        self.wait_stderr_eof(min(0.25, max(0.05, remaining(deadline))))
        self._stderr.flush_log()
        self._release_all()
        join_until = now() + min(_PUMP_JOIN, max(0.05, remaining(deadline)))
        for pump in self._pumps:
            if pump is not threading.current_thread():
                pump.join(max(0.0, join_until - now()))

    def _release_all(self) -> None:
        """Wake the reader and every waiter; the pumps close their own pipes."""
        self._chunks.close()
        self._stderr_done.set()
        self._stdout_done.set()
        if self._stdin is not None:
            self._stdin.retire()

    def kill_now(self) -> None:
        """End the child's tree and reap at once; for interpreter exit. Joins no thread."""
        if self._forgotten:
            return
        with self._state_lock:
            self._closing = True
            started = self._started
        if started and self._group is not None:
            self._group.kill_and_reap()
            self._release_all()
        self._closed.set()
