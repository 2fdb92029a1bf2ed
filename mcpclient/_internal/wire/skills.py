"""The wire of the Skills extension (SEP-2640): listings, entries, file bytes, directories.

``skills/list`` pages (``{skills: [Skill], nextCursor?}``), ``skills/get``
(``{skill: Skill}``), a ``Skill`` entry (``{uri, frontmatter, resources:
[{uri, digest, size}] | "dynamic"}``), the raw bytes of one
``resources/read`` content item, and ``resources/directory/read`` pages
(``{resources: [Resource], nextCursor?}``).

An entry that breaks the entry rules (no ``uri``, a ``frontmatter`` that is
not an object, ``resources`` neither an array nor ``"dynamic"``, a file
without a well-formed ``sha256:`` digest or a non-negative integer size, a
file listed twice) is never loadable: :func:`read_entry` says why and the
listing leaves it out. So is one listing a file outside the skill's directory
(``../``, an absolute path, another URI...): :class:`mcpclient.SkillEntry`
refuses it when the entry is built, and the listing leaves it out the same way.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from mcpclient._core.canonical import compact

__all__ = [
    "DIRECTORY_MIME",
    "DYNAMIC",
    "MAX_ENTRY_BYTES",
    "RawEntry",
    "content_bytes",
    "directory_page",
    "directory_read",
    "get_params",
    "list_page",
    "read_entry",
    "skill_of_get",
]

#: ``resources`` of an entry whose files are generated (no integrity).
DYNAMIC = "dynamic"
#: The ``mimeType`` of a directory in ``resources/directory/read``.
DIRECTORY_MIME = "inode/directory"
#: The largest entry (its JSON) kept from a listing.
MAX_ENTRY_BYTES = 256 * 1024
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_MAX_URI_BYTES = 4096
_MAX_FILES = 4096  # read at all; the extension's own limit (512) is applied at load


class RawEntry:
    """A well-formed entry, read: its URI, frontmatter and files (``None``: dynamic)."""

    __slots__ = ("files", "frontmatter", "uri")

    def __init__(
        self, uri: str, frontmatter: dict[str, Any], files: list[tuple[str, str, int]] | None
    ) -> None:
        self.uri = uri
        self.frontmatter = frontmatter
        self.files = files


def _uri(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value if len(value.encode("utf-8", "surrogatepass")) <= _MAX_URI_BYTES else None


def read_entry(raw: Any) -> RawEntry | str:
    """A ``Skill`` entry, or why it can never be loaded."""
    if not isinstance(raw, Mapping):
        return "it is not an object"
    uri = _uri(raw.get("uri"))
    if uri is None:
        return "it has no uri"
    frontmatter = raw.get("frontmatter")
    if not isinstance(frontmatter, Mapping):
        return "its frontmatter is not an object"
    try:
        if len(compact(raw)) > MAX_ENTRY_BYTES:
            return f"it is over {MAX_ENTRY_BYTES} bytes"
    except (TypeError, ValueError, RecursionError):
        return "it is not JSON"
    resources = raw.get("resources")
    if resources == DYNAMIC:
        return RawEntry(uri, dict(frontmatter), None)
    if not isinstance(resources, list):
        return "its resources are neither a list nor 'dynamic'"
    if len(resources) > _MAX_FILES:
        return f"it lists more than {_MAX_FILES} files"
    files: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for index, item in enumerate(resources):
        if not isinstance(item, Mapping):
            return f"resources[{index}] is not an object"
        file_uri = _uri(item.get("uri"))
        digest = item.get("digest")
        size = item.get("size")
        if file_uri is None:
            return f"resources[{index}] has no uri"
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            return f"resources[{index}] has no 'sha256:<64 hex>' digest"
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            return f"resources[{index}] has no non-negative integer size"
        if file_uri in seen:
            return f"resources[{index}] lists a file twice"
        seen.add(file_uri)
        files.append((file_uri, digest, size))
    return RawEntry(uri, dict(frontmatter), files)


def list_page(result: Any) -> tuple[list[Any], str | None] | str:
    """``(entries, nextCursor)`` of a ``skills/list`` result, or what is wrong with it."""
    if not isinstance(result, Mapping):
        return "the skills/list result is not an object"
    skills = result.get("skills")
    if not isinstance(skills, list):
        return "the skills/list result has no skills list"
    cursor = result.get("nextCursor")
    return skills, cursor if isinstance(cursor, str) and cursor else None


def get_params(uri: str) -> dict[str, Any]:
    """The params of ``skills/get`` for the ``SKILL.md`` at ``uri``."""
    return {"uri": uri}


def skill_of_get(result: Any) -> Any:
    """The raw entry of a ``skills/get`` result (``None`` when it has none)."""
    return result.get("skill") if isinstance(result, Mapping) else None


def content_bytes(result: Any, uri: str, cap: int) -> bytes | str:
    """The raw bytes of the one content item of ``uri`` in a ``resources/read`` result.

    ``text`` is its UTF-8 bytes, ``blob`` strict base64; more than ``cap``
    bytes is refused before decoding. Returns why, when there is not exactly
    one such item or it holds neither.
    """
    contents = result.get("contents") if isinstance(result, Mapping) else None
    if not isinstance(contents, list):
        return "the resources/read result has no contents list"
    items = [c for c in contents if isinstance(c, Mapping) and c.get("uri") == uri]
    if len(items) != 1:
        return f"the resources/read result has {len(items)} content items for the file, not one"
    item = items[0]
    text, blob = item.get("text"), item.get("blob")
    if isinstance(text, str) and blob is None:
        if len(text) > cap:  # a character is at least one byte
            return f"the file is over {cap} bytes"
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return "the file's text is not valid Unicode"
    if isinstance(blob, str) and text is None:
        if len(blob) > (cap + 2) // 3 * 4 + 4:
            return f"the file is over {cap} bytes"
        try:
            return base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            return "the file's blob is not valid base64"
    return "the file's content item holds neither text nor blob"


def directory_page(result: Any) -> tuple[list[tuple[str, str]], str | None] | str:
    """``([(uri, mimeType)], nextCursor)`` of a ``resources/directory/read`` result."""
    if not isinstance(result, Mapping):
        return "the resources/directory/read result is not an object"
    resources = result.get("resources")
    if not isinstance(resources, list):
        return "the resources/directory/read result has no resources list"
    out: list[tuple[str, str]] = []
    for item in resources:
        if isinstance(item, Mapping):
            uri = _uri(item.get("uri"))
            mime = item.get("mimeType")
            if uri is not None:
                out.append((uri, mime if isinstance(mime, str) else ""))
    cursor = result.get("nextCursor")
    return out, cursor if isinstance(cursor, str) and cursor else None


def directory_read(settings: Any) -> bool:
    """Whether the server's skills settings offer ``resources/directory/read``."""
    return isinstance(settings, Mapping) and settings.get("directoryRead") is True
