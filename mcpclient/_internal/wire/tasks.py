"""Tasks on the wire, both forms: JSON <-> :class:`WireTask`.

The 2025-11-25 form (SEP-1686, experimental core) nests the task in a
``CreateTaskResult`` (``{"task": {...}}``) and names its timings ``ttl`` and
``pollInterval``; the 2026-07-28 extension (``io.modelcontextprotocol/tasks``,
SEP-2663) is flat (``resultType: "task"`` next to the task's fields), names
them ``ttlMs`` and ``pollIntervalMs``, and inlines the outcome in
``tasks/get`` (``result`` when completed, ``error`` when failed,
``inputRequests`` when input is required).

Parsing is strict about what the client relies on (a string ``taskId``, a
known ``status``) and lenient about the rest: a malformed timing or message
is dropped, never fatal. Everything kept is bounded. A refusal raises
:class:`TaskWireError` with a message that never carries the task id (task
ids may be bearer secrets).

Thread safety: pure functions over immutable values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from mcpclient._core.limits import bound
from mcpclient.definition import TASKS_EXTENSION
from mcpclient.tasks import TaskState

__all__ = [
    "EXTENSION",
    "RELATED_TASK",
    "TASKS_VERSION",
    "ServerTasks",
    "Status",
    "TaskWireError",
    "WireTask",
    "cancel_params",
    "create_params",
    "get_params",
    "hosted_capability",
    "is_create_result",
    "parse_create",
    "parse_list",
    "parse_task",
    "related_task",
    "server_tasks",
    "tool_task_support",
]

#: The 2026-07-28 extension's identifier.
EXTENSION = TASKS_EXTENSION
#: The one legacy version with tasks (the experimental core form).
TASKS_VERSION = "2025-11-25"
#: The ``_meta`` key tying a message to a task (2025-11-25).
RELATED_TASK = "io.modelcontextprotocol/related-task"

_MAX_ID = 512
_MAX_MESSAGE = 1024
_MAX_STAMP = 64
_MAX_LIST = 1000


class TaskWireError(ValueError):
    """A task message the client cannot use (the message never names the task id)."""


#: A task status (the public enum: the spec's five values).
Status = TaskState


@attrs.frozen(kw_only=True)
class WireTask:
    """One task as a server reported it (either form). Thread safety: immutable.

    ``result``/``error``/``input_requests``: the 2026-07-28 ``DetailedTask``
    payload for its status (``None`` otherwise and always in the 2025-11-25 form).
    """

    task_id: str
    status: Status
    status_message: str = ""
    created_at: str = ""
    last_updated_at: str = ""
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


def _millis(raw: Any) -> int | None:
    # A negative, fractional-NaN or absurd value is dropped (lenient), not fatal.
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    if not math.isfinite(raw) or raw < 0 or raw > 10**12:
        return None
    return int(raw)


def _text(raw: Any, limit: int) -> str:
    return bound(raw, limit) if isinstance(raw, str) else ""


def parse_task(raw: Any, *, modern: bool, detailed: bool = True) -> WireTask:
    """A ``Task`` (2025-11-25) or ``DetailedTask`` (2026-07-28) object.

    ``detailed`` False (a 2026-07-28 ``CreateTaskResult``): a terminal status
    need not carry its payload (a ``tasks/get`` fetches it).

    Raises:
        TaskWireError: not an object, no string ``taskId``, an unknown ``status``.
    """
    if not isinstance(raw, Mapping):
        raise TaskWireError("a task must be a JSON object")
    task_id = raw.get("taskId")
    if not isinstance(task_id, str) or not task_id or len(task_id) > _MAX_ID:
        raise TaskWireError("a task needs a non-empty string taskId (at most 512 characters)")
    try:
        status = Status(raw.get("status"))
    except ValueError:
        raise TaskWireError(
            f"a task has an unknown status {bound(str(raw.get('status')), 40)!r}"
        ) from None
    ttl_key, poll_key = ("ttlMs", "pollIntervalMs") if modern else ("ttl", "pollInterval")
    result = error = inputs = None
    if modern:
        if status is Status.COMPLETED:
            result = raw.get("result")
            if not isinstance(result, dict):
                if detailed or result is not None:
                    raise TaskWireError("a completed task's result must be a JSON object")
                result = None
        elif status is Status.FAILED:
            error = raw.get("error")
            error = dict(error) if isinstance(error, Mapping) else None
        elif status is Status.INPUT_REQUIRED:
            inputs = raw.get("inputRequests")
            inputs = dict(inputs) if isinstance(inputs, Mapping) else None
    return WireTask(
        task_id=task_id,
        status=status,
        status_message=_text(raw.get("statusMessage"), _MAX_MESSAGE),
        created_at=_text(raw.get("createdAt"), _MAX_STAMP),
        last_updated_at=_text(raw.get("lastUpdatedAt"), _MAX_STAMP),
        ttl_ms=_millis(raw.get(ttl_key)),
        poll_interval_ms=_millis(raw.get(poll_key)),
        result=result,
        error=error,
        input_requests=inputs,
    )


def is_create_result(result: Any, *, modern: bool) -> bool:
    """Whether a ``tools/call`` answer is a ``CreateTaskResult`` rather than the result."""
    if not isinstance(result, Mapping):
        return False
    if modern:
        return result.get("resultType") == "task"
    return isinstance(result.get("task"), Mapping) and "content" not in result


def parse_create(result: Any, *, modern: bool) -> WireTask:
    """The task of a ``CreateTaskResult`` (nested in 2025-11-25, flat in 2026-07-28).

    Raises:
        TaskWireError: as :func:`parse_task`.
    """
    if not modern:
        if not isinstance(result, Mapping):
            raise TaskWireError("a CreateTaskResult must be a JSON object")
        return parse_task(result.get("task"), modern=False)
    return parse_task(result, modern=True, detailed=False)


def parse_list(result: Any) -> tuple[list[WireTask], str | None]:
    """A 2025-11-25 ``tasks/list`` page: its valid tasks and ``nextCursor``.

    A malformed entry is skipped (one bad task does not hide the others).

    Raises:
        TaskWireError: the page is not an object or ``tasks`` is not a list.
    """
    if not isinstance(result, Mapping) or not isinstance(result.get("tasks"), list):
        raise TaskWireError("a tasks/list result needs a tasks array")
    tasks: list[WireTask] = []
    for raw in result["tasks"][:_MAX_LIST]:
        try:
            tasks.append(parse_task(raw, modern=False))
        except TaskWireError:
            continue
    cursor = result.get("nextCursor")
    return tasks, cursor if isinstance(cursor, str) and cursor else None


def create_params(params: Mapping[str, Any], ttl_ms: int | None) -> dict[str, Any]:
    """2025-11-25: ``params`` of a request, augmented with ``task`` (and its ``ttl``)."""
    out = dict(params)
    out["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
    return out


def get_params(task_id: str) -> dict[str, Any]:
    """The params of ``tasks/get``, ``tasks/result`` and ``tasks/cancel``."""
    return {"taskId": task_id}


cancel_params = get_params


@attrs.frozen(kw_only=True)
class ServerTasks:
    """What a 2025-11-25 server's ``capabilities.tasks`` declares."""

    tools_call: bool = False
    cancel: bool = False
    list: bool = False


