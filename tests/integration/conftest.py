"""Fixtures for the integration tests: real peer servers and the vendored schemas.

Peers:
    * the official SDK's server, ``tests/integration/peers/sdk_server.py`` (needs
      ``mcp==2.3.0``, a test dependency);
    * ``@modelcontextprotocol/server-everything@2026.8.31``, installed with npm into
      ``$MCPCLIENT_PEERS`` (default ``<repo>/.peers``), run through Node.

A missing peer skips the tests that need it, with the reason, except under CI
(``CI`` set), where a missing peer is an install step that did not run: the
test fails instead.

Servers a test starts, each stopped when its scope ends (one home per kind):
    * ``spawn_http`` / ``spawn_shared_http``: the scriptable testing server over
      HTTP (:class:`~tests.support.http_servers.ScriptedServer`), per test / per
      module;
    * ``everything_http``: server-everything over Streamable HTTP;
    * ``spawn_stdio``: the library's stdio transport on small ``python -c``
      children (:class:`~tests.support.stdio.StdioChildren`);
    * ``spawn_stdio_server``: the testing server over stdio, driven with raw
      JSON lines (:class:`~tests.support.stdio.LineServer`).
"""

from __future__ import annotations

import functools
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
from tests.support.http_servers import ScriptedServer, ServerProcess, everything_over_http
from tests.support.servers import REPO_ROOT, make_definition
from tests.support.spawning import Spawner
from tests.support.stdio import LineServer, StdioChildren

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


#: A factory of testing servers over HTTP: ``spawn("--era", "legacy")``.
SpawnHttp = Callable[..., ScriptedServer]


@pytest.fixture
def spawn_http(tmp_path: Path) -> Iterator[SpawnHttp]:
    """Start a dedicated HTTP testing server per call (``spawn_http("--era", "legacy")``).

    Each is a :class:`ScriptedServer` (its knobs are process-wide, so a test that
    turns one gets its own) and is stopped after the test.
    """
    with Spawner(functools.partial(ScriptedServer, tmp_path)) as spawn:
        yield spawn


@pytest.fixture(scope="module")
def spawn_shared_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpawnHttp]:
    """:func:`spawn_http` for module-scoped fixtures: each server is stopped after the module.

    For a server a module's tests share (``http_server = spawn_shared_http("--era",
    "dual")`` in a module-scoped fixture); tests tell their requests apart by
    their tag header.
    """
    with Spawner(functools.partial(ScriptedServer, tmp_path_factory.mktemp("http"))) as spawn:
        yield spawn


@pytest.fixture(scope="module")
def everything_http(
    everything_command: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """server-everything over Streamable HTTP (``/mcp`` on a free port), one per module.

    It serves the 2025-11-25 era only: a client on ``auto`` falls back from the probe.
    """
    log_dir = tmp_path_factory.mktemp("everything-http")
    with everything_over_http(everything_command, log_dir) as server:
        yield server


@pytest.fixture
def spawn_stdio() -> Iterator[StdioChildren]:
    """Start stdio transports on small ``python -c`` children (``spawn_stdio(CODE, ...)``).

    :class:`tests.support.stdio.StdioChildren`: each is closed after the test,
    which then checks every child was reaped and no ``mcpclient-*`` thread is left.
    """
    with StdioChildren() as spawn:
        yield spawn


#: A factory of raw stdio testing servers: ``spawn("--era", "legacy")``.
SpawnLineServer = Callable[..., LineServer]


@pytest.fixture
def spawn_stdio_server() -> Iterator[SpawnLineServer]:
    """Start the testing server over stdio per call, to drive with raw JSON lines.

    ``spawn_stdio_server("--era", "legacy")`` is a :class:`tests.support.stdio.LineServer`;
    each is closed after the test.
    """
    with Spawner(LineServer) as spawn:
        yield spawn


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
