"""Pure bounding helpers: byte-exact truncation and message normalization.

Everything a server says is bounded before it is kept. These helpers are the
one place that knows how to cut UTF-8 text without splitting a character and
how to make a message safe to show on one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mcpclient._core import redaction

#: Appended to server text that was cut (U+2026 + "[truncated]", 14 bytes).
TRUNCATION_MARKER = "\u2026[truncated]"
#: Appended to an error message that was cut (ASCII, 14 bytes).
ERROR_TRUNCATION_MARKER = "...[truncated]"
#: Bound on an error or event message, in UTF-8 bytes.
MAX_MESSAGE_BYTES = 1024

# C0/C1 controls, DEL, and format characters (bidi overrides, zero-width) that
# could disguise text shown to an operator.
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_SPACES = re.compile(r"\s+")


def utf8_len(text: str) -> int:
    """Return the length of ``text`` in UTF-8 bytes (lone surrogates count as 3)."""
    if text.isascii():  # O(1) in CPython (a flag of the string): no 10 MiB copy to measure
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def cut_utf8(text: str, max_bytes: int) -> str:
    """Return the longest prefix of ``text`` that fits ``max_bytes`` UTF-8 bytes."""
    if len(text) * 4 <= max_bytes:
        return text
    if text.isascii():
        return text[:max_bytes]
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text
    cut = max_bytes
    # Step back over continuation bytes to the start of the character at the
    # cut; keep that character only if all of its bytes fit.
    start = cut
    while start > 0 and raw[start] & 0xC0 == 0x80:
        start -= 1
    lead = raw[start] if start < len(raw) else 0
    width = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4
    if start + width > cut:
        cut = start
    return raw[:cut].decode("utf-8", "surrogatepass")


def truncate(text: str, max_bytes: int, marker: str = TRUNCATION_MARKER) -> tuple[str, bool]:
    """Bound ``text`` to ``max_bytes`` UTF-8 bytes, marker included.

    Returns the bounded text and whether it was cut.
    """
    if len(text) * 4 <= max_bytes or utf8_len(text) <= max_bytes:
        return text, False
    room = max(0, max_bytes - utf8_len(marker))
    if room == 0:
        return cut_utf8(text, max_bytes), True
    return cut_utf8(text, room) + marker, True


def bound(text: str, max_bytes: int) -> str:
    """Like :func:`truncate`, returning only the text."""
    return truncate(text, max_bytes)[0]


def normalize_message(text: str, max_bytes: int = MAX_MESSAGE_BYTES) -> str:
    """Make ``text`` a safe one-line message of at most ``max_bytes`` bytes.

    Control and invisible format characters become spaces, runs of whitespace
    collapse to one space, and the result is trimmed and truncated with an
    ASCII marker. Every configured secret in it is redacted first (a server
    may quote what it was sent: :mod:`mcpclient._core.redaction`), and
    again once the whitespace is collapsed, before anything is cut off.
    """
    text = redaction.redact(text)
    text = _UNSAFE.sub(" ", text)
    text = redaction.redact(_SPACES.sub(" ", text).strip())
    text = text.encode("utf-8", "replace").decode("utf-8") if _has_surrogates(text) else text
    return truncate(text, max_bytes, ERROR_TRUNCATION_MARKER)[0]


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str, max_bytes: int) -> str:
    """Bound server text shown in events: controls replaced, length bounded."""
    return normalize_message(text, max_bytes)


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests mappings and lists (tuples) deeper than ``limit``.

    Iterative, so it cannot itself overflow the stack; a cycle counts as too
    deep (it never ends), and a container shared by several parents is walked
    again only when reached deeper than before (so sharing cannot make the
    walk exponential).
    """
    deepest: dict[int, int] = {}
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: list[object]
        if isinstance(item, Mapping):
            children = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        if depth >= limit:
            return True
        if deepest.get(id(item), -1) >= depth:
            continue
        deepest[id(item)] = depth
        stack.extend((child, depth + 1) for child in children)
    return False
