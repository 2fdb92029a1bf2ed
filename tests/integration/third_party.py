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

import json
import re
import shutil
from pathlib import Path

from .conftest import missing_peer, peers_root

#: The npm peers and their pinned versions (tox.ini installs exactly these).
NPM_PEERS = {
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
}
#: npm packages that ship a native binary (a Go server): package -> pinned version.
NPM_BINARY_PEERS = {
    # mcp-cron, built on the official Go SDK (v1.4.1, read from the binary's build
    # info); it serves Streamable HTTP. The platform package holds the binary.
    "mcp-cron-linux-amd64": "0.9.1",
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
    # FastMCP of the official SDK 1.8, which exits at the line after an unknown
    # pre-initialize request (the era probe); pydantic pinned to one of its time
    # (a newer one removed a private name mcp 1.8 imports).
    "py-mcp18": {"mcp": "1.8.1", "mcp-server-calculator": "0.2.1", "pydantic": "2.11.5"},
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


def npm_binary(package: str, executable: str) -> str:
    """The path of ``executable`` in an installed npm binary package, or skip (fail under CI)."""
    version = NPM_BINARY_PEERS[package]
    root = peers_root()
    folder = root / "node_modules" / package
    hint = f"(npm install --prefix {root} {package}@{version})"
    manifest = folder / "package.json"
    if not manifest.is_file():
        missing_peer(f"{package} is not installed under {root} {hint}")
    found = json.loads(manifest.read_text()).get("version")
    if found != version:
        missing_peer(f"{package} {found} is installed; pinned to {version} {hint}")
    path = folder / "bin" / executable
    if not path.is_file():
        missing_peer(f"{package} has no bin/{executable} (another platform?) {hint}")
    return str(path)


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
