"""Client-hosted tasks (2025-11-25 only): a server asks the client to run sampling or
elicitation as a task.

When the host opts in (``Definition.extensions`` lists
``io.modelcontextprotocol/tasks``) and the binding has the elicitation
and/or sampling capability, a 2025-11-25 ``initialize`` declares
``capabilities.tasks`` (``list``, ``cancel``, ``requests`` for those). A
server request that then carries ``params.task`` is answered at once with a
``CreateTaskResult`` (a fresh unguessable ``taskId``, ``working``), and the
handler runs in the background exactly as for a plain request (same gates,
same deadline, same events). The client is then the receiver and answers the
server's ``tasks/get`` (the task), ``tasks/result`` (blocks, on a handler
thread, until the task ends; the original answer or error, with the
related-task ``_meta``), ``tasks/list`` and ``tasks/cancel`` (``-32602`` for
a task already over; otherwise ``cancelled`` before the reply, and the
handler's token is cancelled). A request with ``task`` the client did not
declare is served normally (the ``task`` field ignored).

Tasks are kept for their ``ttl`` (the server's request, capped at one hour,
by default ten minutes) and at most :data:`MAX_TASKS` at once (an older,
finished one is dropped first; with none to drop the request is served
normally).

Threads:
    The handler runs on the :class:`Interactions` handler thread; a blocking
    ``tasks/result`` waits on a thread of the same pool (it takes one of its
    ``Limits.max_inbound_requests`` slots; past them it is refused with the
    pool's busy error), bounded by the task's deadline, never on the reader.

Locks:
    ``_lock`` guards the task table (never held across a handler or I/O);
    each task's ``done`` event is set under it.

Shutdown:
    :meth:`close` cancels every running task and wakes every waiting
    ``tasks/result`` (it answers with the cancellation).
"""

from __future__ import annotations

import secrets
import threading
import time
from datetime import UTC, datetime
from typing import Any

from mcpclient._internal.client.inbound.inbound_pool import Ticket
from mcpclient._internal.client.inbound.interactions import Interactions, Responder
from mcpclient._internal.wire import tasks as wire_tasks
from mcpclient._internal.wire.tasks import Status
from mcpclient.calls import CancelToken

__all__ = ["HOSTED_METHODS", "MAX_TASKS", "HostedTasks"]

#: The requests a 2025-11-25 server may ask the client to run as a task.
HOSTED_METHODS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation"}
#: Client-hosted tasks kept at once.
MAX_TASKS = 64
_DEFAULT_TTL_MS = 600_000
_MAX_TTL_MS = 3_600_000
_POLL_MS = 500
_INVALID_PARAMS = -32602
_TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Hosted:
    __slots__ = (
        "answer",
        "cancel",
        "created",
        "done",
        "error",
        "method",
        "status",
        "task_id",
        "ttl_ms",
        "updated",
    )

    def __init__(self, method: str, ttl_ms: int) -> None:
        self.task_id = secrets.token_urlsafe(24)  # a bearer secret: no auth binds it
        self.method = method
        self.status = Status.WORKING
        self.created = time.time()
        self.updated = self.created
        self.ttl_ms = ttl_ms
        self.answer: Any = None
        self.error: dict[str, Any] | None = None
        self.cancel = CancelToken()
        self.done = threading.Event()

    def wire(self) -> dict[str, Any]:
        return wire_tasks.hosted_task(
            self.task_id,
            self.status.value,
            created=_stamp(self.created),
            updated=_stamp(self.updated),
            ttl_ms=self.ttl_ms,
            poll_ms=_POLL_MS,
        )

    def expired(self, at: float) -> bool:
        return (at - self.created) * 1000 > self.ttl_ms


