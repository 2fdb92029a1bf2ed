"""mcpclient.config.jsonc: JSON with comments and trailing commas, bounded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient.config import jsonc


def test_comments_and_trailing_commas() -> None:
    text = """// head
    {
      /* block
         comment */ "a": [1, 2, 3,],  // tail
      "b": {"c": "d",},
    }
    """
    parsed = jsonc.parse(text)
    assert parsed.value == {"a": [1, 2, 3], "b": {"c": "d"}}
    assert parsed.comments and parsed.trailing_commas


def test_plain_json_reports_no_extensions() -> None:
    parsed = jsonc.parse('{"a": 1}')
    assert parsed.value == {"a": 1}
    assert not parsed.comments and not parsed.trailing_commas


def test_strings_keep_comment_markers_commas_and_escapes() -> None:
    text = r'{"url": "https://x.example/a//b", "c": "/* not */", "q": "say \"hi\", ,]", }'
    assert jsonc.parse(text).value == {
        "url": "https://x.example/a//b",
        "c": "/* not */",
        "q": 'say "hi", ,]',
    }


def test_error_positions_are_in_the_original_text() -> None:
    text = '{\n  // comment\n  "a": 1\n  "b": 2\n}'
    with pytest.raises(jsonc.JSONCError) as info:
        jsonc.parse(text)
    assert (info.value.line, info.value.column) == (4, 3)


def test_unterminated_comment_and_string() -> None:
    with pytest.raises(jsonc.JSONCError, match="unterminated comment"):
        jsonc.parse('{"a": 1 /* open')
    with pytest.raises(jsonc.JSONCError, match="unterminated string"):
        jsonc.parse('{"a": "open')


def test_depth_and_size_are_bounded() -> None:
    deep = "[" * (jsonc.MAX_DEPTH + 1) + "]" * (jsonc.MAX_DEPTH + 1)
    with pytest.raises(jsonc.JSONCError, match="nested deeper"):
        jsonc.parse(deep)
    ok = "[" * jsonc.MAX_DEPTH + "]" * jsonc.MAX_DEPTH
    assert jsonc.parse(ok).value is not None
    with pytest.raises(jsonc.JSONCError, match="larger than"):
        jsonc.parse(" " * (jsonc.MAX_TEXT_BYTES + 1))


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_refused(constant: str) -> None:
    with pytest.raises(jsonc.JSONCError, match="not JSON"):
        jsonc.parse(f'{{"a": {constant}}}')


def test_byte_order_mark_is_accepted() -> None:
    assert jsonc.parse('\ufeff{"a": 1}').value == {"a": 1}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_any_json_parses_to_itself(value: object) -> None:
    assert jsonc.parse(json.dumps(value)).value == value
    assert jsonc.parse(json.dumps(value, indent=1)).value == value


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_jsonc_error(text: str) -> None:
    try:
        parsed = jsonc.parse(text)
    except jsonc.JSONCError as exc:
        assert exc.line >= 1 and exc.column >= 1
    else:
        assert isinstance(parsed.comments, bool)
