"""The one rule a release is checked against: the version agrees everywhere.

``mcpclient._core.version.VERSION`` is the only place the version is
written; setup.cfg reads it (``attr:``), ``mcpclient --version`` and the
``clientInfo`` we send print it. CHANGELOG.md must agree with it:

* while developing, its newest numbered section (below ``[Unreleased]``), if
  there is one, is ``VERSION`` (the release commit bumps both at once);
* for a release (``release=True``, run by ``.github/workflows/release.yml``
  against the pushed tag), the newest numbered section is ``VERSION`` with a
  date, ``[Unreleased]`` is empty, and the tag is ``v<VERSION>``.

A release also needs the project URLs (``project_urls`` in setup.cfg: Source,
Documentation, Changelog and Issues), which stay unset until the project is
hosted (:func:`url_problems`).

``python -m tests.support.release [TAG]`` runs the check from a checkout and
exits non-zero with the reason when it fails.
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SECTION = re.compile(r"^## \[(?P<name>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$", re.M)


def source_version() -> str:
    """``VERSION`` as written in the source, without importing the package."""
    text = (ROOT / "mcpclient" / "_core" / "version.py").read_text(encoding="utf-8")
    match = re.search(r'^VERSION = "([^"]+)"$', text, re.M)
    assert match, 'mcpclient/_core/version.py has no VERSION = "..." line'
    return match.group(1)


def changelog_problems(
    changelog: str, version: str, *, release: bool = False, tag: str | None = None
) -> list[str]:
    """Why ``changelog`` (CHANGELOG.md's text) disagrees with ``version``; empty when it agrees."""
    sections = list(_SECTION.finditer(changelog))
    problems: list[str] = []
    if not sections:
        return ["CHANGELOG.md has no '## [...]' section"]
    numbered = [m for m in sections if m["name"] != "Unreleased"]
    top = numbered[0] if numbered else None
    if top is not None and top["name"] != version:
        problems.append(
            f"CHANGELOG.md's newest release is [{top['name']}] but the version is {version}"
        )
    if release:
        if top is None or top["name"] != version or not top["date"]:
            problems.append(f"a release needs a '## [{version}] - YYYY-MM-DD' section")
        unreleased = sections[0] if sections[0]["name"] == "Unreleased" else None
        if unreleased is not None:
            end = sections[1].start() if len(sections) > 1 else len(changelog)
            if changelog[unreleased.end() : end].strip():
                problems.append("a release leaves [Unreleased] empty (its entries moved down)")
        if tag is not None and tag != f"v{version}":
            problems.append(f"the tag {tag!r} is not v{version}")
    return problems


#: The project URLs a release must name (setup.cfg ``project_urls``).
RELEASE_URLS = ("Source", "Documentation", "Changelog", "Issues")


def url_problems(setup_cfg: str) -> list[str]:
    """Why ``setup_cfg`` (setup.cfg's text) cannot be released: a missing project URL."""
    parser = configparser.ConfigParser()
    parser.read_string(setup_cfg)
    raw = parser.get("metadata", "project_urls", fallback="")
    urls = dict(
        (part.strip() for part in line.split("=", 1)) for line in raw.splitlines() if "=" in line
    )
    return [
        f"setup.cfg names no https {name} URL in project_urls (set them before a release)"
        for name in RELEASE_URLS
        if not urls.get(name, "").startswith("https://")
    ]


def main(argv: list[str]) -> int:
    """Check the checkout; with a tag argument, check it as that release."""
    version = source_version()
    tag = argv[0] if argv else None
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    problems = changelog_problems(changelog, version, release=tag is not None, tag=tag)
    if tag is not None:
        problems += url_problems((ROOT / "setup.cfg").read_text(encoding="utf-8"))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"mcpclient {version}: CHANGELOG.md agrees")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
