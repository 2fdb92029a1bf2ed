"""A client or host inherited through ``os.fork()``: the child is told, the parent is untouched.

Each test forks for real. The child checks what the inherited object does
(every use raises ``ForkedError`` at once, naming the fork and what to do),
reports through a pipe as JSON and leaves with ``os._exit``; the parent then
checks its own binding still works and that nothing reached the server from
the child. A last test runs gunicorn with ``--preload`` over an app that
connects a host at import: the worker's request gets the fork error, the
master's host still answers.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import textwrap
import threading
import time
import traceback
import urllib.request
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import FailureClass, ForkedError, Host, ShutdownError, State, connect
from tests.support.http_servers import ScriptedServer, ServerProcess, free_port

from .conftest import SpawnHttp
from .engine_support import REPO_ROOT, children_of, dead, definition, server_pid, text_of

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

Report = dict[str, Any]


def in_fork(check: Callable[[], Report], wait: float = 10.0) -> Report:
    """Fork; the child runs ``check()`` and sends its report back; the parent returns it."""
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a multi-threaded process; that is the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        try:
            report = check()
        except BaseException:
            report = {"crashed": traceback.format_exc()}
        try:
            os.write(write_fd, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    data = b""
    deadline = time.monotonic() + wait
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the child hung; it reported {data!r}")
            ready, _, _ = select.select([read_fd], [], [], left)
            if ready:
                chunk = os.read(read_fd, 65536)
                if not chunk:
                    break
                data += chunk
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    report: Report = json.loads(data)
    assert "crashed" not in report, report["crashed"]
    return report


def refusal(call: Callable[[], object]) -> Report:
    """What ``call`` raised in the child, and how fast."""
    start = time.monotonic()
    try:
        call()
    except BaseException as exc:
        return {
            "type": type(exc).__name__,
            "shutdown": isinstance(exc, ShutdownError),
            "failure_class": str(getattr(exc, "failure_class", "")),
            "message": getattr(exc, "message", str(exc)),
            "seconds": time.monotonic() - start,
        }
    return {"type": None}


def assert_fork_error(report: Report) -> None:
    assert report["type"] == "ForkedError", report
    assert report["shutdown"]  # a ShutdownError too: code that catches that keeps working
    assert report["failure_class"] == "forked"
    assert "os.fork()" in report["message"]
    assert "Connect after the fork" in report["message"]
    assert report["seconds"] < 1.0  # at once, not at a deadline


def library_threads_in_child() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("mcpclient-")]


def client_in_child(client: mcpclient.Client) -> Report:
    status = client.status()
    report: Report = {
        "call": refusal(lambda: client.call_tool("echo", {"message": "child"}, timeout=5)),
        "read": refusal(lambda: client.read_resource("test://static/hello", timeout=5.0)),
        "reconnect": refusal(client.reconnect),
        "state": str(status.state),
        "failure": str(status.failure.failure_class) if status.failure else None,
    }
    client.close(timeout=1)  # touches nothing of the parent's
    report["threads"] = library_threads_in_child()
    return report


def assert_child_refused(report: Report) -> None:
    for key in ("call", "read", "reconnect"):
        assert_fork_error(report[key])
    assert report["state"] == "closed"
    assert report["failure"] == "forked"
    assert report["threads"] == []  # the child started no thread of the parent's binding


# ----------------------------------------------------------------------------- Client


def test_a_forked_stdio_client_refuses_in_the_child_and_the_parent_keeps_it() -> None:
    before = children_of(os.getpid())
    with connect(definition("--era", "modern")) as client:
        server = server_pid(before)
        assert_child_refused(in_fork(lambda: client_in_child(client)))
        # The child neither closed the pipes nor signalled the server.
        assert not dead(server, 0.2)
        assert client.status().state is State.READY
        assert text_of(client.call_tool("echo", {"message": "parent"})) == "parent"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_forked_http_client_refuses_in_the_child_and_sends_nothing(
    spawn_http: SpawnHttp, era: str
) -> None:
    server = spawn_http("--era", era)
    defn = mcpclient.Definition("web", mcpclient.StreamableHTTPTransport(server.url))
    with connect(defn) as client:
        assert client.call_tool("echo", {"message": "before"}).text == "before"
        sent = [r for r in server.records() if r["method"] != "GET"]
        assert_child_refused(in_fork(lambda: client_in_child(client)))
        # No POST, no DELETE of the legacy session: the child used no socket.
        assert [r for r in server.records() if r["method"] != "GET"] == sent
        assert client.call_tool("echo", {"message": "after"}).text == "after"
        assert client.status().state is State.READY


def test_a_client_connected_after_the_fork_works_in_the_child() -> None:
    def child() -> Report:
        with connect(definition("--era", "modern")) as own:
            return {"text": text_of(own.call_tool("echo", {"message": "own"}, timeout=10))}

    with connect(definition("--era", "modern")) as client:
        assert in_fork(child, wait=30) == {"text": "own"}
        assert text_of(client.call_tool("echo", {"message": "parent"})) == "parent"


# ----------------------------------------------------------------------------- Host


@pytest.fixture
def http_server(spawn_http: SpawnHttp) -> ScriptedServer:
    return spawn_http("--era", "legacy")


def test_a_forked_host_refuses_in_the_child_and_the_parent_keeps_it(
    http_server: ScriptedServer,
) -> None:
    servers = {
        "pipe": definition(name="pipe"),
        "web": mcpclient.Definition("web", mcpclient.StreamableHTTPTransport(http_server.url)),
    }

    def child(host: Host) -> Report:
        report: Report = {
            "pipe": refusal(lambda: host.call_tool("mcp__pipe__echo", {"message": "c"})),
            "web": refusal(lambda: host.call_tool("mcp__web__echo", {"message": "c"})),
            "unknown": refusal(lambda: host.call_tool("mcp__web__nothing", {})),
            "connect": refusal(host.connect),
            "failed": {name: str(e.failure_class) for name, e in host.failed.items()},
            "failed_types": sorted({type(e).__name__ for e in host.failed.values()}),
            "status": {name: str(s.state) for name, s in host.status().items()},
            "tools": len(host.catalog().tools),
        }
        host.close(timeout=1)
        report["threads"] = library_threads_in_child()
        return report

    with Host(servers) as host:
        assert host.failed == {}
        assert text_of(host.call_tool("mcp__pipe__echo", {"message": "p"})) == "p"
        sent = [r for r in http_server.records() if r["method"] != "GET"]
        report = in_fork(lambda: child(host))
        for key in ("pipe", "web", "unknown", "connect"):
            assert_fork_error(report[key])
        assert "host" in report["pipe"]["message"]
        assert report["failed"] == {"pipe": "forked", "web": "forked"}
        assert report["failed_types"] == ["ForkedError"]
        assert report["status"] == {"pipe": "failed", "web": "failed"}
        assert report["tools"] == 0
        assert report["threads"] == []
        # The parent: nothing sent from the child, both bindings serve.
        assert [r for r in http_server.records() if r["method"] != "GET"] == sent
        assert host.failed == {}
        assert text_of(host.call_tool("mcp__pipe__echo", {"message": "p2"})) == "p2"
        assert text_of(host.call_tool("mcp__web__echo", {"message": "w2"})) == "w2"


def test_a_host_made_before_the_fork_and_connected_after_it_works_in_the_child() -> None:
    host = Host({"pipe": definition(name="pipe")})  # created at import, say; not connected

    def child() -> Report:
        with host:
            return {"text": text_of(host.call_tool("mcp__pipe__echo", {"message": "c"}))}

    assert in_fork(child, wait=30) == {"text": "c"}
    with host:  # the parent may connect it too
        assert text_of(host.call_tool("mcp__pipe__echo", {"message": "p"})) == "p"


def test_the_forked_error_is_classified() -> None:
    err = mcpclient.errors.error_for(FailureClass.FORKED, "inherited", binding="b", op="call_tool")
    assert type(err) is ForkedError
    assert isinstance(err, ShutdownError)
    assert str(err) == "b: call_tool: inherited [forked]"


# ----------------------------------------------------------------------------- gunicorn

APP = '''
"""A WSGI app that connects a host at import (what --preload runs in the master)."""
import json
import os
import sys

import mcpclient

SERVERS = {
    "pipe": mcpclient.Definition(
        "pipe",
        mcpclient.StdioTransport(
            sys.executable,
            ["-m", "mcpclient.testing.server", "--era", "modern"],
            cwd=os.environ["FORKAPP_REPO"],
            shutdown_grace=0.2,
        ),
    ),
    "web": mcpclient.Definition(
        "web", mcpclient.StreamableHTTPTransport(os.environ["FORKAPP_URL"])
    ),
}
host = mcpclient.Host(SERVERS).connect()
MASTER = os.getpid()


def app(environ, start_response):
    outcome = {"pid": os.getpid(), "master": MASTER}
    for name in SERVERS:
        try:
            host.call_tool(f"mcp__{name}__echo", {"message": "worker"}, timeout=5)
            outcome[name] = {"type": None}
        except mcpclient.Error as exc:
            outcome[name] = {
                "type": type(exc).__name__,
                "failure_class": str(exc.failure_class),
                "message": exc.message,
            }
    outcome["failed"] = {name: str(e.failure_class) for name, e in host.failed.items()}
    body = json.dumps(outcome).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]
'''

CONF = '''
import json
import os
import sys


def on_exit(server):
    """In the master, after the workers stopped: does the master's host still answer?"""
    forkapp = sys.modules["forkapp"]
    host = forkapp.host
    out = {"pid": os.getpid(), "failed": sorted(host.failed)}
    pipe = host.clients["pipe"]._st.conn
    out["server_pid"] = pipe.transport.pid if pipe is not None else None
    for name in ("pipe", "web"):
        try:
            result = host.call_tool(f"mcp__{name}__echo", {"message": "master"}, timeout=5)
            out[name] = result.text
        except Exception as exc:
            out[name] = repr(exc)
    host.close(timeout=2)
    with open(os.environ["FORKAPP_RESULT"], "w") as f:
        json.dump(out, f)
