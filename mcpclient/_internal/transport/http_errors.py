"""The typed failures of an HTTP exchange (DESIGN.md §7 "HTTP failures").

Each one is one of our classified errors with the few HTTP facts a caller
acts on (was the request written, the status, the challenge). They pickle
without the challenge: rejected credentials stay in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpclient._internal.transport.base import Disposition, RequestFailure
from mcpclient.errors import AuthError, ConnectionLostError, Error, FailureClass, ProtocolError
from mcpclient.transports import AuthChallenge

__all__ = ["HTTPAuthError", "HTTPSendError", "HTTPStatusError"]


class HTTPSendError(ConnectionLostError):
    """The connection failed (``transport_closed``).

    Attributes:
        sent: False when the request certainly never reached the wire (connection
            refused, DNS, TLS handshake, reset before it was written): resending
            is safe. True when it may have been written.
        aborted: the request was aborted by :func:`abort` / :meth:`AbortHandle.abort`.
    """

    def __init__(
        self,
        message: str,
        *,
        sent: bool,
        aborted: bool = False,
        failure_class: FailureClass | None = None,
        binding: str = "",
        op: str = "",
    ) -> None:
        super().__init__(message, failure_class=failure_class, binding=binding, op=op)
        self.sent = sent
        self.aborted = aborted

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_send_error,
            (self.message, int(self.failure_class), self.binding, self.op, self.sent, self.aborted),
        )


def _rebuild_send_error(  # noqa: PLR0917 - pickle passes the fields positionally
    message: str, failure_class: int, binding: str, op: str, sent: bool, aborted: bool
) -> HTTPSendError:
    return HTTPSendError(
        message,
        sent=sent,
        aborted=aborted,
        failure_class=FailureClass(failure_class),
        binding=binding,
        op=op,
    )


class HTTPStatusError(ProtocolError):
    """The server answered with an HTTP error status (``remote_http``).

    Attributes:
        status: the HTTP status code.
        retry_after: seconds from a ``Retry-After`` header (429, 503), or None;
            information only, nothing here waits.
    """

    classes: tuple[FailureClass, ...] = (FailureClass.REMOTE_HTTP,)

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        failure_class: FailureClass | None = None,
        binding: str = "",
        op: str = "",
    ) -> None:
        super().__init__(message, failure_class=failure_class, binding=binding, op=op)
        self.status = status
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_status_error,
            (self.message, self.binding, self.op, self.status, self.retry_after),
        )


def _rebuild_status_error(
    message: str, binding: str, op: str, status: int, retry_after: float | None
) -> HTTPStatusError:
    return HTTPStatusError(message, status=status, retry_after=retry_after, binding=binding, op=op)


class HTTPAuthError(AuthError):
    """401 or 403 (``auth_required``).

    Attributes:
        status: 401 or 403.
        www_authenticate: the ``WWW-Authenticate`` header (at most 8 KiB), or
            None, for the OAuth layer. It is never part of the message or repr.
        challenge: everything an auth provider needs to act on it (None when
            the error was rebuilt from a pickle: the rejected credentials stay
            in this process).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        www_authenticate: str | None = None,
        challenge: AuthChallenge | None = None,
        failure_class: FailureClass | None = None,
        binding: str = "",
        op: str = "",
    ) -> None:
        super().__init__(message, failure_class=failure_class, binding=binding, op=op)
        self.status = status
        self.www_authenticate = www_authenticate
        self.challenge = challenge

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_auth_error,
            (self.message, self.binding, self.op, self.status, self.www_authenticate),
        )


def _rebuild_auth_error(
    message: str, binding: str, op: str, status: int, www_authenticate: str | None
) -> HTTPAuthError:
    return HTTPAuthError(
        message, status=status, www_authenticate=www_authenticate, binding=binding, op=op
    )


def request_failure(
    request_id: int,
    error: Error,
    *,
    resume: Callable[[], None] | None = None,
    delivered: bool = False,
) -> RequestFailure:
    """How an HTTP transport reports ``error`` for ``request_id``: what its type says, typed.

    ``delivered``: the request provably reached the server (a resumption).
    """
    if delivered:
        disposition = Disposition.DELIVERED
    elif isinstance(error, HTTPSendError) and not error.sent:
        disposition = Disposition.NOT_SENT
    else:
        disposition = Disposition.MAYBE_SENT
    return RequestFailure(
        request_id,
        error,
        resume,
        disposition=disposition,
        aborted=isinstance(error, HTTPSendError) and error.aborted,
        challenge=error.challenge if isinstance(error, HTTPAuthError) else None,
    )
