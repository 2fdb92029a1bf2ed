"""Pure helpers for the stdio transport's lines: oversized stdout lines and stderr.

* :func:`response_verdict` and :func:`tail_id` read the JSON-RPC id of a
  stdout line too long to keep, from its first and last bytes only, so that
  one request can fail and the connection can stay.
* :class:`StderrLines` cuts the child's stderr into bounded log records
  without ever buffering a whole long line.

Nothing here does I/O or takes a lock; the transport serializes the calls.
"""

from __future__ import annotations

import re
from typing import Final

from mcpclient._core.limits import TRUNCATION_MARKER, bound, cut_utf8, utf8_len

__all__ = [
    "HEAD_BYTES",
    "ID_AT_TAIL",
    "NOT_A_RESPONSE",
    "TAIL_BYTES",
    "StderrLines",
    "response_verdict",
    "safe_log_text",
    "tail_id",
]

#: How much of an oversized line's start and end is kept to look for its id.
HEAD_BYTES: Final = 256
TAIL_BYTES: Final = 64

# Our request ids are ints we minted, >= 0; longer digit runs are not ours.
_MAX_ID_DIGITS = 18
_WS = b" \t\r\n"
_SCALAR_END = b",}" + _WS

#: What :func:`response_verdict` says about a line's head.
NOT_A_RESPONSE: Final = "not-a-response"
#: The head proves a response and names no id: look at the tail.
ID_AT_TAIL: Final = "tail"


def response_verdict(head: bytes) -> int | str:
    """What the first bytes of a JSON-RPC line say about its id.

    Reads the top-level members of the object in ``head`` up to the first one
    whose value is nested (an object or an array) or not complete within
    ``head``. Returns the request id (an ``int >= 0``) when a top-level ``"id"``
    member was read and a ``"result"`` or ``"error"`` member proves the line
    is a response; :data:`ID_AT_TAIL` when the head proves a response but
    holds no ``"id"``; :data:`NOT_A_RESPONSE` otherwise (a request, a
    notification, a batch, an id that cannot be ours, or no proof at all).
    Anything unusual (an escape in a key, a second ``"id"``) is not a proof.
    """
    keys: set[str] = set()
    found: int | None = None  # the head's "id", when it is one of ours
    i = _skip_ws(head, 0)
    if i >= len(head) or head[i] != 0x7B:  # "{"
        return NOT_A_RESPONSE
    i += 1
    while True:
        i = _skip_ws(head, i)
        if i >= len(head) or head[i] != 0x22:  # a key's opening quote (or "}")
            break
        end = head.find(b'"', i + 1)
        if end < 0 or 0x5C in head[i + 1 : end]:  # cut off, or an escape: stop
            break
        key = head[i + 1 : end].decode("utf-8", "replace")
        i = _skip_ws(head, end + 1)
        if i >= len(head) or head[i] != 0x3A:  # ":"
            break
        i = _skip_ws(head, i + 1)
        if i >= len(head):
            break
        first = head[i]
        if first in b"{[":  # nested: the scan ends here
            keys.add(key)
            break
        if first == 0x22:  # a string value
            end = _string_end(head, i)
            if end < 0:
                keys.add(key)
                break
            value = b""
            i = end + 1
        else:
            end = i
            while end < len(head) and head[end] not in _SCALAR_END:
                end += 1
            if end >= len(head):  # a number may go on past the head
                break
            value = head[i:end]
            i = end
        if key in keys:
            return NOT_A_RESPONSE  # a duplicate key: which one counts is anyone's guess
        keys.add(key)
        if key == "id":
            found = None if first == 0x22 else _our_id(value)
        i = _skip_ws(head, i)
        if i >= len(head) or head[i] != 0x2C:  # ","
            break
        i += 1
    if "method" in keys or "params" in keys or not keys & {"result", "error"}:
        return NOT_A_RESPONSE
    if "id" not in keys:
        return ID_AT_TAIL
    return NOT_A_RESPONSE if found is None else found


