"""The token store's records: tokens and client registrations as JSON, versioned.

A record is the value's attrs fields by name, plus ``"version":
FORMAT_VERSION``: the format every mcpclient so far has written, e.g.::

    {"version": 1, "access_token": "...", "token_type": "Bearer",
     "refresh_token": null, "expires_at": 1767225600.0, "scopes": ["read"],
     "issuer": "https://as.example", "resource": "https://mcp.example/mcp"}

Reading one takes a JSON object of this very version (another version, such
as one a newer mcpclient wrote, is refused, never misread) with every field
present (except a field added to the format later, marked :data:`ADDED` in
its attrs metadata: a record written before it reads as the field's default):
strings as strings, numbers as numbers, lists as lists. The value's
own validators then judge the contents (token bounds, header-safe tokens,
scope syntax). A refused record raises :class:`~mcpclient.errors.AuthError`
(``auth_failed``) "stored <kind> is malformed: ..." naming the field, never a
value.

The value classes are passed in (:mod:`mcpclient.auth.credentials` defines
them, above this layer); any attrs class of strings, numbers and string
tuples maps.

Records are structured by :func:`mcpclient._internal.wire.errors.structure`,
which translates cattrs' exceptions (every OAuth mapping shares it); nothing
of cattrs escapes.

Thread safety: the converter is built once and never changed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn

from mcpclient._internal.wire.errors import FieldError, Messages, structure
from mcpclient.errors import AuthError, FailureClass

_T = TypeVar("_T")

__all__ = [
    "ADDED",
    "FORMAT_VERSION",
    "VERSION_KEY",
    "IssuerBinding",
    "malformed",
    "structure_record",
    "unstructure_record",
]

# --- records ---

#: The format version written into every record.
FORMAT_VERSION = 1
#: The record field holding it (records have carried it since the first release).
VERSION_KEY = "version"
#: The attrs metadata key of a field added to the format after records were
#: first written (``metadata={ADDED: True}``, with a default): it may be absent.
ADDED = "mcpclient.record_added"

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


@attrs.frozen
class IssuerBinding:
    """The record binding a pre-registered ``client_id`` to its authorization server."""

    client_id: str
    issuer: str


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
    names = [field.name for field in attrs.fields(cls) if not field.metadata.get(ADDED)]

    def hook(data: Mapping[str, Any], kind: Any) -> Any:
        version = data.get(VERSION_KEY)
        if type(version) is not int or version != FORMAT_VERSION:
            raise FieldError(_MALFORMED + _shown_version(version))
        # Every field is written, so every field is required, defaults or not
        # (but one added later: a record from before it has none).
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
