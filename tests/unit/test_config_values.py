"""mcpclient.config values: ServerConfig, its Definition, the glob ToolFilter, binding names."""

from __future__ import annotations

import attrs
import pytest

import mcpclient
from mcpclient import ConfigError, Timeouts, config
from mcpclient.config import ServerConfig, ToolFilter
from mcpclient.config.values import binding_name


def test_tool_filter_globs_and_deny_wins() -> None:
    f = ToolFilter(allow=("get_*", "list"), deny=("get_secret*",))
    assert f.permits("get_file") and f.allows("list")
    assert not f.permits("get_secret_key")  # deny wins over a matching allow
    assert not f.permits("delete")  # not allowed
    assert not f.permits("LIST")  # case-sensitive
    assert ToolFilter(deny=("x?",)).permits("x") and not ToolFilter(deny=("x?",)).permits("xy")
    assert ToolFilter().permits("anything") and ToolFilter().is_empty
    assert ToolFilter(allow=("a", "b")).is_exact and not f.is_exact
    assert isinstance(f, mcpclient.ToolFilter)


def test_tool_filter_keeps_the_base_validation() -> None:
    with pytest.raises(ConfigError, match="twice"):
        ToolFilter(allow=("a", "a"))


def test_definition_of_a_stdio_server() -> None:
    server = ServerConfig(
        name="My Files",
        transport="stdio",
        command="/usr/bin/srv",
        args=("-v",),
        env=(("K", "v"),),
        cwd="/tmp",
        startup_timeout=5.0,
        tool_timeout=7.5,
        tool_filter=ToolFilter(allow=("read_*",)),
    )
    d = server.definition()
    d.validate()
    assert d.name == "my-files"
    assert isinstance(d.transport, mcpclient.StdioTransport)
    assert (d.transport.command, d.transport.args, d.transport.cwd) == (
        "/usr/bin/srv",
        ("-v",),
        "/tmp",
    )
    assert d.transport.env_mapping == {"K": "v"}
    assert (d.timeouts.startup, d.timeouts.request) == (5.0, 7.5)
    assert d.tool_filter is server.tool_filter
    assert d.tool_filter.permits("read_file") and not d.tool_filter.permits("write_file")


def test_definition_of_http_and_sse_servers_and_overrides() -> None:
    http = ServerConfig(
        name="web", transport="http", url="https://x.example/mcp", headers=(("A", "b"),)
    )
    d = http.definition(name="other", timeouts=Timeouts(startup=3.0), allow_parallel_calls=True)
    assert isinstance(d.transport, mcpclient.StreamableHTTPTransport)
    assert d.transport.header_mapping == {"A": "b"}
    assert (d.name, d.timeouts.startup, d.allow_parallel_calls) == ("other", 3.0, True)
    assert d.compat is None
    sse = attrs.evolve(http, transport="sse")
    d = sse.definition()
    assert isinstance(d.transport, mcpclient.LegacySSETransport)
    assert d.compat is mcpclient.PROFILE_LEGACY
    d.validate()  # the legacy profile permits SSE


def test_a_server_needs_its_command_or_url() -> None:
    with pytest.raises(ConfigError, match="command is required"):
        ServerConfig(name="a", transport="stdio")
    with pytest.raises(ConfigError, match="url is required"):
        ServerConfig(name="a", transport="http")
    with pytest.raises(ConfigError, match="transport must be one of"):
        ServerConfig(name="a", transport="ws", url="wss://x")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("github", "github"),
        ("GitHub Copilot", "github-copilot"),
        ("my.server/v2", "my-server-v2"),
        ("_private", "private"),
        ("日本", "server"),
        ("x" * 40, "x" * 32),
        ("a" * 31 + "..b", "a" * 31),
    ],
)
def test_binding_names_are_valid(name: str, expected: str) -> None:
    assert binding_name(name) == expected
    mcpclient.Name(binding_name(name))


def test_origins_name_the_file_and_pointer() -> None:
    document = {"mcpServers": {"a/b": {"command": "x", "args": ["1"]}}}
    server = config.load(document, dialect="fastmcp")["a/b"]
    assert server.origin("command") == "<dict>:/mcpServers/a~1b/command"
    assert server.origin("args") == "<dict>:/mcpServers/a~1b/args"
    assert server.origin("cwd") == ""
    assert (server.dialect, server.source) == ("fastmcp", "<dict>")


def test_loaded_config_is_a_read_only_mapping() -> None:
    result = config.load({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})
    assert list(result) == ["a", "b"] and len(result) == 2 and "a" in result
    assert "fastmcp" in repr(result) and "a, b" in repr(result)
    with pytest.raises(TypeError):
        result["c"] = result["a"]  # type: ignore[index]
