"""A minimal TOML writer for the shapes a Codex ``config.toml`` needs.

Tables of tables whose leaves are strings, booleans, numbers, arrays of
those, and sub-tables of string values. Strings are basic strings with every
control character escaped, so the output always parses back (``tomllib``)
to the same values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps"]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def _string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else _string(name)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("TOML numbers here must be finite")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _table(lines: list[str], path: list[str], table: Mapping[str, Any]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    if path and (scalars or not tables):
        if lines:
            lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in scalars:
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables:
        _table(lines, [*path, key], value)


def dumps(document: Mapping[str, Any]) -> str:
    """``document`` (nested mappings) as TOML text."""
    lines: list[str] = []
    _table(lines, [], document)
    return "\n".join(lines) + "\n"
