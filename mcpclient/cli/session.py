"""One command's connection: the deadline, the spinner, and Ctrl-C.

The command has one deadline (``--timeout`` seconds from its start, or the
library's budgets without it). The first Ctrl-C cancels through a
:class:`~mcpclient.CancelToken`, so the call in flight is cancelled on the
wire (``notifications/cancelled``) and the command exits 130 once the
library has let go of it; a second Ctrl-C raises ``KeyboardInterrupt`` at once.

Threads:
    None of its own (the spinner's is in ``output``). The SIGINT handler runs
    on the main thread between its waits.

Locks:
    None.

Shutdown:
    Leaving the ``with`` block closes the client and puts the previous
    SIGINT handler back.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

import mcpclient
from mcpclient.cli.output import Output
from mcpclient.cli.target import Target

__all__ = ["Interrupt", "Session"]


class Interrupt:
    """Ctrl-C as a cancel token: the first press cancels, the second raises.

    Use as a context manager around the work; off the main thread (where no
    signal handler can be installed) it only holds the token.
    """

    def __init__(self) -> None:
        self.token = mcpclient.CancelToken()
        self._previous: Any = None
        self._installed = False

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C was pressed."""
        return self.token.cancelled

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.token.cancelled:
            raise KeyboardInterrupt
        self.token.cancel("interrupted (Ctrl-C)")

    def __enter__(self) -> Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False


class Session:
    """A connected client for one command, within the command's deadline.

    Example:
        >>> with Session(target, out, timeout=10) as session:   # doctest: +SKIP
        ...     session.client.call_tool("echo", {"message": "hi"}, session.opts())
    """

    def __init__(
        self,
        target: Target,
        out: Output,
        *,
        timeout: float | None,
        interrupt: Interrupt,
        handlers: mcpclient.Handlers | None = None,
    ) -> None:
        self.target = target
        self.out = out
        self.interrupt = interrupt
        self.handlers = handlers
        #: The command's absolute deadline (``time.monotonic()``), or None.
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self._client: mcpclient.Client | None = None

    @property
    def client(self) -> mcpclient.Client:
        """The connected client."""
        assert self._client is not None, "use Session as a context manager"
        return self._client

    def remaining(self) -> float | None:
        """Seconds left before the deadline (at least a sliver), or None."""
        if self.deadline is None:
            return None
        return max(self.deadline - time.monotonic(), 0.001)

    def opts(
        self,
        progress: Callable[[mcpclient.Progress], None] | None = None,
        *,
        idle_timeout: float | None = None,
    ) -> mcpclient.CallOpts:
        """Options for one call: the command's deadline, Ctrl-C, ``progress`` and idleness."""
        return mcpclient.CallOpts(
            deadline=self.deadline,
            cancel=self.interrupt.token,
            progress=progress,
            idle_timeout=idle_timeout,
        )

    def __enter__(self) -> Session:
        with self.out.spinner(f"connecting to {self.target.display}"):
            self._client = mcpclient.connect(
                self.target.definition,
                self.handlers,
                timeout=self.remaining(),
                cancel=self.interrupt.token,
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