def tail_id(tail: bytes) -> int | None:
    """The id of a line whose last top-level member is ``"id": N`` (``...,"id":7}``).

    ``tail`` is the end of the line, without its newline. Only a plain
    non-negative integer right before the final ``}`` counts: any other end
    (a nested object's id ends in ``}}``, a batch in ``]``) gives ``None``.
    """
    t = tail.rstrip(_WS)
    if not t.endswith(b"}"):
        return None
    t = t[:-1].rstrip(_WS)
    start = len(t)
    while start > 0 and 0x30 <= t[start - 1] <= 0x39:
        start -= 1
    digits = t[start:]
    t = t[:start].rstrip(_WS)
    if not t.endswith(b":"):
        return None  # "-7", "7.0", "1e3" and the like end here too
    t = t[:-1].rstrip(_WS)
    if not t.endswith(b'"id"'):
        return None
    t = t[:-4].rstrip(_WS)
    # The quote before "id" is a key's opening quote only if a member
    # separator precedes it (an escaped quote would follow a backslash).
    if not t.endswith(b","):
        return None
    return _our_id(digits)


def _our_id(value: bytes) -> int | None:
    if not value or len(value) > _MAX_ID_DIGITS or not value.isdigit():
        return None
    if len(value) > 1 and value[0] == 0x30:  # a leading zero is not JSON
        return None
    return int(value)


def _skip_ws(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in _WS:
        i += 1
    return i


def _string_end(data: bytes, start: int) -> int:
    """The index of the quote closing the string opened at ``start``, or -1."""
    i = start + 1
    while i < len(data):
        byte = data[i]
        if byte == 0x5C:  # a backslash escapes the next byte
            i += 2
            continue
        if byte == 0x22:
            return i
        i += 1
    return -1


# C0 controls but tab, DEL, C1 controls, and the format characters (bidi
# overrides, zero-width) that could disguise a log line shown to an operator.
_UNSAFE = re.compile(
    r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def safe_log_text(raw: bytes, max_bytes: int, *, cut: bool) -> str:
    """One stderr line as a log record's text: decoded, controls replaced, bounded.

    Invalid UTF-8 becomes U+FFFD; indentation is kept (tracebacks stay
    readable). A line that was ``cut`` (or that grows past ``max_bytes`` when
    decoded) ends in the truncation marker, within ``max_bytes`` UTF-8 bytes.
    """
    text = _UNSAFE.sub("\ufffd", raw.decode("utf-8", "replace").rstrip())
    if not cut:
        return bound(text, max_bytes)
    room = max_bytes - utf8_len(TRUNCATION_MARKER)
    if room <= 0:
        return cut_utf8(text, max_bytes)
    return cut_utf8(text, room) + TRUNCATION_MARKER


class StderrLines:
    """Cuts a byte stream into lines of at most ``max_bytes`` bytes each.

    :meth:`feed` returns each line once its newline arrived, or at once when
    it outgrows ``max_bytes`` (its first ``max_bytes`` bytes, flagged as cut;
    the rest of it is dropped as it comes). Memory: at most ``max_bytes``.
    Blank lines are skipped.

    Thread safety: none; the caller serializes the calls.
    """

    __slots__ = ("_max", "_partial", "_skipping")

    def __init__(self, max_bytes: int) -> None:
        self._max = max(1, max_bytes)
        self._partial = bytearray()
        self._skipping = False  # inside a line already reported as cut

    def feed(self, chunk: bytes) -> list[tuple[bytes, bool]]:
        """The lines ``chunk`` completes, as ``(raw bytes, cut)``."""
        out: list[tuple[bytes, bool]] = []
        start = 0
        size = len(chunk)
        while start < size:
            nl = chunk.find(b"\n", start)
            stop = size if nl < 0 else nl
            if not self._skipping:
                room = self._max - len(self._partial)
                if stop - start > room:
                    self._partial += chunk[start : start + room]
                    out.append((bytes(self._partial), True))
                    self._partial.clear()
                    self._skipping = True
                else:
                    self._partial += chunk[start:stop]
                    if nl >= 0:
                        self._emit(out)
            if nl < 0:
                break
            self._skipping = False
            start = nl + 1
        return out

    def flush(self) -> list[tuple[bytes, bool]]:
        """The last line, at EOF, when it had no newline."""
        out: list[tuple[bytes, bool]] = []
        if not self._skipping:
            self._emit(out)
        self._partial.clear()
        self._skipping = False
        return out

    def _emit(self, out: list[tuple[bytes, bool]]) -> None:
        if self._partial.strip():
            out.append((bytes(self._partial), False))
        self._partial.clear()
