"""Run one job per binding on a bounded pool of short-lived threads, and wait for all.

The host starts (and closes) its bindings in parallel. The threads exist only
for that: :func:`run_all` returns once every job has ended and every thread
has exited, so no thread of it outlives the call.

Threads:
    Up to :data:`MAX_THREADS` threads named ``mcpclient-<role>-host`` (an
    :class:`~mcpclient._core.threads.OnDemandThreads` with no idle time),
    one fewer than there are jobs, and the calling thread: each takes jobs
    until none is left; the threads then exit.

Locks:
    The pool's ``lock`` guards the job queue and the count of unfinished jobs.

Shutdown:
    Nothing to shut down: :func:`run_all` joins its threads before returning.
    A job must end on its own (each is bounded by its own deadline); one that
    raises is logged and counted as ended.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from mcpclient._core.threads import OnDemandThreads

__all__ = ["MAX_THREADS", "run_all"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

#: At most this many threads start or close bindings at once.
MAX_THREADS = 32
# A thread that has ended its last job exits at once; this bounds the join
# that follows (it only waits for a return statement to run).
_JOIN_SECONDS = 5.0


def run_all(
    role: str,
    jobs: Sequence[T],
    run: Callable[[T], None],
    *,
    interrupted: Callable[[], None] | None = None,
) -> None:
    """Call ``run(job)`` for every job, up to :data:`MAX_THREADS` + 1 at a time; wait for all.

    ``run`` should not raise (a job records its own outcome); if it does, the
    exception is logged and the job counts as ended. A job is run on the
    calling thread when it is the only one (no thread to start for it), and
    so is every job when no thread can be started.

    When the wait is interrupted (``KeyboardInterrupt``), ``interrupted`` is
    called (it should make the jobs end soon: cancel them), the jobs are
    waited for a bounded time, and the interruption propagates.
    """
    if not jobs:
        return
    if len(jobs) == 1:
        _guarded(run, jobs[0])
        return
    queue = collections.deque(jobs)
    remaining = [len(jobs)]
    done = threading.Event()

    def take() -> T | None:
        return queue.popleft() if queue else None

    def serve(items: Iterator[T]) -> None:
        for job in items:
            try:
                _guarded(run, job)
            finally:  # counted as ended whatever happened, so the wait always ends
                with pool.lock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        done.set()

    # The caller runs jobs too, so one thread fewer than jobs: each thread also
    # costs memory that outlives it (glibc gives each its own malloc arena).
    workers = min(len(jobs) - 1, MAX_THREADS)
    pool: OnDemandThreads[T] = OnDemandThreads(
        role, "host", take=take, serve=serve, idle=0.0, limit=workers
    )
    try:
        with pool.lock:
            for _ in range(workers):
                pool.wake()
    except RuntimeError:  # no thread to be had: the started ones and this one share the work
        _log.warning("could not start a thread for the host's %s jobs", role)
    try:
        serve(_drain(pool.lock, take))  # the caller helps rather than idling
        done.wait()
    except BaseException:
        if interrupted is not None:
            interrupted()
        done.wait(_JOIN_SECONDS)
        raise
    finally:
        with pool.lock:
            pool.stop()
        pool.join(_JOIN_SECONDS)


def _drain(lock: threading.Lock, take: Callable[[], T | None]) -> Iterator[T]:
    while True:
        with lock:
            job = take()
        if job is None:
            return
        yield job


def _guarded(run: Callable[[T], None], job: T) -> None:
    try:
        run(job)
    except Exception:  # a job records its own outcome; this one did not
        _log.exception("a host job failed unexpectedly")
