"""``key=value`` arguments, coerced by a tool's input schema.

Each value is read as the type the schema gives its property: numbers,
booleans and ``null`` as JSON scalars, arrays and objects as JSON text, and
strings exactly as given. A property the schema does not type (or does not
list) takes the string as given; ``--args JSON`` is the way to send anything
else. A value that does not fit is an ``invalid_arguments`` failure (exit 6)
naming the key, before anything is sent.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from mcpclient._core.limits import depth_exceeds
from mcpclient.cli.envelope import CliError, usage_error
from mcpclient.cli.exits import ExitCode

__all__ = [
    "coerce",
    "merge_arguments",
    "parse_json_object",
    "parse_pairs",
    "positive_seconds",
    "schema_types",
]

#: The deepest JSON an argument may nest (a tool's arguments never need more).
MAX_DEPTH = 64
_JSON_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")


def invalid(message: str) -> CliError:
    """An argument that does not fit (exit 6)."""
    return CliError(message, error_class="invalid_arguments", exit_code=ExitCode.INVALID_ARGUMENTS)


def parse_pairs(pairs: Iterable[str]) -> list[tuple[str, str]]:
    """Split ``key=value`` words at the first ``=``; a word without one is a usage error."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for word in pairs:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise usage_error(f"expected key=value, got {word!r}")
        if key in seen:
            raise usage_error(f"argument {key!r} is given twice")
        seen.add(key)
        out.append((key, value))
    return out


def _types_of(schema: Any, depth: int = 0) -> list[str]:
    if not isinstance(schema, Mapping) or depth > 8:
        return []
    found: list[str] = []
    kind = schema.get("type")
    if isinstance(kind, str):
        found.append(kind)
    elif isinstance(kind, list):
        found.extend(k for k in kind if isinstance(k, str))
    for union in ("anyOf", "oneOf"):
        options = schema.get(union)
        if isinstance(options, list):
            for option in options:
                found.extend(_types_of(option, depth + 1))
    for key in ("enum", "const"):
        if key in schema:
            values = (
                schema[key] if key == "enum" and isinstance(schema[key], list) else [schema[key]]
            )
            found.extend(_json_type(v) for v in values)
    return [k for k in dict.fromkeys(found) if k in _JSON_TYPES]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def schema_types(input_schema: Any, key: str) -> list[str]:
    """The JSON types the input schema allows for property ``key`` (``[]``: untyped)."""
    if not isinstance(input_schema, Mapping):
        return []
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return _types_of(properties.get(key))


def _strict_json(text: str) -> Any:
    """JSON without NaN/Infinity, nested at most ``MAX_DEPTH`` levels.

    Raises:
        ValueError: not JSON, or nested deeper (json recurses per level, so
            deep text would otherwise end in ``RecursionError``).
    """

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        value = json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if depth_exceeds(value, MAX_DEPTH):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _as(kind: str, text: str) -> tuple[bool, Any]:
    """Read ``text`` as JSON type ``kind``: (fits, value)."""
    if kind == "string":
        return True, text
    try:
        value = _strict_json(text)
    except ValueError:
        return False, None
    if kind == "integer":
        fits = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
        return fits, int(value) if fits else None
    if kind == "number":
        fits = isinstance(value, int | float) and not isinstance(value, bool)
        return fits and math.isfinite(value), value
    return _json_type(value) == kind, value


def coerce(input_schema: Any, key: str, text: str) -> Any:
    """The value of ``key=text`` for a tool with ``input_schema``.

    Raises:
        CliError: ``invalid_arguments``: ``text`` fits none of the property's types.
    """
    types = schema_types(input_schema, key)
    if not types or "string" in types:
        # Strings as given: a property that may be a string is never guessed
        # to be a number, and an untyped one is a string.
        return text
    # The most specific reading first: "1" is an integer before it is a number.
    for kind in ("integer", "number", "boolean", "null", "array", "object"):
        if kind in types:
            fits, value = _as(kind, text)
            if fits:
                return value
    expected = " or ".join(types)
    raise invalid(f"argument {key!r}: expected {expected} (as JSON), got {text!r}")


def parse_json_object(text: str, where: str) -> dict[str, Any]:
    """``--args`` text as a JSON object.

    Raises:
        CliError: ``invalid_arguments``: not JSON, or not an object.
    """
    try:
        value = _strict_json(text)
    except ValueError as exc:
        raise invalid(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise invalid(f"{where} must be a JSON object, got {_json_type(value)}")
    return value


def merge_arguments(
    input_schema: Any, base: Mapping[str, Any] | None, pairs: Iterable[tuple[str, str]]
) -> dict[str, Any]:
    """``--args`` (``base``) with each ``key=value`` coerced and laid over it."""
    arguments = dict(base or {})
    for key, text in pairs:
        arguments[key] = coerce(input_schema, key, text)
    return arguments


def positive_seconds(text: str) -> float:
    """A ``--timeout``/``--idle-timeout`` value: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value
