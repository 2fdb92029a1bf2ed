"""``mcpclient.auth.device``: the device authorization response is checked before use."""

from __future__ import annotations

from typing import Any

import pytest

from mcpclient.auth import DeviceCodeGrant
from mcpclient.auth.device import DEFAULT_INTERVAL, MIN_INTERVAL, parse
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
