"""Task-augmented tool calls, both forms: deciding, driving, cancelling.

When a ``tools/call`` becomes a task: 2025-11-25 (the experimental core
form), when the server declared ``tasks.requests.tools.call`` and the tool's
``execution.taskSupport`` is ``required``, or ``optional`` and the caller
asked (``task=True``); 2026-07-28, whenever the binding declared the
``io.modelcontextprotocol/tasks`` extension on the request and the server
chose to answer with one (``resultType: "task"``).

Driving a task (``call_tool`` and ``TaskHandle.result``): poll ``tasks/get``
at the server's suggested interval (clamped, :mod:`task_machine`) until the
task ends; 2025-11-25 then (or on ``input_required``) blocks in
``tasks/result`` while the server's elicitation/sampling requests are served
by the host's handlers; 2026-07-28 reads the outcome inlined in ``tasks/get``
and answers ``inputRequests`` with ``tasks/update``. All of it inside the
call's one deadline; when it passes, or the caller cancels, ``call_tool``
sends a best-effort ``tasks/cancel`` (never ``notifications/cancelled`` for
the task) and raises.

Threads:
    None of its own: the caller's thread drives its task. A best-effort
    ``tasks/cancel`` is sent without waiting (the session's deadline watcher
    expires it).

Locks:
    None of its own.

Shutdown:
    A drive stops with the binding (its next request is refused with
    ``ShutdownError``); the server's task is not cancelled by ``close()``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import attrs

from mcpclient._core.deadline import now
from mcpclient._core.limits import bound
from mcpclient._internal.client.calls.mrtr import answer_entry
from mcpclient._internal.client.calls.tools import PreparedCall
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.client.tasks.task_machine import TaskTracker, Wakeups, poll_until, waiter
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.headers import call_headers
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.wire import tasks as wire
from mcpclient._internal.wire.tasks import Status, TaskWireError, WireTask
from mcpclient.calls import CancelToken
from mcpclient.content import ToolResult
from mcpclient.errors import (
    ConfigError,
    Error,
    FailureClass,
    LimitExceededError,
    ProtocolError,
    RequestCancelledError,
    ToolUnavailableError,
)
from mcpclient.tasks import TaskHandle, TaskStatus

__all__ = ["Send", "TaskRunner", "mode_for", "tasks_declared"]

_log = logging.getLogger("mcpclient.tasks")

#: Sends one request under a context; returns its raw result (CallPath._task_request).
Send = Callable[[str, dict[str, Any], CallContext], Any]
#: Converts a final raw CallToolResult for a prepared call (validation included;
#: None: a listed task, whose call this binding did not prepare).
Convert = Callable[[PreparedCall | None, Any], ToolResult]

_CANCEL_SECONDS = 5.0  # the bound of a best-effort tasks/cancel nobody waits for
_INVALID_PARAMS = -32602


def tasks_declared(protocol: Protocol) -> bool:
    """2026-07-28: whether this binding declares the tasks extension on its requests."""
    extensions = protocol.client_caps.get("extensions")
    return isinstance(extensions, dict) and wire.EXTENSION in extensions


def mode_for(
    protocol: Protocol,
    spec_execution: Any,
    want: bool | None,
    *,
    tool: str,
    binding: str,
    op: str,
) -> bool:
    """Whether to send a ``tools/call`` as a task (2025-11-25: augment it).

    2026-07-28: the server decides; this says whether a task answer is
    acceptable at all. ``want``: the caller's ``task=`` (None: the default).

    Raises:
        ProtocolError: ``unsupported_protocol``: the caller asked for a task
            the server, the era or the tool does not allow.
    """
    support = wire.tool_task_support(spec_execution)
    name = repr(bound(tool, 64))
    if protocol.modern:
        able = protocol.tasks.tools_call and tasks_declared(protocol)
        if want and not able:
            raise ProtocolError(
                f"tool {name} cannot run as a task: the server or this binding"
                " does not use the tasks extension",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=binding,
                op=op,
            )
        return able and want is not False
    able = protocol.version == wire.TASKS_VERSION and protocol.tasks.tools_call
    if not able:
        if want:
            raise ProtocolError(
                f"tool {name} cannot run as a task: the server does not accept"
                " task-augmented tool calls",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=binding,
                op=op,
            )
        # A required tool on a server without the capability is the server's
        # bug: call it plainly and surface what it answers.
        return False
    if support == "required":
        if want is False:
            raise ProtocolError(
                f"tool {name} requires task-augmented execution (task=False was given)",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=binding,
                op=op,
            )
        return True
    if support == "forbidden" and want:
        raise ProtocolError(
            f"tool {name} does not support task-augmented execution",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=binding,
            op=op,
        )
    return bool(want)


def to_status(task: WireTask) -> TaskStatus:
    """The public observation of a wire task."""
    return TaskStatus(
        state=task.status,
        message=task.status_message,
        created_at=task.created_at,
        last_updated_at=task.last_updated_at,
        ttl=None if task.ttl_ms is None else task.ttl_ms / 1000.0,
        poll_interval=None if task.poll_interval_ms is None else task.poll_interval_ms / 1000.0,
    )


class TaskRunner:
    """Drives one binding's tasks. Thread safety: any thread; a drive is its caller's."""

    def __init__(self, state: BindingState, interactions: Interactions, send: Send) -> None:
        self._st = state
        self._binding = state.binding
        self._interactions = interactions
        self._send = send
        self._limits = state.definition.limits
        #: Pollers a status notification wakes early.
        self.wakeups = Wakeups()

    def on_status(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks/status`` (or ``notifications/tasks``): wake its pollers.

        Never trusted as the task's state (polling says that); reader thread.
        """
        task_id = wire.task_id_of(params)
        if isinstance(task_id, str):
            self.wakeups.wake(task_id)

    # -- the wire -------------------------------------------------------------

    def _protocol(self, op: str, deadline: float, cancel: CancelToken | None) -> Protocol:
        conn, _ = self._st.serving(op, deadline, cancel)
        protocol = conn.protocol
        assert protocol is not None
        return protocol

    def _call(
        self, method: str, task_id: str, op: str, deadline: float, cancel: CancelToken | None
    ) -> Any:
        ctx = CallContext(op=op, deadline=deadline, cancel=cancel)
        return self._send(method, wire.get_params(task_id), ctx)

    def _parse(self, raw: Any, *, modern: bool, op: str) -> WireTask:
        try:
            return wire.parse_task(raw, modern=modern)
        except TaskWireError as exc:
            raise ProtocolError(
                f"the server sent a malformed task: {exc}", binding=self._binding, op=op
            ) from None

    def get(
        self, task_id: str, *, op: str, deadline: float, cancel: CancelToken | None = None
    ) -> WireTask:
        """One ``tasks/get``; an unknown or expired task is ``not_found``."""
        modern = self._protocol(op, deadline, cancel).modern
        try:
            raw = self._call("tasks/get", task_id, op, deadline, cancel)
        except ProtocolError as exc:
            raise self._lost_task(exc, op) from None
        return self._parse(raw, modern=modern, op=op)

    def _lost_task(self, exc: ProtocolError, op: str) -> Error:
        # tasks/get answers -32602 for a task it does not know (purged, expired,
        # never existed): the result is lost, not a transport fault.
        if exc.code == _INVALID_PARAMS:
            return ToolUnavailableError(
                "the server no longer knows the task (expired or unknown)",
                failure_class=FailureClass.NOT_FOUND,
                binding=self._binding,
                op=op,
            )
        return exc

    def send_cancel(self, task_id: str, *, op: str) -> None:
        """A best-effort ``tasks/cancel`` nobody waits for (deadline passed, caller cancelled)."""
        with self._st.lock:
            conn = self._st.conn
        protocol = conn.protocol if conn is not None else None
        if conn is None or protocol is None or not protocol.tasks.cancel:
            return
        ctx = CallContext(op=op, deadline=now() + _CANCEL_SECONDS, cancel_on_wire=False)
        try:
            self._send_detached(conn, protocol, task_id, ctx)
        except Error as exc:  # best effort: the caller's own error is what matters
            _log.debug("mcpclient: %s: tasks/cancel not sent: %s", self._binding, exc)

    def _send_detached(
        self, conn: Connection, protocol: Protocol, task_id: str, ctx: CallContext
    ) -> None:
        params = wire.cancel_params(task_id)
        if conn.kind != "stdio":
            ctx = CallContext(
                op=ctx.op,
                deadline=ctx.deadline,
                cancel_on_wire=False,
                headers=call_headers("tasks/cancel", params),
            )
        entry = conn.session.submit("tasks/cancel", protocol.params(params), ctx)
        # Nobody waits: retrieve the outcome so a failure is not reported as unretrieved.
        entry.add_done_callback(lambda f: f.exception())

    def cancel(self, task_id: str, *, op: str, deadline: float) -> None:
        """``tasks/cancel``, waited for."""
        protocol = self._protocol(op, deadline, None)
        if not protocol.tasks.cancel:
            raise ProtocolError(
                "the server does not support cancelling tasks",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self._binding,
                op=op,
            )
        # -32602 here is "unknown" or "already terminal": the server's text says which.
        self._call("tasks/cancel", task_id, op, deadline, None)

    def list_all(self, *, op: str, deadline: float) -> list[WireTask]:
        """Every task of a 2025-11-25 server (``tasks/list``, all pages, bounded)."""
        protocol = self._protocol(op, deadline, None)
        if protocol.modern or not protocol.tasks.list:
            raise ProtocolError(
                "the server does not list tasks",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self._binding,
                op=op,
            )
        out: list[WireTask] = []
        cursor: str | None = None
        for _ in range(self._limits.max_catalog_pages):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            raw = self._send("tasks/list", params, CallContext(op=op, deadline=deadline))
            try:
                page, cursor = wire.parse_list(raw)
            except TaskWireError as exc:
                raise ProtocolError(str(exc), binding=self._binding, op=op) from None
            out.extend(page)
            if cursor is None:
                return out
        raise LimitExceededError(
            "tasks/list has more pages than max_catalog_pages", binding=self._binding, op=op
        )

    # -- driving ----------------------------------------------------------------

    def drive(
        self,
        task: WireTask | TaskTracker,
        *,
        op: str,
        deadline: float,
        cancel: CancelToken | None,
        cancel_on_exit: bool,
    ) -> Any:
        """Run a task to its end within ``deadline``; the final raw ``CallToolResult``.

        ``task``: its first observation, or the tracker a handle keeps.
        ``cancel_on_exit``: send ``tasks/cancel`` when the call ends without
        the task's outcome: the deadline passed, the caller cancelled, or
        anything else failed (``call_tool``; a handle leaves its task running).
        """
        tracker = (
            task if isinstance(task, TaskTracker) else TaskTracker(task, binding=self._binding)
        )
        try:
            return self._drive(tracker, op=op, deadline=deadline, cancel=cancel)
        except BaseException as exc:
            # The call is over without the task's outcome (its deadline, a
            # cancel, an input it could not answer, a protocol fault, an
            # interrupt): a task still running is cancelled, best effort.
            lost = isinstance(exc, Error) and exc.failure_class is FailureClass.NOT_FOUND
            if cancel_on_exit and not lost and not tracker.status.terminal:
                self.send_cancel(tracker.current.task_id, op=op)
            raise

    def _drive(
        self, tracker: TaskTracker, *, op: str, deadline: float, cancel: CancelToken | None
    ) -> Any:
        protocol = self._protocol(op, deadline, cancel)
        modern = protocol.modern
        task_id = tracker.current.task_id
        answered: set[str] = set()
        event = self.wakeups.register(task_id)
        handle = cancel.add_callback(event.set) if cancel is not None else None
        try:
            return self._loop(
                tracker, modern, answered, event, op=op, deadline=deadline, cancel=cancel
            )
        finally:
            self.wakeups.unregister(task_id, event)
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)

    def _loop(
        self,
        tracker: TaskTracker,
        modern: bool,
        answered: set[str],
        event: threading.Event,
        *,
        op: str,
        deadline: float,
        cancel: CancelToken | None,
    ) -> Any:
        task_id = tracker.current.task_id
        wait = waiter(event, lambda: cancel is not None and cancel.cancelled, now)

        def fetch(limit: float) -> WireTask:
            return self.get(task_id, op=op, deadline=limit, cancel=cancel)

        while True:
            task = poll_until(
                tracker,
                fetch,
                stop=_settled,
                deadline=deadline,
                clock=now,
                wait=wait,
                binding=self._binding,
                op=op,
            )
            if task.status is Status.CANCELLED:
                raise RequestCancelledError(
                    "the server cancelled the task", binding=self._binding, op=op
                )
            if not modern:
                # tasks/result blocks until the end; the server's input
                # requests arrive (and are served by the handlers) meanwhile.
                return self._call("tasks/result", task_id, op, deadline, cancel)
            if task.status is Status.COMPLETED:
                if task.result is None:
                    # Created already completed: the payload is tasks/get's to give.
                    done = fetch(deadline)
                    if done.task_id != task_id or done.result is None:
                        raise ProtocolError(
                            "the server reported a completed task without its result",
                            binding=self._binding,
                            op=op,
                        )
                    return done.result
                return task.result
            if task.status is Status.FAILED:
                raise self._failed(task, op)
            self._answer_inputs(task, answered, op=op, deadline=deadline, cancel=cancel)
            # The ack is eventually consistent: poll again after the interval.
            tracker.current = _as_working(task)

    def _failed(self, task: WireTask, op: str) -> Error:
        error = task.error or {}
        code = error.get("code")
        message = error.get("message")
        text = message[:300] if isinstance(message, str) else task.status_message
        return ProtocolError(
            f"the task failed: {code if isinstance(code, int) else '?'}: {text}",
            binding=self._binding,
            op=op,
        )

    def _answer_inputs(
        self,
        task: WireTask,
        answered: set[str],
        *,
        op: str,
        deadline: float,
        cancel: CancelToken | None,
    ) -> None:
        """2026-07-28 ``input_required``: serve the new requests, then ``tasks/update``."""
        entries = task.input_requests or {}
        if len(entries) > self._limits.max_input_requests:
            raise LimitExceededError(
                f"a task asked for {len(entries)} inputs at once, over max_input_requests",
                binding=self._binding,
                op=op,
            )
        ctx = CallContext(op=op, deadline=deadline, cancel=cancel)
        responses: dict[str, Any] = {}
        for key, entry in entries.items():
            if key in answered:
                continue  # the server repeats outstanding requests on every poll
            if not isinstance(entry, dict) or not isinstance(entry.get("method"), str):
                raise ProtocolError(
                    "a task's inputRequests entry has no method", binding=self._binding, op=op
                )
            inner = entry.get("params")
            responses[key] = answer_entry(
                entry["method"],
                inner if isinstance(inner, dict) else {},
                ctx,
                interactions=self._interactions,
                binding=self._binding,
            )
            answered.add(key)
            if len(answered) > self._limits.max_input_rounds * self._limits.max_input_requests:
                raise LimitExceededError(
                    "a task asked for too many inputs", binding=self._binding, op=op
                )
        if responses:
            params = wire.update_params(task.task_id, responses)
            self._send("tasks/update", params, ctx)

    # -- handles ----------------------------------------------------------------

    def handle(self, first: WireTask, prepared: PreparedCall, convert: Convert) -> TaskHandle:
        """A :class:`TaskHandle` for a task a ``start_task`` created."""
        return TaskHandle(
            _HandleDriver(self, prepared, convert), first.task_id, str(prepared.params["name"])
        )

    def resume(self, task_id: str, convert: Convert) -> TaskHandle:
        """A handle of the task ``task_id`` (its output schema unknown, not checked).

        Raises:
            ConfigError: ``task_id`` is not a non-empty string of at most 512 characters.
        """
        if not isinstance(task_id, str) or not task_id or len(task_id) > 512:
            raise ConfigError(
                "resume_task() needs the task's id: a non-empty string (at most 512 characters)",
                binding=self._binding,
                op="resume_task",
            )
        return TaskHandle(_HandleDriver(self, None, convert), task_id, "")

    def listed(self, deadline: float, convert: Convert) -> list[TaskHandle]:
        """Handles of every task ``tasks/list`` reports (2025-11-25)."""
        return [
            TaskHandle(_HandleDriver(self, None, convert), task.task_id, "")
            for task in self.list_all(op="list_tasks", deadline=deadline)
        ]

    @staticmethod
    def done(result: ToolResult, prepared: PreparedCall) -> TaskHandle:
        """A handle of a call the server answered at once, without a task (2026-07-28)."""
        return TaskHandle(_DoneDriver(result), "", str(prepared.params["name"]))


