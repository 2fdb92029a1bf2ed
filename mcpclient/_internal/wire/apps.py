"""The wire of the MCP Apps extension (SEP-1865): a tool's ``_meta.ui`` and a view's ``_meta.ui``.

A tool links its interactive view with ``_meta.ui.resourceUri`` (a
``ui://`` resource; older servers use the flat ``_meta["ui/resourceUri"]``)
and says who may call it with ``_meta.ui.visibility`` (``["model", "app"]``
by default). A view's content item carries ``_meta.ui``: its CSP domains
(``csp.connectDomains``, ``resourceDomains``, ``frameDomains``,
``baseUriDomains``), the ``permissions`` it asks for (``camera``,
``microphone``, ``geolocation``, ``clipboardWrite``), a ``domain`` and
``prefersBorder``. Wrong types read as absent; lists and strings are
bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_VISIBILITY", "resource_ui", "tool_ui"]

#: Who may call a tool whose ``_meta.ui`` names no visibility.
DEFAULT_VISIBILITY: tuple[str, ...] = ("model", "app")
_MAX_ITEMS = 64
_MAX_TEXT = 2048
_DEPRECATED_URI = "ui/resourceUri"
_PERMISSIONS = (
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboardWrite", "clipboard_write"),
)
_CSP = (
    ("connectDomains", "connect_domains"),
    ("resourceDomains", "resource_domains"),
    ("frameDomains", "frame_domains"),
    ("baseUriDomains", "base_uri_domains"),
)


def _text(value: Any) -> str:
    return value if isinstance(value, str) and len(value) <= _MAX_TEXT else ""


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value[:_MAX_ITEMS] if isinstance(v, str) and len(v) <= _MAX_TEXT)


def tool_ui(meta: Any) -> dict[str, Any] | None:
    """``ToolUI`` fields from a tool's ``_meta`` (None: the tool has no UI metadata)."""
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    deprecated = _text(meta.get(_DEPRECATED_URI))
    if not isinstance(ui, Mapping):
        return {"resource_uri": deprecated} if deprecated else None
    visibility = ui.get("visibility")
    return {
        "resource_uri": _text(ui.get("resourceUri")) or deprecated,
        "visibility": _texts(visibility) if isinstance(visibility, list) else DEFAULT_VISIBILITY,
    }


def resource_ui(meta: Any) -> dict[str, Any] | None:
    """``ResourceUI`` fields from a view content item's ``_meta`` (None: none given)."""
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if not isinstance(ui, Mapping):
        return None
    out: dict[str, Any] = {}
    csp = ui.get("csp")
    for key, field in _CSP:
        out[field] = _texts(csp.get(key)) if isinstance(csp, Mapping) else ()
    permissions = ui.get("permissions")
    for key, field in _PERMISSIONS:
        granted = permissions.get(key) if isinstance(permissions, Mapping) else None
        out[field] = granted is True or isinstance(granted, Mapping)
    out["domain"] = _text(ui.get("domain"))
    border = ui.get("prefersBorder")
    out["prefers_border"] = border if isinstance(border, bool) else None
    return out
