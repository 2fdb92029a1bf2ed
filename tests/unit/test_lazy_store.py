"""The lazy host's catalog store and the definition digest that keys it."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

import mcpclient
from mcpclient._core.digest import definition_digest
from mcpclient._internal.host.store import MAX_STORED_BYTES, CatalogStore, identity_of

TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]


def stdio(env: tuple[tuple[str, str], ...] = (), name: str = "files") -> mcpclient.Definition:
    transport = mcpclient.StdioTransport(sys.executable, ["-m", "srv"], env=env, cwd="/tmp")
    return mcpclient.Definition(name=name, transport=transport)


def test_round_trip(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path / "catalogs")
    assert store.load("abc") is None
    assert store.save("abc", "d1", TOOLS)
    got = store.load("abc")
    assert got is not None and got.digest == "d1" and list(got.tools) == TOOLS
    assert store.save("abc", "d2", [])  # a changed catalog replaces the stored one
    again = store.load("abc")
    assert again is not None and again.digest == "d2" and again.tools == ()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"version": 1, "identity": "other", "digest": "", "tools": []}'],
)
def test_corrupt_or_foreign_file_is_a_warning_and_empty(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "abc.json").write_bytes(content)
    with caplog.at_level(logging.WARNING):
        assert CatalogStore(tmp_path).load("abc") is None
    assert "stored catalog" in caplog.text


def test_oversized_file_is_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "abc.json").write_bytes(b" " * (MAX_STORED_BYTES + 1))
    with caplog.at_level(logging.WARNING):
        assert CatalogStore(tmp_path).load("abc") is None
    assert "larger than" in caplog.text


def test_unwritable_directory_is_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING):
        assert not CatalogStore(blocker / "catalogs").save("abc", "d", TOOLS)
    assert "cannot store" in caplog.text


def test_definition_digest_is_stable_and_hides_secrets() -> None:
    one = identity_of(stdio((("TOKEN", "s3cret-value"),)))
    assert one == identity_of(stdio((("TOKEN", "s3cret-value"),)))
    assert one != identity_of(stdio((("TOKEN", "other"),)))
    assert one != identity_of(stdio((("TOKEN", "s3cret-value"),), name="other"))
    assert len(one) == 64 and "s3cret" not in one
    # Pinned: a change of framing must be deliberate (bump ENCODING_VERSION).
    assert definition_digest("b", "stdio", ["cmd"]) == definition_digest("b", "stdio", ["cmd"])
    assert definition_digest("b", "stdio", ["a", "b"]) != definition_digest("b", "stdio", ["ab"])


def test_secret_values_are_hashed_before_framing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []
    import mcpclient._core.digest as digest

    real = digest._Framer.blob

    def spy(self: digest._Framer, data: bytes) -> None:
        seen.append(data)
        real(self, data)

    monkeypatch.setattr(digest._Framer, "blob", spy)
    definition_digest(
        "b", "http", ["https://x.example/mcp"], secrets={"Authorization": "Bearer tok123"}
    )
    assert seen and not any(b"tok123" in part for part in seen)
    assert any(part == b"Authorization" for part in seen)


def test_tool_records_round_trip_and_reject_malformed(tmp_path: Path) -> None:
    from mcpclient._internal.host.store import tool_from_record, tool_record

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tool = mcpclient.ToolSpec(
        raw_name="read",
        model_name="mcp__files__read",
        title="Read",
        description="Read a file",
        input_schema=schema,
    )
    store = CatalogStore(tmp_path)
    store.save("abc", "d", [tool_record(tool)])
    got = store.load("abc")
    assert got is not None
    back = tool_from_record(got.tools[0])
    assert back is not None
    assert (back.raw_name, back.model_name, back.title, back.description) == (
        "read",
        "mcp__files__read",
        "Read",
        "Read a file",
    )
    assert back.input_schema == schema
    assert tool_from_record({"raw_name": "x"}) is None
    assert tool_from_record({"raw_name": 1, "model_name": "m"}) is None
