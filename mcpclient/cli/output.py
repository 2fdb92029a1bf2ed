"""What the command writes: plain lines when piped, colors and live status on a terminal.

Results go to stdout; the spinner (while connecting) and the progress bar (a
call that reports progress) go to stderr, and only when stderr is a terminal.
Piped, every line is plain text with no control character at all: server
text is scrubbed (:func:`scrub`) on a terminal too, so a server cannot move
the cursor or retitle the window. Colors follow ``NO_COLOR``
(https://no-color.org: any non-empty value turns them off) and ``TERM=dumb``.

Threads:
    ``mcpclient-cli-spinner``: animates the spinner while :meth:`Output.spinner`
    is active; stopped and joined when the block ends. Progress reports arrive
    on library threads.

Locks:
    ``Output._lock`` serializes every write to stderr's status line (spinner,
    progress bar, and the plain lines that must first clear it).

Shutdown:
    :meth:`Output.spinner` joins its thread on exit; :meth:`Output.done`
    clears the status line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import TextIO

__all__ = ["Output", "library_warnings", "scrub", "wants_color"]

# C0 controls but tab and newline, DEL, C1 controls; also the bidi overrides and
# isolates, which reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_SPIN = "|/-\\"
_BAR = 24

_COLORS = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def scrub(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters shown as ``\\xNN`` (newlines kept unless ``one_line``)."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def wants_color(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether to color ``stream``: a terminal, ``NO_COLOR`` unset or empty, not ``TERM=dumb``."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Output:
    """The command's writer.

    Thread safety: :meth:`line`, :meth:`progress` and :meth:`note` may be
    called from any thread.
    """

    def __init__(
        self,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        json_mode: bool = False,
        quiet: bool = False,
    ) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        env = os.environ if environ is None else environ
        self.json_mode = json_mode
        self.quiet = quiet
        self.color = wants_color(self.stdout, env) and not json_mode
        self.err_color = wants_color(self.stderr, env)
        #: stderr is a terminal: the spinner and the progress bar are drawn.
        self.live = _isatty(self.stderr) and env.get("TERM") != "dumb" and not quiet
        self._lock = threading.Lock()
        self._status = False  # a status line is drawn on stderr and must be cleared

    # -- results (stdout) -------------------------------------------------

    def paint(self, text: str, style: str) -> str:
        """``text`` in ``style`` (a key of the color table) when stdout is colored."""
        if not self.color or style not in _COLORS:
            return text
        return f"\x1b[{_COLORS[style]}m{text}\x1b[0m"

    def line(self, text: str = "") -> None:
        """One line of the result on stdout (``text`` already scrubbed and painted)."""
        with self._lock:
            self._clear_locked()
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def document(self, text: str) -> None:
        """The ``--json`` document (or one NDJSON line) on stdout."""
        self.line(text)

    # -- diagnostics and live status (stderr) -------------------------------

    def note(self, text: str, style: str = "") -> None:
        """A diagnostic line on stderr (not in ``--json`` mode unless it is an error)."""
        if self.quiet:
            return
        if self.err_color and style in _COLORS:
            text = f"\x1b[{_COLORS[style]}m{text}\x1b[0m"
        with self._lock:
            self._clear_locked()
            self.stderr.write(text + "\n")
            self.stderr.flush()

    def error(self, text: str) -> None:
        """An error line on stderr (shown even with ``--quiet``)."""
        if self.err_color:
            text = f"\x1b[{_COLORS['red']}m{text}\x1b[0m"
        with self._lock:
            self._clear_locked()
            self.stderr.write(text + "\n")
            self.stderr.flush()

    def _draw_locked(self, text: str) -> None:
        self.stderr.write("\r\x1b[2K" + text)
        self.stderr.flush()
        self._status = True

    def _clear_locked(self) -> None:
        if self._status:
            self.stderr.write("\r\x1b[2K")
            self.stderr.flush()
            self._status = False

    def done(self) -> None:
        """Clear the status line, if one is drawn."""
        with self._lock:
            self._clear_locked()

    def progress(self, progress: float, total: float, message: str) -> None:
        """Show a progress report: a bar on a terminal, a plain line when piped."""
        message = scrub(message, one_line=True)
        if self.live:
            with self._lock:
                self._draw_locked(progress_bar(progress, total, message))
        elif not self.json_mode and not self.quiet:
            self.note(progress_line(progress, total, message))

    @contextlib.contextmanager
    def spinner(self, text: str) -> Iterator[None]:
        """Animate ``text`` on stderr while the block runs (on a terminal only)."""
        if not self.live:
            yield
            return
        stop = threading.Event()

        def spin() -> None:
            frame = 0
            while True:
                with self._lock:
                    self._draw_locked(f"{_SPIN[frame % len(_SPIN)]} {text}")
                frame += 1
                if stop.wait(0.1):
                    return

        thread = threading.Thread(target=spin, name="mcpclient-cli-spinner", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.done()


def _number(value: float) -> str:
    return f"{value:g}"


def progress_line(progress: float, total: float, message: str) -> str:
    """``progress 2/3 message``: the plain form."""
    amount = f"{_number(progress)}/{_number(total)}" if total else _number(progress)
    return f"progress {amount}{' ' + message if message else ''}"


def progress_bar(progress: float, total: float, message: str) -> str:
    """``[#########-------]  50% message`` (a count when the server gave no total)."""
    if total > 0:
        share = min(max(progress / total, 0.0), 1.0)
        filled = round(share * _BAR)
        bar = "#" * filled + "-" * (_BAR - filled)
        head = f"[{bar}] {share * 100:3.0f}%"
    else:
        head = f"[{'?' * 3}] {_number(progress)}"
    return f"{head} {message}".rstrip()[:200]


class _ToOutput(logging.Handler):
    """Shows the library's warnings as notes (scrubbed): the CLI must not hide them."""

    def __init__(self, out: Output) -> None:
        super().__init__(logging.WARNING)
        self._out = out

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed record must not break the command
            text = str(record.msg)
        self._out.note(f"warning: {scrub(text, one_line=True)}", "yellow")


@contextlib.contextmanager
def library_warnings(out: Output) -> Iterator[None]:
    """While the block runs, the ``mcpclient`` logger's warnings go to stderr as notes.

    ``--quiet`` hides them as it hides every note.
    """
    logger = logging.getLogger("mcpclient")
    handler = _ToOutput(out)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
