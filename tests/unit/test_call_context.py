"""One context per request, whole down to the table; every outbound message has a kind.

A request's :class:`CallContext` reaches its table entry unchanged; the
session sends a request with the context's own deadline, a stream
(``subscriptions/listen``, opened by ``open_stream``) as a stream with no
deadline at all, a notification or an answer with a send bound of its own.
The requests a connect sends build contexts of their own: a passed deadline
is ``startup_timeout``, and ``initialize`` is never cancelled on the wire.

No thread runs here: the sessions are never started, and their transport
records what it is given.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mcpclient._core.deadline import now
from mcpclient._internal.client.inbound.subscriptions import Subscriptions
from mcpclient._internal.session import protocol
from mcpclient._internal.session.context import CallContext, startup_context
from mcpclient._internal.session.rpc import RpcSession
from mcpclient._internal.transport.base import Outbound, SendKind
from mcpclient.calls import CancelToken
from mcpclient.catalog import ServerCapabilities, ServerIdentity
from mcpclient.definition import ClientCapabilities
from mcpclient.errors import DeadlineExceededError, FailureClass, RequestCancelledError


class _Recorder:
    """A message transport that records what it is given and sends nothing."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], Outbound]] = []
        self.aborted: list[int] = []

    def send(self, frame: bytes, meta: Outbound) -> None:
        self.sent.append((json.loads(frame), meta))

    def abort(self, request_id: int) -> None:
        self.aborted.append(request_id)

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


@pytest.fixture
def wire() -> Any:
    transport = _Recorder()
    session = RpcSession(transport, binding="ctx", post=lambda fn: fn())
    try:
        yield transport, session
    finally:
        session.close()


def test_a_submitted_request_carries_its_own_deadline_and_its_context_whole(wire: Any) -> None:
    transport, session = wire
    ctx = CallContext(op="call_tool", deadline=now() + 60, indeterminate_on_loss=True)
    entry = session.submit("tools/call", {"name": "x"}, ctx)
    assert entry.ctx is ctx, "the table's entry holds the caller's context, not a copy"
    assert entry.watch is not None, "nobody waits on it: the watcher holds its deadline"
    ((message, meta),) = transport.sent
    assert message["method"] == "tools/call" and message["id"] == entry.request_id
    assert meta.kind is SendKind.REQUEST
    assert meta.deadline == ctx.deadline
    assert meta.bound == ctx.deadline


def test_a_stream_is_sent_as_a_stream_with_no_deadline(wire: Any) -> None:
    transport, session = wire
    stream = session.open_stream("subscriptions/listen", {"notifications": {}}, op="listen")
    ((message, meta),) = transport.sent
    assert message["method"] == "subscriptions/listen"
    assert meta.kind is SendKind.STREAM
    assert meta.deadline is None, "a stream has no deadline, not an infinite one"
    assert meta.bound == math.inf  # what the HTTP layer takes for "no bound"
    assert stream.watch is None, "the watcher holds nothing for a stream"
    assert not stream.done()
    session.cancel(stream.request_id, "replaced")
    error = stream.exception(timeout=0)
    assert isinstance(error, RequestCancelledError) and error.op == "listen"
    (_, (cancel, cancel_meta)) = transport.sent
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == stream.request_id
    assert cancel_meta.kind is SendKind.NOTIFICATION


def test_a_modern_stream_is_cancelled_by_closing_it(wire: Any) -> None:
    transport, session = wire
    session.cancel_by_abort = True
    stream = session.open_stream("subscriptions/listen", None, op="listen")
    session.cancel(stream.request_id, "replaced")
    assert transport.aborted == [stream.request_id]
    assert len(transport.sent) == 1, "no notification: the stream's POST is closed"


def test_notifications_and_answers_get_a_send_bound_of_their_own(wire: Any) -> None:
    transport, session = wire
    before = now()
    session.notify("notifications/initialized")
    session.respond(7, {})
    (_, note), (_, answer) = transport.sent
    assert (note.kind, answer.kind) == (SendKind.NOTIFICATION, SendKind.RESPONSE)
    for meta in (note, answer):
        assert meta.request_id is None
        assert meta.deadline is not None and before < meta.deadline <= now() + 30


def test_the_session_attaches_the_progress_token_and_the_table_routes_it(wire: Any) -> None:
    transport, session = wire
    seen: list[dict[str, Any]] = []
    ctx = CallContext(op="call_tool", deadline=now() + 60, progress=seen.append)
    entry = session.submit("tools/call", {"name": "x"}, ctx)
    ((message, _),) = transport.sent
    token = message["params"]["_meta"]["progressToken"]
    assert token == entry.token
    assert session._table.progress_for(token) is ctx.progress


