"""One bounded pool for every request a server sends the client.

Sampling, elicitation, roots, a client-hosted task's handler and a blocking
``tasks/result`` (legacy JSON-RPC requests), and the handler calls of a modern
``input_required`` round: each runs as a job of one binding's
:class:`InboundPool`. At most ``Limits.max_inbound_requests`` jobs are in
flight at once, counted from admission until the job's own code returns (an
abandoned handler, still running after its deadline was answered, keeps its
slot: it is user code still running); a job past the cap is refused at once,
never queued, so the server's burst costs neither threads nor memory.

A refused legacy request is answered with the JSON-RPC error
:data:`BUSY_CODE` (see there for why that code).

Threads:
    Up to ``max_inbound_requests`` daemon threads named
    ``mcpclient-handler-<binding>`` (an :class:`~.threads.OnDemandThreads`:
    started by the first job, each exiting after ``_IDLE`` seconds without
    one). A thread whose job was abandoned at its deadline is renamed
    ``mcpclient-abandoned-<binding>`` until the job returns.

Locks:
    The threads primitive's ``lock`` guards the queue of admitted jobs and
    the in-flight count; each :class:`Ticket` has a lock guarding its thread
    and its abandoned/finished flags. Neither is held while a job runs.

Shutdown:
    :meth:`InboundPool.close` admits nothing more and lets idle threads exit;
    it never waits for a running handler (a stuck one is abandoned, as its
    request's deadline already said).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator

from mcpclient._core.threads import OnDemandThreads

__all__ = ["BUSY_CODE", "InboundPool", "Ticket"]

_log = logging.getLogger(__name__)

#: The JSON-RPC error code of a server request refused because the pool is full.
#: JSON-RPC 2.0 reserves -32000..-32099 for implementation-defined server errors,
#: and "busy" is one: it is not the request's fault (-32600, -32602), the method
#: exists (not -32601), and the client did not fail (-32603 would tell the server
#: the client is broken). The message names the limit; the server may try again.
BUSY_CODE = -32000
# Seconds a handler thread waits for another job before it exits.
_IDLE = 1.0


#: A job, its ticket and what runs once its slot is free (None: nothing).
_Job = tuple[Callable[[], None], "Ticket", Callable[[], None] | None]


class Ticket:
    """One admitted job: lets its deadline mark the thread running it as abandoned.

    Thread safety: any thread.
    """

    __slots__ = ("_abandoned", "_binding", "_finished", "_lock", "_thread")

    def __init__(self, binding: str) -> None:
        self._binding = binding
        self._lock = threading.Lock()  # guards the three fields below
        self._thread: threading.Thread | None = None
        self._abandoned = False
        self._finished = False

    def abandon(self) -> None:
        """Its answer was sent without it: name its thread abandoned until it returns."""
        with self._lock:
            self._abandoned = True
            if self._thread is not None and not self._finished:
                self._thread.name = f"mcpclient-abandoned-{self._binding}"

    def begin(self, thread: threading.Thread) -> None:
        """The pool's thread ``thread`` starts running the job."""
        with self._lock:
            self._thread = thread
            if self._abandoned:
                thread.name = f"mcpclient-abandoned-{self._binding}"

    def end(self, name: str) -> None:
        """The job returned: its thread gets its own ``name`` back."""
        with self._lock:
            self._finished = True
            if self._thread is not None:
                self._thread.name = name


class InboundPool:
    """The bounded pool of one binding's server requests (module docstring).

    Example::

        pool = InboundPool("files", limit=8)
        ticket = Ticket("files")
        if not pool.submit(lambda: serve(ticket), ticket):
            answer_busy()

    Thread safety: any thread.
    """

    def __init__(self, binding: str, limit: int) -> None:
        self._binding = binding
        self.limit = max(1, limit)
        self._jobs: collections.deque[_Job] = collections.deque()
        self._in_flight = 0  # admitted and not yet returned; guarded by the threads' lock
        self._refused = 0  # refusals since the last warning; guarded by the threads' lock
        self._threads: OnDemandThreads[_Job] = OnDemandThreads(
            "handler",
            binding,
            take=self._take,
            serve=self._serve,
            idle=_IDLE,
            limit=self.limit,
        )

    @property
    def in_flight(self) -> int:
        """Jobs admitted and still running (a snapshot)."""
        with self._threads.lock:
            return self._in_flight

    def submit(
        self, job: Callable[[], None], ticket: Ticket, then: Callable[[], None] | None = None
    ) -> bool:
        """Run ``job`` on a handler thread, tracked by ``ticket``; False (nothing run) when full.

        ``then`` runs on the same thread once ``job`` returned and its slot is
        free again (a submitted call's next step may admit a job of its own).
        Never blocks: the threads are no more than the jobs admitted, so an
        admitted job has a thread at once or as soon as one finishes its job.
        Also False once closed.
        """
        with self._threads.lock:
            if self._threads.closed:
                return False
            if self._in_flight < self.limit:
                self._in_flight += 1
                self._jobs.append((job, ticket, then))
                self._threads.wake()
                return True
            self._refused += 1
            first = self._refused == 1
        if first:  # once per busy spell: a flood must not flood the log too
            _log.warning(
                "binding %s: refusing server requests: %d already being served"
                " (Limits.max_inbound_requests)",
                self._binding,
                self.limit,
            )
        return False

    def close(self) -> None:
        """Admit nothing more; idle threads exit. Never waits for a running handler."""
        with self._threads.lock:
            self._threads.stop()

    def _take(self) -> _Job | None:
        return self._jobs.popleft() if self._jobs else None

    def _serve(self, items: Iterator[_Job]) -> None:
        me = threading.current_thread()
        name = self._threads.name
        for job, ticket, then in items:
            ticket.begin(me)
            try:
                job()
            except BaseException:  # a job answers its own request; never die silently
                _log.exception("binding %s: a server request's handler job failed", self._binding)
            finally:
                ticket.end(name)
                with self._threads.lock:
                    self._in_flight -= 1
                    refused = self._refused if self._in_flight == 0 else 0
                    if refused:
                        self._refused = 0
                if refused:
                    _log.info(
                        "binding %s: %d server requests were refused while busy",
                        self._binding,
                        refused,
                    )
            if then is not None:
                try:
                    then()
                except BaseException:
                    _log.exception("binding %s: a handler job's next step failed", self._binding)
