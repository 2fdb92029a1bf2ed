"""mcpclient.config: a bad file is one ConfigFileError listing every problem where it is."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pytest

from mcpclient import ConfigError, FailureClass, config
from mcpclient.config import ConfigFileError, ConfigWarning

BAD = Path(__file__).resolve().parents[1] / "fixtures" / "config" / "bad"


def problems_of(source: object, **kwargs: object) -> tuple[str, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        with pytest.raises(ConfigFileError) as info:
            config.load(source, **kwargs)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error, ConfigError)
    assert error.failure_class is FailureClass.INVALID_CONFIG
    assert error.op == "load_config"
    return error.problems


def test_every_problem_of_a_claude_code_file_with_its_pointer() -> None:
    f = BAD / "claude-code" / ".mcp.json"
    assert problems_of(f, env={}) == (
        f"{f}:/mcpServers/num-command/command: must be a string, got a number",
        f"{f}:/mcpServers/args-string/args: must be an array of strings, got a string",
        f"{f}:/mcpServers/env-object/env/NESTED: must be a string, got an object",
        f"{f}:/mcpServers/bad-type/type: must be one of stdio, http, sse",
        f"{f}:/mcpServers/no-url: a remote server needs a URL",
        f"{f}:/mcpServers/no-command: a stdio server needs a command",
        f"{f}:/mcpServers/not-object: a server must be an object, got a string",
        f"{f}:/mcpServers/unset/env/TOKEN: environment variable UNSET_SECRET_VAR is not set",
    )


def test_the_message_names_the_count_and_the_first_problems() -> None:
    f = BAD / "claude-code" / ".mcp.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        with pytest.raises(ConfigFileError) as info:
            config.load(f, env={})
    message = info.value.message
    assert message.startswith(f"8 problems in {f}: {f}:/mcpServers/num-command/command")
    assert message.endswith("and 3 more")


def test_unknown_keys_are_warnings_with_their_location() -> None:
    f = BAD / "claude-code" / ".mcp.json"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ConfigFileError):
            config.load(f, env={})
    texts = [str(w.message) for w in caught]
    # warnings are issued only for a file that loads; an error carries only errors
    assert texts == []
    document = {"mcpServers": {"typo": {"command": "srv", "arg": ["x"], "enviroment": {}}}, "x": 1}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = config.load(document, dialect="claude-code")
    assert [str(w.message) for w in caught] == [
        "<dict>:/x: unknown key, ignored",
        "<dict>:/mcpServers/typo/arg: unknown key, ignored",
        "<dict>:/mcpServers/typo/enviroment: unknown key, ignored",
    ]
    assert all(w.category is ConfigWarning for w in caught)
    assert result.warnings == tuple(str(w.message) for w in caught)


def test_json_syntax_error_has_line_and_column() -> None:
    f = BAD / "syntax.json"
    assert problems_of(f) == (f"{f}:3:26: not valid JSON: Expecting ',' delimiter",)


def test_unterminated_comment() -> None:
    f = BAD / "unterminated.jsonc"
    assert problems_of(f, dialect="vscode") == (f"{f}:2:3: not valid JSON: unterminated comment",)


def test_toml_syntax_error() -> None:
    f = BAD / "codex" / "broken.toml"
    (problem,) = problems_of(f)
    assert problem.startswith(f"{f}: not valid TOML: ")
    assert "line 1" in problem


def test_codex_value_errors() -> None:
    f = BAD / "codex" / ".codex" / "config.toml"
    assert problems_of(f) == (
        f"{f}:mcp_servers.inline.bearer_token: Codex refuses an inline bearer token;"
        " use bearer_token_env_var",
        f"{f}:mcp_servers.badtimes.startup_timeout_sec: must be a positive number, got a number",
        f"{f}:mcp_servers.badtimes.tool_timeout_sec: must be a positive number, got a string",
        f"{f}:mcp_servers.badtimes.enabled: must be a boolean, got a string",
    )


def test_vscode_inputs_and_env_file_errors() -> None:
    f = BAD / "vscode" / ".vscode" / "mcp.json"
    assert problems_of(f, inputs={"key": "v"}) == (
        f"{f}:/inputs/1: an input must be an object with a string id",
        f"{f}:/servers/s/env/A: ${{input:missing}} names no entry of inputs",
        f"{f}:/servers/f/envFile: cannot read the env file"
        " /nonexistent/mcpclient-test.env: FileNotFoundError",
    )


def test_gemini_value_errors() -> None:
    f = BAD / "gemini" / ".gemini" / "settings.json"
    assert problems_of(f) == (
        f"{f}:/mcp/allowed: must be an array of strings, got a string",
        f"{f}:/mcpServers/t/timeout: must be a positive number, got a number",
        f"{f}:/mcpServers/t/trust: must be a boolean, got a string",
        f"{f}:/mcpServers/t/includeTools: must be an array of strings, got a string",
    )


def test_missing_file_and_wrong_top_level() -> None:
    missing = BAD / "nope" / ".mcp.json"
    assert problems_of(missing) == (f"{missing}: no such file",)
    assert problems_of({"mcpServers": []}, dialect="cursor") == (
        "<dict>:/mcpServers: must be an object, got an array",
    )
    assert problems_of("[1, 2]", dialect="cursor") == (
        "<string>:/: the file must hold a JSON object",
    )
    assert problems_of({"mcpServers": {}}, dialect="vscode") == (
        "<dict>:/mcpServers: VS Code reads servers, not mcpServers",
    )
    assert problems_of({"servers": {}}, dialect="cursor") == (
        "<dict>:/servers: Cursor reads mcpServers, not servers",
    )


def test_zed_command_of_the_wrong_type() -> None:
    assert problems_of({"context_servers": {"z": {"command": 3}}}, dialect="zed") == (
        "<dict>:/context_servers/z/command: must be a string or an object, got a number",
    )


def test_an_invalid_url_is_refused_at_definition_not_at_load() -> None:
    document = {"mcpServers": {"w": {"type": "http", "url": "http://remote.example/mcp"}}}
    server = config.load(document, dialect="claude-code")["w"]
    with pytest.raises(ConfigError, match="plain http://"):
        server.definition()


def test_config_file_error_pickles_with_its_problems() -> None:
    error = ConfigFileError("2 problems", problems=("a: x", "b: y"), op="load_config")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ConfigFileError
    assert copy.problems == ("a: x", "b: y")
    assert (copy.message, copy.op, copy.failure_class) == (
        "2 problems",
        "load_config",
        FailureClass.INVALID_CONFIG,
    )


def test_strict_json_hosts_warn_about_comments() -> None:
    with pytest.warns(ConfigWarning, match="Claude Desktop reads plain JSON"):
        config.load('{"mcpServers": {} // c\n}', dialect="claude-desktop")


def test_duplicate_binding_names_are_warned() -> None:
    document = {"mcpServers": {"My Server": {"command": "a"}, "my-server": {"command": "b"}}}
    with pytest.warns(ConfigWarning, match="share the binding name 'my-server'"):
        result = config.load(document, dialect="fastmcp")
    assert [s.binding_name for s in result.values()] == ["my-server", "my-server"]


def _warnings_of(document: object, dialect: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.load(document, dialect=dialect, env={"T": "t"})  # type: ignore[arg-type]
    return [str(w.message) for w in caught]


@pytest.mark.parametrize(
    ("dialect", "document", "expected"),
    [
        (
            "claude-code",
            {
                "mcpServers": {
                    "s": {"type": "http", "url": "https://x.example", "headersHelper": "h"}
                }
            },
            "<dict>:/mcpServers/s/headersHelper: 'headersHelper' is a host setting;"
            " not supported by mcpclient, ignored",
        ),
        (
            "codex",
            {"mcp_servers": {"s": {"command": "x", "required": True}}},
            "<dict>:mcp_servers.s.required: 'required' is a host setting;"
            " not supported by mcpclient, ignored",
        ),
        (
            "claude-code",
            {"mcpServers": {"s": {"type": "http", "url": "https://x.example", "command": "x"}}},
            "<dict>:/mcpServers/s/command: a remote server does not use this, ignored",
        ),
        (
            "fastmcp",
            {"mcpServers": {"s": {"command": "x", "headers": {"A": "b"}}}},
            "<dict>:/mcpServers/s/headers: a stdio server does not use this, ignored",
        ),
        (
            "gemini",
            {"mcpServers": {"s": {"command": "x", "includeTools": ["a", "a", ""]}}},
            "<dict>:/mcpServers/s/includeTools: lists tool 'a' twice",
        ),
        (
            "zed",
            {"context_servers": {"s": {"command": {"path": "/x", "cwd": "/y"}}}},
            "<dict>:/context_servers/s/command/cwd: unknown key, ignored",
        ),
        (
            "vscode",
            {"inputs": [{"id": "i", "type": "promptString", "secret": 1}], "servers": {}},
            "<dict>:/inputs/0/secret: unknown key, ignored",
        ),
    ],
)
def test_ignored_settings_are_warned_where_they_are(
    dialect: str, document: dict[str, object], expected: str
) -> None:
    assert expected in _warnings_of(document, dialect)


def test_numbers_in_env_are_their_text() -> None:
    result = config.load({"mcpServers": {"s": {"command": "x", "env": {"PORT": 8080}}}})
    assert result["s"].env_mapping == {"PORT": "8080"}


def test_a_source_of_another_type_is_refused() -> None:
    with pytest.raises(ConfigError, match="got bytes"):
        config.load(b"{}")  # type: ignore[arg-type]
