"""Per-call options and cancellation.

A call has exactly one absolute deadline, fixed when it starts. Nothing the
server does moves it: not progress, not a multi round-trip round, not a
re-initialization after a lost session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import attrs

from mcpclient._core import checks
from mcpclient._core.deadline import now

__all__ = ["CallOpts", "CancelToken", "Progress"]

_log = logging.getLogger(__name__)


class CancelToken:
    """A cancellation flag that another thread may set, with callbacks.

    Unlike a plain ``threading.Event``, cancelling runs the registered
    callbacks at once, which is how a cancel reaches the wire without anyone
    polling.

    Example:
        >>> token = CancelToken()
        >>> opts = CallOpts(cancel=token)   # another thread: token.cancel()

    Thread safety: every method may be called from any thread. Callbacks run
    on the cancelling thread (or at once, on the registering thread, if the
    token is already cancelled); an exception in a callback is logged and
    does not stop the others.
    """

    __slots__ = ("_callbacks", "_event", "_lock", "_next_handle", "_reason")

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _callbacks, _next_handle, _reason
        self._event = threading.Event()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next_handle = 0
        self._reason = ""

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` has been called."""
        return self._event.is_set()

    @property
    def reason(self) -> str:
        """The reason given to :meth:`cancel` (``""`` when none)."""
        return self._reason

    def cancel(self, reason: str = "") -> None:
        """Cancel: set the flag and run every registered callback once. Idempotent."""
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            _run(callback)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; return the flag."""
        return self._event.wait(timeout)

    def add_callback(self, callback: Callable[[], None]) -> int:
        """Run ``callback`` when cancelled (at once if already cancelled).

        Returns a handle for :meth:`remove_callback`.
        """
        with self._lock:
            handle = self._next_handle
            self._next_handle += 1
            if not self._event.is_set():
                self._callbacks[handle] = callback
                return handle
        _run(callback)
        return handle

    def remove_callback(self, handle: int) -> None:
        """Forget a callback registered with :meth:`add_callback` (no-op if gone)."""
        with self._lock:
            self._callbacks.pop(handle, None)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


#: How far ahead of the monotonic clock a deadline may be: anything further is
#: not a ``time.monotonic()`` instant (most likely a ``time.time()`` value).
_MAX_DEADLINE_AHEAD = 366 * 24 * 3600.0


def _monotonic_instant(inst: Any, attr: Any, value: Any) -> None:
    if value is None:
        return
    checks.finite_number(inst, attr, value)
    if value > now() + _MAX_DEADLINE_AHEAD:
        # Taken as given it would silently remove the bound (a deadline
        # decades away); refusing it names the mistake instead.
        raise checks.fail(
            inst,
            attr.name,
            f"must be a time.monotonic() instant; {value!r} is more than a year ahead of"
            " the monotonic clock (a time.time() value?). Use timeout= for a duration",
        )


def _run(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:
        _log.exception("a CancelToken callback raised")


@attrs.frozen(kw_only=True)
class Progress:
    """A progress report for one call (``total`` is 0 when the server gave none)."""

    binding: str = attrs.field(validator=checks.is_str)
    progress: float = attrs.field(validator=checks.finite_number)
    total: float = attrs.field(default=0.0, validator=checks.finite_number)
    message: str = attrs.field(default="", validator=checks.is_str)


@attrs.frozen(kw_only=True)
class CallOpts:
    """Options of one call.

    Attributes:
        progress: receives the call's progress reports. Setting it is what
            asks the server for progress; it runs off the reader thread and
            must not block for long. Progress never extends the deadline.
        deadline: an absolute ``time.monotonic()`` instant. A value more than
            a year ahead of the monotonic clock (such as a ``time.time()``
            value) is refused with :class:`~mcpclient.ConfigError`.
        timeout: seconds, turned into a deadline once, when the call starts.
        cancel: a :class:`CancelToken` another thread may cancel.
        idle_timeout: seconds the call may go without a progress report (or
            its result) before it fails early with
            :class:`~mcpclient.DeadlineExceededError` ("no progress for N s"),
            cancelled on the wire like any expiry. Setting it asks the server
            for progress. It never extends the deadline; ``None``:
            ``Timeouts.idle`` (off by default).

    Neither ``deadline`` nor ``timeout`` → now + ``Timeouts.request``; both →
    the earlier of the two.

    Thread safety: immutable (the token itself is thread-safe).
    """

    progress: Callable[[Progress], None] | None = attrs.field(
        default=None, validator=checks.is_optional_callable
    )
    deadline: float | None = attrs.field(default=None, validator=_monotonic_instant)
    timeout: float | None = attrs.field(default=None, validator=checks.optional_positive_number)
    cancel: CancelToken | None = attrs.field(
        default=None, validator=checks.optional_instance_of(CancelToken)
    )
    idle_timeout: float | None = attrs.field(
        default=None, validator=checks.optional_positive_number
    )

    def resolve_deadline(self, now: float, default_timeout: float) -> float:
        """The call's absolute deadline, given the current monotonic time."""
        candidates = []
        if self.deadline is not None:
            candidates.append(self.deadline)
        if self.timeout is not None:
            candidates.append(now + self.timeout)
        return min(candidates) if candidates else now + default_timeout
