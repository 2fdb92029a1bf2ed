"""Reading a response body within a deadline and a bound.

The reader owns the response: :func:`read_body` reads a whole (JSON) body up
to ``max_bytes``, :func:`response_chunks` streams one. At the deadline the
watcher shuts a stalled or trickling body down (``HTTPResponse.shutdown()``,
urllib3 >= 2.3) and closes the response, which unblocks the reading thread.
A body that ended cleanly gives its connection back to the pool.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Generator

import requests

from mcpclient._core.deadline import now
from mcpclient._internal.transport.http_exchange import (
    Exchange,
    Schedule,
    TimerLike,
    close_quietly,
    exchange_of,
    thread_state,
)
from mcpclient._internal.transport.http_failures import cut_error, read_failure
from mcpclient.errors import Error, FailureClass, LimitExceededError, error_for

__all__ = ["read_body", "response_chunks"]

_CHUNK = 64 * 1024
# A whole body is read in larger steps: a 10 MiB result in ten reads, not 160
# (each read is a trip through urllib3 and http.client); a stream keeps small
# ones, to hand each event on as it arrives.
_WHOLE_CHUNK = 1024 * 1024


class _Body:
    """Reads one response body within a deadline; the reader owns the response."""

    __slots__ = ("_deadline", "_exchange", "_op", "_response", "_timer")

    def __init__(
        self,
        response: requests.Response,
        *,
        deadline: float,
        schedule: Schedule | None,
        op: str,
    ) -> None:
        if math.isnan(deadline):
            raise ValueError("deadline must be a number")
        self._response = response
        self._exchange = exchange_of(response)
        self._deadline = deadline
        self._op = op
        self._timer: TimerLike | None = None
        if deadline < math.inf and self._exchange.read_deadline is None:
            schedule = schedule or self._exchange.schedule
            if schedule is None:
                raise ValueError("a finite deadline needs a schedule (watcher.schedule)")
            exchange = self._exchange
            self._timer = schedule(deadline, lambda: exchange.cut("deadline"))

    def read(self, amount: int) -> bytes:
        """Up to ``amount`` bytes; ``b""`` once the body ended cleanly."""
        exchange = self._exchange
        if now() >= self._deadline:
            exchange.cut("deadline")
        if not exchange.start_read():
            raise cut_error(exchange, self._op, before_headers=False)
        thread_state.quiet = True
        try:
            data = self._response.raw.read1(amount, decode_content=True)
        except Exception as exc:
            failure: Error | None = read_failure(exc, exchange, self._deadline, self._op)
        else:
            failure = None
        finally:
            thread_state.quiet = False
            if exchange.end_read():
                close_quietly(self._response)
        if failure is not None:
            raise failure
        if exchange.cut_reason is not None:
            raise cut_error(exchange, self._op, before_headers=False)
        if data:
            return bytes(data)
        if not exchange.finish():
            raise cut_error(exchange, self._op, before_headers=False)
        # Clean end: the connection may be reused.
        with contextlib.suppress(Exception):
            self._response.raw.release_conn()
        close_quietly(self._response)
        return b""

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._exchange.finished:
            close_quietly(self._response)


def _content_length(response: requests.Response) -> int | None:
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        return None  # the decoded size is what counts; it is bounded while read
    value = response.headers.get("Content-Length")
    if value is None:
        return None
    sizes = {part.strip() for part in value.split(",")}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    if not (size.isascii() and size.isdigit()) or len(size) > 20:
        return None
    return int(size)


def read_body(
    response: requests.Response,
    *,
    max_bytes: int,
    deadline: float,
    schedule: Schedule | None = None,
    op: str = "",
) -> bytearray:
    """Read a whole (JSON) body, bounded by ``max_bytes`` while reading.

    The body is returned in the buffer it was read into (a 10 MiB result is
    not copied once more to make it ``bytes``).

    A ``Content-Length`` over the bound is refused before reading; a body that
    grows past it is refused as soon as it does (at most ``max_bytes + 1``
    bytes are read). The response is closed (or its connection returned to
    the pool) in every case.

    Args:
        schedule: only for a response that did not come from
            ``http.request`` (those carry their factory's).

    Raises:
        LimitExceededError: (``limit_exceeded``) the body is too large.
        DeadlineExceededError: the body did not end by ``deadline``.
        HTTPSendError: the connection broke, or the response was aborted.
        ProtocolError: undecodable ``Content-Encoding``.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        close_quietly(response)
        raise ValueError("max_bytes must be an int >= 0")
    exchange = exchange_of(response)
    length = _content_length(response)
    if length is not None and length > max_bytes:
        close_quietly(response)
        raise _too_big(exchange, max_bytes, op, declared=length)
    body = _Body(response, deadline=deadline, schedule=schedule, op=op)
    buffer = bytearray()
    try:
        while True:
            chunk = body.read(min(_WHOLE_CHUNK, max_bytes + 1 - len(buffer)))
            if not chunk:
                return buffer
            buffer += chunk
            if len(buffer) > max_bytes:
                raise _too_big(exchange, max_bytes, op, declared=None)
    finally:
        body.close()


def _too_big(
    exchange: Exchange, max_bytes: int, op: str, *, declared: int | None
) -> LimitExceededError:
    size = f" ({declared} bytes declared)" if declared is not None else ""
    error = error_for(
        FailureClass.LIMIT_EXCEEDED,
        f"the response body from {exchange.shown} exceeds max_body_bytes ({max_bytes} bytes){size}",
        binding=exchange.binding,
        op=op,
    )
    assert isinstance(error, LimitExceededError)
    return error


def response_chunks(
    response: requests.Response,
    *,
    deadline: float,
    schedule: Schedule | None = None,
    op: str = "",
) -> Generator[bytes, None, None]:
    """Stream a body as it arrives, in chunks of at most 64 KiB.

    The deadline timer is armed when iteration starts; at the deadline a
    stalled or trickling body is shut down and the iterator raises
    :class:`DeadlineExceededError`. With ``deadline=math.inf`` (long-lived
    streams) nothing is scheduled (pass ``idle_timeout`` to
    ``http.request`` to bound silence). Closing the iterator (or finishing it)
    closes the response.

    Raises:
        DeadlineExceededError, HTTPSendError (also when aborted), ProtocolError.
    """
    body = _Body(response, deadline=deadline, schedule=schedule, op=op)
    try:
        while True:
            chunk = body.read(_CHUNK)
            if not chunk:
                return
            yield chunk
    finally:
        body.close()
