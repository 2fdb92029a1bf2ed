"""The call path: admission, exchange, conversion.

A call is admitted (a live connection within its deadline, then its turn when
calls are serialized and a request slot, in one step when uncontended),
exchanged (the request, its ``input_required`` rounds, an authorization and a
resend on a new session, all within the one deadline), and converted into
its public value. Its :class:`~mcpclient._internal.session.context.CallContext`
is built once, here, and passed whole down through the exchange and the
session to the request's entry in the session's table. Submitted tool
calls take the same path as queue entries (:mod:`submission`). On an HTTP
binding a call's own headers (``Mcp-Name``, ``Mcp-Param-*``) are computed as
it is prepared and travel down in that context. With telemetry on
(:mod:`mcpclient._internal.telemetry`), a public call's span starts here, on
the caller's thread, before its local checks; its trace context goes into the
request's ``params._meta`` before anything is sent, and the span ends with
the call's outcome (a submission's when its future completes).

Threads:
    None of its own: a blocking call runs on its caller's thread; a
    submission on the threads :mod:`submission` names.

Locks:
    None of its own. The gates (``slots``, ``serial``) share one lock;
    admission waits for a connection under ``BindingState.lock``. The
    ``x-mcp-header`` cache is filled without a lock (a race computes the same
    value twice).

Shutdown:
    ``close()`` closes the gates (a waiting call is refused with
    ``ShutdownError``); a call in flight is failed by its session.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from mcpclient._core.limits import bound
from mcpclient._internal import telemetry
from mcpclient._internal.client.auth.recovery import AuthRecovery
from mcpclient._internal.client.calls import submission
from mcpclient._internal.client.calls.gate import Gate, enter_pair, leave_pair
from mcpclient._internal.client.calls.hooks import run_hooked, submit_hooked
from mcpclient._internal.client.calls.mrtr import exchange
from mcpclient._internal.client.calls.progress import progress_adapter
from mcpclient._internal.client.calls.tools import (
    HeaderParams,
    PreparedCall,
    check_structured,
    prepare_tool_call,
)
from mcpclient._internal.client.inbound.interactions import Interactions, current_depth
from mcpclient._internal.client.lifecycle.connection import Connection
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.client.tasks.tasks import TaskRunner, mode_for
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.failures import not_processed_again
from mcpclient._internal.session.headers import NAME_METHODS, call_headers
from mcpclient._internal.session.lane import EventLane
from mcpclient._internal.session.rpc import AuthRejectedError
from mcpclient._internal.wire import ConversionError, to_tool_result
from mcpclient._internal.wire import tasks as wire_tasks
from mcpclient.calls import CallOpts, CancelToken
from mcpclient.catalog import Catalog
from mcpclient.content import ToolResult
from mcpclient.definition import Definition
from mcpclient.errors import FailureClass, NotProcessedError, ProtocolError
from mcpclient.hooks import CallHooks
from mcpclient.status import State
from mcpclient.tasks import TaskHandle
from mcpclient.transports import StreamableHTTPTransport

__all__ = ["CallPath"]

_T = TypeVar("_T")


class CallPath:
    """Sends one binding's requests within their deadlines. Thread safety: any thread.

    It is also the :class:`submission.Host` of the binding's submitted calls
    (the underscored members are that protocol's).
    """

    def __init__(self, state: BindingState, auth: AuthRecovery, interactions: Interactions) -> None:
        self._st = state
        self._auth = auth
        self._binding = state.binding
        self._definition: Definition = state.definition
        self._interactions = interactions
        self._lane: EventLane = state.lane
        self._schemas = SchemaCache()
        definition = state.definition
        # Only a Streamable HTTP binding sends per-call headers (a modern
        # server reads them); stdio computes none.
        self._header_params: HeaderParams | None = (
            {} if isinstance(definition.transport, StreamableHTTPTransport) else None
        )
        # None: telemetry off for this binding, or no OpenTelemetry installed.
        self._telemetry = telemetry.for_binding(state)
        self.slots = Gate(definition.limits.max_concurrent_requests, binding=self._binding)
        # Serialization shares the slots' lock: an uncontended call takes both in one step.
        self.serial = (
            None
            if definition.allow_parallel_calls
            else Gate(1, binding=self._binding, share=self.slots, serializes=True)
        )
        #: The call hooks (``connect(..., hooks=...)``); None: none.
        self.hooks: CallHooks | None = None
        #: Drives the binding's tasks (``tasks.py``); sends through this path.
        self.tasks = TaskRunner(state, interactions, self._task_request)

    # -- submission.Host ---------------------------------------------------

    @property
    def _state(self) -> State:
        return self._st.state

    @_state.setter
    def _state(self, value: State) -> None:
        # Settable only because Host declares a plain attribute; nothing sets it.
        raise AttributeError("the binding's state is changed by its lifecycle")

    def _serving(
        self, op: str, deadline: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[Connection, Catalog]:
        return self._st.serving(op, deadline, cancel)

    def _when_serving(
        self,
        ctx: CallContext,
        done: Callable[[tuple[Connection, Catalog] | None, BaseException | None], object],
    ) -> None:
        assert ctx.deadline is not None  # a call's context (only a stream's has none)
        self._st.when_serving(ctx.op, ctx.deadline, ctx.cancel, done)

    def _join_auth(
        self,
        rejected: AuthRejectedError,
        rounds: int,
        ctx: CallContext,
        done: Callable[[BaseException | None], object],
    ) -> None:
        assert ctx.deadline is not None
        self._auth.join(
            rejected, rounds, deadline=ctx.deadline, cancel=ctx.cancel, op=ctx.op, done=done
        )

    def _authorized(
        self, send: Callable[[], _T], ctx: CallContext, rejected: AuthRejectedError | None = None
    ) -> _T:
        assert ctx.deadline is not None  # a call's context (only a stream's has none)
        return self._auth.authorized(
            send, deadline=ctx.deadline, cancel=ctx.cancel, op=ctx.op, rejected=rejected
        )

    def _traced(self) -> telemetry.BindingTelemetry | None:
        """The binding's telemetry when a call now would be traced, else None (the plain path)."""
        tel = self._telemetry
        return tel if tel is not None and tel.live() else None

    def cache_lookup(self, hit: bool) -> None:
        """Count a resource cache lookup in telemetry (when a call now would be traced)."""
        tel = self._traced()
        if tel is not None:
            tel.cache_lookup(hit)

    # -- the context -----------------------------------------------------------

    def _context(
        self,
        opts: CallOpts,
        op: str,
        deadline: float,
        *,
        indeterminate_on_loss: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> CallContext:
        # Once per call: everything below reads this one frozen value.
        return CallContext(
            op=op,
            deadline=deadline,
            cancel=opts.cancel,
            progress=progress_adapter(self._binding, opts.progress, self._st.handlers.event),
            indeterminate_on_loss=indeterminate_on_loss,
            headers=headers,
            idle_timeout=(
                opts.idle_timeout
                if opts.idle_timeout is not None
                else self._definition.timeouts.idle
            ),
        )

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """Close the gates: every waiting or queued call is refused."""
        self.slots.close()
        if self.serial is not None:
            self.serial.close()
        if self._telemetry is not None:
            self._telemetry.session_closed()

    def forget_after_fork(self) -> None:
        """In a forked child: closed gates of our own (the parent's lock may be held)."""
        self.slots = Gate(1, binding=self._binding)
        self.slots.close()
        self.serial = None

    # -- the path ------------------------------------------------------------

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        opts: CallOpts,
        *,
        op: str,
        deadline: float,
    ) -> Any:
        """Admit, send and await one request; its raw result."""
        ctx = self._context(opts, op, deadline)
        tel = self._traced()
        if tel is None:
            return self._request(method, params, ctx)
        return tel.run(
            method,
            params,
            lambda meta: self._request(method, telemetry.with_meta(params, meta), ctx),
        )

    def call(
        self,
        method: str,
        params: dict[str, Any] | None,
        opts: CallOpts,
        convert: Callable[[Any], _T],
        *,
        op: str,
        deadline: float,
    ) -> _T:
        """:meth:`request`, its result converted (a malformed one is a ``ProtocolError``).

        A prompt's or a resource's ``Mcp-Name`` is computed here, over HTTP.
        """
        headers = (
            call_headers(method, params)
            if self._header_params is not None and method in NAME_METHODS
            else None
        )
        ctx = self._context(opts, op, deadline, headers=headers)
        tel = self._traced()
        if tel is None:
            return self._converted(method, params, ctx, convert)
        return tel.run(
            method,
            params,
            lambda meta: self._converted(method, telemetry.with_meta(params, meta), ctx, convert),
        )

    def _converted(
        self,
        method: str,
        params: dict[str, Any] | None,
        ctx: CallContext,
        convert: Callable[[Any], _T],
    ) -> _T:
        result = self._request(method, params, ctx)
        try:
            return convert(result)
        except ConversionError as exc:
            raise ProtocolError(str(exc), binding=self._binding, op=ctx.op) from None

    def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        ctx: CallContext,
        *,
        serialize: bool = False,
        accept_task: bool = False,
        conn: Connection | None = None,
    ) -> Any:
        """Admit, send and await one request under ``ctx``; its raw result.

        Its rounds and a resend carry the same context (deadline, cancel
        token, the call's own headers). ``conn``: the live connection, when
        the caller has just asked for it (a tool call's task-mode decision).
        """
        # A call made from inside a handler bypasses call serialization: the
        # call that triggered the handler may hold the turn (DESIGN.md §7).
        in_handler = current_depth() > 0
        serial = self.serial if serialize and not in_handler else None
        if conn is None:
            conn, _ = self._st.serving(ctx.op, ctx.deadline, ctx.cancel)
        # The turn (when serialized) and a request slot, in one step when uncontended.
        assert ctx.deadline is not None  # a call's context (only a stream's has none)
        enter_pair(serial, self.slots, ctx.deadline, ctx.cancel, ctx.op)
        try:
            if not in_handler:  # no depth to account (outbound() would be a no-op)
                return self._sent(conn, method, params, ctx, accept_task)
            with self._interactions.outbound():
                return self._sent(conn, method, params, ctx, accept_task)
        finally:
            leave_pair(serial, self.slots)

    def _sent(
        self,
        conn: Connection,
        method: str,
        params: dict[str, Any] | None,
        ctx: CallContext,
        accept_task: bool,
    ) -> Any:
        try:
            return self._exchange(conn, method, params, ctx, accept_task)
        except NotProcessedError:
            # The server forgot the session before it processed this request
            # (HTTP 404): wait for the new session, send once more, all inside
            # the call's one deadline. Once: a second 404 is the caller's.
            conn, _ = self._st.serving(ctx.op, ctx.deadline, ctx.cancel)
            try:
                return self._exchange(conn, method, params, ctx, accept_task)
            except NotProcessedError as again:
                raise not_processed_again(again) from again

    def _exchange(
        self,
        conn: Connection,
        method: str,
        params: dict[str, Any] | None,
        ctx: CallContext,
        accept_task: bool = False,
    ) -> Any:
        def send() -> Any:
            return exchange(
                conn,
                method,
                params,
                ctx,
                interactions=self._interactions,
                limits=self._definition.limits,
                accept_task=accept_task,
            )

        try:
            return send()
        except AuthRejectedError as exc:
            # Only HTTP gets here; the common path pays for nothing above.
            return self._authorized(send, ctx, exc)

    # -- tool calls ----------------------------------------------------------

    def call_tool(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None,
        opts: CallOpts,
        deadline: float,
        task: bool | None = None,
    ) -> ToolResult:
        """Check, send and convert one tool call (blocking); inside its span when traced.

        With :attr:`hooks` set, the call runs inside their chain (:mod:`hooks`).
        """
        hooks = self.hooks
        if hooks is not None and (hooks.before or hooks.after or hooks.on_error):
            spec = self._st.adopted("call_tool").tool_by_raw_name(raw_name)
            return run_hooked(
                hooks,
                binding=self._binding,
                tool=raw_name,
                model_name=None,
                arguments=arguments,
                annotations=spec.annotations if spec is not None else None,
                call=lambda args: self._call_tool(raw_name, args, opts, deadline, task),
            )
        return self._call_tool(raw_name, arguments, opts, deadline, task)

    def _call_tool(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None,
        opts: CallOpts,
        deadline: float,
        task: bool | None,
    ) -> ToolResult:
        tel = self._traced()
        if tel is None:
            return self.run_tool(self.prepare_tool_call(raw_name, arguments), opts, deadline, task)
        return tel.run(
            "tools/call",
            {"name": raw_name},
            lambda meta: self.run_tool(
                self._prepared(raw_name, arguments, meta), opts, deadline, task
            ),
            tool_error=_is_error,
        )

    def submit_tool_call(
        self, raw_name: str, arguments: Mapping[str, Any] | None, opts: CallOpts, deadline: float
    ) -> concurrent.futures.Future[ToolResult]:
        """Check and queue one tool call; its future. A traced span ends with the future.

        With :attr:`hooks` set, the call runs inside their chain (:mod:`hooks`).
        """
        hooks = self.hooks
        if hooks is not None and (hooks.before or hooks.after or hooks.on_error):
            spec = self._st.adopted("call_tool").tool_by_raw_name(raw_name)
            return submit_hooked(
                hooks,
                binding=self._binding,
                tool=raw_name,
                model_name=None,
                arguments=arguments,
                annotations=spec.annotations if spec is not None else None,
                submit=lambda args: self._submit_tool_call(raw_name, args, opts, deadline),
            )
        return self._submit_tool_call(raw_name, arguments, opts, deadline)

    def _submit_tool_call(
        self, raw_name: str, arguments: Mapping[str, Any] | None, opts: CallOpts, deadline: float
    ) -> concurrent.futures.Future[ToolResult]:
        tel = self._traced()
        traced = tel.start("tools/call", {"name": raw_name}) if tel is not None else None
        if traced is None:
            return self.submit_tool(self.prepare_tool_call(raw_name, arguments), opts, deadline)
        try:
            prepared = self._prepared(raw_name, arguments, traced.meta)
            future = self.submit_tool(prepared, opts, deadline)
        except BaseException as exc:
            traced.fail(exc)  # a local refusal: nothing was queued
            raise
        traced.follow(future)
        return future

    def _prepared(
        self, raw_name: str, arguments: Mapping[str, Any] | None, meta: Mapping[str, str]
    ) -> PreparedCall:
        prepared = self.prepare_tool_call(raw_name, arguments)
        params = telemetry.with_meta(prepared.params, meta)
        if params is prepared.params:
            return prepared
        assert params is not None
        return PreparedCall(params, prepared.spec, prepared.warnings, prepared.headers)

    def prepare_tool_call(self, raw_name: str, arguments: Mapping[str, Any] | None) -> PreparedCall:
        """The local checks of a tool call (filter, catalog, arguments), nothing sent."""
        adopted = self._st.adopted("call_tool")
        return prepare_tool_call(
            raw_name,
            arguments,
            binding=self._binding,
            tool_filter=self._definition.tool_filter,
            adopted=adopted,
            schemas=self._schemas,
            header_params=self._header_params,
        )

    def run_tool(
        self, prepared: PreparedCall, opts: CallOpts, deadline: float, task: bool | None = None
    ) -> ToolResult:
        """Send a prepared tool call and convert its result (blocking).

        A task the call becomes is driven to its end inside ``deadline``
        (and cancelled on the wire when it passes or the caller cancels).
        """
        ctx = self._context(
            opts, "call_tool", deadline, indeterminate_on_loss=True, headers=prepared.headers
        )
        conn, modern, as_task, params = self._task_mode(prepared, ctx, task)
        result = self._request(
            "tools/call", params, ctx, serialize=True, accept_task=as_task and modern, conn=conn
        )
        if as_task and wire_tasks.is_create_result(result, modern=modern):
            first = self._created(result, modern, "call_tool")
            result = self.tasks.drive(
                first, op="call_tool", deadline=deadline, cancel=opts.cancel, cancel_on_exit=True
            )
        return self.convert_tool(prepared, result)

    def start_task(self, prepared: PreparedCall, opts: CallOpts, deadline: float) -> TaskHandle:
        """Send a prepared tool call as a task; its handle once the server created it."""
        ctx = self._context(
            opts, "start_task", deadline, indeterminate_on_loss=True, headers=prepared.headers
        )
        conn, modern, _, params = self._task_mode(prepared, ctx, True)
        result = self._request(
            "tools/call", params, ctx, serialize=True, accept_task=modern, conn=conn
        )
        if modern and not wire_tasks.is_create_result(result, modern=True):
            # The server's choice (2026-07-28): it answered at once.
            return self.tasks.done(self.convert_tool(prepared, result), prepared)
        return self.tasks.handle(
            self._created(result, modern, "start_task"), prepared, self.convert_tool
        )

    def _task_mode(
        self, prepared: PreparedCall, ctx: CallContext, task: bool | None
    ) -> tuple[Connection, bool, bool, dict[str, Any]]:
        """(the live connection, modern, as a task, the params to send) for a tool call."""
        conn, _ = self._st.serving(ctx.op, ctx.deadline, ctx.cancel)
        protocol = conn.protocol
        assert protocol is not None
        if task is None and not protocol.tasks.tools_call:
            # The common case, decided without reading the tool's execution hints:
            # a server that takes no task-augmented calls gets a plain one.
            return conn, protocol.modern, False, prepared.params
        as_task = mode_for(
            protocol,
            prepared.spec.execution,
            task,
            tool=prepared.spec.raw_name,
            binding=self._binding,
            op=ctx.op,
        )
        params = prepared.params
        if as_task and not protocol.modern:
            params = wire_tasks.create_params(params, None)
        return conn, protocol.modern, as_task, params

    def _created(self, result: Any, modern: bool, op: str) -> wire_tasks.WireTask:
        try:
            return wire_tasks.parse_create(result, modern=modern)
        except wire_tasks.TaskWireError as exc:
            raise ProtocolError(
                f"the server sent a malformed CreateTaskResult: {exc}", binding=self._binding, op=op
            ) from None

    def convert_tool(self, prepared: PreparedCall | None, result: Any) -> ToolResult:
        """A raw ``CallToolResult`` as a validated :class:`ToolResult`.

        ``prepared`` None (a listed task): its output schema is unknown, not checked.
        """
        try:
            converted = to_tool_result(result, self._definition.limits)
        except ConversionError as exc:
            raise ProtocolError(str(exc), binding=self._binding, op="call_tool") from None
        if prepared is None:
            return converted
        return check_structured(prepared, converted, self._schemas)

    def _task_request(self, method: str, params: dict[str, Any], ctx: CallContext) -> Any:
        # A task's own requests (tasks/*): over HTTP, Mcp-Name carries the task id.
        if self._header_params is not None and method in NAME_METHODS:
            ctx = attrs.evolve(ctx, headers=call_headers(method, params))
        return self._request(method, params, ctx)

    def submit_tool(
        self, prepared: PreparedCall, opts: CallOpts, deadline: float
    ) -> concurrent.futures.Future[ToolResult]:
        """Queue a prepared tool call in the gates; its future at once."""
        # The call queues in the gates as an entry with no thread of its own,
        # its place taken here, on the caller's thread: serialized submissions
        # are sent in the order they were submitted. A call from inside a
        # handler bypasses serialization, as call_tool does.
        if wire_tasks.tool_task_support(prepared.spec.execution) == "required":
            # A submission cannot drive a task: refused whatever the server declares.
            raise ProtocolError(
                f"tool {bound(prepared.spec.raw_name, 64)!r} requires task-augmented"
                " execution and cannot be submitted; use call_tool() or start_task()",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self._binding,
                op="submit_tool_call",
            )
        serial = self.serial if current_depth() == 0 else None
        ctx = self._context(
            opts, "call_tool", deadline, indeterminate_on_loss=True, headers=prepared.headers
        )
        return submission.submit(
            self, prepared, ctx, gates=(self.slots,) if serial is None else (serial, self.slots)
        )


def _is_error(result: ToolResult) -> bool:
    return result.is_error
