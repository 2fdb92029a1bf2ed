"""The client: one binding to one MCP server, safe to use from any thread.

This module is the public facade: the methods, their argument checks, and
short delegations to the binding's parts (``_internal/client/binding.py``
names them and how they are wired).

Threads:
    None of its own; each part's module names the threads it uses. Callers
    block only in their own call, never longer than its deadline.

Locks:
    None of its own: the binding's state is guarded by ``BindingState.lock``
    (``_internal/client/state.py``), the catalogs by the ``CatalogStore``'s lock.

Shutdown:
    :meth:`Client.close` (``_internal/client/lifecycle/lifecycle.py``): new calls are
    refused, calls in flight fail at once, the server is stopped within the
    timeout.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import attrs

from mcpclient._core.deadline import now
from mcpclient._internal.client.binding import assemble
from mcpclient._internal.client.calls.requests import (
    completion_params,
    prompt_params,
    to_completion,
)
from mcpclient._internal.client.calls.resource_read import read_resource as cached_read
from mcpclient._internal.client.options import connect_arguments, options_of
from mcpclient._internal.client.skills.skills import SkillsPart
from mcpclient._internal.client.skills.skills_api import SkillMethods
from mcpclient._internal.client.tasks.tasks_api import TaskMethods
from mcpclient._internal.wire import to_prompt, to_resource
from mcpclient.calls import CallOpts, CancelToken
from mcpclient.catalog import Catalog, Completion, PromptRef, ResourceTemplateRef
from mcpclient.content import Prompt, Resource, ToolResult
from mcpclient.definition import Definition
from mcpclient.errors import ConfigError
from mcpclient.export._budget import ResultBudget
from mcpclient.export._meta import LoadedTools
from mcpclient.export._runner import run_tool_calls as _run_tool_calls
from mcpclient.export._search import IndexCache, ToolMatch
from mcpclient.handlers import Handlers, Progress
from mcpclient.hooks import CallHooks, CallInfo, Decision
from mcpclient.status import Status

__all__ = ["Client", "connect"]


def connect(
    definition: Definition,
    handlers: Handlers | None = None,
    *,
    timeout: float | None = None,
    cancel: CancelToken | None = None,
    hooks: CallHooks | None = None,
) -> Client:
    """Start a binding: validate, start the server, negotiate, discover, adopt.

    ``hooks`` (:mod:`mcpclient.hooks`) run around every
    :meth:`Client.call_tool` and :meth:`Client.submit_tool_call`. They are a
    connect argument, like ``handlers``, not a :class:`Definition` field:
    callables are not part of a server's identity.

    Everything happens within ``definition.timeouts.startup`` (or the shorter
    ``timeout``) and can be cancelled from another thread with ``cancel``. On
    failure everything started is torn down.

    Example:
        >>> with mcpclient.connect(defn) as client:   # doctest: +SKIP
        ...     print(client.call_tool("echo", {"message": "hi"}).text)

    Raises:
        ConfigError: the definition or handlers are invalid.
        DeadlineExceededError: ``startup_timeout``.
        RequestCancelledError: ``cancel`` fired.
        Error: any other classified startup failure.
    """
    handlers, budget = connect_arguments(definition, handlers, timeout)
    if hooks is not None and not isinstance(hooks, CallHooks):
        raise ConfigError("connect hooks must be a mcpclient.hooks.CallHooks", op="connect")
    client = Client(definition, handlers, _token=_CONNECT)
    client._calls.hooks = hooks
    client._life.start(now() + budget, cancel, budget)
    return client


_CONNECT = object()


class Client(SkillMethods, TaskMethods):
    """A binding to one MCP server. Create it with :func:`connect`.

    Thread safety: every method may be called from any thread at any time.
    Every call ends by its deadline with a result or a classified
    :class:`~mcpclient.Error`; nothing outlives :meth:`close`. A client
    belongs to the process that connected it: inherited through
    ``os.fork()``, every call in the child raises
    :class:`~mcpclient.ForkedError`.
    """

    def __init__(
        self, definition: Definition, handlers: Handlers, *, _token: object = None
    ) -> None:
        if _token is not _CONNECT:
            raise TypeError("create a Client with mcpclient.connect()")
        self._definition = definition
        self._binding = str(definition.name)
        self._st, self._calls, self._inbound, self._life = assemble(definition, handlers)
        self._skills = SkillsPart(self._st, self._calls)
        self._search = IndexCache()  # the tool-search index of the adopted catalog

    # -- context manager -------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _to_prompt(self, result: Any) -> Prompt:
        return to_prompt(result, self._definition.limits)

    def _to_resource(self, result: Any) -> Resource:
        return to_resource(result, self._definition.limits)

    def __repr__(self) -> str:
        return f"<mcpclient.Client binding={self._binding!r} state={self._st.state}>"

    # -- lifecycle -------------------------------------------------------

    def close(self, timeout: float | None = None) -> None:
        """Close the binding: fail calls in flight, stop the server, release everything.

        Idempotent and safe from many threads at once. Never returns with a
        live server process; when ``timeout`` (None = 5 s) runs out, the
        server's process group is killed.
        """
        self._life.close(timeout)
        self._st.resource_cache.clear()

    def reconnect(self) -> None:
        """Rebuild the connection with a fresh retry budget.

        For a binding that is ``failed`` (its budget spent) or ``degraded``
        after a loss with reconnection disabled; a binding that is connected,
        or already reconnecting, is left alone. A failed binding also comes
        back by itself: a call on it starts one attempt once the next is due
        (at once after the budget, then every ``RetryPolicy.max_delay``).

        Raises:
            ShutdownError: the binding is closed (``ForkedError``: it was
                inherited through ``os.fork()``).
        """
        self._life.reconnect()

    # -- status and catalog ----------------------------------------------

    def status(self) -> Status:
        """A snapshot of the binding's safe metadata."""
        return self._st.status()

    def catalog(self) -> Catalog:
        """The adopted catalog, projected through the tool filter (readable after close)."""
        return self._project(self._st.catalogs.adopted)

    def search_tools(self, query: str, limit: int = 10) -> list[ToolMatch]:
        """The tools of :meth:`catalog` best matching ``query``, best first; at most ``limit``.

        As :meth:`mcpclient.Host.search_tools` (BM25 over names, titles,
        descriptions and parameter names; equal scores by model name), over
        this binding's tools; the index is rebuilt only when another catalog
        generation is adopted.

        Raises:
            ConfigError: ``query`` is not a str, or ``limit`` not an int in 1..100.
        """
        adopted = self._st.catalogs.adopted
        catalog = self._project(adopted)
        return self._search.index(adopted, lambda: [(self._binding, catalog.tools)]).search(
            query, limit
        )

    def candidate(self) -> Catalog | None:
        """The validated candidate awaiting :meth:`adopt`, or ``None``."""
        candidate = self._st.catalogs.candidate
        return None if candidate is None else self._project(candidate)

    def _project(self, catalog: Catalog) -> Catalog:
        tool_filter = self._definition.tool_filter
        if not tool_filter.allow and not tool_filter.deny:
            return catalog
        return attrs.evolve(
            catalog, tools=tuple(t for t in catalog.tools if tool_filter.permits(t.raw_name))
        )

    def adopt(self, generation: int) -> None:
        """Adopt the candidate numbered ``generation``, atomically.

        Calls already in flight keep the generation they started with.

        Raises:
            ShutdownError: the binding is closed.
            CatalogError: ``catalog_stale``: no candidate, or another one.
        """
        if self._st.closing:
            raise self._st.refusal("adopt")
        seq = self._st.catalogs.adopt(generation)
        if seq:
            self._st.lane.wait_delivered(seq, 5.0)

    # -- calls ------------------------------------------------------------

    def notify_roots_changed(self) -> None:
        """Tell a legacy server the roots changed (modern servers re-ask on their own)."""
        conn, _ = self._st.serving("notify_roots_changed")
        protocol = conn.protocol
        if protocol is not None and not protocol.modern and self._definition.capabilities.roots:
            conn.session.notify("notifications/roots/list_changed")

    def call_tool(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
        task: bool | None = None,
    ) -> ToolResult:
        """Call a tool by its raw (server) name.

        A tool that failed is a ``ToolResult(is_error=True)``, not an
        exception. The call ends by its deadline (``opts``), whatever the
        server does. ``timeout``, ``progress`` and ``cancel`` are shorthand
        for ``opts=CallOpts(...)`` (every call method takes them; not both).
        A task the call becomes (a task-required tool, ``task=True`` on an
        optional one, or a 2026-07-28 server's choice) is run to completion
        within the deadline and cancelled on the wire when it passes.

        Raises:
            ConfigError: ``opts`` and a keyword both given, or a bad value.
            ToolUnavailableError: the filter denies it or the catalog lacks it.
            InvalidArgumentsError: ``arguments`` are not a JSON object.
            DeadlineExceededError, RequestCancelledError, ShutdownError,
            IndeterminateError, ConnectionLostError, ProtocolError,
            LimitExceededError: as classified.
        """
        opts, deadline = self._begin("call_tool", opts, timeout, progress, cancel)
        return self._calls.call_tool(raw_name, arguments, opts, deadline, task)

    def submit_tool_call(
        self,
        raw_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> concurrent.futures.Future[ToolResult]:
        """Start a tool call and return its future at once.

        Local refusals (closed binding, filter, unknown tool, invalid
        arguments) raise here, synchronously; everything after the request
        reaches the session is reported on the future. Cancelling the future
        cancels the call on the wire. The connect ``hooks`` run around it:
        ``before`` here (a denial raises :class:`~mcpclient.CallDeniedError`),
        ``after``/``on_error`` on the event lane before the future completes.
        """
        opts, deadline = self._begin("submit_tool_call", opts, timeout, progress, cancel)
        return self._calls.submit_tool_call(raw_name, arguments, opts, deadline)

    def run_tool_calls(
        self,
        response: Any,
        *,
        provider: str,
        timeout: float | None = None,
        approve: Callable[[CallInfo], Decision | None] | None = None,
        budget: ResultBudget | None = None,
        full_results: MutableMapping[str, ToolResult] | None = None,
        loaded: LoadedTools | None = None,
    ) -> list[dict[str, Any]]:
        """Run the tool calls in an LLM ``response`` and return the result messages.

        See :func:`mcpclient.export.run_tool_calls`: the calls run
        concurrently under one deadline, and every failure is an error
        result for the model, never an exception; ``approve`` (a ``before``
        hook of :mod:`mcpclient.hooks`) may deny a call into such a result;
        ``loaded`` (a search-mode export's
        :class:`~mcpclient.export.LoadedTools`) has the meta-calls answered here.

        ``budget`` (a :class:`mcpclient.export.ResultBudget`) cuts each
        result that is too big for the model, saying so in the text, and
        ``full_results`` (a ``dict``) then gets the whole result by call id.

        Raises:
            ConfigError: an unknown ``provider``, a bad ``timeout`` or
                ``budget``, or a ``response`` not shaped like that provider's.
        """
        return _run_tool_calls(
            self,
            response,
            provider=provider,
            timeout=timeout,
            call_by="raw_name",
            approve=approve,
            budget=budget,
            full_results=full_results,
            loaded=loaded,
        )

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> Prompt:
        """Render a prompt.

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server has no prompts.
            InvalidArgumentsError: ``arguments`` are not str to str, or lack an
                argument the catalog marks required (nothing is sent).
        """
        opts, deadline = self._begin("get_prompt", opts, timeout, progress, cancel)
        self._st.require("prompts", "get_prompt", deadline, opts.cancel)
        params = prompt_params(
            name, arguments, adopted=self._st.adopted("get_prompt"), binding=self._binding
        )
        return self._calls.call(
            "prompts/get",
            params,
            opts,
            lambda r: to_prompt(r, self._definition.limits),
            op="get_prompt",
            deadline=deadline,
        )

    def read_resource(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
        cache: bool = True,
    ) -> Resource:
        """Read a resource by URI (an opaque identifier, never resolved as a path).

        A 2026-07-28 server's result may be served again, unchanged, while its
        ``ttlMs`` lasts (``private`` ones only in the same authorization
        context), until the resource is updated or the list changes;
        ``cache=False`` always asks the server and keeps nothing.
        """
        opts, deadline = self._begin("read_resource", opts, timeout, progress, cancel)
        self._st.require("resources", "read_resource", deadline, opts.cancel)
        return cached_read(
            self._st,
            self._calls,
            uri,
            opts,
            deadline=deadline,
            convert=self._to_resource,
            cache=cache,
        )

    def complete(
        self,
        ref: PromptRef | ResourceTemplateRef,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> Completion:
        """Ask the server to complete an argument value (when it advertises completions)."""
        opts, deadline = self._begin("complete", opts, timeout, progress, cancel)
        self._st.require("completions", "complete", deadline, opts.cancel)
        params = completion_params(ref, argument, value, context)
        result = self._calls.request(
            "completion/complete", params, opts, op="complete", deadline=deadline
        )
        return to_completion(result, binding=self._binding)

    def subscribe(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Subscribe to changes of a resource (``ResourceUpdated`` events).

        Returns once the server has accepted (modern: acknowledged) it.

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server does not
                support resource subscriptions, or does not honour this one.
        """
        opts, deadline = self._begin("subscribe", opts, timeout, progress, cancel)
        self._change_subscription(uri, add=True, opts=opts, deadline=deadline)

    def unsubscribe(
        self,
        uri: str,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Stop receiving ``ResourceUpdated`` events for ``uri``."""
        opts, deadline = self._begin("unsubscribe", opts, timeout, progress, cancel)
        self._change_subscription(uri, add=False, opts=opts, deadline=deadline)

    def _begin(
        self,
        op: str,
        opts: CallOpts | None,
        timeout: float | None,
        progress: Callable[[Progress], None] | None,
        cancel: CancelToken | None,
    ) -> tuple[CallOpts, float]:
        """A call's options (``opts`` or its keywords) and its one deadline, fixed now."""
        opts = options_of(opts, timeout, progress, cancel, binding=self._binding, op=op)
        return opts, opts.resolve_deadline(now(), self._definition.timeouts.request)

    def _change_subscription(self, uri: str, *, add: bool, opts: CallOpts, deadline: float) -> None:
        op = "subscribe" if add else "unsubscribe"
        if not isinstance(uri, str) or not uri:
            raise ConfigError(f"{op}() needs a resource URI", binding=self._binding, op=op)
        self._inbound.change_subscription(uri, add=add, deadline=deadline, cancel=opts.cancel)

    def ping(
        self,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """Check the server answers (``server/discover`` on a modern server)."""
        opts, deadline = self._begin("ping", opts, timeout, progress, cancel)
        conn, _ = self._st.serving("ping", deadline, opts.cancel)
        method = "server/discover" if conn.protocol is not None and conn.protocol.modern else "ping"
        self._calls.request(method, None, opts, op="ping", deadline=deadline)
