"""docs/testing-server.md documents every flag and hostile action of the test server.

The reference moved there from ``mcpclient.testing.server``'s module docstring;
these checks keep the two from drifting apart: a flag added to the parser or an
action added to ``catalog.HOSTILE_ACTIONS``/``HTTP_HOSTILE_ACTIONS`` without a
paragraph in the document fails here. Nothing is started and no socket opened.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpclient.testing import catalog, server

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing-server.md"


def _doc() -> str:
    if not DOC.is_file():  # an installed package without the repository's docs
        pytest.skip(f"{DOC} is not there")
    return DOC.read_text(encoding="utf-8")


def _flags() -> list[str]:
    parser = server.build_parser()
    return sorted(
        option
        for action in parser._actions  # argparse keeps no public list of its actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    )


def _items(doc: str) -> list[str]:
    """The first code span of every list item: a flag, an action, a control."""
    return re.findall(r"^- `([^`]+)`", doc, flags=re.MULTILINE)


def test_the_parser_has_the_flags_this_test_expects() -> None:
    flags = _flags()
    assert len(flags) > 40
    assert {"--era", "--transport", "--record", "--oauth-issuer", "--mrtr"} <= set(flags)


@pytest.mark.parametrize("flag", _flags())
def test_every_flag_of_the_parser_has_an_entry(flag: str) -> None:
    # An entry starts a list item (``- `--flag ARG` `` or a ``/``-joined pair).
    entries = re.findall(r"^- (.+)$", _doc(), re.MULTILINE)
    pattern = re.compile(r"`" + re.escape(flag) + r"(?:[ `=])")
    assert any(pattern.search(entry) for entry in entries), f"{flag} is not documented"


def test_every_flag_is_listed_by_help_with_a_summary() -> None:
    parser = server.build_parser()
    text = parser.format_help()
    assert [flag for flag in _flags() if flag not in text] == []
    assert "docs/testing-server.md" in text
    unexplained = [action.option_strings for action in parser._actions if not action.help]
    assert unexplained == []


def _section(doc: str, heading: str) -> str:
    start = doc.index(heading)
    end = doc.find("\n#", start + len(heading))
    return doc[start : end if end >= 0 else len(doc)]


def test_every_hostile_action_is_documented_in_order() -> None:
    doc = _doc()
    stdio = _section(doc, "## Hostile actions")
    http = _section(doc, "### HTTP hostile actions")
    assert [item.split()[0] for item in _items(stdio)] == list(catalog.HOSTILE_ACTIONS)
    assert [item.split()[0] for item in _items(http)] == list(catalog.HTTP_HOSTILE_ACTIONS)


def test_every_mutate_catalog_control_is_documented() -> None:
    controls = catalog.builtin_tool("mutate_catalog")
    assert controls is not None
    names = set(controls["inputSchema"]["properties"])
    section = _section(_doc(), "## Runtime controls")
    documented = {
        re.sub(r"[^a-z_].*", "", part.strip())
        for item in _items(section)
        for part in item.split("/")
    }
    # ``add {name} / remove {name}`` is one entry for two controls.
    documented |= {"remove"} if "`add` {name} / `remove` {name}" in section else set()
    assert names <= documented, sorted(names - documented)


def test_the_module_docstring_is_a_summary_pointing_at_the_document() -> None:
    doc = server.__doc__ or ""
    assert "docs/testing-server.md" in doc
    assert len(doc.splitlines()) < 40
