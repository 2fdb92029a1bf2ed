"""The lazy host's last known catalogs: one file per definition identity, with its digest.

A server's catalog is stored under the user's state directory
(``<state_dir>/catalogs/<definition digest>.json``) as the tools' JSON and the
catalog digest they came with. It only ever tells a search what a server not
yet started probably offers: a call waits for the live catalog. A directory
that cannot be written, or a file that is missing, too large or corrupt, is a
logged warning and an empty entry, never an error. Writes are atomic (a
private temporary file, then ``os.replace``).

Thread safety: a :class:`CatalogStore` holds no state but its directory; the
atomic replace means two writers race only to the last whole file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpclient._core.digest import definition_digest
from mcpclient.catalog import ToolSpec

__all__ = [
    "MAX_STORED_BYTES",
    "CatalogStore",
    "Stored",
    "identity_of",
    "tool_from_record",
    "tool_record",
]

_log = logging.getLogger(__name__)

#: Bound on one stored catalog file (hundreds of tools with schemas: well under this).
MAX_STORED_BYTES = 8 * 1024 * 1024
_FORMAT = 1


def identity_of(definition: Any) -> str:
    """The :func:`~mcpclient._core.digest.definition_digest` of a ``Definition``."""
    transport = definition.transport
    url = getattr(transport, "url", None)
    if url is not None:
        kind = "sse" if type(transport).__name__ == "LegacySSETransport" else "http"
        headers = dict(transport.headers or ())
        return definition_digest(str(definition.name), kind, [url], secrets=headers)
    env = dict(transport.env or ())
    return definition_digest(
        str(definition.name),
        "stdio",
        [transport.command, *transport.args],
        cwd=transport.cwd or "",
        secrets=env,
    )


def tool_record(tool: ToolSpec) -> dict[str, Any]:
    """What a search needs of a tool, as JSON: names, title, description, input schema."""
    return {
        "raw_name": tool.raw_name,
        "model_name": tool.model_name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }


def tool_from_record(record: Mapping[str, Any]) -> ToolSpec | None:
    """The search-only :class:`~mcpclient.ToolSpec` of a stored record, or None if malformed."""
    try:
        return ToolSpec(
            raw_name=record["raw_name"],
            model_name=record["model_name"],
            title=record.get("title", ""),
            description=record.get("description", ""),
            input_schema=record.get("input_schema", {"type": "object"}),
        )
    except (KeyError, TypeError, ValueError):
        return None


class Stored:
    """One stored catalog: its digest and its tools as JSON objects."""

    __slots__ = ("digest", "tools")

    def __init__(self, digest: str, tools: Sequence[Mapping[str, Any]]) -> None:
        self.digest = digest
        self.tools = tuple(tools)


class CatalogStore:
    """Stored catalogs keyed by definition identity, in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, identity: str) -> Path:
        return self.directory / f"{identity}.json"

    def load(self, identity: str) -> Stored | None:
        """The stored catalog of ``identity``, or None (missing, unreadable, corrupt: logged)."""
        path = self._path(identity)
        try:
            raw = _read_bounded(path, MAX_STORED_BYTES)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            _log.warning("ignoring the stored catalog %s: %s", path, exc)
            return None
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            _log.warning("ignoring the corrupt stored catalog %s: %s", path, type(exc).__name__)
            return None
        if (
            not isinstance(document, dict)
            or document.get("version") != _FORMAT
            or document.get("identity") != identity
            or not isinstance(document.get("digest"), str)
            or not isinstance(document.get("tools"), list)
            or not all(isinstance(t, dict) for t in document["tools"])
        ):
            _log.warning("ignoring the malformed stored catalog %s", path)
            return None
        return Stored(document["digest"], document["tools"])

    def save(self, identity: str, digest: str, tools: Sequence[Mapping[str, Any]]) -> bool:
        """Store a catalog; False (logged) when the directory cannot be written."""
        data = json.dumps(
            {"version": _FORMAT, "identity": identity, "digest": digest, "tools": list(tools)},
            sort_keys=True,
        ).encode("utf-8")
        if len(data) > MAX_STORED_BYTES:
            _log.warning("not storing catalog %s: larger than %d bytes", identity, len(data))
            return False
        temp = self.directory / f".{identity}.{secrets.token_hex(8)}.tmp"
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(temp, flags, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(temp, self._path(identity))
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            _log.warning("cannot store catalog in %s: %s", self.directory, exc)
            return False
        return True


def _read_bounded(path: Path, limit: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        data = os.read(fd, limit + 1)
        chunks = [data]
        size = len(data)
        while data and size <= limit:
            data = os.read(fd, limit + 1 - size)
            chunks.append(data)
            size += len(data)
    finally:
        os.close(fd)
    if size > limit:
        raise ValueError(f"larger than {limit} bytes")
    return b"".join(chunks)
