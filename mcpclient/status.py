"""A binding's lifecycle state and its snapshot :class:`Status`."""

from __future__ import annotations

import enum

import attrs

from mcpclient._core import checks
from mcpclient.catalog import ServerIdentity
from mcpclient.errors import FailureClass

__all__ = ["TRANSITIONS", "Failure", "State", "Status"]


class State(enum.IntEnum):
    """Where a binding is in its life. ``str()`` gives the stable identifier."""

    CONFIGURED = 1
    STARTING = 2
    AUTHENTICATING = 3
    DISCOVERING = 4
    READY = 5
    DEGRADED = 6
    RECONNECTING = 7
    FAILED = 8
    CLOSING = 9
    CLOSED = 10

    def __str__(self) -> str:
        return self.name.lower()


_S = State
#: Legal transitions (origin-client.md §4.1 with DESIGN.md §7's additions:
#: ready ⇄ authenticating). Self-transitions are never legal.
TRANSITIONS: dict[State, frozenset[State]] = {
    _S.CONFIGURED: frozenset({_S.STARTING, _S.CLOSING}),
    _S.STARTING: frozenset({_S.AUTHENTICATING, _S.DISCOVERING, _S.READY, _S.FAILED, _S.CLOSING}),
    _S.AUTHENTICATING: frozenset(
        {_S.DISCOVERING, _S.READY, _S.DEGRADED, _S.RECONNECTING, _S.FAILED, _S.CLOSING}
    ),
    _S.DISCOVERING: frozenset({_S.READY, _S.FAILED, _S.CLOSING}),
    _S.READY: frozenset({_S.AUTHENTICATING, _S.DEGRADED, _S.RECONNECTING, _S.FAILED, _S.CLOSING}),
    _S.DEGRADED: frozenset({_S.AUTHENTICATING, _S.READY, _S.RECONNECTING, _S.FAILED, _S.CLOSING}),
    _S.RECONNECTING: frozenset(
        {_S.AUTHENTICATING, _S.DISCOVERING, _S.READY, _S.DEGRADED, _S.FAILED, _S.CLOSING}
    ),
    _S.FAILED: frozenset({_S.RECONNECTING, _S.CLOSING}),
    _S.CLOSING: frozenset({_S.CLOSED}),
    _S.CLOSED: frozenset(),
}


@attrs.frozen
class Failure:
    """The last recorded failure: its class, bounded message and JSON-RPC code (if any)."""

    failure_class: FailureClass = attrs.field(validator=checks.instance_of(FailureClass))
    message: str = attrs.field(validator=checks.is_str)
    #: The server's JSON-RPC error code when the failure was its error answer.
    code: int | None = attrs.field(default=None, validator=checks.optional_instance_of(int))


@attrs.frozen(kw_only=True)
class Status:
    """A snapshot of a binding's safe metadata (never a credential).

    Attributes mirror the seed's ``Status``; ``transport_kind`` names the
    transport in use while connected (``"sse"`` once a Streamable HTTP URL fell
    back to HTTP+SSE), the configured one otherwise; ``dropped_notifications``
    counts progress and log notifications dropped by the coalescing event lane;
    ``extensions`` names the protocol extensions in use on the connection (the
    host opted in and the server declared them), sorted.
    """

    binding: str = attrs.field(validator=checks.is_str)
    state: State = attrs.field(validator=checks.instance_of(State))
    protocol_version: str = attrs.field(default="", validator=checks.is_str)
    server: ServerIdentity = attrs.field(
        factory=ServerIdentity, validator=checks.instance_of(ServerIdentity)
    )
    transport_kind: str = attrs.field(default="", validator=checks.is_str)
    redacted_origin: str = attrs.field(default="", validator=checks.is_str)
    failure: Failure | None = attrs.field(
        default=None, validator=checks.optional_instance_of(Failure)
    )
    last_change: float = attrs.field(default=0.0, validator=checks.finite_number)
    catalog_generation: int = attrs.field(default=0, validator=checks.non_negative_int)
    catalog_digest: str = attrs.field(default="", validator=checks.is_str)
    candidate_generation: int = attrs.field(default=0, validator=checks.non_negative_int)
    candidate_digest: str = attrs.field(default="", validator=checks.is_str)
    stale_families: tuple[str, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(str)
    )
    compat_profile: str = attrs.field(default="", validator=checks.is_str)
    reconnect_attempt: int = attrs.field(default=0, validator=checks.non_negative_int)
    dropped_notifications: int = attrs.field(default=0, validator=checks.non_negative_int)
    extensions: tuple[str, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(str)
    )
