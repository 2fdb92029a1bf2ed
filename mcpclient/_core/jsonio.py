"""Strict JSON at the frame boundary.

Python's ``json`` accepts what JSON forbids: ``NaN``/``Infinity`` and lone
surrogates (``"\\ud800"`` decodes, then ``.encode()`` fails far away, inside
truncation or digest code), and it raises ``RecursionError`` on deep nesting.
Every inbound frame is decoded here, once, and every such case becomes a
:class:`FrameError`; every outbound message is encoded here, once, refusing
NaN.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

__all__ = ["FrameError", "c_core", "decode", "encode"]


class FrameError(ValueError):
    """An inbound frame is not valid JSON text (a protocol failure, not a crash)."""


def _refuse_constant(name: str) -> Any:
    raise FrameError(f"JSON constant {name} is not allowed")


def _finite_float(text: str) -> float:
    # 1e400 is valid JSON but becomes inf, which no encoder takes back: refuse
    # it here, at the frame boundary, like NaN.
    value = float(text)
    if math.isinf(value):
        raise FrameError("a JSON number is out of the range of a double")
    return value


_decoder = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
_encoder = json.JSONEncoder(allow_nan=False, separators=(",", ":"), ensure_ascii=True)


_scan: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]


def _scanned(text: str) -> Any:
    """``_decoder.decode(text)``, without its two whitespace matches in the usual case.

    A frame normally starts with its value and ends with it; anything else
    (surrounding whitespace, trailing data, no value at all) takes the
    decoder's own path, which accepts or refuses it exactly as before.
    """
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return _decoder.decode(text)  # leading whitespace, or no value: its verdict
    if end != len(text):
        return _decoder.decode(text)
    return value


def decode(frame: bytes | bytearray | str) -> Any:
    """Decode one frame, refusing invalid UTF-8, NaN, lone surrogates and deep nesting.

    A ``str`` frame is text a transport has already decoded strictly from
    UTF-8 (an SSE event's data): it is not encoded and decoded again.

    Raises:
        FrameError: the frame is not acceptable JSON.
    """
    if isinstance(frame, str):
        text = frame
    else:
        try:
            text = frame.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrameError(f"frame is not valid UTF-8 (byte {exc.start})") from None
    try:
        value = _scanned(text)
    except RecursionError:
        raise FrameError("frame nests JSON deeper than this client accepts") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        if isinstance(exc, FrameError):
            raise
        raise FrameError(
            f"frame is not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})"
        ) from None
    # Lone surrogates can only come from \uD8xx..\uDFxx escapes; scan only then.
    # A one-character search runs at memchr speed, ~20x a three-character one,
    # and most frames (a large text result included) have no backslash at all.
    if "\\" in text and ("\\ud" in text or "\\uD" in text) and _has_lone_surrogate(value):
        raise FrameError("frame carries a lone UTF-16 surrogate")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def c_core(encoder: json.JSONEncoder) -> Callable[[Any, int], Any] | None:
    """``encoder``'s C core, built once (``JSONEncoder.encode`` builds it per call).

    ``"".join(core(value, 0))`` is ``encoder.encode(value)``. Reusable because
    it keeps no state between calls: no circular-reference markers (a cycle
    ends in ``RecursionError`` instead; callers translate it). ``None`` where
    the C accelerator is missing, or where the core does not write exactly
    what ``encoder`` does on a sample (an indenting encoder; a changed
    accelerator signature: a test checks that it is in use on the supported
    Pythons).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return None
    sample = {"b": [1, -2.5, "\u00e9\n", None, True, {"a": []}], "a": 1e300}
    strings = json.encoder
    quote = strings.encode_basestring_ascii if encoder.ensure_ascii else strings.encode_basestring
    try:
        core = make(
            None, encoder.default, quote, None, encoder.key_separator, encoder.item_separator,
            encoder.sort_keys, encoder.skipkeys, encoder.allow_nan,
        )  # fmt: skip
        if "".join(core(sample, 0)) != encoder.encode(sample):
            return None  # pragma: no cover - a changed accelerator: the plain path
    except Exception:  # pragma: no cover - a changed signature: the plain path
        return None
    return core  # type: ignore[no-any-return]


_core = c_core(_encoder)
_encode_str = json.encoder.encode_basestring_ascii


def encode(message: Any) -> bytes:
    """Encode one outbound message as compact ASCII JSON.

    Raises:
        ValueError: the message holds NaN/Infinity, or refers to itself.
        TypeError: the message holds a value of a non-JSON type.
    """
    if type(message) is str:
        return _encode_str(message).encode("ascii")
    try:
        if _core is None:  # pragma: no cover - see c_core
            return _encoder.encode(message).encode("ascii")
        return "".join(_core(message, 0)).encode("ascii")
    except RecursionError:
        raise ValueError("the message nests too deeply, or refers to itself") from None
