"""A stdio child in its own process group, from its birth to its reaping.

* :func:`build_child_env` builds the child's environment (never the whole
  parent environment).
* :meth:`ProcessGroup.spawn` starts the child as the leader of a new session
  (so of a new process group whose id is its pid), with the pipes it is given.
* :class:`ProcessGroup` signals the group, waits for the leader's exit (on a
  pidfd where the kernel has one, a kqueue on macOS) and reaps it, in one place
  (:meth:`ProcessGroup.reap`): while the exited leader is still a zombie its
  pid pins the group id, so reaping first SIGKILLs whatever is left of the
  group, and no stranger can be hit.

Threads:
    Any thread may call every method; none is started here.

Locks:
    * ``_reap_lock`` guards ``_reaped`` and ``_returncode``. It is held across the
      non-blocking ``waitid``/``killpg``/``waitpid`` calls (never across a blocking
      wait), so no signal can be sent to a pid after it was reaped and reused.

Shutdown:
    :meth:`ProcessGroup.kill_and_reap` SIGKILLs the group unless its leader
    exited already, waits for the exit (bounded) and reaps.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from mcpclient._core.deadline import now
from mcpclient._internal.transport.stdio_fds import SharedFd, poll_ms
from mcpclient._internal.transport.stdio_platform import exit_watch
from mcpclient.errors import ConfigError, ConnectionLostError, FailureClass
from mcpclient.transports import SAFE_ENV

__all__ = ["ProcessGroup", "build_child_env"]

logger = logging.getLogger(__name__)

# How long we wait for a SIGKILLed group leader to become reapable; only a
# process stuck in uninterruptible sleep takes longer.
_KILL_WAIT = 2.0
# The longest single poll on an exit fd before the child is probed again.
_EXIT_SLICE = 0.05
_HAVE_WAITID = hasattr(os, "waitid") and hasattr(os, "WNOWAIT")


def build_child_env(
    inherit_env: bool | Sequence[str], env: Mapping[str, str] | None
) -> dict[str, str]:
    """Build a stdio child's environment; never the whole parent environment.

    Args:
        inherit_env: ``True`` copies the :data:`SAFE_ENV` names that are set in
            ``os.environ``; ``False`` copies nothing; a sequence copies exactly
            those names (when set).
        env: entries that override or add to the inherited ones.

    Raises:
        ConfigError: a name is empty or holds ``=`` or NUL, a value holds NUL,
            or ``inherit_env`` is a plain string.
    """
    if inherit_env is True:
        names: tuple[str, ...] = SAFE_ENV
    elif inherit_env is False:
        names = ()
    elif isinstance(inherit_env, str | bytes):
        raise ConfigError("inherit_env must be a bool or a sequence of names, not a string")
    else:
        names = tuple(inherit_env)
    for name in names:
        _check_env_name(name, "inherit_env")
    result = {name: os.environ[name] for name in names if name in os.environ}
    if env:
        for name, value in env.items():
            _check_env_name(name, "env")
            if not isinstance(value, str) or "\0" in value:
                raise ConfigError(f"env value for {name} must be a string without NUL")
            result[name] = value
    return result


def _check_env_name(name: object, field: str) -> None:
    if not isinstance(name, str) or not name or "=" in name or "\0" in name:
        raise ConfigError(f"{field} holds an invalid variable name")


class ProcessGroup:
    """A started child, the leader of its own process group, until it is reaped.

    Example::

        group = ProcessGroup.spawn(["server"], stdin=r, stdout=w1, stderr=w2,
                                   env={}, cwd=None, binding="files")
        group.signal(signal.SIGTERM)
        if not group.wait_exit(2.0):
            group.kill_and_reap()

    Thread safety: every method is safe from any thread (module docstring).
    """

    def __init__(self, proc: subprocess.Popen[bytes], *, binding: str) -> None:
        self._proc = proc
        #: The child's pid, which is also its process group id.
        self.pid = proc.pid
        self._binding = binding
        self._reap_lock = threading.Lock()  # guards _reaped, _returncode; see module doc
        self._reaped = False
        self._returncode: int | None = None
        self._reaped_event = threading.Event()
        self._exit_fd = open_exit_fd(proc.pid)  # pidfd or kqueue, where there is one
        self._forgotten = False  # set in a forked child; read without locks

    @classmethod
    def spawn(
        cls,
        argv: list[str],
        *,
        stdin: int,
        stdout: int,
        stderr: int,
        env: dict[str, str],
        cwd: str | None,
        binding: str,
    ) -> ProcessGroup:
        """Start ``argv`` in a new session (its own process group) on the given fds.

        Raises:
            ConnectionLostError: (``transport_closed``) the command could not be
                started; the message names the command, never the environment.
            ConfigError: an argument, the environment or ``cwd`` is invalid.
        """
        command = argv[0]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                shell=False,
            )
        except (OSError, ValueError, TypeError) as exc:
            if isinstance(exc, OSError):
                raise ConnectionLostError(
                    _start_failure(command, cwd, exc),
                    failure_class=FailureClass.TRANSPORT_CLOSED,
                    binding=binding,
                    op="start",
                ) from exc
            raise ConfigError(
                f"cannot start {command!r}: an argument, the environment or cwd is invalid",
                binding=binding,
                op="start",
            ) from exc
        return cls(proc, binding=binding)

    @property
    def exit_fd(self) -> SharedFd | None:
        """The leader's pidfd or kqueue fd (readable once it exited; retired when reaped)."""
        return self._exit_fd

    def exit_description(self) -> str | None:
        """``"exit status N"`` or ``"signal NAME"`` once reaped; None while running.

        Reaps the child if it has exited (see :meth:`wait_exit`).
        """
        if self._forgotten:
            return None
        self.reap()
        code = self._returncode
        if code is None:
            return None
        if code >= 0:
            return f"exit status {code}"
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the child to exit; reap it.

        Returns True once the child has exited and been reaped. Reaping first
        SIGKILLs anything left in the child's process group.
        """
        if self._forgotten:
            return False
        if self._reaped:
            return True
        return self.wait_exited(timeout) and self.reap()

    def has_exited(self) -> bool:
        """Whether the leader has exited, without reaping it."""
        if self._reaped:
            return True
        if not _HAVE_WAITID:  # pragma: no cover - reap instead (stragglers survive)
            return self.reap()
        try:
            result = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # already reaped (by us, racing this probe)
        return result is not None

    def wait_exited(self, timeout: float) -> bool:
        """Wait until the leader has exited (a zombie or reaped); never reaps.

        ``timeout`` may be ``math.inf`` (no bound: ending the group ends the wait).
        """
        deadline = now() + max(0.0, timeout)
        exit_fd = self._exit_fd
        fd = -1 if exit_fd is None else exit_fd.acquire()
        if exit_fd is not None and fd >= 0:
            try:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                while True:
                    # Slices of at most _EXIT_SLICE: a watch that never fires
                    # (a kqueue fd a platform will not poll) costs a probe's step.
                    if self._reaped or poller.poll(poll_ms(min(deadline - now(), _EXIT_SLICE))):
                        return True
                    if now() >= deadline or self.has_exited():
                        return self.has_exited()
            finally:
                exit_fd.release()
        # No pidfd (or it was retired because the child was reaped): probe.
        step = 0.001
        while True:
            if self.has_exited():
                return True
            left = deadline - now()
            if left <= 0:
                return False
            self._reaped_event.wait(min(step, left))
            step = min(step * 2, 0.05)

    def reap(self) -> bool:
        """The one place that waits on the child. Returns whether it is reaped.

        Non-blocking. While the exited leader is still a zombie its pid pins the
        process group id, so SIGKILLing the group then cannot reach a stranger;
        it kills whatever the server left behind in its group.
        """
        proc = self._proc
        if self._forgotten:
            return False
        with self._reap_lock:
            if self._reaped:
                return True
            if _HAVE_WAITID:
                if not self.has_exited():
                    return False
                self._killpg(signal.SIGKILL)
            code = proc.poll()
            if code is None:  # still running (only reachable without waitid)
                return False
            self._returncode = code
            self._reaped = True
        self._reaped_event.set()
        if self._exit_fd is not None:
            self._exit_fd.retire()
        logger.debug("stdio child of binding %r reaped", self._binding)
        return True

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child's process group.

        A group that is already gone is fine. Does nothing once the child was
        reaped (its pid may belong to someone else by then).
        """
        if self._forgotten:
            return
        with self._reap_lock:
            if not self._reaped:
                self._killpg(sig)

    def _killpg(self, sig: int) -> None:
        # Caller holds _reap_lock and has checked the child is not reaped.
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:  # e.g. macOS when only a zombie is left in the group
            logger.debug("signal %d to group of binding %r refused", sig, self._binding)

    def kill_and_reap(self) -> None:
        """SIGKILL the group unless its leader exited, wait for the exit and reap."""
        if not self.has_exited():
            self.signal(signal.SIGKILL)
        if not (self.wait_exited(_KILL_WAIT) and self.reap()):  # pragma: no cover
            logger.warning("stdio child of binding %r survived SIGKILL", self._binding)

    def forget_after_fork(self) -> None:
        """In a forked child process: never signal, wait on or reap this pid again.

        No lock is taken (a lock held by a parent thread at fork time stays
        held forever in the child).
        """
        self._forgotten = True
        # Popen must never waitpid() a pid that is not our child (it would
        # reap an unrelated process that reused the number).
        self._proc.returncode = 0


