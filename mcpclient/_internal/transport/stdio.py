"""The blocking stdio transport: a child process spoken to over its pipes.

Bytes only: a frame is one line of the child's stdout (or one line we write to
its stdin); JSON-RPC lives in the session layer above.

This is the POSIX backend (``poll`` on non-blocking pipes, a process group, a
pidfd where the kernel has one). :func:`.stdio_backend.stdio_process` builds it,
or, where :func:`.stdio_platform.backend` says ``portable`` (Windows, or
``MCPCLIENT_STDIO_BACKEND=portable``), its subclass
:class:`.stdio_portable.PortableStdioProcess`: reader threads on blocking
pipes, the same interface.

Threads:
    * The session's single **reader** thread calls :meth:`StdioProcess.read_frame`.
    * The session's **writer** thread calls :meth:`~StdioProcess.write_frame`; any
      thread may call :meth:`~StdioProcess.try_write_frame` as a fast path. The
      caller guarantees that at most one thread is writing at any moment.
    * No thread of our own: the reader drains the child's stderr (non-blocking)
      into a bounded ring from the same ``poll`` that waits for stdout, so a
      chatty child never blocks on it and an idle binding costs one thread less
      (a thread's stack and state are most of an idle binding's memory).
      Each stderr line is also logged, bounded and rate-limited (the lines
      left out counted; :mod:`.stdio_stderr`), on ``mcpclient.server.<binding>``
      at INFO by whichever thread drained it.
      Once the reader has stopped, :meth:`~StdioProcess.wait_stderr_eof` (run by
      ``loss_reason`` and ``close``) drains what is left.
    * The same ``poll`` watches the child's pidfd (without one, the reader
      probes every ``EXIT_PROBE`` seconds): the child's exit ends the stream
      even when a descendant still holds its stdout; the reader then reaps it
      (which kills the rest of its group) and reads only what was left in the
      pipe (:class:`~.stdio_fds.PipeReader`).
    * Any thread may call :meth:`~StdioProcess.close`, :meth:`~StdioProcess.kill_now`,
      :meth:`~StdioProcess.wait_exit`, :meth:`~StdioProcess.signal_group`,
      :meth:`~StdioProcess.exit_description` and :meth:`~StdioProcess.stderr_tail`.

Locks:
    * ``_state_lock`` guards ``_started`` and ``_closing`` (who drives the close).
    * the child's :class:`~.stdio_group.ProcessGroup` has its own lock, so no
      signal can be sent to a pid after it was reaped and reused.
    * each :class:`~.stdio_fds.SharedFd` has a lock guarding its user count: an
      fd is closed only once it is retired *and* no thread is inside a call that
      uses it, so no thread ever reads, writes or polls a closed (or reused) fd
      number.
    * the :class:`~.stdio_stderr.StderrRing` serializes the (non-blocking)
      stderr reads and keeps chunks and log records in order, whichever thread
      drains.
    No lock is held across blocking I/O; the writer holds none of ours while it
    waits for pipe space.

Shutdown:
    :meth:`~StdioProcess.close` retires our stdin end (the child sees EOF once
    no write is in progress: EOF is the MCP stdio shutdown signal), waits
    ``shutdown_grace``, SIGTERMs the process group, waits ``shutdown_grace``,
    SIGKILLs the group and reaps; the whole sequence is bounded by its
    ``timeout``. Reaping (one place, :meth:`.stdio_group.ProcessGroup.reap`)
    first SIGKILLs whatever is left of the group while the exited leader is
    still a zombie, which pins the group id, so stragglers die and no stranger
    can be hit. The last stderr bytes are drained (bounded in time) into the
    ring. Then a wake fd is
    fired: the reader and a writer stuck in a full pipe both poll it, so each
    returns at once even when an escaped process still holds the other end of a
    pipe (closing an fd from another thread would not unblock them on Linux, and
    a buffered reader's close would wait for the reader's lock). Fds are closed
    by the last thread to leave them.
"""

from __future__ import annotations

