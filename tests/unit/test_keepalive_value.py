"""Definition(keepalive=...): the Keepalive value, its validation and the per-transport default."""

from __future__ import annotations

import attrs
import pytest

from mcpclient import (
    ConfigError,
    Definition,
    Keepalive,
    LegacySSETransport,
    StdioTransport,
    StreamableHTTPTransport,
)
from mcpclient.compat import PROFILE_DEFAULT, Tolerance

HTTP = StreamableHTTPTransport("http://127.0.0.1:1/mcp")
STDIO = StdioTransport("python", ["-c", "pass"])


def test_defaults() -> None:
    value = Keepalive()
    assert (value.interval, value.ping_timeout, value.failures) == (30.0, 10.0, 3)
    assert Keepalive(interval=2.0).ping_timeout == 2.0
    assert Keepalive(interval=2.0, timeout=0.5).ping_timeout == 0.5


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"interval": 0}, "interval"),
        ({"interval": -1.0}, "interval"),
        ({"interval": float("inf")}, "interval"),
        ({"interval": True}, "interval"),
        ({"timeout": 0}, "timeout"),
        ({"interval": 1.0, "timeout": 2.0}, "timeout"),
        ({"failures": 0}, "failures"),
        ({"failures": 1.5}, "failures"),
        ({"failures": 65}, "failures"),
    ],
)
def test_bad_values_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=rf"Keepalive\.{field}"):
        Keepalive(**kwargs)  # type: ignore[arg-type]


def test_default_is_off_for_stdio_and_on_for_http() -> None:
    assert Definition("s", STDIO).effective_keepalive is None
    assert Definition("h", HTTP).effective_keepalive == Keepalive()
    if PROFILE_DEFAULT.permits(Tolerance.LEGACY_SSE):
        sse = Definition("e", LegacySSETransport("http://127.0.0.1:1/sse"))
        assert sse.effective_keepalive == Keepalive()


def test_explicit_values_win() -> None:
    mine = Keepalive(interval=0.2, timeout=0.1, failures=2)
    assert Definition("s", STDIO, keepalive=mine).effective_keepalive is mine
    assert Definition("h", HTTP, keepalive=mine).effective_keepalive is mine
    assert Definition("h", HTTP, keepalive=False).effective_keepalive is None


@pytest.mark.parametrize("bad", [True, 0, 30.0, "on", {"interval": 1}])
def test_definition_refuses_other_values(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"Definition\.keepalive"):
        Definition("h", HTTP, keepalive=bad)  # type: ignore[arg-type]


def test_validate_catches_a_value_built_without_validators() -> None:
    with attrs.validators.disabled():
        broken = Keepalive(interval=-1.0, timeout=-2.0)
        defn = Definition("h", HTTP, keepalive=broken)
    with pytest.raises(ConfigError, match=r"Keepalive\.interval"):
        defn.validate()
    Definition("h", HTTP, keepalive=Keepalive(interval=1.0)).validate()