def _start_failure(command: str, cwd: str | None, exc: OSError) -> str:
    reason = exc.strerror or type(exc).__name__
    if cwd is not None and exc.filename == cwd:
        return f"cannot start {command!r}: working directory unusable: {reason}"
    return f"cannot start {command!r}: {reason}"


def open_exit_fd(pid: int) -> SharedFd | None:
    """An fd that turns readable when ``pid`` exits (pidfd or kqueue), or None: probe.

    The choice is :func:`.stdio_platform.exit_watch`'s; an fd the kernel will not
    give (an old kernel, a child that is already a zombie) means probing.
    """
    watch = exit_watch(
        has_pidfd=hasattr(os, "pidfd_open"),
        has_kqueue=hasattr(select, "kqueue") and hasattr(select, "KQ_NOTE_EXIT"),
    )
    try:
        if watch == "pidfd":
            return SharedFd(os.pidfd_open(pid))
        if watch == "kqueue":
            return SharedFd(kqueue_exit_fd(pid, select))
    except OSError:  # pragma: no cover - kernel older than 5.3, or the child is gone
        return None
    return None


def kqueue_exit_fd(pid: int, kernel: Any) -> int:
    """A kqueue fd (of ``kernel``, the ``select`` module) readable once ``pid`` exits.

    The queue is returned as a duplicate fd and its ``select.kqueue`` object
    closed, so the fd has one owner (the :class:`SharedFd`) and no object's
    finaliser can close its number later.
    """
    queue = kernel.kqueue()
    try:
        change = kernel.kevent(
            pid,
            filter=kernel.KQ_FILTER_PROC,
            flags=kernel.KQ_EV_ADD | kernel.KQ_EV_ONESHOT,
            fflags=kernel.KQ_NOTE_EXIT,
        )
        queue.control([change], 0, 0)
        fd: int = os.dup(queue.fileno())
        return fd
    finally:
        queue.close()