import io
import logging
import math
import os
import select
import signal
import threading
from collections.abc import Callable, Sequence

from mcpclient._core.deadline import now, remaining
from mcpclient._internal.transport.base import RequestFailure
from mcpclient._internal.transport.stdio_fds import (
    PIPE_BUF,
    READ_CHUNK,
    STDERR_CHUNKS_PER_WAKE,
    PipeReader,
    SharedFd,
    Wake,
    close_quietly,
    poll_ms,
)
from mcpclient._internal.transport.stdio_frames import FrameReader
from mcpclient._internal.transport.stdio_group import ProcessGroup, build_child_env
from mcpclient._internal.transport.stdio_job import JobProcess
from mcpclient._internal.transport.stdio_stderr import StderrRing
from mcpclient.errors import (
    ConfigError,
    ConnectionLostError,
    FailureClass,
    ShutdownError,
)
from mcpclient.transports import SAFE_ENV

__all__ = ["SAFE_ENV", "StdioProcess", "build_child_env"]

logger = logging.getLogger(__name__)


_DEFAULT_CLOSE_TIMEOUT = 5.0
# close(): how long to drain stderr up to the child's EOF before the fds are
# closed, so the last words of a dying server make it into the tail.
_STDERR_DRAIN = 0.25
_STDERR_DRAIN_MIN = 0.05
# loss_reason(): how long a stream end waits to see the exit, then for the rest of
# stderr, and the tail it shows.
_EXIT_OBSERVE = 0.25
_STDERR_JOIN = 0.5
_TAIL_BYTES = 400
# ProcessGroup.spawn or JobProcess.spawn: starts argv on the given fds.
Spawn = Callable[..., "ProcessGroup | JobProcess"]