def test_a_cancelled_context_sends_nothing(wire: Any) -> None:
    transport, session = wire
    token = CancelToken()
    token.cancel("no")
    entry = session.submit(
        "tools/call", None, CallContext(op="call_tool", deadline=now() + 60, cancel=token)
    )
    assert isinstance(entry.exception(timeout=0), RequestCancelledError)
    assert transport.sent == []


# --------------------------------------------------------------- internal requests


class _Session:
    """What initialize and the probe need of a session; records each call's context."""

    sends_messages = False

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.calls: list[tuple[str, CallContext]] = []

    def call(self, method: str, params: Any, ctx: CallContext) -> Any:
        self.calls.append((method, ctx))
        return self.answer

    def notify(self, method: str, params: Any = None) -> None:
        pass


def test_initialize_sends_a_startup_context_never_cancelled_on_the_wire() -> None:
    session = _Session({"protocolVersion": protocol.LATEST_LEGACY, "capabilities": {}})
    token = CancelToken()
    deadline = now() + 5
    protocol.initialize(
        session,  # type: ignore[arg-type]
        client_caps=ClientCapabilities(),
        deadline=deadline,
        cancel=token,
        binding="ctx",
    )
    ((method, ctx),) = session.calls
    assert method == "initialize"
    assert ctx == CallContext(
        op="initialize",
        deadline=deadline,
        cancel=token,
        deadline_class=FailureClass.STARTUP_TIMEOUT,
        cancel_on_wire=False,
    )


def test_the_modern_probe_sends_a_startup_context_never_cancelled_on_the_wire() -> None:
    session = _Session({"supportedVersions": [protocol.MODERN]})
    deadline = now() + 5
    protocol.probe_modern(
        session,  # type: ignore[arg-type]
        client_caps=ClientCapabilities(),
        deadline=deadline,
        cancel=None,
        binding="ctx",
        log_level=None,
        pinned=False,
    )
    ((method, ctx),) = session.calls
    assert method == "server/discover"
    assert (ctx.op, ctx.deadline) == ("server/discover", deadline)
    assert ctx.deadline_class is FailureClass.STARTUP_TIMEOUT
    assert not ctx.cancel_on_wire


def test_a_startup_contexts_deadline_fails_as_startup_timeout(wire: Any) -> None:
    transport, session = wire
    entry = session.submit("tools/list", None, startup_context("tools/list", now() - 1))
    error = entry.exception(timeout=0)
    assert isinstance(error, DeadlineExceededError)
    assert error.failure_class is FailureClass.STARTUP_TIMEOUT
    assert transport.sent == [], "a request already late is never sent"


class _Conn:
    """A connection as the subscriptions see it: its protocol and its session."""

    def __init__(self, session: Any, *, modern: bool) -> None:
        self.session = session
        self.binding = "ctx"
        self.protocol = protocol.Protocol(
            era="modern" if modern else "legacy",
            version=protocol.MODERN if modern else protocol.LATEST_LEGACY,
            server=ServerIdentity(),
            capabilities=ServerCapabilities(tools=True, resources=True),
            instructions="",
            client_caps={},
        )
        self.requests: list[tuple[str, CallContext]] = []

    def request(self, method: str, params: Any, ctx: CallContext) -> Any:
        self.requests.append((method, ctx))
        return {}


def test_the_listen_opens_a_stream_with_no_deadline(wire: Any) -> None:
    transport, session = wire
    subscriptions = Subscriptions("ctx")
    subscriptions.open(_Conn(session, modern=True))  # type: ignore[arg-type]
    ((message, meta),) = transport.sent
    assert message["method"] == "subscriptions/listen"
    assert (meta.kind, meta.deadline) == (SendKind.STREAM, None)
    subscriptions.close()


def test_a_legacy_subscribe_builds_its_own_context() -> None:
    conn = _Conn(None, modern=False)
    subscriptions = Subscriptions("ctx")
    deadline = now() + 5
    subscriptions.change(conn, "file:///a", add=True, deadline=deadline)  # type: ignore[arg-type]
    subscriptions.change(conn, "file:///a", add=False, deadline=deadline)  # type: ignore[arg-type]
    assert conn.requests == [
        ("resources/subscribe", CallContext(op="subscribe", deadline=deadline)),
        ("resources/unsubscribe", CallContext(op="unsubscribe", deadline=deadline)),
    ]
