"""The reader: the sole receiver of one connection.

Threads:
    ``mcpclient-reader-<binding>`` (started by the session) runs
    :meth:`Reader.run`. It decodes each frame once, completes pending
    requests with their answers (an HTTP answer it cannot use fails its
    request at once, see :meth:`Reader._on_answer`), answers ``ping`` and unknown server
    methods, and hands everything else to callbacks that only queue work:
    the reader never runs user code and never blocks on anything but the
    transport.

Locks:
    ``_lock`` guards the map of the server's requests still unanswered
    (each with the token that cancels its handler). The request table's
    lock is taken briefly per answer; no lock is held while a request is
    completed or a callback runs.

Shutdown:
    The loop ends at EOF (closing the transport causes it) or on a read
    error, and then declares the connection lost (a no-op after close).
    Whatever it raises unexpectedly is logged and ends it the same way, so
    no pending call waits for its deadline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from mcpclient._core import jsonio
from mcpclient._internal.session.failures import RemoteError, fail_request
from mcpclient._internal.session.request_table import RequestTable
from mcpclient._internal.transport.base import (
    Answer,
    FrameTransport,
    MessageTransport,
    RequestFailure,
)
from mcpclient._internal.wire.interactions import cancelled_request_id, progress_token
from mcpclient.calls import CancelToken
from mcpclient.errors import ConnectionLostError, Error, ProtocolError

__all__ = ["METHOD_NOT_FOUND", "NotificationHandler", "Reader", "RequestHandler"]

_log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601

NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestHandler = Callable[[Any, str, dict[str, Any], CancelToken], None]
Respond = Callable[..., None]  # (request_id, result=None, error=None)


class Reader:
    """Reads and routes every inbound message of one connection.

    Thread safety: :meth:`run` on the reader thread; :meth:`answered` and
    :meth:`cancel_inbound` from any thread.
    """

    def __init__(
        self,
        transport: FrameTransport,
        table: RequestTable,
        *,
        binding: str,
        respond: Respond,
        lose: Callable[[Error], None],
        post: Callable[[Callable[[], None]], Any],
        on_notification: NotificationHandler | None,
        on_request: RequestHandler | None,
    ) -> None:
        self._transport = transport
        self._table = table
        self._binding = binding
        self._respond = respond
        self._lose = lose
        self._post = post  # runs a callable on the binding's event lane
        self._on_notification = on_notification
        self._on_request = on_request
        self._lock = threading.Lock()
        self._inbound: dict[Any, CancelToken] = {}

    # -- the server's requests -----------------------------------------------------

    def answered(self, request_id: Any) -> None:
        """A server request was answered: its handler's token is dropped."""
        with self._lock:
            self._inbound.pop(request_id, None)

    def cancel_inbound(self) -> None:
        """The connection ended: cancel every handler still working on a server request."""
        with self._lock:
            inbound = list(self._inbound.values())
            self._inbound.clear()
        for token in inbound:
            token.cancel("the connection ended")

    def forget(self) -> None:
        """After fork, in the child: a fresh lock, nothing pending."""
        self._lock = threading.Lock()
        self._inbound = {}

    # -- the loop --------------------------------------------------------------------

    def run(self) -> None:
        """Read until EOF or a failure, then declare the connection lost."""
        read_frame, decode = self._transport.read_frame, jsonio.decode  # once, not per frame
        try:
            while True:
                try:
                    frame = read_frame()
                except Error as exc:
                    self._lose(exc)
                    return
                if isinstance(frame, RequestFailure):
                    fail_request(self._table, frame, self._lose)
                    continue
                if isinstance(frame, Answer):
                    self._on_answer(frame)
                    continue
                if frame is None:
                    reason = self._transport.loss_reason()
                    self._lose(
                        ConnectionLostError(
                            f"the server closed the connection ({reason})", binding=self._binding
                        )
                    )
                    return
                try:
                    message = decode(frame)
                except jsonio.FrameError as exc:
                    # Line framing is intact, so one bad line does not poison
                    # the stream: drop it, say so, keep reading.
                    _log.warning("binding %s: dropped a malformed frame: %s", self._binding, exc)
                    self._table.noise.record(frame)
                    continue
                try:
                    if isinstance(message, list):
                        for item in message:  # a 2025-03-26 batch
                            self._dispatch(item)
                    else:
                        self._dispatch(message)
                except Exception:
                    _log.exception("binding %s: failed to handle a message", self._binding)
        except BaseException as exc:  # never die silently
            _log.exception("reader of binding %s crashed", self._binding)
            self._lose(ConnectionLostError(f"the reader failed: {exc!r}", binding=self._binding))

    def _on_answer(self, answer: Answer) -> None:
        """A message of one request's own HTTP response: used, or that request fails now.

        Unlike a stray line on a pipe, it can be dropped only at the cost of
        its request waiting out its deadline: a message that is not JSON, not
        a JSON-RPC message, or a response under another id fails the request
        with a protocol error naming the problem; so does a JSON body that
        answers nothing (it is the whole answer).
        """
        request_id = answer.request_id
        # An HTTP error's body that cannot be used: the failure queued behind
        # it says what the status means (remote_http).
        refuse = self._refuse if answer.status < 400 else _ignore
        try:
            message = jsonio.decode(answer.data)
        except jsonio.FrameError as exc:
            refuse(answer, str(exc))
            return
        problem = _problem(message, request_id)
        if problem is not None:
            refuse(answer, problem)
            return
        try:
            if isinstance(message, list):
                for item in message:  # a 2025-03-26 batch
                    self._dispatch(item, answer.status)
            else:
                self._dispatch(message, answer.status)
        except Exception:
            _log.exception("binding %s: failed to handle a message", self._binding)
        if answer.final and request_id in self._table:
            refuse(answer, "it holds no response to the request")

    def _refuse(self, answer: Answer, problem: str) -> None:
        """Fail the request ``answer`` belongs to: the server's answer cannot be used."""
        entry = self._table.take(answer.request_id)
        if entry is None:
            return  # over already (answered, cancelled, expired)
        where = "a JSON body" if answer.final else "an SSE event"
        _log.warning(
            "binding %s: the answer to %s was unusable: %s", self._binding, entry.method, problem
        )
        entry.complete(
            exc=ProtocolError(
                f"the server answered {entry.method} with {where} that cannot be used: {problem}",
                binding=self._binding,
                op=entry.ctx.op,
            )
        )
        if not answer.final:
            # Its stream is still open and the request may still be running:
            # tell the server, and stop reading what can no longer be used.
            if entry.ctx.cancel_on_wire:
                self._table.send_cancel(answer.request_id, "the server's answer was unusable")
            if isinstance(self._transport, MessageTransport):
                self._transport.abort(answer.request_id)

    def _dispatch(self, message: Any, status: int | None = None) -> None:
        if not isinstance(message, dict):
            _log.warning("binding %s: dropped a non-object message", self._binding)
            return
        method = message.get("method")
        if method is None:
            self._on_response(message, status)
        elif not isinstance(method, str):
            _log.warning("binding %s: dropped a message with a non-string method", self._binding)
        elif "id" in message:
            self._on_server_request(message["id"], method, message.get("params"))
        else:
            self._on_server_notification(method, message.get("params"))

    def _on_response(self, message: dict[str, Any], status: int | None = None) -> None:
        request_id = message.get("id")
        if type(request_id) is not int:  # decoded JSON: exact types (a bool is not an int here)
            return  # not one of ours: ids are ints we minted
        entry = self._table.take(request_id)
        if entry is None:
            return  # late (cancelled, expired) or unknown: dropped silently
        if "result" in message and "error" not in message:
            entry.complete(message["result"])
            return
        if "error" in message:
            error = message["error"]
            if isinstance(error, dict):
                code = error.get("code")
                text = error.get("message")
                exc = RemoteError(
                    code if isinstance(code, int) and not isinstance(code, bool) else None,
                    text if isinstance(text, str) else "",
                    error.get("data"),
                    http_status=status,
                )
            else:
                exc = RemoteError(None, "malformed error object")
        else:
            exc = RemoteError(None, "response has neither result nor error")
        entry.complete(exc=exc)

    def _on_server_request(self, request_id: Any, method: str, params: Any) -> None:
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        if method == "ping":
            self._respond(request_id, {})
            return
        if self._on_request is None:
            self._respond(
                request_id,
                error={"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"[:200]},
            )
            return
        token = CancelToken()
        with self._lock:
            self._inbound[request_id] = token
        self._on_request(request_id, method, params if isinstance(params, dict) else {}, token)

    def _on_server_notification(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            params = {}
        if method == "notifications/progress":
            token = progress_token(params)
            callback = self._table.progress_for(token) if isinstance(token, str) else None
            if callback is not None:
                self._post(lambda: callback(params))
            return
        if method == "notifications/cancelled":
            with self._lock:
                inbound = self._inbound.pop(cancelled_request_id(params), None)
            if inbound is not None:
                inbound.cancel("cancelled by the server")
            return
        if self._on_notification is not None:
            self._on_notification(method, params)


def _ignore(answer: Answer, problem: str) -> None:
    """Leave an unusable HTTP error body to the failure queued behind it."""


def _problem(message: Any, request_id: int) -> str | None:
    """What makes a decoded message of request ``request_id``'s response unusable, if anything."""
    if isinstance(message, list):
        return None  # a batch: each item is handled on its own
    if not isinstance(message, dict):
        return f"it is a JSON {type(message).__name__}, not a JSON-RPC message"
    if "method" in message:
        method = message["method"]
        return None if isinstance(method, str) else "its method is not a string"
    answered = message.get("id")
    if type(answered) is int and answered == request_id:
        return None
    error = message.get("error")
    if answered is None and isinstance(error, dict):
        # The server's error for a request it could not even read (-32700, -32600).
        text = error.get("message")
        code = error.get("code")
        return f"an error for no request id ({code!r}: {str(text)[:200]})"
    shown = repr(answered)[:64]
    return f"it answers id {shown}, not this request's id {request_id}"
