"""What a server sent that was not JSON-RPC: counted, and the start of the first kept.

A stdio server that prints a banner, or a ``print()`` left in its code,
writes lines that are not JSON-RPC. Each is dropped (the framing is intact),
but a startup that then runs out of time should say why: "the server wrote
3 lines that are not JSON-RPC; the first began 'Starting server v1.2…'".
Memory is bounded: a counter and at most :data:`KEEP_BYTES` bytes.

Threads:
    None. :meth:`Noise.record` runs on the reader thread, :meth:`Noise.describe`
    on whichever thread builds an error.

Locks:
    ``_lock`` guards the counter and the first bytes (held for no I/O).

Shutdown:
    Nothing to stop.
"""

from __future__ import annotations

import threading

__all__ = ["KEEP_BYTES", "Noise"]

#: How much of the first dropped line a message quotes.
KEEP_BYTES = 80


def _quoted(data: bytes, cut: bool) -> str:
    # Decoded leniently, then escaped (repr shows control characters as \x..),
    # so a server's bytes can neither break the message nor drive a terminal.
    text = data.decode("utf-8", errors="backslashreplace")
    shown = repr(text)
    return f"{shown[:-1]}...{shown[-1]}" if cut else shown


class Noise:
    """The lines a connection dropped as not JSON-RPC.

    Thread safety: safe from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._first = b""
        self._cut = False

    def record(self, frame: bytes) -> None:
        """Count a dropped line; keep the start of the first one."""
        with self._lock:
            self._count += 1
            if self._count == 1:
                self._first = bytes(frame[:KEEP_BYTES])
                self._cut = len(frame) > KEEP_BYTES

    def describe(self) -> str:
        """``""``, or a sentence saying how many lines were dropped and how the first began."""
        with self._lock:
            count, first, cut = self._count, self._first, self._cut
        if not count:
            return ""
        lines = "1 line" if count == 1 else f"{count} lines"
        return (
            f"the server wrote {lines} that {'is' if count == 1 else 'are'} not JSON-RPC"
            f" (dropped); the first began {_quoted(first, cut)}"
        )
