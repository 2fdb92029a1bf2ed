"""The SSE stream of the HTTP front end: bytes appended by a core, drained by HTTP writers."""

from __future__ import annotations

import threading

__all__ = ["MAX_STREAM_EVENTS", "Reader", "Stream"]

#: Events kept per stream for ``Last-Event-ID`` resumption.
MAX_STREAM_EVENTS = 1000


class Reader:
    """One HTTP writer's position in a :class:`Stream`."""

    __slots__ = ("pos", "stop_at")

    def __init__(self, pos: int) -> None:
        self.pos = pos
        # Absolute index where this writer ends its response (detached or superseded).
        self.stop_at: int | None = None


class Stream:
    """One SSE stream's wire bytes, appended by the core, drained by HTTP writers.

    ``number`` None: events carry no ``id`` (modern, HTTP+SSE). Otherwise event
    ids are ``<number>-<seq>`` and a writer may re-attach after a given event
    (``Last-Event-ID`` resumption); the last :data:`MAX_STREAM_EVENTS` entries
    are kept.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, number: int | None = None, event_name: str | None = None) -> None:
        """Create an empty, open stream."""
        self.number = number
        self._event_name = event_name
        self._cond = threading.Condition()
        self._entries: list[tuple[int | None, bytes]] = []  # (seq or None for raw bytes, wire)
        self._base = 0  # absolute index of _entries[0]
        self._seq = 0
        self._finished = False
        self._readers: set[Reader] = set()

    @property
    def finished(self) -> bool:
        """True once the stream ended (no more entries are accepted)."""
        with self._cond:
            return self._finished

    def add_event(
        self,
        data: bytes,
        *,
        event: str | None = None,
        retry: int | None = None,
        final: bool = False,
    ) -> bool:
        """Append one event (``data`` split into ``data:`` lines); False once finished.

        ``event`` overrides the stream's event name (``""``: none); ``final`` ends
        the stream after this event.
        """
        with self._cond:
            if self._finished:
                return False
            self._seq += 1
            lines: list[bytes] = []
            if self.number is not None:
                lines.append(f"id: {self.number}-{self._seq}".encode())
            name = self._event_name if event is None else event
            if name:
                lines.append(b"event: " + name.encode())
            if retry is not None:
                lines.append(b"retry: %d" % retry)
            lines.extend(b"data: " + part for part in data.split(b"\n"))
            self._append(self._seq, b"\n".join(lines) + b"\n\n")
            if final:
                self._finished = True
            self._cond.notify_all()
            return True

    def add_raw(self, data: bytes) -> None:
        """Append bytes verbatim (not an event; not counted for resumption)."""
        with self._cond:
            if self._finished or not data:
                return
            self._append(None, data)
            self._cond.notify_all()

    def _append(self, seq: int | None, wire: bytes) -> None:
        self._entries.append((seq, wire))
        excess = len(self._entries) - MAX_STREAM_EVENTS
        if excess > 0:
            del self._entries[:excess]
            self._base += excess

    def finish(self) -> None:
        """End the stream: writers end their responses once drained."""
        with self._cond:
            self._finished = True
            self._cond.notify_all()

    def attach(self, *, after: int | None = None, live: bool = False) -> Reader:
        """Add a writer, superseding any other, from the start, after event ``after``, or live."""
        with self._cond:
            end = self._base + len(self._entries)
            if live:
                pos = end
            elif after is None:
                pos = self._base
            else:
                pos = end
                for index, (seq, _wire) in enumerate(self._entries):
                    if seq is not None and seq > after:
                        pos = self._base + index
                        break
            for other in self._readers:
                other.stop_at = other.pos
            reader = Reader(pos)
            self._readers = {reader}
            self._cond.notify_all()
            return reader

    def detach(self) -> None:
        """Make the current writers end their responses after what is queued now."""
        with self._cond:
            end = self._base + len(self._entries)
            for reader in self._readers:
                reader.stop_at = end
            self._readers = set()
            self._cond.notify_all()

    def release(self, reader: Reader) -> None:
        """Forget a writer that went away."""
        with self._cond:
            self._readers.discard(reader)

    def _ended(self, reader: Reader, end: int) -> bool:
        if reader.stop_at is not None and reader.pos >= reader.stop_at:
            return True
        return self._finished and reader.pos >= end

    def read(self, reader: Reader, timeout: float) -> bytes | None:
        """Return the next bytes for ``reader``, b"" at its end, or None after ``timeout``."""
        with self._cond:
            for attempt in (0, 1):
                end = self._base + len(self._entries)
                limit = end if reader.stop_at is None else min(end, reader.stop_at)
                start = max(reader.pos, self._base)
                if start < limit:
                    first, last = start - self._base, limit - self._base
                    reader.pos = limit
                    return b"".join(wire for _seq, wire in self._entries[first:last])
                if self._ended(reader, end):
                    self._readers.discard(reader)
                    return b""
                if attempt == 0:
                    self._cond.wait(timeout)
            return None
