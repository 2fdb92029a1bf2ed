"""mcpclient.config.dump: any dialect written, read back the same, and what it loses."""

from __future__ import annotations

import json
import tomllib
import warnings

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import ConfigError, config
from mcpclient.config import ConfigWarning, ServerConfig, ToolFilter, toml_write


def stdio(name: str = "s", **kw: object) -> ServerConfig:
    fields: dict[str, object] = {
        "name": name,
        "transport": "stdio",
        "command": "/usr/bin/srv",
        "args": ("--a", "b c"),
        "env": (("TOKEN", 'q"uo\\te\n'),),
    }
    fields.update(kw)
    return ServerConfig(**fields)  # type: ignore[arg-type]


def remote(name: str = "r", transport: str = "http", **kw: object) -> ServerConfig:
    fields: dict[str, object] = {
        "name": name,
        "transport": transport,
        "url": "https://x.example/mcp",
        "headers": (("Authorization", "Bearer t"),),
    }
    fields.update(kw)
    return ServerConfig(**fields)  # type: ignore[arg-type]


def essence(server: ServerConfig) -> ServerConfig:
    """A server without the fields that say where and how it was read."""
    return attrs.evolve(
        server, dialect="", source="", origins=(), unresolved=(), sse_fallback=False
    )


def reload(text: str, dialect: str) -> config.LoadedConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # a dump must read back without warnings
        return config.load(text, dialect=dialect, env={})


@pytest.mark.parametrize("dialect", config.DIALECTS)
def test_a_stdio_and_an_http_server_round_trip_through_every_dialect(dialect: str) -> None:
    servers = [stdio(), remote()]
    if dialect == "claude-desktop":
        servers = [stdio()]
    dumped = config.dump(servers, dialect)
    assert dumped.dialect == dialect
    assert dumped.lost == ()
    back = reload(dumped.text, dialect)
    assert [essence(s) for s in back.values()] == [essence(s) for s in servers]


@pytest.mark.parametrize(
    ("dialect", "server"),
    [
        ("gemini", remote(transport="sse", tool_timeout=1.5, trust=True)),
        (
            "gemini",
            stdio(tool_filter=ToolFilter(allow=("a",), deny=("b",)), disabled=True, cwd="/w"),
        ),
        ("codex", stdio(startup_timeout=2.5, tool_timeout=30.0, cwd="/w", disabled=True)),
        ("codex", remote(tool_filter=ToolFilter(deny=("x_tool",)))),
        ("codex", stdio(trust=True, auto_approve=("read_file", "list_dir"))),
        ("codex", stdio(trust=False)),
        ("cline", stdio(auto_approve=("t",), tool_timeout=90.0, disabled=True, cwd="/w")),
        ("cline", remote(transport="sse")),
        ("windsurf", stdio(disabled=True, tool_filter=ToolFilter(deny=("t",)))),
        ("claude-code", remote(transport="sse")),
        ("fastmcp", stdio(cwd="/w", tool_timeout=5.0)),
        ("vscode", remote(transport="sse")),
        ("vscode", stdio(cwd="/w")),
        ("zed", stdio(disabled=True)),
        ("cursor", remote(transport="sse")),
    ],
)
def test_each_dialects_own_settings_round_trip(dialect: str, server: ServerConfig) -> None:
    dumped = config.dump([server], dialect)
    assert dumped.lost == ()
    assert [essence(s) for s in reload(dumped.text, dialect).values()] == [essence(server)]


