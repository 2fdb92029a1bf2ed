"""Fixtures for the integration tests: real peer servers and the vendored schemas.

Peers:
    * the official SDK's server, ``tests/integration/peers/sdk_server.py`` (needs
      ``mcp==2.3.0``, a test dependency);
    * ``@modelcontextprotocol/server-everything@2026.8.31``, installed with npm into
      ``$MCPCLIENT_PEERS`` (default ``<repo>/.peers``), run through Node.

A missing peer skips the tests that need it, with the reason, except under CI
(``CI`` set), where a missing peer is an install step that did not run: the
test fails instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import pytest

import mcpclient
from tests.support.http_servers import ScriptedServer
from tests.support.servers import REPO_ROOT, make_definition

PEERS_DIR = Path(__file__).resolve().parent / "peers"
SDK_SERVER_SCRIPT = PEERS_DIR / "sdk_server.py"
SDK_VERSION = "2.3.0"
EVERYTHING_VERSION = "2026.8.31"

MakeDefinition = Callable[..., mcpclient.Definition]


def missing_peer(reason: str) -> NoReturn:
    """Skip, or fail under CI, where every peer must have been installed."""
    if os.environ.get("CI"):
        pytest.fail(f"peer missing under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def peers_root() -> Path:
    """Where npm-installed peers live: ``$MCPCLIENT_PEERS`` or ``<repo>/.peers``."""
    configured = os.environ.get("MCPCLIENT_PEERS")
    return Path(configured) if configured else REPO_ROOT / ".peers"


@pytest.fixture(scope="session")
def sdk_server_command() -> list[str]:
    """argv of the official-SDK peer: ``[sys.executable, <sdk_server.py>]``."""
    spec = importlib.util.find_spec("mcp")
    if spec is None:
        missing_peer(f"the official SDK is not installed (pip install mcp=={SDK_VERSION})")
    installed = metadata.version("mcp")
    if installed != SDK_VERSION:
        missing_peer(f"mcp {installed} is installed; the peer is pinned to mcp=={SDK_VERSION}")
    return [sys.executable, str(SDK_SERVER_SCRIPT)]


@pytest.fixture(scope="session")
def everything_command() -> list[str]:
    """argv of ``@modelcontextprotocol/server-everything`` (installed under the peers root)."""
    root = peers_root()
    package = root / "node_modules" / "@modelcontextprotocol" / "server-everything"
    entry = package / "dist" / "index.js"
    if not entry.is_file():
        missing_peer(
            f"server-everything is not installed under {root}"
            f" (npm install --prefix {root}"
            f" @modelcontextprotocol/server-everything@{EVERYTHING_VERSION})"
        )
    node = shutil.which("node")
    if node is None:
        missing_peer("node is not on PATH (server-everything needs Node.js)")
    installed = json.loads((package / "package.json").read_text()).get("version")
    if installed != EVERYTHING_VERSION:
        missing_peer(
            f"server-everything {installed} is installed;"
            f" the peer is pinned to {EVERYTHING_VERSION}"
        )
    return [node, str(entry), "stdio"]


@pytest.fixture(scope="session")
def sdk_definition(sdk_server_command: list[str]) -> MakeDefinition:
    """Build a Definition for the SDK peer: ``sdk_definition(protocol=..., name=..., **kw)``."""

    def build(*, name: str = "sdk", protocol: str = "auto", **kwargs: Any) -> mcpclient.Definition:
        command, *args = sdk_server_command
        return make_definition(name, command, args, protocol=protocol, **kwargs)

    return build


@pytest.fixture(scope="session")
def everything_definition(everything_command: list[str]) -> MakeDefinition:
    """Build a Definition for server-everything: ``everything_definition(protocol=..., **kw)``."""

    def build(
        *, name: str = "everything", protocol: str = "auto", **kwargs: Any
    ) -> mcpclient.Definition:
        command, *args = everything_command
        return make_definition(name, command, args, protocol=protocol, **kwargs)

    return build


@pytest.fixture(scope="session")
def spec_dir() -> Path:
    """``tests/fixtures/spec``: the official schemas, vendored (its README names the source)."""
    return REPO_ROOT / "tests" / "fixtures" / "spec"


@pytest.fixture
def spawn_http(tmp_path: Path) -> Iterator[Callable[..., ScriptedServer]]:
    """Start a dedicated HTTP testing server per call (``spawn_http("--era", "legacy")``).

    Each is a :class:`ScriptedServer` (its knobs are process-wide, so a test that
    turns one gets its own) and is stopped after the test.
    """
    servers: list[ScriptedServer] = []

    def start(*args: str) -> ScriptedServer:
        servers.append(ScriptedServer(tmp_path, *args))
        return servers[-1]

    try:
        yield start
    finally:
        for server in servers:
            server.close()


@pytest.fixture
def tag(request: pytest.FixtureRequest) -> str:
    """This test's ``X-Test-Case`` value (its node name, made header-safe)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)


@pytest.fixture
def started_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads started while the test runs (in start order).

    For "no thread of its own" checks: a thread that started and ended between
    two looks at ``threading.enumerate()`` is listed too.
    """
    names: list[str] = []
    start = threading.Thread.start

    def recording(thread: threading.Thread) -> None:
        names.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", recording)
    return names