class StdioProcess:
    """A child process with its stdin/stdout framed as newline-delimited bytes.

    Example::

        proc = StdioProcess(command="server", args=[], env=build_child_env(True, None),
                            cwd=None, shutdown_grace=2.0, max_frame_bytes=4 << 20,
                            max_stderr_bytes=8192, binding="files")
        proc.start()
        proc.write_frame(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
        reply = proc.read_frame()
        proc.close()

    Thread safety: one reader thread calls :meth:`read_frame`; one thread at a
    time writes (:meth:`write_frame`, :meth:`try_write_frame`); every other
    method is safe from any thread. See the module docstring.
    """

    def __init__(
        self,
        *,
        command: str,
        args: Sequence[str],
        env: dict[str, str],
        cwd: str | None,
        shutdown_grace: float,
        max_frame_bytes: int,
        max_stderr_bytes: int,
        binding: str,
        max_log_bytes: int = 8 * 1024,
    ) -> None:
        if not isinstance(command, str) or not command or "\0" in command:
            raise ConfigError("command must be a non-empty string without NUL", binding=binding)
        if isinstance(args, str | bytes):
            raise ConfigError("args must be a sequence of strings", binding=binding)
        if not (shutdown_grace >= 0 and math.isfinite(shutdown_grace)):
            raise ConfigError("shutdown_grace must be a finite number >= 0", binding=binding)
        if max_frame_bytes < 1:
            raise ConfigError("max_frame_bytes must be >= 1", binding=binding)
        if max_stderr_bytes < 0:
            raise ConfigError("max_stderr_bytes must be >= 0", binding=binding)
        if max_log_bytes < 1:
            raise ConfigError("max_log_bytes must be >= 1", binding=binding)
        self._command = command
        self._args = list(args)
        self._env = dict(env)
        self._cwd = cwd
        self._grace = float(shutdown_grace)
        self._max_frame = max_frame_bytes
        self._binding = binding

        self._state_lock = threading.Lock()  # guards _started, _closing
        self._started = False
        self._closing = False
        self._closed = threading.Event()  # set once a close/kill_now finished
        self._forgotten = False  # set in a forked child; read without locks

        self._group: ProcessGroup | JobProcess | None = None  # the child, once started
        self._stdin: SharedFd | None = None
        self._stdout: SharedFd | None = None  # stderr is its companion fd
        self._wake: Wake | None = None
        self._frames: FrameReader | None = None  # only the reader thread uses it

        self._stderr = StderrRing(
            max_bytes=max_stderr_bytes, max_log_bytes=max_log_bytes, binding=binding
        )

    # ------------------------------------------------------------------ start

    def start(self) -> None:
        """Start the child in its own process group.

        Raises:
            ConnectionLostError: (``transport_closed``) the command could not be
                started; the message names the command, never the environment.
            ConfigError: an argument or environment entry holds NUL.
            ShutdownError: :meth:`close` was called already.
            RuntimeError: started twice.
        """
        self._mark_started()
        try:
            wake = Wake()
        except OSError as exc:
            raise self._lost(f"cannot create pipes for {self._command!r}: {exc.strerror}") from exc
        try:
            group, in_w, out_r, err_r = self._spawn(ProcessGroup.spawn)
        except BaseException:
            wake.retire()
            raise
        assert isinstance(group, ProcessGroup)

        # Writes must never block inside write(): a full pipe is waited out in
        # poll() together with the wake fd (see write_frame). Stderr is read
        # only when poll() says so, by whichever thread drains it, never in a
        # read that could block (our end only; the child's end is its own).
        os.set_blocking(in_w, False)
        os.set_blocking(err_r, False)
        self._group = group
        self._wake = wake
        self._stdin = SharedFd(in_w)
        wake.read.acquire()  # pinned by the stdout guard, released when it closes
        self._stdout = SharedFd(out_r, companion=err_r, pinned=wake.read)
        self._stderr.attach(err_r)  # usable only while holding _stdout
        self._frames = FrameReader(
            io.BufferedReader(
                PipeReader(
                    out_r,
                    wake,
                    err_r,
                    self._stderr.drain,
                    exit_fd=group.exit_fd,
                    reap=group.reap,
                ),
                buffer_size=READ_CHUNK,
            ),
            max_frame_bytes=self._max_frame,
            binding=self._binding,
        )

        if self._closing_now():
            self.kill_now()
            raise ShutdownError("stdio transport was closed while starting", binding=self._binding)

    def _mark_started(self) -> None:
        with self._state_lock:
            if self._closing:
                raise ShutdownError("stdio transport is closed", binding=self._binding, op="start")
            if self._started:
                raise RuntimeError("StdioProcess.start() called twice")
            self._started = True

    def _spawn(self, spawn: Spawn) -> tuple[ProcessGroup | JobProcess, int, int, int]:
        """Make the three pipes and start the child on them: ``(child, stdin, stdout, stderr)``.

        Returns the parent's ends (the child's are closed here). Raises as
        :meth:`start` does; nothing is left open when it raises.
        """
        pipes: list[int] = []
        try:
            for _ in range(3):
                pipes += os.pipe()
        except OSError as exc:
            for fd in pipes:
                close_quietly(fd)
            raise self._lost(f"cannot create pipes for {self._command!r}: {exc.strerror}") from exc
        in_r, in_w, out_r, out_w, err_r, err_w = pipes
        try:
            child = spawn(
                [self._command, *self._args],
                stdin=in_r,
                stdout=out_w,
                stderr=err_w,
                env=self._env,
                cwd=self._cwd,
                binding=self._binding,
            )
        except (ConnectionLostError, ConfigError):
            for fd in (in_w, out_r, err_r):
                close_quietly(fd)
            raise
        finally:
            # The parent must not hold the child's ends, or EOF never arrives.
            for fd in (in_r, out_w, err_w):
                close_quietly(fd)
        return child, in_w, out_r, err_r

    def _closing_now(self) -> bool:
        with self._state_lock:
            return self._closing

    @property
    def pid(self) -> int:
        """The child's pid, which is also its process group id."""
        if self._group is None:
            raise RuntimeError("StdioProcess not started")
        return self._group.pid

    # ------------------------------------------------------------------ read

    def read_frame(self) -> bytes | RequestFailure | None:
        """Block for the next non-empty line of the child's stdout.

        Returns the line without its ``\\n`` (and without a ``\\r`` before it), or
        ``None`` at EOF, once closed, or after an over-long line that fails the
        connection. A last line without a newline is incomplete and is dropped.
        Only the session's reader thread may call this.

        A line longer than ``max_frame_bytes`` is never buffered whole: it is
        read and dropped up to its newline. When its first or last bytes show
        it is the response to request N (see :mod:`.stdio_frames`), the result
        is a :class:`RequestFailure` for N (``limit_exceeded``) and the stream
        goes on; otherwise the stream is poisoned.

        Raises:
            LimitExceededError: (``limit_exceeded``) a line is longer than
                ``max_frame_bytes`` and names no request; nothing past the
                limit was buffered.
            ConnectionLostError: (``transport_closed``) reading the pipe failed.
        """
        frames = self._frames
        if self._forgotten or frames is None or frames.poisoned:
            return None
        stdout, wake = self._stdout, self._wake
        if stdout is None or wake is None:
            return None
        # The stdout guard covers stderr and pins the wake fd: all three stay
        # open (their numbers unused by anything else) until it is released.
        if stdout.acquire() < 0:
            return None
        try:
            return frames.read()
        finally:
            stdout.release()

    # ------------------------------------------------------------------ write

    def write_frame(self, data: bytes) -> None:
        """Write ``data`` and a newline completely, waiting for pipe space.

        The caller guarantees that no other thread writes at the same time.

        Raises:
            ConnectionLostError: (``transport_closed``) the child stopped reading
                (broken pipe), or the transport was closed before or during the
                write.
        """
        stdin = self._stdin
        if stdin is None or self._forgotten:
            raise self._lost("stdin to the server is closed", op="write")
        fd = stdin.acquire()
        if fd < 0:
            raise self._lost("stdin to the server is closed", op="write")
        try:
            self._write_all(fd, [memoryview(data), memoryview(b"\n")])
        finally:
            stdin.release()

    def try_write_frame(self, data: bytes) -> bool:
        """Write ``data`` and a newline now if the pipe can take it whole at once.

        Returns ``False``, having written nothing, when the write would block or
        the frame is longer than ``PIPE_BUF`` (4096 bytes on Linux) — the only
        size a pipe guarantees to take atomically; the caller then queues the
        frame for its writer thread. Never writes part of a frame and returns
        ``False``. The same one-writer-at-a-time rule as :meth:`write_frame` holds.

        Raises:
            ConnectionLostError: (``transport_closed``) as for :meth:`write_frame`.
        """
        stdin = self._stdin
        # retired is read without its lock: a hint only, acquire() below decides.
        if stdin is None or stdin.retired or self._forgotten:
            raise self._lost("stdin to the server is closed", op="write")
        if len(data) + 1 > PIPE_BUF:
            return False
        fd = stdin.acquire()
        if fd < 0:
            raise self._lost("stdin to the server is closed", op="write")
        try:
            frame = bytes(data) + b"\n"
            try:
                written = os.write(fd, frame)
            except BlockingIOError:
                return False
            except OSError as exc:
                raise self._write_error(exc) from exc
            if written < len(frame):  # pragma: no cover - POSIX forbids it for <= PIPE_BUF
                self._write_all(fd, [memoryview(frame)[written:]])
            return True
        finally:
            stdin.release()

    def _write_all(self, fd: int, views: list[memoryview]) -> None:
        while views:
            try:
                written = os.writev(fd, views)
            except BlockingIOError:
                self._wait_writable(fd)
                continue
            except OSError as exc:
                raise self._write_error(exc) from exc
            while written:
                head = views[0]
                if written >= len(head):
                    written -= len(head)
                    views.pop(0)
                else:
                    views[0] = head[written:]
                    written = 0
            while views and not len(views[0]):
                views.pop(0)

    def _wait_writable(self, fd: int) -> None:
        wake = self._wake
        wake_fd = -1 if wake is None else wake.read.acquire()
        if wake is None or wake_fd < 0:
            raise self._lost("the transport closed during a write", op="write")
        try:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            poller.register(wake_fd, select.POLLIN)
            # Either the pipe has room, its reader is gone (the next write fails
            # with EPIPE), or close() woke us.
            events = poller.poll()
            if wake.fired or any(ev_fd == wake_fd for ev_fd, _ in events):
                raise self._lost("the transport closed during a write", op="write")
        finally:
            wake.read.release()

    def _write_error(self, exc: OSError) -> ConnectionLostError:
        if isinstance(exc, BrokenPipeError):
            return self._lost("the server stopped reading its stdin (broken pipe)", op="write")
        return self._lost(f"writing to the server failed: {exc.strerror}", op="write")

    # ------------------------------------------------------------------ stderr

    def stderr_tail(self, max_bytes: int = 400) -> str:
        """The last bytes of the child's stderr as one safe, bounded line.

        Decoded with replacement, controls replaced, at most ``max_bytes`` UTF-8
        bytes, prefixed with ``"(N earlier bytes dropped) "`` when the ring
        overflowed. Diagnostics only; it may lag the child by one read.
        """
        return self._stderr.tail(max_bytes)

    def wait_stderr_eof(self, timeout: float) -> bool:
        """Drain the child's stderr for up to ``timeout``; True once nothing more will come.

        That is: stderr reached EOF, or the transport was closed (or never
        started). After the child exited this lets the last stderr bytes reach
        the tail. Safe from any thread, also beside the reader (the reads are
        serialized); returns early when :meth:`close` wakes the transport.
        """
        deadline = now() + max(0.0, timeout)
        stdout, wake = self._stdout, self._wake
        if self._forgotten or stdout is None or wake is None:
            return True
        if stdout.acquire() < 0:
            return True  # closed: the fds are gone, nothing more will be read
        try:  # the stdout guard covers stderr and pins the wake fd
            poller = select.poll()
            poller.register(self._stderr.fd, select.POLLIN)
            poller.register(wake.poll_fd, select.POLLIN)
            while not self._stderr.drain(STDERR_CHUNKS_PER_WAKE):
                left = deadline - now()
                if left <= 0 or wake.fired:
                    return False
                events = poller.poll(poll_ms(left))
                if any(fd == wake.poll_fd for fd, _ in events):
                    return self._stderr.drain(STDERR_CHUNKS_PER_WAKE)
            return True
        finally:
            stdout.release()

    def loss_reason(self) -> str:
        """Why the stream ended, for the session's error message.

        Called after :meth:`read_frame` returned ``None``. Waits up to 250 ms
        for the child to exit and then up to 500 ms for the rest of its stderr,
        so the reason can carry the exit status and the stderr tail (bounded
        server text, controls replaced).
        """
        if self._forgotten:
            return "the transport was inherited by a forked process"
        if self._frames is not None and self._frames.poisoned:
            return f"a line exceeded max_frame_bytes ({self._max_frame} bytes)"
        if self._group is None:
            return "the process was never started"
        if self.wait_exit(_EXIT_OBSERVE):
            self.wait_stderr_eof(_STDERR_JOIN)
            reason = f"process exited ({self.exit_description()})"
        elif self._closing_now():
            reason = "the transport was closed"
        else:
            # The child lives on: nobody polls its stderr until close(), so
            # take (and log) what it wrote before its stdout ended, now.
            self.wait_stderr_eof(0)
            reason = "the process closed its stdout"
        tail = self.stderr_tail(_TAIL_BYTES)
        return f"{reason}; stderr: {tail}" if tail else reason

    # ------------------------------------------------------------------ exit

    def exit_description(self) -> str | None:
        """``"exit status N"`` or ``"signal NAME"`` once reaped; None while running.

        Reaps the child if it has exited (see :meth:`wait_exit`).
        """
        group = self._group
        if self._forgotten or group is None:
            return None
        return group.exit_description()

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the child to exit; reap it.

        Returns True once the child has exited and been reaped. Reaping first
        SIGKILLs anything left in the child's process group.
        """
        group = self._group
        if self._forgotten or group is None:
            return False
        return group.wait_exit(timeout)

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the child's process group.

        A group that is already gone is fine. Does nothing once the child was
        reaped (its pid may belong to someone else by then) or before start.
        """
        group = self._group
        if self._forgotten or group is None:
            return
        group.signal(sig)

    # ------------------------------------------------------------------ close

    def close(self, timeout: float | None = None) -> None:
        """Stop the child and release everything; bounded by ``timeout`` (None = 5 s).

        Closes stdin (EOF), waits ``shutdown_grace``, SIGTERMs the process group,
        waits ``shutdown_grace``, SIGKILLs the group and reaps. When ``timeout``
        runs out the group is SIGKILLed and reaped at once: close never returns
        with a live child. It never waits on a writer blocked in a full pipe,
        and it makes :meth:`read_frame` return ``None`` once the child is dead.

        Thread safety: idempotent and safe from any number of threads; a second
        caller waits for the first (within its own ``timeout``). Never raises
        for a child that already died.
        """
        if self._forgotten:
            return
        budget = _DEFAULT_CLOSE_TIMEOUT if timeout is None else max(0.0, timeout)
        deadline = now() + budget
        with self._state_lock:
            driver = not self._closing
            self._closing = True
            started = self._started
        if not started:
            self._closed.set()
            return
        if not driver:
            if not self._closed.wait(budget) and self._group is not None:
                self._group.kill_and_reap()
            return
        try:
            self._shutdown(deadline)
        finally:
            self._closed.set()

    def _shutdown(self, deadline: float) -> None:
        group = self._group
        if group is None:  # start() failed; it released everything
            return
        if self._stdin is not None:
            self._stdin.retire()
        exited = group.wait_exited(min(self._grace, remaining(deadline)))
        if not exited and remaining(deadline) > 0:
            self.signal_group(signal.SIGTERM)
            group.wait_exited(min(self._grace, remaining(deadline)))
        group.kill_and_reap()
        self.wait_stderr_eof(min(_STDERR_DRAIN, max(_STDERR_DRAIN_MIN, remaining(deadline))))
        self._stderr.flush_log()
        self._release_all()

    def _release_all(self) -> None:
        """Wake every thread using our fds and close them as each leaves."""
        if self._wake is not None:
            self._wake.fire()
        for shared in (self._stdin, self._stdout):  # stderr is stdout's companion
            if shared is not None:
                shared.retire()
        if self._wake is not None:
            self._wake.retire()

    def kill_now(self) -> None:
        """SIGKILL the group and reap at once; for interpreter exit.

        Starts no thread and joins none; wakes the reader and the writer so
        they finish on their own.
        """
        if self._forgotten:
            return
        with self._state_lock:
            self._closing = True
            started = self._started
        if started and self._group is not None:
            self.signal_group(signal.SIGKILL)
            self._group.kill_and_reap()
            self._release_all()
        self._closed.set()

    def forget_after_fork(self) -> None:
        """In a forked child process: mark closed without touching anything.

        No pipe is closed and nobody is signalled (the pipes and the child
        belong to the parent). No lock is taken: a lock held by a parent thread
        at fork time stays held forever in the child.
        """
        self._forgotten = True
        self._closing = True
        if self._group is not None:
            self._group.forget_after_fork()

    # ------------------------------------------------------------------ helpers

    def _lost(self, message: str, *, op: str = "start") -> ConnectionLostError:
        return ConnectionLostError(
            message,
            failure_class=FailureClass.TRANSPORT_CLOSED,
            binding=self._binding,
            op=op,
        )

    def __repr__(self) -> str:
        state = "forgotten" if self._forgotten else ("closing" if self._closing else "open")
        return (
            f"<StdioProcess binding={self._binding!r} command={os.path.basename(self._command)!r}"
            f" pid={-1 if self._group is None else self._group.pid} {state}>"
        )
