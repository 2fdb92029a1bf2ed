"""Call hooks and approval over a host of third-party servers (server-filesystem, mcp-server-time).

server-filesystem annotates its tools (``read_text_file`` read-only, ``write_file``
destructive): a policy on those hints lets the reads run and keeps the writes from
the disk, and the model is told so in an error result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import CallDeniedError
from mcpclient.hooks import CallHooks, CallInfo, Decision
from tests.support.servers import make_definition

from .third_party import npm_peer, venv_peer


def _read_only(info: CallInfo) -> Decision | None:
    assert info.hints_trusted is False  # the spec: annotations are untrusted hints
    if info.annotations is not None and info.annotations.read_only_hint:
        return None
    return Decision.deny(f"{info.tool} is not read-only")


@pytest.fixture
def host(tmp_path: Path) -> Any:
    command, *args = npm_peer("@modelcontextprotocol/server-filesystem")
    (tmp_path / "note.txt").write_text("hello from disk")
    servers = {
        "files": make_definition("files", command, [*args, str(tmp_path)]),
        "time": make_definition(
            "time",
            venv_peer("py-time", "mcp-server-time"),
            ["--local-timezone", "UTC"],
            env={"TZ": "UTC"},
        ),
    }
    seen: list[CallInfo] = []
    hooks = CallHooks(before=(seen.append, _read_only))
    with mcpclient.Host(servers, required=servers, hooks=hooks) as h:
        yield h, seen, tmp_path


def test_host_hooks_see_real_annotations_and_deny_a_write(host: Any) -> None:
    h, seen, root = host
    note = str(root / "note.txt")
    result = h.call_tool("mcp__files__read_text_file", {"path": note})
    assert "hello from disk" in result.text
    with pytest.raises(CallDeniedError, match="write_file is not read-only"):
        h.call_tool("mcp__files__write_file", {"path": str(root / "x.txt"), "content": "no"})
    assert not (root / "x.txt").exists()
    read, write = seen
    assert read.model_name == "mcp__files__read_text_file" and read.binding == "files"
    assert read.annotations is not None and read.annotations.read_only_hint is True
    assert write.annotations is not None and write.annotations.destructive_hint is True


def test_run_tool_calls_approve_denies_into_an_error_result(host: Any) -> None:
    h, _, root = host
    reply = {
        "content": [
            {
                "type": "tool_use",
                "id": "a",
                "name": "mcp__files__write_file",
                "input": {"path": str(root / "y.txt"), "content": "no"},
            },
            {
                "type": "tool_use",
                "id": "b",
                "name": "mcp__files__read_text_file",
                "input": {"path": str(root / "note.txt")},
            },
        ]
    }
    (message,) = h.run_tool_calls(reply, provider="anthropic", timeout=30, approve=_read_only)
    write, read = message["content"]
    assert write["is_error"] is True and "denied" in str(write["content"])
    assert not read.get("is_error") and "hello from disk" in str(read["content"])
    assert not (root / "y.txt").exists()


def test_time_server_tool_without_read_only_hint_is_denied_by_the_policy(host: Any) -> None:
    h, seen, _ = host
    spec = h.catalog().tool_by_model_name("mcp__time__get_current_time")
    assert spec is not None
    hinted = spec.annotations is not None and spec.annotations.read_only_hint
    if hinted:
        assert h.call_tool("mcp__time__get_current_time", {"timezone": "UTC"}).is_error is False
    else:
        with pytest.raises(CallDeniedError):
            h.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
    assert seen[-1].binding == "time" and seen[-1].tool == "get_current_time"
