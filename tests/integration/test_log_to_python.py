"""``mcpclient.log_to_python``: server log messages land in Python logging.

Against the testing server (its ``log`` tool sends one ``notifications/message``),
in both eras, captured with pytest's ``caplog``.
"""

from __future__ import annotations

import json
import logging

import pytest

import mcpclient
from mcpclient import CallOpts, Handlers, LogLevel, connect, log_to_python
from tests.support.servers import definition
from tests.support.waiting import wait_until

# Every MCP severity and the Python level it becomes.
EXPECTED = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": 25,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def _records(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == name]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_every_level_is_forwarded_with_its_data_and_logger(
    caplog: pytest.LogCaptureFixture, era: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpclient.server")
    defn = definition("--era", era, name="logs", log_level=LogLevel.DEBUG)
    with connect(defn, Handlers(log=log_to_python())) as client:
        for level in EXPECTED:
            client.call_tool(
                "log",
                {"message": f"m-{level}", "level": level, "logger": "db", "data": {"n": level}},
                CallOpts(timeout=10),
            )
        assert wait_until(lambda: len(_records(caplog, "mcpclient.server.logs")) >= len(EXPECTED))
    records = _records(caplog, "mcpclient.server.logs")
    by_level = {r.mcp_level: r for r in records}  # type: ignore[attr-defined]
    assert set(by_level) == set(EXPECTED)
    for level, python_level in EXPECTED.items():
        record = by_level[level]
        assert record.levelno == python_level
        assert record.mcp_data == {"n": level}  # type: ignore[attr-defined]
        assert record.mcp_logger == "db"  # type: ignore[attr-defined]
        assert record.mcp_binding == "logs"  # type: ignore[attr-defined]
        assert json.loads(record.getMessage()) == {"n": level}  # data's JSON is the text
    assert by_level["notice"].levelname == "NOTICE"


def test_custom_logger_text_and_percent_signs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="app.mcp")
    defn = definition("--era", "legacy", name="pct", log_level=LogLevel.DEBUG)
    with connect(defn, Handlers(log=log_to_python("app.mcp"))) as client:
        client.call_tool("log", {"message": "100% %s done", "level": "warning"})
        assert wait_until(lambda: bool(_records(caplog, "app.mcp.pct")))
    (record,) = _records(caplog, "app.mcp.pct")
    # The server's text is the message as sent, never %-formatted.
    assert record.getMessage() == "100% %s done"
    assert record.levelno == logging.WARNING
    assert record.mcp_data == "100% %s done"  # type: ignore[attr-defined]
    assert record.mcp_logger == ""  # type: ignore[attr-defined]


def test_a_failing_logging_handler_never_reaches_the_binding(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Boom(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("boom")

        def handleError(self, record: logging.LogRecord) -> None:
            raise RuntimeError("handleError too")

    target = logging.getLogger("boom.server.b")
    boom = Boom()
    target.addHandler(boom)
    target.setLevel(logging.DEBUG)
    events: list[object] = []
    try:
        defn = definition("--era", "legacy", name="b", log_level=LogLevel.DEBUG)
        forward = log_to_python("boom.server")
        with connect(defn, Handlers(log=forward, event=events.append)) as client:
            client.call_tool("log", {"message": "x", "level": "error"})
            forward(
                mcpclient.LogMessage(binding="b", level=LogLevel.ERROR, text="direct", data=None)
            )
            # The binding still serves calls after the handler's failure.
            assert client.call_tool("echo", {"message": "ok"}).is_error is False
    finally:
        target.removeHandler(boom)
        target.setLevel(logging.NOTSET)


def test_an_empty_logger_name_is_refused() -> None:
    with pytest.raises(TypeError, match="non-empty"):
        log_to_python("")
