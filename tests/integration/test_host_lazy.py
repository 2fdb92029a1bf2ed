"""Issue 31, servers on demand: ``Host(connect="lazy")`` against real testing servers.

* a first lazy host starts the servers it knows nothing about and stores
  their catalogs; a second one starts none at connect, offers the stored
  tools, and a call starts exactly the server it needs;
* a stored catalog is never trusted for a call: a tool changed or gone since
  it was stored is refused, classified, and the catalog then shows the live
  tools;
* a search that returns a dormant server's tools starts it; an idle server
  is stopped (its process gone) and the next call starts it again;
* a call waits for a start only within its own deadline; a submitted call on
  a dormant server returns its future at once; closing during a start leaves
  no thread and no process.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    ConfigError,
    DeadlineExceededError,
    Error,
    FailureClass,
    Host,
    State,
    ToolUnavailableError,
)
from tests.support import children_of, definition, wait_until
from tests.support.servers import REPO_ROOT

OBJ: dict[str, Any] = {"type": "object"}


def write_catalog(path: Path, *tools: Any) -> str:
    path.write_text(json.dumps({"tools": list(tools)}))
    return str(path)


def note(description: str) -> dict[str, Any]:
    return {"name": "note", "description": description, "inputSchema": OBJ}


def text(result: mcpclient.ToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcpclient.Text))


def states(host: Host) -> dict[str, State]:
    return {name: status.state for name, status in host.status().items()}


def servers_running() -> set[int]:
    return children_of(os.getpid())


def wake_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mcpclient-wake-host" and t.is_alive()]


@pytest.fixture
def servers(tmp_path: Path) -> dict[str, mcpclient.Definition]:
    """Two servers whose definitions (so identities) stay the same across hosts."""
    return {
        "alpha": definition(
            "--catalog", write_catalog(tmp_path / "alpha.json", "echo", note("one")), name="alpha"
        ),
        "beta": definition(name="beta"),
    }


def lazy(servers: dict[str, mcpclient.Definition], tmp_path: Path, **kwargs: Any) -> Host:
    return Host(servers, connect="lazy", catalog_dir=tmp_path / "catalogs", **kwargs)


def remember(servers: dict[str, mcpclient.Definition], tmp_path: Path) -> None:
    """A first lazy host: it knows nothing, so it starts every server and stores its catalog."""
    with lazy(servers, tmp_path) as host:
        assert states(host) == {"alpha": State.READY, "beta": State.READY}
    assert len(list((tmp_path / "catalogs").glob("*.json"))) == 2


def test_a_second_lazy_host_starts_nothing_until_a_call_needs_a_server(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    with lazy(servers, tmp_path) as host:
        assert states(host) == {"alpha": State.CONFIGURED, "beta": State.CONFIGURED}
        assert servers_running() == set()
        names = {t.model_name for t in host.catalog().tools}
        assert {"mcp__alpha__echo", "mcp__alpha__note", "mcp__beta__echo"} <= names
        assert host.route("mcp__beta__echo") == ("beta", "echo")

        assert text(host.call_tool("mcp__alpha__echo", {"message": "woken"})) == "woken"
        assert states(host) == {"alpha": State.READY, "beta": State.CONFIGURED}
        assert len(servers_running()) == 1
        assert host.catalog().tool_by_model_name("mcp__alpha__echo") is not None
        future = host.submit_tool_call("mcp__alpha__echo", {"message": "again"})
        assert text(future.result(10)) == "again"


def test_an_eager_host_is_unchanged_and_lazy_options_need_lazy(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        Host({}, idle_stop=5)
    with pytest.raises(ConfigError):
        Host({}, catalog_dir=tmp_path)
    with pytest.raises(ConfigError):
        Host({}, connect="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Host({}, connect="lazy", idle_stop=0)


def test_a_required_server_starts_at_connect_even_when_its_catalog_is_stored(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    with lazy(servers, tmp_path, required=["beta"]) as host:
        assert states(host) == {"alpha": State.CONFIGURED, "beta": State.READY}
        beta = [t for t in host.catalog().tools if host.route(t.model_name)[0] == "beta"]
        assert len(beta) == len(host.clients["beta"].catalog().tools)  # live only, no copy


def test_a_tool_changed_since_it_was_stored_is_refused_and_the_live_one_shown(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    write_catalog(tmp_path / "alpha.json", "echo", note("two"))  # the server changed meanwhile
    with lazy(servers, tmp_path) as host:
        assert host.catalog().tool_by_model_name("mcp__alpha__note").description == "one"
        with pytest.raises(ToolUnavailableError) as info:
            host.call_tool("mcp__alpha__note", {})
        assert info.value.failure_class is FailureClass.TOOL_SCHEMA_CHANGED
        assert host.catalog().tool_by_model_name("mcp__alpha__note").description == "two"
        host.call_tool("mcp__alpha__note", {})  # the live tool, now seen: the call goes on
        # an unchanged tool of the same server would have gone through at once
        assert text(host.call_tool("mcp__alpha__echo", {"message": "x"})) == "x"


def test_a_tool_gone_since_it_was_stored_is_refused(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    write_catalog(tmp_path / "alpha.json", "echo")
    with lazy(servers, tmp_path) as host:
        submitted = host.submit_tool_call("mcp__alpha__note", {})
        with pytest.raises(ToolUnavailableError) as info:
            submitted.result(15)
        assert info.value.failure_class is FailureClass.TOOL_UNAVAILABLE
        assert host.catalog().tool_by_model_name("mcp__alpha__note") is None


def test_a_search_that_returns_a_dormant_servers_tools_starts_it(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    with lazy(servers, tmp_path) as host:
        matches = host.search_tools("note", limit=1)
        assert [m.model_name for m in matches] == ["mcp__alpha__note"]
        assert wait_until(lambda: states(host)["alpha"] is State.READY, 15)
        assert states(host)["beta"] is State.CONFIGURED


def test_an_idle_server_is_stopped_and_the_next_call_starts_it_again(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    with lazy(servers, tmp_path, idle_stop=0.3) as host:
        assert text(host.call_tool("mcp__beta__echo", {"message": "1"})) == "1"
        first = host.clients["beta"]
        assert wait_until(lambda: states(host)["beta"] is State.CONFIGURED, 10)
        assert wait_until(lambda: first.status().state is State.CLOSED, 10)
        assert wait_until(lambda: servers_running() == set(), 10)
        assert "mcp__beta__echo" in {t.model_name for t in host.catalog().tools}  # stored again
        assert text(host.call_tool("mcp__beta__echo", {"message": "2"})) == "2"
        assert host.clients["beta"] is not first


def test_a_server_with_a_call_in_flight_is_not_stopped_idle(
    servers: dict[str, mcpclient.Definition], tmp_path: Path
) -> None:
    remember(servers, tmp_path)
    with lazy(servers, tmp_path, idle_stop=0.2) as host:
        result = host.call_tool("mcp__beta__slow", {"seconds": 1})  # five idle periods long
        assert not result.is_error
        assert states(host)["beta"] is State.READY


def test_a_call_waits_for_a_start_only_within_its_deadline(tmp_path: Path) -> None:
    slow = {"slow": definition("--startup-delay", "3", name="slow")}
    remember_one(slow, tmp_path)
    with lazy(slow, tmp_path) as host:
        began = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            host.call_tool("mcp__slow__echo", {"message": "x"}, timeout=0.5)
        assert info.value.failure_class is FailureClass.STARTUP_TIMEOUT
        assert time.monotonic() - began < 2.5  # before the start itself could end
        assert states(host)["slow"] is State.STARTING
        # the start goes on for the next caller, who has time
        assert text(host.call_tool("mcp__slow__echo", {"message": "y"}, timeout=10)) == "y"


def remember_one(servers: dict[str, mcpclient.Definition], tmp_path: Path) -> None:
    with lazy(servers, tmp_path) as host:
        assert host.failed == {}


def test_a_submitted_call_on_a_dormant_server_returns_at_once_and_close_ends_the_start(
    tmp_path: Path,
) -> None:
    slow = {"slow": definition("--startup-delay", "5", name="slow")}
    remember_one(slow, tmp_path)
    host = lazy(slow, tmp_path).connect()
    try:
        future = host.submit_tool_call("mcp__slow__echo", {"message": "x"})
        assert not future.done()  # no caller thread waits for the start
        assert states(host)["slow"] is State.STARTING
        assert wait_until(lambda: servers_running() != set(), 5)
    finally:
        host.close()
    with pytest.raises(Error):
        future.result(5)
    assert wait_until(lambda: not wake_threads(), 5)
    assert wait_until(lambda: servers_running() == set(), 5)


def test_a_submitted_call_on_a_dormant_server_fails_at_its_deadline(tmp_path: Path) -> None:
    slow = {"slow": definition("--startup-delay", "3", name="slow")}
    remember_one(slow, tmp_path)
    with lazy(slow, tmp_path) as host:
        future = host.submit_tool_call("mcp__slow__echo", {"message": "x"}, timeout=0.3)
        with pytest.raises(DeadlineExceededError):
            future.result(2.5)


def test_a_submitted_call_on_a_dormant_server_can_be_cancelled(tmp_path: Path) -> None:
    slow = {"slow": definition("--startup-delay", "3", name="slow")}
    remember_one(slow, tmp_path)
    with lazy(slow, tmp_path) as host:
        token = mcpclient.CancelToken()
        future = host.submit_tool_call("mcp__slow__echo", {"message": "x"}, cancel=token)
        token.cancel("changed my mind")
        with pytest.raises(mcpclient.RequestCancelledError):
            future.result(1)


def test_a_failed_start_on_demand_is_reported_and_the_next_call_tries_again(
    tmp_path: Path,
) -> None:
    flaky_catalog = write_catalog(tmp_path / "flaky.json", "echo")
    servers = {"flaky": definition("--catalog", flaky_catalog, name="flaky")}
    remember_one(servers, tmp_path)
    (tmp_path / "flaky.json").write_text("not json")  # the server now fails at start
    with lazy(servers, tmp_path) as host:
        with pytest.raises(Error) as info:
            host.call_tool("mcp__flaky__echo", {"message": "x"})
        assert "could not be started" in info.value.message
        assert states(host)["flaky"] is State.FAILED
        write_catalog(tmp_path / "flaky.json", "echo")
        assert text(host.call_tool("mcp__flaky__echo", {"message": "x"})) == "x"
        assert states(host)["flaky"] is State.READY


def test_from_config_makes_a_lazy_host(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "testing": {
                "command": sys.executable,
                "args": ["-m", "mcpclient.testing.server", "--era", "modern"],
                "env": {"PYTHONPATH": str(REPO_ROOT)},
            }
        }
    }
    options: dict[str, Any] = {
        "dialect": "claude-desktop",
        "connect": "lazy",
        "catalog_dir": tmp_path / "catalogs",
    }
    with Host.from_config(config, **options) as host:
        assert states(host) == {"testing": State.READY}  # nothing stored yet
    with Host.from_config(config, idle_stop=60, **options) as host:
        assert states(host) == {"testing": State.CONFIGURED}
        assert text(host.call_tool("mcp__testing__echo", {"message": "hi"})) == "hi"
