"""A stdio binding against the testing server: oversized lines and the server's stderr.

* A response line over ``Limits.max_frame_bytes`` whose id can be read fails
  only its call (``limit_exceeded``); the binding stays connected to the same
  process. Only a line naming no request takes the connection down.
* Every stderr line of the server is a bounded INFO record on
  ``mcpclient.server.<binding>``.
"""

from __future__ import annotations

import logging
import os
import sys
import textwrap

import pytest

import mcpclient
from mcpclient import (
    CallOpts,
    ConnectionLost,
    FailureClass,
    Handlers,
    IndeterminateError,
    LimitExceededError,
    Limits,
    State,
    connect,
)
from mcpclient._core.limits import TRUNCATION_MARKER
from tests.support import Events

from .engine_support import (
    GRACE,
    REPO_ROOT,
    children_of,
    definition,
    proc_state,
    text_of,
    wait_until,
)

KiB = 1024
MiB = 1 << 20
LIMIT = 64 * KiB


def _live_children() -> set[int]:
    return {pid for pid in children_of(os.getpid()) if proc_state(pid) not in (None, "Z", "X")}


def _echo(client: mcpclient.Client, message: str = "still here") -> None:
    result = client.call_tool("echo", {"message": message}, CallOpts(timeout=5))
    assert text_of(result) == message


@pytest.mark.parametrize("id_at", ["head", "tail"])
def test_an_oversized_response_fails_only_its_call(id_at: str) -> None:
    events = Events()
    defn = definition(
        "--era", "modern", limits=Limits(max_frame_bytes=LIMIT), allow_parallel_calls=True
    )
    before = _live_children()  # other tests' servers may still be running
    with connect(defn, Handlers(event=events)) as client:
        servers = _live_children() - before
        assert len(servers) == 1
        slow = client.submit_tool_call("slow", {"seconds": 0.5}, CallOpts(timeout=10))
        for size in (1 * MiB, LIMIT + 1):  # dropped in pieces, and read whole
            with pytest.raises(LimitExceededError) as info:
                client.call_tool(
                    "hostile",
                    {"action": "oversized_line", "bytes": size, "id_at": id_at},
                    CallOpts(timeout=10),
                )
            error = info.value
            assert error.failure_class is FailureClass.LIMIT_EXCEEDED
            assert error.op == "call_tool"
            assert error.binding == "engine"
            assert f"Limits.max_frame_bytes ({LIMIT} bytes)" in error.message
            assert "raise Limits(max_frame_bytes=...)" in error.message
            _echo(client)
        # The call in flight beside it was not touched either.
        assert text_of(slow.result(timeout=10)) == "slept 0.5 s"
        assert client.status().state is State.READY
        assert client.status().failure is None
        assert [e for e in events if isinstance(e, ConnectionLost)] == []
        assert _live_children() - before == servers  # the same process, never respawned


def test_an_oversized_line_naming_no_request_still_fails_the_connection() -> None:
    events = Events()
    defn = definition(
        "--era",
        "modern",
        limits=Limits(max_frame_bytes=LIMIT),
        reconnect=mcpclient.ReconnectPolicy(disabled=True),
    )
    with connect(defn, Handlers(event=events)) as client:
        with pytest.raises(IndeterminateError) as info:
            client.call_tool(
                "hostile",
                {"action": "oversized_line", "bytes": 1 * MiB, "id_at": "none"},
                CallOpts(timeout=10),
            )
        assert "max_frame_bytes" in info.value.message
        assert wait_until(lambda: client.status().state is State.DEGRADED)

        def lost() -> list[FailureClass]:
            return [e.failure_class for e in events if isinstance(e, ConnectionLost)]

        # Events are delivered on the event lane, after the state changed.
        assert wait_until(lambda: bool(lost())), events
        assert lost() == [FailureClass.LIMIT_EXCEEDED]


# Writes to stderr before it serves: a long line, bytes that are not UTF-8,
# a line in two writes; then it is the testing server.
NOISY_SERVER = textwrap.dedent(
    """
    import sys
    err = sys.stderr.buffer
    err.write(b"booting\\n")
    err.write(b"caf\\xe9 \\xff\\xfe\\n")
    err.write(b"W" * (1 << 20) + b"\\n")
    err.write(b"half ")
    err.flush()
    err.write(b"and half\\n")
    err.flush()
    from mcpclient.testing.server import main
    main(sys.argv[1:])
    """
)


def test_the_servers_stderr_goes_to_logging(caplog: pytest.LogCaptureFixture) -> None:
    logger = "mcpclient.server.noisy"
    caplog.set_level(logging.INFO, logger=logger)
    transport = mcpclient.StdioTransport(
        sys.executable,
        ["-c", NOISY_SERVER, "--era", "modern", "--server-version", f"noisy-{os.getpid()}"],
        cwd=str(REPO_ROOT),
        shutdown_grace=GRACE,
    )
    defn = mcpclient.Definition(
        name="noisy",
        transport=transport,
        limits=Limits(max_log_message_bytes=512),
        timeouts=mcpclient.Timeouts(startup=15, request=10),
    )

    def texts() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == logger]

    with connect(defn) as client:
        # 4 KiB of 80-column lines written during a call.
        client.call_tool("hostile", {"action": "stderr_flood", "bytes": 4000}, CallOpts(timeout=5))
        assert wait_until(lambda: len(texts()) >= 4 + 50)
        _echo(client)
    records = [r for r in caplog.records if r.name == logger]
    assert {r.levelno for r in records} == {logging.INFO}
    found = texts()
    assert found[:2] == ["booting", "caf\ufffd \ufffd\ufffd"]
    assert found[2].startswith("WWW")
    assert found[2].endswith(TRUNCATION_MARKER)
    assert len(found[2].encode()) <= 512
    assert found[3] == "half and half"
    assert found[4:] == ["x" * 79] * 50
