"""Issue 19, MCP Apps (SEP-1865): tool ``_meta.ui`` on ToolSpec, ``ui://`` views' ``_meta.ui``,
model-only exports and host catalog, and the view-originated call check; against ``--apps``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import mcpclient
from mcpclient import export
from mcpclient.definition import UI_EXTENSION

from ..support.http_servers import ScriptedServer, http_definition
from ..support.servers import LATEST_LEGACY, MODERN, definition

VIEW = "ui://charts/view.html"
APP_TOOLS = {"show_chart", "refresh_chart", "model_only", "old_style"}
TRANSPORTS = [
    ("stdio", LATEST_LEGACY),
    ("stdio", MODERN),
    ("http", LATEST_LEGACY),
    ("http", MODERN),
]
IDS = [f"{t}-{v}" for t, v in TRANSPORTS]


@contextmanager
def apps_client(tmp_path: Path, transport: str, version: str) -> Iterator[mcpclient.Client]:
    if transport == "stdio":
        defn = definition("--apps", protocol=version, extensions={UI_EXTENSION: {}})
        with mcpclient.connect(defn) as client:
            yield client
        return
    with ScriptedServer(tmp_path, "--apps") as server:
        defn = http_definition(
            server.url, tag="apps", protocol=version, extensions={UI_EXTENSION: {}}
        )
        with mcpclient.connect(defn, timeout=20) as client:
            yield client


@pytest.mark.parametrize(("transport", "version"), TRANSPORTS, ids=IDS)
def test_tool_ui_and_view_ui_are_kept(tmp_path: Path, transport: str, version: str) -> None:
    with apps_client(tmp_path, transport, version) as client:
        assert UI_EXTENSION in client.status().extensions
        catalog = client.catalog()
        tools = {t.raw_name: t for t in catalog.tools}
        assert tools["show_chart"].ui == mcpclient.ToolUI(
            resource_uri=VIEW, visibility=("model", "app")
        )
        assert tools["refresh_chart"].ui == mcpclient.ToolUI(resource_uri=VIEW, visibility=("app",))
        assert tools["model_only"].ui == mcpclient.ToolUI(visibility=("model",))
        # The deprecated flat key still links the view.
        assert tools["old_style"].ui == mcpclient.ToolUI(resource_uri=VIEW)
        assert tools["echo"].ui is None
        assert not tools["refresh_chart"].model_visible
        assert tools["refresh_chart"].app_visible
        assert not tools["model_only"].app_visible
        assert tools["echo"].model_visible and tools["echo"].app_visible

        (content,) = client.read_resource(VIEW).contents
        assert isinstance(content, mcpclient.ResourceContent)
        assert content.mime_type == "text/html;profile=mcp-app"
        assert content.text.startswith("<!doctype html>")
        assert content.ui == mcpclient.ResourceUI(
            connect_domains=("https://api.example.com",),
            resource_domains=("https://cdn.example.com",),
            frame_domains=("https://embed.example.com",),
            base_uri_domains=("https://example.com",),
            camera=True,
            clipboard_write=True,
            domain="charts.example.com",
            prefers_border=True,
        )
        # A view need not be listed; a blob reads as bytes; no _meta is no ui.
        (blob,) = client.read_resource("ui://charts/unlisted.html").contents
        assert isinstance(blob, mcpclient.ResourceContent)
        assert blob.data.startswith(b"<!doctype html>")
        assert blob.ui is None


def test_exports_and_the_host_catalog_leave_out_app_only_tools() -> None:
    defn = definition("--apps", protocol=MODERN, extensions={UI_EXTENSION: {}}, name="charts")
    with mcpclient.Host({"charts": defn}) as host:
        client = host.clients["charts"]
        assert {t.raw_name for t in client.catalog().tools} >= APP_TOOLS
        shown = {t.raw_name for t in host.catalog().tools}
        assert "refresh_chart" not in shown
        assert {"show_chart", "model_only", "old_style", "echo"} <= shown
        for exported in (
            export.to_anthropic(client),
            export.to_openai_chat(client),
            export.to_openai_responses(host),
            export.to_gemini(client.catalog()),
        ):
            names = set(exported.names)
            assert not any("refresh_chart" in name for name in names), exported.provider
            assert any("show_chart" in name for name in names), exported.provider
        # A model that calls the app-only tool anyway gets an error result, not a call.
        response = {
            "content": [
                {"type": "tool_use", "id": "t1", "name": "mcp__charts__refresh_chart", "input": {}}
            ]
        }
        (message,) = client.run_tool_calls(response, provider="anthropic")
        assert message["content"][0]["is_error"] is True


def test_a_view_may_call_only_app_visible_tools_of_its_own_server() -> None:
    defn = definition(
        "--apps", protocol=LATEST_LEGACY, extensions={UI_EXTENSION: {}}, name="charts"
    )
    with mcpclient.connect(defn) as client:
        catalog = client.catalog()
        spec = mcpclient.check_view_call(catalog, "refresh_chart", view_binding="charts")
        assert client.call_tool(spec.raw_name, {"series": "a"}).text == '{"series": "a"}'
        assert mcpclient.check_view_call(catalog, "echo", view_binding="charts").raw_name == "echo"
        with pytest.raises(mcpclient.ToolUnavailableError, match="not visible to apps"):
            mcpclient.check_view_call(catalog, "model_only", view_binding="charts")
        with pytest.raises(mcpclient.ToolUnavailableError, match="another server"):
            mcpclient.check_view_call(catalog, "refresh_chart", view_binding="other")
        with pytest.raises(mcpclient.ToolUnavailableError) as info:
            mcpclient.check_view_call(catalog, "nope", view_binding="charts")
        assert info.value.failure_class is mcpclient.FailureClass.NOT_FOUND


def _scripted_read(client: mcpclient.Client, uri: str, mime: str, text: str) -> None:
    """Script the server's next ``resources/read`` answer: one text content."""
    result = {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}
    client.call_tool(
        "hostile", {"action": "script_result", "method": "resources/read", "result": result}
    )


@pytest.mark.parametrize(
    "mime", ["text/html;profile=mcp-app", "TEXT/HTML; profile=mcp-app"], ids=["exact", "spelled"]
)
def test_a_view_over_the_text_bound_is_read_whole(mime: str) -> None:
    # Issue 25, defect 5: real servers ship views of 1.2 and 1.3 MB; cut, they are unusable.
    view = "<!doctype html>" + "<p>chart</p>" * 110_000  # ~1.3 MB
    with mcpclient.connect(definition("--apps", extensions={UI_EXTENSION: {}})) as client:
        _scripted_read(client, VIEW, mime, view)
        (content,) = client.read_resource(VIEW).contents
        assert content.text == view
        assert not content.truncated
        # Any other text keeps the text bound.
        _scripted_read(client, "test://big", "text/html", view)
        (other,) = client.read_resource("test://static/hello").contents
        assert other.truncated
        assert len(other.text.encode()) <= mcpclient.Limits().max_text_result_bytes


def test_a_view_is_still_bounded_by_its_own_limit() -> None:
    view = "<!doctype html>" + "x" * 300_000
    limits = mcpclient.Limits(max_app_view_bytes=200_000)
    defn = definition("--apps", extensions={UI_EXTENSION: {}}, limits=limits)
    with mcpclient.connect(defn) as client:
        _scripted_read(client, VIEW, "text/html;profile=mcp-app", view)
        (content,) = client.read_resource(VIEW).contents
        assert content.truncated
        assert len(content.text.encode()) <= 200_000
