"""The fast path in front of the converter: a plain all-text ``tools/call`` result.

The common result (``content`` of a few plain text items, maybe ``isError``)
is built here without the converter and without the values' attrs
``__init__`` (whose validators re-check what this has just checked). It
makes exactly the value the converter would, or returns ``None`` and the
converter handles the result.
"""

from __future__ import annotations

from typing import Any

from mcpclient._internal.wire.trusted import trusted
from mcpclient.content import Content, Text, ToolResult
from mcpclient.definition import Limits

__all__ = ["plain_text_result"]

_PLAIN_RESULT_KEYS = frozenset({"content", "isError"})
_PLAIN_ITEM_KEYS = frozenset({"type", "text"})
#: At most this many items take the fast path (a longer list is unusual: the full path).
_PLAIN_MAX_ITEMS = 16
_text = trusted(Text)
_result = trusted(ToolResult)


def plain_text_result(raw: dict[str, Any], limits: Limits) -> ToolResult | None:
    """The common ``tools/call`` result, fast: only plain text items, all within bounds.

    The same value the full conversion makes, or ``None`` when anything is
    not plain (another key, a non-text item, annotations or ``_meta``, a text
    that might need truncating...): the full conversion then handles it.
    """
    if not raw.keys() <= _PLAIN_RESULT_KEYS:
        return None
    content = raw.get("content", [])
    if type(content) is not list or len(content) > _PLAIN_MAX_ITEMS:
        return None
    # A str of n code points is at most 4n UTF-8 bytes: within this many it
    # needs no truncation, without measuring its UTF-8 length.
    max_chars = limits.max_text_result_bytes // 4
    items: list[Content] = []
    for entry in content:
        if type(entry) is not dict or entry.keys() != _PLAIN_ITEM_KEYS:
            return None
        text = entry["text"]
        if entry["type"] != "text" or type(text) is not str or len(text) > max_chars:
            return None
        items.append(_text(text=text))
    return _result(is_error=raw.get("isError") is True, content=tuple(items))
