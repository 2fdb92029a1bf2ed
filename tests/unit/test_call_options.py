"""Issue 14 defects 13/14, the pure parts: call options, exact binary sizes, not-found answers.

* ``CallOpts(deadline=...)`` refuses a value that cannot be a monotonic instant;
* the call methods' ``timeout``/``progress``/``cancel`` keywords and ``opts``
  are one or the other;
* an item's decoded size follows from its base64 length and padding;
* ``Unsupported.kind`` takes only the ``KIND_*`` constants;
* a -32602 "not found" (or -32002) answer to ``prompts/get``/``resources/read``
  is ``not_found``; any other -32602 stays ``server_protocol``.
"""

from __future__ import annotations

import base64
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpclient import (
    KIND_IMAGE,
    KIND_UNKNOWN,
    CallOpts,
    CancelToken,
    ConfigError,
    FailureClass,
    ProtocolError,
    ToolUnavailableError,
    Unsupported,
)
from mcpclient._internal.client.lifecycle.connection import translate_remote
from mcpclient._internal.client.options import options_of
from mcpclient._internal.session.rpc import RemoteError
from mcpclient._internal.wire import decoded_size

# ----------------------------------------------------------------------- deadline


def test_a_wall_clock_deadline_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        CallOpts(deadline=time.time() + 5)
    assert info.value.failure_class is FailureClass.INVALID_CONFIG
    assert "time.monotonic()" in info.value.message and "deadline" in info.value.message


@pytest.mark.parametrize("ahead", [-1000.0, -1.0, 0.0, 5.0, 30 * 24 * 3600.0, 364 * 24 * 3600.0])
def test_a_monotonic_deadline_is_kept(ahead: float) -> None:
    deadline = time.monotonic() + ahead
    assert CallOpts(deadline=deadline).deadline == deadline


def test_a_deadline_two_years_ahead_is_refused() -> None:
    with pytest.raises(ConfigError):
        CallOpts(deadline=time.monotonic() + 2 * 365 * 24 * 3600.0)


# ----------------------------------------------------------------------- keywords


def test_no_keywords_keep_opts_as_given() -> None:
    opts = CallOpts(timeout=3)
    assert options_of(opts, None, None, None, binding="b", op="call_tool") is opts
    assert options_of(None, None, None, None, binding="b", op="call_tool") == CallOpts()


def test_keywords_build_the_opts() -> None:
    token = CancelToken()
    seen: list[object] = []
    opts = options_of(None, 2.5, seen.append, token, binding="b", op="get_prompt")
    assert opts == CallOpts(timeout=2.5, progress=seen.append, cancel=token)


@pytest.mark.parametrize(
    "keywords",
    [
        {"timeout": 1.0},
        {"progress": print},
        {"cancel": CancelToken()},
        {"timeout": 1.0, "cancel": CancelToken()},
    ],
)
def test_opts_and_a_keyword_are_refused(keywords: dict[str, object]) -> None:
    args = {"timeout": None, "progress": None, "cancel": None, **keywords}
    with pytest.raises(ConfigError) as info:
        options_of(CallOpts(), **args, binding="b", op="read_resource")  # type: ignore[arg-type]
    assert info.value.op == "read_resource" and info.value.binding == "b"
    assert "not both" in info.value.message
    assert all(name in info.value.message for name in keywords)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "1"])
def test_a_bad_timeout_keyword_is_refused(timeout: object) -> None:
    with pytest.raises(ConfigError):
        options_of(None, timeout, None, None, binding="b", op="call_tool")  # type: ignore[arg-type]


# ------------------------------------------------------------------- decoded size


@given(st.binary(max_size=300), st.booleans())
def test_decoded_size_is_exact(data: bytes, strip_padding: bool) -> None:
    text = base64.b64encode(data).decode("ascii")
    if strip_padding:
        text = text.rstrip("=")
    assert decoded_size(text) == len(data)


# -------------------------------------------------------------------- kind values


def test_unsupported_takes_only_kind_constants() -> None:
    assert Unsupported(KIND_IMAGE, 3).kind == "image"
    assert Unsupported(KIND_UNKNOWN).bytes == 0
    for bad in ("hologram", "IMAGE", "", "tool-use"):
        with pytest.raises(ConfigError) as info:
            Unsupported(bad)
        assert "Unsupported.kind" in info.value.message and "KIND_" in info.value.message


# -------------------------------------------------------------------- not found


@pytest.mark.parametrize(
    ("op", "code", "message"),
    [
        ("get_prompt", -32602, "Unknown prompt: nope"),  # Python SDK, testing server
        ("get_prompt", -32602, "MCP error -32602: Prompt nope not found"),  # TypeScript SDK
        ("read_resource", -32602, "Unknown resource: test://x"),
        ("read_resource", -32602, "Resource test://x not found"),
        ("read_resource", -32002, "Resource not found"),  # up to 2025-11-25
        ("read_resource", -32002, "gone"),
    ],
)
def test_not_found_answers_are_not_found(op: str, code: int, message: str) -> None:
    error = translate_remote(RemoteError(code, message, {"uri": "test://x"}), "srv", op)
    assert isinstance(error, ToolUnavailableError)
    assert error.failure_class is FailureClass.NOT_FOUND
    assert (error.op, error.binding) == (op, "srv")
    assert message in error.message


@pytest.mark.parametrize(
    ("op", "code", "message"),
    [
        ("get_prompt", -32602, "Missing required argument: name"),
        ("read_resource", -32602, "Invalid URI"),
        ("call_tool", -32602, "Tool nope not found"),  # a tool is checked before it is sent
        ("complete", -32602, "Prompt nope not found"),
        ("get_prompt", -32603, "Prompt nope not found"),
    ],
)
def test_other_answers_stay_protocol_errors(op: str, code: int, message: str) -> None:
    error = translate_remote(RemoteError(code, message), "srv", op)
    assert type(error) is ProtocolError
    assert error.failure_class is FailureClass.SERVER_PROTOCOL
