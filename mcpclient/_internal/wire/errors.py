"""cattrs' exceptions, translated in one place into this library's classified errors.

A hook refuses malformed input by raising :class:`ConversionError` (the
caller reports ``server_protocol``) or :class:`DroppedError` (one catalog item is
dropped with a warning). Anything else the generated structure functions
raise (cattrs' validation errors, a missing handler, a forbidden extra key,
or a plain ``TypeError``/``KeyError`` on input no hook expected) is turned
into a :class:`ConversionError` by :func:`translated`, or into a warning by
:func:`warning_of`. For OAuth documents and the token store's records,
:func:`structure` and :func:`auth_error` turn the same exceptions into an
:class:`~mcpclient.errors.AuthError` naming the field, never a value.
cattrs' exceptions never escape the wire package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TypeVar

import attrs
import cattrs
from cattrs.errors import (
    BaseValidationError,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    StructureHandlerNotFoundError,
)

from mcpclient._core.limits import bound
from mcpclient.errors import AuthError, ConfigError, FailureClass

__all__ = [
    "ConversionError",
    "DroppedError",
    "FieldError",
    "Messages",
    "auth_error",
    "fail",
    "structure",
    "translated",
    "warning_of",
]


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


_T = TypeVar("_T")


class FieldError(Exception):
    """A hook's refusal of one field: a message template, never the value.

    :func:`auth_error` formats ``template`` with the document's context
    (``{what}``, ``{who}``, ``{kind}``), ``{field}`` (the field's path) and
    ``values`` (safe words only, such as a type name).
    """

    def __init__(self, template: str, **values: str) -> None:
        super().__init__(template)
        self.template = template
        self.values = values


def fail(message: str) -> AuthError:
    """An OAuth document or record refused (``auth_failed``)."""
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


# --- OAuth documents and the token store's records: AuthError, never a value ---


def _leaves(
    exc: BaseException, path: tuple[str, ...]
) -> Iterator[tuple[BaseException, tuple[str, ...]]]:
    """Every underlying exception of ``exc``, with the field path it was raised at."""
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from _leaves(sub, (*path, note.name))
        for sub in without:
            yield from _leaves(sub, path)
    elif isinstance(exc, IterableValidationError):
        with_index, rest = exc.group_exceptions()
        for sub, item in with_index:
            yield from _leaves(sub, (*path, f"[{item.index}]"))
        for sub in rest:
            yield from _leaves(sub, path)
    elif isinstance(exc, BaseExceptionGroup):
        for group_member in exc.exceptions:
            yield from _leaves(group_member, path)
    else:
        yield exc, path


@attrs.frozen
class Messages:
    """How one kind of document's refusals read (templates, see :func:`auth_error`).

    Attributes:
        not_object: the document is not a JSON object.
        malformed: a field cattrs itself refused.
        missing: a required field absent, by field name (``"*"``: any other).
        refused: a value class's validator refused (``{problem}``: its message).
    """

    not_object: str
    malformed: str
    missing: Mapping[str, str] = attrs.field(factory=dict)
    refused: str | None = None


def auth_error(exc: BaseException, messages: Messages, context: Mapping[str, str]) -> AuthError:
    """The classified error for a document the converter refused.

    The first problem in field order decides: an :class:`AuthError` a hook
    raised (a URL check) as it is; a :class:`FieldError` formatted with
    ``context``; a missing required field, a validator's
    :class:`~mcpclient.errors.ConfigError` (its message names the field,
    never the value), or anything else (cattrs' own refusals, whose text may
    quote the value and is dropped) with the matching template of
    ``messages``. Templates see ``{field}``; no value reaches a message.
    """
    for leaf, path in _leaves(exc, ()):
        words = {**context, "field": ".".join(path) or "document"}
        if isinstance(leaf, AuthError):
            return leaf
        if isinstance(leaf, FieldError):
            return fail(leaf.template.format_map({**words, **leaf.values}))
        if isinstance(leaf, ConfigError) and messages.refused is not None:
            return fail(messages.refused.format_map({**words, "problem": leaf.message}))
        if isinstance(leaf, KeyError) and path:
            missing = messages.missing
            template = missing.get(path[-1], missing.get("*", messages.malformed))
            return fail(template.format_map({**words, "field": path[-1]}))
        return fail(messages.malformed.format_map(words))
    return fail(messages.malformed.format_map({**context, "field": "document"}))


def structure(
    converter: cattrs.Converter,
    doc: object,
    cls: type[_T],
    messages: Messages,
    **context: str,
) -> _T:
    """``doc`` (a JSON object) structured as ``cls``, or the :func:`auth_error`."""
    if not isinstance(doc, Mapping):
        raise fail(messages.not_object.format_map(context))
    try:
        return converter.structure(doc, cls)
    except (BaseValidationError, FieldError, AuthError, ConfigError) as exc:
        raise auth_error(exc, messages, context) from None
