"""Per-call state of one structure call, and the leniency rule, written once.

The converter is shared (one per :class:`~mcpclient.Limits` value, cached);
what one conversion counts (its binary items, its warnings, the digests it
already computed) lives in a :class:`Call` that the entry function opens for
the duration of that one structure call and the hooks find through a
:class:`contextvars.ContextVar`, never in a module global. The leniency rule
(a wrong type reads as the empty value) is written here once, as the hooks
every topic module builds its fields from.

Thread safety: a :class:`Call` belongs to the one thread (context) running
its conversion; the context variable keeps concurrent conversions apart.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mcpclient._core.canonical import compact_decoded
from mcpclient._core.checks import JSONText
from mcpclient._core.limits import bound
from mcpclient.definition import Limits

__all__ = [
    "MAX_META_BYTES",
    "MAX_SHORT_BYTES",
    "Call",
    "Warnings",
    "current",
    "enter",
    "finite",
    "flag",
    "is_object",
    "json_depth",
    "leave",
    "opened",
    "optional_flag",
    "passthrough",
    "raw",
    "text",
]

#: Bound on short server strings: names, MIME types, titles in content.
MAX_SHORT_BYTES = 1024
#: Bound on a ``_meta`` (or passed-through metadata) object kept on a value.
MAX_META_BYTES = 16 * 1024


class Warnings:
    """A bounded warning list that counts what it dropped.

    ``cap`` counts the summary line: at most ``cap - 1`` texts are kept, each
    bounded to ``item_bytes``.
    """

    __slots__ = ("cap", "dropped", "item_bytes", "items")

    def __init__(self, cap: int, item_bytes: int = 256) -> None:
        self.cap = cap
        self.item_bytes = item_bytes
        self.items: list[str] = []
        self.dropped = 0

    def add(self, text: str) -> None:
        """Keep ``text`` (bounded) while there is room; count it otherwise."""
        if len(self.items) < self.cap - 1:
            self.items.append(bound(text, self.item_bytes))
        else:
            self.dropped += 1

    def extend(self, other: Warnings) -> None:
        """Take ``other``'s warnings (and its dropped count) into this list."""
        for item in other.items:
            self.add(item)
        self.dropped += other.dropped

    def result(self) -> tuple[str, ...]:
        """The warnings of a result, with a short summary of what was dropped."""
        if self.dropped:
            return (*self.items, f"{self.dropped} further warning(s) dropped")
        return tuple(self.items)

    def summary(self, what: str) -> tuple[str, ...]:
        """The warnings of a catalog, with a summary naming the cap."""
        if not self.dropped:
            return tuple(self.items)
        total = len(self.items) + self.dropped
        return (
            *self.items,
            f"{self.dropped} further {what} were discarded without their text"
            f" ({total} raised in all, over this client's {self.cap} warning cap)",
        )


class Call:
    """What one structure call counts: binary items, warnings, memoized digests."""

    __slots__ = ("binary_items", "digests", "limits", "warnings")

    def __init__(self, limits: Limits, warnings: Warnings) -> None:
        self.limits = limits
        self.warnings = warnings
        self.binary_items = 0
        #: canonical schema text -> the schema as read (measured, digested), for one discovery.
        self.digests: dict[str, Any] = {}


_CALL: contextvars.ContextVar[Call] = contextvars.ContextVar("mcpclient_wire_call")


def current() -> Call:
    """The :class:`Call` the running structure call opened."""
    return _CALL.get()


def enter(call: Call) -> contextvars.Token[Call]:
    """Make ``call`` the hooks' state until :func:`leave` (a hot loop's cheap :func:`opened`)."""
    return _CALL.set(call)


def leave(token: contextvars.Token[Call]) -> None:
    """End what :func:`enter` began."""
    _CALL.reset(token)


@contextlib.contextmanager
def opened(call: Call) -> Iterator[Call]:
    """Make ``call`` the hooks' state for the duration of one structure call."""
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)


# -- the leniency rule: a wrong type reads as the empty value, never a crash ------------
#
# Every hook that reads a field of the wire is one of these (or is built on
# them): a server's value of the wrong type is taken as absent.

Hook = Callable[[Any, Any], Any]


def text(limit: int | None = None) -> Callable[[Any, Any], str]:
    """A string field, bounded to ``limit`` UTF-8 bytes (unbounded: ``None``); else ``""``."""
    if limit is None:

        def unbounded(value: Any, _: Any) -> str:
            return value if isinstance(value, str) else ""

        return unbounded

    def bounded(value: Any, _: Any) -> str:
        if not isinstance(value, str):
            return ""
        return value if len(value) * 4 <= limit else bound(value, limit)

    return bounded


def flag(value: Any, _: Any) -> bool:
    """A boolean field: ``true`` only when it is the JSON ``true``."""
    return value is True


def optional_flag(value: Any, _: Any) -> bool | None:
    """A tri-state boolean field: ``None`` unless it is a JSON boolean."""
    return value if isinstance(value, bool) else None


def is_object(value: Any, _: Any) -> bool:
    """A presence field (a capability): advertised only as a JSON object."""
    return isinstance(value, Mapping)


def raw(value: Any, _: Any) -> Any:
    """A field its reader judges itself (the gate names what is wrong)."""
    return value


def finite(value: Any) -> float | None:
    """A finite float from a JSON number, else ``None`` (huge ints overflow floats)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def passthrough(value: Any, kinds: type | tuple[type, ...] = dict) -> JSONText | None:
    """Metadata kept verbatim when it is JSON of the right kind and small, else ``None``."""
    if not isinstance(value, kinds):
        return None
    try:
        text = compact_decoded(value)
    except (TypeError, ValueError, RecursionError):
        return None  # metadata is passed through when it can be, never fatal
    return JSONText(text) if len(text) <= MAX_META_BYTES else None


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value`` (a scalar is 0, ``[]`` is 1); stops past ``limit``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest
