"""Server notifications turned into bounded values for the host.

Server text that reaches a handler or an event is bounded and, for events,
has control characters replaced; URIs lose userinfo and query strings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpclient._core import jsonio
from mcpclient._core.canonical import compact
from mcpclient._core.checks import JSONText
from mcpclient._core.limits import bound, clean_text, utf8_len
from mcpclient.definition import LogLevel
from mcpclient.events import Event, ServerLog
from mcpclient.handlers import LogMessage

__all__ = ["log_delivery", "safe_uri"]

_log = logging.getLogger(__name__)


def safe_uri(uri: str) -> str:
    """A server-sent URI fit for an event: no userinfo, no query, bounded."""
    try:
        parts = urlsplit(uri)
        netloc = parts.hostname or ""
        if parts.port:
            netloc = f"{netloc}:{parts.port}"
        cleaned = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        cleaned = uri.split("?", 1)[0]
    return clean_text(cleaned, 1024)


def log_delivery(
    binding: str,
    params: dict[str, Any],
    max_bytes: int,
    log_handler: Callable[[LogMessage], None],
    event_handler: Callable[[Event], None] | None,
) -> Callable[[], None] | None:
    """What to run on the event lane for one ``notifications/message``, or ``None``."""
    try:
        level = LogLevel(str(params.get("level")))
    except ValueError:
        return None
    data = params.get("data")
    if isinstance(data, str):
        text = data
    elif data is None:
        text = ""
    else:
        try:
            text = jsonio.encode(data).decode("ascii")
        except (TypeError, ValueError):
            text = ""
    logger_name = params.get("logger")
    raw = _raw_data(binding, data, max_bytes)
    message = LogMessage(
        binding=binding,
        level=level,
        logger=clean_text(logger_name, 256) if isinstance(logger_name, str) else "",
        text=bound(text, max_bytes),
        data=raw,
    )
    event = ServerLog(
        binding=binding,
        level=level,
        logger=message.logger,
        text=clean_text(message.text, max_bytes),
        data=raw,
        at=time.time(),
    )

    def deliver() -> None:
        log_handler(message)
        if event_handler is not None:
            event_handler(event)

    return deliver


def _raw_data(binding: str, data: Any, max_bytes: int) -> JSONText | None:
    """A log's ``data`` as held JSON text, or ``None`` when absent or over ``max_bytes``."""
    if data is None:
        return None
    try:
        text = compact(data)
    except (TypeError, ValueError, RecursionError):
        return None
    # A str of n code points is at most 4n UTF-8 bytes: most need no measuring.
    if len(text) * 4 > max_bytes and utf8_len(text) > max_bytes:
        _log.warning(
            "binding %s: a server log's data (%d bytes of JSON) exceeds"
            " max_log_message_bytes (%d); its data is dropped, its text is kept bounded",
            binding,
            utf8_len(text),
            max_bytes,
        )
        return None
    return JSONText(text)
