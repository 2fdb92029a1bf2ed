"""The device authorization grant (RFC 8628): a user code for the person, then polling.

:func:`run` drives one authorization for :class:`~mcpclient.auth.DeviceCodeGrant`:
it asks the authorization server's ``device_authorization_endpoint`` for a
device code (§3.1), hands the user code to the grant's ``on_code`` callback,
and polls the token endpoint (§3.4) at the server's ``interval`` (5 s when
absent) until the person approves. ``authorization_pending`` keeps polling,
``slow_down`` adds :data:`SLOW_DOWN_SECONDS` to the interval for good (§3.5),
``access_denied`` fails ``auth_denied``, ``expired_token`` (or the code's own
``expires_in`` running out) ``auth_expired``. The flow's deadline
(``Timeouts.auth``) bounds it all (``auth_required`` when it passes); the
waits between polls are ``cancelled.wait(...)``, so closing the client ends
the flow at once.

Threads:
    None of its own: it runs on the thread of the authorization flow (the
    ``on_code`` callback on a bounded helper, :mod:`mcpclient.auth._callables`).
Locks:
    None.
Shutdown:
    The flow's ``cancelled`` event interrupts any wait; a poll in flight is
    bounded by its exchange deadline.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from mcpclient._core.deadline import now
from mcpclient._core.limits import normalize_message
from mcpclient.auth._callables import call_bounded
from mcpclient.auth.authorize import check_browser_url
from mcpclient.auth.grants import DeviceCode, DeviceCodeGrant
from mcpclient.errors import AuthError, FailureClass

if TYPE_CHECKING:
    from mcpclient.auth.token_endpoint import TokenEndpoint
    from mcpclient.auth.tokens import TokenSet

__all__ = ["DEFAULT_INTERVAL", "MIN_INTERVAL", "SLOW_DOWN_SECONDS", "run"]

#: RFC 8628 §3.2: the polling interval when the server names none, in seconds.
DEFAULT_INTERVAL = 5.0
#: RFC 8628 §3.5: what each ``slow_down`` adds to the interval, in seconds.
#: Tests monkeypatch this module constant to keep the slow-down test short.
SLOW_DOWN_SECONDS = 5.0
#: The shortest interval honored (a server saying 0 would have us spin).
MIN_INTERVAL = 0.01
#: Bounds on the server's strings kept (codes, URIs).
MAX_CODE_CHARS = 1024
MAX_URI_CHARS = 8192


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class, op="authorize")


@attrs.frozen(repr=False)
class _Authorization:
    """A device authorization response (RFC 8628 §3.2), checked."""

    device_code: str
    code: DeviceCode
    expires_in: float
    interval: float


def _text(body: dict[str, Any], name: str, limit: int, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > limit:
        raise _fail(f"the device authorization response has no usable {name!r}")
    if normalize_message(value, limit) != value:
        raise _fail(f"the device authorization response has no usable {name!r}")
    return value


def _seconds(body: dict[str, Any], name: str, default: float | None) -> float:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(f"the device authorization response has no usable {name!r}")
    if value < 0 or (name == "expires_in" and value == 0):
        raise _fail(f"the device authorization response has no usable {name!r}")
    return float(value)


def parse(body: object, *, allow_loopback_http: bool) -> _Authorization:
    """Check a device authorization response body.

    Raises:
        AuthError: ``auth_failed`` naming the unusable field.
    """
    if not isinstance(body, dict):
        raise _fail("the device authorization response is not a JSON object")
    device_code = _text(body, "device_code", MAX_CODE_CHARS)
    user_code = _text(body, "user_code", MAX_CODE_CHARS)
    uri = _text(body, "verification_uri", MAX_URI_CHARS)
    complete = _text(body, "verification_uri_complete", MAX_URI_CHARS, required=False)
    assert device_code is not None and user_code is not None and uri is not None
    for url in (uri, complete):
        if url is not None:
            # A person is sent there: the same rules as the authorization URL.
            check_browser_url(url, allow_loopback_http=allow_loopback_http)
    expires_in = _seconds(body, "expires_in", None)
    interval = max(_seconds(body, "interval", DEFAULT_INTERVAL), MIN_INTERVAL)
    code = DeviceCode(user_code, uri, complete, time.time() + expires_in)
    return _Authorization(device_code, code, expires_in, interval)


def _check_time_left(expires: float, deadline: float) -> None:
    if now() >= expires:
        raise _fail("the device code expired before it was approved", FailureClass.AUTH_EXPIRED)
    if now() >= deadline:
        raise _fail(
            "the device authorization was not approved in time (Timeouts.auth)",
            FailureClass.AUTH_REQUIRED,
        )


def run(
    grant: DeviceCodeGrant,
    endpoint: TokenEndpoint,
    *,
    scopes: Sequence[str],
    resource: str | None,
    deadline: float,
    cancelled: threading.Event,
    io: Callable[[float], float],
    allow_loopback_http: bool,
) -> TokenSet:
    """One device authorization: the code to ``grant.on_code``, then poll for the tokens.

    ``io(stop)`` bounds one exchange (the flow's per-exchange deadline).

    Raises:
        AuthError: ``auth_denied`` (the person refused), ``auth_expired``
            (the code expired), ``auth_required`` (the flow's deadline passed
            or it was cancelled), ``auth_failed`` (an unusable reply, no
            device endpoint), or a token endpoint error.
    """
    body = endpoint.device_authorization(scopes=scopes, deadline=io(deadline), resource=resource)
    started = now()
    authorization = parse(body, allow_loopback_http=allow_loopback_http)
    code = authorization.code
    on_code = grant.on_code
    call_bounded(
        lambda: on_code(code), "DeviceCodeGrant.on_code", deadline=deadline, cancelled=cancelled
    )
    expires = started + authorization.expires_in
    interval = authorization.interval
    while True:
        stop = min(deadline, expires)
        if cancelled.wait(max(0.0, min(interval, stop - now()))):
            raise _fail("the authorization was cancelled", FailureClass.AUTH_REQUIRED)
        _check_time_left(expires, deadline)
        try:
            answer = endpoint.poll_device_code(
                authorization.device_code, scopes=scopes, deadline=io(stop), resource=resource
            )
        except AuthError as exc:
            # A poll still in flight when the code expires (or the flow's deadline
            # passes) is cut by that bound: the expiry is the truth, not "timed out".
            if exc.failure_class is FailureClass.AUTH_FAILED and now() >= stop:
                _check_time_left(expires, deadline)
            raise
        if not isinstance(answer, str):
            return answer
        if answer == "slow_down":
            interval += SLOW_DOWN_SECONDS
