"""One authorization flow at a time per binding (DESIGN.md §7).

A 401 or 403 proves the server did not run the request, so the client asks
the transport's auth provider to recover (refresh, authorize, step up) and
sends the request again. Every caller rejected meanwhile joins the flow that
is already running instead of starting its own, and waits for it within its
own deadline.

Threads:
    A flow runs on its own daemon thread ``mcpclient-auth-<binding>``, so a
    caller whose deadline passes leaves the shared flow running for the others
    (it is bounded by ``Timeouts.auth``). The thread ends with the flow. A
    provider that overruns ``Timeouts.auth`` by :data:`OVERRUN_GRACE` is
    abandoned: its waiters fail and its thread is left to end on its own.

    A caller that joins without blocking (:meth:`AuthFlows.join`, a
    submitted call) is told on the flow's thread as it ends, or on the
    deadline watcher when its own deadline comes first.

Locks:
    ``_lock`` guards ``_flow`` (the running flow) and ``_closed``. Each flow's
    condition guards its outcome and its listeners. The provider runs outside
    both, and so do the listeners.

Shutdown:
    :meth:`close` sets the running flow's ``cancelled`` event, calls the
    provider's optional ``interrupt()`` (to cut network I/O in progress) and
    waits a moment for its thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._internal.session.rpc import AuthRejectedError
from mcpclient._internal.transport.base import AuthChallenge, AuthProvider
from mcpclient.calls import CancelToken
from mcpclient.errors import (
    AuthError,
    DeadlineExceededError,
    FailureClass,
    RequestCancelledError,
    ShutdownError,
)

__all__ = ["MAX_ROUNDS", "AuthFlows"]

_log = logging.getLogger(__name__)

#: How many times one request is sent again after a 401/403 before its
#: rejection stands (a provider's own limits, such as step-ups, come first).
MAX_ROUNDS = 4

#: Seconds past a flow's deadline (``Timeouts.auth``) that a waiter still
#: gives the provider to report; then the waiter stops waiting, so a provider
#: that ignores its deadline cannot hold ``connect()`` (the flow is abandoned).
OVERRUN_GRACE = 2.0


class _Flow:
    """One run of the provider; its outcome is read under ``cond``."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline  # monotonic: now + Timeouts.auth at its start
        self.cond = threading.Condition()
        self.done = False
        self.person_seconds = 0.0
        self.failure: AuthError | None = None
        self.cancelled = threading.Event()
        #: Run once the flow is over (no lock held): the callers that joined it
        #: without blocking (:meth:`AuthFlows.join`).
        self.listeners: list[Callable[[], None]] = []