def server_tasks(raw_capabilities: Any, *, modern: bool) -> ServerTasks:
    """What a server's capabilities say of tasks.

    2025-11-25: its ``tasks`` capability. 2026-07-28: the extension in
    ``capabilities.extensions`` (which covers ``tools/call`` and
    ``tasks/cancel``; there is no ``tasks/list``).
    """
    if not isinstance(raw_capabilities, Mapping):
        return ServerTasks()
    if modern:
        extensions = raw_capabilities.get("extensions")
        declared = isinstance(extensions, Mapping) and isinstance(
            extensions.get(EXTENSION), Mapping
        )
        return ServerTasks(tools_call=declared, cancel=declared)
    tasks = raw_capabilities.get("tasks")
    if not isinstance(tasks, Mapping):
        return ServerTasks()
    requests = tasks.get("requests")
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return ServerTasks(
        tools_call=isinstance(tools, Mapping) and isinstance(tools.get("call"), Mapping),
        cancel=isinstance(tasks.get("cancel"), Mapping),
        list=isinstance(tasks.get("list"), Mapping),
    )


def tool_task_support(execution: Any) -> str:
    """A tool's ``execution.taskSupport``: ``required``, ``optional`` or ``forbidden``."""
    value = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return value if value in ("required", "optional") else "forbidden"


def related_task(task_id: str) -> dict[str, Any]:
    """The ``_meta`` entry tying a message to ``task_id``."""
    return {RELATED_TASK: {"taskId": task_id}}


def hosted_capability(elicitation: bool, sampling: bool) -> dict[str, Any] | None:
    """The ``capabilities.tasks`` a 2025-11-25 client declares to host tasks (None: nothing)."""
    requests: dict[str, Any] = {}
    if elicitation:
        requests["elicitation"] = {"create": {}}
    if sampling:
        requests["sampling"] = {"createMessage": {}}
    if not requests:
        return None
    return {"list": {}, "cancel": {}, "requests": requests}


#: The parameter naming a task in ``tasks/*`` requests and task notifications.
TASK_ID_KEY = "taskId"


def task_id_of(params: Mapping[str, Any]) -> Any:
    """The ``taskId`` of a ``tasks/*`` request or a task notification, as sent (unchecked)."""
    return params.get(TASK_ID_KEY)


def update_params(task_id: str, responses: Mapping[str, Any]) -> dict[str, Any]:
    """The params of a 2026-07-28 ``tasks/update`` answering a task's input requests."""
    return {TASK_ID_KEY: task_id, "inputResponses": responses}


def hosted_task(
    task_id: str, status: str, *, created: str, updated: str, ttl_ms: int, poll_ms: int
) -> dict[str, Any]:
    """A client-hosted task (2025-11-25) as the server reads it in ``tasks/get``."""
    return {
        TASK_ID_KEY: task_id,
        "status": status,
        "createdAt": created,
        "lastUpdatedAt": updated,
        "ttl": ttl_ms,
        "pollInterval": poll_ms,
    }


def related_task_of(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The related-task ``_meta`` entry of a server request (2025-11-25 tasks), or None."""
    meta = params.get("_meta")
    related = meta.get(RELATED_TASK) if isinstance(meta, Mapping) else None
    if isinstance(related, Mapping) and isinstance(related.get(TASK_ID_KEY), str):
        return related_task(related[TASK_ID_KEY][:_MAX_ID])
    return None
