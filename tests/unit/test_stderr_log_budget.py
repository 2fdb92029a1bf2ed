"""Stderr lines on Python logging are rate-limited, and the lines left out are counted."""

from __future__ import annotations

import logging
import re

import pytest

from mcpclient._internal.transport.stdio_stderr import LOG_BURST, LOG_RATE, StderrRing

LOGGER = "mcpclient.server.flood"


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _ring(clock: Clock) -> StderrRing:
    return StderrRing(max_bytes=4096, max_log_bytes=1024, binding="flood", clock=clock)


def _lines(count: int, start: int = 0) -> bytes:
    return b"".join(b"line %d\n" % i for i in range(start, start + count))


def _split(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[int]]:
    records = [r for r in caplog.records if r.name == LOGGER]
    logged = [r.getMessage() for r in records if r.levelno == logging.INFO]
    left_out = []
    for r in records:
        if r.levelno == logging.WARNING:
            match = re.match(r"\((\d+) stderr lines not logged", r.getMessage())
            assert match, r.getMessage()
            left_out.append(int(match.group(1)))
    return logged, left_out


def test_a_flood_logs_the_burst_then_the_rate_and_counts_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    ring = _ring(clock)
    total = 200_000  # ~2.3 MB of lines at one instant
    data = _lines(total)
    for start in range(0, len(data), 8192):
        ring.feed(data[start : start + 8192])
    logged, left_out = _split(caplog)
    assert len(logged) == LOG_BURST
    assert logged[0] == "line 0" and logged[-1] == f"line {LOG_BURST - 1}"
    assert left_out == []  # reported before the next record, or at the end
    # One second later the rate allows LOG_RATE more; the count comes first.
    clock.t += 1.0
    ring.feed(_lines(500, start=total))
    logged, left_out = _split(caplog)
    assert left_out == [total - LOG_BURST]
    assert len(logged) == LOG_BURST + int(LOG_RATE)
    assert logged[LOG_BURST] == f"line {total}"
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert messages.index(logged[LOG_BURST]) == messages.index(logged[LOG_BURST - 1]) + 2
    # At EOF the rest is counted too: every line is logged or counted, once.
    clock.t += 0.5  # 50 lines more, but the count waits a second since the last one
    ring.feed(_lines(100, start=total + 500))
    logged, left_out = _split(caplog)
    assert left_out == [total - LOG_BURST]
    assert len(logged) == LOG_BURST + int(LOG_RATE) + int(LOG_RATE / 2)
    ring.feed(b"")
    logged, left_out = _split(caplog)
    assert left_out == [total - LOG_BURST, 600 - int(LOG_RATE * 1.5)]
    assert len(logged) + sum(left_out) == total + 600
    ring.flush_log()
    assert _split(caplog) == (logged, left_out)  # nothing twice


def test_a_quiet_server_loses_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    ring = _ring(clock)
    for second in range(5):
        clock.t += 1.0
        ring.feed(_lines(int(LOG_RATE), start=second * 1000))
    ring.feed(b"no newline")
    ring.flush_log()
    logged, left_out = _split(caplog)
    assert left_out == []
    assert len(logged) == 5 * int(LOG_RATE) + 1 and logged[-1] == "no newline"


def test_nothing_is_counted_when_nobody_listens(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    ring = _ring(Clock())
    ring.feed(_lines(5 * LOG_BURST))
    ring.feed(b"")
    assert [r for r in caplog.records if r.name == LOGGER] == []
