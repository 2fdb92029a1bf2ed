"""``mcpclient.auth.device``: the device authorization response is checked before use."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpclient.auth import DeviceCodeGrant
from mcpclient.auth.device import DEFAULT_INTERVAL, MIN_INTERVAL, parse, run
from mcpclient.errors import AuthError, ConfigError, FailureClass

GOOD: dict[str, Any] = {
    "device_code": "dc-1",
    "user_code": "ABCD-EFGH",
    "verification_uri": "https://as.example/device",
    "expires_in": 600,
}


def test_the_interval_defaults_to_five_seconds_and_sub_second_ones_are_honored() -> None:
    assert parse(GOOD, allow_loopback_http=False).interval == DEFAULT_INTERVAL == 5.0
    assert parse({**GOOD, "interval": 0.05}, allow_loopback_http=False).interval == 0.05
    # Zero would have the client spin: the floor applies.
    assert parse({**GOOD, "interval": 0}, allow_loopback_http=False).interval == MIN_INTERVAL
    code = parse(GOOD, allow_loopback_http=False).code
    assert code.user_code == "ABCD-EFGH" and code.verification_uri_complete is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"device_code": None}, "device_code"),
        ({"user_code": ""}, "user_code"),
        ({"user_code": "two\nlines"}, "user_code"),
        ({"expires_in": 0}, "expires_in"),
        ({"expires_in": "600"}, "expires_in"),
        ({"interval": -1}, "interval"),
        ({"interval": True}, "interval"),
        ({"interval": float("nan")}, "interval"),
    ],
)
def test_an_unusable_field_is_auth_failed_naming_it(changes: dict[str, Any], field: str) -> None:
    body = {k: v for k, v in {**GOOD, **changes}.items() if v is not None}
    with pytest.raises(AuthError) as info:
        parse(body, allow_loopback_http=False)
    assert info.value.failure_class is FailureClass.AUTH_FAILED
    assert field in info.value.message


@pytest.mark.parametrize(
    "uri", ["javascript:alert(1)", "http://as.example/device", "https://u:p@as.example/"]
)
def test_a_verification_uri_no_person_should_visit_is_refused(uri: str) -> None:
    for field in ("verification_uri", "verification_uri_complete"):
        with pytest.raises(AuthError) as info:
            parse({**GOOD, field: uri}, allow_loopback_http=False)
        assert info.value.failure_class is FailureClass.AUTH_FAILED


def test_not_an_object_is_auth_failed() -> None:
    with pytest.raises(AuthError, match="not a JSON object"):
        parse(["device_code"], allow_loopback_http=False)


def test_the_grant_needs_a_callable_and_shows_only_its_name() -> None:
    def show(code: object) -> None: ...

    assert repr(DeviceCodeGrant(on_code=show)).endswith("show)")
    with pytest.raises(ConfigError):
        DeviceCodeGrant(on_code="print")  # type: ignore[arg-type]


class _StallingEndpoint:
    """A token endpoint whose polls hang until their bound and then time out, as the
    HTTP client reports it (``auth_failed``, "timed out"), or fail at once."""

    def __init__(self, body: dict[str, Any], *, stall: bool) -> None:
        self.body, self.stall, self.polls = body, stall, 0

    def device_authorization(self, **_: Any) -> dict[str, Any]:
        return self.body

    def poll_device_code(self, device_code: str, *, deadline: float, **_: Any) -> str:
        self.polls += 1
        if self.stall:
            time.sleep(max(0.0, deadline - time.monotonic()) + 0.01)
        raise AuthError("the token endpoint timed out", failure_class=FailureClass.AUTH_FAILED)


def _run(endpoint: _StallingEndpoint, *, deadline_in: float) -> AuthError:
    with pytest.raises(AuthError) as info:
        run(
            DeviceCodeGrant(on_code=lambda code: None),
            endpoint,  # type: ignore[arg-type]
            scopes=(),
            resource=None,
            deadline=time.monotonic() + deadline_in,
            cancelled=threading.Event(),
            io=lambda stop: stop,
            allow_loopback_http=False,
        )
    assert endpoint.polls == 1
    return info.value


def test_a_poll_cut_by_the_codes_expiry_is_auth_expired_not_a_timeout() -> None:
    endpoint = _StallingEndpoint({**GOOD, "expires_in": 0.3, "interval": 0.05}, stall=True)
    error = _run(endpoint, deadline_in=30.0)
    assert error.failure_class is FailureClass.AUTH_EXPIRED and "expired" in error.message


def test_a_poll_cut_by_the_flows_deadline_is_auth_required() -> None:
    endpoint = _StallingEndpoint({**GOOD, "interval": 0.05}, stall=True)
    error = _run(endpoint, deadline_in=0.3)
    assert error.failure_class is FailureClass.AUTH_REQUIRED and "Timeouts.auth" in error.message


def test_a_poll_that_fails_before_any_bound_stays_auth_failed() -> None:
    endpoint = _StallingEndpoint({**GOOD, "interval": 0.05}, stall=False)
    error = _run(endpoint, deadline_in=30.0)
    assert error.failure_class is FailureClass.AUTH_FAILED and "timed out" in error.message
