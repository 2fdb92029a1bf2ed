"""Shared pieces of the benchmark suite: servers, transports and process metrics.

A *target* is where a client connects: a server kind (``bare`` or ``sdk``)
reached over a transport. Only ``stdio`` exists today; an HTTP case plugs in
by adding an entry to :data:`TRANSPORTS` (a server launcher returning a URL)
and an ``http`` branch to each adapter's ``connect`` (see ``adapters.py``).
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent

#: Server kinds: the script each one runs (over stdio).
SERVERS: dict[str, Path] = {
    "bare": HERE / "bare_server.py",
    "sdk": HERE / "sdk_server.py",
}

#: Transports the suite can measure, and why one is not available yet.
TRANSPORTS: dict[str, str | None] = {
    "stdio": None,
    "http": "mcpclient has no HTTP transport yet; add a launcher here and an adapter branch",
}

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Target:
    """Where a client connects: ``argv`` of a stdio server, or (later) an HTTP ``url``."""

    server: str
    transport: str
    argv: tuple[str, ...] = ()
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)


def stdio_target(server: str) -> Target:
    """The stdio target of a server kind: the current interpreter running its script."""
    return Target(server=server, transport="stdio", argv=(sys.executable, str(SERVERS[server])))


def check_transport(transport: str) -> None:
    """Refuse a transport the suite cannot measure yet, saying why."""
    if transport not in TRANSPORTS:
        raise SystemExit(f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
    reason = TRANSPORTS[transport]
    if reason is not None:
        raise SystemExit(f"transport {transport!r} is not available yet: {reason}")


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
