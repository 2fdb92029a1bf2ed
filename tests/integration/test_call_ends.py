"""The ends of a call over HTTP: expiry, a cancel followed by close, Ctrl-C (issue 26).

On legacy Streamable HTTP a disconnect is not a cancel: the server learns of an
expired or cancelled call only from ``notifications/cancelled``. These tests
count, in the testing server's record, that it got one for every call that
ended so, however the transport's own cut and the caller's deadline raced and
however soon ``close()`` followed.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import CallOpts, CancelToken, DeadlineExceededError, RequestCancelledError
from tests.support import wait_until
from tests.support.http_servers import ScriptedServer, body_method, http_definition
from tests.support.servers import REPO_ROOT, Recording, definition

from .conftest import SpawnHttp

LEGACY = "2025-11-25"


@pytest.fixture(scope="module")
def legacy(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    """A legacy-only testing server (its sessions, its cancel by notification)."""
    return spawn_shared_http("--era", "legacy")


@pytest.fixture(scope="module")
def dual_http(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    """A dual-era testing server (the soak's modern and legacy HTTP bindings)."""
    return spawn_shared_http("--era", "dual")


def calls_and_cancels(server: ScriptedServer, tag: str | None = None) -> tuple[list[Any], set[Any]]:
    """The ids of the ``slow`` calls the server got, and the ids it was told were cancelled."""
    records = server.records(tag)
    calls = [
        e["body"]["id"]
        for e in records
        if body_method(e) == "tools/call" and e["body"]["params"]["name"] == "slow"
    ]
    cancels = {
        e["body"]["params"]["requestId"]
        for e in records
        if body_method(e) == "notifications/cancelled"
    }
    return calls, cancels


def test_every_expired_call_is_cancelled_on_the_wire(legacy: ScriptedServer) -> None:
    """Defect 1: the transport's cut at the deadline reports; the table expires and tells."""
    tag = "expired"
    expired = 12
    with mcpclient.connect(http_definition(legacy.url, tag=tag)) as client:
        assert client.status().protocol_version == LEGACY
        for _ in range(expired):
            with pytest.raises(DeadlineExceededError):
                client.call_tool("slow", {"seconds": 10}, CallOpts(timeout=0.25))
        assert client.call_tool("echo", {"message": "after"}).text == "after"

        def all_told() -> bool:
            calls, cancels = calls_and_cancels(legacy, tag)
            return len(calls) == expired and set(calls) <= cancels

        assert wait_until(all_told, 10), calls_and_cancels(legacy, tag)


@pytest.mark.parametrize("attempt", range(5))
def test_a_cancel_just_before_close_reaches_the_server(
    legacy: ScriptedServer, attempt: int
) -> None:
    """Defect 2: close() sends what it accepted before it closes (bounded grace)."""
    tag = f"close-{attempt}"
    client = mcpclient.connect(http_definition(legacy.url, tag=tag))
    try:
        token = CancelToken()
        future = client.submit_tool_call("slow", {"seconds": 10}, CallOpts(cancel=token))
        assert wait_until(lambda: calls_and_cancels(legacy, tag)[0], 10)
        token.cancel("the user gave up")
        assert isinstance(future.exception(timeout=5), RequestCancelledError)
    finally:
        client.close()  # at once: the cancel may still be on the send lane
    (call_id,) = calls_and_cancels(legacy, tag)[0]
    assert wait_until(lambda: call_id in calls_and_cancels(legacy, tag)[1], 5)


def test_the_session_is_deleted_after_the_drained_cancel(legacy: ScriptedServer) -> None:
    """The drain comes before the session's DELETE: the cancel reaches a live session."""
    tag = "delete-order"
    client = mcpclient.connect(http_definition(legacy.url, tag=tag))
    try:
        token = CancelToken()
        future = client.submit_tool_call("slow", {"seconds": 10}, CallOpts(cancel=token))
        assert wait_until(lambda: calls_and_cancels(legacy, tag)[0], 10)
        token.cancel()
        future.exception(timeout=5)
    finally:
        client.close()
    methods = ["DELETE" if e["method"] == "DELETE" else body_method(e) for e in legacy.records(tag)]
    assert "DELETE" in methods and "notifications/cancelled" in methods, methods
    assert methods.index("notifications/cancelled") < methods.index("DELETE"), methods


def test_ctrl_c_over_http_cancels_the_call_on_the_wire(
    legacy: ScriptedServer, tmp_path: Path
) -> None:
    """Defect 3: exit 130 and "cancelled on the wire", and the server was told."""
    tag = "ctrl-c"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpclient",
            "--header",
            f"X-Test-Case: {tag}",
            "call",
            legacy.url,
            "slow",
            "seconds=30",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "HOME": str(tmp_path)},
    )
    try:
        assert wait_until(lambda: calls_and_cancels(legacy, tag)[0], 20), legacy.records(tag)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "[cancelled]" in err
    (call_id,) = calls_and_cancels(legacy, tag)[0]
    # Told before the command exited: the record already holds it.
    assert call_id in calls_and_cancels(legacy, tag)[1], legacy.records(tag)


