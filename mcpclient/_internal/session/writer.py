"""The frame writer of a pipe transport: in order, and no caller ever blocks.

Threads:
    ``mcpclient-writer-<binding>`` is the sole sender of queued frames. It
    exists only while frames wait: it is started when a frame first has to
    queue and exits after ``_IDLE`` seconds with nothing queued. Most frames
    never need it: a caller writes its frame itself when nothing is queued
    and the pipe takes the frame whole at once (which saves a thread
    hand-off per call), so a binding whose pipe never fills never starts one.

Locks:
    ``_write_lock`` serializes frame writes (the thread and the direct-write
    fast path); callers only ever *try* to take it, so no caller blocks
    behind a stuck pipe. ``_count_lock`` guards the queued count and whether
    a thread is running. Neither is held while ``on_error`` runs.

Shutdown:
    :meth:`stop` drops what is still queued and ends the thread (closing the
    transport unblocks one stuck in a full pipe); :meth:`join` waits for it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

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
        self._count_lock = threading.Lock()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._queued = 0  # frames queued and not yet written
        self._stopped = False
        self._running = False  # guarded by _count_lock
        # Made when a frame first has to wait: most bindings never need one,
        # not even its Thread object (~2 KiB).
        self._thread: threading.Thread | None = None

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
            start = not self._running and not self._stopped
            if start:
                self._running = True
                self._thread = threading.Thread(
                    target=self._run, name=f"mcpclient-writer-{self._binding}", daemon=True
                )
            thread = self._thread
        self._queue.put(frame)
        if start and thread is not None:
            thread.start()

    def stop(self) -> None:
        """Write nothing more; the thread (if any) ends."""
        self._stopped = True
        self._queue.put(None)

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the thread to end (after :meth:`stop`)."""
        with self._count_lock:
            thread = self._thread
        if thread is not None and thread.ident is not None:
            thread.join(timeout)

    def forget(self) -> None:
        """After fork, in the child: fresh locks, nothing written any more."""
        self._write_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._stopped = True

    def _run(self) -> None:
        while True:
            try:
                frame = self._queue.get(timeout=_IDLE)
            except queue.Empty:
                with self._count_lock:
                    if self._queued == 0:
                        # Idle: exit; the next frame that has to wait starts a
                        # new thread (threads exist only while they have work).
                        self._running = False
                        return
                continue
            if frame is None:
                return
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
                    with self._count_lock:
                        self._queued -= 1
            if failed is not None:
                self._on_error(failed)
