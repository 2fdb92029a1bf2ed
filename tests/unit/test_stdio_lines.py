"""The pure line helpers of the stdio transport: ids of oversized lines, stderr records."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpclient._core.limits import TRUNCATION_MARKER, utf8_len
from mcpclient._internal.transport.stdio_lines import (
    HEAD_BYTES,
    ID_AT_TAIL,
    NOT_A_RESPONSE,
    TAIL_BYTES,
    StderrLines,
    response_verdict,
    safe_log_text,
    tail_id,
)

FILL = b"a" * 1000


@pytest.mark.parametrize(
    ("head", "verdict"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[', 7),
        (b'{ "jsonrpc" : "2.0" , "id" : 0 , "error" : {"code": 1', 0),
        (b'{"id":12,"jsonrpc":"2.0","result":"' + FILL, 12),
        (b'{"jsonrpc":"2.0","result":{"content":[', ID_AT_TAIL),
        (b'{"jsonrpc":"2.0","error":{"code":-32603', ID_AT_TAIL),
        # Requests and notifications are not ours to fail.
        (b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","params":{"x":1', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","method":"notifications/message","params":{', NOT_A_RESPONSE),
        # No proof that it is a response.
        (b'{"jsonrpc":"2.0","id":7,"_meta":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":7,', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":7', NOT_A_RESPONSE),  # "7" may go on past the head
        (b'{"jsonrpc":"' + FILL, NOT_A_RESPONSE),
        (b"[{" + FILL, NOT_A_RESPONSE),
        (FILL, NOT_A_RESPONSE),
        (b"", NOT_A_RESPONSE),
        # Ids that cannot be ours, and ambiguous heads.
        (b'{"jsonrpc":"2.0","id":"7","result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":-1,"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":7.5,"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":07,"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":null,"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","id":' + b"9" * 30 + b',"result":{', NOT_A_RESPONSE),
        (b'{"jsonrpc":"2.0","i\\u0064":7,"result":{', NOT_A_RESPONSE),
        # A string that looks like members is skipped as a string.
        (b'{"note":"\\",\\"id\\":9,","id":3,"result":{', 3),
    ],
)
def test_response_verdict(head: bytes, verdict: int | str) -> None:
    assert response_verdict(head) == verdict


@pytest.mark.parametrize(
    ("tail", "found"),
    [
        (FILL + b'"}]},"id":7}', 7),
        (FILL + b'"}]} , "id" : 42 }\r', 42),
        (FILL + b'"}]},"id":0}', 0),
        (FILL + b'"}]},"id":7,"_meta":{}}', None),  # the id in the middle
        (FILL + b'"x":{"id":7}}', None),  # a nested object's id
        (FILL + b'"x":[{"id":7}]}', None),
        (FILL + b'"}]},"id":7}]', None),  # a batch
        (FILL + b'"}]},"id":-7}', None),
        (FILL + b'"}]},"id":7.0}', None),
        (FILL + b'"}]},"id":1e3}', None),
        (FILL + b'"}]},"id":"7"}', None),
        (FILL + b'"}]},"id":07}', None),
        (FILL + b'a\\"id":7}', None),  # an escaped quote: inside a string
        (FILL + b'"}]},"xid":7}', None),
        (FILL + b'"}]}"id":7}', None),  # no member separator
        (FILL, None),
        (b"", None),
    ],
)
def test_tail_id(tail: bytes, found: int | None) -> None:
    assert tail_id(tail) == found


@given(
    request_id=st.integers(min_value=0, max_value=10**17),
    text=st.text(max_size=300),
    extra=st.dictionaries(st.sampled_from(["_meta", "x", "y"]), st.integers(), max_size=2),
    head_first=st.booleans(),
)
def test_the_id_of_any_response_is_found_or_refused_never_wrong(
    request_id: int, text: str, extra: dict[str, int], head_first: bool
) -> None:
    """Whatever the response looks like, a recovered id is its id."""
    result = {"content": [{"type": "text", "text": text}], **extra}
    if head_first:
        message = {"jsonrpc": "2.0", "id": request_id, "result": result}
    else:
        message = {"jsonrpc": "2.0", "result": result, "id": request_id}
    line = json.dumps(message, ensure_ascii=False).encode()
    verdict = response_verdict(line[:HEAD_BYTES])
    if verdict == ID_AT_TAIL:
        found = tail_id(line[-TAIL_BYTES:])
        assert found in (None, request_id)
        assert found == request_id or head_first  # id last: the tail finds it
    else:
        assert verdict == request_id  # the head names it: ids never come out wrong


@given(
    request_id=st.integers(min_value=0, max_value=100),
    params=st.dictionaries(st.text(max_size=5), st.text(max_size=50), max_size=3),
)
def test_a_server_request_is_never_taken_for_a_response(
    request_id: int, params: dict[str, str]
) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "x/y", "params": params}
    for ordered in (message, dict(reversed(list(message.items())))):
        line = json.dumps(ordered).encode()
        assert response_verdict(line[:HEAD_BYTES]) == NOT_A_RESPONSE


# -------------------------------------------------------------------- stderr


def test_lines_are_split_across_chunks() -> None:
    lines = StderrLines(100)
    assert lines.feed(b"one\ntw") == [(b"one", False)]
    assert lines.feed(b"o\r\n\n   \nthr") == [(b"two\r", False)]
    assert lines.feed(b"ee") == []
    assert lines.flush() == [(b"three", False)]
    assert lines.flush() == []


def test_a_long_line_is_reported_at_its_bound_and_the_rest_dropped() -> None:
    lines = StderrLines(10)
    assert lines.feed(b"0123456") == []
    assert lines.feed(b"789abc") == [(b"0123456789", True)]
    assert lines.feed(b"d" * 10_000) == []  # dropped, nothing kept
    assert len(lines._partial) == 0
    assert lines.feed(b"ef\nnext\n") == [(b"next", False)]
    assert lines.feed(b"x" * 10 + b"\n") == [(b"x" * 10, False)]  # exactly the bound
    assert lines.feed(b"y" * 25) == [(b"y" * 10, True)]
    assert lines.flush() == []  # already reported


def test_safe_log_text() -> None:
    assert safe_log_text(b'  File "x", line 1\r', 100, cut=False) == '  File "x", line 1'
    assert safe_log_text(b"caf\xe9 \x1b[31mred\x07", 100, cut=False) == (
        "caf\ufffd \ufffd[31mred\ufffd"
    )
    assert safe_log_text(b"a\xe2\x80\xaeb", 100, cut=False) == "a\ufffdb"  # a bidi override
    cut = safe_log_text(b"x" * 100, 50, cut=True)
    assert cut.endswith(TRUNCATION_MARKER)
    assert utf8_len(cut) <= 50
    # Cut in the middle of a character: no broken character, still bounded.
    cut = safe_log_text("é".encode() * 40, 51, cut=True)
    assert cut.endswith(TRUNCATION_MARKER)
    assert utf8_len(cut) <= 51
    # Decoding can grow a line (U+FFFD is 3 bytes): still bounded.
    grown = safe_log_text(b"\xff" * 40, 50, cut=False)
    assert utf8_len(grown) <= 50
    assert grown.endswith(TRUNCATION_MARKER)
    assert utf8_len(safe_log_text(b"x" * 100, 5, cut=True)) <= 5


@given(
    data=st.binary(max_size=400).map(lambda b: b.replace(b"\x00", b"\n")),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
    max_bytes=st.integers(min_value=1, max_value=40),
)
def test_stderr_lines_do_not_depend_on_how_the_bytes_arrive(
    data: bytes, cuts: list[int], max_bytes: int
) -> None:
    expected = []
    for line in data.split(b"\n"):
        if len(line) > max_bytes:
            expected.append((line[:max_bytes], True))
        elif line.strip():
            expected.append((line, False))
    lines = StderrLines(max_bytes)
    got = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        got += lines.feed(data[start : max(start, cut)])
        start = max(start, cut)
    got += lines.flush()
    assert got == expected
