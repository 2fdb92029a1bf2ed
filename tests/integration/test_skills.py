"""Issue 19, skills (SEP-2640): listing without reading, verified loading, listed-only reads.

Against the testing server's ``--skills`` (good and tampered skills, a
prefetch canary) over stdio and Streamable HTTP, at both eras; every
``resources/read`` the server saw is read back from its ``--record`` file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient.definition import SKILLS_EXTENSION

from ..support.http_servers import ScriptedServer, http_definition
from ..support.servers import LATEST_LEGACY, MODERN, Recording, definition

ON = {SKILLS_EXTENSION: {}}
TRANSPORTS = [
    ("stdio", LATEST_LEGACY),
    ("stdio", MODERN),
    ("http", LATEST_LEGACY),
    ("http", MODERN),
]
IDS = [f"{t}-{v}" for t, v in TRANSPORTS]

Reads = Callable[[], list[str]]


def _reads_of(messages: list[Any], method: str = "resources/read") -> list[str]:
    return [
        (m.get("params") or {}).get("uri")
        for m in messages
        if isinstance(m, dict) and m.get("method") == method and "id" in m
    ]


@contextmanager
def skills_server(
    tmp_path: Path, transport: str, version: str, *flags: str, **fields: Any
) -> Iterator[tuple[mcpclient.Client, Reads, Callable[[], list[str]]]]:
    """A client of ``--skills`` and readers of the URIs it read and the methods it called."""
    fields.setdefault("extensions", ON)
    if transport == "stdio":
        record = tmp_path / "record.jsonl"
        defn = definition("--skills", *flags, record=record, protocol=version, **fields)
        recording = Recording(record)
        with mcpclient.connect(defn) as client:
            yield client, lambda: _reads_of(recording.messages()), recording.methods
        return
    with ScriptedServer(tmp_path, "--skills", *flags) as server:
        defn = http_definition(server.url, tag="skills", protocol=version, **fields)

        def bodies() -> list[Any]:
            return [e.get("body") for e in server.records("skills")]

        def methods() -> list[str]:
            return [b.get("method", "") for b in bodies() if isinstance(b, dict)]

        with mcpclient.connect(defn, timeout=20) as client:
            yield client, lambda: _reads_of(bodies()), methods


@pytest.mark.parametrize(("transport", "version"), TRANSPORTS, ids=IDS)
def test_listing_reads_nothing_and_loading_reads_only_skill_md(
    tmp_path: Path, transport: str, version: str
) -> None:
    with skills_server(tmp_path, transport, version) as (client, reads, methods):
        listed = client.skills()
        by_name = {e.name: e for e in listed}
        assert set(by_name) >= {"good", "refunds", "canary", "bad-size", "generated"}
        canary = by_name["canary"]
        assert canary.uri == "skill://canary/SKILL.md"
        assert canary.binding == ("engine" if transport == "stdio" else "web")
        assert [f.uri for f in canary.files] == [
            "skill://canary/SKILL.md",
            "skill://canary/references/CANARY.md",
        ]
        assert by_name["generated"].dynamic
        assert by_name["refunds"].root == "skill://acme/billing/refunds"
        assert "skills/list" in methods()
        # No prefetch: listing fetched no file of any skill.
        assert reads() == []

        skill = client.load_skill("canary")
        assert reads() == ["skill://canary/SKILL.md"]  # the canary's file is still unread
        assert skill.name == "canary"
        assert skill.frontmatter == canary.frontmatter
        assert skill.text.startswith("---\nname: canary\n")
        assert skill.body.strip() == "See references/CANARY.md."
        assert skill.files == ("SKILL.md", "references/CANARY.md")

        assert skill.read("references/CANARY.md") == b"canary\n"
        assert skill.read("references/CANARY.md") == b"canary\n"  # kept: read once
        assert skill.read("SKILL.md") == skill.text.encode()  # kept since the load
        assert reads() == ["skill://canary/SKILL.md", "skill://canary/references/CANARY.md"]


@pytest.mark.parametrize(("transport", "version"), TRANSPORTS, ids=IDS)
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("bad-size", "bytes; the listing says"),
        ("bad-digest", "sha256 digest"),
        ("bad-frontmatter", "frontmatter differs from the listing in: description"),
    ],
)
def test_a_tampered_skill_is_refused_and_nothing_more_is_read(
    tmp_path: Path, transport: str, version: str, name: str, why: str
) -> None:
    with skills_server(tmp_path, transport, version) as (client, reads, _):
        with pytest.raises(mcpclient.SkillError, match=why) as info:
            client.load_skill(name)
        assert info.value.failure_class is mcpclient.FailureClass.SKILL_INVALID
        assert reads() == [f"skill://{name}/SKILL.md"]  # FORMS.md never read


def test_loading_verifies_a_blob_and_a_nested_skill(tmp_path: Path) -> None:
    with skills_server(tmp_path, "stdio", MODERN) as (client, reads, _):
        good = client.load_skill("good")
        assert good.read("assets/logo.bin") == bytes(range(256))
        assert good.read("skill://good/references/GUIDE.md").startswith(b"# Guide")
        refunds = client.load_skill("skill://acme/billing/refunds/SKILL.md")
        assert refunds.name == "refunds"
        assert reads() == [
            "skill://good/SKILL.md",
            "skill://good/assets/logo.bin",
            "skill://good/references/GUIDE.md",
            "skill://acme/billing/refunds/SKILL.md",
        ]


def test_unlisted_and_escaping_paths_are_refused_without_a_read(tmp_path: Path) -> None:
    with skills_server(tmp_path, "stdio", LATEST_LEGACY) as (client, reads, _):
        skill = client.load_skill("good")
        for path in ("references/OTHER.md", "skill://canary/references/CANARY.md"):
            with pytest.raises(mcpclient.SkillError, match="does not list"):
                skill.read(path)
        for path in ("../canary/SKILL.md", "/etc/passwd", "a//b", ""):
            with pytest.raises(mcpclient.SkillError, match="plain relative path"):
                skill.read(path)
        assert reads() == ["skill://good/SKILL.md"]


def test_a_listing_that_climbs_out_of_its_skill_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    digest = "sha256:" + hashlib.sha256(b"x").hexdigest()

    def entry(name: str, *paths: str) -> dict[str, Any]:
        files = [f"skill://{name}/SKILL.md", *(f"skill://{name}/{p}" for p in paths)]
        return {
            "uri": f"skill://{name}/SKILL.md",
            "frontmatter": {"name": name},
            "resources": [{"uri": u, "digest": digest, "size": 1} for u in files],
        }

    hostile = [
        entry("up", "../../../etc/passwd"),
        entry("abs", "/etc/passwd"),
        entry("win", "..\\..\\boot.ini"),
        entry("drive", "C:/Windows/win.ini"),
        {
            **entry("other"),
            "resources": [{"uri": "file:///etc/passwd", "digest": digest, "size": 1}],
        },
    ]
    with skills_server(tmp_path, "stdio", LATEST_LEGACY) as (client, reads, _):

        def script(method: str, result: Any) -> None:
            client.call_tool(
                "hostile", {"action": "script_result", "method": method, "result": result}
            )

        script("skills/list", {"skills": [*hostile, entry("fine", "references/A.md")]})
        with caplog.at_level("WARNING", logger="mcpclient"):
            (only,) = client.skills()
        assert only.name == "fine"
        left_out = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
        assert len(left_out) == len(hostile), left_out
        assert all("SkillEntry.files[" in m for m in left_out), left_out
        # The same entry handed back by skills/get is refused too, before any read.
        script("skills/get", {"skill": hostile[0]})
        with pytest.raises(mcpclient.SkillError, match="no loadable entry"):
            client.load_skill("skill://up/SKILL.md")
        assert reads() == []


def test_a_dynamic_skill_is_refused_before_any_read(tmp_path: Path) -> None:
    with skills_server(tmp_path, "stdio", MODERN) as (client, reads, _):
        with pytest.raises(mcpclient.SkillError, match="dynamic"):
            client.load_skill("generated")
        assert reads() == []


def test_a_skill_over_the_limits_is_refused_before_any_read(tmp_path: Path) -> None:
    """Checked from the entry alone: 513 files, or 16 MiB + 1 byte."""
    digest = "sha256:" + hashlib.sha256(b"").hexdigest()
    many = [mcpclient.SkillFile(f"skill://big/f{i}", digest, 0) for i in range(513)]
    huge = [mcpclient.SkillFile("skill://big/SKILL.md", digest, 16 * 1024 * 1024 + 1)]
    with skills_server(tmp_path, "stdio", MODERN) as (client, reads, _):
        client.skills()
        binding = client.status().binding
        for files, why in ((many, "513 files"), (huge, "16777217 bytes")):
            entry = mcpclient.SkillEntry(
                binding=binding,
                uri="skill://big/SKILL.md",
                frontmatter={"name": "big"},
                files=files,
            )
            with pytest.raises(mcpclient.SkillError, match=why):
                client.load_skill(entry)
        assert reads() == []


def test_pages_are_followed(tmp_path: Path) -> None:
    with skills_server(tmp_path, "stdio", MODERN, "--page-size", "2") as (client, _, methods):
        names = [e.name for e in client.skills()]
    assert len(names) == len(set(names)) == 7
    assert methods().count("skills/list") == 4  # pages of 2, 2, 2, 1


def test_a_listed_name_that_is_unknown_or_a_host_without_opt_in(tmp_path: Path) -> None:
    with skills_server(tmp_path, "stdio", MODERN) as (client, _, _methods):
        with pytest.raises(mcpclient.ToolUnavailableError, match="no skill named"):
            client.load_skill("nope")
        with pytest.raises(mcpclient.ProtocolError, match="-32602: Unknown skill"):
            client.load_skill("skill://nope/SKILL.md")  # not listed: skills/get asked
    other = tmp_path / "no-opt-in"
    other.mkdir()
    with skills_server(other, "stdio", LATEST_LEGACY, extensions=()) as (client, _, methods):
        with pytest.raises(mcpclient.ConfigError, match="skills extension"):
            client.skills()
        assert "skills/list" not in methods()


def test_a_server_without_the_extension(tmp_path: Path) -> None:
    defn = definition(protocol=MODERN, extensions=ON)
    with mcpclient.connect(defn) as client, pytest.raises(mcpclient.ProtocolError) as info:
        client.skills()
    assert info.value.failure_class is mcpclient.FailureClass.UNSUPPORTED_PROTOCOL


@pytest.mark.parametrize(("transport", "version"), [TRANSPORTS[0], TRANSPORTS[3]], ids=IDS[::3])
def test_directory_reads_show_only_what_the_entry_lists(
    tmp_path: Path, transport: str, version: str
) -> None:
    with skills_server(tmp_path, transport, version) as (client, reads, methods):
        skill = client.load_skill("good")
        assert skill.directory() == ("SKILL.md", "assets/", "references/")
        # references/EXTRA.md is in the server's directory, not in the manifest.
        assert skill.directory("references") == ("references/GUIDE.md",)
        assert skill.directory("references/") == ("references/GUIDE.md",)
        assert methods().count("resources/directory/read") == 3
        assert reads() == ["skill://good/SKILL.md"]  # listing a directory reads no file
        with pytest.raises(mcpclient.SkillError, match="does not list"):
            skill.read("references/EXTRA.md")


def test_no_directory_reads_unless_the_server_offers_them(tmp_path: Path) -> None:
    flags = ("--extension", SKILLS_EXTENSION)  # declared as {}: no directoryRead
    with skills_server(tmp_path, "stdio", MODERN, *flags) as (client, _, methods):
        skill = client.load_skill("good")
        with pytest.raises(mcpclient.ProtocolError) as info:
            skill.directory()
        assert info.value.failure_class is mcpclient.FailureClass.UNSUPPORTED_PROTOCOL
        assert "resources/directory/read" not in methods()


def test_a_hostile_server_gets_classified_errors(tmp_path: Path) -> None:
    """Malformed listings, a repeated cursor, bad entries, a read that is not the file."""
    digest = "sha256:" + hashlib.sha256(b"x").hexdigest()
    entry = {
        "uri": "skill://h/SKILL.md",
        "frontmatter": {"name": "h"},
        "resources": [{"uri": "skill://h/SKILL.md", "digest": digest, "size": 1}],
    }
    with skills_server(tmp_path, "stdio", LATEST_LEGACY) as (client, reads, _):

        def script(method: str, result: Any) -> None:
            client.call_tool(
                "hostile", {"action": "script_result", "method": method, "result": result}
            )

        script("skills/list", {"skills": "nope"})
        with pytest.raises(mcpclient.ProtocolError, match="no skills list"):
            client.skills()
        script("skills/list", {"skills": [], "nextCursor": "c"})
        script("skills/list", {"skills": [], "nextCursor": "c"})
        with pytest.raises(mcpclient.ProtocolError, match="repeated a cursor"):
            client.skills()
        # Entries that break the entry rules are left out; the rest is kept.
        script("skills/list", {"skills": [{"uri": "skill://x/SKILL.md"}, 7, entry]})
        (only,) = client.skills()
        assert only.uri == "skill://h/SKILL.md"
        # The read answers for another URI, then with two items: refused, nothing used.
        for contents in (
            [{"uri": "skill://other", "text": "x"}],
            [{"uri": "skill://h/SKILL.md", "text": "x"}] * 2,
        ):
            script("resources/read", {"contents": contents})
            with pytest.raises(mcpclient.SkillError, match="not one"):
                client.load_skill(only)
        # Right size and digest, but no frontmatter at all.
        script("resources/read", {"contents": [{"uri": "skill://h/SKILL.md", "text": "x"}]})
        with pytest.raises(mcpclient.SkillError, match="frontmatter cannot be read"):
            client.load_skill(only)
        assert reads() == ["skill://h/SKILL.md"] * 3
