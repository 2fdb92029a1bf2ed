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
from typing import Any

__all__ = ["FrameError", "decode", "encode"]


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
        value = _decoder.decode(text)
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


def encode(message: Any) -> bytes:
    """Encode one outbound message as compact ASCII JSON.

    Raises:
        ValueError: the message holds NaN/Infinity or a non-JSON type.
    """
    return _encoder.encode(message).encode("ascii")
