"""Content items and the results that carry them (tools/call, prompts/get, resources/read).

Each wire shape is a small private record structured by the converter: the
hooks bound every field as they read it (text to
``Limits.max_text_result_bytes``, short strings, ``_meta``), a binary item's
decoded size is computed from its base64 length before anything is decoded,
and the binary-item count is the call's own budget (:mod:`.state`). A
content item dispatches on its ``type`` tag; an unknown kind becomes
:class:`~mcpclient.content.Unsupported`, with a warning.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import cattrs
from cattrs.gen import override

from mcpclient._core.canonical import compact_decoded
from mcpclient._core.checks import JSONText
from mcpclient._core.limits import bound, truncate, utf8_len
from mcpclient._internal.wire.apps import resource_ui
from mcpclient._internal.wire.converter import Bounds, converter_for, hooks, record
from mcpclient._internal.wire.errors import ConversionError, translated
from mcpclient._internal.wire.fast import plain_text_result
from mcpclient._internal.wire.state import (
    MAX_SHORT_BYTES,
    Call,
    Warnings,
    current,
    finite,
    flag,
    json_depth,
    opened,
    passthrough,
    text,
)
from mcpclient.content import (
    KIND_AUDIO,
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
from mcpclient.definition import UI_MIME_TYPE, Limits

__all__ = [
    "MAX_WARNINGS",
    "decoded_size",
    "to_content",
    "to_prompt",
    "to_resource",
    "to_tool_result",
]

MAX_WARNINGS = 8

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


# -- the wire records --------------------------------------------------------------


@attrs.define(slots=True)
class _TextItem:
    text: tuple[str, bool] = ("", False)
    annotations: Annotations | None = None
    meta: JSONText | None = None


@attrs.define(slots=True)
class _ImageItem:
    data: bytes | Unsupported | None = None  # None: the key is absent
    mime_type: str = ""
    annotations: Annotations | None = None
    meta: JSONText | None = None


@attrs.define(slots=True)
class _AudioItem(_ImageItem):
    pass


@attrs.define(slots=True)
class _Contents:
    """A resource's contents (``resources/read``, or embedded in a result)."""

    uri: str = ""
    mime_type: str = ""
    blob: bytes | Unsupported | None = None  # None: no blob key, a text resource
    text: tuple[str, bool] = ("", False)
    meta: JSONText | None = None
    ui: ResourceUI | None = None  # an MCP Apps view's _meta.ui (SEP-1865)


def _resource_ui(value: Any, _: Any) -> ResourceUI | None:
    fields = resource_ui(value)
    return None if fields is None else ResourceUI(**fields)


@attrs.define(slots=True)
class _EmbeddedItem:
    resource: _Contents | Unsupported | None = None
    annotations: Annotations | None = None
    meta: JSONText | None = None


@attrs.define(slots=True)
class _LinkItem:
    uri: str | None = None
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    annotations: Annotations | None = None
    meta: JSONText | None = None


@attrs.define(slots=True)
class _ToolResult:
    content: tuple[Content, ...] = ()
    structured: JSONText | None = None
    is_error: bool = False
    meta: JSONText | None = None


@attrs.define(slots=True)
class _Message:
    role: str = ""
    content: Content | None = None  # None: the key is absent


@attrs.define(slots=True)
class _Prompt:
    description: str = ""
    messages: tuple[PromptMessage, ...] | None = None
    meta: JSONText | None = None


@attrs.define(slots=True)
class _ResourceRead:
    contents: tuple[ResourceContent | Unsupported, ...] | None = None
    meta: JSONText | None = None


# -- hooks -------------------------------------------------------------------------


def _meta(value: Any, _: Any) -> JSONText | None:
    return passthrough(value)