class _Sink:
    """Receives the handler's one answer (the :class:`Interactions` responder) for a task."""

    __slots__ = ("_store", "_task")

    def __init__(self, store: HostedTasks, task: _Hosted) -> None:
        self._store = store
        self._task = task

    def respond(
        self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        self._store.finish(self._task, result, error)


class HostedTasks:
    """The tasks this client runs for its server. Thread safety: any thread."""

    def __init__(self, binding: str, interactions: Interactions, *, allowed: set[str]) -> None:
        self._binding = binding
        self._interactions = interactions
        #: The hosted methods the client declared (empty: none; the feature is off).
        self.allowed = frozenset(m for m, cap in HOSTED_METHODS.items() if cap in allowed)
        self._lock = threading.Lock()
        self._tasks: dict[str, _Hosted] = {}
        self._closed = False
        interactions.add_close_hook(self.close)

    def handles(self, method: str, params: dict[str, Any]) -> bool:
        """Whether this request is ours: a ``tasks/*`` request, or a declared augmented one."""
        if not self.allowed:
            return False
        if method in _TASK_METHODS:
            return True
        return method in self.allowed and isinstance(params.get("task"), dict)

    def serve(
        self,
        session: Responder,
        request_id: Any,
        method: str,
        params: dict[str, Any],
        token: CancelToken,
    ) -> None:
        """Serve one server request (reader thread: never blocks)."""
        if method in self.allowed:
            self._start(session, request_id, method, params, token)
        elif method == "tasks/get":
            self._answer(session, request_id, params, lambda t: t.wire())
        elif method == "tasks/cancel":
            self._cancel(session, request_id, params)
        elif method == "tasks/list":
            with self._lock:
                self._purge_locked(time.time())
                tasks = [t.wire() for t in self._tasks.values()]
            session.respond(request_id, {"tasks": tasks})
        else:  # tasks/result
            self._result(session, request_id, params)

    # -- creating --------------------------------------------------------------

    def _start(
        self,
        session: Responder,
        request_id: Any,
        method: str,
        params: dict[str, Any],
        token: CancelToken,
    ) -> None:
        asked = params["task"].get("ttl")
        ttl = (
            min(int(asked), _MAX_TTL_MS)
            if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0
            else _DEFAULT_TTL_MS
        )
        task = _Hosted(method, ttl)
        with self._lock:
            admitted = not self._closed and self._admit_locked(task)
        inner = {k: v for k, v in params.items() if k != "task"}
        if not admitted:
            # No room: serve it as a plain request (the receiver may always do so).
            self._interactions.serve_request(session, request_id, method, inner, token)
            return
        session.respond(request_id, {"task": task.wire()})
        # The handler's cancel is the task's own (tasks/cancel), not the request's:
        # the request is already answered.
        self._interactions.serve_request(_Sink(self, task), None, method, inner, task.cancel)

    def _admit_locked(self, task: _Hosted) -> bool:
        self._purge_locked(time.time())
        if len(self._tasks) >= MAX_TASKS:
            finished = [t for t in self._tasks.values() if t.status.terminal]
            if not finished:
                return False
            oldest = min(finished, key=lambda t: t.updated)
            del self._tasks[oldest.task_id]
        self._tasks[task.task_id] = task
        return True

    def _purge_locked(self, at: float) -> None:
        for task_id in [k for k, t in self._tasks.items() if t.expired(at)]:
            task = self._tasks.pop(task_id)
            task.cancel.cancel("the task expired")
            task.done.set()

    def finish(self, task: _Hosted, result: Any, error: dict[str, Any] | None) -> None:
        """The handler answered (or was refused): the task ends, unless it was cancelled."""
        with self._lock:
            if task.status.terminal:
                return  # cancelled meanwhile: a cancelled task stays cancelled
            if error is not None:
                task.status, task.error = Status.FAILED, error
            else:
                task.status, task.answer = Status.COMPLETED, result
            task.updated = time.time()
            task.done.set()

    # -- the server's tasks/* ------------------------------------------------------

    def _find(self, params: dict[str, Any]) -> _Hosted | None:
        task_id = wire_tasks.task_id_of(params)
        with self._lock:
            self._purge_locked(time.time())
            return self._tasks.get(task_id) if isinstance(task_id, str) else None

    @staticmethod
    def _not_found(session: Responder, request_id: Any) -> None:
        session.respond(
            request_id, error={"code": _INVALID_PARAMS, "message": "task not found or expired"}
        )

    def _answer(
        self, session: Responder, request_id: Any, params: dict[str, Any], build: Any
    ) -> None:
        task = self._find(params)
        if task is None:
            self._not_found(session, request_id)
            return
        with self._lock:
            body = build(task)
        session.respond(request_id, body)

    def _cancel(self, session: Responder, request_id: Any, params: dict[str, Any]) -> None:
        task = self._find(params)
        if task is None:
            self._not_found(session, request_id)
            return
        with self._lock:
            if task.status.terminal:
                terminal = True
            else:
                terminal = False
                task.status = Status.CANCELLED
                task.updated = time.time()
                task.done.set()
            body = task.wire()
        if terminal:
            session.respond(
                request_id,
                error={"code": _INVALID_PARAMS, "message": "the task is already over"},
            )
            return
        task.cancel.cancel("the server cancelled the task")  # the handler sees it
        session.respond(request_id, body)

    def _result(self, session: Responder, request_id: Any, params: dict[str, Any]) -> None:
        task = self._find(params)
        if task is None:
            self._not_found(session, request_id)
            return

        def wait_and_answer() -> None:
            # Bounded: the handler's own deadline answers (or refuses) in time.
            budget = (task.created + task.ttl_ms / 1000.0) - time.time()
            task.done.wait(max(0.0, budget))
            with self._lock:
                status, answer, error = task.status, task.answer, task.error
            related = wire_tasks.related_task(task.task_id)
            if status is Status.COMPLETED and isinstance(answer, dict):
                meta = dict(answer.get("_meta") or {})
                meta.update(related)
                session.respond(request_id, {**answer, "_meta": meta})
            elif status is Status.FAILED and error is not None:
                session.respond(request_id, error=error)  # exactly the original error
            else:
                session.respond(
                    request_id,
                    error={"code": _INVALID_PARAMS, "message": f"the task is {status.value}"},
                )

        # A waiting tasks/result takes a slot of the binding's one pool of
        # server requests, like any handler: a flood of them is refused, not
        # given a thread each.
        pool = self._interactions.pool
        if not pool.submit(wait_and_answer, Ticket(self._binding)):
            busy = self._interactions.busy("tasks/result")
            session.respond(request_id, error={"code": busy.code, "message": busy.message})

    def close(self) -> None:
        """Cancel every running task and wake every waiting ``tasks/result``."""
        with self._lock:
            self._closed = True
            tasks = list(self._tasks.values())
            for task in tasks:
                if not task.status.terminal:
                    task.status = Status.CANCELLED
                task.done.set()
        for task in tasks:
            task.cancel.cancel("the binding is closing")
