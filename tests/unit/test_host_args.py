"""``Host``'s arguments and its state before and after it connects (no server started)."""

from __future__ import annotations

from typing import Any

import pytest

import mcpclient
from mcpclient import (
    ConfigError,
    Definition,
    Handlers,
    Host,
    ShutdownError,
    State,
    StdioTransport,
    ToolUnavailableError,
)


def defn(name: str) -> Definition:
    return Definition(name, StdioTransport("/nonexistent/never-started"))


class Config:
    """A stand-in for ``mcpclient.config.ServerConfig``: ``definition()`` and ``disabled``."""

    def __init__(self, name: str, *, disabled: bool = False, broken: Exception | None = None):
        self.name = name
        self.disabled = disabled
        self.broken = broken

    def definition(self) -> Any:
        if self.broken is not None:
            raise self.broken
        return defn(self.name)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"servers": [defn("a")]}, "mapping"),
        ({"servers": {"": defn("a")}}, "non-empty"),
        ({"servers": {"a": "not a definition"}}, "must be a Definition"),
        ({"servers": {"a": defn("a")}, "handlers": object()}, "Handlers"),
        ({"servers": {"a": defn("a")}, "handlers": {"b": Handlers()}}, "unknown server 'b'"),
        ({"servers": {"a": defn("a")}, "handlers": {"a": object()}}, "Handlers value"),
        ({"servers": {"a": defn("a")}, "required": "a"}, "collection"),
        ({"servers": {"a": defn("a")}, "required": ["b"]}, "unknown servers: 'b'"),
        ({"servers": {"a": Config("a", disabled=True)}, "required": ["a"]}, "disabled"),
        ({"servers": {"a": defn("a")}, "startup_timeout": 0}, "startup_timeout"),
        ({"servers": {"a": defn("a")}, "startup_timeout": True}, "startup_timeout"),
    ],
)
def test_malformed_arguments_are_refused(kwargs: dict[str, Any], match: str) -> None:
    servers = kwargs.pop("servers")
    with pytest.raises(ConfigError, match=match):
        Host(servers, **kwargs)


def test_disabled_servers_are_skipped() -> None:
    host = Host({"on": Config("on"), "off": Config("off", disabled=True)})
    assert host.skipped == ("off",)
    assert list(host.status()) == ["on"]


def test_a_failing_definition_is_that_servers_failure_alone() -> None:
    host = Host({"bad": Config("bad", broken=RuntimeError("no such variable")), "ok": defn("ok")})
    status = host.status()
    assert status["bad"].state is State.FAILED
    assert status["ok"].state is State.CONFIGURED
    error = host.failed["bad"]
    assert isinstance(error, ConfigError)
    assert "no such variable" in error.message
    assert isinstance(error.__cause__, RuntimeError)


def test_a_definition_that_is_not_one_is_a_config_failure() -> None:
    class Wrong:
        def definition(self) -> object:
            return "nope"

    host = Host({"w": Wrong()})
    assert "not a Definition" in host.failed["w"].message


def test_a_required_server_whose_definition_fails_stops_connect_before_any_start() -> None:
    cause = ConfigError("unset variable ${TOKEN}", op="load")
    host = Host({"bad": Config("bad", broken=cause), "ok": defn("ok")}, required=["bad"])
    with pytest.raises(ConfigError) as info:
        host.connect()
    assert "'bad'" in info.value.message
    assert info.value.__cause__ is cause
    assert host.clients == {}
    with pytest.raises(ShutdownError):  # the failed connect closed the host
        host.connect()
    host.close()


def test_before_connect_the_host_is_empty() -> None:
    host = Host({"a": defn("a")})
    assert host.clients == {}
    assert host.catalog().tools == ()
    with pytest.raises(ToolUnavailableError) as info:
        host.call_tool("mcp__a__echo", {})
    assert info.value.failure_class is mcpclient.FailureClass.TOOL_UNAVAILABLE
    with pytest.raises(TypeError):
        host.clients["a"] = None  # type: ignore[index]


def test_close_before_connect_is_final_and_idempotent() -> None:
    host = Host({"a": defn("a")})
    host.close()
    host.close()
    with pytest.raises(ShutdownError):
        host.connect()
    with pytest.raises(ShutdownError):
        host.call_tool("mcp__a__echo", {})


def test_an_empty_host_connects_and_closes() -> None:
    with Host({}) as host:
        assert host.catalog().tools == ()
        assert host.status() == {}
    assert "servers=0" in repr(host)


def test_the_key_is_the_binding_name() -> None:
    host = Host({"clock": defn("time"), "files": Config("other")})
    assert host.status()["clock"].binding == "clock"
    assert host.status()["files"].binding == "files"


@pytest.mark.parametrize(("key", "shown"), [("my server", "' '"), ("Time", "'T'"), ("é", "'é'")])
def test_a_key_that_is_no_binding_name_is_refused_with_the_rule(key: str, shown: str) -> None:
    with pytest.raises(ConfigError) as info:
        Host({key: defn("ok")})
    message = info.value.message
    assert f"Host server name {key!r} is its binding name" in message
    assert shown in message and "allowed are [a-z0-9]" in message


def test_from_config_makes_file_names_binding_names() -> None:
    document = {"mcpServers": {"My Time": {"command": "/x"}, "my-time": {"command": "/y"}}}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        host = Host.from_config(document, required=["My Time"])
    assert list(host.status()) == ["my-time", "my-time-2"]
