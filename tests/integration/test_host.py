"""Issue 17, ``mcpclient.Host``: many servers, one object, against real testing servers.

* a healthy and a broken server: the broken one fails alone, or (required)
  fails ``connect()`` after the rest are closed;
* a hanging server fails within the host's one startup budget;
* the bindings start in parallel (their ``starting`` transitions all precede
  the first ``ready``), and no startup thread outlives ``connect()``;
* the aggregate's model names are unique across colliding binding names and
  route each call to its own server;
* the aggregate follows an adoption and a lost and restored binding, and a
  reader never sees a half-updated one;
* ``close()`` from another thread during ``connect()``, from many threads at
  once; shared and per-binding handlers; ``run_tool_calls`` by model name;
  ``from_config``.
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
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    Handlers,
    Host,
    ReconnectPolicy,
    ShutdownError,
    State,
    StateChanged,
    Timeouts,
    ToolUnavailableError,
)
from tests.support import Events, Recording, children_of, definition, wait_until
from tests.support.servers import REPO_ROOT, SLACK

OBJ: dict[str, Any] = {"type": "object"}


def broken(name: str = "broken") -> mcpclient.Definition:
    """A server that exits as soon as it is asked to discover (its start fails at once)."""
    return definition("--era", "modern", "--exit-on-discover", name=name)


def hanging(name: str = "hang") -> mcpclient.Definition:
    """A server that never answers the handshake (its own budget is long)."""
    return definition(
        "--era",
        "legacy",
        "--no-initialize-answer",
        name=name,
        protocol="legacy",
        timeouts=Timeouts(startup=30),
    )


def host_threads(role: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"mcpclient-{role}-host" and t.is_alive()]


def tools_of(host: Host, server: str) -> set[str]:
    view = host.catalog()
    return {t.raw_name for t in view.tools if host.route(t.model_name)[0] == server}


def text(result: mcpclient.ToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcpclient.Text))


# ----------------------------------------------------------------------- isolation


def test_a_broken_server_fails_alone() -> None:
    with Host({"ok": definition(name="ok"), "broken": broken()}) as host:
        assert set(host.clients) == {"ok"}
        error = host.failed["broken"]
        assert isinstance(error, Error)
        assert error.binding == "broken"
        status = host.status()
        assert status["ok"].state is State.READY
        assert status["broken"].state is State.FAILED
        assert status["broken"].failure is not None
        assert status["broken"].failure.failure_class is error.failure_class
        assert text(host.call_tool("mcp__ok__echo", {"message": "hi"})) == "hi"
    assert host.clients["ok"].status().state is State.CLOSED


def test_a_required_broken_server_fails_connect_after_closing_the_rest() -> None:
    before = children_of(os.getpid())
    host = Host({"ok": definition(name="ok"), "broken": broken()}, required=["broken"])
    with pytest.raises(ConnectionLostError) as info:
        host.connect()
    assert "'broken'" in info.value.message
    assert info.value.__cause__ is host.failed["broken"]
    assert info.value.failure_class is host.failed["broken"].failure_class
    # What did start was closed before connect() raised: no client left, no server.
    for client in host.clients.values():
        assert client.status().state is State.CLOSED
    assert children_of(os.getpid()) - before == set()
    with pytest.raises(ShutdownError):  # the failed connect closed the host
        host.connect()
    host.close()


def test_a_broken_server_that_is_not_required_is_not_an_error() -> None:
    with Host({"ok": definition(name="ok"), "broken": broken()}, required=["ok"]) as host:
        assert set(host.failed) == {"broken"}
        assert host.status()["ok"].state is State.READY


def test_a_hanging_server_fails_within_the_startup_budget() -> None:
    budget = 4.0
    host = Host({"ok": definition(name="ok"), "hang": hanging()}, startup_timeout=budget)
    start = time.monotonic()
    with host:
        elapsed = time.monotonic() - start
        error = host.failed["hang"]
        assert isinstance(error, DeadlineExceededError)
        assert error.failure_class is FailureClass.STARTUP_TIMEOUT
        assert host.status()["ok"].state is State.READY
    assert elapsed < budget + SLACK


# ------------------------------------------------------------------- parallel start


def test_bindings_start_in_parallel_and_no_startup_thread_outlives_connect() -> None:
    events = Events()
    names = [f"slow{i}" for i in range(5)]
    servers = {n: definition("--startup-delay", "1", name=n) for n in names}
    with Host(servers, handlers=Handlers(event=events)) as host:
        assert host_threads("connect") == []
        assert set(host.clients) == set(names)
        # Events reach their handler on a lane of their own, maybe after connect returns.
        assert wait_until(
            lambda: sum(e.to_state is State.READY for e in events.of(StateChanged)) == len(names)
        )
        changes = events.of(StateChanged)
        starting = [e.at for e in changes if e.to_state is State.STARTING]
        ready = [e.at for e in changes if e.to_state is State.READY]
        assert len(starting) == len(ready) == len(names)
        # Serially, each server's 1 s sleep would put a READY before the next STARTING.
        assert max(starting) < min(ready)
    assert host_threads("close") == []


# --------------------------------------------------------------- names and routing


def catalog_file(tmp_path: Path, name: str, tools: list[Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"tools": tools}))
    return str(path)


def test_colliding_binding_names_get_unique_names_that_route_to_their_server(
    tmp_path: Path,
) -> None:
    recs = {k: Recording(tmp_path / f"{k}.jsonl") for k in ("a", "b", "x", "y")}
    servers = {
        # definitions named alike: the keys are the binding names (issue 28)
        "a": definition(name="dup", record=recs["a"].path),
        "b": definition(name="dup", record=recs["b"].path),
        # keys that meet across the separator: mcp__p__q__r both
        "p": definition(
            "--catalog",
            catalog_file(tmp_path, "x", ["echo", {"name": "q__r", "inputSchema": OBJ}]),
            name="x",
            record=recs["x"].path,
        ),
        "p__q": definition(
            "--catalog",
            catalog_file(tmp_path, "y", ["echo", {"name": "r", "inputSchema": OBJ}]),
            name="y",
            record=recs["y"].path,
        ),
    }
    with Host(servers) as host:
        assert host.failed == {}
        tools = host.catalog().tools
        model_names = [t.model_name for t in tools]
        assert len(model_names) == len(set(model_names))
        for name in model_names:
            assert len(name) <= 64
            assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
        echoes = {host.route(n)[0]: n for n in model_names if host.route(n)[1] == "echo"}
        assert set(echoes) == {"a", "b", "p", "p__q"}
        assert (echoes["a"], echoes["b"]) == ("mcp__a__echo", "mcp__b__echo")
        assert not any(n.startswith("mcp__dup__") for n in model_names)
        assert echoes["p"] == "mcp__p__echo"  # unique: kept as its Client names it
        assert host.clients["p"].catalog().tool_by_raw_name("echo").model_name == echoes["p"]
        crossed = [n for n in model_names if host.route(n)[1] in ("q__r", "r")]
        assert len(crossed) == 2
        assert all(n.startswith("mcp__p__q__r_") for n in crossed)

        for server, name in echoes.items():
            assert text(host.call_tool(name, {"message": server})) == server
        for name in crossed:
            host.call_tool(name, {})
        for server, rec in recs.items():
            calls = [m["params"]["name"] for m in rec.requests("tools/call")]
            expected = {"x": "q__r", "y": "r"}.get(server)
            assert sorted(calls) == sorted(["echo", *([expected] if expected else [])]), server


def test_an_unknown_model_name_is_the_error_a_client_gives_for_an_unknown_tool() -> None:
    with Host({"ok": definition(name="ok")}) as host:
        with pytest.raises(ToolUnavailableError) as by_host:
            host.call_tool("mcp__ok__nope", {})
        with pytest.raises(ToolUnavailableError) as by_client:
            host.clients["ok"].call_tool("nope", {})
        assert by_host.value.failure_class is by_client.value.failure_class
    with pytest.raises(ShutdownError):
        host.call_tool("mcp__ok__echo", {"message": "late"})


def test_submit_tool_call_routes_by_model_name() -> None:
    with Host({"a": definition(name="a"), "b": definition(name="b")}) as host:
        futures = [host.submit_tool_call(f"mcp__{s}__echo", {"message": s}) for s in "ab"]
        assert [text(f.result(10)) for f in futures] == ["a", "b"]
        with pytest.raises(ToolUnavailableError):
            host.submit_tool_call("mcp__c__echo", {})


def test_call_options_reach_the_binding() -> None:
    with Host({"ok": definition(name="ok")}) as host:
        with pytest.raises(DeadlineExceededError):
            host.call_tool("mcp__ok__slow", {"seconds": 5}, timeout=0.3)
        with pytest.raises(mcpclient.ConfigError):
            host.call_tool("mcp__ok__echo", {}, mcpclient.CallOpts(), timeout=1)


def test_task_reaches_the_binding() -> None:
    # Without the tasks extension negotiated, task=True is refused by the binding:
    # the host passes it on (dropping it would run the call plainly).
    with Host({"ok": definition(name="ok", protocol="2026-07-28")}) as host:
        with pytest.raises(mcpclient.ProtocolError) as info:
            host.call_tool("mcp__ok__echo", {"message": "x"}, task=True)
        assert info.value.failure_class is mcpclient.FailureClass.UNSUPPORTED_PROTOCOL
        assert text(host.call_tool("mcp__ok__echo", {"message": "x"})) == "x"


# ------------------------------------------------------------- the aggregate moves


def test_the_aggregate_follows_an_adoption_and_readers_never_see_half_of_one() -> None:
    with Host({"one": definition(name="one"), "two": definition(name="two")}) as host:
        before = host.catalog()
        assert host.catalog() is before  # cached while no generation moved
        old = {t.model_name for t in before.tools}
        new = old | {"mcp__one__fresh"}
        seen: list[frozenset[str]] = []
        problems: list[str] = []
        stop = threading.Event()

        def read() -> None:
            while not stop.is_set():
                names = frozenset(t.model_name for t in host.catalog().tools)
                if names not in (old, new):
                    problems.append(f"a mixed aggregate: {sorted(names ^ old)}")
                if not seen or seen[-1] != names:
                    seen.append(names)

        reader = threading.Thread(target=read, name="test-reader")
        reader.start()
        try:
            client = host.clients["one"]
            client.call_tool("mutate_catalog", {"add": "fresh"})
            assert wait_until(lambda: client.candidate() is not None, 10.0)
            assert host.catalog() is before  # a candidate is not adopted
            candidate = client.candidate()
            assert candidate is not None
            client.adopt(candidate.generation)
            after = host.catalog()
            assert {t.model_name for t in after.tools} == new
            assert after.generation > before.generation
            assert wait_until(lambda: bool(seen) and seen[-1] == new, 5.0)
        finally:
            stop.set()
            reader.join()
        assert problems == []
        assert host.route("mcp__one__fresh") == ("one", "fresh")
        assert not host.call_tool("mcp__one__fresh", {}).is_error


def test_the_aggregate_follows_a_lost_and_restored_binding() -> None:
    lossy = definition(name="lossy", reconnect=ReconnectPolicy(disabled=True))
    with Host({"lossy": lossy, "steady": definition(name="steady")}) as host:
        tools = tools_of(host, "lossy")
        assert "echo" in tools
        with pytest.raises(Error):
            host.call_tool("mcp__lossy__hostile", {"action": "exit", "code": 3})
        assert wait_until(lambda: tools_of(host, "lossy") == set(), 10.0)
        assert "echo" in tools_of(host, "steady")
        with pytest.raises(ToolUnavailableError):
            host.call_tool("mcp__lossy__echo", {"message": "gone"})
        dropped = host.catalog().generation
        host.clients["lossy"].reconnect()
        assert wait_until(lambda: tools_of(host, "lossy") == tools, 15.0)
        assert host.catalog().generation > dropped
        assert text(host.call_tool("mcp__lossy__echo", {"message": "back"})) == "back"


# ---------------------------------------------------------------------------- close


def test_close_from_another_thread_during_connect() -> None:
    events = Events()
    servers = {f"h{i}": hanging(f"h{i}") for i in range(3)}
    servers["ok"] = definition(name="ok")
    host = Host(servers, handlers=Handlers(event=events))

    def close_once_starting() -> None:
        wait_until(
            lambda: len([e for e in events.of(StateChanged) if e.to_state is State.STARTING]) >= 4,
            20.0,
        )
        host.close()

    closer = threading.Thread(target=close_once_starting, name="test-closer")
    closer.start()
    start = time.monotonic()
    try:
        with pytest.raises(ShutdownError):
            host.connect()
    finally:
        closer.join()
    # The hanging servers' own budget is 30 s: connect ended because close cancelled it.
    assert time.monotonic() - start < 20.0
    assert host_threads("connect") == []
    for status in host.status().values():
        assert status.state in (State.CLOSED, State.FAILED)
    host.close()  # idempotent


def test_close_from_many_threads_at_once() -> None:
    host = Host({f"s{i}": definition(name=f"s{i}") for i in range(3)}).connect()
    threads = [threading.Thread(target=host.close, name=f"test-close-{i}") for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10.0)
    assert not any(t.is_alive() for t in threads)
    assert all(c.status().state is State.CLOSED for c in host.clients.values())
    assert host_threads("close") == []


# ------------------------------------------------------------------------- handlers


def test_handlers_shared_or_per_binding() -> None:
    shared, own_a, own_b = Events(), Events(), Events()
    servers = {"a": definition(name="a"), "b": definition(name="b")}
    with Host(servers, handlers=Handlers(event=shared)):
        pass
    assert {e.binding for e in shared.of(StateChanged)} == {"a", "b"}
    per = {"a": Handlers(event=own_a), "b": Handlers(event=own_b)}
    with Host(servers, handlers=per):
        pass
    assert {e.binding for e in own_a.of(StateChanged)} == {"a"}
    assert {e.binding for e in own_b.of(StateChanged)} == {"b"}


# ------------------------------------------------------------ config and export


def test_from_config_connects_the_servers_a_config_names() -> None:
    config = {
        "mcpServers": {
            "testing": {
                "command": sys.executable,
                "args": ["-m", "mcpclient.testing.server", "--era", "modern"],
                "env": {"PYTHONPATH": str(REPO_ROOT)},
            }
        }
    }
    with Host.from_config(config, dialect="claude-desktop") as host:
        assert host.failed == {}
        assert len(host.clients) == 1
        echo = next(t.model_name for t in host.catalog().tools if t.raw_name == "echo")
        assert text(host.call_tool(echo, {"message": "hi"})) == "hi"


def test_from_config_skips_a_disabled_server() -> None:
    server = {
        "command": sys.executable,
        "args": ["-m", "mcpclient.testing.server", "--era", "modern"],
        "env": {"PYTHONPATH": str(REPO_ROOT)},
    }
    config = {"mcpServers": {"on": server, "off": {**server, "disabled": True}}}
    with Host.from_config(config, dialect="cline") as host:
        assert host.skipped == ("off",)
        assert set(host.clients) == {"on"}
        assert "off" not in host.status()


def test_run_tool_calls_runs_a_providers_tool_calls_on_the_host() -> None:
    with Host({"ok": definition(name="ok")}) as host:
        response = {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "mcp__ok__echo",
                                    "arguments": json.dumps({"message": "routed"}),
                                },
                            }
                        ],
                    }
                }
            ]
        }
        results = host.run_tool_calls(response, provider="openai_chat", timeout=10)
        dumped = json.dumps(results)
        assert "call_1" in dumped
        assert "routed" in dumped
