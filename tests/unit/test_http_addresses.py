"""The shared address rule (``http_origins.AddressPolicy``) the connect hook applies.

Pure: resolvers are injected, nothing is contacted. The exchanges that prove
the connection goes to the checked address run in test_auth_net.py and
tests/integration/test_http_plumbing.py.
"""

from __future__ import annotations

import ipaddress

import pytest

from mcpclient._internal.transport.http_origins import (
    AddressPolicy,
    AddressRefusedError,
    address_kind,
)

REMOTE = AddressPolicy(allow_loopback=False)
LOOPBACK = AddressPolicy(allow_loopback=True)
PRIVATE = AddressPolicy(allow_loopback=False, allow_private_networks=True)
EVERYTHING = AddressPolicy(allow_loopback=True, allow_private_networks=True)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("93.184.216.34", "public"),
        ("2606:4700::1111", "public"),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),  # CGNAT
        ("fc00::1", "private"),
        ("::ffff:192.168.0.1", "private"),  # IPv4-mapped: the embedded host is judged
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "forbidden"),
        ("0.1.2.3", "forbidden"),
        ("224.0.0.1", "forbidden"),
        ("240.0.0.1", "forbidden"),
        ("::", "forbidden"),
        ("ff02::1", "forbidden"),
    ],
)
def test_address_kinds(address: str, kind: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    ("policy", "admitted", "refused"),
    [
        (REMOTE, ["93.184.216.34"], ["127.0.0.1", "10.0.0.1", "169.254.169.254", "224.0.0.1"]),
        (LOOPBACK, ["127.0.0.1", "::1"], ["10.0.0.1", "fe80::1", "0.0.0.0"]),
        (PRIVATE, ["10.0.0.1", "100.64.0.1", "169.254.1.1"], ["127.0.0.1", "ff02::1"]),
        (EVERYTHING, ["127.0.0.1", "10.0.0.1"], ["0.0.0.0", "224.0.0.1", "240.0.0.1"]),
    ],
)
def test_refusal_follows_the_policy(
    policy: AddressPolicy, admitted: list[str], refused: list[str]
) -> None:
    for address in admitted:
        assert policy.refusal(address) is None, address
    for address in refused:
        problem = policy.refusal(address)
        assert problem is not None and f"({ipaddress.ip_address(address)})" in problem


def test_a_malformed_address_is_refused() -> None:
    assert EVERYTHING.refusal("not-an-ip") == "resolved to a malformed address"


def test_every_answer_is_checked_and_a_mixed_one_refused_whole() -> None:
    asked: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return {"ok.example": ["93.184.216.34", "93.184.216.34", "2606:4700::1"]}.get(
            host, ["93.184.216.34", "10.0.0.1"]
        )

    policy = AddressPolicy(allow_loopback=False, resolve=resolve)
    assert policy.addresses("ok.example", 443) == ["93.184.216.34", "2606:4700::1"]
    with pytest.raises(AddressRefusedError) as excinfo:
        policy.addresses("mixed.example", 443)
    assert excinfo.value.reason == (
        "the host mixed.example resolves to a private address (10.0.0.1), which is refused"
    )
    assert asked == [("ok.example", 443), ("mixed.example", 443)]


def test_a_literal_is_its_own_answer_and_never_resolved() -> None:
    def resolve(host: str, port: int) -> list[str]:
        raise AssertionError("a literal address is never resolved")

    policy = AddressPolicy(allow_loopback=True, resolve=resolve)
    assert policy.addresses("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(AddressRefusedError):
        AddressPolicy(allow_loopback=False, resolve=resolve).addresses("::1", 80)


def test_no_answer_and_a_failing_resolver_are_refusals() -> None:
    def fails(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(AddressRefusedError, match="could not be resolved"):
        AddressPolicy(allow_loopback=False, resolve=fails).addresses("x.example", 443)
    with pytest.raises(AddressRefusedError, match="resolved to no address"):
        AddressPolicy(allow_loopback=False, resolve=lambda h, p: []).addresses("x.example", 443)
