"""The device authorization grant (RFC 8628) of the test authorization server.

:class:`DeviceCodes` keeps the codes the device authorization endpoint handed
out and what the test decided about each (approve, deny, expire, answer
``slow_down`` once); the token endpoint (:mod:`.auth_grants`) asks it what a
poll gets. There is no user interface: a code stays pending until the test
calls :meth:`~mcpclient.testing.auth_server.AuthServer.approve_device` (or
another control). Standard library only.

Thread safety: every method may be called from any thread (one lock).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections.abc import Mapping

from .auth_base import OAuthError

GRANT_DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"
DEVICE_PATH = "/device_authorization"
#: The page a person would visit (nothing is served there).
VERIFICATION_PATH = "/device"


@dataclasses.dataclass
class _Device:
    client_id: str
    user_code: str
    scopes: tuple[str, ...]
    resource: str | None
    expires: float  # monotonic
    decision: str = "pending"  # "pending", "approved", "denied" or "spent"
    slow_down: bool = False  # the next poll answers slow_down
    polls: list[float] = dataclasses.field(default_factory=list)  # monotonic instants


@dataclasses.dataclass(frozen=True)
class Approved:
    """What an approved device code grants."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str | None


class DeviceCodes:
    """The device codes handed out, by device code."""

    def __init__(self) -> None:
        """Start with none."""
        self._lock = threading.Lock()
        self._codes: dict[str, _Device] = {}

    def issue(self, client_id: str, form: Mapping[str, str], *, lifetime: float) -> tuple[str, str]:
        """A new ``(device_code, user_code)`` for ``client_id``."""
        device_code = "dc-" + secrets.token_urlsafe(24)
        user_code = secrets.token_hex(4).upper()
        record = _Device(
            client_id,
            user_code,
            tuple(form.get("scope", "").split()),
            form.get("resource"),
            time.monotonic() + lifetime,
        )
        with self._lock:
            self._codes[device_code] = record
        return device_code, user_code

    def decide(self, user_code: str, action: str) -> None:
        """``approve``, ``deny``, ``expire`` or ``slow_down`` the code ``user_code``.

        Raises:
            KeyError: no such user code.
        """
        with self._lock:
            record = next((r for r in self._codes.values() if r.user_code == user_code), None)
            if record is None or record.decision == "spent":
                raise KeyError(user_code)
            if action == "approve":
                record.decision = "approved"
            elif action == "deny":
                record.decision = "denied"
            elif action == "expire":
                record.expires = 0.0
            elif action == "slow_down":
                record.slow_down = True
            else:
                raise ValueError(f"unknown action {action!r}")

    def polls(self, user_code: str) -> list[float]:
        """The monotonic instants the code ``user_code`` was polled at, oldest first."""
        with self._lock:
            return [t for r in self._codes.values() if r.user_code == user_code for t in r.polls]

    def poll(self, device_code: str, client_id: str) -> Approved:
        """One token request for ``device_code``: what it grants, or the RFC 8628 §3.5 error.

        An approved or denied code is spent (single use).

        Raises:
            OAuthError: ``authorization_pending``, ``slow_down``,
                ``access_denied``, ``expired_token`` or ``invalid_grant``.
        """
        with self._lock:
            record = self._codes.get(device_code)
            if record is None or record.client_id != client_id or record.decision == "spent":
                raise OAuthError("invalid_grant", "unknown device code")
            record.polls.append(time.monotonic())
            if record.expires <= time.monotonic():
                raise OAuthError("expired_token", "the device code expired")
            if record.slow_down:
                record.slow_down = False
                raise OAuthError("slow_down", "polling too fast")
            if record.decision == "denied":
                record.decision = "spent"
                raise OAuthError("access_denied", "the person denied the request")
            if record.decision == "pending":
                raise OAuthError("authorization_pending", "waiting for the person")
            record.decision = "spent"  # kept for device_polls(), never granted again
            return Approved(record.client_id, record.scopes, record.resource)
