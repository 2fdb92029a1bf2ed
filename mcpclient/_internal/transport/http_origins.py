"""What may be sent where: origins, header validity, admitted addresses.

An origin is ``(scheme, host, port)`` with the default port filled in; it is
also the only form of a URL that messages, logs and reprs ever show (never a
path, query or userinfo). A header is sent only with a token name and a value
free of CR, LF, NUL and other controls, so no caller or server-supplied value
can split a request. An :class:`AddressPolicy` says which IP addresses a
connection may go to (the connect hook checks the address it connects to).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import attrs

from mcpclient.errors import ConfigError

__all__ = [
    "AddressPolicy",
    "AddressRefusedError",
    "Resolver",
    "address_kind",
    "check_header",
    "origin_key",
    "origin_of",
    "show_origin",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}
#: An HTTP token (RFC 9110 §5.6.2), the whole header name.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Any character a header value may not carry: controls but TAB, DEL, and
#: anything past Latin-1 (checked on every request: a regex, not a loop).
_BAD_VALUE_CHAR = re.compile(r"[^\t\x20-\x7e\x80-\xff]")


def origin_key(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` with the default port filled in; None if unusable."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def show_origin(key: tuple[str, str, int]) -> str:
    """``scheme://host[:port]`` of an :func:`origin_key`, the default port left out."""
    scheme, host, port = key
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" if port == _DEFAULT_PORTS[scheme] else f"{scheme}://{host}:{port}"


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: the only form of a URL we ever show."""
    key = origin_key(url)
    return show_origin(key) if key is not None else "<invalid URL>"


def _bad_header_value(value: str) -> bool:
    return _BAD_VALUE_CHAR.search(value) is not None


def check_header(name: object, value: object, *, binding: str, op: str) -> None:
    """Refuse a header that could break the request's framing (the value is never shown).

    Raises:
        ConfigError: the name is not an HTTP token, or the value is not a str
            free of CR, LF, NUL and other controls.
    """
    if not isinstance(name, str) or _TOKEN.fullmatch(name) is None:
        raise ConfigError("a header name is not a valid HTTP token", binding=binding, op=op)
    if not isinstance(value, str):
        raise ConfigError(f"header {name} must have a str value", binding=binding, op=op)
    if _bad_header_value(value):
        raise ConfigError(
            f"header {name} has a value with CR, LF, NUL or another control character;"
            " the request was not sent",
            binding=binding,
            op=op,
        )


# ---------------------------------------------------------------- addresses

#: ``resolve(host, port) -> addresses``: how a name becomes IP addresses.
Resolver = Callable[[str, int], list[str]]

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefusedError(Exception):
    """Raised inside urllib3 by the connect hook: the host was never contacted.

    Attributes:
        reason: why, naming the host and the refused address (never a path).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def address_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """``public``, ``loopback``, ``private``, ``link-local`` or ``forbidden``.

    The IPv4 address inside an IPv4-mapped, NAT64 or 6to4 IPv6 address is the
    one judged (the packet goes there). CGNAT counts as private; multicast,
    unspecified, reserved and ``0.0.0.0/8`` are forbidden.
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return address_kind(embedded)
    if address.is_loopback:  # before "reserved": ::1 lies in the reserved ::/8
        return "loopback"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return "forbidden"
    if isinstance(address, ipaddress.IPv4Address) and address in _THIS_NETWORK:
        return "forbidden"
    if address.is_link_local:
        return "link-local"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "private"
    if address.is_private or not address.is_global:
        return "private"
    return "public"


def _system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


@attrs.frozen
class AddressPolicy:
    """Which IP addresses a connection may go to; the connect hook pins the one checked.

    A host is resolved once, EVERY address of the answer must be admitted (a
    mixed public/private answer is refused as a whole), and the connection
    goes to a checked address: the name is never resolved again, so a
    DNS-rebinding answer cannot slip in. The ``Host`` header, TLS SNI and the
    certificate check keep the name.

    Attributes:
        allow_loopback: admit loopback addresses.
        allow_private_networks: admit private, CGNAT and link-local addresses.
        resolve: ``(host, port) -> addresses``; ``socket.getaddrinfo`` when None
            (tests inject one to play hostile DNS).
    """

    allow_loopback: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    allow_private_networks: bool = attrs.field(
        default=False, validator=attrs.validators.instance_of(bool)
    )
    resolve: Resolver | None = attrs.field(default=None, eq=False, repr=False)

    def refusal(self, address: str) -> str | None:
        """Why ``address`` is refused, or None when it is admitted."""
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            return "resolved to a malformed address"
        kind = address_kind(parsed)
        if (
            kind == "public"
            or (kind == "loopback" and self.allow_loopback)
            or (kind in ("private", "link-local") and self.allow_private_networks)
        ):
            return None
        return f"resolves to a {kind} address ({parsed}), which is refused"

    def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses to connect to, in the resolver's order.

        Raises:
            AddressRefusedError: unresolvable, no address, or any address refused.
        """
        try:
            ipaddress.ip_address(host)
            found = [host]  # a literal is its own answer
        except ValueError:
            try:
                found = list(dict.fromkeys((self.resolve or _system_resolve)(host, port)))
            except (OSError, UnicodeError):
                raise AddressRefusedError(f"the host {host} could not be resolved") from None
        if not found:
            raise AddressRefusedError(f"the host {host} resolved to no address")
        for address in found:
            problem = self.refusal(address)
            if problem is not None:
                raise AddressRefusedError(f"the host {host} {problem}")
        return found
