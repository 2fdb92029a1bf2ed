"""Binding events: what happened, when, to which binding.

Events are frozen values delivered in order to ``Handlers.event`` on the
binding's event lane. No event carries arguments, results, schemas, prompts,
URLs with credentials, or secrets; server text in them is bounded and has
control characters replaced. ``at`` is a wall-clock ``time.time()`` stamp.
"""

from __future__ import annotations

from typing import Any

import attrs

from mcpclient._core import checks
from mcpclient.catalog import ServerIdentity
from mcpclient.definition import LogLevel
from mcpclient.errors import FailureClass
from mcpclient.handlers import ElicitAction, ElicitMode, SampleOutcome
from mcpclient.status import State

__all__ = [
    "CatalogAdopted",
    "CatalogCandidate",
    "CatalogRefreshed",
    "CatalogRejected",
    "CatalogStale",
    "ConnectionLost",
    "ConnectionRestored",
    "ElicitationRequested",
    "ElicitationResolved",
    "Event",
    "KeepaliveFailed",
    "KeepaliveLost",
    "KeepaliveRecovered",
    "RequestProgress",
    "ResourceUpdated",
    "SamplingRequested",
    "SamplingResolved",
    "ServerLog",
    "StateChanged",
]


def _binding() -> Any:
    return attrs.field(validator=checks.is_str)


def _at() -> Any:
    return attrs.field(validator=checks.finite_number)


def _gen() -> Any:
    return attrs.field(validator=checks.non_negative_int)


def _text() -> Any:
    return attrs.field(default="", validator=checks.is_str)


@attrs.frozen(kw_only=True)
class StateChanged:
    """The binding moved from one state to another (delivered in commit order)."""

    binding: str = _binding()
    from_state: State = attrs.field(validator=checks.instance_of(State))
    to_state: State = attrs.field(validator=checks.instance_of(State))
    at: float = _at()


@attrs.frozen(kw_only=True)
class CatalogStale:
    """The server announced a change to a family: "tools", "prompts" or "resources"."""

    binding: str = _binding()
    family: str = attrs.field(validator=checks.is_str)
    at: float = _at()


@attrs.frozen(kw_only=True)
class CatalogCandidate:
    """A validated generation differs from the adopted one and awaits ``adopt``."""

    binding: str = _binding()
    generation: int = _gen()
    digest: str = attrs.field(validator=checks.is_str)
    adopted: int = _gen()
    at: float = _at()


@attrs.frozen(kw_only=True)
class CatalogRefreshed:
    """A refresh found the adopted generation unchanged."""

    binding: str = _binding()
    generation: int = _gen()
    digest: str = attrs.field(validator=checks.is_str)
    at: float = _at()


@attrs.frozen(kw_only=True)
class CatalogAdopted:
    """A generation was adopted (``previous`` is 0 for the first)."""

    binding: str = _binding()
    generation: int = _gen()
    digest: str = attrs.field(validator=checks.is_str)
    previous: int = _gen()
    at: float = _at()


@attrs.frozen(kw_only=True)
class CatalogRejected:
    """A refresh failed; the adopted generation is untouched."""

    binding: str = _binding()
    failure_class: FailureClass = attrs.field(validator=checks.instance_of(FailureClass))
    message: str = _text()
    adopted: int = _gen()
    retrying: bool = attrs.field(validator=checks.is_bool)
    at: float = _at()


@attrs.frozen(kw_only=True)
class ConnectionLost:
    """The connection ended; ``retrying`` says whether a reconnect will follow."""

    binding: str = _binding()
    failure_class: FailureClass = attrs.field(validator=checks.instance_of(FailureClass))
    message: str = _text()
    adopted: int = _gen()
    retrying: bool = attrs.field(validator=checks.is_bool)
    at: float = _at()


@attrs.frozen(kw_only=True)
class ConnectionRestored:
    """The connection is back; ``drift`` describes a changed server identity."""

    binding: str = _binding()
    server: ServerIdentity = attrs.field(validator=checks.instance_of(ServerIdentity))
    drift: str = _text()
    adopted: int = _gen()
    generation: int = _gen()
    at: float = _at()


@attrs.frozen(kw_only=True)
class KeepaliveFailed:
    """A keepalive ``ping`` of an idle connection failed; ``failures`` in a row so far."""

    binding: str = _binding()
    failures: int = attrs.field(validator=checks.positive_int)
    problem: str = _text()
    at: float = _at()


