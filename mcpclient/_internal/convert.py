"""Wire JSON → public values, with every bound of :class:`~mcpclient.Limits`.

This is the one module that knows the protocol's camelCase field names for
results and catalog items. Nothing here trusts its input: every field is
type-checked, every text bounded, every binary item size-checked before it
is decoded, and an unknown content kind becomes :class:`Unsupported`.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

import attrs

from mcpclient._internal.canonical import compact
from mcpclient._internal.checks import JSONText
from mcpclient._internal.limits import bound, truncate, utf8_len
from mcpclient._internal.wire.apps import resource_ui
from mcpclient.content import (
    KIND_IMAGE,
    KIND_RESOURCE,
    KIND_RESOURCE_LINK,
    KIND_TOOL_RESULT,
    KIND_TOOL_USE,
    KIND_UNKNOWN,
    Annotations,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Prompt,
    PromptMessage,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceUI,
    Text,
    ToolResult,
    Unsupported,
)
from mcpclient.definition import Limits

__all__ = [
    "ConversionError",
    "decoded_size",
    "json_depth",
    "to_content",
    "to_prompt",
    "to_resource",
    "to_tool_result",
]

#: Bound on short server strings: names, MIME types, titles in content.
MAX_SHORT_BYTES = 1024
#: Bound on a ``_meta`` or ``annotations`` object kept on a value.
MAX_META_BYTES = 16 * 1024
MAX_WARNINGS = 8


class ConversionError(ValueError):
    """A result is malformed beyond repair (the caller reports ``server_protocol``)."""


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value`` (a scalar is 0, ``[]`` is 1); stops past ``limit``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


class _Warnings:
    """A bounded warning list with a summary of what it dropped."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.items) < MAX_WARNINGS - 1:
            self.items.append(bound(text, 256))
        else:
            self.dropped += 1

    def result(self) -> tuple[str, ...]:
        if self.dropped:
            return (*self.items, f"{self.dropped} further warning(s) dropped")
        return tuple(self.items)


def _text(raw: Mapping[str, Any], key: str, limit: int = MAX_SHORT_BYTES) -> str:
    value = raw.get(key)
    return bound(value, limit) if isinstance(value, str) else ""


def _meta(raw: Mapping[str, Any], key: str = "_meta") -> JSONText | None:
    value = raw.get(key)
    if not isinstance(value, dict):
        return None
    try:
        text = compact(value)
    except (TypeError, ValueError):
        return None
    return JSONText(text) if len(text) <= MAX_META_BYTES else None


def _finite(value: Any) -> float | None:
    """A finite float from a JSON number, else ``None`` (huge ints overflow floats)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _annotations(raw: Mapping[str, Any]) -> Annotations | None:
    value = raw.get("annotations")
    if not isinstance(value, Mapping):
        return None
    audience = value.get("audience")
    priority = value.get("priority")
    return Annotations(
        audience=tuple(
            bound(a, 64)
            for a in (audience if isinstance(audience, list) else [])[:8]
            if isinstance(a, str)
        ),
        priority=_finite(priority),
        last_modified=_text(value, "lastModified", 64),
    )


#: Content types a tool result may not carry but that have a kind of their own.
_KNOWN_KINDS = {"tool_use": KIND_TOOL_USE, "tool_result": KIND_TOOL_RESULT}


def decoded_size(data: str) -> int:
    """The exact number of bytes the base64 text ``data`` decodes to, without decoding it.

    Every 4 characters are 3 bytes, less one per trailing ``=``; an unpadded
    tail of 2 or 3 characters is 1 or 2 bytes. (For text that is not valid
    base64 it is an estimate.)
    """
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return max(0, len(data) * 3 // 4 - padding)


class _Budget:
    """Counts binary items against ``max_binary_items``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.binary_items = 0

    def binary(self, data: Any, kind: str, warnings: _Warnings) -> bytes | Unsupported:
        if not isinstance(data, str):
            warnings.add(f"{kind} item has no base64 data")
            return Unsupported(kind, 0)
        # The decoded size follows from the length and padding: an item too
        # large is refused, with its exact size, before anything is decoded.
        size = decoded_size(data)
        if size > self.limits.max_binary_item_bytes:
            warnings.add(f"{kind} item of {size} bytes exceeds max_binary_item_bytes")
            return Unsupported(kind, size)
        if self.binary_items >= self.limits.max_binary_items:
            warnings.add(f"{kind} item dropped: more than max_binary_items binary items")
            return Unsupported(kind, size)
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            warnings.add(f"{kind} item has invalid base64 data")
            return Unsupported(kind, size)
        if len(decoded) > self.limits.max_binary_item_bytes:
            warnings.add(f"{kind} item of {len(decoded)} bytes exceeds max_binary_item_bytes")
            return Unsupported(kind, len(decoded))
        self.binary_items += 1
        return decoded


