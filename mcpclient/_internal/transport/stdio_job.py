"""A Windows stdio child in a Job Object, from its birth to its reaping.

Windows has no process groups to signal and no ``killpg``: a server started
as ``npx.cmd`` is ``cmd.exe`` → ``node`` → whatever node starts, and killing
the first leaves the rest running. So the child is assigned to a Job Object
created with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``: terminating the job (or
our handle to it closing, even when this interpreter dies) ends the whole
tree. The child is also started with ``CREATE_NEW_PROCESS_GROUP`` (see
:func:`.stdio_platform.creation_flags`), so a polite stop is a
``CTRL_BREAK_EVENT`` that reaches only it.

:class:`JobProcess` has the interface of :class:`.stdio_group.ProcessGroup`
that :class:`~.stdio_portable.PortableStdioProcess` uses. The Win32 calls go
through a :class:`Kernel32` object, so the unit tests drive every decision
with a fake one on any platform; only :func:`win32_kernel32` touches
``ctypes.windll``.

A process is assigned to the job right after ``CreateProcess`` returns: a
child that starts a grandchild in the first instant escapes the job (the
known limit of assigning after creation without ``CREATE_SUSPENDED``, which
``subprocess`` does not offer).

Threads:
    Any thread may call every method; none is started here.

Locks:
    * ``_lock`` guards ``_reaped``, ``_returncode`` and the job handle; it is
      held across the non-blocking ``poll``/``TerminateJobObject``/
      ``CloseHandle`` calls, never across a blocking wait, so the job is
      never used after its handle was closed.

Shutdown:
    :meth:`JobProcess.kill_and_reap` terminates the job (the whole tree),
    waits for the child (bounded), and closes the job handle.
"""

from __future__ import annotations

import contextlib
import logging
import math
import subprocess
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from mcpclient._core.deadline import now
from mcpclient._internal.transport.stdio_platform import (
    creation_flags,
    graceful_signal,
    resolve_command,
    windows_command_line,
)
from mcpclient.errors import ConfigError, ConnectionLostError, FailureClass

__all__ = ["JobProcess", "Kernel32", "win32_kernel32"]

logger = logging.getLogger(__name__)

_KILL_WAIT = 2.0
# The exit code a terminated job's processes get (what TerminateProcess gives,
# and what Popen.kill() uses).
_TERMINATED = 1


class Kernel32(Protocol):
    """The Job Object calls :class:`JobProcess` makes (kernel32's, or a fake's)."""

    def create_kill_on_close_job(self) -> int:
        """A new Job Object that kills its processes when its last handle closes."""

    def assign(self, job: int, process_handle: int) -> None:
        """Put the process into the job (raises OSError when refused)."""

    def terminate(self, job: int, exit_code: int) -> None:
        """End every process in the job."""

    def close(self, handle: int) -> None:
        """Close a handle."""

    def has_console(self) -> bool:
        """Whether this process has a console (``GetConsoleWindow`` is not NULL)."""


