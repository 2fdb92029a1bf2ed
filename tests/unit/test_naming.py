"""Model-facing names (origin-client.md section 7.6, our tags)."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient._core.digest import name_digest
from mcpclient._core.naming import assign_model_names, sanitize

MODEL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@pytest.mark.parametrize(
    ("raw", "sanitized"),
    [
        ("files.read", "files_read"),
        ("a/b", "a_b"),
        ("search issues", "search_issues"),
        ("café", "caf_"),
        ("Get-Thing_1", "Get-Thing_1"),
        ("\U0001f600x", "_x"),
        ("日本", "__"),
        ("", ""),
    ],
)
def test_sanitize(raw: str, sanitized: str) -> None:
    assert sanitize(raw) == sanitized


def test_faithful_name_kept() -> None:
    names = assign_model_names("srv", ["echo", "Get-Thing_1"])
    assert dict(names.by_raw) == {"Get-Thing_1": "mcp__srv__Get-Thing_1", "echo": "mcp__srv__echo"}
    assert names.lossy == frozenset()


def test_lone_sanitized_short_name_not_suffixed() -> None:
    names = assign_model_names("srv", ["a/b"])
    assert names.by_raw["a/b"] == "mcp__srv__a_b"
    assert names.lossy == {"a/b"}


def test_every_colliding_member_suffixed() -> None:
    names = assign_model_names("srv", ["a_b", "a.b", "other"])
    for raw in ("a_b", "a.b"):
        assert names.by_raw[raw] == "mcp__srv__a_b_" + name_digest("srv", raw)[:4].hex()
    assert names.by_raw["other"] == "mcp__srv__other"
    # "a_b" was not changed by sanitize, but it shares its candidate.
    assert names.lossy == {"a_b", "a.b"}


def test_length_boundary() -> None:
    fits = "y" * 54  # "mcp__srv__" is 10 bytes: 64 in all
    too_long = "z" * 55
    names = assign_model_names("srv", [fits, too_long])
    assert names.by_raw[fits] == "mcp__srv__" + fits
    suffixed = names.by_raw[too_long]
    assert len(suffixed) == 64
    assert suffixed == "mcp__srv__" + "z" * 45 + "_" + name_digest("srv", too_long)[:4].hex()
    assert names.lossy == {too_long}


def test_order_independent() -> None:
    raws = ["a.b", "a/b", "a b", "a:b", "x" * 100, "plain", "é"]
    expected = assign_model_names("srv", raws)
    for permutation in itertools.islice(itertools.permutations(raws), 0, None, 97):
        got = assign_model_names("srv", list(permutation))
        assert dict(got.by_raw) == dict(expected.by_raw)
        assert got.lossy == expected.lossy


def test_binding_is_part_of_the_suffix() -> None:
    first = assign_model_names("one", ["a.b", "a/b"]).by_raw["a.b"]
    second = assign_model_names("two", ["a.b", "a/b"]).by_raw["a.b"]
    assert first[-8:] != second[-8:]


def test_final_name_taken_is_refused() -> None:
    suffixed = assign_model_names("srv", ["a.b", "a/b"]).by_raw["a.b"]
    squatter = suffixed.removeprefix("mcp__srv__")
    with pytest.raises(ValueError, match="both map"):
        assign_model_names("srv", ["a.b", "a/b", squatter])


@pytest.mark.parametrize("binding", ["", "UPPER", "dot.ted", "b" * 33, "é"])
def test_malformed_binding_refused(binding: str) -> None:
    with pytest.raises(ValueError):
        assign_model_names(binding, ["t"])


def test_duplicate_raw_name_refused() -> None:
    with pytest.raises(ValueError):
        assign_model_names("srv", ["t", "u", "t"])


def test_result_is_frozen() -> None:
    names = assign_model_names("srv", ["t"])
    with pytest.raises(TypeError):
        names.by_raw["t"] = "x"  # type: ignore[index]


raw_names = st.one_of(
    st.text(max_size=80),
    st.text(alphabet="ab._/ ", min_size=1, max_size=4),  # many collisions
    st.text(alphabet="x", min_size=50, max_size=200),  # long names
    st.text(alphabet=st.characters(min_codepoint=0x80), max_size=10),
)


@settings(max_examples=50)
@given(
    binding=st.from_regex(r"[a-z0-9_-]{1,32}", fullmatch=True),
    raws=st.lists(raw_names, unique=True, max_size=12),
)
def test_model_names_are_valid_prefixed_and_unique(binding: str, raws: list[str]) -> None:
    try:
        names = assign_model_names(binding, raws)
    except ValueError:
        # Only a genuine clash with an already suffixed name may fail.
        suffixes = {name_digest(binding, raw)[:4].hex() for raw in raws}
        assert any(raw[-8:] in suffixes for raw in raws)
        return
    assert set(names.by_raw) == set(raws)
    assert names.lossy <= set(raws)
    models = list(names.by_raw.values())
    assert len(set(models)) == len(models)
    for model in models:
        assert MODEL_NAME.fullmatch(model)
        assert model.startswith(f"mcp__{binding}__")
    assert dict(assign_model_names(binding, list(reversed(raws))).by_raw) == dict(names.by_raw)
