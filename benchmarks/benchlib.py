"""Shared pieces of the benchmark suite: servers, transports and process metrics.

A *target* is where a client connects: a server kind (``bare``, ``sdk``, or
``floor`` for the HTTP floor) reached over a transport. :data:`TRANSPORTS`
maps each transport to its launcher, a context manager that yields the
:class:`Target`: over stdio it only names the command (the client spawns it);
over HTTP it starts a fresh server child on 127.0.0.1 (a free port chosen by
the server), waits until it answers, yields its URL, and stops it at the end.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent

#: Server kinds: the script each one runs (over stdio).
SERVERS: dict[str, Path] = {
    "bare": HERE / "bare_server.py",
    "sdk": HERE / "sdk_server.py",
}

#: Server kinds over HTTP: the command line that serves each one on 127.0.0.1.
#: Each prints ``PORT <n>`` on stdout once it accepts connections. ``floor`` is
#: the HTTP floor's server: JSON in, a tools/call-shaped answer out, no MCP logic.
HTTP_SERVERS: dict[str, tuple[str, ...]] = {
    "bare": (sys.executable, str(HERE / "bare_server.py"), "--http"),
    "floor": (sys.executable, str(HERE / "bare_server.py"), "--http", "--floor"),
    "sdk": (sys.executable, str(HERE / "sdk_server.py"), "--http"),
}
#: The MCP endpoint path of every HTTP server here (the SDK's default).
HTTP_PATH = "/mcp"
#: Seconds an HTTP server may take to start (the SDK server imports for ~1 s).
HTTP_START_TIMEOUT = 30.0

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Target:
    """Where a client connects: ``argv`` of a stdio server, or an HTTP ``url``."""

    server: str
    transport: str
    argv: tuple[str, ...] = ()
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)


def stdio_target(server: str) -> Target:
    """The stdio target of a server kind: the current interpreter running its script."""
    return Target(server=server, transport="stdio", argv=(sys.executable, str(SERVERS[server])))


@contextlib.contextmanager
def _stdio_launcher(server: str) -> Iterator[Target]:
    yield stdio_target(server)


@contextlib.contextmanager
def http_server(server: str) -> Iterator[Target]:
    """A fresh HTTP server of this kind on 127.0.0.1, for as long as the block runs.

    The child picks a free port and prints it once it serves; its stderr goes
    to ours (so a worker's failure report shows the server's errors). It runs
    in our process group: a worker killed on timeout takes it along.
    """
    proc = subprocess.Popen(HTTP_SERVERS[server], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        port = _read_port(proc)
        yield Target(server=server, transport="http", url=f"http://127.0.0.1:{port}{HTTP_PATH}")
    finally:
        _stop(proc)


def _first_line(proc: subprocess.Popen[bytes]) -> bytes:
    """The first stdout line of a starting server, within ``HTTP_START_TIMEOUT``."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + HTTP_START_TIMEOUT
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise RuntimeError(f"the HTTP server did not start within {HTTP_START_TIMEOUT:g} s")
        chunk = os.read(fd, 256)
        if not chunk:
            raise RuntimeError(f"the HTTP server exited early (status {proc.wait(5)})")
        line += chunk
    return line


def _read_port(proc: subprocess.Popen[bytes]) -> int:
    line = _first_line(proc)
    words = line.split()
    if len(words) != 2 or words[0] != b"PORT":
        raise RuntimeError(f"the HTTP server said {line[:200]!r}, not PORT <n>")
    return int(words[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


#: The catalog-size phase's server: mcpclient's testing server (standard library
#: only) with ``count`` generated tools after its 8 built-in ones, paged by
#: ``page_size``, advertising only tools (so each client's discovery is the
#: handshake plus the paginated ``tools/list``, nothing else). Both eras.
def catalog_server_argv(count: int, page_size: int) -> tuple[str, ...]:
    """The command line of the catalog phase's server (stdio; add ``--transport http``)."""
    return (
        sys.executable,
        "-m",
        "mcpclient.testing.server",
        "--item-count",
        f"tools={count}",
        "--page-size",
        str(page_size),
        "--capabilities",
        "tools",
    )


#: Tools the testing server lists besides the generated ones (its built-ins), at most.
CATALOG_BUILTIN_TOOLS = 16


@contextlib.contextmanager
def catalog_target(transport: str, count: int, page_size: int) -> Iterator[Target]:
    """The catalog phase's server over ``transport``, for as long as the block runs.

    stdio: only the command (each connect spawns it). HTTP: one server for the
    whole block (it prints ``listening on <url>`` once it serves), so a connect
    never includes its start; each legacy session gets its own server core.
    """
    argv = catalog_server_argv(count, page_size)
    if transport == "stdio":
        yield Target(server="catalog", transport="stdio", argv=argv)
        return
    if transport != "http":
        raise ValueError(f"no catalog server over {transport!r}")
    proc = subprocess.Popen(
        [*argv, "--transport", "http", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        # Its ThreadingHTTPServer prints a traceback for every reset connection.
        stderr=subprocess.DEVNULL,
    )
    try:
        line = _first_line(proc).decode("ascii", "replace").split()
        if len(line) != 3 or line[:2] != ["listening", "on"]:
            raise RuntimeError(f"the testing server said {' '.join(line)[:200]!r}")
        yield Target(server="catalog", transport="http", url=line[2])
    finally:
        _stop(proc)


#: Transports the suite measures: each maps a server kind to a launcher (see above).
TRANSPORTS: dict[str, Callable[[str], contextlib.AbstractContextManager[Target]]] = {
    "stdio": _stdio_launcher,
    "http": http_server,
}


def parse_transports(text: str) -> list[str]:
    """``stdio,http`` -> ``["stdio", "http"]``; refuses an unknown transport."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise SystemExit("no transport given")
    for name in names:
        if name not in TRANSPORTS:
            raise SystemExit(f"unknown transport {name!r}; known: {', '.join(TRANSPORTS)}")
    return list(dict.fromkeys(names))


# -- process metrics (Linux) ---------------------------------------------------


def _status_field(name: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{name} not in /proc/self/status")


def rss_kib() -> int:
    """The current resident set size of this process, in KiB."""
    return _status_field("VmRSS")


def peak_rss_kib() -> int:
    """The peak resident set size of this process (children excluded), in KiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def os_threads() -> int:
    """OS threads of this process (every thread, not only Python's)."""
    return _status_field("Threads")


def open_fds() -> int:
    """File descriptors this process holds."""
    return len(os.listdir("/proc/self/fd"))


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted values, nearest rank."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]
