"""The ``era`` phase: what ``protocol="auto"`` costs over ``protocol="legacy"`` at connect.

Run inside a worker (``worker.py``), for mcpclient over stdio only, against a legacy-only
testing server (``python -m mcpclient.testing.server --era legacy``) in one of two cases:

- ``eraerr``: the server answers the probe (``server/discover``) with an error
  (-32601), so ``auto`` sends ``initialize`` at once: the goal is *at most one extra
  round trip* and no extra server start;
- ``eraexit``: the server also has ``--exit-on-discover``: it dies of the probe, so
  ``auto`` restarts it once, straight to ``initialize``, and logs that: the goal is *at
  most one restart, recorded* (one extra start, one ``restarting`` warning).

The worker's ``era`` (``legacy`` or ``auto``) is the ``protocol`` of every connect.
Each worker is a fresh process, so the era cache starts empty. The server runs under
a ``/bin/sh`` wrapper (:func:`server_argv`) that appends ``{"_start": true}`` to the
server's ``--record`` file before it execs the server, which then appends every
message it reads (one JSON object a line): so each connect's share of the file says how
many times the server started and which requests it read. The wrapper's argument, a
state directory, is part of the server command, so a fresh directory is a server
command the process's era cache has never seen.

Steps: one untimed warm-up connect (a throwaway directory: the lazy imports, not the
cache); ``sizes.era_cold`` *uncached* connects, each to a fresh directory (a command
the cache has no entry for; the first of them in a process that has never negotiated);
then ``sizes.era_cached`` connects to the last directory again: *cached*, which for
``auto`` goes straight to ``initialize``. Each connect = spawn + negotiate + discover
the catalog (``mcpclient.connect``), timed, then ``close()``, timed separately. Per
connect: the requests the server read up to and including the ``initialize`` that
was answered (the handshake's round trips; notifications are not requests), the
server starts, and the restart warnings mcpclient logged.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["ERA_SERVERS", "measure", "server_argv"]

#: The phase's server kinds (the worker's ``server``) and the testing server's flags.
ERA_SERVERS: dict[str, tuple[str, ...]] = {
    "eraerr": ("--era", "legacy"),
    "eraexit": ("--era", "legacy", "--exit-on-discover"),
}

#: ``$1``: the state directory; the rest: the testing server's arguments.
_WRAPPER = (
    'dir=$1; shift; printf \'{"_start":true}\\n\' >> "$dir/record.jsonl"; '
    'exec "$0" -m mcpclient.testing.server "$@" --record "$dir/record.jsonl"'
)


def server_argv(state: Path, flags: tuple[str, ...]) -> tuple[str, ...]:
    """The wrapped server's command line (``$0`` of the shell is the interpreter)."""
    return ("/bin/sh", "-c", _WRAPPER, sys.executable, str(state), *flags)


class _Restarts(logging.Handler):
    """Counts mcpclient's "restarting it with the legacy initialize handshake" warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "restarting" in record.getMessage():
            self.count += 1


def _handshake(lines: list[str]) -> dict[str, Any]:
    """Starts and handshake requests in one connect's share of the record file."""
    starts = 0
    requests: list[str] = []  # every request, with "|start" marks
    answered = 0  # requests up to and including the last initialize
    for line in lines:
        message = json.loads(line)
        if isinstance(message, dict) and message.get("_start"):
            starts += 1
            requests.append("|start")
            continue
        if isinstance(message, dict) and "method" in message and "id" in message:
            requests.append(message["method"])
            if message["method"] == "initialize":
                answered = sum(1 for r in requests if r != "|start")
    return {"starts": starts, "requests": answered, "sequence": requests}


class _Server:
    """One state directory: the server command, and the record read connect by connect."""

    def __init__(self, root: Path, name: str, flags: tuple[str, ...]) -> None:
        self.state = root / name
        self.state.mkdir()
        (self.state / "record.jsonl").touch()
        self.argv = server_argv(self.state, flags)
        self._seen = 0

    def new_lines(self) -> list[str]:
        lines = (self.state / "record.jsonl").read_text().splitlines()
        fresh, self._seen = lines[self._seen :], len(lines)
        return [line for line in fresh if line.strip()]


def measure(server: str, protocol: str, sizes: dict[str, Any]) -> dict[str, Any]:
    """The era phase for one case and protocol; see the module docstring."""
    import mcpclient

    flags = ERA_SERVERS[server]
    restarts = _Restarts()
    logger = logging.getLogger("mcpclient")
    logger.addHandler(restarts)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-era-") as tmp:
            root = Path(tmp)

            def connect(target: _Server) -> dict[str, Any]:
                transport = mcpclient.StdioTransport(target.argv[0], list(target.argv[1:]))
                definition = mcpclient.Definition("era", transport, protocol=protocol)
                before = restarts.count
                t0 = time.perf_counter()
                client = mcpclient.connect(definition)
                t1 = time.perf_counter()
                version = str(client.status().protocol_version)
                client.close()
                t2 = time.perf_counter()
                counts = _handshake(target.new_lines())
                return {
                    "connect_ms": (t1 - t0) * 1e3,
                    "close_ms": (t2 - t1) * 1e3,
                    "restarts_logged": restarts.count - before,
                    "protocol_version": version,
                    **counts,
                }

            connect(_Server(root, "warm", flags))  # lazy imports; its own cache entry
            uncached = []
            target = None
            for i in range(sizes["era_cold"]):
                target = _Server(root, f"cold{i}", flags)
                uncached.append(connect(target))
            assert target is not None
            cached = [connect(target) for _ in range(sizes["era_cached"])]
    finally:
        logger.removeHandler(restarts)
    return {
        "protocol": protocol,
        "case": server,
        "protocol_version": uncached[0]["protocol_version"],
        **_stats("uncached", uncached),
        **_stats("cached", cached),
        "options": {"protocol": protocol},
    }


def _stats(prefix: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median times; the worst (largest) counts, since the goals are 'at most'."""
    return {
        f"{prefix}_ms": statistics.median(r["connect_ms"] for r in runs),
        f"{prefix}_close_ms": statistics.median(r["close_ms"] for r in runs),
        f"{prefix}_requests": max(r["requests"] for r in runs),
        f"{prefix}_starts": max(r["starts"] for r in runs),
        f"{prefix}_restarts_logged": max(r["restarts_logged"] for r in runs),
        f"{prefix}_sequence": runs[-1]["sequence"],
        f"{prefix}_all": [
            {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in runs
        ],
    }
