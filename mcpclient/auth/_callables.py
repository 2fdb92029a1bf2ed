"""Calling the host's callables (a headless ``redirect``, an assertion) within the flow's deadline.

An authorization flow is bounded by ``Timeouts.auth``, but a callable the
host gave us (``AuthorizationCodeGrant.redirect``, ``open_browser``,
``JWTBearerGrant.assertion``, ``TokenExchangeGrant.id_token``) is code we
cannot interrupt. :func:`call_bounded` runs it on a daemon thread and waits
for it until the flow's deadline passes or the flow is cancelled; then the
callable is **abandoned**: the flow fails at once and the thread is left to
finish (or not) on its own. Its result, if it ever comes, is dropped.

Threads:
    One daemon thread ``mcpclient-auth-callable`` per call, running the host's
    callable. It ends when the callable returns; an abandoned one may outlive
    the flow (it holds nothing of ours but its result slot).

Locks:
    None; the result is handed over through a ``threading.Event``.

Shutdown:
    Nothing to stop: a cancelled flow stops waiting (within
    :data:`CANCEL_CHECK_INTERVAL`) and abandons the callable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mcpclient._core.deadline import now
from mcpclient.errors import AuthError, FailureClass

__all__ = ["CANCEL_CHECK_INTERVAL", "call_bounded"]

#: How often a wait for a callable looks at the flow's ``cancelled`` event.
CANCEL_CHECK_INTERVAL = 0.1


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class, op="authorize")


def call_bounded(
    fn: Callable[[], Any],
    what: str,
    *,
    deadline: float,
    cancelled: threading.Event,
    raised: Callable[[Exception], AuthError] | None = None,
) -> Any:
    """``fn()``, or an ``AuthError`` once ``deadline`` (monotonic) passes or ``cancelled`` is set.

    ``what`` names the callable in messages (``AuthorizationCodeGrant.redirect``);
    ``raised`` makes the error for an exception the callable raised (default:
    ``auth_failed`` naming its type).

    Raises:
        AuthError: ``auth_required`` when the callable did not finish before
            the deadline or the flow was cancelled (the callable is abandoned);
            ``auth_failed`` when it raised (its exception's type is named,
            never its text), or the ``AuthError`` it raised itself.
    """
    done = threading.Event()
    outcome: list[Any] = []  # [("ok", value)] or [("raised", exc)]

    def run() -> None:
        try:
            outcome.append(("ok", fn()))
        except BaseException as exc:  # handed to the flow, never lost
            outcome.append(("raised", exc))
        finally:
            done.set()

    thread = threading.Thread(target=run, name="mcpclient-auth-callable", daemon=True)
    thread.start()
    while not done.is_set():
        if cancelled.is_set():
            raise _fail(
                f"the authorization was cancelled while the {what} callable ran"
                " (the callable was abandoned)",
                FailureClass.AUTH_REQUIRED,
            )
        left = deadline - now()
        if left <= 0:
            raise _fail(
                f"the authorization step (the {what} callable) did not finish before the"
                " authorization deadline (Timeouts.auth); the callable was abandoned",
                FailureClass.AUTH_REQUIRED,
            )
        done.wait(min(left, CANCEL_CHECK_INTERVAL))
    kind, value = outcome[0]
    if kind == "raised":
        if isinstance(value, AuthError):
            raise value
        if not isinstance(value, Exception):
            raise value  # KeyboardInterrupt, SystemExit: not ours to swallow
        if raised is not None:
            raise raised(value) from None
        raise _fail(f"the {what} callable raised {type(value).__name__}") from None
    return value
