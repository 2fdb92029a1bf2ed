"""Processes a test talks to over stdio: transports on small children, the raw testing server.

:class:`StdioChildren` is the ``spawn_stdio`` fixture (tests/integration/conftest.py):
``spawn_stdio(CODE, max_stderr=..., ...)`` builds a transport (the platform's
backend, :func:`~mcpclient._internal.transport.stdio_backend.stdio_process`,
unless told ``make=``) running ``python -u -c CODE`` and starts it. At the end
of the test every one is closed and checked: each child reaped, no
``mcpclient-*`` thread left.

:class:`LineServer` is ``python -m mcpclient.testing.server`` driven with raw
JSON lines, no library in between (the ``spawn_stdio_server`` fixture).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from typing import Any

from mcpclient._internal.transport.stdio import StdioProcess, build_child_env
from mcpclient._internal.transport.stdio_backend import stdio_process

from .processes import library_threads, reaped
from .servers import REPO_ROOT
from .spawning import Spawner

#: Seconds a closing child gets between EOF, SIGTERM and SIGKILL.
GRACE = 0.2
MiB = 1 << 20
#: Seconds :meth:`StdioChildren.close` gives each ``close()`` (and the threads to end).
CLOSE_TIMEOUT = 2.0

#: A child that echoes every stdin line: the default code.
ECHO = """
import sys
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""


def _close(proc: StdioProcess) -> None:
    proc.close(timeout=CLOSE_TIMEOUT)


class StdioChildren(Spawner[StdioProcess]):
    """Start stdio transports on ``python -u -c CODE`` children; close and check them at the end."""

    def __init__(self) -> None:
        super().__init__(stdio_process, close=_close)

    def __call__(  # type: ignore[override]  # a spawner with its own keywords
        self,
        code: str = ECHO,
        *,
        make: Callable[..., StdioProcess] = stdio_process,
        command: str | None = None,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        grace: float = GRACE,
        max_frame: int = MiB,
        max_stderr: int = 4096,
        max_log: int = 8192,
        start: bool = True,
    ) -> StdioProcess:
        """A transport (``make``: the backend, or a class) on ``code``, started unless told not.

        ``command``/``args`` replace ``python -u -c CODE``; ``env`` defaults to the
        safe child environment. The transport is adopted before it starts, so a
        start that fails is cleaned up too.
        """
        proc = make(
            command=command or sys.executable,
            args=args if args is not None else ["-u", "-c", textwrap.dedent(code)],
            env=env if env is not None else build_child_env(True, None),
            cwd=cwd,
            shutdown_grace=grace,
            max_frame_bytes=max_frame,
            max_stderr_bytes=max_stderr,
            binding="test",
            max_log_bytes=max_log,
        )
        self.adopt(proc)
        if start:
            proc.start()
        return proc

    def close(self) -> None:
        """Close every transport, then check each child was reaped and no library thread is left."""
        started = list(self.started)
        super().close()
        for proc in started:
            try:
                pid = proc.pid
            except RuntimeError:  # never started
                continue
            assert reaped(pid), f"child {pid} left behind"
        deadline = time.monotonic() + CLOSE_TIMEOUT
        for thread in library_threads():
            thread.join(max(0.0, deadline - time.monotonic()))
        assert not library_threads(), "mcpclient-* thread left behind"


class LineServer:
    """The testing server over stdio (``LineServer("--era", "legacy")``), spoken to in raw lines.

    A reader thread queues its stdout lines (``None`` at EOF) and another
    collects its stderr; :meth:`close` kills it if it still runs.
    """

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpclient.testing.server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO_ROOT,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self._reader = threading.Thread(target=self._read, name="test-server-stdout", daemon=True)
        self._err_reader = threading.Thread(
            target=self._read_err, name="test-server-stderr", daemon=True
        )
        self._reader.start()
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            self.stderr += chunk

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv_raw(self, timeout: float = 5.0) -> bytes | None:
        return self.lines.get(timeout=timeout)

    def recv(self, timeout: float = 5.0) -> Any:
        line = self.recv_raw(timeout)
        assert line is not None, "server closed stdout"
        return json.loads(line)

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv()

    def initialize(self, version: str = "2025-11-25") -> Any:
        answer = self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def assert_silent(self, seconds: float) -> None:
        """Fail if the server writes a line within ``seconds``."""
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"the server was not silent: {line!r}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)
        self._reader.join(timeout=5)
        self._err_reader.join(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()
