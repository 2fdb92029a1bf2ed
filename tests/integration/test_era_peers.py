"""The era negotiation against the real servers of issue 25, one per behavior seen in the field.

* the official SDK 2.x (``mcp-server-time`` on ``mcp`` 2.3.0) behind a start
  delay longer than the fallback instant: it reads the probe and ``initialize``
  together, locks to the modern era of the first and refuses the second (-32022);
* FastMCP of the official SDK 1.8 (``mcp-server-calculator`` on ``mcp`` 1.8.1):
  it exits at the line after the unknown probe, so it is restarted once with
  ``initialize`` and its era remembered;
* a server on the official Go SDK (``mcp-cron``, Go SDK v1.4.1) over Streamable HTTP.

Each is pinned and installed by tox (``third_party.py``) and runs offline.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient
from mcpclient import Definition, State, StreamableHTTPTransport
from tests.support.http_servers import ServerProcess, free_port

from .test_third_party import LATEST_LEGACY, MODERN, assert_ok, connected, tagged
from .third_party import npm_binary, venv_peer

pytestmark = pytest.mark.peer

#: Longer than the fallback instant (5 s with the default startup budget).
START_DELAY = 6.0
#: Sleeps, then runs mcp-server-time: a cold ``uvx`` or a loaded runner, reproduced.
DELAYED_TIME_SERVER = (
    "import sys, time; time.sleep(float(sys.argv.pop(1)));"
    " from mcp_server_time import main; sys.exit(main())"
)


def test_a_dual_era_sdk_server_that_starts_slowly_connects_in_the_modern_era() -> None:
    """Defect 1: the probe outlives the fallback; its late answer wins over the refusal."""
    python = venv_peer("py-time", "python")
    definition = mcpclient.Definition(
        "slowtime",
        mcpclient.StdioTransport(
            python,
            ["-c", DELAYED_TIME_SERVER, str(START_DELAY), "--local-timezone", "UTC"],
            env={**tagged(f"slow-{uuid.uuid4()}"), "TZ": "UTC"},
            shutdown_grace=0.2,
        ),
        timeouts=mcpclient.Timeouts(startup=40),
    )
    with connected(definition) as client:
        assert client.status().protocol_version == MODERN
        now = client.call_tool("get_current_time", {"timezone": "UTC"})
        assert_ok(now)
        assert now.structured["timezone"] == "UTC"


def test_fastmcp_on_sdk_1_8_is_restarted_once_and_its_era_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect 2: the server dies of the probe; one restart, logged, then never again."""
    command = venv_peer("py-mcp18", "mcp-server-calculator")
    env = tagged(f"calc18-{uuid.uuid4()}")  # a command of its own: nothing cached yet
    restarts = "exited after the era probe"
    caplog.set_level(logging.WARNING, logger="mcpclient")
    for attempt in range(2):
        caplog.clear()
        definition = mcpclient.Definition(
            "calc18",
            mcpclient.StdioTransport(command, env=env, shutdown_grace=0.2),
        )
        with connected(definition) as client:
            status = client.status()
            assert status.protocol_version in mcpclient.definition.LEGACY_VERSIONS
            assert client.catalog().server.version == "1.8.1"
            result = client.call_tool("calculate", {"expression": "6 * 7"})
            assert_ok(result)
            assert result.text.strip() == "42"
        logged = [r for r in caplog.records if restarts in r.getMessage()]
        # The first connect restarts the server once; the second goes straight to initialize.
        assert len(logged) == (1 if attempt == 0 else 0), [r.getMessage() for r in logged]


@pytest.fixture(scope="module")
def go_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """mcp-cron (official Go SDK) over Streamable HTTP, its state in a folder of its own."""
    binary = npm_binary("mcp-cron-linux-amd64", "mcp-cron")
    home = tmp_path_factory.mktemp("mcp-cron-home")
    port = free_port()
    argv = [binary, "-transport", "http", "-address", "127.0.0.1", "-port", str(port)]
    argv += ["-db-path", str(home / "results.db"), "-mcp-config-path", str(home / "none.json")]
    with ServerProcess(
        argv,
        port=port,
        url=f"http://127.0.0.1:{port}/mcp",
        log_dir=home,
        env={"HOME": str(home)},
        startup=30.0,
    ) as server:
        yield server


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_go_sdk_server_over_streamable_http(go_server: ServerProcess, protocol: str) -> None:
    """The Go SDK's stateful handler: ``auto`` reaches the era ``legacy`` does, and works."""
    definition = Definition("cron", StreamableHTTPTransport(go_server.url), protocol=protocol)
    with connected(definition) as client:
        status = client.status()
        assert status.state is State.READY
        assert status.transport_kind == "streamablehttp"
        assert status.protocol_version == LATEST_LEGACY
        catalog = client.catalog()
        assert catalog.server.name == "mcp-cron"
        names = {tool.raw_name for tool in catalog.tools}
        assert {"list_tasks", "get_task", "add_task", "run_task"} <= names
        listed = client.call_tool("list_tasks", {})
        assert not listed.is_error, listed.text
        # The Go server answers a missing task with a JSON-RPC error (code 0), not isError.
        with pytest.raises(mcpclient.ProtocolError, match="no-such-task"):
            client.call_tool("get_task", {"id": "no-such-task"})
    assert go_server.proc.poll() is None, "the client must not end a server it did not start"


def test_the_go_sdk_server_is_the_one_pinned(go_server: ServerProcess) -> None:
    """What the binary says it is: the Go SDK's build info names the pinned SDK."""
    binary = Path(go_server.proc.args[0])
    assert b"github.com/modelcontextprotocol/go-sdk\tv1.4.1" in binary.read_bytes()
