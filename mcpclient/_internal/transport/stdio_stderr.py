"""The bounded ring of a stdio child's stderr, and its lines on Python logging.

The child's stderr is drained without blocking, by whichever thread the
transport has polling it (the reader beside stdout, or ``close`` and
``loss_reason`` once the reader has stopped); the portable backend's stderr
thread instead hands it each chunk it read (:meth:`StderrRing.feed`). The last ``max_stderr_bytes``
are kept for error messages (:meth:`StderrRing.tail`); every line is also an
INFO record on ``mcpclient.server.<binding>``, bounded by ``max_log_bytes``
and cut by :class:`~.stdio_lines.StderrLines` without ever buffering a whole
long line.

Records are rate-limited, so a flooding child costs the draining thread (the
reader, during startup too) line splitting, never a log handler call per
line: the first ``LOG_BURST`` lines are logged, then ``LOG_RATE`` a second
(a token bucket on the one clock). The lines left out are counted, and the
count is logged (WARNING, same logger) before the next record that is
logged, at most once a second, and at stderr's EOF or close.

Threads:
    Any thread may call every method; :meth:`StderrRing.drain` only while it
    holds the guard of the stderr fd (the transport's stdout guard), and
    :meth:`StderrRing.feed` only from the one thread reading stderr.

Locks:
    * ``_lock`` guards the ring, its dropped-byte count, the EOF flag, the
      line splitter and the log budget (its tokens and the count of lines
      left out), and serializes the (non-blocking) reads, so chunks enter
      the ring in order whichever thread drains.
    * ``_log_lock`` keeps log records in order: a drain takes it before it
      releases ``_lock`` and holds it (only it) while it logs, so a handler
      never delays the ring.

Shutdown:
    Nothing to release: the fd belongs to the transport. After the last drain,
    :meth:`StderrRing.flush_log` logs a last line that never got its newline.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from mcpclient._core.deadline import now
from mcpclient._core.limits import normalize_message
from mcpclient._internal.transport.stdio_fds import READ_CHUNK
from mcpclient._internal.transport.stdio_lines import StderrLines, safe_log_text

__all__ = ["LOG_BURST", "LOG_RATE", "StderrRing"]

logger = logging.getLogger(__name__)

#: Stderr lines logged at once before the rate applies (a startup banner, a traceback).
LOG_BURST = 1000
#: Stderr lines logged per second, past the burst.
LOG_RATE = 100.0

# The count of lines left out is logged at most this often (and at the end).
_REPORT_EVERY = 1.0

# A log item: a line (raw bytes, cut), or the count of lines left out before it.
_Item = tuple[bytes, bool] | int


class StderrRing:
    """The last bytes of a child's stderr, and each of its lines logged, bounded.

    Example::

        ring = StderrRing(max_bytes=8192, max_log_bytes=8192, binding="files")
        ring.attach(stderr_read_fd)  # non-blocking
        at_eof = ring.drain(8)
        ring.tail(400)

    Thread safety: any thread (module docstring).
    """

    def __init__(
        self,
        *,
        max_bytes: int,
        max_log_bytes: int,
        binding: str,
        clock: Callable[[], float] = now,
    ) -> None:
        self._max = max_bytes
        self._max_log = max_log_bytes
        self._binding = binding
        self._fd = -1
        self._lock = threading.Lock()  # guards _ring, _dropped, _eof, _lines; see module doc
        self._ring = bytearray()
        self._dropped = 0
        self._eof = False
        # Each line is also a log record (bounded), emitted in order: _log_lock
        # is taken before _lock is released, and held while the records of one
        # drain are logged (never while reading).
        self._lines = StderrLines(max_log_bytes)  # guarded by _lock
        self._clock = clock
        self._tokens = float(LOG_BURST)  # lines that may be logged now; guarded by _lock
        self._refilled = clock()
        self._left_out = 0  # lines not logged since the last report; guarded by _lock
        self._reported = float("-inf")  # when the count was last logged; guarded by _lock
        self._log_lock = threading.Lock()
        self._server_log = logging.getLogger(f"mcpclient.server.{binding}")

    @property
    def fd(self) -> int:
        """The stderr fd drained (-1 before :meth:`attach`); use it only under its guard."""
        return self._fd

    def attach(self, fd: int) -> None:
        """Drain ``fd`` (the read end of the child's stderr, non-blocking) from now on."""
        self._fd = fd

    def drain(self, max_chunks: int) -> bool:
        """Read what the child's stderr holds now, without blocking; True at its EOF.

        The caller holds the guard of the fd (the transport's stdout guard:
        stderr is its companion fd). Reads are
        serialized by ``_lock``, so chunks enter the ring in order. Each
        completed line is logged on ``mcpclient.server.<binding>`` at INFO,
        after ``_lock`` is released (a handler never delays the ring),
        under ``_log_lock`` taken before it, so records keep their order
        whichever thread drains.
        """
        with self._lock:
            eof, lines = self._drain_locked(max_chunks)
            self._hold_log(lines)
        self._log_held(lines)
        return eof

    def feed(self, chunk: bytes) -> bool:
        """Keep and log one chunk read from stderr elsewhere; ``b""`` is its EOF.

        The portable backend's stderr thread reads blocking and hands each
        chunk here; returns True at EOF. Logging is ordered as for :meth:`drain`.
        """
        with self._lock:
            eof, lines = (True, []) if self._eof else self._take_locked(chunk)
            self._hold_log(lines)
        self._log_held(lines)
        return eof

    def _hold_log(self, lines: list[_Item]) -> None:
        # Caller holds _lock: _log_lock is taken before _lock is released, so
        # records keep the order their chunks entered the ring.
        if lines:
            self._log_lock.acquire()

    def _log_held(self, lines: list[_Item]) -> None:
        # After _hold_log, with _lock released: log, then release _log_lock.
        if not lines:
            return
        try:
            self._log_lines(lines)
        finally:
            self._log_lock.release()

    def _drain_locked(self, max_chunks: int) -> tuple[bool, list[_Item]]:
        # Caller holds _lock.
        lines: list[_Item] = []
        if self._eof:
            return True, lines
        for _ in range(max_chunks):
            try:
                chunk = os.read(self._fd, READ_CHUNK)
            except BlockingIOError:
                return False, lines
            except OSError:
                # Diagnostics only: losing them must not take anything else down.
                logger.debug("stderr of binding %r failed", self._binding, exc_info=True)
                chunk = b""
            eof, taken = self._take_locked(chunk)
            lines += taken
            if eof:
                return True, lines
        return False, lines

    def _take_locked(self, chunk: bytes) -> tuple[bool, list[_Item]]:
        # Caller holds _lock. An empty chunk is EOF.
        if not chunk:
            self._eof = True
            return True, self._admit_locked(self._lines.flush(), final=True)
        self._keep_locked(chunk)
        return False, self._admit_locked(self._lines.feed(chunk))

    def _admit_locked(self, lines: list[tuple[bytes, bool]], *, final: bool = False) -> list[_Item]:
        """The items to log for ``lines``: as many as the budget allows, the count before.

        Caller holds _lock. Nothing is counted when nobody listens.
        """
        if not self._server_log.isEnabledFor(logging.INFO):
            return []
        at = self._clock()
        self._tokens = min(float(LOG_BURST), self._tokens + (at - self._refilled) * LOG_RATE)
        self._refilled = at
        allowed = min(len(lines), int(self._tokens))
        self._tokens -= allowed
        items: list[_Item] = []
        if self._left_out and (final or (allowed and at - self._reported >= _REPORT_EVERY)):
            items.append(self._left_out)  # the lines left out come before these
            self._left_out = 0
            self._reported = at
        items += lines[:allowed]
        self._left_out += len(lines) - allowed
        if final and self._left_out:
            items.append(self._left_out)
            self._left_out = 0
            self._reported = at
        return items

    def _log_lines(self, lines: list[_Item]) -> None:
        # Caller holds _log_lock.
        log = self._server_log
        for item in lines:
            try:
                if isinstance(item, int):
                    log.warning(
                        "(%d stderr lines not logged: over %d at once or %d a second)",
                        item,
                        LOG_BURST,
                        LOG_RATE,
                    )
                else:
                    raw, cut = item
                    log.info("%s", safe_log_text(raw, self._max_log, cut=cut))
            except Exception:  # pragma: no cover - logging itself reports handler errors
                logger.debug("logging stderr of binding %r failed", self._binding, exc_info=True)

    def flush_log(self) -> None:
        """Log a last stderr line that never got its newline, and the count of lines left out.

        Called by close, after the last drain.
        """
        with self._lock:
            lines = self._admit_locked(self._lines.flush(), final=True)
            self._hold_log(lines)
        self._log_held(lines)

    def _keep_locked(self, chunk: bytes) -> None:
        # Caller holds _lock.
        cap = self._max
        ring = self._ring
        if len(chunk) >= cap:
            self._dropped += len(ring) + len(chunk) - cap
            ring.clear()
            if cap:
                ring += chunk[-cap:]
            return
        ring += chunk
        excess = len(ring) - cap
        if excess > 0:
            del ring[:excess]
            self._dropped += excess

    def tail(self, max_bytes: int = 400) -> str:
        """The last bytes of the child's stderr as one safe, bounded line.

        Decoded with replacement, controls replaced, at most ``max_bytes`` UTF-8
        bytes, prefixed with ``"(N earlier bytes dropped) "`` when the ring
        overflowed. Diagnostics only; it may lag the child by one read.
        """
        max_bytes = max(0, max_bytes)
        with self._lock:
            raw = bytes(self._ring[-max_bytes:]) if max_bytes else b""
            cut = len(self._ring) > len(raw) or self._dropped > 0
            dropped = self._dropped
        if cut:
            # Skip the tail of a character the cut split (at most 3 continuation bytes).
            start = 0
            while start < min(3, len(raw)) and 0x80 <= raw[start] < 0xC0:
                start += 1
            raw = raw[start:]
        text = normalize_message(raw.decode("utf-8", "replace"), max_bytes) if raw else ""
        if dropped:
            return f"({dropped} earlier bytes dropped) {text}".rstrip()
        return text
