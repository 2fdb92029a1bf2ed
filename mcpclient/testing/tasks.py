"""The testing server's tasks: the 2026-07-28 extension form (SEP-2663).

With ``--extension io.modelcontextprotocol/tasks`` the server declares the
extension and lists the ``task`` tool. A ``tools/call`` of it from a request
that declared the extension (``_meta[clientCapabilities].extensions``) is
answered with a flat ``CreateTaskResult`` (``resultType: "task"``); one that
did not is answered ``-32021`` with ``data.requiredCapabilities``. The task's
life is scripted by the tool's ``behavior`` argument (every state the spec
has, and the failures a client must survive):

========================  =====================================================
``complete``              ``working`` for ``seconds``, then ``completed`` (text
                          ``task done: <label>``)
``is_error``              ``completed`` with an ``isError: true`` tool result
``fail``                  ``failed`` with ``error`` ``{-32603, "the work failed"}``
``server_cancel``         ``cancelled`` by the server after ``seconds``
``never``                 ``working`` forever (the client's deadline must hold)
``expire``                forgotten ``ttl_ms`` after creation (``tasks/get``
                          answers ``-32602``)
``input``                 ``input_required`` after ``seconds`` with one
                          elicitation (key ``name``); ``tasks/update`` with it
                          resumes ``working``, ``completed`` ``seconds`` later
                          with ``hello <name>``
``revive``                hostile: ``completed``, then every later
                          ``tasks/get`` claims ``working`` again
``immediate``             no task: the plain result at once (the server's choice)
========================  =====================================================

``poll_ms`` (default 100) is the suggested ``pollIntervalMs``. ``tasks/get``,
``tasks/update`` and ``tasks/cancel`` need the declaration too (``-32021``);
an unknown or expired ``taskId`` is ``-32602``. A task's state is computed
from the clock when it is read: no thread runs it. The id encodes the task's
script, so a restarted server still knows it (a client's cancel or answer
given to the earlier process is lost with it).

Threads:
    None of its own (handlers run on the core's reader or call threads).

Locks:
    ``_lock`` guards the task table.

Shutdown:
    Nothing to stop.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from datetime import UTC, datetime
from typing import Any

from .config import CLIENT_CAPABILITIES_KEY, INVALID_PARAMS
from .inbound import InboundRequest

__all__ = ["MISSING_CAPABILITY", "TASKS_EXTENSION", "TASK_TOOL", "TaskStore"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = -32021
BEHAVIORS = (
    "complete",
    "is_error",
    "fail",
    "server_cancel",
    "never",
    "expire",
    "input",
    "revive",
    "immediate",
)

#: The ``task`` tool (listed with the extension declared).
TASK_TOOL: dict[str, Any] = {
    "name": "task",
    "description": "Runs as a task (tasks extension); its life is scripted by 'behavior'.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "behavior": {"type": "string", "enum": list(BEHAVIORS)},
            "seconds": {"type": "number", "minimum": 0},
            "poll_ms": {"type": "integer", "minimum": 0},
            "ttl_ms": {"type": "integer", "minimum": 1},
            "label": {"type": "string"},
        },
        "required": ["behavior"],
    },
}

_ELICITATION = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _rebuild(task_id: str) -> _Task | None:
    """The task an id names, rebuilt from its script (None: not one of ours)."""
    encoded, _, nonce = task_id.partition(".")
    try:
        script = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
        args = {
            "behavior": script["b"],
            "seconds": script["s"],
            "poll_ms": script["p"],
            "ttl_ms": script["t"],
            "label": script["l"],
        }
        task = _Task(args, created=float(script["c"]))
    except (ValueError, KeyError, TypeError):
        return None
    if task.behavior not in BEHAVIORS or not nonce:
        return None
    task.task_id = task_id
    return task


def declared(request: InboundRequest) -> bool:
    """Whether the request declared the tasks extension in its client capabilities."""
    caps = request.meta.get(CLIENT_CAPABILITIES_KEY)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


class _Task:
    __slots__ = (
        "answered_at",
        "behavior",
        "cancelled_at",
        "created",
        "label",
        "name",
        "poll_ms",
        "reported_done",
        "seconds",
        "task_id",
        "ttl_ms",
        "updated",
    )

    def __init__(self, args: dict[str, Any], created: float | None = None) -> None:
        self.behavior = str(args["behavior"])
        self.seconds = float(args.get("seconds", 0.3))
        self.poll_ms = int(args.get("poll_ms", 100))
        ttl = args.get("ttl_ms")
        self.ttl_ms: int | None = int(ttl) if ttl is not None else None
        self.label = str(args.get("label", ""))
        self.created = time.time() if created is None else created
        self.updated = self.created
        # The id carries the task's script (and a nonce for entropy): a
        # restarted server rebuilds the task from it, so a task outlives the
        # process (as a stateless, load-balanced deployment's would).
        script = {
            "b": self.behavior,
            "s": self.seconds,
            "p": self.poll_ms,
            "t": self.ttl_ms,
            "l": self.label,
            "c": self.created,
        }
        encoded = base64.urlsafe_b64encode(json.dumps(script).encode()).decode().rstrip("=")
        self.task_id = f"{encoded}.{secrets.token_urlsafe(12)}"
        self.cancelled_at: float | None = None
        self.answered_at: float | None = None
        self.name = ""
        self.reported_done = False


class TaskStore:
    """The tasks of one server core. Thread safety: any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[str, _Task] = {}
        #: Every method/taskId this store answered, for tests (``tasks/cancel`` seen...).
        self.seen: list[tuple[str, str]] = []

    # -- the tool --------------------------------------------------------------

    def call(self, request: InboundRequest, args: dict[str, Any]) -> None:
        """``tools/call`` of the ``task`` tool."""
        if request.era != "modern":
            request.respond(_text("the task tool runs in the modern era only", True))
            return
        if not declared(request):
            request.fail(
                MISSING_CAPABILITY,
                "this tool runs only as a task: declare the tasks extension",
                {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )
            return
        if args.get("behavior") not in BEHAVIORS:
            request.respond(_text(f"unknown behavior {args.get('behavior')!r}", True))
            return
        if args["behavior"] == "immediate":
            request.respond(_text("done at once"))
            return
        task = _Task(args)
        with self._lock:
            self._tasks[task.task_id] = task
            view = self._view(task, time.time())
        request.respond({"resultType": "task", **view})

    # -- tasks/* ----------------------------------------------------------------

    def _lookup(self, request: InboundRequest) -> _Task | None:
        if not declared(request):
            request.fail(
                MISSING_CAPABILITY,
                "tasks/* needs the tasks extension declared on the request",
                {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )
            return None
        task_id = request.params.get("taskId")
        with self._lock:
            self.seen.append((request.method, str(task_id)))
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None and isinstance(task_id, str):
                task = _rebuild(task_id)  # created by an earlier process of this server
                if task is not None:
                    self._tasks[task_id] = task
            if task is not None and self._expired(task, time.time()):
                del self._tasks[task.task_id]
                task = None
        if task is None:
            request.fail(INVALID_PARAMS, "task not found or expired")
        return task

    def get(self, request: InboundRequest) -> None:
        """``tasks/get``: the ``DetailedTask`` as of now."""
        task = self._lookup(request)
        if task is not None:
            with self._lock:
                view = self._view(task, time.time(), detailed=True)
            request.respond(view)

    def cancel(self, request: InboundRequest) -> None:
        """``tasks/cancel``: a task not yet over becomes ``cancelled``; an empty ack."""
        task = self._lookup(request)
        if task is not None:
            with self._lock:
                if self._status(task, time.time()) in ("working", "input_required"):
                    task.cancelled_at = time.time()
            request.respond({})

    def update(self, request: InboundRequest) -> None:
        """``tasks/update``: the ``name`` elicitation's answer resumes an ``input`` task."""
        task = self._lookup(request)
        if task is None:
            return
        responses = request.params.get("inputResponses")
        answer = responses.get("name") if isinstance(responses, dict) else None
        with self._lock:
            if (
                isinstance(answer, dict)
                and task.answered_at is None
                and self._status(task, time.time()) == "input_required"
            ):
                content = answer.get("content")
                name = content.get("name") if isinstance(content, dict) else None
                task.name = name if isinstance(name, str) else f"({answer.get('action')})"
                task.answered_at = time.time()
        request.respond({})

    def cancelled(self) -> int:
        """How many tasks were cancelled by a client's ``tasks/cancel``."""
        with self._lock:
            return sum(1 for t in self._tasks.values() if t.cancelled_at is not None)

    # -- the clock-driven life ------------------------------------------------

    def _expired(self, task: _Task, now: float) -> bool:
        return task.ttl_ms is not None and (now - task.created) * 1000 > task.ttl_ms

    def _status(self, task: _Task, now: float) -> str:
        if task.cancelled_at is not None:
            return "cancelled"
        due = now - task.created >= task.seconds
        behavior = task.behavior
        if behavior in ("never", "expire") or not due:
            return "working"
        if behavior == "server_cancel":
            return "cancelled"
        if behavior == "fail":
            return "failed"
        if behavior == "input":
            if task.answered_at is None:
                return "input_required"
            return "completed" if now - task.answered_at >= task.seconds else "working"
        if behavior == "revive" and task.reported_done:
            return "working"  # hostile: a completed task claims to run again
        return "completed"

    def _view(self, task: _Task, now: float, *, detailed: bool = False) -> dict[str, Any]:
        status = self._status(task, now)
        view: dict[str, Any] = {
            "taskId": task.task_id,
            "status": status,
            "createdAt": _stamp(task.created),
            "lastUpdatedAt": _stamp(now),
            "ttlMs": task.ttl_ms,
            "pollIntervalMs": task.poll_ms,
        }
        if not detailed:
            return view
        view["resultType"] = "complete"
        if status == "completed":
            if task.behavior == "revive":
                task.reported_done = True
            view["result"] = self._result(task)
        elif status == "failed":
            view["statusMessage"] = "the work failed"
            view["error"] = {"code": -32603, "message": "the work failed"}
        elif status == "input_required":
            view["statusMessage"] = "waiting for a name"
            view["inputRequests"] = {"name": _ELICITATION}
        return view

    def _result(self, task: _Task) -> dict[str, Any]:
        if task.behavior == "is_error":
            return _text("the tool failed", True)
        if task.behavior == "input":
            return _text(f"hello {task.name}")
        return _text(f"task done: {task.label}")


def _text(text: str, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