'''


def test_gunicorn_preload_worker_gets_the_fork_error_and_the_master_keeps_its_host(
    tmp_path: Path, http_server: ScriptedServer
) -> None:
    pytest.importorskip("gunicorn")
    (tmp_path / "forkapp.py").write_text(textwrap.dedent(APP))
    (tmp_path / "forkconf.py").write_text(textwrap.dedent(CONF))
    result = tmp_path / "master.json"
    port = free_port()
    with ServerProcess(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--preload",
            "--workers",
            "1",
            "--bind",
            f"127.0.0.1:{port}",
            "--config",
            "python:forkconf",
            "--chdir",
            str(tmp_path),
            "forkapp:app",
        ],
        log_dir=tmp_path,
        port=port,
        url=f"http://127.0.0.1:{port}/",
        env={
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)]),
            "FORKAPP_REPO": str(REPO_ROOT),
            "FORKAPP_URL": http_server.url,
            "FORKAPP_RESULT": str(result),
        },
        startup=60.0,
    ) as gunicorn:  # closed with SIGTERM: the master stops its worker, then runs on_exit
        sent = [r for r in http_server.records() if r["method"] != "GET"]
        with urllib.request.urlopen(gunicorn.url, timeout=30) as response:
            worker = json.loads(response.read())
        assert [r for r in http_server.records() if r["method"] != "GET"] == sent
    assert worker["pid"] != worker["master"]
    for name in ("pipe", "web"):
        assert worker[name]["type"] == "ForkedError", worker
        assert worker[name]["failure_class"] == "forked"
        assert "Connect after the fork" in worker[name]["message"]
    assert worker["failed"] == {"pipe": "forked", "web": "forked"}
    master = json.loads(result.read_text())
    assert master["pid"] == worker["master"]
    assert master["failed"] == []
    assert master["pipe"] == "master", master
    assert master["web"] == "master", master
    assert master["server_pid"] is not None and dead(master["server_pid"], 5.0)
