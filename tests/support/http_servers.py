"""Servers on a loopback port: any server process, the scriptable testing server, its records.

:class:`ServerProcess` runs a server in its own process group and learns its
URL either from its first stdout line (``listening on URL``, what the testing
server and the SDK peer print) or by polling a known port (third-party servers
that print nothing useful). :meth:`ServerProcess.close` ends the whole group
and checks nothing of it is left, so a server that forks (``npx``, ``uv``)
cannot outlive its test. A server is its own context manager: a fixture of one
server is ``with ServerProcess(...) as server: yield server``.

:class:`ScriptedServer` is ``python -m mcpclient.testing.server --transport
http`` with a ``--record`` file; :func:`header_values`, :func:`header`,
:func:`body_method` and :func:`is_request` read its recorded requests. The
fixtures ``spawn_http`` and ``spawn_shared_http`` (tests/integration/conftest.py)
start them. :func:`everything_over_http` is server-everything in one of its
HTTP modes (the ``everything_http`` fixture).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import mcpclient

from .processes import group_members, reaped
from .servers import REPO_ROOT

TESTING_SERVER = [sys.executable, "-m", "mcpclient.testing.server"]
#: The header each test tags its requests with, to pick its own lines out of a shared record.
TAG_HEADER = "X-Test-Case"


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """A server subprocess in its own process group, listening on a loopback port.

    Without ``port``, the server's first stdout line must be ``listening on URL``
    and the constructor waits for it. With ``port`` (and the endpoint ``url``),
    the constructor returns at once (several servers may start side by side) and
    :meth:`wait_ready` waits for the port to accept connections; ``ready=True``
    waits in the constructor. A server on a fixed port can :meth:`close` and
    :meth:`start` again on the same URL (a restarted peer).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        url: str | None = None,
        ready: bool = True,
        startup: float = 20.0,
    ) -> None:
        self.port = port
        self._argv = list(argv)
        self._env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}
        self._log_dir = log_dir
        self._startup = startup
        self._spawn()
        try:
            if port is None:
                line = self._first_line()
                prefix = "listening on "
                assert line.startswith(prefix), line
                self.url = line[len(prefix) :].strip()
            else:
                assert url is not None, "a server found by its port needs its endpoint url"
                self.url = url
                if ready:
                    self.wait_ready()
        except BaseException:
            self.close()
            raise
        self.base = self.url.rsplit("/", 1)[0]

    def _spawn(self) -> None:
        self.stderr_path = self._log_dir / f"server-{time.monotonic_ns()}.log"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                self._argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.port is None else err,
                stderr=err,
                cwd=REPO_ROOT,
                env=self._env,
                start_new_session=True,
            )
        self._running = True

    def start(self) -> None:
        """Start the server again after :meth:`close` and wait for its port (same port, same URL).

        Only for a server on a known ``port``: one on port 0 would come back elsewhere.
        """
        assert self.port is not None, "only a server on a fixed port can restart"
        assert not self._running, "the server is still running"
        self._spawn()
        try:
            self.wait_ready()
        except BaseException:
            self.close()
            raise

    def log(self) -> str:
        """The last 2000 characters of the server's stderr (and stdout, for a port server)."""
        return self.stderr_path.read_text(errors="replace")[-2000:]

    def _first_line(self) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self._startup
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            assert left > 0, f"no listening line; log: {self.log()}"
            ready, _w, _x = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                assert chunk, f"the server exited; log: {self.log()}"
                data += chunk
        return data.decode()

    def wait_ready(self) -> None:
        """Block until the port accepts connections (a server may import for seconds)."""
        assert self.port is not None
        deadline = time.monotonic() + self._startup
        while True:
            assert self.proc.poll() is None, f"the server exited; log: {self.log()}"
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.5),
            ):
                return
            assert time.monotonic() < deadline, f"port {self.port} never opened: {self.log()}"
            time.sleep(0.05)

    def close(self) -> None:
        """End the server's process group and check nothing of it is left (idempotent)."""
        if not self._running:
            return
        self._running = False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        deadline = time.monotonic() + 5
        while group_members(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = group_members(self.proc.pid)
        assert not left, f"the server left processes running: {sorted(left)}"
        assert reaped(self.proc.pid)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def restartable_testing_server(
    log_dir: Path, *flags: str, port: int | None = None
) -> ServerProcess:
    """The testing server over HTTP on a fixed port, so it can restart on the same URL.

    The port is a free one unless given (a server redeployed on another's port).
    """
    port = free_port() if port is None else port
    return ServerProcess(
        [*TESTING_SERVER, "--transport", "http", "--port", str(port), *flags],
        log_dir=log_dir,
        port=port,
        url=f"http://127.0.0.1:{port}/mcp",
    )


def everything_over_http(
    everything_command: Sequence[str], log_dir: Path, mode: str = "streamableHttp"
) -> ServerProcess:
    """server-everything in an HTTP ``mode`` (``streamableHttp`` or ``sse``) on a free port.

    ``everything_command`` is the stdio argv (the ``everything_command`` fixture):
    its last word, the mode, is replaced. The URL is the mode's endpoint (``/mcp``,
    ``/sse``); the server prints nothing useful, so it is found by its port.
    """
    port = free_port()
    path = {"streamableHttp": "/mcp", "sse": "/sse"}[mode]
    return ServerProcess(
        [*everything_command[:-1], mode],
        log_dir=log_dir,
        env={"PORT": str(port)},
        port=port,
        url=f"http://127.0.0.1:{port}{path}",
    )


class ScriptedServer(ServerProcess):
    """``python -m mcpclient.testing.server --transport http`` with a record file.

    Listens on a free loopback port, at ``http://127.0.0.1:PORT/mcp``; each
    server records to its own ``record_path`` (read with :meth:`records`).
    """

    def __init__(self, log_dir: Path, *args: str) -> None:
        self.record_path = log_dir / f"record-{time.monotonic_ns()}.jsonl"
        super().__init__(
            [
                *TESTING_SERVER,
                "--transport",
                "http",
                "--port",
                "0",
                "--record",
                str(self.record_path),
                *args,
            ],
            log_dir=log_dir,
        )
        if not (self.url.startswith("http://127.0.0.1:") and self.url.endswith("/mcp")):
            self.close()
            raise AssertionError(f"not a loopback /mcp endpoint: {self.url}")

    def records(self, tag: str | None = None) -> list[dict[str, Any]]:
        """Recorded HTTP requests, in arrival order (those tagged ``tag`` only, if given)."""
        if not self.record_path.exists():
            return []
        lines = self.record_path.read_text(encoding="utf-8").splitlines(keepends=True)
        # A last line without its newline is still being written: not yet a record.
        entries = [json.loads(line) for line in lines if line.endswith("\n") and line.strip()]
        if tag is None:
            return entries
        return [e for e in entries if header_values(e, TAG_HEADER) == [tag]]


def http_definition(
    url: str,
    *,
    tag: str,
    protocol: str = "auto",
    name: str = "web",
    headers: dict[str, str] | None = None,
    auth: Callable[[], str | None] | None = None,
    **kwargs: Any,
) -> mcpclient.Definition:
    """A Streamable HTTP definition whose requests carry the test's tag header."""
    transport = mcpclient.StreamableHTTPTransport(
        url, headers={TAG_HEADER: tag, **(headers or {})}, auth=auth
    )
    return mcpclient.Definition(name, transport, protocol=protocol, **kwargs)


def header_values(entry: dict[str, Any], name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive) in a recorded request."""
    return [value for key, value in entry["headers"] if key.lower() == name.lower()]


def header(entry: dict[str, Any], name: str) -> str | None:
    """The one value of header ``name`` in a recorded request (``None``: not sent)."""
    values = header_values(entry, name)
    assert len(values) <= 1, f"{name} sent {len(values)} times"
    return values[0] if values else None


def body_method(entry: dict[str, Any]) -> str | None:
    """The JSON-RPC method of a recorded request's body, if it has one."""
    body = entry.get("body")
    return body.get("method") if isinstance(body, dict) else None


def is_request(entry: dict[str, Any]) -> bool:
    """True for a recorded JSON-RPC request (a method and an id)."""
    body = entry.get("body")
    return isinstance(body, dict) and "method" in body and "id" in body
