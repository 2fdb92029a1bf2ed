"""A bounded Server-Sent Events reader: bytes in, :class:`SSEEvent` values out.

What an event's data means (JSON-RPC) is decided above the transport.

The parser is ours (DESIGN.md §6); it replaced sseclient-py, which buffers an
event without bound, logs to the root logger, drops every event that carries
no ``data`` (losing the ``id:`` and ``retry:`` of a 2025-11-25 priming event)
and accepts any bytes. Its chunker also re-joins the event buffer once per line
and per chunk (``data += line``), which is quadratic -- measured on this
machine, 16 MiB delivered in 4 KiB chunks took ~11 s, and a 300 KB event of
empty ``data:`` lines ~0.4 s, growing with the square of the size -- and it
misses a blank line written as ``LF`` followed by ``CRLF`` (two events come
out as one). :class:`SSEReader` works in two stages:

* :meth:`SSEReader._slices` hands the source's chunks on in slices of at most
  64 KiB, so no stage ever scans an arbitrarily large piece at once;
* :meth:`SSEReader.events` parses line by line in linear time (the WHATWG
  algorithm: ``CR``, ``LF`` and ``CRLF`` terminators, also split across
  chunks; one leading BOM dropped; comment lines ignored without being kept;
  unknown fields ignored; ``id`` values holding NUL ignored; ``retry`` only
  when all ASCII digits) and counts the bytes of the current event -- field
  names, values and one byte per line terminator, comments excluded --
  refusing the event with :class:`~mcpclient.errors.LimitExceededError` as
  soon as the count passes ``max_event_bytes``, before the rest is read. Data
  is kept as raw bytes and decoded once per event; invalid UTF-8 anywhere in a
  field is a :class:`~mcpclient.errors.ProtocolError` (``server_protocol``).

Events without data are surfaced when they carry an ``id`` or a ``retry`` (a
priming event); an event with data is always surfaced. An event the stream
ends in without its blank line is still delivered when its last line was
complete; a line cut off by the end of the stream is dropped. Nothing here
logs.

Threads: none. One thread iterates a reader; :meth:`SSEReader.close` may be
called from the same thread (closing the source from another thread is the job
of the HTTP layer's ``abort``).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Generator, Iterable, Iterator

from mcpclient.errors import FailureClass, error_for

__all__ = ["SSEEvent", "SSEReader", "iter_events"]

#: Slice size :meth:`SSEReader._slices` hands to the parser.
_SLICE = 64 * 1024
#: Longest ``retry:`` value we turn into an int (about 31 years in ms); longer
#: digit runs are ignored like any other invalid value.
_MAX_RETRY_DIGITS = 12
_BOM = b"\xef\xbb\xbf"
_CR = 0x0D
_LF = 0x0A
_COLON = 0x3A


@dataclasses.dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched SSE event.

    Attributes:
        event: the event type (``"message"`` when the event named none).
        data: the ``data`` lines joined with ``"\\n"`` (``""`` when none).
        id: the event's ``id`` field, or ``None`` when it had none. ``""``
            is a real value: it resets the last event id.
        retry: the event's ``retry`` field in milliseconds, or ``None``.
    """

    event: str
    data: str = dataclasses.field(repr=False)
    id: str | None
    retry: int | None

    def __repr__(self) -> str:
        # The data is server text (and may be large): show its size only.
        return (
            f"SSEEvent(event={self.event!r}, data=<{len(self.data)} chars>, "
            f"id={self.id!r}, retry={self.retry!r})"
        )


