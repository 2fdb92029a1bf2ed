"""A call's own HTTP headers come down with the request; the session adds its era's.

The session never calls up into the client while it sends: ``Mcp-Name`` and
``Mcp-Param-*`` are computed when the call is prepared and passed down, the
session merges them after ``MCP-Protocol-Version`` and ``Mcp-Method``.
"""

from __future__ import annotations

from typing import Any

from mcpclient._core.deadline import now
from mcpclient._internal.session import protocol
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.headers import EraHeaders, call_headers
from mcpclient._internal.session.rpc import RpcSession
from mcpclient._internal.transport.base import Outbound

MODERN = "2026-07-28"


class _Recorder:
    """A message transport that records what it is given and sends nothing."""

    def __init__(self) -> None:
        self.sent: list[Outbound] = []

    def send(self, frame: bytes, meta: Outbound) -> None:
        self.sent.append(meta)

    def abort(self, request_id: int) -> None:
        pass

    def drain(self, timeout: float) -> bool:
        return True

    def read_frame(self) -> Any:
        return None

    def write_frame(self, data: bytes) -> None:
        raise AssertionError("a message transport is never written frames")

    def try_write_frame(self, data: bytes) -> bool:
        raise AssertionError("a message transport is never written frames")

    def loss_reason(self) -> str:
        return "closed"

    def close(self, timeout: float | None = None) -> None:
        pass


def _sent_headers(era: EraHeaders | None, params: dict[str, Any]) -> list[tuple[str, str]]:
    transport = _Recorder()
    session = RpcSession(transport, binding="t", post=lambda fn: fn())
    assert not hasattr(session, "header_hook")  # nothing to call up into
    session.era_headers = era
    own = call_headers("tools/call", params, param_headers={("region",): "Region"})
    try:
        # Not started: the watcher holds the request's timer, no thread runs it.
        session.submit(
            "tools/call", params, CallContext(op="call_tool", deadline=now() + 60, headers=own)
        )
    finally:
        session.close()
    (meta,) = transport.sent
    return list(meta.headers.items())


def test_modern_session_sends_era_headers_then_the_calls_own() -> None:
    params = {"name": "hdr", "arguments": {"region": "eu"}}
    assert _sent_headers(EraHeaders(MODERN, modern=True), params) == [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "hdr"),
        ("Mcp-Param-Region", "eu"),
    ]


def test_the_version_header_follows_the_bodys_meta() -> None:
    # A request re-sent at another version after -32022 names it in both.
    params = {"name": "hdr", "arguments": {}, "_meta": {protocol.META_VERSION: "2099-01-01"}}
    assert _sent_headers(EraHeaders(MODERN, modern=True), params)[:2] == [
        ("MCP-Protocol-Version", "2099-01-01"),
        ("Mcp-Method", "tools/call"),
    ]


def test_legacy_and_unknown_eras_send_no_call_headers() -> None:
    params = {"name": "hdr", "arguments": {"region": "eu"}}
    legacy = EraHeaders("2025-11-25", modern=False)
    assert _sent_headers(legacy, params) == [("MCP-Protocol-Version", "2025-11-25")]
    assert _sent_headers(None, params) == []
