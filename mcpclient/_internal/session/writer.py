"""The frame writer of a pipe transport: in order, and no caller ever blocks.

Threads:
    ``mcpclient-writer-<binding>`` is the sole sender of queued frames, an
    on-demand thread (``threads.py``). It exists only while frames wait: it
    is started when a frame first has to queue and exits after ``_IDLE``
    seconds with nothing queued. Most frames
    never need it: a caller writes its frame itself when nothing is queued
    and the pipe takes the frame whole at once (which saves a thread
    hand-off per call), so a binding whose pipe never fills never starts one.

Locks:
    ``_write_lock`` serializes frame writes (the thread and the direct-write
    fast path); callers only ever *try* to take it, so no caller blocks
    behind a stuck pipe. ``_count_lock`` (the on-demand thread's lock) guards
    the queue, the queued count and the thread's state. Neither is held while ``on_error`` runs.

Shutdown:
    :meth:`drain` waits (bounded) for what is queued to be written; :meth:`stop`
    drops what is still queued and ends the thread (closing the transport
    unblocks one stuck in a full pipe); :meth:`join` waits for it.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator

from mcpclient._core.threads import OnDemandThreads
from mcpclient._internal.transport.base import FrameTransport
from mcpclient.errors import ConnectionLostError, Error

__all__ = ["FrameWriter"]

_log = logging.getLogger(__name__)

_IDLE = 1.0  # seconds an idle writer thread waits for more before it exits


class FrameWriter:
    """Writes frames to ``transport`` in the order sent; ``on_error`` on a failed write.

    Thread safety: :meth:`send`, :meth:`stop` and :meth:`join` from any thread.
    """

    def __init__(
        self, transport: FrameTransport, *, binding: str, on_error: Callable[[Error], None]
    ) -> None:
        self._transport = transport
        self._binding = binding
        self._on_error = on_error
        self._write_lock = threading.Lock()
        self._frames: collections.deque[bytes] = collections.deque()
        self._queued = 0  # frames queued and not yet written
        self._stopped = False
        # Started when a frame first has to wait: most bindings never need one.
        self._thread: OnDemandThreads[bytes] = OnDemandThreads(
            "writer", binding, take=self._take, serve=self._serve, idle=_IDLE
        )
        self._count_lock = self._thread.lock
        self._written = threading.Condition(self._count_lock)  # notified when the queue empties

    def send(self, frame: bytes) -> None:
        """Write ``frame`` now if the pipe takes it whole, else queue it; never blocks."""
        # Fast path: nothing is queued and the pipe takes the frame whole, so
        # writing it here keeps order and saves a hand-off to the thread.
        if self._write_lock.acquire(False):  # positional: no keyword parsing per frame
            failed: Error | None = None
            try:
                # No _count_lock for this read: a frame this thread queued
                # earlier is already counted (it counts before it queues),
                # and another thread's concurrent send has no order to keep.
                if self._queued == 0 and not self._stopped:
                    try:
                        if self._transport.try_write_frame(frame):
                            return
                    except Error as exc:
                        failed = exc
            finally:
                self._write_lock.release()
            if failed is not None:
                self._on_error(failed)
                return
        with self._count_lock:
            self._queued += 1
            self._frames.append(frame)
            self._thread.wake()

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the queue to empty (or a stop); False if time ran out."""
        with self._written:
            return self._written.wait_for(lambda: self._queued == 0 or self._stopped, timeout)

    def stop(self) -> None:
        """Write nothing more; the thread (if any) ends."""
        self._stopped = True
        with self._written:
            self._thread.stop()
            self._written.notify_all()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the thread to end (after :meth:`stop`)."""
        self._thread.join(timeout)

    def forget(self) -> None:
        """After fork, in the child: fresh locks, nothing written any more."""
        self._write_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._written = threading.Condition(self._count_lock)
        self._thread.forget(self._count_lock)
        self._stopped = True

    def _take(self) -> bytes | None:
        if self._stopped:
            # Dropped: nothing is written after stop().
            self._queued -= len(self._frames)
            self._frames.clear()
            self._written.notify_all()
            return None
        return self._frames.popleft() if self._frames else None

    def _serve(self, frames: Iterator[bytes]) -> None:
        for frame in frames:
            failed: Error | None = None
            with self._write_lock:
                try:
                    if not self._stopped:
                        self._transport.write_frame(frame)
                except Error as exc:
                    failed = exc
                except Exception as exc:
                    _log.exception("writer of binding %s failed", self._binding)
                    failed = ConnectionLostError(
                        f"writing to the server failed: {exc!r}", binding=self._binding
                    )
                finally:
                    with self._written:
                        self._queued -= 1
                        if self._queued == 0:
                            self._written.notify_all()
            if failed is not None:
                self._on_error(failed)
