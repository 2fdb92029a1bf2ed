"""An HTTP I/O worker that crashes on an unexpected exception fails the request it held.

A crash is a bug in the client, not an HTTP failure, so no peer can produce
it: the exchange of one marked request is made to raise (a mock), against
the real testing server. The request fails at once (``indeterminate`` for a
``tools/call``: it may have reached the server), not at its deadline, and
the binding keeps working: the crash was one exchange's, not the
connection's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

import mcpclient
from mcpclient import CallOpts, FailureClass, IndeterminateError, State
from mcpclient._internal.transport.streamable_http import StreamableHTTPConnection
from tests.support import wait_until
from tests.support.http_servers import ScriptedServer, http_definition

from .conftest import SpawnHttp

ERAS = [("modern", "auto"), ("legacy", "legacy")]


@pytest.fixture
def server(spawn_http: SpawnHttp) -> ScriptedServer:
    return spawn_http("--era", "dual")


@pytest.fixture
def crash_on_marker(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the exchange of any request carrying ``"boom-marker"`` raise a RuntimeError."""
    crashed: list[str] = []
    original: Callable[..., Any] = StreamableHTTPConnection._exchange

    def exchange(self: StreamableHTTPConnection, session: Any, frame: bytes, meta: Any) -> None:
        if b"boom-marker" in frame:
            crashed.append(meta.method)
            raise RuntimeError("a bug in the exchange")
        original(self, session, frame, meta)

    monkeypatch.setattr(StreamableHTTPConnection, "_exchange", exchange)
    return crashed


@pytest.mark.parametrize(("era", "protocol"), ERAS)
def test_a_crashed_worker_fails_its_request_at_once(
    server: ScriptedServer,
    crash_on_marker: list[str],
    era: str,
    protocol: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    definition = http_definition(
        server.url, tag=f"crash-{era}", protocol=protocol, name=f"crash-{era}"
    )
    caplog.set_level(logging.ERROR)
    with mcpclient.connect(definition) as client:
        assert client.call_tool("echo", {"message": "before"}).text == "before"
        start = time.monotonic()
        with pytest.raises(IndeterminateError) as info:
            client.call_tool("echo", {"message": "boom-marker"}, CallOpts(timeout=20))
        elapsed = time.monotonic() - start
        assert elapsed < 5, f"the call waited {elapsed:.1f} s, for its deadline"
        assert crash_on_marker == ["tools/call"]
        assert info.value.failure_class is FailureClass.INDETERMINATE
        assert info.value.op == "call_tool"
        assert "a bug in the exchange" in str(info.value)
        # The crash is logged (by the worker, after it failed the request),
        # and the binding was not taken down by it.
        assert wait_until(lambda: "a bug in the exchange" in caplog.text)
        assert client.status().state is State.READY
        assert client.call_tool("echo", {"message": "after"}).text == "after"


def test_a_crashed_worker_fails_a_request_that_is_not_a_tool_call_as_lost(
    server: ScriptedServer, crash_on_marker: list[str]
) -> None:
    definition = http_definition(server.url, tag="crash-read", protocol="legacy", name="crash-r")
    with mcpclient.connect(definition) as client:
        start = time.monotonic()
        with pytest.raises(mcpclient.ConnectionLostError) as info:
            client.read_resource("file:///boom-marker", CallOpts(timeout=20))
        assert time.monotonic() - start < 5
        assert info.value.failure_class is FailureClass.TRANSPORT_CLOSED
        assert crash_on_marker == ["resources/read"]
        assert wait_until(lambda: client.status().state is State.READY)
        assert client.call_tool("echo", {"message": "after"}).text == "after"
