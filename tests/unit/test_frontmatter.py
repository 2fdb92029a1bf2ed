"""Issue 19, skills: the bounded YAML-subset frontmatter reader and the JSON-model comparison."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient._core.frontmatter import (
    MAX_FRONTMATTER_BYTES,
    FrontmatterError,
    json_equal,
    parse,
    split,
)
from mcpclient._internal.wire.skills import content_bytes, read_entry

DOC = """\
name: pdf-processing
description: >
  Extract, fill,
  and assemble.

  Second paragraph.
license: "Apache-2.0"
allowed-tools: [Read, "Bash(git:*)", 3]
metadata:
  author: someone  # a comment
  version: 1.0
  tags:
    - a
    - b: c
      d: 2
  empty:
  yes: yes
keep: |+
  line1
   line2

strip: |-
  abc
plain: this is
  continued
seq:
- 1
- ~
- true
q: 'it''s'
dq: "tab\\tnew\\u00e9"
flow: {a: 1, b: [x, y], c: }
octal: 0o17
hex: 0x1F
"""


def test_the_subset_reads_as_yaml_1_2() -> None:
    assert parse(DOC) == {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble.\nSecond paragraph.\n",
        "license": "Apache-2.0",
        "allowed-tools": ["Read", "Bash(git:*)", 3],
        "metadata": {
            "author": "someone",
            "version": 1.0,
            "tags": ["a", {"b": "c", "d": 2}],
            "empty": None,
            "yes": "yes",  # YAML 1.1 would say True
        },
        "keep": "line1\n line2\n\n",
        "strip": "abc",
        "plain": "this is continued",
        "seq": [1, None, True],
        "q": "it's",
        "dq": "tab\tnewé",
        "flow": {"a": 1, "b": ["x", "y"], "c": None},
        "octal": 15,
        "hex": 31,
    }


@pytest.mark.parametrize(
    "block",
    [
        "a: &x 1",
        "a: *x",
        "a: !!str 1",
        "? a\n: b",
        "a: 1\na: 2",
        "- a",
        "a: [1, 2",
        "a:\n\tb: 1",
        "",
        "a: 'x",
        "just text",
        "a: 1\n  b: 2",
        'a: "\\q"',
        "%YAML 1.2",
    ],
)
def test_outside_the_subset_is_refused(block: str) -> None:
    with pytest.raises(FrontmatterError):
        parse(block)


def test_split_takes_bom_crlf_and_trailing_spaces() -> None:
    assert split("\ufeff---\r\nname: a\r\n---  \r\nbody\n") == ("name: a", "body\n")
    with pytest.raises(FrontmatterError, match="does not open"):
        split("name: a\n---\n")
    with pytest.raises(FrontmatterError, match="no closing"):
        split("---\nname: a\n")
    with pytest.raises(FrontmatterError, match="no closing"):
        split("---\n" + "a: b\n" * (MAX_FRONTMATTER_BYTES // 4) + "---\n")


def test_bounds() -> None:
    with pytest.raises(FrontmatterError, match="nests too deeply"):
        parse("a: " + "[" * 40 + "]" * 40)
    with pytest.raises(FrontmatterError, match="values"):
        parse("a: [" + ", ".join(["1"] * 10_001) + "]")


def test_json_equal_is_type_aware() -> None:
    assert json_equal({"a": [1, "x", None]}, {"a": [1.0, "x", None]})
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal([1], [1, 1])
    assert not json_equal("1", 1)
    assert not json_equal(math.nan, math.nan)


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(max_size=300))
def test_any_text_is_read_or_refused(block: str) -> None:
    """No other exception, never a hang: a mapping or a FrontmatterError."""
    try:
        value = parse(block)
    except FrontmatterError:
        return
    assert isinstance(value, dict)


SAFE = (
    st.text(
        alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters=" -_.,"),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=100, deadline=None, database=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True), SAFE, min_size=1))
def test_double_quoted_values_round_trip(values: dict[str, str]) -> None:
    block = "\n".join(f'{k}: "{v}"' for k, v in values.items())
    assert parse(block) == values


def test_wire_entries_follow_the_entry_rules() -> None:
    good = {"uri": "skill://a/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 1}
    entry = read_entry({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": [good]})
    assert not isinstance(entry, str)
    assert entry.files == [("skill://a/SKILL.md", "sha256:" + "a" * 64, 1)]
    dynamic = read_entry({"uri": "u", "frontmatter": {}, "resources": "dynamic"})
    assert not isinstance(dynamic, str) and dynamic.files is None
    for bad in (
        {"frontmatter": {}, "resources": []},
        {"uri": "u", "frontmatter": [], "resources": []},
        {"uri": "u", "frontmatter": {}},
        {"uri": "u", "frontmatter": {}, "resources": "static"},
        {"uri": "u", "frontmatter": {}, "resources": [{**good, "digest": "sha256:" + "A" * 64}]},
        {"uri": "u", "frontmatter": {}, "resources": [{**good, "size": True}]},
        {"uri": "u", "frontmatter": {}, "resources": [{**good, "size": -1}]},
        {"uri": "u", "frontmatter": {}, "resources": [good, good]},
    ):
        assert isinstance(read_entry(bad), str), bad


def test_content_bytes_wants_exactly_one_item_and_caps_early() -> None:
    one = {"contents": [{"uri": "u", "text": "é"}]}
    assert content_bytes(one, "u", 10) == "é".encode()
    assert content_bytes({"contents": [{"uri": "u", "blob": "AAE="}]}, "u", 10) == b"\x00\x01"
    assert isinstance(content_bytes({"contents": [{"uri": "u", "blob": "A!"}]}, "u", 10), str)
    assert isinstance(content_bytes({"contents": []}, "u", 10), str)
    assert isinstance(content_bytes({"contents": [one["contents"][0]] * 2}, "u", 10), str)
    assert "over" in str(content_bytes({"contents": [{"uri": "u", "text": "x" * 11}]}, "u", 10))
    assert "over" in str(content_bytes({"contents": [{"uri": "u", "blob": "A" * 40}]}, "u", 10))