def _bounded_text(value: Any, limits: Limits) -> tuple[str, bool]:
    if not isinstance(value, str):
        return "", False
    return truncate(value, limits.max_text_result_bytes)


def _content_item(raw: Any, budget: _Budget, warnings: _Warnings) -> Content:
    if not isinstance(raw, Mapping):
        warnings.add("a content item is not an object")
        return Unsupported(KIND_UNKNOWN, 0)
    kind = raw.get("type")
    limits = budget.limits
    if kind == "text":
        text, cut = _bounded_text(raw.get("text"), limits)
        if cut:
            warnings.add("a text item was truncated to max_text_result_bytes")
        return Text(text, truncated=cut, annotations=_annotations(raw), meta=_meta(raw))
    if kind in ("image", "audio"):
        data = budget.binary(raw.get("data"), kind, warnings)
        if isinstance(data, Unsupported):
            return data
        cls = Image if kind == KIND_IMAGE else Audio
        return cls(
            data, mime_type=_text(raw, "mimeType"), annotations=_annotations(raw), meta=_meta(raw)
        )
    if kind == "resource":
        resource = raw.get("resource")
        if not isinstance(resource, Mapping) or not isinstance(resource.get("uri"), str):
            warnings.add("an embedded resource has no uri")
            return Unsupported(KIND_RESOURCE, 0)
        item = _resource_content(resource, budget, warnings)
        if isinstance(item, Unsupported):
            return item
        return EmbeddedResource(
            item.uri,
            mime_type=item.mime_type,
            text=item.text,
            data=item.data,
            truncated=item.truncated,
            annotations=_annotations(raw),
            meta=_meta(raw),
        )
    if kind == "resource_link":
        uri = raw.get("uri")
        if not isinstance(uri, str):
            warnings.add("a resource link has no uri")
            return Unsupported(KIND_RESOURCE_LINK, 0)
        return ResourceLink(
            bound(uri, limits.max_text_result_bytes),
            name=_text(raw, "name"),
            title=_text(raw, "title"),
            description=_text(raw, "description", limits.max_text_result_bytes),
            mime_type=_text(raw, "mimeType"),
            annotations=_annotations(raw),
            meta=_meta(raw),
        )
    # The placeholder's kind is one of ours; the server's own type string
    # (bounded, quoted) is only in the warning.
    label = repr(bound(kind, 64)) if isinstance(kind, str) else "with no type string"
    warnings.add(f"content of unsupported kind {label} kept as a placeholder")
    return Unsupported(
        _KNOWN_KINDS.get(kind, KIND_UNKNOWN) if isinstance(kind, str) else KIND_UNKNOWN,
        min(utf8_len(str(raw)[:4096]), 4096),
    )


def _resource_content(
    raw: Mapping[str, Any], budget: _Budget, warnings: _Warnings
) -> ResourceContent | Unsupported:
    limits = budget.limits
    uri = bound(raw["uri"], limits.max_text_result_bytes)
    mime = _text(raw, "mimeType")
    if "blob" in raw:
        data = budget.binary(raw.get("blob"), KIND_RESOURCE, warnings)
        if isinstance(data, Unsupported):
            return data
        return ResourceContent(uri, mime_type=mime, data=data, meta=_meta(raw), ui=_ui(raw))
    text, cut = _bounded_text(raw.get("text"), limits)
    if cut:
        warnings.add("a resource text was truncated to max_text_result_bytes")
    return ResourceContent(
        uri, mime_type=mime, text=text, truncated=cut, meta=_meta(raw), ui=_ui(raw)
    )


def _ui(raw: Mapping[str, Any]) -> ResourceUI | None:
    """An MCP Apps view's ``_meta.ui`` (SEP-1865), or None."""
    fields = resource_ui(raw.get("_meta"))
    return None if fields is None else ResourceUI(**fields)


def to_content(items: Any, limits: Limits) -> tuple[tuple[Content, ...], tuple[str, ...]]:
    """Convert a content list; returns the items and the warnings."""
    warnings = _Warnings()
    budget = _Budget(limits)
    if not isinstance(items, list):
        return (), ()
    return tuple(_content_item(item, budget, warnings) for item in items), warnings.result()


