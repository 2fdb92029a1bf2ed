"""The test server's MCP Apps (``--apps``): tools with ``_meta.ui`` and ``ui://`` views (SEP-1865).

With ``--apps`` the server declares ``io.modelcontextprotocol/ui`` and lists,
after the other tools (each answers with an echo of its arguments):

* ``show_chart``: ``_meta.ui = {resourceUri: "ui://charts/view.html"}``
  (default visibility: model and app);
* ``refresh_chart``: ``visibility: ["app"]`` (only the view may call it);
* ``model_only``: ``visibility: ["model"]``;
* ``old_style``: only the deprecated flat ``_meta["ui/resourceUri"]``.

``ui://charts/view.html`` (listed) and ``ui://charts/unlisted.html`` (not
listed: views need not be) are read as ``text/html;profile=mcp-app`` with a
``_meta.ui`` of CSP domains, permissions, a domain and a border preference
(the unlisted one as a base64 ``blob``, with no ``_meta``).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

__all__ = ["APP_RESOURCES", "APP_TOOLS", "UI_EXTENSION", "VIEW_HTML", "VIEW_UI", "read_view"]

UI_EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEW = "ui://charts/view.html"
UNLISTED = "ui://charts/unlisted.html"
VIEW_HTML = "<!doctype html><title>chart</title><div id=chart></div>"
VIEW_UI: dict[str, Any] = {
    "csp": {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
        "frameDomains": ["https://embed.example.com"],
        "baseUriDomains": ["https://example.com"],
    },
    "permissions": {"camera": {}, "clipboardWrite": {}},
    "domain": "charts.example.com",
    "prefersBorder": True,
}


def _tool(name: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"An MCP Apps test tool ({name}); echoes its arguments.",
        "inputSchema": {"type": "object", "properties": {"series": {"type": "string"}}},
        "_meta": meta,
    }


APP_TOOLS: list[dict[str, Any]] = [
    _tool("show_chart", {"ui": {"resourceUri": VIEW}}),
    _tool("refresh_chart", {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}),
    _tool("model_only", {"ui": {"visibility": ["model"]}}),
    _tool("old_style", {"ui/resourceUri": VIEW}),
]
APP_RESOURCES: list[dict[str, Any]] = [
    {"uri": VIEW, "name": "chart view", "mimeType": MIME, "_meta": {"ui": VIEW_UI}},
]


def read_view(uri: str) -> dict[str, Any] | None:
    """The ``resources/read`` result of a ``ui://`` view, or None when ``uri`` is not one."""
    if uri == VIEW:
        item = {"uri": uri, "mimeType": MIME, "text": VIEW_HTML, "_meta": {"ui": VIEW_UI}}
    elif uri == UNLISTED:
        blob = base64.b64encode(VIEW_HTML.encode()).decode("ascii")
        item = {"uri": uri, "mimeType": MIME, "blob": blob}
    else:
        return None
    return {"contents": [copy.deepcopy(item)]}
