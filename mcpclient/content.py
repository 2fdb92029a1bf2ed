"""Results and their content items, already bounded and converted.

Every byte here came from a server and was bounded on the way in (see
:class:`~mcpclient.Limits`): text is cut at a UTF-8 boundary with
``truncated=True``, an oversized binary item becomes an :class:`Unsupported`
placeholder, and an unknown content kind is kept as :class:`Unsupported`.
"""

from __future__ import annotations

from typing import Any

import attrs

from mcpclient._core import checks

__all__ = [
    "KIND_AUDIO",
    "KIND_IMAGE",
    "KIND_RESOURCE",
    "KIND_RESOURCE_LINK",
    "KIND_TEXT",
    "KIND_TOOL_RESULT",
    "KIND_TOOL_USE",
    "KIND_UNKNOWN",
    "Annotations",
    "Audio",
    "Content",
    "EmbeddedResource",
    "Image",
    "Prompt",
    "PromptMessage",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourceUI",
    "Text",
    "ToolResult",
    "Unsupported",
]

KIND_TEXT = "text"
KIND_IMAGE = "image"
KIND_AUDIO = "audio"
KIND_RESOURCE = "resource"
KIND_RESOURCE_LINK = "resource_link"
KIND_TOOL_USE = "tool_use"
KIND_TOOL_RESULT = "tool_result"
KIND_UNKNOWN = "unknown"
#: Every ``KIND_*`` constant: the values :attr:`Unsupported.kind` may take.
_KINDS = frozenset(
    {
        KIND_TEXT,
        KIND_IMAGE,
        KIND_AUDIO,
        KIND_RESOURCE,
        KIND_RESOURCE_LINK,
        KIND_TOOL_USE,
        KIND_TOOL_RESULT,
        KIND_UNKNOWN,
    }
)

_str = attrs.field(default="", kw_only=True, validator=checks.is_str)
_bytes = attrs.field(default=b"", kw_only=True, validator=checks.is_bytes)
_flag = attrs.field(default=False, kw_only=True, validator=checks.is_bool)


def _meta() -> Any:
    return checks.json_field(kw_only=True)


@attrs.frozen(kw_only=True)
class Annotations:
    """A content item's hints for the host: who it is for, how important, when changed."""

    audience: tuple[str, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(str)
    )
    priority: float | None = attrs.field(default=None, validator=checks.optional_finite_number)
    last_modified: str = attrs.field(default="", validator=checks.is_str)


_annotations = attrs.field(
    default=None, kw_only=True, validator=checks.optional_instance_of(Annotations)
)


class _WithMeta:
    """Mixin: ``meta`` decoded from held JSON text."""

    __slots__ = ()
    _meta: str | None

    @property
    def meta(self) -> Any:
        """The server's ``_meta`` object (a fresh copy), or ``None``."""
        return checks.decode_json(self._meta)


@attrs.frozen
class Text(_WithMeta):
    """A text item; ``truncated`` when it was cut to ``Limits.max_text_result_bytes``."""

    text: str = attrs.field(validator=checks.is_str)
    truncated: bool = _flag
    annotations: Annotations | None = _annotations
    _meta: Any = _meta()


@attrs.frozen
class Image(_WithMeta):
    """An image item, decoded from base64."""

    data: bytes = attrs.field(validator=checks.is_bytes, repr=lambda v: f"<{len(v)} bytes>")
    mime_type: str = _str
    annotations: Annotations | None = _annotations
    _meta: Any = _meta()


@attrs.frozen
class Audio(_WithMeta):
    """An audio item, decoded from base64."""

    data: bytes = attrs.field(validator=checks.is_bytes, repr=lambda v: f"<{len(v)} bytes>")
    mime_type: str = _str
    annotations: Annotations | None = _annotations
    _meta: Any = _meta()


@attrs.frozen
class EmbeddedResource(_WithMeta):
    """A resource embedded in a result: text or binary ``data``.

    ``uri`` is an opaque protocol identifier, never a host path.
    """

    uri: str = attrs.field(validator=checks.is_str)
    mime_type: str = _str
    text: str = _str
    data: bytes = attrs.field(
        default=b"", kw_only=True, validator=checks.is_bytes, repr=lambda v: f"<{len(v)} bytes>"
    )
    truncated: bool = _flag
    annotations: Annotations | None = _annotations
    _meta: Any = _meta()


@attrs.frozen
class ResourceLink(_WithMeta):
    """A link to a resource the host may read with ``read_resource``."""

    uri: str = attrs.field(validator=checks.is_str)
    name: str = _str
    title: str = _str
    description: str = _str
    mime_type: str = _str
    annotations: Annotations | None = _annotations
    _meta: Any = _meta()


