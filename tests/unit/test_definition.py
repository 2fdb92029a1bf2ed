"""Definition.validate() and the transport parameter objects.

origin-client.md §3 fixes the order of the checks (the first violation wins);
DESIGN.md §2.1 and §5 fix the transport rules and that nothing observable ever
shows a credential.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from mcpclient import (
    PROFILE_DEFAULT,
    PROFILE_LEGACY,
    PROFILE_STRICT,
    ClientCapabilities,
    ConfigError,
    Definition,
    FailureClass,
    LegacySSETransport,
    Limits,
    LogLevel,
    Profile,
    ReconnectPolicy,
    RetryPolicy,
    StdioTransport,
    StreamableHTTPTransport,
    Timeouts,
    Tolerance,
    ToolFilter,
)
from mcpclient.definition import LEGACY_VERSIONS, MODERN_VERSIONS

STDIO = StdioTransport("/usr/bin/server", ["--stdio"])
HTTP = StreamableHTTPTransport("https://example.com/mcp")
SSE = LegacySSETransport("https://example.com/sse")
HTTP_TRANSPORTS = [StreamableHTTPTransport, LegacySSETransport]


def unchecked(cls: type, *args: Any, **kwargs: Any) -> Any:
    """Build a value with attrs validators switched off (converters still run)."""
    with attrs.validators.disabled():
        return cls(*args, **kwargs)


def validate_error(defn: Definition) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        defn.validate()
    return info.value


# --- Definition.validate ---


@pytest.mark.parametrize("transport", [STDIO, HTTP], ids=lambda t: t.kind)
def test_valid_definition_passes(transport: Any) -> None:
    defn = Definition(
        "srv",
        transport,
        timeouts=Timeouts(startup=1),
        limits=Limits(max_frame_bytes=1024),
        capabilities=ClientCapabilities(sampling=True),
        tool_filter=ToolFilter(deny=["rm"]),
        allow_parallel_calls=True,
        compat=PROFILE_STRICT,
        reconnect=ReconnectPolicy(disabled=True),
        refresh=RetryPolicy(attempts=1),
        log_level=LogLevel.DEBUG,
        protocol="2025-06-18",
    )
    before = attrs.asdict(defn, recurse=False)
    assert defn.validate() is None
    assert attrs.asdict(defn, recurse=False) == before


def test_log_level_accepts_strings() -> None:
    assert Definition("srv", STDIO, log_level="warning").log_level is LogLevel.WARNING


@pytest.mark.parametrize("profile", [None, PROFILE_DEFAULT, PROFILE_STRICT], ids=str)
def test_sse_refused_without_tolerance(profile: Profile | None) -> None:
    defn = Definition("srv", SSE, compat=profile)  # construction alone does not refuse it
    err = validate_error(defn)
    assert "Definition.transport" in err.message
    assert "legacy_sse" in err.message
    assert err.binding == "srv"
    assert err.op == "validate"
    assert err.failure_class is FailureClass.INVALID_CONFIG
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    "profile",
    [PROFILE_LEGACY, Profile("mine", 3, [Tolerance.LEGACY_SSE])],
    ids=str,
)
def test_sse_accepted_with_tolerance(profile: Profile) -> None:
    Definition("srv", SSE, compat=profile).validate()


def test_sse_refuses_a_pinned_modern_version() -> None:
    for version in MODERN_VERSIONS:
        err = validate_error(Definition("srv", SSE, compat=PROFILE_LEGACY, protocol=version))
        assert "Definition.protocol" in err.message
    for version in ("auto", "legacy", *LEGACY_VERSIONS):
        Definition("srv", SSE, compat=PROFILE_LEGACY, protocol=version).validate()


def test_protocol_accepts_auto_legacy_and_known_versions() -> None:
    accepted = ["auto", "legacy", *LEGACY_VERSIONS, *MODERN_VERSIONS]
    assert "2024-11-05" in accepted and "2026-07-28" in accepted
    for protocol in accepted:
        defn = Definition("srv", STDIO, protocol=protocol)
        defn.validate()
        assert defn.protocol == protocol


@pytest.mark.parametrize(
    "protocol", ["", "Auto", "LEGACY", "latest", "2024-11-04", "2026-07-29", " auto", 20250618]
)
def test_protocol_refuses_others(protocol: object) -> None:
    with pytest.raises(ConfigError, match=r"Definition\.protocol"):
        Definition("srv", STDIO, protocol=protocol)  # type: ignore[arg-type]
    defn = unchecked(Definition, "srv", STDIO, protocol=protocol)
    assert "Definition.protocol" in validate_error(defn).message


# A value built with validators disabled is still caught by validate(), naming
# the Definition field and the inner field.
UNCHECKED_FIELDS = [
    ("timeouts", lambda: unchecked(Timeouts, startup=0), "Definition.timeouts: Timeouts.startup"),
    ("timeouts", lambda: unchecked(Timeouts, auth=float("nan")), "Timeouts.auth"),
    ("limits", lambda: unchecked(Limits, max_frame_bytes=-1), "Limits.max_frame_bytes"),
    ("limits", lambda: unchecked(Limits, max_input_rounds=True), "Limits.max_input_rounds"),
    ("tool_filter", lambda: unchecked(ToolFilter, allow=["a", "a"]), "ToolFilter.allow"),
    ("tool_filter", lambda: unchecked(ToolFilter, deny=[""]), "ToolFilter.deny"),
    ("refresh", lambda: unchecked(RetryPolicy, attempts=0), "Definition.refresh: RetryPolicy"),
    ("refresh", lambda: unchecked(RetryPolicy, max_total=-1.0), "RetryPolicy.max_total"),
    (
        "reconnect",
        lambda: ReconnectPolicy(retry=unchecked(RetryPolicy, base_delay=0)),
        "Definition.reconnect: RetryPolicy.base_delay",
    ),
    ("reconnect", lambda: unchecked(ReconnectPolicy, disabled=1), "ReconnectPolicy.disabled"),
]


@pytest.mark.parametrize(("field", "build", "fragment"), UNCHECKED_FIELDS)
def test_validate_catches_unchecked_values(field: str, build: Any, fragment: str) -> None:
    defn = Definition("srv", STDIO, **{field: build()})  # passes: the type is right
    err = validate_error(defn)
    assert err.message.startswith(f"Definition.{field}: ")
    assert fragment in err.message
    assert err.binding == "srv"
    assert err.op == "validate"


@pytest.mark.parametrize(
    ("field", "build"),
    [
        ("compat", lambda: unchecked(Profile, "", 0)),
        ("compat", lambda: unchecked(Profile, "legacy", -1, [Tolerance.LEGACY_SSE])),
        ("capabilities", lambda: unchecked(ClientCapabilities, sampling=1)),
        ("transport", lambda: unchecked(StdioTransport, "")),
        ("transport", lambda: unchecked(StdioTransport, "srv", ["a\x00b"])),
    ],
)
def test_validate_catches_unchecked_compat_capabilities_transport(field: str, build: Any) -> None:
    if field == "transport":
        defn = Definition("srv", build())
    else:
        defn = Definition("srv", STDIO, **{field: build()})
    assert f"Definition.{field}" in validate_error(defn).message


def test_validate_catches_unchecked_top_level_fields() -> None:
    cases = [
        ({"name": "Srv"}, "Definition.name"),
        ({"name": ""}, "Definition.name must not be empty"),
        ({"transport": None}, "Definition.transport"),
        ({"timeouts": None}, "Definition.timeouts"),
        ({"limits": Timeouts()}, "Definition.limits"),
        ({"tool_filter": ()}, "Definition.tool_filter"),
        ({"capabilities": True}, "Definition.capabilities"),
        ({"compat": "default"}, "Definition.compat"),
        ({"refresh": ReconnectPolicy()}, "Definition.refresh"),
        ({"reconnect": RetryPolicy()}, "Definition.reconnect"),
    ]
    for overrides, fragment in cases:
        args = {"name": "srv", "transport": STDIO, **overrides}
        defn = unchecked(Definition, **args)
        assert fragment in validate_error(defn).message, overrides


def test_name_error_has_empty_binding() -> None:
    err = validate_error(unchecked(Definition, "Bad", STDIO))
    assert err.message.startswith("Definition.name has 'B' at index 0")
    assert err.binding == ""
    assert err.op == "validate"


# Reference §3 order: name, transport, compat, transport/profile, timeouts,
# limits, tool filter, log level, refresh, reconnect. Each pair below breaks an
# earlier and a later rule; the earlier one must be reported.
SSE_DEFAULT = {"transport": SSE}
ORDER_CASES = [
    ({"name": "Bad", **SSE_DEFAULT}, "Definition.name"),
    ({"name": "x" * 40, "timeouts": unchecked(Timeouts, startup=0)}, "Definition.name"),
    ({"transport": None, "limits": unchecked(Limits, max_body_bytes=0)}, "Definition.transport"),
    ({"compat": "strict", **SSE_DEFAULT}, "Definition.compat"),
    ({**SSE_DEFAULT, "timeouts": unchecked(Timeouts, request=0)}, "legacy_sse"),
    (
        {"timeouts": unchecked(Timeouts, request=0), "limits": unchecked(Limits, max_body_bytes=0)},
        "Definition.timeouts",
    ),
    (
        {
            "limits": unchecked(Limits, max_body_bytes=0),
            "tool_filter": unchecked(ToolFilter, deny=[""]),
        },
        "Definition.limits",
    ),
    (
        {
            "tool_filter": unchecked(ToolFilter, deny=[""]),
            "refresh": unchecked(RetryPolicy, attempts=0),
        },
        "Definition.tool_filter",
    ),
    (
        {
            "refresh": unchecked(RetryPolicy, attempts=0),
            "reconnect": unchecked(ReconnectPolicy, disabled=None),
        },
        "Definition.refresh",
    ),
    (
        {
            "reconnect": unchecked(ReconnectPolicy, disabled=None),
            "protocol": "bogus",
        },
        "Definition.reconnect",
    ),
    # step 3 (the profile itself) before step 4 (transport vs profile)
    ({"compat": unchecked(Profile, "", 0), **SSE_DEFAULT}, "Definition.compat: Profile.name"),
    ({"transport": unchecked(StdioTransport, ""), "compat": "x"}, "Definition.transport: "),
    # our additions come after the reference's ten steps
    (
        {
            "reconnect": unchecked(ReconnectPolicy, disabled=None),
            "capabilities": unchecked(ClientCapabilities, roots=None),
        },
        "Definition.reconnect",
    ),
    (
        {"capabilities": unchecked(ClientCapabilities, roots=None), "protocol": "bogus"},
        "Definition.capabilities: ClientCapabilities.roots",
    ),
    ({"allow_parallel_calls": 1, "protocol": "bogus"}, "Definition.allow_parallel_calls"),
    ({"protocol": "bogus"}, "Definition.protocol"),
]


@pytest.mark.parametrize(("overrides", "winner"), ORDER_CASES)
def test_validate_check_order(overrides: dict[str, Any], winner: str) -> None:
    args = {"name": "srv", "transport": STDIO, **overrides}
    err = validate_error(unchecked(Definition, **args))
    assert winner in err.message
    assert err.op == "validate"


def _with_log_level(defn: Definition, level: object) -> Definition:
    # log_level has a converter, so only bypassing the frozen class can plant a bad one.
    object.__setattr__(defn, "log_level", level)
    return defn


def test_validate_log_level_before_refresh() -> None:
    defn = unchecked(Definition, "srv", STDIO, refresh=unchecked(RetryPolicy, attempts=0))
    assert "Definition.log_level" in validate_error(_with_log_level(defn, "loud")).message


def test_validate_timeouts_before_log_level() -> None:
    defn = unchecked(Definition, "srv", STDIO, timeouts=unchecked(Timeouts, startup=0))
    assert "Definition.timeouts" in validate_error(_with_log_level(defn, "loud")).message


# --- StdioTransport ---


def test_stdio_good_values() -> None:
    t = StdioTransport(
        "/usr/local/bin/my-server",
        ["--port", "1"],
        env={"B": "2", "A": "1"},
        cwd="/tmp",
        inherit_env=["PATH", "HOME"],
        shutdown_grace=0.2,
    )
    assert t.kind == "stdio"
    assert t.redacted_origin == "stdio:my-server"
    assert t.args == ("--port", "1")
    assert t.env == (("A", "1"), ("B", "2"))
    assert t.env_mapping == {"A": "1", "B": "2"}
    assert t.inherit_env == ("PATH", "HOME")
    assert StdioTransport("npx").redacted_origin == "stdio:npx"
    assert StdioTransport("npx").inherit_env is True
    assert StdioTransport("npx", inherit_env=False).inherit_env is False
    assert StdioTransport("npx", inherit_env=()).inherit_env == ()
    assert StdioTransport("npx").env is None
    assert StdioTransport("npx").shutdown_grace == 2.0


STDIO_BAD = [
    ({"command": ""}, "StdioTransport.command must not be empty"),
    ({"command": "a\x00b"}, "StdioTransport.command must not contain a NUL"),
    ({"command": "\x00"}, "StdioTransport.command"),
    ({"command": "./server"}, "StdioTransport.command must be a bare program name"),
    ({"command": "bin/server"}, "StdioTransport.command must be a bare program name"),
    ({"command": "../bin/server"}, "StdioTransport.command"),
    ({"command": None}, "StdioTransport.command must be a str"),
    ({"command": b"/bin/x"}, "StdioTransport.command must be a str"),
    ({"args": "--flag"}, "StdioTransport.args must be a sequence"),
    ({"args": [1]}, "StdioTransport.args[0]"),
    ({"args": ["ok", "a\x00"]}, "StdioTransport.args[1] must not contain a NUL"),
    ({"env": {"": "x"}}, "StdioTransport.env has an invalid variable name"),
    ({"env": {"A=B": "x"}}, "StdioTransport.env has an invalid variable name"),
    ({"env": {"A\x00": "x"}}, "StdioTransport.env has an invalid variable name"),
    ({"env": {"A": "x\x00y"}}, "StdioTransport.env['A'] must not contain a NUL"),
    ({"env": {"A": 1}}, "StdioTransport.env"),
    ({"env": {1: "x"}}, "StdioTransport.env"),
    ({"env": "A=1"}, "StdioTransport.env must be a mapping"),
    ({"cwd": "relative/dir"}, "StdioTransport.cwd must be an absolute path"),
    ({"cwd": "dir"}, "StdioTransport.cwd must be an absolute path"),
    ({"cwd": "/tmp\x00x"}, "StdioTransport.cwd must not contain a NUL"),
    ({"cwd": 5}, "StdioTransport.cwd"),
    ({"inherit_env": "PATH"}, "StdioTransport.inherit_env"),
    ({"inherit_env": None}, "StdioTransport.inherit_env"),
    ({"inherit_env": 1}, "StdioTransport.inherit_env"),
    ({"inherit_env": [1]}, "StdioTransport.inherit_env[0]"),
    ({"inherit_env": [""]}, "StdioTransport.inherit_env[0]"),
    ({"inherit_env": ["PATH", "A=B"]}, "StdioTransport.inherit_env[1]"),
    ({"inherit_env": ["A\x00"]}, "StdioTransport.inherit_env[0]"),
    ({"shutdown_grace": 0}, "StdioTransport.shutdown_grace"),
]


@pytest.mark.parametrize(("kwargs", "fragment"), STDIO_BAD)
def test_stdio_refuses(kwargs: dict[str, Any], fragment: str) -> None:
    args = {"command": "/usr/bin/server", **kwargs}
    with pytest.raises(ConfigError) as info:
        StdioTransport(**args)
    assert fragment in info.value.message
    assert info.value.failure_class is FailureClass.INVALID_CONFIG


# --- StreamableHTTPTransport and LegacySSETransport ---


@pytest.mark.parametrize("cls", HTTP_TRANSPORTS, ids=lambda c: c.__name__)
def test_http_kind_and_loopback(cls: type) -> None:
    assert (
        cls("https://example.com/mcp").kind
        == {
            StreamableHTTPTransport: "streamablehttp",
            LegacySSETransport: "sse",
        }[cls]
    )
    for url in (
        "http://localhost/mcp",
        "http://localhost:8080/mcp",
        "http://127.0.0.1/mcp",
        "http://127.0.0.1:3000/mcp",
        "http://[::1]/mcp",
        "http://[::1]:3000/mcp",
        "https://example.com/mcp",
        "https://10.0.0.1:8443/",
    ):
        assert cls(url).url == url
    insecure = cls("http://example.com/mcp", allow_insecure_http=True)
    assert insecure.allow_insecure_http is True
    assert cls("https://example.com/").allow_insecure_http is False


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://example.com/mcp", "https://example.com"),
        ("https://example.com", "https://example.com"),
        ("https://Example.COM:8443/a/b?token=s3cr3t#frag", "https://example.com:8443"),
        ("http://127.0.0.1:3000/mcp?x=1", "http://127.0.0.1:3000"),
        ("http://[::1]:3000/mcp", "http://[::1]:3000"),
        ("http://localhost/sse", "http://localhost"),
    ],
)
def test_http_redacted_origin(url: str, origin: str) -> None:
    for cls in HTTP_TRANSPORTS:
        assert cls(url).redacted_origin == origin


HTTP_BAD = [
    ({"url": "ftp://example.com/"}, "url must be an http:// or https:// URL"),
    ({"url": "ws://example.com/"}, "url must be an http:// or https:// URL"),
    ({"url": "example.com/mcp"}, "url must be an http:// or https:// URL"),
    ({"url": ""}, "url"),
    ({"url": "https:///mcp"}, "url has no host"),
    ({"url": "https://user:pw@example.com/"}, "url must not carry credentials"),
    ({"url": "https://user@example.com/"}, "url must not carry credentials"),
    ({"url": "https://:pw@example.com/"}, "url must not carry credentials"),
    ({"url": "http://user:pw@localhost/"}, "url must not carry credentials"),
    ({"url": "http://example.com/mcp"}, "url uses plain http:// to a non-loopback host"),
    ({"url": "http://10.0.0.1/mcp"}, "url uses plain http:// to a non-loopback host"),
    ({"url": "http://localhost.example.com/"}, "url uses plain http://"),
    ({"url": "https://example.com:99999/"}, "url is not a valid URL"),
    ({"url": "https://example.com/a b"}, "url must not contain whitespace"),
    ({"url": "https://example.com/\r\nX: y"}, "url must not contain"),
    ({"url": None}, "url must be a str"),
    ({"headers": {"X-A": "a\r\nb"}}, "headers['X-A'] must not contain CR, LF or NUL"),
    ({"headers": {"X-A": "a\nb"}}, "headers['X-A'] must not contain CR, LF or NUL"),
    ({"headers": {"X-A": "a\rb"}}, "headers['X-A'] must not contain CR, LF or NUL"),
    ({"headers": {"X-A": "a\x00b"}}, "headers['X-A'] must not contain CR, LF or NUL"),
    ({"headers": {"X-A": "1", "x-a": "2"}}, "headers names"),
    (
        {"headers": {"Authorization": "1", "AUTHORIZATION": "2"}},
        "headers names 'Authorization' twice",
    ),
    ({"headers": {"Bad Name": "x"}}, "headers has an invalid header name"),
    ({"headers": {"X:Y": "x"}}, "headers has an invalid header name"),
    ({"headers": {"": "x"}}, "headers has an invalid header name"),
    ({"headers": {"X-A": 1}}, "headers must map str names to str values"),
    ({"headers": "X-A: 1"}, "headers must be a mapping"),
    ({"auth": "token"}, "auth must be a callable"),
    ({"auth": 5}, "auth must be a callable"),
    ({"ca_bundle": 5}, "ca_bundle"),
    ({"client_cert": 5}, "client_cert"),
    ({"client_cert": ("cert.pem",)}, "client_cert"),
    ({"client_cert": ("cert.pem", 1)}, "client_cert"),
    ({"proxy": "ftp://proxy:21"}, "proxy must be an http, https or socks5 proxy URL"),
    ({"proxy": 5}, "proxy"),
    ({"allow_insecure_http": 1}, "allow_insecure_http must be a bool"),
]


@pytest.mark.parametrize("cls", HTTP_TRANSPORTS, ids=lambda c: c.__name__)
def test_http_refuses(cls: type) -> None:
    problems = []
    for kwargs, fragment in HTTP_BAD:
        args = {"url": "https://example.com/mcp", **kwargs}
        try:
            cls(**args)
        except ConfigError as err:
            if f"{cls.__name__}.{fragment}" not in err.message:
                problems.append(f"{kwargs}: {err.message}")
        else:
            problems.append(f"{kwargs}: accepted")
    assert problems == []


@pytest.mark.parametrize("cls", HTTP_TRANSPORTS, ids=lambda c: c.__name__)
def test_http_good_values(cls: type) -> None:
    t = cls(
        "https://example.com/mcp",
        headers={"X-B": "2", "X-A": "1"},
        auth=lambda: "token",
        ca_bundle="/etc/ssl/ca.pem",
        client_cert=["/c.pem", "/k.pem"],
        proxy="socks5h://proxy:1080",
    )
    assert t.header_mapping == {"X-A": "1", "X-B": "2"}
    assert t.client_cert == ("/c.pem", "/k.pem")
    assert cls("https://example.com/", client_cert="/both.pem").client_cert == "/both.pem"
    assert cls("https://example.com/").headers is None
    assert cls("https://example.com/").header_mapping == {}


# --- secrets never observable ---

SECRET = "s3cr3t-Tok3n-9f8e7d"


class TokenProvider:
    """An auth provider whose own repr would leak the token."""

    def __call__(self) -> str:
        return SECRET

    def __repr__(self) -> str:
        return f"TokenProvider({SECRET})"


def _secret_transports() -> list[Any]:
    stdio = StdioTransport(
        "/usr/bin/server",
        ["--token", SECRET, f"--key={SECRET}"],
        env={"API_KEY": SECRET, "OTHER": f"x{SECRET}x"},
        inherit_env=["PATH"],
    )
    http = [
        cls(
            f"https://example.com:8443/mcp/{SECRET}?key={SECRET}#{SECRET}",
            headers={"Authorization": f"Bearer {SECRET}", "X-Api-Key": SECRET},
            auth=TokenProvider(),
            proxy=f"http://user:{SECRET}@proxy.example.com:3128",
        )
        for cls in HTTP_TRANSPORTS
    ]
    return [stdio, *http]


@pytest.mark.parametrize("transport", _secret_transports(), ids=lambda t: t.kind)
def test_secret_never_shown(transport: Any) -> None:
    profile = PROFILE_LEGACY if transport.kind == "sse" else None
    defn = Definition("srv", transport, compat=profile)
    defn.validate()
    for shown in (
        repr(transport),
        str(transport),
        transport.redacted_origin,
        repr(defn),
        str(defn),
        transport.kind,
    ):
        assert SECRET not in shown
    # what is shown still identifies the transport
    assert transport.redacted_origin in ("stdio:server", "https://example.com:8443")
    assert "API_KEY" in repr(transport) or transport.kind != "stdio"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"url": f"https://user:{SECRET}@example.com/"},
        {"url": f"http://{SECRET}:pw@example.com/"},
        {"url": f"ftp://example.com/{SECRET}"},
        {"url": f"http://example.com/{SECRET}"},
        {"url": f"https://example.com/{SECRET} x"},
        {"headers": {"Authorization": f"Bearer {SECRET}\r\nX-Evil: 1"}},
        {"proxy": f"ftp://user:{SECRET}@proxy"},
    ],
    ids=lambda k: next(iter(k)),
)
def test_refusals_do_not_echo_secrets(kwargs: dict[str, Any]) -> None:
    for cls in HTTP_TRANSPORTS:
        with pytest.raises(ConfigError) as info:
            cls(**{"url": "https://example.com/", **kwargs})
        assert SECRET not in str(info.value)
        assert SECRET not in repr(info.value)


def test_bad_port_refusal_does_not_echo_secret() -> None:
    with pytest.raises(ConfigError) as info:
        StreamableHTTPTransport(f"https://apikey:{SECRET}/mcp")
    assert SECRET not in str(info.value)


def test_stdio_refusals_do_not_echo_env_values() -> None:
    with pytest.raises(ConfigError) as info:
        StdioTransport("srv", env={"API_KEY": f"{SECRET}\x00"})
    assert SECRET not in str(info.value)
    with pytest.raises(ConfigError) as info:
        StdioTransport("srv", ["--token", f"{SECRET}\x00"])
    assert SECRET not in str(info.value)
