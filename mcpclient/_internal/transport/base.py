"""What the session needs from a framed, blocking transport."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from mcpclient.errors import ConnectionLostError, Error
from mcpclient.transports import AuthChallenge, AuthProvider

__all__ = [
    "Answer",
    "AuthChallenge",
    "AuthProvider",
    "FrameTransport",
    "MessageTransport",
    "Outbound",
    "RequestFailure",
    "SendKind",
    "SessionExpiredError",
    "StreamEndedError",
]


class SendKind(enum.Enum):
    """What an outbound message is, which decides how a transport carries it.

    The session chooses it for each message it sends; nothing derives it
    from a deadline. Over HTTP: a request goes to the worker pool; a
    notification and an answer go, in the order they were sent, through the
    one send lane; a stream (``subscriptions/listen``, a request that lasts
    until it is cancelled or ends, with no deadline) gets a thread of its
    own for as long as it lasts.
    """

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"  # the answer to a server request
    STREAM = "stream"


@attrs.frozen
class Outbound:
    """One message to send, with what the transport needs to know about it."""

    request_id: int | None  # None for notifications and answers
    method: str
    #: Monotonic: a request's own deadline, or a notification's or an
    #: answer's send bound; ``None`` for a stream, which has none.
    deadline: float | None
    headers: Mapping[str, str]
    kind: SendKind

    @property
    def bound(self) -> float:
        """The deadline as the HTTP layer takes it (``math.inf``: no bound at all)."""
        deadline = self.deadline
        return math.inf if deadline is None else deadline


class Disposition(enum.Enum):
    """What a transport's failure says became of the request it failed."""

    #: It certainly never reached the wire (refused, DNS, TLS, reset before it
    #: was written): not ``indeterminate``, even for ``tools/call``.
    NOT_SENT = "not sent"
    #: It may have been written: a ``tools/call`` is ``indeterminate``.
    MAYBE_SENT = "maybe sent"
    #: It provably reached the server (the failure came through a resumption
    #: of its response stream): never "not sent", never re-sent.
    DELIVERED = "delivered"


@attrs.frozen
class RequestFailure:
    """An HTTP-level failure of one request, handed to the session's reader.

    The transport says what it knows, typed, when it reports the failure
    (``http_errors.request_failure`` reads its own error classes once), so
    the session never probes an error's attributes: what became of the
    request (``disposition``), whether this client closed it itself
    (``aborted``: a cancel, not a loss), and a 401/403's ``challenge`` (the
    server did not run it; an auth provider may recover and send it again).

    With ``resume`` set, the request's response stream ended and can be
    resumed: the session calls ``resume()`` (it never blocks) if the request
    is still unanswered once everything queued before this failure was read,
    and ignores it otherwise.
    """

    request_id: int
    error: Error
    resume: Callable[[], None] | None = None
    disposition: Disposition = Disposition.MAYBE_SENT
    aborted: bool = False
    challenge: AuthChallenge | None = None


@attrs.frozen
class Answer:
    """One message of a request's own HTTP response, tagged with that request.

    ``data`` is a JSON body (``final``: the whole answer; anything it does not
    answer is never answered) or one SSE event of the request's response
    stream (more may follow). The session decodes it once, like any frame; a
    message it cannot use fails ``request_id`` at once, naming what was wrong.
    """

    request_id: int
    data: bytes | bytearray | str
    final: bool
    #: The HTTP status of the response it came in (an error body of a 4xx
    #: is settled by the :class:`RequestFailure` queued behind it when it
    #: cannot be used; a JSON-RPC error it carries is read with its status).
    status: int = 200


class StreamEndedError(ConnectionLostError):
    """A request's response stream ended before its response; the connection is fine.

    The session fails the request only if it is still unanswered once every
    frame read before the end was handled; it never takes the binding down.
    """


class SessionExpiredError(ConnectionLostError):
    """A legacy server answered 404 to a request carrying its session id."""


class FrameTransport(Protocol):
    """A bidirectional stream of frames (one JSON-RPC message or batch each).

    One reader thread calls :meth:`read_frame`; one writer at a time calls
    :meth:`write_frame` / :meth:`try_write_frame`; any thread may call
    :meth:`close`.
    """

    def read_frame(self) -> Any:
        """Block for the next frame (bytes, or a transport's failure report); ``None`` at EOF."""

    def write_frame(self, data: bytes) -> None:
        """Write one frame completely (may block)."""

    def try_write_frame(self, data: bytes) -> bool:
        """Write one frame at once if that cannot block; else write nothing."""

    def loss_reason(self) -> str:
        """A bounded, credential-free description of why the stream ended."""

    def close(self, timeout: float | None = None) -> None:
        """Release everything; idempotent."""


@runtime_checkable
class MessageTransport(Protocol):
    """A transport that takes whole messages with their metadata (HTTP).

    The session calls :meth:`send` instead of writing frames; a request is
    cancelled by :meth:`abort` (closing its response stream) when the era
    says so.
    """

    def send(self, frame: bytes, meta: Outbound) -> None:
        """Queue one message; never blocks."""

    def abort(self, request_id: int) -> None:
        """Close the response stream of ``request_id``."""

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the notifications and answers accepted so far to be sent."""
