"""Tasks: long-running tool calls the server runs in the background.

A server that supports tasks (the 2025-11-25 experimental ``tasks``
capability, or the 2026-07-28 extension ``io.modelcontextprotocol/tasks``)
may answer a tool call with a task instead of its result. ``call_tool`` then
drives the task to completion inside the call's one deadline (and cancels it
on the wire when the deadline passes or the caller cancels);
``Client.start_task`` returns a :class:`TaskHandle` for a host that leaves
long work running; ``Client.resume_task(task_id)`` rebuilds one from a
persisted id and ``Client.list_tasks()`` lists a 2025-11-25 server's tasks.
Client-hosted tasks (a 2025-11-25 server running the client's sampling or
elicitation as a task) need no API: opting in to the tasks extension in
``Definition.extensions`` allows them.

Threads:
    None: a handle's methods run on their caller's thread.

Locks:
    None of its own (the handle's driver belongs to its binding).

Shutdown:
    A handle of a closed binding raises ``ShutdownError``; the server's task
    is not cancelled by closing.
"""

from __future__ import annotations

import enum
from typing import Any, Protocol

import attrs

from mcpclient._core import checks
from mcpclient.content import ToolResult

__all__ = ["TaskHandle", "TaskState", "TaskStatus"]


class TaskState(enum.Enum):
    """A task's status: ``working`` → ``input_required`` ↔ ``working`` → a terminal one."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """Whether the state never changes again (completed, failed, cancelled)."""
        return self in (TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELLED)

    def __str__(self) -> str:
        return self.value


def _optional_seconds(inst: Any, attr: Any, value: Any) -> None:
    checks.optional_finite_number(inst, attr, value)
    if value is not None and value < 0:
        raise checks.fail(inst, attr.name, f"must be >= 0 seconds, got {value!r}")


@attrs.frozen(kw_only=True)
class TaskStatus:
    """One observation of a task. Thread safety: immutable.

    Attributes:
        state: the task's status.
        message: the server's ``statusMessage`` (bounded; ``""`` when none).
        created_at, last_updated_at: the server's ISO 8601 stamps, as sent.
        ttl: seconds the server keeps the task after its creation (``None``:
            unlimited or unsaid).
        poll_interval: the server's suggested seconds between polls, or ``None``.
    """

    state: TaskState = attrs.field(validator=checks.instance_of(TaskState))
    message: str = attrs.field(default="", validator=checks.is_str)
    created_at: str = attrs.field(default="", validator=checks.is_str)
    last_updated_at: str = attrs.field(default="", validator=checks.is_str)
    ttl: float | None = attrs.field(default=None, validator=_optional_seconds)
    poll_interval: float | None = attrs.field(default=None, validator=_optional_seconds)

    @property
    def terminal(self) -> bool:
        """Whether the task is over."""
        return self.state.terminal


class _TaskDriver(Protocol):
    """What a :class:`TaskHandle` asks of its binding (internal)."""

    def status(self, task_id: str, timeout: float | None) -> TaskStatus: ...

    def result(self, task_id: str, timeout: float | None) -> ToolResult: ...

    def cancel(self, task_id: str, timeout: float | None) -> None: ...


class TaskHandle:
    """A task on the server, started by ``Client.start_task``.

    Thread safety: every method may be called from any thread. The handle
    talks to whatever connection its binding has at the time, so it
    survives a reconnect when the server's task does (a server that lost the
    task answers "not found": ``ToolUnavailableError``, ``not_found``).

    The task id may be a bearer secret: ``repr()`` does not show it.
    """

    __slots__ = ("_driver", "_task_id", "tool")

    def __init__(self, driver: _TaskDriver, task_id: str, tool: str) -> None:
        self._driver = driver
        self._task_id = task_id
        #: The raw name of the tool the task runs.
        self.tool = tool

    @property
    def task_id(self) -> str:
        """The server's id of the task (persist it to resume; keep it secret)."""
        return self._task_id

    def status(self, timeout: float | None = None) -> TaskStatus:
        """Ask the server for the task's current status (``tasks/get``).

        Raises:
            ToolUnavailableError: ``not_found``: the server no longer knows the task.
            DeadlineExceededError, ConnectionLostError, ProtocolError, ShutdownError.
        """
        return self._driver.status(self._task_id, timeout)

    def result(self, timeout: float | None = None) -> ToolResult:
        """Wait for the task to end and return the tool's result.

        Polls at the server's suggested interval within ``timeout`` seconds
        (``None``: the binding's request timeout). Running out of time leaves
        the task running (call :meth:`cancel` to stop it).

        Raises:
            DeadlineExceededError: ``timeout`` passed (the task goes on).
            RequestCancelledError: the task was cancelled.
            ProtocolError: the task failed with a protocol error.
            ToolUnavailableError: ``not_found``: the task expired or is unknown.
        """
        return self._driver.result(self._task_id, timeout)

    def cancel(self, timeout: float | None = None) -> None:
        """Ask the server to cancel the task (``tasks/cancel``); cooperative.

        Raises:
            ProtocolError: the server refused (e.g. the task is already over)
                or does not support cancelling tasks.
        """
        self._driver.cancel(self._task_id, timeout)

    def __repr__(self) -> str:
        return f"<mcpclient.TaskHandle tool={self.tool!r}>"
