"""Canonical JSON: JCS matches the rfc8785 package, plus our big-integer deviation."""

from __future__ import annotations

import json
import math
import struct

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient._core.canonical import compact, es_number, jcs
from mcpclient._core.digest import schema_digest

SAFE = 2**53 - 1

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE, max_value=SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=50)
@given(json_values)
def test_jcs_matches_rfc8785_package(value: object) -> None:
    assert jcs(value) == rfc8785.dumps(value)


@settings(max_examples=50)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_every_finite_double_matches_rfc8785_package(bits: int) -> None:
    (number,) = struct.unpack(">d", bits.to_bytes(8, "big"))
    if not math.isfinite(number):
        with pytest.raises(ValueError):
            jcs(number)
        return
    assert jcs(number) == rfc8785.dumps(number)
    assert float(es_number(number)) == number


# RFC 8785 appendix B: IEEE 754 bit patterns and their ECMAScript text.
ES6_CASES = [
    (0x0000000000000000, "0"),
    (0x8000000000000000, "0"),
    (0x0000000000000001, "5e-324"),
    (0x8000000000000001, "-5e-324"),
    (0x7FEFFFFFFFFFFFFF, "1.7976931348623157e+308"),
    (0xFFEFFFFFFFFFFFFF, "-1.7976931348623157e+308"),
    (0x4340000000000000, "9007199254740992"),
    (0xC340000000000000, "-9007199254740992"),
    (0x4430000000000000, "295147905179352830000"),
    (0x44B52D02C7E14AF5, "9.999999999999997e+22"),
    (0x44B52D02C7E14AF6, "1e+23"),
    (0x44B52D02C7E14AF7, "1.0000000000000001e+23"),
    (0x444B1AE4D6E2EF4E, "999999999999999700000"),
    (0x444B1AE4D6E2EF4F, "999999999999999900000"),
    (0x444B1AE4D6E2EF50, "1e+21"),
    (0x3EB0C6F7A0B5ED8C, "9.999999999999997e-7"),
    (0x3EB0C6F7A0B5ED8D, "0.000001"),
    (0x41B3DE4355555553, "333333333.3333332"),
    (0x41B3DE4355555554, "333333333.33333325"),
    (0x41B3DE4355555555, "333333333.3333333"),
    (0x41B3DE4355555556, "333333333.3333334"),
    (0x41B3DE4355555557, "333333333.33333343"),
    (0xBECBF647612F3696, "-0.0000033333333333333333"),
    (0x43143FF3C1CB0959, "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), ES6_CASES)
def test_es6_number_formatting(bits: int, text: str) -> None:
    (number,) = struct.unpack(">d", bits.to_bytes(8, "big"))
    assert jcs(number) == text.encode()


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (-0.0, "0"),
        (100.0, "100"),
        (0.1, "0.1"),
        (-1.25, "-1.25"),
        (123.456, "123.456"),
        (1.5e300, "1.5e+300"),
    ],
)
def test_es6_number_examples(number: float, text: str) -> None:
    assert es_number(number) == text


@pytest.mark.parametrize(
    "number", [2**53, -(2**53), 2**64 + 1, -(10**30) - 7, 123456789012345678901234567890]
)
def test_big_integers_written_exactly(number: int) -> None:
    assert jcs(number) == str(number).encode()
    assert jcs({"maximum": number}) == b'{"maximum":' + str(number).encode() + b"}"
    with pytest.raises(ValueError):
        rfc8785.dumps(number)  # the deliberate deviation from the package


def test_bool_is_not_a_number() -> None:
    assert jcs([True, False, 1, 0, None]) == b"[true,false,1,0,null]"


def test_keys_sorted_by_utf16_code_units() -> None:
    # RFC 8785 section 3.2.3's example: U+1F600 (a surrogate pair, D83D) sorts
    # before U+FB33, unlike a code-point order.
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(jcs(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert jcs(value) == rfc8785.dumps(value)


def test_string_escapes() -> None:
    text = '"\\\b\t\n\f\r\x00\x1f\x7f\u2028é/<>&'
    assert jcs(text) == ('"\\"\\\\\\b\\t\\n\\f\\r\\u0000\\u001f\x7f\u2028é/<>&"').encode()
    assert jcs(text) == rfc8785.dumps(text)


def test_key_order_and_whitespace_do_not_move_schema_digest() -> None:
    first = json.loads('{"type":"object","properties":{"a":{"type":"string"},"b":{"enum":[1,2]}}}')
    second = json.loads(
        '{ "properties" : { "b" : { "enum" : [ 1 , 2 ] } , "a" : { "type" : "string" } } ,\n'
        '  "type" : "object" }'
    )
    assert jcs(first) == jcs(second)
    assert schema_digest(first) == schema_digest(second)
    assert schema_digest(first) != schema_digest({**first, "required": ["a"]})
    # 1.0 and 1 are the same JSON number.
    assert schema_digest({"maximum": 1.0}) == schema_digest({"maximum": 1})


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        {"a": [math.nan]},
        "\ud800",
        ["ok", "x\udfffy"],
        {"\udc00": 1},
        {1: "int key"},
        {"a": {1, 2}},
        b"bytes",
        object(),
    ],
)
def test_unrepresentable_values_refused(value: object) -> None:
    with pytest.raises(ValueError):
        jcs(value)


def test_compact() -> None:
    assert compact({"b": [1, 2.5, None], "a": "é\n"}) == '{"a":"é\\n","b":[1,2.5,null]}'
    assert json.loads(compact({"x": 2**70})) == {"x": 2**70}
    with pytest.raises(ValueError):
        compact({"a": math.nan})
