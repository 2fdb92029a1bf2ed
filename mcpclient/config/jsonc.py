"""A bounded reader of JSON with comments and trailing commas (VS Code's "JSONC").

One pass blanks out ``//`` and ``/* */`` comments and the commas before a
``]`` or ``}`` (each replaced by spaces, newlines kept), then :mod:`json`
parses the rest; so every error position is the position in the original
text. Bounds: the text's size and the nesting depth are checked before
parsing, ``NaN``/``Infinity`` are refused (they are not JSON).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from mcpclient.config.files import MAX_DEPTH as _FILES_MAX_DEPTH

__all__ = ["MAX_DEPTH", "MAX_TEXT_BYTES", "JSONCError", "Parsed", "parse"]

#: The largest configuration text read (a host's settings file is kilobytes).
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: The deepest nesting of arrays and objects accepted.
MAX_DEPTH = _FILES_MAX_DEPTH


class JSONCError(ValueError):
    """The text is not JSON (with comments); ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.message = message
        self.line = line
        self.column = column


@attrs.frozen
class Parsed:
    """A parsed document and what non-JSON syntax it used."""

    value: Any
    comments: bool
    trailing_commas: bool


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def _strip(text: str) -> tuple[str, bool, bool]:
    """Blank comments and trailing commas; check the depth."""
    out = list(text)
    comments = trailing = False
    depth = 0
    last_comma = -1  # index of a comma not yet followed by a value
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                raise JSONCError("unterminated string", *_position(text, n))
            last_comma = -1
        elif ch == "/" and i + 1 < n and text[i + 1] == "/":
            comments = True
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif ch == "/" and i + 1 < n and text[i + 1] == "*":
            comments = True
            end = text.find("*/", i + 2)
            if end < 0:
                raise JSONCError("unterminated comment", *_position(text, i))
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
            continue
        elif ch == ",":
            last_comma = i
        elif ch in "]}":
            depth -= 1
            if last_comma >= 0:
                trailing = True
                out[last_comma] = " "
                last_comma = -1
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise JSONCError(f"nested deeper than {MAX_DEPTH}", *_position(text, i))
            last_comma = -1
        elif not ch.isspace():
            last_comma = -1
        i += 1
    return "".join(out), comments, trailing


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(text: str) -> Parsed:
    """Parse ``text`` as JSON with comments and trailing commas.

    Raises:
        JSONCError: the text is too large, too deep, or not JSON(C).
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise JSONCError(f"larger than {MAX_TEXT_BYTES} bytes", 1, 1)
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    plain, comments, trailing = _strip(text)
    try:
        value = json.loads(plain, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JSONCError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:  # _strip bounds the depth; this only keeps the class closed
        raise JSONCError(f"nested deeper than {MAX_DEPTH}", 1, 1) from None
    except ValueError as exc:
        raise JSONCError(str(exc), 1, 1) from None
    return Parsed(value, comments, trailing)
