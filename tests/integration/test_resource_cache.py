"""``read_resource`` serves what 2026-07-28 ``ttlMs``/``cacheScope`` allow (issue 32 item 3).

The testing server's ``--read-hint URI=TTL_MS[:SCOPE]`` sets a read's hint;
``--record`` shows which reads reached it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcpclient
from mcpclient import State, connect
from mcpclient._core import deadline
from tests.support.http_servers import http_definition

from .conftest import SpawnHttp
from .engine_support import Recording, definition, wait_until

HELLO = "test://static/hello"


def _reads(rec: Recording) -> int:
    return len(rec.requests("resources/read"))


def test_a_fresh_result_is_served_from_the_cache(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--read-hint", f"{HELLO}=600000", record=rec.path)
    with connect(defn) as client:
        first = client.read_resource(HELLO)
        assert client.read_resource(HELLO) is first  # the same frozen value
        assert _reads(rec) == 1
        assert client.read_resource(HELLO, cache=False) is not first
        assert _reads(rec) == 2


def test_a_stale_result_is_read_again(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--read-hint", f"{HELLO}=150", record=rec.path)
    with connect(defn) as client:
        client.read_resource(HELLO)
        read_at = deadline.now()
        assert wait_until(lambda: deadline.now() - read_at > 0.2, 5)
        client.read_resource(HELLO)
        assert _reads(rec) == 2


def test_no_hint_or_zero_ttl_is_never_cached(tmp_path: Path) -> None:
    for flags in (("--era", "legacy"), ("--era", "modern", "--read-hint", f"{HELLO}=0")):
        rec = Recording(tmp_path / f"rec-{flags[1]}-{len(flags)}.jsonl")
        with connect(definition(*flags, record=rec.path)) as client:
            client.read_resource(HELLO)
            client.read_resource(HELLO)
            assert _reads(rec) == 2, flags


def test_private_results_are_kept_in_their_context(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--read-hint", f"{HELLO}=600000:private", record=rec.path)
    with connect(defn) as client:
        first = client.read_resource(HELLO)
        assert client.read_resource(HELLO) is first  # stdio: one context per binding
        assert _reads(rec) == 1


def test_updated_and_list_changed_invalidate(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--read-hint", f"{HELLO}=600000", record=rec.path)
    with connect(defn) as client:
        client.subscribe(HELLO)
        client.read_resource(HELLO)
        # The notification precedes the tool's answer on the stream, and the
        # reader handles it before it completes the call.
        client.call_tool("mutate_catalog", {"touch": HELLO})
        client.read_resource(HELLO)
        assert _reads(rec) == 2
        client.read_resource(HELLO)
        assert _reads(rec) == 2
        client.call_tool("mutate_catalog", {"notify": "resources"})
        client.read_resource(HELLO)
        assert _reads(rec) == 3


def test_tools_are_never_cached(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--ttl-ms", "600000", record=rec.path)
    with connect(defn) as client:
        client.call_tool("echo", {"message": "x"})
        client.call_tool("echo", {"message": "x"})
        assert len(rec.tool_call_ids("echo")) == 2


def test_private_results_are_keyed_by_the_access_token(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "modern", "--read-hint", f"{HELLO}=600000:private")
    token = ["tokA"]
    defn = http_definition(server.url, tag="rescache", auth=lambda: token[0])
    with connect(defn, timeout=20) as client:

        def reads() -> int:
            return sum(
                1
                for e in server.records("rescache")
                if '"resources/read"' in json.dumps(e.get("body", e))
            )

        first = client.read_resource(HELLO)
        assert client.read_resource(HELLO) is first
        token[0] = "tokB"  # a different token: a different cache
        second = client.read_resource(HELLO)
        assert second is not first
        assert client.read_resource(HELLO) is second
        token[0] = "tokA"
        assert client.read_resource(HELLO) is first
        assert reads() == 2


def test_a_reconnect_clears_the_cache(tmp_path: Path) -> None:
    # A new session: nothing the old one said holds (BindingState.install).
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--era", "modern", "--read-hint", f"{HELLO}=600000", record=rec.path)
    with connect(defn) as client:
        first = client.read_resource(HELLO)
        assert client.read_resource(HELLO) is first
        lost = client.status().last_change
        with pytest.raises(mcpclient.Error):
            client.call_tool("hostile", {"action": "exit"})  # the server goes; a new one comes
        assert wait_until(
            lambda: client.status().state is State.READY and client.status().last_change > lost,
            15,
        )
        again = client.read_resource(HELLO)
        assert again is not first
        assert _reads(rec) == 2  # the first session's read, then the new session's
