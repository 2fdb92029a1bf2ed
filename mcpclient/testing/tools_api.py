"""What a built-in tool of the test server sees, and what it returns.

Each tool runs on its own daemon thread and returns the ``CallToolResult`` to
send, or None when it answered (or decided not to answer) by itself. This
module holds what every tool module shares: the protocols of its core and
request, the result builder and the argument helpers. Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from .catalog import Catalog

__all__ = [
    "BadArgumentError",
    "Result",
    "Tool",
    "ToolChannel",
    "ToolCore",
    "ToolRequest",
    "float_arg",
    "int_arg",
    "text_result",
]

Result = dict[str, Any]


# What a tool sees of the core and of its request: protocols, so that the tool
# modules need not import core.py, which imports them (ServerCore and
# InboundRequest are checked against them where core.py calls a tool).


class ToolChannel(Protocol):
    """The request's channel (``core.Channel``), as the hostile tools use it."""

    def send(self, message: Any) -> None: ...
    def send_raw(self, chunks: Iterable[bytes]) -> None: ...
    def close_output(self) -> None: ...
    def write_stderr(self, data: bytes) -> None: ...
    def exit_process(self, code: int) -> None: ...


class ToolRequest(Protocol):
    """What a tool uses of its ``core.InboundRequest``."""

    @property
    def id(self) -> str | int: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def era(self) -> str: ...
    @property
    def version(self) -> str | None: ...
    @property
    def channel(self) -> ToolChannel: ...
    @property
    def cancelled(self) -> threading.Event: ...
    @property
    def progress_token(self) -> str | int | None: ...
    def respond(
        self, result: dict[str, Any], *, force: bool = False, duplicates: int = 0
    ) -> None: ...
    def respond_raw(self, result: Any) -> None: ...
    def fail(self, code: int, message: str, data: Any = None) -> None: ...
    def drop(self) -> None: ...
    def sleep(self, seconds: float) -> bool: ...
    def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...
    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool: ...
    def log(
        self, level: str, data: Any, logger: str | None = None, *, force: bool = False
    ) -> bool: ...


class _VersionRejects(Protocol):
    def set(
        self, count: int, supported: Iterable[str] | None = None, method: str | None = None
    ) -> None: ...


class _ToolConfig(Protocol):
    @property
    def version_rejects(self) -> _VersionRejects: ...


class ToolCore(Protocol):
    """What a tool uses of the ``core.ServerCore`` running it."""

    @property
    def catalog(self) -> Catalog: ...
    @property
    def config(self) -> _ToolConfig: ...
    @property
    def transport_actions(self) -> Mapping[str, Callable[..., Result | None]]: ...
    def notify_list_changed(self, family: str) -> None: ...
    def notify_resource_updated(self, uri: str) -> None: ...
    def request_client(
        self, request: Any, method: str, params: Any = None, timeout: float | None = None
    ) -> dict[str, Any] | None: ...
    def request_client_many(
        self, request: Any, method: str, params: Any, count: int, timeout: float | None = None
    ) -> list[dict[str, Any] | None]: ...
    def script_result(self, method: str, result: Any) -> None: ...
    def set_fail_lists(self, count: int) -> None: ...
    def set_list_delay(self, seconds: float) -> None: ...
    def set_missing_lists(self, families: Iterable[str]) -> None: ...


Tool = Callable[[ToolCore, ToolRequest, dict[str, Any]], "Result | None"]


def text_result(text: str, *, is_error: bool = False, structured: Any = None) -> Result:
    """Build a ``CallToolResult`` with one text block."""
    result: Result = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result


def int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise BadArgumentError(f"{name} must be a number")
    return int(value)


def float_arg(args: dict[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise BadArgumentError(f"{name} must be a number")
    return float(value)


class BadArgumentError(ValueError):
    """A tool argument the tool cannot use (the tool answers with an error result)."""