class _Parser:
    """The incremental, bounded WHATWG event-stream parser.

    :meth:`feed` takes bytes and queues finished events; :meth:`end` closes the
    stream; :meth:`drain` hands the queued events out. After an error the
    parser refuses more input. :attr:`buffered` is the number of bytes of the
    current event held (never more than ``max_event_bytes``).
    """

    def __init__(self, max_event_bytes: int, *, binding: str = "", op: str = "read_events") -> None:
        if isinstance(max_event_bytes, bool) or not isinstance(max_event_bytes, int):
            raise TypeError("max_event_bytes must be an int")
        if max_event_bytes < 1:
            raise ValueError("max_event_bytes must be >= 1")
        self._max = max_event_bytes
        self._binding = binding
        self._op = op
        self._out: deque[SSEEvent] = deque()
        self._failed = False
        # The stream.
        self._bom_pending = True
        self._head = bytearray()  # the first bytes, until the BOM question is settled
        self._pending_cr = False  # the last byte seen was a CR ending a line
        # The current line.
        self._line = bytearray()
        self._line_started = False  # any byte of the current line seen
        self._comment = False  # the current line is a comment (discarded as it comes)
        # The current event.
        self._count = 0  # bytes of the current event (see the module docstring)
        self._type = ""
        self._data = bytearray()
        self._has_data = False
        self._id: str | None = None
        self._retry: int | None = None

    @property
    def buffered(self) -> int:
        """Bytes of the current event held in memory."""
        return len(self._line) + len(self._data) + len(self._type) + len(self._head)

    def drain(self) -> Iterator[SSEEvent]:
        """Hand out (and forget) the events finished so far."""
        while self._out:
            yield self._out.popleft()

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Parse ``chunk``; finished events are queued for :meth:`drain`.

        Raises:
            LimitExceededError: the current event passed ``max_event_bytes``.
            ProtocolError: a field is not valid UTF-8 (``server_protocol``).
        """
        if self._failed:
            raise ValueError("the SSE parser failed already")
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise TypeError(f"SSE input must be bytes, not {type(chunk).__name__}")
        data = bytes(chunk)
        if not data:
            return
        try:
            if self._bom_pending:
                data = self._strip_bom(data)
                if not data:
                    return
            self._scan(data)
        except BaseException:
            self._failed = True
            raise

    def end(self) -> None:
        """The stream ended: flush a pending BOM prefix and the last event."""
        if self._failed:
            return
        try:
            # A pending BOM prefix is at most two bytes of an incomplete line.
            self._bom_pending = False
            self._head.clear()
            # A line without its terminator is incomplete: drop it.
            self._line.clear()
            self._line_started = False
            self._comment = False
            self._dispatch()
        except BaseException:
            self._failed = True
            raise

    # ------------------------------------------------------------------ input

    def _strip_bom(self, data: bytes) -> bytes:
        self._head += data
        if len(self._head) < len(_BOM) and bytes(self._head) == _BOM[: len(self._head)]:
            return b""  # could still become a BOM (at most two bytes are held)
        self._bom_pending = False
        head, self._head = bytes(self._head), bytearray()
        return head[len(_BOM) :] if head.startswith(_BOM) else head

    def _scan(self, data: bytes) -> None:
        view = memoryview(data)
        size = len(data)
        find = data.find
        # The next CR and LF at or after ``pos``, each searched again only once
        # passed: ``bytes.find`` runs at memchr speed (a regex character class
        # is ~10x slower), and a chunk without a CR is searched for one once.
        next_cr = find(b"\r")
        next_lf = find(b"\n")
        pos = 0
        while pos < size:
            if self._pending_cr:
                self._pending_cr = False
                if data[pos] == _LF:  # the LF of a CRLF split across chunks
                    pos += 1
                    continue
            if 0 <= next_cr < pos:
                next_cr = find(b"\r", pos)
            if 0 <= next_lf < pos:
                next_lf = find(b"\n", pos)
            end = next_lf if next_cr < 0 or 0 <= next_lf < next_cr else next_cr
            if end < 0:
                self._take(view[pos:])
                return
            if end > pos:
                self._take(view[pos:end])
            if data[end] == _CR:
                if end + 1 < size:
                    pos = end + 2 if data[end + 1] == _LF else end + 1
                else:
                    self._pending_cr = True
                    pos = end + 1
            else:
                pos = end + 1
            self._end_line()

    def _take(self, piece: memoryview) -> None:
        """Add bytes of the current line (never a terminator)."""
        if not self._line_started:
            self._line_started = True
            self._comment = piece[0] == _COLON
        if self._comment:
            return
        self._count += len(piece)
        if self._count > self._max:
            raise self._too_big()
        self._line += piece

    def _end_line(self) -> None:
        comment = self._comment
        started = self._line_started
        self._line_started = False
        self._comment = False
        if comment:
            return
        if not started:
            self._dispatch()
            return
        self._count += 1  # the line terminator
        if self._count > self._max:
            raise self._too_big()
        line, self._line = self._line, bytearray()  # handed over, not copied
        self._field(line)

    # ------------------------------------------------------------------ fields

    def _field(self, line: bytearray) -> None:
        colon = line.find(b":")
        if colon < 0:
            name, start = bytes(line), len(line)
        else:
            name = bytes(line[:colon])
            start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
        if name == b"data":
            # A data line may be megabytes: the first one becomes the event's
            # buffer (deleting a bytearray's head moves no bytes), later ones
            # are appended once.
            if self._has_data:
                self._data += b"\n"
                self._data += memoryview(line)[start:]
            else:
                del line[:start]
                self._data = line
            self._has_data = True
            return
        value = bytes(line[start:])
        if name == b"event":
            self._type = self._decode(value, "event")
        elif name == b"id":
            text = self._decode(value, "id")
            if "\x00" not in text:
                self._id = text
        elif name == b"retry":
            self._decode(value, "retry")
            if value.isdigit() and len(value) <= _MAX_RETRY_DIGITS:
                self._retry = int(value)
        else:
            # Unknown fields are ignored, but the whole stream must be UTF-8.
            self._decode(line, "field")

    def _dispatch(self) -> None:
        self._count = 0
        if not (self._has_data or self._id is not None or self._retry is not None):
            self._type = ""
            return
        text = self._decode(self._data, "data")
        event = SSEEvent(event=self._type or "message", data=text, id=self._id, retry=self._retry)
        self._type = ""
        self._data = bytearray()
        self._has_data = False
        self._id = None
        self._retry = None
        self._out.append(event)

    # ------------------------------------------------------------------ errors

    def _decode(self, raw: bytes | bytearray, what: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise error_for(
                FailureClass.SERVER_PROTOCOL,
                f"an SSE event's {what} is not valid UTF-8",
                binding=self._binding,
                op=self._op,
            ) from None

    def _too_big(self) -> Exception:
        return error_for(
            FailureClass.LIMIT_EXCEEDED,
            f"an SSE event exceeds max_event_bytes ({self._max} bytes)",
            binding=self._binding,
            op=self._op,
        )


class SSEReader:
    """Bounded, linear, lossless SSE parsing of a byte source (module docstring).

    Example:
        >>> [e.id for e in SSEReader([b"id: 1\\n\\n"], max_event_bytes=64).events()]
        ['1']

    Thread safety: one thread iterates :meth:`events` and may call :meth:`close`.
    """

    __slots__ = ("_chunks", "_parser")

    def __init__(
        self,
        chunks: Iterable[bytes],
        *,
        max_event_bytes: int,
        binding: str = "",
        op: str = "read_events",
    ) -> None:
        self._chunks = chunks
        self._parser = _Parser(max_event_bytes, binding=binding, op=op)

    def close(self) -> None:
        """Close the source, when it has a ``close()`` (an HTTP body's chunks do)."""
        close = getattr(self._chunks, "close", None)
        if callable(close):
            close()

    def _slices(self) -> Iterator[memoryview]:
        """Hand the source's bytes on in slices of at most 64 KiB."""
        for chunk in self._chunks:
            if not isinstance(chunk, bytes | bytearray | memoryview):
                raise TypeError(f"SSE input must be bytes, not {type(chunk).__name__}")
            view = memoryview(chunk).cast("B")
            for start in range(0, len(view), _SLICE):
                yield view[start : start + _SLICE]

    def events(self) -> Generator[SSEEvent, None, None]:
        """Yield each event as soon as its blank line has been read.

        Closing the generator (or its end) closes the source.

        Raises:
            LimitExceededError: an event passed ``max_event_bytes``.
            ProtocolError: invalid UTF-8 (``server_protocol``).
            Whatever the source raises (the HTTP layer raises classified errors).
        """
        parser = self._parser
        try:
            for piece in self._slices():
                try:
                    parser.feed(piece)
                except Exception:
                    # Events finished before the failure are delivered first.
                    yield from parser.drain()
                    raise
                yield from parser.drain()
            parser.end()
            yield from parser.drain()
        finally:
            # However the reading stops (end, error, or the generator closed),
            # the source is closed: for an HTTP body that closes the response.
            self.close()


def iter_events(
    chunks: Iterable[bytes],
    *,
    max_event_bytes: int,
    binding: str = "",
    op: str = "read_events",
) -> Generator[SSEEvent, None, None]:
    """Parse an SSE byte stream into events, bounding each one.

    Args:
        chunks: the body, in chunks of any size (e.g. ``http.response_chunks``).
        max_event_bytes: the largest event accepted, in bytes (field names,
            values and one byte per line terminator; comments not counted).
        binding, op: named by the errors raised here.

    Yields:
        :class:`SSEEvent` values, including data-less events that carry an
        ``id`` or ``retry``. Closing the generator closes ``chunks`` (when it
        has a ``close()``, e.g. :func:`http.response_chunks`).

    Raises:
        LimitExceededError: (``limit_exceeded``) an event is too large; nothing
            more than ``max_event_bytes`` of it was kept.
        ProtocolError: (``server_protocol``) invalid UTF-8.
        TypeError / ValueError: a chunk that is not bytes, or a bad bound.
    """
    return SSEReader(chunks, max_event_bytes=max_event_bytes, binding=binding, op=op).events()
