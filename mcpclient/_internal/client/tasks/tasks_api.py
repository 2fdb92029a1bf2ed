"""The task methods of :class:`~mcpclient.Client` (a mixin: the facade stays thin).

Threads / Locks / Shutdown: none of its own; see :mod:`.tasks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpclient._internal.client.facade_part import FacadePart
from mcpclient.tasks import TaskHandle

__all__ = ["TaskMethods"]


class TaskMethods(FacadePart):
    """``Client.start_task``, ``Client.resume_task`` and ``Client.list_tasks``."""

    def start_task(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> TaskHandle:
        """Start a tool call as a task and return its :class:`~mcpclient.TaskHandle`.

        Returns once the server created the task (within ``timeout``); the
        task then runs on its own. Raises as :meth:`~mcpclient.Client.call_tool`,
        and ``ProtocolError`` (``unsupported_protocol``) when the server or
        the tool does not support tasks.
        """
        opts, deadline = self._begin("start_task", None, timeout, None, None)
        prepared = self._calls.prepare_tool_call(raw_name, arguments)
        return self._calls.start_task(prepared, opts, deadline)

    def resume_task(self, task_id: str) -> TaskHandle:
        """A handle of a task this binding did not start here (e.g. an id persisted earlier).

        Nothing is sent until the handle is used; an unknown id then raises
        ``ToolUnavailableError`` (``not_found``).
        """
        return self._calls.tasks.resume(task_id, self._calls.convert_tool)

    def list_tasks(self, *, timeout: float | None = None) -> list[TaskHandle]:
        """Handles of the server's tasks (2025-11-25 ``tasks/list``, every page).

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server lists no tasks.
        """
        _, deadline = self._begin("list_tasks", None, timeout, None, None)
        return self._calls.tasks.listed(deadline, self._calls.convert_tool)