class AuthFlows:
    """Runs the auth provider's recovery for one binding, one flow at a time."""

    def __init__(
        self,
        binding: str,
        provider: object,
        timeout: float,
        on_flow: Callable[[bool, AuthError | None], None],
    ) -> None:
        """``on_flow(True, None)`` as a flow starts, ``on_flow(False, failure)`` as it ends."""
        self._binding = binding
        self._provider = provider if isinstance(provider, AuthProvider) else None
        self._timeout = timeout
        self._on_flow = on_flow
        self._lock = threading.Lock()
        self._flow: _Flow | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def recover(
        self,
        rejected: AuthRejectedError,
        *,
        deadline: float | None,
        cancel: CancelToken | None,
        op: str,
    ) -> float:
        """Join or start the flow for ``rejected``; return the seconds a person took.

        ``deadline`` bounds the wait; the flow's own ``Timeouts.auth`` (and
        :data:`OVERRUN_GRACE`) always does.

        Raises:
            AuthError: nothing can recover (no provider), or the flow failed.
            DeadlineExceededError: ``deadline`` passed first (the flow goes on).
            RequestCancelledError: ``cancel`` fired first (the flow goes on).
            ShutdownError: the binding closed.
        """
        flow = self._start_for(rejected, op)
        handle = None
        if cancel is not None:
            handle = cancel.add_callback(lambda: _wake(flow))
        try:
            with flow.cond:
                while not flow.done:
                    if cancel is not None and cancel.cancelled:
                        raise RequestCancelledError(
                            "the call was cancelled while the binding was authenticating",
                            binding=self._binding,
                            op=op,
                        )
                    overrun = flow.deadline + OVERRUN_GRACE - now()
                    if overrun <= 0:
                        raise self._overrun(op)
                    left = overrun if deadline is None else min(overrun, deadline - now())
                    if deadline is not None and deadline - now() <= 0:
                        raise DeadlineExceededError(
                            "the call's deadline passed while the binding was authenticating",
                            binding=self._binding,
                            op=op,
                        )
                    flow.cond.wait(left)
                failure, seconds = flow.failure, flow.person_seconds
        finally:
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
        if failure is not None:
            raise AuthError(
                failure.message, failure_class=failure.failure_class, binding=self._binding, op=op
            )
        return seconds

    def join(
        self,
        rejected: AuthRejectedError,
        *,
        deadline: float,
        cancel: CancelToken | None,
        op: str,
        done: Callable[[BaseException | None], object],
    ) -> None:
        """:meth:`recover` without blocking: ``done(None)`` once the flow succeeded,
        ``done(error)`` otherwise (the errors :meth:`recover` raises).

        ``done`` runs once, with no lock held: on this thread when the answer
        is known now, else on the flow's thread as it ends, or on the watcher
        at ``deadline`` (or the flow's overrun), or when ``cancel`` fires.
        """
        try:
            flow = self._start_for(rejected, op)
        except BaseException as exc:
            done(exc)
            return
        once = threading.Lock()
        timer: watcher.Timer | None = None
        handle: int | None = None

        def finish(outcome: BaseException | None) -> None:
            if not once.acquire(blocking=False):
                return
            if timer is not None:
                timer.cancel()
            if handle is not None and cancel is not None:
                cancel.remove_callback(handle)
            done(outcome)

        def ended() -> None:
            failure = flow.failure
            finish(
                None
                if failure is None
                else AuthError(
                    failure.message,
                    failure_class=failure.failure_class,
                    binding=self._binding,
                    op=op,
                )
            )

        def timed_out() -> None:
            if now() >= deadline:
                finish(
                    DeadlineExceededError(
                        "the call's deadline passed while the binding was authenticating",
                        binding=self._binding,
                        op=op,
                    )
                )
            else:
                finish(self._overrun(op))

        def cancelled() -> None:
            finish(
                RequestCancelledError(
                    "the call was cancelled while the binding was authenticating",
                    binding=self._binding,
                    op=op,
                )
            )

        with flow.cond:
            over = flow.done
            if not over:
                flow.listeners.append(ended)
        if over:
            ended()
            return
        timer = watcher.schedule(min(deadline, flow.deadline + OVERRUN_GRACE), timed_out)
        if cancel is not None:
            handle = cancel.add_callback(cancelled)

    def close(self, timeout: float) -> None:
        """Cancel a running flow and wait (at most ``timeout``) for its thread."""
        with self._lock:
            self._closed = True
            flow, thread = self._flow, self._thread
        if flow is not None:
            flow.cancelled.set()
            # A provider may cut its network I/O at once (mcpclient.auth.OAuth
            # does); otherwise it notices ``cancelled`` between exchanges.
            interrupt = getattr(self._provider, "interrupt", None)
            if callable(interrupt):
                try:
                    interrupt()
                except Exception:
                    _log.warning("binding %s: the auth provider's interrupt failed", self._binding)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _start_for(self, rejected: AuthRejectedError, op: str) -> _Flow:
        """The flow to wait for (joined or started), or the error when none can run."""
        if self._provider is None:
            raise AuthError(
                rejected.message,
                failure_class=FailureClass.AUTH_REQUIRED,
                binding=self._binding,
                op=op,
            )
        return self._join_or_start(rejected.challenge, op)

    def _overrun(self, op: str) -> AuthError:
        """The error of a caller that stops waiting for a provider past ``Timeouts.auth``."""
        return AuthError(
            "the authorization flow did not finish within Timeouts.auth"
            " (the auth provider was abandoned)",
            failure_class=FailureClass.AUTH_REQUIRED,
            binding=self._binding,
            op=op,
        )

    def _join_or_start(self, challenge: AuthChallenge, op: str) -> _Flow:
        with self._lock:
            if self._closed:
                raise ShutdownError("the binding is closed", binding=self._binding, op=op)
            if self._flow is not None:
                return self._flow
            flow = self._flow = _Flow(now() + self._timeout)
            self._thread = threading.Thread(
                target=self._run,
                args=(flow, challenge),
                name=f"mcpclient-auth-{self._binding}",
                daemon=True,
            )
            self._thread.start()
            return flow

    def _run(self, flow: _Flow, challenge: AuthChallenge) -> None:
        provider = self._provider
        assert provider is not None
        failure: AuthError | None = None
        seconds = 0.0
        self._on_flow(True, None)
        try:
            seconds = float(
                provider.recover(challenge, deadline=flow.deadline, cancelled=flow.cancelled)
            )
        except AuthError as exc:
            failure = exc
        except Exception as exc:
            # A provider's own bug must not kill the thread silently or leave
            # callers waiting: it fails this flow, classified.
            _log.warning(
                "binding %s: the auth provider raised %s", self._binding, type(exc).__name__
            )
            failure = AuthError(
                f"the auth provider raised {type(exc).__name__}",
                failure_class=FailureClass.AUTH_FAILED,
                binding=self._binding,
            )
        finally:
            with self._lock:
                self._flow = None
            # The state changes back before anyone waiting resumes.
            self._on_flow(False, failure)
            with flow.cond:
                flow.done = True
                flow.failure = failure
                flow.person_seconds = max(0.0, seconds)
                flow.cond.notify_all()
                listeners, flow.listeners = flow.listeners, []
            for listener in listeners:
                listener()


def _wake(flow: _Flow) -> None:
    with flow.cond:
        flow.cond.notify_all()
