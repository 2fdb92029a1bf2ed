"""Remote MCP passthrough: an HTTP server handed to OpenAI or Anthropic to call itself."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

import attrs
import pytest

import mcpclient
from mcpclient import export
from tests.support.export_formats import conforms

SECRET = "s3cr3t-token-value"


@attrs.frozen
class Filter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@attrs.frozen
class ServerConfig:
    """The shape of ``mcpclient.config.ServerConfig`` the passthrough reads."""

    name: str
    url: str | None
    transport: str = "http"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    tool_filter: Filter = Filter()


def http_definition(**fields: Any) -> mcpclient.Definition:
    transport = mcpclient.StreamableHTTPTransport(
        "https://mcp.example.com/mcp", headers={"Authorization": f"Bearer {SECRET}"}
    )
    return mcpclient.Definition("docs", transport, **fields)


def test_openai_mcp_tool_from_a_definition() -> None:
    defn = http_definition(tool_filter=mcpclient.ToolFilter(allow=["search", "read"]))
    tool = export.to_openai_mcp_tool(defn)
    assert conforms("openai_responses", "mcp_tool", tool) == ""
    assert tool == {
        "type": "mcp",
        "server_label": "docs",
        "server_url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": f"Bearer {SECRET}"},
        "allowed_tools": ["search", "read"],
        "require_approval": "always",
    }
    assert export.to_openai_mcp_tool(defn, require_approval="never")["require_approval"] == "never"


def test_anthropic_mcp_server_from_a_definition() -> None:
    entry = export.to_anthropic_mcp_server(http_definition())
    assert conforms("anthropic", "mcp_server", entry) == ""
    assert entry == {
        "type": "url",
        "url": "https://mcp.example.com/mcp",
        "name": "docs",
        "authorization_token": SECRET,
        "tool_configuration": {"enabled": True},
    }


def test_a_token_callable_becomes_the_bearer_token() -> None:
    transport = mcpclient.StreamableHTTPTransport(
        "https://mcp.example.com/mcp", auth=lambda: SECRET
    )
    defn = mcpclient.Definition("docs", transport)
    assert export.to_anthropic_mcp_server(defn)["authorization_token"] == SECRET
    assert export.to_openai_mcp_tool(defn)["headers"] == {"Authorization": f"Bearer {SECRET}"}


def test_server_config_filters_become_exact_allow_lists() -> None:
    plain = ServerConfig(
        "wiki", "https://wiki.example.com/mcp", tool_filter=Filter(include=("read",))
    )
    assert export.to_openai_mcp_tool(plain)["allowed_tools"] == ["read"]
    globbed = ServerConfig(
        "wiki",
        "https://wiki.example.com/mcp",
        headers={"X-Api-Key": SECRET},
        tool_filter=Filter(include=("page_*",), exclude=("page_delete",)),
    )
    with pytest.raises(mcpclient.ConfigError, match="pass tools="):
        export.to_openai_mcp_tool(globbed)
    names = ["page_read", "page_delete", "page_write", "search"]
    tool = export.to_openai_mcp_tool(globbed, tools=names)
    assert conforms("openai_responses", "mcp_tool", tool) == ""
    assert tool["allowed_tools"] == ["page_read", "page_write"]
    assert tool["headers"] == {"X-Api-Key": SECRET}
    catalog = mcpclient.Catalog(
        tools=[
            mcpclient.ToolSpec(raw_name=n, model_name=f"mcp__w__{n}", input_schema={})
            for n in names
        ]
    )
    assert export.to_openai_mcp_tool(globbed, tools=catalog)["allowed_tools"] == [
        "page_read",
        "page_write",
    ]
    bearer = attrs.evolve(globbed, headers={"authorization": f"bearer {SECRET}"})
    entry = export.to_anthropic_mcp_server(bearer, tools=names)
    assert conforms("anthropic", "mcp_server", entry) == ""
    assert entry["tool_configuration"] == {
        "enabled": True,
        "allowed_tools": ["page_read", "page_write"],
    }


@pytest.mark.parametrize(
    "server",
    [
        mcpclient.Definition("local", mcpclient.StdioTransport("python", ["-m", "server"])),
        ServerConfig("local", None, transport="stdio"),
        ServerConfig("local", "ignored", transport="stdio"),
    ],
)
def test_stdio_servers_are_refused(server: Any) -> None:
    for convert in (export.to_openai_mcp_tool, export.to_anthropic_mcp_server):
        with pytest.raises(mcpclient.ConfigError, match="stdio"):
            convert(server)


def test_anthropic_refuses_what_its_connector_cannot_express_without_leaking_secrets() -> None:
    keyed = ServerConfig("wiki", "https://wiki.example.com/mcp", headers={"X-Api-Key": SECRET})
    with pytest.raises(mcpclient.ConfigError, match="X-Api-Key") as refused:
        export.to_anthropic_mcp_server(keyed)
    assert SECRET not in str(refused.value) and SECRET not in repr(refused.value)
    loopback = ServerConfig("dev", "http://127.0.0.1:8000/mcp")
    with pytest.raises(mcpclient.ConfigError, match="https"):
        export.to_anthropic_mcp_server(loopback)
    with pytest.raises(mcpclient.ConfigError, match="Definition or a ServerConfig"):
        export.to_openai_mcp_tool(object())  # type: ignore[arg-type]


@attrs.frozen(kw_only=True)
class GlobFilter(mcpclient.ToolFilter):
    """Like ``mcpclient.config.ToolFilter``: a ToolFilter subclass whose names are globs."""

    def permits(self, raw_name: str) -> bool:
        if any(fnmatch.fnmatchcase(raw_name, p) for p in self.deny):
            return False
        return not self.allow or any(fnmatch.fnmatchcase(raw_name, p) for p in self.allow)


@attrs.frozen
class PairsServerConfig:
    """The shape ``mcpclient.config.ServerConfig`` has: header pairs, allow/deny globs."""

    name: str
    url: str | None
    transport: str = "http"
    headers: tuple[tuple[str, str], ...] = ()
    tool_filter: mcpclient.ToolFilter = attrs.field(factory=mcpclient.ToolFilter)


def test_glob_filters_of_config_values_and_definitions_use_the_filter_itself() -> None:
    names = ["page_read", "page_delete", "search"]
    glob = GlobFilter(allow=["page_*"], deny=["*_delete"])
    for server in (
        PairsServerConfig(
            "wiki",
            "https://wiki.example.com/mcp",
            headers=(("Authorization", f"Bearer {SECRET}"),),
            tool_filter=glob,
        ),
        http_definition(tool_filter=glob),
    ):
        with pytest.raises(mcpclient.ConfigError, match="pass tools="):
            export.to_anthropic_mcp_server(server)
        entry = export.to_anthropic_mcp_server(server, tools=names)
        assert entry["authorization_token"] == SECRET
        assert entry["tool_configuration"]["allowed_tools"] == ["page_read"]
    exact = PairsServerConfig(
        "wiki", "https://wiki.example.com/mcp", tool_filter=GlobFilter(allow=["search"])
    )
    assert export.to_openai_mcp_tool(exact)["allowed_tools"] == ["search"]