class JobProcess:
    """A started Windows child, the tree of it in a Job Object, until it is reaped.

    Example::

        proc = JobProcess.spawn(["npx", "-y", "server"], stdin=r, stdout=w1,
                                stderr=w2, env=env, cwd=None, binding="files")
        proc.signal(signal.SIGTERM)      # CTRL_BREAK_EVENT
        if not proc.wait_exit(2.0):
            proc.kill_and_reap()         # TerminateJobObject: the whole tree

    Thread safety: every method is safe from any thread (module docstring).
    """

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        binding: str,
        kernel32: Kernel32 | None,
        console: bool = True,
    ) -> None:
        self._proc = proc
        #: The child's pid.
        self.pid = proc.pid
        self._binding = binding
        self._k32 = kernel32
        self._lock = threading.Lock()  # guards _reaped, _returncode, _job; see module doc
        self._reaped = False
        self._returncode: int | None = None
        self._job: int | None = None
        self._forgotten = False
        self._console = console  # without a shared console no CTRL_BREAK reaches the child
        if kernel32 is not None:
            self._job = _assign_to_job(kernel32, proc, binding)

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        stdin: int,
        stdout: int,
        stderr: int,
        env: dict[str, str],
        cwd: str | None,
        binding: str,
        kernel32: Kernel32 | None = None,
        popen: Any = subprocess.Popen,
    ) -> JobProcess:
        """Resolve ``argv[0]`` through ``PATHEXT``, start it, put it into a new job.

        Raises:
            ConnectionLostError: (``transport_closed``) the command could not be
                started; the message names the command, never the environment.
            ConfigError: an argument, the environment or ``cwd`` is invalid (a
                batch file's argument ``cmd.exe`` would interpret included).
        """
        command = resolve_command(
            argv[0], path=env.get("PATH") or env.get("Path"), pathext=env.get("PATHEXT"), cwd=cwd
        )
        line = windows_command_line([command, *argv[1:]], comspec=env.get("COMSPEC"))
        k32 = kernel32 or win32_kernel32()
        console = k32.has_console()
        try:
            proc = popen(
                line,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=cwd,
                creationflags=creation_flags(parent_has_console=console),
                close_fds=True,
                shell=False,
            )
        except OSError as exc:
            raise ConnectionLostError(
                f"cannot start {argv[0]!r}: {exc.strerror or type(exc).__name__}",
                failure_class=FailureClass.TRANSPORT_CLOSED,
                binding=binding,
                op="start",
            ) from exc
        except (ValueError, TypeError) as exc:
            raise ConfigError(
                f"cannot start {argv[0]!r}: an argument, the environment or cwd is invalid",
                binding=binding,
                op="start",
            ) from exc
        return cls(proc, binding=binding, kernel32=k32, console=console)

    # -- exit ------------------------------------------------------------------

    def exit_description(self) -> str | None:
        """``"exit status N"`` once reaped; None while running."""
        if self._forgotten or not self.reap():
            return None
        return f"exit status {self._returncode}"

    def has_exited(self) -> bool:
        """Whether the child has exited (it is reaped at once: Windows keeps no zombie)."""
        return self.reap()

    def wait_exited(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds (``math.inf``: no bound) for the child to exit."""
        if self._forgotten:
            return False
        try:
            self._proc.wait(None if timeout == math.inf else max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return self.reap()
        return self.reap()

    wait_exit = wait_exited

    def reap(self) -> bool:
        """Record the exit status once the child exited; whether it has. Non-blocking."""
        if self._forgotten:
            return False
        with self._lock:
            if self._reaped:
                return True
            code = self._proc.poll()
            if code is None:
                return False
            self._returncode = code
            self._reaped = True
        return True

    # -- signals ---------------------------------------------------------------

    def signal(self, sig: int) -> None:
        """SIGTERM/SIGINT: ``CTRL_BREAK_EVENT`` to the child; anything else ends the job."""
        if self._forgotten:
            return
        polite = graceful_signal(sig, windows=True)
        if polite is None:
            self._terminate()
            return
        if not self._console:
            return  # the caller waits its grace, then ends the job
        with self._lock:
            if self._reaped:
                return
            try:
                self._proc.send_signal(polite)
            except OSError:  # it exited meanwhile
                logger.debug("CTRL_BREAK to binding %r refused", self._binding)

    def _terminate(self) -> None:
        with self._lock:
            job, k32 = self._job, self._k32
            if job is not None and k32 is not None:
                try:
                    k32.terminate(job, _TERMINATED)
                    return
                except OSError:
                    logger.debug("TerminateJobObject for %r failed", self._binding, exc_info=True)
            if not self._reaped:  # no job: the child alone
                with contextlib.suppress(OSError):  # it exited meanwhile
                    self._proc.kill()

    def kill_and_reap(self) -> None:
        """End the whole job, wait for the child (bounded), close the job handle."""
        if self._forgotten:
            return
        self._terminate()
        deadline = now() + _KILL_WAIT
        if not self.wait_exited(max(0.0, deadline - now())):  # pragma: no cover
            logger.warning("stdio child of binding %r survived termination", self._binding)
        with self._lock:
            job, self._job = self._job, None
            if job is not None and self._k32 is not None:
                self._k32.close(job)

    def forget_after_fork(self) -> None:
        """Windows has no fork; present for the interface."""
        self._forgotten = True


def _assign_to_job(k32: Kernel32, proc: subprocess.Popen[bytes], binding: str) -> int | None:
    """A kill-on-close job holding ``proc``; None (the child alone) when Windows refuses."""
    handle = getattr(proc, "_handle", None)  # Popen's process handle on Windows
    try:
        job = k32.create_kill_on_close_job()
    except OSError:
        logger.warning("binding %r: no Job Object; close() ends only the child", binding)
        return None
    try:
        if handle is None:
            raise OSError("no process handle")
        k32.assign(job, int(handle))
    except OSError:
        # A parent job that forbids nesting or breakaway: the child alone can still be ended.
        logger.warning("binding %r: the child is outside a Job Object", binding, exc_info=True)
        k32.close(job)
        return None
    return job


def win32_kernel32() -> Kernel32:  # pragma: no cover - Windows only
    """The real kernel32 Job Object calls, through ctypes."""
    import ctypes  # noqa: PLC0415 - Windows only
    from ctypes import wintypes  # noqa: PLC0415

    windll = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined, unused-ignore]

    class _Basic(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in (
                "ReadOperationCount",
                "WriteOperationCount",
                "OtherOperationCount",
                "ReadTransferCount",
                "WriteTransferCount",
                "OtherTransferCount",
            )
        ]

    class _Extended(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", _Basic),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    # HANDLE-sized results and arguments: ctypes' default int would truncate them.
    windll.CreateJobObjectW.restype = wintypes.HANDLE
    windll.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
    windll.SetInformationJobObject.argtypes = [
        wintypes.HANDLE,
        ctypes.c_int,
        ctypes.c_void_p,
        wintypes.DWORD,
    ]
    windll.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
    windll.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
    windll.CloseHandle.argtypes = [wintypes.HANDLE]
    windll.GetConsoleWindow.restype = wintypes.HWND

    extended_limit_information = 9  # JobObjectExtendedLimitInformation
    kill_on_job_close = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE

    def check(ok: Any) -> Any:
        if not ok:
            raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined, unused-ignore]
        return ok

    class _Real:
        def create_kill_on_close_job(self) -> int:
            job = check(windll.CreateJobObjectW(None, None))
            info = _Extended()
            info.BasicLimitInformation.LimitFlags = kill_on_job_close
            try:
                check(
                    windll.SetInformationJobObject(
                        job, extended_limit_information, ctypes.byref(info), ctypes.sizeof(info)
                    )
                )
            except OSError:
                windll.CloseHandle(job)
                raise
            return int(job)

        def assign(self, job: int, process_handle: int) -> None:
            check(windll.AssignProcessToJobObject(job, process_handle))

        def terminate(self, job: int, exit_code: int) -> None:
            check(windll.TerminateJobObject(job, exit_code))

        def close(self, handle: int) -> None:
            windll.CloseHandle(handle)

        def has_console(self) -> bool:
            return bool(windll.GetConsoleWindow())

    return _Real()
