"""The bounded SSE reader (``mcpclient._internal.transport.sse``)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpclient._internal.transport.sse import SSEEvent, SSEReader, _Parser, iter_events
from mcpclient.errors import Error, FailureClass, LimitExceededError, ProtocolError

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def events(*chunks: bytes, limit: int = 1 << 16) -> list[SSEEvent]:
    return list(iter_events(list(chunks), max_event_bytes=limit))


def triples(found: list[SSEEvent]) -> list[tuple[str, str, str | None, int | None]]:
    return [(e.event, e.data, e.id, e.retry) for e in found]


# ---------------------------------------------------------------- the format


def test_data_lines_join_and_event_names() -> None:
    found = events(b"event: note\ndata: a\ndata:b\ndata\n\ndata: x\n\n")
    assert triples(found) == [("note", "a\nb\n", None, None), ("message", "x", None, None)]


def test_dataless_priming_event_keeps_id_and_retry() -> None:
    found = events(b"id: prime-1\nretry: 2500\n\n", b"id: 2\ndata: {}\n\n")
    assert triples(found) == [("message", "", "prime-1", 2500), ("message", "{}", "2", None)]


def test_priming_event_with_empty_data_line() -> None:
    assert triples(events(b"id: 0\ndata:\n\n")) == [("message", "", "0", None)]


def test_empty_id_is_a_value() -> None:
    assert triples(events(b"id\n\n")) == [("message", "", "", None)]


def test_comments_and_empty_blocks_are_ignored() -> None:
    found = events(b": keep-alive\n\n:\n\n\n\n: x\ndata: 1\n: y\n\n")
    assert triples(found) == [("message", "1", None, None)]


def test_event_name_alone_is_not_dispatched() -> None:
    assert events(b"event: lonely\n\ndata: 1\n\n")[0].event == "message"


def test_unknown_fields_are_ignored() -> None:
    assert triples(events(b"foo: bar\ndata: 1\nDATA: 2\n\n")) == [("message", "1", None, None)]


@pytest.mark.parametrize(
    "stream",
    [
        b"data: a\r\n\r\ndata: b\r\n\r\n",
        b"data: a\r\rdata: b\r\r",
        b"data: a\n\r\ndata: b\r\n\n",  # sseclient merges these two into one event
        b"data: a\r\n\ndata: b\n\r",
    ],
)
def test_line_terminators(stream: bytes) -> None:
    assert [e.data for e in events(stream)] == ["a", "b"]


def test_crlf_split_across_chunks_is_one_terminator() -> None:
    found = events(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert [e.data for e in found] == ["a\nb"]


def test_leading_bom_is_dropped_once() -> None:
    assert events(b"\xef\xbb", b"\xbfdata: 1\n\n")[0].data == "1"
    # A second BOM is part of the field name: an unknown field.
    assert events(b"\xef\xbb\xbf\xef\xbb\xbfdata: 1\n\n") == []


def test_retry_must_be_ascii_digits() -> None:
    found = events(
        b"retry: 1.5\nid: a\n\nretry: -1\nid: b\n\nretry: 99999999999999999999\nid: c\n\n"
    )
    assert [e.retry for e in found] == [None, None, None]
    assert events(b"retry: 0010\n\n")[0].retry == 10


def test_id_with_nul_is_ignored() -> None:
    found = events(b"id: a\x00b\ndata: 1\n\n")
    assert found[0].id is None


def test_value_space_is_stripped_once() -> None:
    assert events(b"data:  two\n\n")[0].data == " two"


def test_incomplete_last_line_is_dropped_complete_event_kept() -> None:
    assert [e.data for e in events(b"data: 1\n\ndata: 2\n")] == ["1", "2"]
    assert [e.data for e in events(b"data: 1\n\ndata: 2")] == ["1"]


def test_repr_shows_no_data() -> None:
    event = events(b"data: secret-token\n\n")[0]
    assert "secret" not in repr(event)


# ---------------------------------------------------------------- failures


def test_invalid_utf8_is_server_protocol() -> None:
    with pytest.raises(ProtocolError) as info:
        events(b"data: \xff\xfe\n\n")
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    with pytest.raises(ProtocolError):
        events(b"event: \xc3\n\n")


def test_errors_name_the_binding_and_op() -> None:
    with pytest.raises(LimitExceededError) as info:
        list(iter_events([b"data: 123456\n\n"], max_event_bytes=4, binding="b", op="call_tool"))
    assert (info.value.binding, info.value.op) == ("b", "call_tool")
    with pytest.raises(ProtocolError) as bad:
        list(iter_events([b"data: \xff\n\n"], max_event_bytes=64, binding="b", op="x"))
    assert (bad.value.binding, bad.value.op) == ("b", "x")


def test_invalid_utf8_in_comment_is_ignored() -> None:
    assert events(b": \xff\ndata: 1\n\n")[0].data == "1"


def test_events_before_an_error_are_delivered() -> None:
    reader = iter_events([b"data: 1\n\ndata: " + b"x" * 100 + b"\n\n"], max_event_bytes=50)
    assert next(reader).data == "1"
    with pytest.raises(LimitExceededError) as info:
        next(reader)
    assert info.value.failure_class is FailureClass.LIMIT_EXCEEDED


def test_oversized_event_is_refused_before_it_is_buffered() -> None:
    limit = 1000
    parser = _Parser(limit)
    parser.feed(b"data: ")
    with pytest.raises(LimitExceededError):
        for _ in range(10_000):
            parser.feed(b"x" * 100)
            assert parser.buffered <= limit
    assert parser.buffered <= limit


def test_many_lines_count_toward_the_bound() -> None:
    with pytest.raises(LimitExceededError):
        events(b"data:\n" * 1000 + b"\n", limit=500)


def test_comments_do_not_count_and_are_not_kept() -> None:
    parser = _Parser(64)
    for _ in range(1000):
        parser.feed(b": " + b"k" * 100 + b"\n")
        assert parser.buffered == 0
    parser.feed(b"data: ok\n\n")
    assert [e.data for e in parser.drain()] == ["ok"]


def test_bad_bound_and_input() -> None:
    with pytest.raises(ValueError):
        iter_events([], max_event_bytes=0)
    with pytest.raises(TypeError):
        list(iter_events(["data: 1\n\n"], max_event_bytes=10))  # type: ignore[list-item]


def test_source_errors_pass_through() -> None:
    def chunks() -> Iterator[bytes]:
        yield b"data: 1\n\n"
        raise LimitExceededError("from below")

    reader = iter_events(chunks(), max_event_bytes=100)
    assert next(reader).data == "1"
    with pytest.raises(LimitExceededError, match="from below"):
        next(reader)


def test_close_closes_the_source() -> None:
    closed = []

    def chunks() -> Iterator[bytes]:
        try:
            yield b"data: 1\n\n"
            yield b"data: 2\n\n"
        finally:
            closed.append(True)

    client = SSEReader(chunks(), max_event_bytes=100)
    assert next(client.events()).data == "1"
    client.close()
    assert closed == [True]


def test_nothing_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    events(b"bogus: field\ndata: 1\n\n: c\n\n")
    with pytest.raises(ProtocolError):
        events(b"data: \xff\n\n")
    assert caplog.records == []


def test_parsing_is_linear() -> None:
    # sseclient's _read() is quadratic: ~0.4 s for 50 000 lines, hours for millions.
    start = time.perf_counter()
    found = events(b"data:\n" * 200_000 + b"\n", limit=2 << 20)
    assert len(found[0].data) == 199_999
    found = events(b"data: ", *[b"x" * 4096] * 1000, b"\n\n", limit=8 << 20)
    assert len(found[0].data) == 4096 * 1000
    assert time.perf_counter() - start < 5.0


# ---------------------------------------------------------------- properties

_LINE = re.compile(rb"\r\n|\r|\n")


def reference(stream: bytes) -> list[tuple[str, str, str | None, int | None]]:
    """A direct transcription of the WHATWG algorithm, for valid UTF-8 input."""
    if stream.startswith(b"\xef\xbb\xbf"):
        stream = stream[3:]
    pieces = _LINE.split(stream)
    complete = pieces[:-1]  # the last piece has no terminator
    out: list[tuple[str, str, str | None, int | None]] = []
    kind, has_data = "", False
    data: list[str] = []
    ident: str | None = None
    retry: int | None = None
    for raw in complete:
        line = raw.decode()
        if line == "":
            if has_data or ident is not None or retry is not None:
                out.append((kind or "message", "\n".join(data), ident, retry))
            kind, data, has_data, ident, retry = "", [], False, None, None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
            has_data = True
        elif name == "event":
            kind = value
        elif name == "id" and "\x00" not in value:
            ident = value
        elif name == "retry" and value.isascii() and value.isdigit() and len(value) <= 12:
            retry = int(value)
    if has_data or ident is not None or retry is not None:
        out.append((kind or "message", "\n".join(data), ident, retry))
    return out


_FIELD = st.sampled_from([b"data", b"event", b"id", b"retry", b"", b":", b"x"])
_VALUE = st.one_of(
    st.text(alphabet="ab 1:\x00é", max_size=6).map(str.encode),
    st.sampled_from([b"", b"12", b" 7", b"msg"]),
)
_EOL = st.sampled_from([b"\n", b"\r", b"\r\n"])
_TOKEN = st.one_of(
    st.tuples(_FIELD, st.sampled_from([b":", b": ", b""]), _VALUE, _EOL).map(b"".join),
    _EOL,
)
_STREAM = st.lists(_TOKEN, max_size=25).map(b"".join)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks, last = [], 0
    for point in [*points, len(data)]:
        chunks.append(data[last:point])
        last = point
    return chunks


def _outcome(chunks: list[bytes], limit: int) -> tuple[list[SSEEvent], type[Error] | None]:
    got: list[SSEEvent] = []
    try:
        for event in iter_events(chunks, max_event_bytes=limit):
            got.append(event)
    except (LimitExceededError, ProtocolError) as exc:
        return got, type(exc)
    return got, None


@FUZZ
@given(stream=_STREAM, cuts=st.lists(st.integers(min_value=0), max_size=8))
def test_matches_the_reference_algorithm(stream: bytes, cuts: list[int]) -> None:
    got, failure = _outcome(_split(stream, cuts), 1 << 20)
    assert failure is None
    assert triples(got) == reference(stream)


@FUZZ
@given(
    stream=st.one_of(st.binary(max_size=300), _STREAM),
    cuts=st.lists(st.integers(min_value=0), max_size=10),
    limit=st.integers(min_value=1, max_value=80),
)
def test_arbitrary_bytes_give_events_or_classified_errors(
    stream: bytes, cuts: list[int], limit: int
) -> None:
    whole = _outcome([stream], limit)
    split = _outcome(_split(stream, cuts), limit)
    # Only our two classified errors can come out, and chunking changes nothing.
    assert triples(split[0]) == triples(whole[0])
    assert split[1] is whole[1]
    for event in split[0]:
        assert len(event.data.encode()) <= limit


@FUZZ
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=64), max_size=40),
    limit=st.integers(min_value=1, max_value=100),
)
def test_buffering_never_exceeds_the_bound(chunks: list[bytes], limit: int) -> None:
    parser = _Parser(limit)
    try:
        for chunk in chunks:
            parser.feed(chunk)
            list(parser.drain())
            assert parser.buffered <= limit + 2  # + at most two bytes of a possible BOM
        parser.end()
    except (LimitExceededError, ProtocolError) as exc:
        assert isinstance(exc, Error)
    assert parser.buffered <= limit + 2
