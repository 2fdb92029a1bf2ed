"""How a request fails: a server's JSON-RPC error, and HTTP failures of one request.

:class:`RemoteError` is a JSON-RPC error answer (the client layer translates
it). :func:`fail_request` classifies a transport's :class:`RequestFailure`
(an HTTP-level failure of one request, or with id -1 of the whole session)
and ends the request it names in the table: whether the server provably
never ran it (:class:`AuthRejectedError`; a 404's public
:class:`~mcpclient.errors.NotProcessedError`, which the call path re-sends
once), may have run it (``indeterminate``), or whether the connection is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcpclient.errors as errors_module
from mcpclient._internal.session.request_table import RequestTable
from mcpclient._internal.transport.base import (
    AuthChallenge,
    Disposition,
    RequestFailure,
    SessionExpiredError,
    StreamEndedError,
)
from mcpclient.errors import (
    AuthError,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    IndeterminateError,
    NotProcessedError,
    error_for,
)

__all__ = ["AuthRejectedError", "RemoteError", "fail_request", "not_processed_again"]

_PUBLIC_ERRORS = frozenset(
    cls for cls in vars(errors_module).values() if isinstance(cls, type) and issubclass(cls, Error)
)


def not_processed_again(first: NotProcessedError) -> NotProcessedError:
    """The error of a request the server refused with 404 on its second session too."""
    again = NotProcessedError(
        "the server answered HTTP 404 (session not found) on the new session as well: by its"
        " word it processed the request on neither session, and it was not sent a third time",
        binding=first.binding,
        op=first.op,
    )
    again.__cause__ = first  # the caller raises it ``from`` the second 404 too
    return again


class AuthRejectedError(AuthError):
    """The server answered 401/403: it never ran the request (DESIGN.md §7).

    ``challenge`` is what an auth provider needs to recover; the client then
    sends the request again. Callers never see this class (the client turns it
    into a plain :class:`AuthError` when nothing can recover).
    """

    def __init__(self, message: str, *, challenge: AuthChallenge, binding: str, op: str) -> None:
        super().__init__(message, failure_class=FailureClass.AUTH_REQUIRED, binding=binding, op=op)
        self.challenge = challenge


class RemoteError(Exception):
    """A JSON-RPC error response from the server (translated by the caller).

    ``code`` is ``None`` when the response carried no integer code (a malformed
    error object, or a response with neither result nor error). ``http_status``:
    the HTTP status of the response it came in (``None`` off HTTP).
    """

    def __init__(
        self, code: int | None, message: str, data: Any = None, *, http_status: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status


def fail_request(
    table: RequestTable, failure: RequestFailure, lose: Callable[[Error], None]
) -> None:
    """End the request ``failure`` names as classified; ``lose`` the connection if it broke."""
    error = failure.error
    binding = table.binding
    if failure.resume is not None or isinstance(error, StreamEndedError):
        # A response stream ended: everything it carried was read before
        # this, so an answered request is done and an unanswered one is
        # resumed (or fails without taking the binding down).
        if failure.request_id not in table:
            return
        if failure.resume is not None:
            failure.resume()
            return
    if isinstance(error, DeadlineExceededError) and failure.request_id >= 0:
        # The transport cut the exchange at the request's deadline, maybe a
        # moment before the caller's own wait ran out. Only the table expires
        # a request: it fails it as its deadline says and tells the server
        # (legacy HTTP: a disconnect is not a cancel), whoever noticed first.
        table.expire(failure.request_id, reported=error)
        return
    if failure.disposition is Disposition.DELIVERED:
        # The failure came through a resumption: the request reached the
        # server, whatever the resuming GET says (refused, 4xx/5xx, an
        # auth challenge). Never "not sent", never re-sent.
        _fail_delivered(table, failure, lose)
        return
    challenge = failure.challenge
    if isinstance(error, AuthError) and challenge is not None:
        # A 401/403 proves the server did not run it: the client may
        # recover (authorize) and send it again, even a tools/call.
        entry = table.take(failure.request_id) if failure.request_id >= 0 else None
        if entry is not None:
            entry.complete(
                exc=AuthRejectedError(
                    error.message, challenge=challenge, binding=binding, op=entry.method
                )
            )
            return
    if isinstance(error, SessionExpiredError) and failure.request_id >= 0:
        # A 404 to a request that carried the session id is the server's
        # word that it never processed it: the call path sends it once more
        # on the next session, even a tools/call (a public error, so nothing
        # else that meets it leaks an internal class). Everything else in
        # flight is treated as lost, and first: the caller that re-sends
        # must find this connection lost already, never send on it again.
        entry = table.take(failure.request_id)
        lose(error)
        if entry is not None:
            refused = NotProcessedError(
                f"{error.message}: the server did not process the request",
                binding=binding,
                op=entry.ctx.op or entry.method,
            )
            refused.__cause__ = error
            entry.complete(exc=refused)
        return
    if isinstance(error, SessionExpiredError) or failure.request_id < 0:
        lose(error)
        return
    entry = table.take(failure.request_id)
    if entry is None:
        _lose_if_broken(failure, lose)
        return
    # An HTTP failure says whether the request may have been written;
    # one that provably was not is not indeterminate, even for tools/call.
    sent = failure.disposition is not Disposition.NOT_SENT
    if entry.ctx.indeterminate_on_loss and sent and isinstance(error, ConnectionLostError):
        error = IndeterminateError(
            f"{error.message}; the server may or may not have run it",
            binding=binding,
            op=entry.method,
        )
    if type(error) not in _PUBLIC_ERRORS:
        # Transport-specific subclasses (HTTP send errors...) stay inside:
        # callers see the one public class their failure class fixes.
        public = error_for(
            error.failure_class, error.message, binding=binding, op=entry.method, code=error.code
        )
        public.__cause__ = error
        error = public
    entry.complete(exc=error)
    _lose_if_broken(failure, lose)


def _fail_delivered(
    table: RequestTable, failure: RequestFailure, lose: Callable[[Error], None]
) -> None:
    """Fail a request known to have reached the server as a sent-then-lost one."""
    error = failure.error
    entry = table.take(failure.request_id)
    if entry is None:
        _lose_if_broken(failure, lose)
        return
    if entry.ctx.indeterminate_on_loss and not isinstance(error, DeadlineExceededError):
        # The resumption's own failure (a refused connection, a 404) says what
        # became of the GET, not of the request: name the request's fate first.
        failed: Error = IndeterminateError(
            f"the request reached the server, but its response stream was cut before the"
            f" answer and could not be resumed ({error.message}); the server may or may not"
            " have run it",
            binding=table.binding,
            op=entry.method,
        )
    else:
        failed = error_for(
            error.failure_class,
            error.message,
            binding=table.binding,
            op=entry.method,
            code=error.code,
        )
    failed.__cause__ = error
    entry.complete(exc=failed)
    _lose_if_broken(failure, lose)


def _lose_if_broken(failure: RequestFailure, lose: Callable[[Error], None]) -> None:
    # The server could not be reached, or the connection broke (refused,
    # reset): the binding's connection is lost and the reconnect policy
    # applies. A stream we aborted ourselves (a cancel) is not a loss.
    error = failure.error
    if (
        isinstance(error, ConnectionLostError)
        and error.failure_class is FailureClass.TRANSPORT_CLOSED
        and not failure.aborted
        and not isinstance(error, StreamEndedError)
    ):
        lose(error)