# ------------------------------------------------------------------ the soak


class _Soaked:
    """One transport under the soak: how to connect, and what its server saw."""

    def __init__(self, kind: str, server: ScriptedServer | None, tmp_path: Path) -> None:
        self.kind = kind
        self.server = server
        self.tmp_path = tmp_path
        self.clients = 0

    def connect(self) -> tuple[mcpclient.Client, Any]:
        """A new client and the key of its server's record."""
        self.clients += 1
        if self.server is not None:
            tag = f"soak-{self.kind}-{self.clients}"
            protocol = "legacy" if self.kind == "http-legacy" else "auto"
            return mcpclient.connect(
                http_definition(self.server.url, tag=tag, protocol=protocol)
            ), tag
        record = self.tmp_path / f"{self.kind}-{self.clients}.jsonl"
        flags = ("--era", "legacy") if self.kind == "stdio-legacy" else ()
        return mcpclient.connect(definition(*flags, record=record)), Recording(record)

    def seen(self, key: Any) -> tuple[list[Any], set[Any]]:
        """The slow calls the server got, and the ids it was told were cancelled."""
        if isinstance(key, Recording):
            return key.tool_call_ids("slow"), set(key.cancelled_ids())
        assert self.server is not None
        return calls_and_cancels(self.server, key)


@pytest.mark.parametrize("kind", ["stdio-modern", "stdio-legacy", "http-legacy", "http-modern"])
def test_a_soak_of_expiries_cancels_and_closes_tells_the_server_of_each(
    kind: str, dual_http: ScriptedServer, tmp_path: Path
) -> None:
    """Random expiries, cancels and closes: every call that reached the server was told
    it ended (legacy HTTP and stdio: notifications/cancelled), and none ran twice."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    soaked = _Soaked(kind, dual_http if kind.startswith("http") else None, tmp_path)
    client, key = soaked.connect()
    keys = [key]
    try:
        for _ in range(16):
            action = rng.choice(["expire", "expire", "cancel", "cancel", "close"])
            if action == "expire":
                with pytest.raises(DeadlineExceededError):
                    client.call_tool(
                        "slow", {"seconds": 10}, CallOpts(timeout=rng.uniform(0.02, 0.3))
                    )
                continue
            token = CancelToken()
            future = client.submit_tool_call("slow", {"seconds": 10}, CallOpts(cancel=token))
            time.sleep(rng.uniform(0.0, 0.2))
            token.cancel("soak")
            assert isinstance(future.exception(timeout=5), RequestCancelledError)
            if action == "close":
                client.close()  # at once, the cancel may be on its way
                client, key = soaked.connect()
                keys.append(key)
    finally:
        client.close()
    for key in keys:
        calls, _told = soaked.seen(key)
        assert len(calls) == len(set(calls)), f"a call ran twice (seed {seed}): {calls}"
        if kind != "http-modern":  # there, closing the request's stream is the cancel
            assert wait_until(lambda key=key: set(soaked.seen(key)[0]) <= soaked.seen(key)[1], 5), (
                f"seed {seed}: calls {soaked.seen(key)[0]}, told {soaked.seen(key)[1]}"
            )


# ------------------------------------------------------------------ idle timeout


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_idle_timeout_fails_a_silent_call_early_and_spares_a_busy_one(
    transport: str, legacy: ScriptedServer, tmp_path: Path
) -> None:
    """Issue 32: no progress for the idle timeout fails the call (told on the wire); a
    call that keeps reporting progress runs past it, to its end, within the deadline."""
    record = tmp_path / "idle.jsonl"
    if transport == "stdio":
        definition_ = definition(record=record)
    else:
        definition_ = http_definition(legacy.url, tag="idle")
    with mcpclient.connect(definition_) as client:
        busy = client.call_tool(
            "progress", {"steps": 8, "interval": 0.15}, CallOpts(timeout=30, idle_timeout=0.9)
        )
        assert not busy.is_error and "8" in busy.text  # 1.2 s of work, never 0.9 s silent
        started = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            client.call_tool("slow", {"seconds": 20}, CallOpts(timeout=30, idle_timeout=0.5))
        assert time.monotonic() - started < 15  # not the 30 s deadline
        assert "no progress for 0.5 s" in info.value.message
        if transport == "stdio":
            (call_id,) = Recording(record).tool_call_ids("slow")
            assert Recording(record).wait_cancelled(call_id)
        else:
            (call_id,) = calls_and_cancels(legacy, "idle")[0]
            assert wait_until(lambda: call_id in calls_and_cancels(legacy, "idle")[1], 5)


def test_the_cli_takes_an_idle_timeout(legacy: ScriptedServer, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpclient",
            "call",
            legacy.url,
            "slow",
            "seconds=20",
            "--idle-timeout",
            "0.5",
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert "no progress for 0.5 s" in proc.stderr, proc.stderr
    assert proc.returncode != 0
