"""Progress reports: wire notifications to ``Progress`` values and events."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcpclient._core.limits import clean_text
from mcpclient.events import Event, RequestProgress
from mcpclient.handlers import Progress

__all__ = ["progress_adapter"]


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) < 1e308:
        return 0.0
    return float(value)


def progress_adapter(
    binding: str,
    callback: Callable[[Progress], None] | None,
    event_handler: Callable[[Event], None] | None,
) -> Callable[[dict[str, Any]], None] | None:
    """What the session calls (on the event lane) for each progress notification.

    ``None`` when the caller asked for no progress: then no progress token is
    attached, and the server sends none.
    """
    if callback is None:
        return None

    def on_progress(params: dict[str, Any]) -> None:
        progress = params.get("progress")
        if isinstance(progress, bool) or not isinstance(progress, int | float):
            return
        message = params.get("message")
        report = Progress(
            binding=binding,
            progress=_number(progress),
            total=_number(params.get("total")),
            message=clean_text(message, 1024) if isinstance(message, str) else "",
        )
        callback(report)
        if event_handler is not None:
            event_handler(
                RequestProgress(
                    binding=binding,
                    progress=report.progress,
                    total=report.total,
                    message=report.message,
                    at=time.time(),
                )
            )

    return on_progress