@pytest.mark.parametrize(
    ("dialect", "server", "lost"),
    [
        ("claude-desktop", remote(), "cannot express a remote (URL) server; left out"),
        ("claude-desktop", stdio(disabled=True), "cannot mark a server disabled; left out"),
        ("cursor", stdio(tool_filter=ToolFilter(allow=("a",))), "cannot express this tool filter"),
        ("claude-code", stdio(cwd="/w"), "cannot express a working directory"),
        ("claude-code", stdio(startup_timeout=3.0), "cannot express a startup timeout"),
        ("vscode", stdio(disabled=True), "cannot mark a server disabled; left out"),
        ("vscode", stdio(trust=True), "cannot express trust"),
        ("codex", remote(transport="sse"), "no SSE transport"),
        ("codex", stdio(tool_filter=ToolFilter(allow=("get_*",))), "not globs"),
        ("gemini", stdio(auto_approve=("a",)), "auto-approved tools"),
        ("zed", stdio(tool_timeout=3.0), "cannot express a tool timeout"),
        (
            "windsurf",
            stdio(tool_filter=ToolFilter(allow=("a",))),
            "cannot express this tool filter",
        ),
    ],
)
def test_what_a_target_cannot_express_is_reported(
    dialect: str, server: ServerConfig, lost: str
) -> None:
    dumped = config.dump([server], dialect)
    assert any(lost in line and repr(server.name) in line for line in dumped.lost), dumped.lost


def test_a_left_out_server_is_not_written() -> None:
    dumped = config.dump([stdio(), remote()], "claude-desktop")
    assert list(json.loads(dumped.text)["mcpServers"]) == ["s"]
    assert list(reload(dumped.text, "claude-desktop")) == ["s"]


def test_mapping_keys_name_the_servers() -> None:
    dumped = config.dump({"renamed": stdio()}, "cursor")
    assert list(json.loads(dumped.text)["mcpServers"]) == ["renamed"]


def test_unknown_dialect() -> None:
    with pytest.raises(ConfigError, match="unknown dialect"):
        config.dump([], "emacs")


def test_gemini_writes_milliseconds_and_codex_seconds() -> None:
    server = stdio(tool_timeout=1.5, startup_timeout=2.0)
    gemini = json.loads(config.dump([server], "gemini").text)
    assert gemini["mcpServers"]["s"]["timeout"] == 1500
    codex = tomllib.loads(config.dump([server], "codex").text)
    assert codex["mcp_servers"]["s"]["tool_timeout_sec"] == 1.5
    assert codex["mcp_servers"]["s"]["startup_timeout_sec"] == 2


def test_fixture_files_round_trip_to_their_own_dialect() -> None:
    from tests.unit.test_config_dialects import ENV, FIXTURES

    for relative in (
        "claude-code/.mcp.json",
        "codex/.codex/config.toml",
        "gemini/.gemini/settings.json",
        "cline/cline_mcp_settings.json",
        "windsurf/.codeium/windsurf/mcp_config.json",
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)
            loaded = config.load(FIXTURES / relative, env=ENV)
        dumped = config.dump(loaded, loaded.dialect)
        # the Codex fixture's "delete_*" is a glob here, a plain name to Codex
        assert all("not globs" in line for line in dumped.lost), relative
        back = reload(dumped.text, loaded.dialect)
        assert [essence(s) for s in back.values()] == [essence(s) for s in loaded.values()]


# ----------------------------------------------------------------------- the TOML writer

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_leaf = st.booleans() | st.integers(-(2**63), 2**63 - 1) | _text | st.lists(_text, max_size=3)
_table = st.dictionaries(_text, _leaf, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, st.dictionaries(_text, _leaf | _table, max_size=4), max_size=3))
def test_toml_writer_round_trips(document: dict[str, dict[str, object]]) -> None:
    wrapped = {"mcp_servers": document}
    assert tomllib.loads(toml_write.dumps(wrapped)) == wrapped


def test_toml_writer_quotes_keys_and_escapes() -> None:
    text = toml_write.dumps({"mcp_servers": {"a.b c": {"k": 'x\ty\u0001"\\', "f": 1.5}}})
    assert '[mcp_servers."a.b c"]' in text
    assert tomllib.loads(text) == {"mcp_servers": {"a.b c": {"k": 'x\ty\u0001"\\', "f": 1.5}}}
