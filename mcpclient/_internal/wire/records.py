"""The token store's records: tokens and client registrations as JSON, versioned.

A record is the value's attrs fields by name, plus ``"version":
FORMAT_VERSION``: the format every mcpclient so far has written, e.g.::

    {"version": 1, "access_token": "...", "token_type": "Bearer",
     "refresh_token": null, "expires_at": 1767225600.0, "scopes": ["read"],
     "issuer": "https://as.example", "resource": "https://mcp.example/mcp"}

Reading one takes a JSON object of this very version (another version, such
as one a newer mcpclient wrote, is refused, never misread) with every field
present: strings as strings, numbers as numbers, lists as lists. The value's
own validators then judge the contents (token bounds, header-safe tokens,
scope syntax). A refused record raises :class:`~mcpclient.errors.AuthError`
(``auth_failed``) "stored <kind> is malformed: ..." naming the field, never a
value.

The value classes are passed in (:mod:`mcpclient.auth.credentials` defines
them, above this layer); any attrs class of strings, numbers and string
tuples maps.

This module also holds what every OAuth mapping shares (the records here and
the documents of :mod:`mcpclient._internal.wire.oauth`): :func:`structure`
and the one translation of cattrs' exceptions, :func:`auth_error`. Hooks
refuse a field with a :class:`FieldError` (a message template, never the
value); nothing of cattrs escapes.

Thread safety: the converter is built once and never changed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import BaseValidationError, ClassValidationError, IterableValidationError
from cattrs.gen import make_dict_structure_fn

from mcpclient.errors import AuthError, ConfigError, FailureClass

__all__ = [
    "FORMAT_VERSION",
    "VERSION_KEY",
    "FieldError",
    "Messages",
    "auth_error",
    "malformed",
    "structure",
    "structure_record",
    "unstructure_record",
]

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


def _fail(message: str) -> AuthError:
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


# --- the one translation of cattrs' exceptions (every OAuth mapping) ---


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
            return _fail(leaf.template.format_map({**words, **leaf.values}))
        if isinstance(leaf, ConfigError) and messages.refused is not None:
            return _fail(messages.refused.format_map({**words, "problem": leaf.message}))
        if isinstance(leaf, KeyError) and path:
            missing = messages.missing
            template = missing.get(path[-1], missing.get("*", messages.malformed))
            return _fail(template.format_map({**words, "field": path[-1]}))
        return _fail(messages.malformed.format_map(words))
    return _fail(messages.malformed.format_map({**context, "field": "document"}))


def structure(
    converter: cattrs.Converter,
    doc: object,
    cls: type[_T],
    messages: Messages,
    **context: str,
) -> _T:
    """``doc`` (a JSON object) structured as ``cls``, or the :func:`auth_error`."""
    if not isinstance(doc, Mapping):
        raise _fail(messages.not_object.format_map(context))
    try:
        return converter.structure(doc, cls)
    except (BaseValidationError, FieldError, AuthError, ConfigError) as exc:
        raise auth_error(exc, messages, context) from None


# --- records ---

#: The format version written into every record.
FORMAT_VERSION = 1
#: The record field holding it (records have carried it since the first release).
VERSION_KEY = "version"

_MALFORMED = "stored {kind} is malformed: "
_MESSAGES = Messages(
    not_object=_MALFORMED + "not a JSON object",
    malformed=_MALFORMED + "{field} has the wrong type",
    missing={"*": _MALFORMED + "misses {field!r}"},
    refused=_MALFORMED + "{problem}",
)


def malformed(kind: str, problem: str) -> AuthError:
    """The error for a stored ``kind`` ("token set") that cannot be used."""
    message = f"stored {kind} is malformed: {problem}"
    return AuthError(message, failure_class=FailureClass.AUTH_FAILED)


# --- hooks ---


def _string(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise FieldError(_MALFORMED + "{field} is not a string")
    return value


def _number(value: object, _: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldError(_MALFORMED + "{field} is not a number")
    try:
        return float(value)
    except OverflowError:  # an integer beyond any float: no epoch time
        raise FieldError(_MALFORMED + "{field} is not a finite number") from None


def _strings(value: object, _: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise FieldError(_MALFORMED + "{field} is not a list")
    if not all(isinstance(item, str) for item in value):
        raise FieldError(_MALFORMED + "{field} holds a value that is not a string")
    return tuple(value)


def _shown_version(version: object) -> str:
    if isinstance(version, int) and not isinstance(version, bool) and abs(version) < 10**9:
        return f"unknown format version {version} (this mcpclient reads version {FORMAT_VERSION})"
    return "unknown format version"


def _record(cls: type[Any], converter: cattrs.Converter) -> Any:
    """The structure hook of the record class ``cls``: shape and version first."""
    inner = make_dict_structure_fn(cls, converter)
    names = [field.name for field in attrs.fields(cls)]

    def hook(data: Mapping[str, Any], kind: Any) -> Any:
        version = data.get(VERSION_KEY)
        if type(version) is not int or version != FORMAT_VERSION:
            raise FieldError(_MALFORMED + _shown_version(version))
        # Every field is written, so every field is required, defaults or not.
        for name in names:
            if name not in data:
                raise FieldError(_MALFORMED + "misses {name!r}", name=name)
        return inner(data, kind)

    return hook


def _is_strings(kind: Any) -> bool:
    return bool(kind == tuple[str, ...])


@functools.cache
def _converter() -> cattrs.Converter:
    converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
    converter.register_structure_hook(str, _string)
    converter.register_structure_hook(float, _number)
    converter.register_structure_hook_func(_is_strings, _strings)
    converter.register_unstructure_hook_func(_is_strings, list)
    # A one-argument factory: cattrs < 24 does not pass the converter.
    converter.register_structure_hook_factory(attrs.has, lambda cls: _record(cls, converter))
    return converter


# --- the record functions ---


def unstructure_record(value: Any) -> dict[str, Any]:
    """The record of the attrs ``value`` (it holds any secrets ``value`` holds)."""
    fields: dict[str, Any] = _converter().unstructure(value)
    return {VERSION_KEY: FORMAT_VERSION, **fields}


def structure_record(data: object, cls: type[_T], *, kind: str) -> _T:
    """The ``cls`` a record (:func:`unstructure_record` output, read back) holds.

    Args:
        data: the decoded JSON.
        cls: the value class (``TokenSet``, ``ClientInfo``).
        kind: what the record is, for messages ("token set").

    Raises:
        AuthError: ``auth_failed``: not a JSON object, another format
            version, a missing field, a field of the wrong type, or a value
            the class's validators refuse (the message names the field).
    """
    return structure(_converter(), data, cls, _MESSAGES, kind=kind)
