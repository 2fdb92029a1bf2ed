"""The wire of extension negotiation (SEP-2133), both eras.

The client declares the extensions its host opted in to under
``capabilities.extensions`` (legacy: the ``initialize`` params; modern: the
client capabilities every request carries in ``_meta``); the server
declares its own under ``capabilities.extensions`` of its ``initialize`` or
``server/discover`` result. An extension is in use only when both sides
declare it. A settings value that is not a JSON object, an identifier that
is not a string, and anything past the bounds are dropped (the leniency
rule): a server's odd declaration never fails the connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mcpclient._core.canonical import compact
from mcpclient.definition import UI_EXTENSION, UI_MIME_TYPE, Extension

__all__ = [
    "MAX_SERVER_EXTENSIONS",
    "client_extensions",
    "negotiated",
    "server_extensions",
]

#: Extensions kept from one server's declaration; more are dropped.
MAX_SERVER_EXTENSIONS = 64
_MAX_ID_BYTES = 256
_MAX_SETTINGS_BYTES = 16 * 1024
_UI_MIME_TYPES = "mimeTypes"


def client_extensions(extensions: Iterable[Extension]) -> dict[str, Any]:
    """The ``capabilities.extensions`` object this client declares (empty: none)."""
    wire: dict[str, Any] = {}
    for ext in extensions:
        settings = ext.settings
        if ext.identifier == UI_EXTENSION and _UI_MIME_TYPES not in settings:
            # mimeTypes is REQUIRED in the Apps extension's client settings.
            settings[_UI_MIME_TYPES] = [UI_MIME_TYPE]
        wire[ext.identifier] = settings
    return wire


def server_extensions(capabilities: Any) -> dict[str, Any]:
    """The extensions a server declares in its capabilities, bounded: id -> settings."""
    raw = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, settings in raw.items():
        if len(out) >= MAX_SERVER_EXTENSIONS:
            break
        if not isinstance(key, str) or len(key.encode("utf-8", "surrogatepass")) > _MAX_ID_BYTES:
            continue
        if not isinstance(settings, Mapping):
            continue
        try:
            text = compact(settings)
        except (TypeError, ValueError, RecursionError):
            continue
        if len(text) > _MAX_SETTINGS_BYTES:
            continue
        out[key] = dict(settings)
    return out


def negotiated(ours: Iterable[Extension], theirs: Mapping[str, Any]) -> tuple[str, ...]:
    """The identifiers both sides declare, sorted."""
    return tuple(sorted(ext.identifier for ext in ours if ext.identifier in theirs))
