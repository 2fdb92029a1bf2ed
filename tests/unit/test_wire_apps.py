"""Issue 19, MCP Apps: reading a tool's and a view's ``_meta.ui`` (lenient, bounded)."""

from __future__ import annotations

from mcpclient._internal.wire.apps import DEFAULT_VISIBILITY, resource_ui, tool_ui


def test_tool_ui_reads_both_forms_and_defaults() -> None:
    assert tool_ui(None) is None
    assert tool_ui({}) is None
    assert tool_ui({"ui": {}}) == {"resource_uri": "", "visibility": DEFAULT_VISIBILITY}
    assert tool_ui({"ui/resourceUri": "ui://a"}) == {"resource_uri": "ui://a"}
    # The nested key wins over the deprecated one; each fills in for the other.
    both = {"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"}
    assert tool_ui(both) == {"resource_uri": "ui://new", "visibility": DEFAULT_VISIBILITY}
    old = {"ui": {"visibility": ["app"]}, "ui/resourceUri": "ui://old"}
    assert tool_ui(old) == {"resource_uri": "ui://old", "visibility": ("app",)}
    # An explicit empty list: visible to nobody; wrong types read as absent.
    assert tool_ui({"ui": {"visibility": []}}) == {"resource_uri": "", "visibility": ()}
    assert tool_ui({"ui": {"visibility": "app", "resourceUri": 3}}) == {
        "resource_uri": "",
        "visibility": DEFAULT_VISIBILITY,
    }
    assert tool_ui({"ui": {"visibility": ["app", 1, "x" * 5000]}})["visibility"] == ("app",)
    assert len(tool_ui({"ui": {"visibility": ["app"] * 1000}})["visibility"]) == 64


def test_resource_ui_reads_csp_permissions_domain_border() -> None:
    assert resource_ui(None) is None
    assert resource_ui({"ui": []}) is None
    fields = resource_ui(
        {
            "ui": {
                "csp": {"connectDomains": ["https://a"], "frameDomains": "https://b"},
                "permissions": {"camera": {}, "microphone": True, "geolocation": False},
                "domain": 5,
                "prefersBorder": "yes",
            }
        }
    )
    assert fields == {
        "connect_domains": ("https://a",),
        "resource_domains": (),
        "frame_domains": (),
        "base_uri_domains": (),
        "camera": True,
        "microphone": True,
        "geolocation": False,
        "clipboard_write": False,
        "domain": "",
        "prefers_border": None,
    }
