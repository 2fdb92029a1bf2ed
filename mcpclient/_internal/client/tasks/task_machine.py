"""A task's state machine and its polling schedule (pure: no I/O, injected clock).

Transitions, exactly as both forms specify: a task starts ``working``;
``working`` and ``input_required`` may move to any status (each other, or a
terminal one); ``completed``, ``failed`` and ``cancelled`` never change. A
hostile or buggy server that reports an illegal transition (a terminal task
coming back to life, another task id) is not believed: the observation is
ignored with a warning and the client keeps the state it had.

Polling: at the server's latest suggested interval, clamped between
:data:`POLL_FLOOR` and :data:`POLL_CEILING` (:data:`POLL_DEFAULT` when the
server suggests none), never past the call's deadline, and at most
:data:`MAX_POLLS` times per drive.

Status notifications (``notifications/tasks/status``, ``notifications/tasks``)
never replace polling: they only wake a waiting poller early
(:class:`Wakeups`), and even then not sooner than the floor after its last
poll.

Threads:
    None; a tracker belongs to the one thread that drives its task.

Locks:
    ``Wakeups._lock`` guards its table of waiting pollers.

Shutdown:
    Nothing to release.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from mcpclient._internal.wire.tasks import Status, WireTask
from mcpclient.errors import DeadlineExceededError, LimitExceededError, RequestCancelledError

__all__ = [
    "MAX_POLLS",
    "POLL_CEILING",
    "POLL_DEFAULT",
    "POLL_FLOOR",
    "TaskTracker",
    "Wakeups",
    "legal",
    "poll_delay",
    "poll_until",
    "waiter",
]

_log = logging.getLogger("mcpclient.tasks")

#: Never poll more often than this (seconds), whatever the server suggests.
POLL_FLOOR = 0.05
#: Never wait longer than this between polls (seconds).
POLL_CEILING = 30.0
#: The interval when the server suggests none (seconds).
POLL_DEFAULT = 1.0
#: The most polls one drive makes (the deadline bounds its time; this its traffic).
MAX_POLLS = 100_000


def legal(old: Status, new: Status) -> bool:
    """Whether a task may move from ``old`` to ``new`` (staying put is legal)."""
    if old is new:
        return True
    return not old.terminal


class TaskTracker:
    """The client's view of one task: the last legal observation.

    Thread safety: none; one driving thread.
    """

    __slots__ = ("_binding", "current", "ignored")

    def __init__(self, first: WireTask, *, binding: str) -> None:
        self.current = first
        self._binding = binding
        #: How many observations were refused as illegal.
        self.ignored = 0

    @property
    def status(self) -> Status:
        """The task's current status."""
        return self.current.status

    def observe(self, task: WireTask) -> bool:
        """Take a new observation if it is legal; False (with a warning) when refused."""
        old = self.current
        if task.task_id != old.task_id:
            self._refuse("a status report for another task id")
            return False
        if not legal(old.status, task.status):
            self._refuse(f"an illegal transition {old.status.value} -> {task.status.value}")
            return False
        self.current = task
        return True

    def _refuse(self, what: str) -> None:
        self.ignored += 1
        _log.warning(
            "mcpclient: %s: the server reported %s; ignored, the task stays %s",
            self._binding,
            what,
            self.current.status.value,
        )


def poll_delay(
    suggested_ms: int | None,
    *,
    now: float,
    deadline: float,
    floor: float = POLL_FLOOR,
    ceiling: float = POLL_CEILING,
) -> float:
    """Seconds to wait before the next poll: the suggestion, clamped, never past ``deadline``."""
    delay = POLL_DEFAULT if suggested_ms is None else suggested_ms / 1000.0
    delay = min(max(delay, floor), ceiling)
    return max(0.0, min(delay, deadline - now))


def poll_until(
    tracker: TaskTracker,
    fetch: Callable[[float], WireTask],
    *,
    stop: Callable[[Status], bool],
    deadline: float,
    clock: Callable[[], float],
    wait: Callable[[float], bool],
    binding: str,
    op: str,
    max_polls: int = MAX_POLLS,
) -> WireTask:
    """Poll until ``stop(status)`` holds for the tracked task; return that observation.

    ``fetch(deadline)`` is one ``tasks/get``; ``wait(seconds)`` sleeps
    interruptibly and returns True when the caller cancelled.

    Raises:
        DeadlineExceededError: ``deadline`` passed first.
        RequestCancelledError: ``wait`` reported a cancel.
        LimitExceededError: more than ``max_polls`` polls.
        Error: whatever ``fetch`` raises.
    """
    polls = 0
    while not stop(tracker.status):
        now = clock()
        if now >= deadline:
            raise DeadlineExceededError(
                "the call's deadline passed while its task was still running",
                binding=binding,
                op=op,
            )
        delay = poll_delay(tracker.current.poll_interval_ms, now=now, deadline=deadline)
        if wait(delay):
            raise RequestCancelledError("the call was cancelled", binding=binding, op=op)
        if clock() >= deadline:
            continue  # the loop's top raises the deadline
        polls += 1
        if polls > max_polls:
            raise LimitExceededError(
                f"a task was polled more than {max_polls} times", binding=binding, op=op
            )
        tracker.observe(fetch(deadline))
    return tracker.current


class Wakeups:
    """The pollers waiting on each task id, woken early by a status notification.

    Thread safety: any thread (the reader wakes, drivers wait).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[threading.Event]] = {}
        #: How many waiting pollers notifications woke (diagnostics, tests).
        self.woken = 0

    def register(self, task_id: str) -> threading.Event:
        """An event set when a notification names ``task_id``."""
        event = threading.Event()
        with self._lock:
            self._waiting.setdefault(task_id, set()).add(event)
        return event

    def unregister(self, task_id: str, event: threading.Event) -> None:
        """Forget a poller's event."""
        with self._lock:
            events = self._waiting.get(task_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._waiting[task_id]

    def wake(self, task_id: str) -> int:
        """Wake every poller of ``task_id``; how many there were."""
        with self._lock:
            events = list(self._waiting.get(task_id, ()))
            self.woken += len(events)
        for event in events:
            event.set()
        return len(events)


def waiter(
    event: threading.Event,
    cancelled: Callable[[], bool],
    clock: Callable[[], float],
    floor: float = POLL_FLOOR,
) -> Callable[[float], bool]:
    """A ``wait(seconds)`` for :func:`poll_until`: ends early when ``event`` is set.

    The caller's cancel sets ``event`` too; an early wake still leaves
    ``floor`` seconds between polls (a notification flood cannot make a
    tight loop). Returns whether the caller cancelled.
    """

    def wait(seconds: float) -> bool:
        started = clock()
        woke = event.wait(seconds)
        event.clear()
        if cancelled():
            return True
        rest = floor - (clock() - started)
        if woke and rest > 0:
            event.wait(rest)
            event.clear()
        return cancelled()

    return wait
