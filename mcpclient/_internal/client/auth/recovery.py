"""Auth recovery: a request the server refused with 401/403 is authorized and sent again.

The binding's flows themselves (one at a time, joined by every refused
request) live in :mod:`flows`; this module is the client's side of them:
opening a connection that needs authorization first, resending a refused
request within its own deadline, and the ``authenticating`` state a flow
shows on a live binding.

Threads:
    None of its own. A flow runs on the auth flow thread of :class:`AuthFlows`,
    which reports its start and end to :meth:`AuthRecovery.flow_changed`;
    refused requests wait for it on their own threads.

Locks:
    None of its own: :meth:`AuthRecovery.flow_changed` changes the binding's
    state under ``BindingState.lock``.

Shutdown:
    :meth:`AuthRecovery.close` stops a flow in progress (a request waiting for
    it is refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mcpclient._internal.client.auth.flows import MAX_ROUNDS, AuthFlows
from mcpclient._internal.client.lifecycle.connection import Connection, Hooks, open_connection
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.session.rpc import AuthRejectedError
from mcpclient.calls import CancelToken
from mcpclient.errors import AuthError, FailureClass

__all__ = ["AuthRecovery"]

_T = TypeVar("_T")


class AuthRecovery:
    """Authorizes and resends what the server refused. Thread safety: any thread."""

    def __init__(self, state: BindingState) -> None:
        self._st = state
        definition = state.definition
        self._flows = AuthFlows(
            state.binding,
            getattr(definition.transport, "auth", None),
            definition.timeouts.auth,
            self.flow_changed,
        )

    def close(self, timeout: float) -> None:
        """Stop a flow in progress within ``timeout``."""
        self._flows.close(timeout)

    def open_authorized(
        self, hooks: Hooks, deadline: float, cancel: CancelToken | None, *, op: str
    ) -> tuple[Connection, float]:
        """Open the connection, authorizing first when the server asks (401/403).

        Returns the connection and the startup deadline, moved later by the
        time a person spent authorizing (only that pauses the startup clock).
        """
        rounds = 0
        while True:
            try:
                conn = open_connection(self._st.definition, hooks, deadline=deadline, cancel=cancel)
                return conn, deadline
            except AuthRejectedError as exc:
                rounds += 1
                if rounds > MAX_ROUNDS:
                    raise self.rejected(exc, op) from None
                deadline += self._flows.recover(exc, deadline=None, cancel=cancel, op=op)

    def authorized(
        self,
        send: Callable[[], _T],
        *,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        rejected: AuthRejectedError | None = None,
    ) -> _T:
        """``send()``; after a 401/403 wait for the binding's auth flow and send again.

        A 401/403 proves the server did not run the request, so even a
        ``tools/call`` is sent again (DESIGN.md §7). ``rejected``: the first
        send already happened and was refused.
        """
        rounds = 0
        while True:
            if rejected is not None:
                rounds += 1
                if rounds > MAX_ROUNDS:
                    raise self.rejected(rejected, op) from None
                self._flows.recover(rejected, deadline=deadline, cancel=cancel, op=op)
            try:
                return send()
            except AuthRejectedError as exc:
                rejected = exc

    def join(
        self,
        rejected: AuthRejectedError,
        rounds: int,
        *,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        done: Callable[[BaseException | None], object],
    ) -> None:
        """One round of :meth:`authorized` without blocking: ``done(None)`` when the
        request may be sent again, ``done(error)`` when it may not.

        ``rounds``: how many times this request was refused so far (this one
        included); past :data:`MAX_ROUNDS` its rejection stands.
        """
        if rounds > MAX_ROUNDS:
            done(self.rejected(rejected, op))
            return
        self._flows.join(rejected, deadline=deadline, cancel=cancel, op=op, done=done)

    def rejected(self, exc: AuthRejectedError, op: str) -> AuthError:
        """The error for a request still refused after authorization."""
        status = exc.challenge.status
        return AuthError(
            f"the server still refused the request (HTTP {status}) after authorization",
            failure_class=FailureClass.AUTH_DENIED if status == 403 else FailureClass.AUTH_REQUIRED,
            binding=self._st.binding,
            op=op,
        )

    def flow_changed(self, started: bool, failure: AuthError | None) -> None:
        """The binding shows ``authenticating`` while a flow runs (auth flow thread)."""
        if started:
            self._st.begin_auth()
        else:
            self._st.end_auth(failure)