# The fast path below builds Text and ToolResult without their attrs __init__
# (whose validators re-check what it has just checked). It must set every
# field, so it refuses to load if the classes gain or rename one.
_TEXT_FIELDS = ("text", "truncated", "annotations", "_meta")
_RESULT_FIELDS = ("is_error", "content", "_structured", "warnings", "_meta")
for _cls, _names in ((Text, _TEXT_FIELDS), (ToolResult, _RESULT_FIELDS)):
    if tuple(field.name for field in attrs.fields(_cls)) != _names:  # pragma: no cover
        raise ImportError(f"convert.py's fast path does not know {_cls.__name__}'s fields")
_new = object.__new__
_set = object.__setattr__  # frozen attrs classes refuse their own __setattr__
_PLAIN_RESULT_KEYS = frozenset({"content", "isError"})
_PLAIN_ITEM_KEYS = frozenset({"type", "text"})
#: At most this many items take the fast path (a longer list is unusual: the full path).
_PLAIN_MAX_ITEMS = 16


def _plain_text_result(raw: dict[str, Any], limits: Limits) -> ToolResult | None:
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
        item = _new(Text)
        _set(item, "text", text)
        _set(item, "truncated", False)
        _set(item, "annotations", None)
        _set(item, "_meta", None)
        items.append(item)
    result = _new(ToolResult)
    _set(result, "is_error", raw.get("isError") is True)
    _set(result, "content", tuple(items))
    _set(result, "_structured", None)
    _set(result, "warnings", ())
    _set(result, "_meta", None)
    return result


def to_tool_result(raw: Any, limits: Limits) -> ToolResult:
    """Convert a ``tools/call`` result.

    Raises:
        ConversionError: the result is not an object or its content is not a list.
    """
    if type(raw) is dict:  # as decoded from JSON; the common all-text result is quick
        plain = _plain_text_result(raw, limits)
        if plain is not None:
            return plain
    if not isinstance(raw, Mapping):
        raise ConversionError("the tools/call result is not an object")
    content = raw.get("content", [])
    if not isinstance(content, list):
        raise ConversionError("the tools/call result's content is not a list")
    warnings = _Warnings()
    budget = _Budget(limits)
    items = tuple(_content_item(item, budget, warnings) for item in content)
    structured: JSONText | None = None
    if "structuredContent" in raw and raw["structuredContent"] is not None:
        value = raw["structuredContent"]
        try:
            text = compact(value)
        except (TypeError, ValueError):
            text = None
        if text is None:
            warnings.add("structured content is not valid JSON; dropped")
        elif len(text) > limits.max_structured_bytes:
            warnings.add(
                f"structured content of {len(text)} bytes exceeds max_structured_bytes; dropped"
            )
        elif json_depth(value, limits.max_schema_depth) > limits.max_schema_depth:
            warnings.add("structured content nests deeper than max_schema_depth; dropped")
        else:
            structured = JSONText(text)
    is_error = raw.get("isError") is True
    return ToolResult(
        is_error=is_error,
        content=items,
        structured=structured,
        warnings=warnings.result(),
        meta=_meta(raw),
    )


def to_prompt(raw: Any, limits: Limits) -> Prompt:
    """Convert a ``prompts/get`` result.

    Raises:
        ConversionError: the result is malformed.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("messages"), list):
        raise ConversionError("the prompts/get result has no messages list")
    warnings = _Warnings()
    budget = _Budget(limits)
    messages = []
    for message in raw["messages"]:
        if not isinstance(message, Mapping):
            raise ConversionError("a prompt message is not an object")
        role = message.get("role")
        messages.append(
            PromptMessage(
                bound(role, 32) if isinstance(role, str) else "",
                _content_item(message.get("content"), budget, warnings),
            )
        )
    return Prompt(
        description=_text(raw, "description", limits.max_text_result_bytes),
        messages=tuple(messages),
        meta=_meta(raw),
    )


def to_resource(raw: Any, limits: Limits) -> Resource:
    """Convert a ``resources/read`` result.

    Raises:
        ConversionError: the result is malformed.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("contents"), list):
        raise ConversionError("the resources/read result has no contents list")
    warnings = _Warnings()
    budget = _Budget(limits)
    contents: list[ResourceContent | Unsupported] = []
    for item in raw["contents"]:
        if not isinstance(item, Mapping) or not isinstance(item.get("uri"), str):
            warnings.add("a resource content item has no uri")
            contents.append(Unsupported(KIND_RESOURCE, 0))
            continue
        contents.append(_resource_content(item, budget, warnings))
    return Resource(contents=tuple(contents), warnings=warnings.result(), meta=_meta(raw))
