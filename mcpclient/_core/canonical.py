"""Canonical JSON encodings: compact text for storage, RFC 8785 bytes for digests.

Two encodings live here, for two different jobs:

* :func:`compact` is how frozen public values hold a JSON value (a schema, a
  structured result): a stable, readable text that decodes to a fresh copy on
  every access, so no caller can mutate a catalog shared across threads.
* :func:`jcs` is what identity is computed over. A digest must not move when a
  server merely reorders keys or changes whitespace, so schema digests are taken
  over RFC 8785 (JSON Canonicalization Scheme) bytes rather than server bytes.
  The one deliberate deviation from RFC 8785: an integer outside +/-2**53 is
  written as its exact decimal digits instead of being refused (DESIGN.md
  section 7, "Identity"), because a schema may legitimately carry such a bound
  and refusing it would fail the whole catalog.

Both are pure functions over plain JSON values (``None``, ``bool``, ``int``,
``float``, ``str``, ``list``/``tuple``, ``dict`` with ``str`` keys). Callers bound
nesting depth before calling; recursion here follows the value's depth.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence

from mcpclient._core.jsonio import c_core

__all__ = ["compact", "compact_decoded", "es_number", "jcs"]

# RFC 8785 section 3.2.2.2: only '"', '\\' and C0 controls are escaped; five
# controls have short forms, the rest use \u00xx with lowercase hex.
_ESCAPES: dict[str, str] = {chr(i): f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update(
    {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
)
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
# A Python str holding any surrogate code point cannot be encoded as UTF-8:
# either a lone surrogate, or a pair that was never combined.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def compact(value: object) -> str:
    """Return ``value`` as compact JSON text with sorted keys.

    Used to hold JSON values inside frozen public values. Non-ASCII characters
    are kept as they are (``ensure_ascii=False``).

    Args:
        value: A JSON value.

    Returns:
        JSON text with keys sorted and separators ``","`` and ``":"``.

    Raises:
        ValueError: If ``value`` contains NaN or an infinity.
        TypeError: If ``value`` contains a type JSON cannot represent.
    """
    return _COMPACT(value)


# One encoder for every call: json.dumps would build an identical one each time.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
_COMPACT = _CANONICAL.encode


def compact_decoded(value: object) -> str:
    """:func:`compact` for a value decoded from JSON text (acyclic by construction).

    The same text, without the circular-reference bookkeeping (and the
    encoder set-up) :func:`compact` pays on every call: what the wire reads
    cannot refer to itself. A value that could (one a caller built) goes
    through :func:`compact`.

    Raises:
        ValueError: If ``value`` contains NaN or an infinity.
        TypeError: If ``value`` contains a type JSON cannot represent.
    """
    if _C_COMPACT is None:  # pragma: no cover - CPython always has the C encoder
        return _COMPACT(value)
    if isinstance(value, str):
        return _COMPACT(value)
    return "".join(_C_COMPACT(value, 0))


_C_COMPACT = c_core(_CANONICAL)
_C_AS_READ = c_core(json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False))


def as_read(value: object) -> str:
    """Compact JSON text of a decoded value, its keys in the order they were read.

    Not canonical (two equal objects may differ in key order), but equal
    text means an equal value, and it is about twice as cheap as
    :func:`compact_decoded` (no sorting): a memo key that finds a value read
    before in the same order without sorting it again.

    Raises:
        ValueError, TypeError: as :func:`compact_decoded`.
    """
    if _C_AS_READ is None or isinstance(value, str):  # pragma: no cover - C encoder missing
        return compact_decoded(value)
    return "".join(_C_AS_READ(value, 0))


def jcs(value: object) -> bytes:
    """Return the RFC 8785 canonical UTF-8 encoding of ``value``.

    Object keys are sorted by UTF-16 code units, floats use the ECMAScript
    ``Number.prototype.toString`` form, strings are escaped per RFC 8785, and
    integers are written as exact decimal digits whatever their magnitude.

    Args:
        value: A JSON value built from ``None``, ``bool``, ``int``, ``float``,
            ``str``, ``list``/``tuple`` and ``dict`` with ``str`` keys.

    Returns:
        The canonical bytes.

    Raises:
        ValueError: On NaN or an infinity, on a string or key holding a
            surrogate code point, on a non-``str`` key, or on any other type.
    """
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts).encode("utf-8")


def _encode(value: object, out: list[str]) -> None:
    """Append the canonical text of ``value`` to ``out``."""
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        # bool was handled above; int.__repr__ avoids an IntEnum's own str().
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(es_number(value))
    elif isinstance(value, Mapping):
        _encode_object(value, out)
    elif isinstance(value, list | tuple):
        _encode_array(value, out)
    else:
        raise ValueError(f"cannot canonicalize a value of type {type(value).__name__}")


def _encode_object(value: Mapping[object, object], out: list[str]) -> None:
    """Append a JSON object with keys in UTF-16 code-unit order."""
    keys: list[str] = []
    for key in value:
        if not isinstance(key, str):
            raise ValueError(f"object key of type {type(key).__name__} is not a string")
        if _SURROGATE.search(key):
            raise ValueError("object key contains a lone surrogate")
        keys.append(key)
    # Big-endian UTF-16 bytes compare exactly like their code units.
    keys.sort(key=lambda k: k.encode("utf-16-be"))
    out.append("{")
    for index, key in enumerate(keys):
        if index:
            out.append(",")
        out.append(_string(key))
        out.append(":")
        _encode(value[key], out)
    out.append("}")


def _encode_array(value: Sequence[object], out: list[str]) -> None:
    """Append a JSON array, elements in their given order."""
    out.append("[")
    for index, item in enumerate(value):
        if index:
            out.append(",")
        _encode(item, out)
    out.append("]")


def _string(text: str) -> str:
    """Return ``text`` as an RFC 8785 JSON string literal."""
    if _SURROGATE.search(text):
        raise ValueError("string contains a lone surrogate")
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group()], text) + '"'


def es_number(number: float) -> str:
    """Format a float like ECMAScript ``Number.prototype.toString``.

    Uses the shortest digit string that round-trips (Python's ``repr``), then
    places the decimal point per ECMA-262 ``Number::toString``: plain notation
    for decimal exponents in ``[-6, 21)``, otherwise ``d.ddde+N`` / ``de-N``.

    Args:
        number: A finite float.

    Returns:
        The ECMAScript text, e.g. ``"1e+21"``, ``"1e-7"``, ``"0.000001"``;
        negative zero is ``"0"``.

    Raises:
        ValueError: If ``number`` is NaN or an infinity.
    """
    if not math.isfinite(number):
        raise ValueError("NaN and infinities have no JSON form")
    if number == 0:
        return "0"
    if number < 0:
        return "-" + es_number(-number)
    digits, point = _shortest_digits(number)
    # ECMA-262: value = 0.<digits> * 10**point; k digits, n = point.
    k = len(digits)
    n = point
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{sign}{abs(exponent)}"


def _shortest_digits(number: float) -> tuple[str, int]:
    """Return (significant digits, n) with ``number == 0.digits * 10**n``.

    ``number`` must be finite and positive. ``repr`` gives the shortest string
    that round-trips, choosing the closest one when several are that short,
    which is the digit choice ECMA-262 asks for.
    """
    text = float.__repr__(number)
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0"), point