def _settled(status: Status) -> bool:
    # Polling pauses on input_required: the client has something to do.
    return status.terminal or status is Status.INPUT_REQUIRED


def _as_working(task: WireTask) -> WireTask:
    # After answering, the task's next state is the server's to say; until
    # then the tracker waits as if it were working (a legal step back).
    return attrs.evolve(task, status=Status.WORKING, input_requests=None)


class _HandleDriver:
    """A handle's link to its binding's runner, its call (for conversion) and its view.

    The view is the handle's own :class:`TaskTracker`: what ``status()``
    reports is the last legal observation (a hostile server cannot revive
    a task that ended). ``_lock`` guards it; no I/O happens under it.
    """

    __slots__ = ("_convert", "_lock", "_prepared", "_runner", "_tracker")

    def __init__(self, runner: TaskRunner, prepared: PreparedCall | None, convert: Convert) -> None:
        self._runner = runner
        self._prepared = prepared
        self._convert = convert
        self._lock = threading.Lock()
        self._tracker: TaskTracker | None = None

    def _deadline(self, timeout: float | None) -> float:
        budget = self._runner._st.definition.timeouts.request if timeout is None else timeout
        return now() + budget

    def _observe(self, task: WireTask) -> TaskTracker:
        with self._lock:
            if self._tracker is None:
                self._tracker = TaskTracker(task, binding=self._runner._binding)
            else:
                self._tracker.observe(task)
            return self._tracker

    def status(self, task_id: str, timeout: float | None) -> TaskStatus:
        task = self._runner.get(task_id, op="task_status", deadline=self._deadline(timeout))
        return to_status(self._observe(task).current)

    def result(self, task_id: str, timeout: float | None) -> ToolResult:
        deadline = self._deadline(timeout)
        first = self._runner.get(task_id, op="task_result", deadline=deadline)
        seen = self._observe(first)
        with self._lock:
            # A drive of its own (another thread may drive the same handle).
            tracker = TaskTracker(seen.current, binding=self._runner._binding)
        raw = self._runner.drive(
            tracker, op="task_result", deadline=deadline, cancel=None, cancel_on_exit=False
        )
        self._observe(tracker.current)
        return self._convert(self._prepared, raw)

    def cancel(self, task_id: str, timeout: float | None) -> None:
        self._runner.cancel(task_id, op="task_cancel", deadline=self._deadline(timeout))


class _DoneDriver:
    """A handle's driver when the server chose not to create a task: the result is here."""

    __slots__ = ("_result",)

    def __init__(self, result: ToolResult) -> None:
        self._result = result

    def status(self, task_id: str, timeout: float | None) -> TaskStatus:
        return TaskStatus(state=Status.COMPLETED)

    def result(self, task_id: str, timeout: float | None) -> ToolResult:
        return self._result

    def cancel(self, task_id: str, timeout: float | None) -> None:
        return None