def _binary(kind: str) -> Callable[[Any, Any], bytes | Unsupported]:
    """The hook of a base64 field: sized before it is decoded, counted per call."""

    def hook(data: Any, _: Any) -> bytes | Unsupported:
        call = current()
        limits, warnings = call.limits, call.warnings
        if not isinstance(data, str):
            warnings.add(f"{kind} item has no base64 data")
            return Unsupported(kind, 0)
        # The decoded size follows from the length and padding: an item too
        # large is refused, with its exact size, before anything is decoded.
        size = decoded_size(data)
        if size > limits.max_binary_item_bytes:
            warnings.add(f"{kind} item of {size} bytes exceeds max_binary_item_bytes")
            return Unsupported(kind, size)
        if call.binary_items >= limits.max_binary_items:
            warnings.add(f"{kind} item dropped: more than max_binary_items binary items")
            return Unsupported(kind, size)
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            warnings.add(f"{kind} item has invalid base64 data")
            return Unsupported(kind, size)
        if len(decoded) > limits.max_binary_item_bytes:
            warnings.add(f"{kind} item of {len(decoded)} bytes exceeds max_binary_item_bytes")
            return Unsupported(kind, len(decoded))
        call.binary_items += 1
        return decoded

    return hook


def _audience(value: Any, _: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(bound(a, 64) for a in items[:8] if isinstance(a, str))


@hooks
def _register(conv: cattrs.Converter, limits: Bounds) -> None:
    long = text(limits.max_text_result_bytes)
    short = text(MAX_SHORT_BYTES)

    def cut(value: Any, _: Any) -> tuple[str, bool]:
        if not isinstance(value, str):
            return "", False
        return truncate(value, limits.max_text_result_bytes)

    # A resource's text is cut to the wider of the two bounds here; its MIME
    # type (a sibling field) then decides which one it keeps (_resource_content).
    widest = max(limits.max_text_result_bytes, limits.max_app_view_bytes)

    def cut_resource(value: Any, _: Any) -> tuple[str, bool]:
        if not isinstance(value, str):
            return "", False
        return truncate(value, widest)

    annotations = record(
        conv,
        Annotations,
        audience=override(struct_hook=_audience),
        priority=override(struct_hook=lambda v, _: finite(v)),
        last_modified=override(rename="lastModified", struct_hook=text(64)),
    )

    def annotations_hook(value: Any, _: Any) -> Annotations | None:
        return annotations(value, Annotations) if isinstance(value, Mapping) else None

    common = {
        "annotations": override(struct_hook=annotations_hook),
        "meta": override(rename="_meta", struct_hook=_meta),
    }
    text_item = record(conv, _TextItem, text=override(struct_hook=cut), **common)
    binary_items = {
        cls: record(
            conv,
            cls,
            data=override(struct_hook=_binary(kind)),
            mime_type=override(rename="mimeType", struct_hook=short),
            **common,
        )
        for cls, kind in ((_ImageItem, KIND_IMAGE), (_AudioItem, KIND_AUDIO))
    }
    contents = record(
        conv,
        _Contents,
        uri=override(struct_hook=long),
        mime_type=override(rename="mimeType", struct_hook=short),
        blob=override(struct_hook=_binary(KIND_RESOURCE)),
        text=override(struct_hook=cut_resource),
        meta=override(rename="_meta", struct_hook=_meta),
        ui=override(rename="_meta", struct_hook=_resource_ui),
    )

    def resource_hook(value: Any, _: Any) -> _Contents | Unsupported:
        if not isinstance(value, Mapping) or not isinstance(value.get("uri"), str):
            current().warnings.add("an embedded resource has no uri")
            return Unsupported(KIND_RESOURCE, 0)
        structured: _Contents = contents(value, _Contents)
        return structured

    embedded = record(conv, _EmbeddedItem, resource=override(struct_hook=resource_hook), **common)
    link = record(
        conv,
        _LinkItem,
        uri=override(struct_hook=lambda v, _: long(v, _) if isinstance(v, str) else None),
        name=override(struct_hook=short),
        title=override(struct_hook=short),
        description=override(struct_hook=long),
        mime_type=override(rename="mimeType", struct_hook=short),
        **common,
    )

    def text_of(rec: _TextItem, warnings: Warnings) -> Content:
        text, truncated = rec.text
        if truncated:
            warnings.add("a text item was truncated to max_text_result_bytes")
        return Text(text, truncated=truncated, annotations=rec.annotations, meta=rec.meta)

    def binary_of(rec: _ImageItem, kind: str, warnings: Warnings) -> Content:
        data = rec.data if rec.data is not None else _binary(kind)(None, None)
        if isinstance(data, Unsupported):
            return data
        cls = Image if kind == KIND_IMAGE else Audio
        return cls(data, mime_type=rec.mime_type, annotations=rec.annotations, meta=rec.meta)

    def item(raw: Any, _: Any = None) -> Content:
        """The tagged dispatch on a content item's ``type``."""
        warnings = current().warnings
        if not isinstance(raw, Mapping):
            warnings.add("a content item is not an object")
            return Unsupported(KIND_UNKNOWN, 0)
        kind = raw.get("type")
        if kind == "text":
            return text_of(text_item(raw, _TextItem), warnings)
        if kind in ("image", "audio"):  # a tuple: kind may be unhashable
            cls = _ImageItem if kind == KIND_IMAGE else _AudioItem
            return binary_of(binary_items[cls](raw, cls), kind, warnings)
        if kind == "resource":
            rec = embedded(raw, _EmbeddedItem)
            resource = rec.resource if rec.resource is not None else resource_hook(None, None)
            if isinstance(resource, Unsupported):
                return resource
            value = _resource_content(resource, warnings)
            if isinstance(value, Unsupported):
                return value
            return EmbeddedResource(
                value.uri,
                mime_type=value.mime_type,
                text=value.text,
                data=value.data,
                truncated=value.truncated,
                annotations=rec.annotations,
                meta=rec.meta,
            )
        if kind == "resource_link":
            lrec = link(raw, _LinkItem)
            if lrec.uri is None:
                warnings.add("a resource link has no uri")
                return Unsupported(KIND_RESOURCE_LINK, 0)
            return ResourceLink(
                lrec.uri,
                name=lrec.name,
                title=lrec.title,
                description=lrec.description,
                mime_type=lrec.mime_type,
                annotations=lrec.annotations,
                meta=lrec.meta,
            )
        # The placeholder's kind is one of ours; the server's own type string
        # (bounded, quoted) is only in the warning.
        label = repr(bound(kind, 64)) if isinstance(kind, str) else "with no type string"
        warnings.add(f"content of unsupported kind {label} kept as a placeholder")
        return Unsupported(
            _KNOWN_KINDS.get(kind, KIND_UNKNOWN) if isinstance(kind, str) else KIND_UNKNOWN,
            min(utf8_len(str(raw)[:4096]), 4096),
        )

    conv.register_structure_hook(Content, item)

    def content_list(value: Any, _: Any) -> tuple[Content, ...]:
        if not isinstance(value, list):
            raise ConversionError("the tools/call result's content is not a list")
        return tuple(item(entry) for entry in value)

    def structured(value: Any, _: Any) -> JSONText | None:
        if value is None:
            return None
        warnings = current().warnings
        try:
            text = compact_decoded(value)
        except (TypeError, ValueError, RecursionError):
            warnings.add("structured content is not valid JSON; dropped")
            return None
        if len(text) > limits.max_structured_bytes:
            warnings.add(
                f"structured content of {len(text)} bytes exceeds max_structured_bytes; dropped"
            )
            return None
        if json_depth(value, limits.max_schema_depth) > limits.max_schema_depth:
            warnings.add("structured content nests deeper than max_schema_depth; dropped")
            return None
        return JSONText(text)

    record(
        conv,
        _ToolResult,
        content=override(struct_hook=content_list),
        structured=override(rename="structuredContent", struct_hook=structured),
        is_error=override(rename="isError", struct_hook=flag),
        meta=override(rename="_meta", struct_hook=_meta),
    )

    def message(value: Any, _: Any) -> PromptMessage:
        if not isinstance(value, Mapping):
            raise ConversionError("a prompt message is not an object")
        rec = message_rec(value, _Message)
        return PromptMessage(rec.role, rec.content if rec.content is not None else item(None))

    message_rec = record(
        conv,
        _Message,
        role=override(struct_hook=text(32)),
        content=override(struct_hook=item),
    )
    record(
        conv,
        _Prompt,
        description=override(struct_hook=long),
        messages=override(
            struct_hook=lambda v, _: (
                tuple(message(m, None) for m in v) if isinstance(v, list) else None
            )
        ),
        meta=override(rename="_meta", struct_hook=_meta),
    )

    def read_item(value: Any) -> ResourceContent | Unsupported:
        if not isinstance(value, Mapping) or not isinstance(value.get("uri"), str):
            current().warnings.add("a resource content item has no uri")
            return Unsupported(KIND_RESOURCE, 0)
        return _resource_content(contents(value, _Contents), current().warnings)

    record(
        conv,
        _ResourceRead,
        contents=override(
            struct_hook=lambda v, _: tuple(read_item(c) for c in v) if isinstance(v, list) else None
        ),
        meta=override(rename="_meta", struct_hook=_meta),
    )


def is_app_view(mime_type: str | None) -> bool:
    """Whether ``mime_type`` names an MCP Apps view (``text/html;profile=mcp-app``).

    Compared as a media type: case-insensitive, whitespace around ``;`` ignored.
    """
    if not mime_type:
        return False
    return "".join(mime_type.lower().split()) == UI_MIME_TYPE


def _resource_content(rec: _Contents, warnings: Warnings) -> ResourceContent | Unsupported:
    if rec.blob is not None:
        if isinstance(rec.blob, Unsupported):
            return rec.blob
        return ResourceContent(
            rec.uri, mime_type=rec.mime_type, data=rec.blob, meta=rec.meta, ui=rec.ui
        )
    text, truncated = rec.text
    view = is_app_view(rec.mime_type)
    limits = current().limits
    text, cut = truncate(text, limits.max_app_view_bytes if view else limits.max_text_result_bytes)
    truncated = truncated or cut
    if truncated:
        bound_name = "max_app_view_bytes" if view else "max_text_result_bytes"
        warnings.add(f"a resource text was truncated to {bound_name}")
    return ResourceContent(
        rec.uri, mime_type=rec.mime_type, text=text, truncated=truncated, meta=rec.meta, ui=rec.ui
    )


# -- entry points ------------------------------------------------------------------


def _call(limits: Limits) -> Call:
    return Call(limits, Warnings(MAX_WARNINGS))


def to_content(items: Any, limits: Limits) -> tuple[tuple[Content, ...], tuple[str, ...]]:
    """Convert a content list; returns the items and the warnings."""
    if not isinstance(items, list):
        return (), ()
    conv = converter_for(limits)
    with opened(_call(limits)) as call, translated("a content list"):
        item = conv.get_structure_hook(Content)
        converted: tuple[Content, ...] = tuple(item(entry, Content) for entry in items)
    return converted, call.warnings.result()


def to_tool_result(raw: Any, limits: Limits) -> ToolResult:
    """Convert a ``tools/call`` result.

    Raises:
        ConversionError: the result is not an object or its content is not a list.
    """
    if type(raw) is dict:  # as decoded from JSON; the common all-text result is quick
        plain = plain_text_result(raw, limits)
        if plain is not None:
            return plain
    if not isinstance(raw, Mapping):
        raise ConversionError("the tools/call result is not an object")
    conv = converter_for(limits)
    with opened(_call(limits)) as call, translated("the tools/call result"):
        rec = conv.structure(raw, _ToolResult)
        return ToolResult(
            is_error=rec.is_error,
            content=rec.content,
            structured=rec.structured,
            warnings=call.warnings.result(),
            meta=rec.meta,
        )


def to_prompt(raw: Any, limits: Limits) -> Prompt:
    """Convert a ``prompts/get`` result.

    Raises:
        ConversionError: the result is malformed.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("messages"), list):
        raise ConversionError("the prompts/get result has no messages list")
    conv = converter_for(limits)
    with opened(_call(limits)), translated("the prompts/get result"):
        rec = conv.structure(raw, _Prompt)
        return Prompt(description=rec.description, messages=rec.messages or (), meta=rec.meta)


def to_resource(raw: Any, limits: Limits) -> Resource:
    """Convert a ``resources/read`` result.

    Raises:
        ConversionError: the result is malformed.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("contents"), list):
        raise ConversionError("the resources/read result has no contents list")
    conv = converter_for(limits)
    with opened(_call(limits)) as call, translated("the resources/read result"):
        rec = conv.structure(raw, _ResourceRead)
        return Resource(contents=rec.contents or (), warnings=call.warnings.result(), meta=rec.meta)