@attrs.frozen(kw_only=True)
class KeepaliveRecovered:
    """A keepalive ``ping`` was answered after ``failures`` failed ones."""

    binding: str = _binding()
    failures: int = attrs.field(validator=checks.positive_int)
    at: float = _at()


@attrs.frozen(kw_only=True)
class KeepaliveLost:
    """``failures`` keepalive pings failed in a row: the connection is given up as lost.

    ``ConnectionLost`` follows, and the reconnect policy applies.
    """

    binding: str = _binding()
    failures: int = attrs.field(validator=checks.positive_int)
    at: float = _at()


@attrs.frozen(kw_only=True)
class ServerLog:
    """A server log message (also given to ``Handlers.log``).

    ``text`` is the bounded message with control characters replaced;
    ``data`` is the server's raw JSON value (a fresh copy on each access), or
    ``None`` when it sent none or its JSON was over
    ``Limits.max_log_message_bytes`` (then dropped, with a logged warning).
    """

    binding: str = _binding()
    level: LogLevel = attrs.field(validator=checks.instance_of(LogLevel))
    logger: str = _text()
    text: str = _text()
    _data: Any = checks.json_field()
    at: float = _at()

    @property
    def data(self) -> Any:
        """The server's raw log value (a fresh copy), or ``None``."""
        return checks.decode_json(self._data)


@attrs.frozen(kw_only=True)
class RequestProgress:
    """A progress report for a call that asked for progress."""

    binding: str = _binding()
    progress: float = attrs.field(validator=checks.finite_number)
    total: float = attrs.field(default=0.0, validator=checks.finite_number)
    message: str = _text()
    at: float = _at()


@attrs.frozen(kw_only=True)
class ResourceUpdated:
    """A subscribed resource changed (``uri`` bounded, userinfo and query removed)."""

    binding: str = _binding()
    uri: str = attrs.field(validator=checks.is_str)
    at: float = _at()


@attrs.frozen(kw_only=True)
class ElicitationRequested:
    """An elicitation reached the handler."""

    binding: str = _binding()
    mode: ElicitMode = attrs.field(validator=checks.instance_of(ElicitMode))
    at: float = _at()


@attrs.frozen(kw_only=True)
class ElicitationResolved:
    """An elicitation was answered; ``action`` is what the server was told.

    ``action`` is ``CANCEL`` when the host's answer could not be sent (an
    answer that does not satisfy the form, a handler that raised or ran out
    of time) and ``None`` only when the request was refused with an error
    instead of being answered. ``problem`` says why the handler's answer was
    not sent (the field and the rule, never a value): bounded text, ``""``
    when it was sent.
    """

    binding: str = _binding()
    mode: ElicitMode = attrs.field(validator=checks.instance_of(ElicitMode))
    action: ElicitAction | None = attrs.field(validator=checks.optional_instance_of(ElicitAction))
    duration: float = attrs.field(validator=checks.finite_number)
    problem: str = _text()
    at: float = _at()


@attrs.frozen(kw_only=True)
class SamplingRequested:
    """A sampling request arrived; ``max_tokens`` is what the host granted."""

    binding: str = _binding()
    messages: int = attrs.field(validator=checks.non_negative_int)
    max_tokens: int = attrs.field(validator=checks.non_negative_int)
    depth: int = attrs.field(validator=checks.positive_int)
    at: float = _at()


@attrs.frozen(kw_only=True)
class SamplingResolved:
    """A sampling request ended."""

    binding: str = _binding()
    outcome: SampleOutcome = attrs.field(validator=checks.instance_of(SampleOutcome))
    model: str = _text()
    duration: float = attrs.field(validator=checks.finite_number)
    at: float = _at()


#: Any event.
Event = (
    StateChanged
    | CatalogStale
    | CatalogCandidate
    | CatalogRefreshed
    | CatalogAdopted
    | CatalogRejected
    | ConnectionLost
    | ConnectionRestored
    | KeepaliveFailed
    | KeepaliveRecovered
    | KeepaliveLost
    | ServerLog
    | RequestProgress
    | ResourceUpdated
    | ElicitationRequested
    | ElicitationResolved
    | SamplingRequested
    | SamplingResolved
)
