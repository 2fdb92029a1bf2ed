"""Locating and running the third-party MCP servers of ``test_third_party.py``.

Each server is pinned and installed by tox's ``commands_pre`` under the peers
root (``$MCPCLIENT_PEERS``, default ``<repo>/.peers``), never fetched at test
time, and runs offline:

* npm packages in ``<peers>/node_modules`` (run by Node, never through npx);
* Python packages each in a virtual environment of its own under
  ``<peers>/py-<name>``, so their ``mcp`` (1.x for some, 2.x for others) never
  meets the test environment's pinned ``mcp==2.3.0``.

A peer that is absent or at another version skips its tests with the install
command to run, or fails them under CI (:func:`missing_peer`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from .conftest import missing_peer, peers_root

#: The npm peers and their pinned versions (tox.ini installs exactly these).
NPM_PEERS = {
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
}
#: The Python peers: virtual environment -> pinned distributions in it.
PYTHON_PEERS: dict[str, dict[str, str]] = {
    # mcp-server-time is built on the SDK 2.x MCPServer (dual-era).
    "py-time": {"mcp-server-time": "2026.10.19", "mcp": "2.3.0"},
    # These three need mcp 1.x (the 1.x low-level Server decorators, the 1.x
    # FastMCP, and FastMCP 3 whose mcp range stops below 2): one environment.
    "py-mcp1": {
        "mcp": "1.30.0",
        "mcp-server-sqlite": "2025.4.25",
        "mcp-server-calculator": "0.2.1",
        "fsext-mcp-server": "0.1.3",
        "fastmcp": "3.4.2",
    },
}


def npm_peer(package: str) -> list[str]:
    """argv ``[node, <entry>]`` of an installed npm peer, or skip (fail under CI)."""
    version = NPM_PEERS[package]
    root = peers_root()
    folder = root / "node_modules" / package
    hint = f"(npm install --prefix {root} {package}@{version})"
    manifest = folder / "package.json"
    if not manifest.is_file():
        missing_peer(f"{package} is not installed under {root} {hint}")
    meta = json.loads(manifest.read_text())
    if meta.get("version") != version:
        missing_peer(f"{package} {meta.get('version')} is installed; pinned to {version} {hint}")
    node = shutil.which("node")
    if node is None:
        missing_peer(f"node is not on PATH ({package} needs Node.js)")
    bins = meta.get("bin")
    entry = next(iter(bins.values())) if isinstance(bins, dict) else meta.get("main")
    return [node, str(folder / str(entry))]


def _installed(site: Path, distribution: str) -> str | None:
    # A dist-info folder name is the normalized name (PEP 427: "-" -> "_").
    name = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", distribution.lower()))
    pattern = re.compile(name + r"-(.+)\.dist-info")
    for entry in site.iterdir():
        match = pattern.fullmatch(entry.name.lower())
        if match:
            return match.group(1)
    return None


def venv_peer(venv: str, script: str) -> str:
    """The path of ``script`` in the peer environment ``venv``, or skip (fail under CI)."""
    pins = PYTHON_PEERS[venv]
    folder = peers_root() / venv
    specs = " ".join(f"{name}=={version}" for name, version in pins.items())
    hint = f"(python -m venv {folder} && {folder}/bin/python -m pip install {specs})"
    sites = sorted(folder.glob("lib/python3*/site-packages"))
    executable = folder / "bin" / script
    if not sites or not executable.is_file():
        missing_peer(f"{script} is not installed in {folder} {hint}")
    for name, version in pins.items():
        found = _installed(sites[0], name)
        if found != version:
            missing_peer(f"{name} {found} is installed in {folder}; pinned to {version} {hint}")
    return str(executable)


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def process_gone(pid: int) -> bool:
    """True once ``pid`` no longer exists, or is a zombie nobody reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def group_members(pgid: int) -> set[int]:
    """Live pids (zombies excluded) in process group ``pgid``."""
    members: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.add(int(entry))
    return members


def wait_until_gone(pids: Sequence[int], timeout: float = 5.0) -> list[int]:
    """Wait for ``pids`` and their process groups to end; return what is still running."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in pids if not process_gone(p)]
        alive += [m for p in pids for m in group_members(p)]
        if not alive or time.monotonic() > deadline:
            return sorted(set(alive))
        time.sleep(0.05)


class HTTPServer:
    """A third-party server started on a loopback port (its own process group).

    ``url`` is the MCP endpoint. The process is owned by the test module, not
    by mcpclient: :meth:`close` ends the whole group and checks it is gone.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        port: int,
        path: str,
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        startup: float = 60.0,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}{path}"
        self.log_path = log_dir / f"server-{port}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        self._startup = startup

    def log(self) -> str:
        """The last 2000 characters of the server's output."""
        return self.log_path.read_text(errors="replace")[-2000:]

    def wait_ready(self) -> None:
        """Block until the port accepts connections (the server may import for seconds)."""
        deadline = time.monotonic() + self._startup
        while True:
            assert self.proc.poll() is None, f"the server exited; log: {self.log()}"
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.5),
            ):
                return
            assert time.monotonic() < deadline, f"port {self.port} never opened: {self.log()}"
            time.sleep(0.1)

    def close(self) -> None:
        """End the server's process group and check nothing of it is left."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        left = wait_until_gone([self.proc.pid])
        assert not left, f"the server left processes running: {left}"
