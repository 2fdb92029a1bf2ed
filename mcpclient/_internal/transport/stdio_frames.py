"""The child's stdout cut into frames: lines of at most ``max_frame_bytes``, bounded.

A frame is one line without its ``\\n`` (and a ``\\r`` before it); empty
lines are skipped and a last line without a newline is dropped. A line longer
than ``max_frame_bytes`` is never buffered whole: it is read and dropped up to
its newline. When its first or last bytes show it is the response to request N
(:func:`~.stdio_lines.response_verdict`, :func:`~.stdio_lines.tail_id`), the
result is a :class:`~.base.RequestFailure` for N (``limit_exceeded``) and the
stream goes on; otherwise the stream is poisoned.

Threads:
    Only the session's reader thread uses a :class:`FrameReader`, while it
    holds the transport's stdout guard.

Locks:
    None: the state is the reader thread's alone.

Shutdown:
    Nothing to release: the buffered reader's fds belong to the transport;
    once its wake fd fires, reads see EOF.
"""

from __future__ import annotations

import io
import logging

from mcpclient._internal.transport.base import RequestFailure
from mcpclient._internal.transport.stdio_fds import READ_CHUNK
from mcpclient._internal.transport.stdio_lines import (
    HEAD_BYTES,
    NOT_A_RESPONSE,
    TAIL_BYTES,
    response_verdict,
    tail_id,
)
from mcpclient.errors import ConnectionLostError, FailureClass, LimitExceededError

__all__ = ["FrameReader"]

logger = logging.getLogger(__name__)


class FrameReader:
    """Bounded frames from a buffered reader over the child's stdout (module docstring).

    Example::

        frames = FrameReader(io.BufferedReader(raw), max_frame_bytes=4 << 20,
                             binding="files")
        frame = frames.read()  # bytes, a RequestFailure, or None at EOF

    Thread safety: only the session's reader thread.
    """

    def __init__(self, reader: io.BufferedReader, *, max_frame_bytes: int, binding: str) -> None:
        self._reader = reader
        self._max_frame = max_frame_bytes
        self._binding = binding
        #: A line over the limit named no request: the stream is unusable.
        self.poisoned = False
        # The rest of an oversized line whose request already failed is still
        # to be dropped.
        self._skip_rest = False

    def read(self) -> bytes | RequestFailure | None:
        """The next non-empty line (see :meth:`.stdio.StdioProcess.read_frame`).

        Raises:
            LimitExceededError: (``limit_exceeded``) a line is longer than
                ``max_frame_bytes`` and names no request.
            ConnectionLostError: (``transport_closed``) reading the pipe failed.
        """
        reader = self._reader
        limit = self._max_frame
        while True:
            if self._skip_rest:
                if self._discard_rest(reader, b"") is None:
                    return None  # EOF (or close) in the middle of the line
                self._skip_rest = False
            # +2 leaves room for "\r\n" after a frame of exactly `limit` bytes.
            line = self._readline(reader, limit + 2)
            if not line:
                return None
            if line[-1] != 0x0A:
                if len(line) < limit + 2:
                    return None  # EOF (or close) in the middle of a line
                return self._oversized(reader, line, None)
            end = len(line) - 1
            if end and line[end - 1] == 0x0D:
                end -= 1
            if end == 0:
                continue
            if end > limit:
                return self._oversized(reader, line, end)
            return line[:end]

    def _readline(self, reader: io.BufferedReader, size: int) -> bytes:
        try:
            return reader.readline(size)
        except OSError as exc:
            message = f"reading the server's stdout failed: {exc.strerror}"
            raise ConnectionLostError(
                message,
                failure_class=FailureClass.TRANSPORT_CLOSED,
                binding=self._binding,
                op="read",
            ) from exc

    def _oversized(
        self, reader: io.BufferedReader, line: bytes, end: int | None
    ) -> RequestFailure | None:
        """A line over the limit: fail its request if its id shows, else the stream.

        ``line`` is the line's start (``end`` is None: the rest is still in
        the pipe) or all of it up to ``end``. An id read from the head fails
        its request at once, and the rest of the line is dropped on the next
        read; one read from the tail needs the line read (and dropped) to its
        end first. Returns None at EOF in the middle of the line.
        """
        verdict = response_verdict(line[:HEAD_BYTES])
        if verdict == NOT_A_RESPONSE:
            self.poisoned = True
            raise self._over_limit()
        if isinstance(verdict, int):
            request_id = verdict
            self._skip_rest = end is None
        else:
            if end is None:
                tail = self._discard_rest(reader, line[-TAIL_BYTES:])
                if tail is None:
                    return None
            else:
                tail = line[max(0, end - TAIL_BYTES) : end]
            found = tail_id(tail)
            if found is None:
                self.poisoned = True
                raise self._over_limit()
            request_id = found
        logger.warning(
            "binding %r: discarded the response to request %d: a line over max_frame_bytes"
            " (%d bytes)",
            self._binding,
            request_id,
            self._max_frame,
        )
        error = LimitExceededError(
            f"the server's response is a line longer than Limits.max_frame_bytes"
            f" ({self._max_frame} bytes); it was discarded and the connection kept."
            " To accept it, raise Limits(max_frame_bytes=...) in the server's definition",
            failure_class=FailureClass.LIMIT_EXCEEDED,
            binding=self._binding,
        )
        return RequestFailure(request_id, error)

    def _discard_rest(self, reader: io.BufferedReader, tail: bytes) -> bytes | None:
        """Read and drop the rest of a line; its last bytes, or None at EOF.

        Memory stays bounded: each read is at most one buffer, and only the
        last ``TAIL_BYTES`` bytes are kept.
        """
        kept = bytes(tail)
        while True:
            chunk = self._readline(reader, READ_CHUNK)
            if not chunk:
                return None
            if chunk[-1] == 0x0A:
                return (kept + chunk[:-1])[-TAIL_BYTES:]
            kept = (kept + chunk)[-TAIL_BYTES:]

    def _over_limit(self) -> LimitExceededError:
        return LimitExceededError(
            f"a line from the server exceeds Limits.max_frame_bytes ({self._max_frame} bytes)"
            " and names no request; to accept it, raise Limits(max_frame_bytes=...)",
            failure_class=FailureClass.LIMIT_EXCEEDED,
            binding=self._binding,
            op="read",
        )
