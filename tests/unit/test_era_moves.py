"""Which refusals say an HTTP server's era changed under a live binding (issue 27, item 6).

A server at one URL may be redeployed into the other era; the connection
reads that from a refusal and loses itself, so the binding renegotiates
(tests/integration/test_http_resilience.py drives it end to end).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.session.rpc import RemoteError
from mcpclient._internal.transport.stdio import StdioProcess
from mcpclient.catalog import ServerCapabilities, ServerIdentity


def _protocol(era: str, version: str) -> Protocol:
    return Protocol(
        era=era,
        version=version,
        server=ServerIdentity(name="s"),
        capabilities=ServerCapabilities(),
        instructions="",
        client_caps={},
    )


LEGACY = _protocol("legacy", "2025-11-25")
MODERN = _protocol("modern", "2026-07-28")


class _Http:
    """Stands for an HTTP connection (anything but a stdio process)."""


def _conn(transport: Any) -> Connection:
    return Connection(transport, session=None, binding="b", kind="streamablehttp")  # type: ignore[arg-type]


CASES = [
    # (protocol, error, moved)
    (LEGACY, RemoteError(-32602, "envelope missing", http_status=400), True),
    (LEGACY, RemoteError(-32602, "bad arguments", http_status=200), False),
    (LEGACY, RemoteError(-32602, "bad arguments"), False),
    (LEGACY, RemoteError(-32022, "unsupported", {"supported": ["2026-07-28"]}), True),
    (LEGACY, RemoteError(-32020, "header mismatch", http_status=400), True),
    (LEGACY, RemoteError(-32601, "no such method", http_status=404), False),
    (MODERN, RemoteError(-32022, "locked", {"supported": ["2025-11-25"]}), True),
    (MODERN, RemoteError(-32022, "older", {"supported": ["2026-07-28"]}), False),
    (MODERN, RemoteError(-32022, "nothing in common", {"supported": ["1999-01-01"]}), False),
    (MODERN, RemoteError(-32602, "unknown tool", http_status=400), False),
]


@pytest.mark.parametrize(("protocol", "error", "moved"), CASES)
def test_which_refusals_mean_the_era_moved(
    protocol: Protocol, error: RemoteError, moved: bool
) -> None:
    assert _conn(_Http())._era_moved(error, protocol) is moved


def test_a_stdio_server_keeps_its_era() -> None:
    stdio = StdioProcess.__new__(StdioProcess)
    error = RemoteError(-32602, "envelope missing", http_status=400)
    assert _conn(stdio)._era_moved(error, LEGACY) is False
