"""Compatibility profiles: how far a binding bends for an imperfect server."""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

from mcpclient._core import checks
from mcpclient._core.digest import profile_digest

__all__ = ["PROFILE_DEFAULT", "PROFILE_LEGACY", "PROFILE_STRICT", "Profile", "Tolerance"]

MAX_PROFILE_NAME_BYTES = 64


class Tolerance(enum.IntEnum):
    """A deviation from the specification that a profile may permit."""

    #: A tool's defective optional output schema is dropped (with a warning)
    #: instead of failing the whole catalog.
    INVALID_OUTPUT_SCHEMA = 1
    #: The deprecated HTTP+SSE transport (2024-11-05) may be used.
    LEGACY_SSE = 2
    #: Tool names that must be sanitized, truncated or de-collided to become
    #: model names are accepted instead of failing the catalog.
    DISPLAY_NAME_NORMALIZATION = 3
    #: A declared family whose list method the server does not implement
    #: (-32601, e.g. ``resources/templates/list`` of a low-level Python SDK
    #: server without a templates handler) is an empty family, with a catalog
    #: warning, instead of failing the whole catalog.
    MISSING_LIST_METHOD = 4

    def __str__(self) -> str:
        return self.name.lower()


def _tolerances(value: Iterable[Tolerance]) -> tuple[Tolerance, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise checks.fail("Profile", "tolerances", "must be a sequence of Tolerance")
    items = list(value)
    for index, item in enumerate(items):
        if not isinstance(item, Tolerance):
            raise checks.fail(
                "Profile", f"tolerances[{index}]", f"must be a Tolerance, got {item!r}"
            )
    return tuple(sorted(set(items)))


def _check_name(inst: Profile, attr: attrs.Attribute[str], value: str) -> None:
    checks.is_str(inst, attr, value)
    if not value or len(value.encode("utf-8")) > MAX_PROFILE_NAME_BYTES:
        raise checks.fail(inst, attr.name, f"must be 1..{MAX_PROFILE_NAME_BYTES} bytes")


@attrs.frozen
class Profile:
    """A named, versioned set of tolerances.

    Order and duplicates of ``tolerances`` are not significant: they are
    stored sorted and de-duplicated, so equal profiles compare equal.

    A profile's ``version`` names its set of tolerances: a shipped profile
    that gains one is a new version (its digest changes with it).

    Example:
        >>> str(PROFILE_DEFAULT)
        'default/v2'

    Thread safety: immutable.
    """

    name: str = attrs.field(validator=_check_name)
    version: int = attrs.field(validator=checks.positive_int)
    tolerances: tuple[Tolerance, ...] = attrs.field(default=(), converter=_tolerances)

    def permits(self, tolerance: Tolerance) -> bool:
        """Whether this profile allows ``tolerance``."""
        return tolerance in self.tolerances

    def digest(self) -> str:
        """The 64-hex identity digest of this profile (name, version, tolerances)."""
        return profile_digest(self.name, self.version, ((int(t), str(t)) for t in self.tolerances))

    def __str__(self) -> str:
        return f"{self.name}/v{self.version}"


#: Bends for nothing.
PROFILE_STRICT = Profile("strict", 1, ())
#: The default: drops bad output schemas, normalizes tool names, and takes a
#: declared family without its list method as empty (v2 added the last).
PROFILE_DEFAULT = Profile(
    "default",
    2,
    (
        Tolerance.INVALID_OUTPUT_SCHEMA,
        Tolerance.DISPLAY_NAME_NORMALIZATION,
        Tolerance.MISSING_LIST_METHOD,
    ),
)
#: The default plus the deprecated HTTP+SSE transport.
PROFILE_LEGACY = Profile(
    "legacy",
    2,
    (
        Tolerance.INVALID_OUTPUT_SCHEMA,
        Tolerance.LEGACY_SSE,
        Tolerance.DISPLAY_NAME_NORMALIZATION,
        Tolerance.MISSING_LIST_METHOD,
    ),
)
