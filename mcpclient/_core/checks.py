"""Validators shared by the public value classes.

Every check raises :class:`~mcpclient.ConfigError` naming the class and the
field, so a bad value is refused where it is built, with a message that says
which knob is wrong. (This module sits in the public-values layer: it imports
``mcpclient.errors``.)
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from mcpclient._core.canonical import compact
from mcpclient.errors import ConfigError


def fail(inst: object, field: str, problem: str) -> ConfigError:
    """Build the ConfigError for ``<Class>.<field> <problem>``."""
    owner = inst if isinstance(inst, str) else type(inst).__name__
    return ConfigError(f"{owner}.{field} {problem}", op="validate")


def positive_number(inst: Any, attr: Any, value: Any) -> None:
    """A finite number > 0 (bool refused)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise fail(inst, attr.name, f"must be a positive number of seconds, got {value!r}")


def positive_int(inst: Any, attr: Any, value: Any) -> None:
    """An int > 0 (bool refused): there is no "unlimited"."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise fail(inst, attr.name, f"must be a positive integer, got {value!r}")


def optional_positive_number(inst: Any, attr: Any, value: Any) -> None:
    """None or a finite number > 0."""
    if value is not None:
        positive_number(inst, attr, value)


def finite_number(inst: Any, attr: Any, value: Any) -> None:
    """A finite number (bool refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise fail(inst, attr.name, f"must be a finite number, got {value!r}")


def optional_finite_number(inst: Any, attr: Any, value: Any) -> None:
    """None or a finite number."""
    if value is not None:
        finite_number(inst, attr, value)


def is_bool(inst: Any, attr: Any, value: Any) -> None:
    """Exactly True or False."""
    if not isinstance(value, bool):
        raise fail(inst, attr.name, f"must be a bool, got {type(value).__name__}")


def is_str(inst: Any, attr: Any, value: Any) -> None:
    """A str."""
    if not isinstance(value, str):
        raise fail(inst, attr.name, f"must be a str, got {type(value).__name__}")


def is_optional_str(inst: Any, attr: Any, value: Any) -> None:
    """None or a str."""
    if value is not None and not isinstance(value, str):
        raise fail(inst, attr.name, f"must be a str or None, got {type(value).__name__}")


def is_bytes(inst: Any, attr: Any, value: Any) -> None:
    """bytes."""
    if not isinstance(value, bytes):
        raise fail(inst, attr.name, f"must be bytes, got {type(value).__name__}")


def is_int(inst: Any, attr: Any, value: Any) -> None:
    """An int (bool refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(inst, attr.name, f"must be an int, got {type(value).__name__}")


def non_negative_int(inst: Any, attr: Any, value: Any) -> None:
    """An int >= 0 (bool refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(inst, attr.name, f"must be a non-negative integer, got {value!r}")


def optional_non_negative_int(inst: Any, attr: Any, value: Any) -> None:
    """None or an int >= 0 (bool refused)."""
    if value is not None:
        non_negative_int(inst, attr, value)


def is_optional_callable(inst: Any, attr: Any, value: Any) -> None:
    """None or a callable."""
    if value is not None and not callable(value):
        raise fail(inst, attr.name, f"must be callable or None, got {type(value).__name__}")


def instance_of(*types: type) -> Callable[[Any, Any, Any], None]:
    """An instance of one of ``types``."""
    names = " or ".join(t.__name__ for t in types)

    def check(inst: Any, attr: Any, value: Any) -> None:
        if not isinstance(value, types):
            raise fail(inst, attr.name, f"must be a {names}, got {type(value).__name__}")

    return check


def optional_instance_of(*types: type) -> Callable[[Any, Any, Any], None]:
    """None or an instance of one of ``types``."""
    check = instance_of(*types)

    def optional(inst: Any, attr: Any, value: Any) -> None:
        if value is not None:
            check(inst, attr, value)

    return optional


def tuple_of(*types: type) -> Callable[[Any, Any, Any], None]:
    """A tuple whose every item is an instance of one of ``types``."""
    names = " or ".join(t.__name__ for t in types)

    def check(inst: Any, attr: Any, value: Any) -> None:
        if not isinstance(value, tuple):
            raise fail(inst, attr.name, f"must be a sequence, got {type(value).__name__}")
        for index, item in enumerate(value):
            if not isinstance(item, types):
                raise fail(
                    inst, f"{attr.name}[{index}]", f"must be a {names}, got {type(item).__name__}"
                )

    return check


def to_tuple(value: object) -> object:
    """Converter: any non-string iterable becomes a tuple (strings are refused later)."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return value
    return tuple(value)


def has_no_nul(inst: object, field: str, value: str) -> None:
    """Refuse NUL bytes, which no argv, environment or path may carry."""
    if "\x00" in value:
        raise fail(inst, field, "must not contain a NUL character")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (from a URL, brackets stripped) names this machine."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class JSONText(str):
    """JSON text already in compact canonical form (a marker, not a parser)."""

    __slots__ = ()


class _NotJSON:
    """What the JSON converter leaves for the validator to refuse, naming the field."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _to_json_text(value: object) -> object:
    if value is None or isinstance(value, JSONText):
        return value
    try:
        return JSONText(compact(value))
    except (TypeError, ValueError, RecursionError) as exc:
        return _NotJSON(str(exc)[:200])


def _check_json(optional: bool) -> Callable[[Any, Any, Any], None]:
    def check(inst: Any, attr: Any, value: Any) -> None:
        field = getattr(attr, "alias", None) or attr.name.lstrip("_")
        if isinstance(value, _NotJSON):
            raise fail(inst, field, f"is not representable as JSON ({value.reason})")
        if value is None and not optional:
            raise fail(inst, field, "is required")

    return check


def json_field(*, optional: bool = True, **kwargs: Any) -> Any:
    """An attrs field holding a JSON value as compact sorted-key JSON text.

    Public values keep JSON (schemas, structured content, form answers) as
    text and decode a fresh copy on each access, so nobody can mutate a value
    shared across threads and frozen classes stay hashable.
    """
    if optional:
        kwargs.setdefault("default", None)
    return attrs.field(converter=_to_json_text, validator=_check_json(optional), **kwargs)


def decode_json(text: str | None) -> Any:
    """A fresh decoded copy of held JSON text (``None`` stays ``None``)."""
    return None if text is None else json.loads(text)


_DRIVE = re.compile(r"[A-Za-z]:")
# Percent-encoded ".", "/" and "\": a server that decodes a URI before it maps
# it to a file would see a climb the raw text hides.
_ENCODED_STEP = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)


def relative_path_problem(path: str) -> str | None:
    """Why ``path`` is not a plain relative path inside its root, or None when it is.

    Refused: empty, absolute (``/x``), a drive (``C:``), a backslash, a ``.``
    or ``..`` or empty segment, a percent-encoded ``.``, ``/`` or ``\\``, a
    control character. The one rule for skill file paths, listed and read.
    """
    if not path:
        return "is empty"
    if path.startswith("/"):
        return "is absolute"
    if "\\" in path:
        return "holds a backslash"
    if _DRIVE.match(path):
        return "names a drive"
    if any(ord(c) < 0x20 or c == "\x7f" for c in path):
        return "holds a control character"
    if _ENCODED_STEP.search(path):
        return "holds a percent-encoded '.', '/' or '\\'"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "climbs out of its root (an empty, '.' or '..' segment)"
    return None
