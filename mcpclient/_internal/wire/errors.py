"""cattrs' exceptions, translated in one place into this library's classified errors.

A hook refuses malformed input by raising :class:`ConversionError` (the
caller reports ``server_protocol``) or :class:`DroppedError` (one catalog item is
dropped with a warning). Anything else the generated structure functions
raise (cattrs' validation errors, a missing handler, a forbidden extra key,
or a plain ``TypeError``/``KeyError`` on input no hook expected) is turned
into a :class:`ConversionError` by :func:`translated`, or into a warning by
:func:`warning_of`: cattrs' exceptions never escape the wire package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from cattrs.errors import (
    BaseValidationError,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    StructureHandlerNotFoundError,
)

from mcpclient._internal.limits import bound
from mcpclient.errors import ConfigError

__all__ = ["ConversionError", "DroppedError", "translated", "warning_of"]


class ConversionError(ValueError):
    """A message is malformed beyond repair (the caller reports ``server_protocol``)."""


class DroppedError(Exception):
    """One item is dropped; ``reason`` completes "<item> dropped: ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: What the generated structure functions may raise on input no hook expected.
_STRUCTURE_ERRORS = (
    BaseValidationError,  # ClassValidationError, IterableValidationError
    StructureHandlerNotFoundError,
    ForbiddenExtraKeysError,
    ConfigError,  # a public value's validator refused what a hook let through
    TypeError,
    KeyError,
    AttributeError,
    ValueError,
    RecursionError,
)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unexpected keys {sorted(map(str, exc.extra_fields))[:4]}"
    if isinstance(exc, StructureHandlerNotFoundError):
        return "a value of a shape this client cannot read"
    if isinstance(exc, ClassValidationError | IterableValidationError):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _describe(inner) if inner is not exc else "a malformed value"
    return f"a malformed value ({type(exc).__name__})"


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Run one structure call; any failure becomes a :class:`ConversionError` on ``what``.

    Raises:
        ConversionError: the hooks refused the input, or cattrs could not
            structure it.
    """
    try:
        yield
    except (ConversionError, DroppedError):
        raise
    except _STRUCTURE_ERRORS as exc:
        raise ConversionError(bound(f"{what}: {_describe(exc)}", 512)) from None


def warning_of(what: str, exc: BaseException) -> str:
    """The warning text for a failure that only drops part of a value."""
    if isinstance(exc, DroppedError):
        return f"{what} dropped: {exc.reason}"
    return f"{what} dropped: {_describe(exc)}"