def _check_kind(inst: Unsupported, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    if value not in _KINDS:
        raise checks.fail(inst, attr.name, f"must be one of the KIND_* constants, got {value!r}")


@attrs.frozen
class Unsupported:
    """A placeholder for an item that was refused (too large, or an unknown kind).

    ``kind`` is always one of the ``KIND_*`` constants (a kind this library
    does not know is ``KIND_UNKNOWN``; the server's own type string is in the
    result's warnings). ``bytes`` is exact for an item dropped on a size
    bound (the decoded size) and a lower bound otherwise: a diagnostic, not
    an accounting figure.
    """

    kind: str = attrs.field(validator=_check_kind)
    bytes: int = attrs.field(default=0, validator=checks.non_negative_int)


#: Any content item.
Content = Text | Image | Audio | EmbeddedResource | ResourceLink | Unsupported
_CONTENT_TYPES = (Text, Image, Audio, EmbeddedResource, ResourceLink, Unsupported)


def _content_tuple() -> Any:
    return attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(*_CONTENT_TYPES)
    )


def _warnings() -> Any:
    return attrs.field(
        default=(), kw_only=True, converter=checks.to_tuple, validator=checks.tuple_of(str)
    )


@attrs.frozen(kw_only=True)
class ToolResult(_WithMeta):
    """The outcome of a tool call that ran.

    A tool that failed is ``is_error=True`` here, not an exception.
    ``structured`` is a fresh copy of the structured content, or ``None`` when
    the server sent none or it was dropped (see ``warnings``).
    """

    is_error: bool = attrs.field(default=False, validator=checks.is_bool)
    content: tuple[Content, ...] = _content_tuple()
    _structured: Any = checks.json_field()
    warnings: tuple[str, ...] = _warnings()
    _meta: Any = _meta()

    @property
    def structured(self) -> Any:
        """The structured result (a fresh copy), or ``None``."""
        return checks.decode_json(self._structured)

    @property
    def text(self) -> str:
        """All text items joined by newlines: a convenience for simple tools."""
        return "\n".join(item.text for item in self.content if isinstance(item, Text))


@attrs.frozen
class PromptMessage:
    """One message of a prompt: a role and one content item."""

    role: str = attrs.field(validator=checks.is_str)
    content: Content = attrs.field(validator=checks.instance_of(*_CONTENT_TYPES))


@attrs.frozen(kw_only=True)
class Prompt(_WithMeta):
    """A rendered prompt."""

    description: str = attrs.field(default="", validator=checks.is_str)
    messages: tuple[PromptMessage, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(PromptMessage)
    )
    _meta: Any = _meta()


def _texts() -> Any:
    return attrs.field(
        default=(), kw_only=True, converter=checks.to_tuple, validator=checks.tuple_of(str)
    )


@attrs.frozen(kw_only=True)
class ResourceUI:
    """The ``_meta.ui`` of an MCP Apps view (a ``ui://`` resource, SEP-1865).

    What the host's sandbox needs: the CSP domains the view may reach
    (``connect_domains`` for fetch/XHR/WebSocket, ``resource_domains`` for
    scripts, styles, images, fonts and media, ``frame_domains`` for nested
    frames, ``base_uri_domains`` for ``<base>``), the permissions it asks
    for, the dedicated ``domain`` it wants ("" for none) and whether it
    prefers a border (``None``: no preference). Reported, never enforced.
    """

    connect_domains: tuple[str, ...] = _texts()
    resource_domains: tuple[str, ...] = _texts()
    frame_domains: tuple[str, ...] = _texts()
    base_uri_domains: tuple[str, ...] = _texts()
    camera: bool = _flag
    microphone: bool = _flag
    geolocation: bool = _flag
    clipboard_write: bool = _flag
    domain: str = _str
    prefers_border: bool | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional_instance_of(bool)
    )


@attrs.frozen
class ResourceContent(_WithMeta):
    """One item of a resource read: text or binary ``data``.

    ``ui`` is the item's MCP Apps view metadata (``_meta.ui``), or ``None``.
    """

    uri: str = attrs.field(validator=checks.is_str)
    mime_type: str = _str
    text: str = _str
    data: bytes = attrs.field(
        default=b"", kw_only=True, validator=checks.is_bytes, repr=lambda v: f"<{len(v)} bytes>"
    )
    truncated: bool = _flag
    _meta: Any = _meta()
    ui: ResourceUI | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional_instance_of(ResourceUI)
    )


@attrs.frozen(kw_only=True)
class Resource(_WithMeta):
    """The contents of a resource read."""

    contents: tuple[ResourceContent | Unsupported, ...] = attrs.field(
        default=(),
        converter=checks.to_tuple,
        validator=checks.tuple_of(ResourceContent, Unsupported),
    )
    warnings: tuple[str, ...] = _warnings()
    _meta: Any = _meta()
