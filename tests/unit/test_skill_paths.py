"""Skill file paths: a listing never hands out a path that climbs out of its skill."""

from __future__ import annotations

from typing import Any

import pytest

import mcpclient
from mcpclient import SkillEntry, SkillFile
from mcpclient._core.checks import relative_path_problem
from mcpclient.skills import Skill

DIGEST = "sha256:" + "0" * 64
ROOT = "skill://acme/pdf"

# The part after the skill's root of a listed file's URI.
ESCAPES = [
    "../../../etc/passwd",
    "references/../../../etc/passwd",
    "./SKILL.md",
    "a//b",
    "/etc/passwd",
    "..\\..\\windows\\system32",
    "references\\FORMS.md",
    "C:/Windows/win.ini",
    "c:evil",
    "%2e%2e/%2E%2E/etc/passwd",
    "..%2fetc%2fpasswd",
    "ok/..%5c..%5cx",
    "line\nbreak",
    "",
]


def _entry(*uris: str) -> SkillEntry:
    files = [SkillFile(f"{ROOT}/SKILL.md", DIGEST, 1), *(SkillFile(u, DIGEST, 1) for u in uris)]
    return SkillEntry(binding="b", uri=f"{ROOT}/SKILL.md", frontmatter={"name": "pdf"}, files=files)


@pytest.mark.parametrize("path", ESCAPES)
def test_an_entry_listing_a_file_outside_the_skill_is_refused(path: str) -> None:
    with pytest.raises(mcpclient.ConfigError, match=r"SkillEntry\.files\[1\] path"):
        _entry(f"{ROOT}/{path}")


@pytest.mark.parametrize(
    "uri", ["file:///etc/passwd", "skill://acme/other/SKILL.md", "skill://acme/pdfx/a.md"]
)
def test_an_entry_listing_another_uri_is_refused(uri: str) -> None:
    with pytest.raises(mcpclient.ConfigError, match="not inside the skill's directory"):
        _entry(uri)


@pytest.mark.parametrize("path", [p for p in ESCAPES if p])
def test_read_refuses_the_same_paths_the_listing_refuses(path: str) -> None:
    def fetch(listed: SkillFile, timeout: Any) -> bytes:
        raise AssertionError("nothing may be fetched")

    skill = Skill(_entry(f"{ROOT}/references/FORMS.md"), "x", "x", fetch)
    assert skill.files == ("SKILL.md", "references/FORMS.md")
    assert all(relative_path_problem(p) is None for p in skill.files)
    with pytest.raises(mcpclient.SkillError, match="not a plain relative path"):
        skill.read(path)


def test_plain_paths_are_listed_and_kept() -> None:
    entry = _entry(f"{ROOT}/references/FORMS.md", f"{ROOT}/a.b/c..d/.hidden", f"{ROOT}/50%25.md")
    assert [f.uri[len(ROOT) + 1 :] for f in entry.files] == [
        "SKILL.md",
        "references/FORMS.md",
        "a.b/c..d/.hidden",
        "50%25.md",
    ]
