"""The host: many servers, one object.

A :class:`Host` starts a set of bindings in parallel under one startup
budget, keeps each isolated from the others' failures, and offers their tools
as one catalog whose model names are unique across all of them, routing each
call to the binding and raw name behind the model name.

With ``connect="lazy"`` a server whose last known catalog is stored starts
only when a call needs it, and may be stopped when idle
(``_internal/host/ondemand.py``).

Threads:
    While :meth:`Host.connect` runs, up to 32 ``mcpclient-connect-host``
    threads start the bindings (the calling thread helps); while
    :meth:`Host.close` runs, up to 32 ``mcpclient-close-host`` threads close
    them. Neither outlives its call. Each binding then has exactly the threads
    a separate :class:`~mcpclient.Client` has; an eager host adds none. A
    lazy host has up to 32 ``mcpclient-wake-host`` threads while starts on
    demand or idle stops are pending, and holds the deadline watcher.

Locks:
    ``_lock`` guards the connect/close flags, the starts in flight, the
    clients and the failures (and a lazy host's dormant servers); it is
    never held across I/O or a wait. ``_clients`` and ``_order`` are
    replaced whole under it, never changed in place.
    ``_connect_lock`` is held for the whole of :meth:`Host.connect` (one
    connect at a time); :meth:`Host.close` takes it, with its timeout, to wait
    for a connect in flight to end. The aggregate catalog has its own lock
    (``_internal/host/aggregate.py``); readers take none.

Shutdown:
    :meth:`Host.close` cancels the starts in flight (on demand too), waits
    for :meth:`Host.connect` to end (it closes what it started once it sees
    the host closing), stores a lazy host's live catalogs, then closes every
    client concurrently and waits, bounded, for the wake threads. Idempotent; safe
    from any thread, at any time. A host inherited through ``os.fork()`` is
    forgotten in the child (the registry's fork hook): fresh locks, no
    clients, every server in :attr:`Host.failed` with a ``ForkedError``.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
import types
from collections.abc import Callable, Collection, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal, Protocol

import attrs

from mcpclient._core.deadline import now
from mcpclient._core.limits import bound
from mcpclient._core.statedir import state_dir
from mcpclient._internal.client import registry
from mcpclient._internal.client.calls.hooks import run_hooked, submit_hooked
from mcpclient._internal.client.lifecycle.lifecycle import forked_error
from mcpclient._internal.client.options import options_of
from mcpclient._internal.host.aggregate import NO_DORMANT, Aggregate, View
from mcpclient._internal.host.ondemand import OnDemand, tool_check
from mcpclient._internal.host.parallel import run_all
from mcpclient._internal.host.startup import Start, plan, start_one
from mcpclient._internal.host.store import CatalogStore
from mcpclient.calls import CallOpts, CancelToken
from mcpclient.catalog import Catalog
from mcpclient.client import Client
from mcpclient.content import ToolResult
from mcpclient.definition import MAX_NAME_BYTES, Definition
from mcpclient.errors import (
    ConfigError,
    Error,
    ForkedError,
    ShutdownError,
    ToolUnavailableError,
    error_for,
)
from mcpclient.export import ResultBudget
from mcpclient.export import run_tool_calls as _run_tool_calls
from mcpclient.export._meta import LoadedTools
from mcpclient.export._search import IndexCache, ToolMatch
from mcpclient.handlers import Handlers, Progress
from mcpclient.hooks import CallHooks, CallInfo, Decision
from mcpclient.status import Failure, State, Status

__all__ = ["Host", "ServerSource"]


def _binding_keys(names: list[str]) -> dict[str, str]:
    """Each file name → a distinct binding name."""
    from mcpclient.config.values import binding_name  # noqa: PLC0415 - config loads late

    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        key, n = binding_name(name), 1
        while key in taken:
            n += 1
            suffix = f"-{n}"
            key = binding_name(name)[: MAX_NAME_BYTES - len(suffix)] + suffix
        taken.add(key)
        out[name] = key
    return out


def _positive(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


class ServerSource(Protocol):
    """Anything that builds a :class:`~mcpclient.Definition`, such as a ``ServerConfig``.

    An optional ``disabled: bool`` attribute set to ``True`` makes the host
    list the server in :attr:`Host.skipped` and not start it.
    """

    def definition(self) -> Definition:
        """The definition of the binding to start."""
        ...


class _Seats:
    """The host's table of connected clients, as its :class:`OnDemand` sees it."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.lock = host._lock

    @property
    def closing(self) -> bool:
        return self._host._closing

    def seated(self, name: str) -> Client | None:
        return self._host._clients.get(name)

    def seat(self, name: str, client: Client | None, error: Error | None) -> None:
        host = self._host
        clients = dict(host._clients)
        if client is None:
            clients.pop(name, None)
        else:
            clients[name] = client
        host._seat_all(clients)
        if error is None:
            host._failed.pop(name, None)
        else:
            host._failed[name] = error


class Host:
    """Many MCP servers as one object: started together, one tool catalog, one call router.

    Example:
        >>> servers = {"files": files_defn, "search": search_defn}   # doctest: +SKIP
        >>> with mcpclient.Host(servers, required=["files"]) as host:
        ...     tools = host.catalog().tools
        ...     result = host.call_tool(tools[0].model_name, {})

    Args:
        servers: server name to a :class:`~mcpclient.Definition`, or to any
            object with a ``definition()`` method (a ``ServerConfig`` of
            ``mcpclient.config``); one whose ``disabled`` attribute is
            ``True`` is listed in :attr:`skipped` and never started. The
            name is the binding name (so ``{"clock": ...}`` gives
            ``mcp__clock__...`` tools): it must be a valid one.
        handlers: one :class:`~mcpclient.Handlers` shared by every binding,
            or a mapping of server name to its own (the others get none).
        required: names of servers that must start: if one fails,
            :meth:`connect` closes the rest and raises.
        startup_timeout: one budget in seconds for starting every binding
            (each also keeps its own ``Definition.timeouts.startup``);
            ``None``: each binding's own budget only.
        hooks: a :class:`~mcpclient.hooks.CallHooks` run around every
            :meth:`call_tool` and :meth:`submit_tool_call` (its ``CallInfo.model_name`` is the
            host-level name); a host argument, not per binding, because the
            host's model name is what a policy sees.
        connect: ``"eager"`` (the default): :meth:`connect` starts every
            server. ``"lazy"``: it starts only the required servers and
            those whose last known catalog is not stored; the others are
            *dormant*, their stored tools in :meth:`catalog` and
            :meth:`search_tools`, and start on the first call that needs
            them (waiting within that call's deadline) or when a search
            returns their tools. A stored catalog is never trusted for a
            call: the live tool must have the stored name, title,
            description and input schema, or the call raises
            :class:`~mcpclient.ToolUnavailableError`
            (``TOOL_SCHEMA_CHANGED`` when it changed) and the catalog shows
            the live tools.
        idle_stop: with ``connect="lazy"``, seconds after which a server
            with no host call in flight is closed and goes dormant again
            (``None``: never).
        catalog_dir: with ``connect="lazy"``, where last known catalogs are
            stored, one file per definition identity (default:
            ``catalogs`` in the user's mcpclient state directory).

    Thread safety: every method may be called from any thread at any time.

    Raises:
        ConfigError: the arguments are malformed (see each argument).
    """

    def __init__(
        self,
        servers: Mapping[str, Definition | ServerSource],
        *,
        handlers: Handlers | Mapping[str, Handlers] | None = None,
        required: Collection[str] = (),
        startup_timeout: float | None = None,
        hooks: CallHooks | None = None,
        connect: Literal["eager", "lazy"] = "eager",
        idle_stop: float | None = None,
        catalog_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if connect not in ("eager", "lazy"):
            raise ConfigError('Host connect must be "eager" or "lazy"', op="Host")
        if connect == "eager" and (idle_stop is not None or catalog_dir is not None):
            raise ConfigError('Host idle_stop and catalog_dir need connect="lazy"', op="Host")
        if idle_stop is not None and not _positive(idle_stop):
            raise ConfigError("Host idle_stop must be a positive number of seconds", op="Host")
        if hooks is not None and not isinstance(hooks, CallHooks):
            raise ConfigError("Host hooks must be a mcpclient.hooks.CallHooks", op="Host")
        #: Run around every blocking call_tool, seeing the host-level model name.
        self._hooks = hooks
        if startup_timeout is not None and not _positive(startup_timeout):
            raise ConfigError(
                "Host startup_timeout must be a positive number of seconds", op="Host"
            )
        self._plan = plan(servers, handlers, required)
        self._required = frozenset(required)
        self._startup_timeout = startup_timeout
        #: Binding name of each server that is started (for a status without a client).
        self._bindings = {s.name: str(s.definition.name) for s in self._plan.starts}
        self._request_timeouts = {s.name: s.definition.timeouts.request for s in self._plan.starts}
        self._names = tuple(n for n in servers if n not in self._plan.skipped)
        self._lock = threading.Lock()
        self._connect_lock = threading.Lock()
        self._started = False
        self._closing = False
        self._closed = threading.Event()
        self._in_flight: list[Start] = []
        self._abort: Start | None = None  # the required server whose failure stops connect
        self._clients: dict[str, Client] = {}
        self._order: tuple[tuple[str, Client], ...] = ()
        self._failed: dict[str, Error] = dict(self._plan.failed)
        self._aggregate = Aggregate()
        self._search = IndexCache()  # the tool-search index of the current aggregate
        self._pid = os.getpid()
        self._forked: ForkedError | None = None  # set in a forked child (registry)
        self._lazy: OnDemand | None = None
        if connect == "lazy":
            directory = Path(catalog_dir) if catalog_dir is not None else None
            if directory is None:
                directory = state_dir(os.environ) / "catalogs"
            store = CatalogStore(directory)
            self._lazy = OnDemand(_Seats(self), self._plan.starts, store, idle_stop)

    @classmethod
    def from_config(
        cls,
        source: Any,
        *,
        handlers: Handlers | Mapping[str, Handlers] | None = None,
        required: Collection[str] = (),
        startup_timeout: float | None = None,
        hooks: CallHooks | None = None,
        connect: Literal["eager", "lazy"] = "eager",
        idle_stop: float | None = None,
        catalog_dir: str | os.PathLike[str] | None = None,
        **load_kwargs: Any,
    ) -> Host:
        """A host of the servers a config file (or dict, or text) names.

        ``source`` and ``load_kwargs`` (``dialect``, ``env``, ``inputs``,
        ``strict``) go to ``mcpclient.config.load``; the other arguments are
        the host's own (``required`` and ``handlers`` by the file's names).
        Each server's key is its file name made a binding name
        (``ServerConfig.binding_name``; ``-2``, ``-3``... when two coincide).

        Raises:
            ConfigError: the config is invalid, or the host's arguments are.
        """
        from mcpclient.config import load  # noqa: PLC0415 - import mcpclient stays quick

        loaded = load(source, **load_kwargs)
        # A file's names are any text; the host's keys are binding names.
        keys = _binding_keys(list(loaded))
        servers = {keys[name]: server for name, server in loaded.items()}
        if handlers is not None and not isinstance(handlers, Handlers):
            handlers = {keys.get(n, n): h for n, h in handlers.items()}
        required = [keys.get(n, n) for n in required]
        return cls(
            servers,
            handlers=handlers,
            required=required,
            startup_timeout=startup_timeout,
            hooks=hooks,
            connect=connect,
            idle_stop=idle_stop,
            catalog_dir=catalog_dir,
        )

    # -- context manager -------------------------------------------------

    def __enter__(self) -> Host:
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        with self._lock:
            ready, failed = len(self._clients), len(self._failed)
        return (
            f"<mcpclient.Host servers={len(self._names)} connected={ready} failed={failed}"
            f" skipped={len(self._plan.skipped)}>"
        )

    # -- lifecycle -------------------------------------------------------

    def connect(self) -> Host:
        """Start every binding in parallel, within the startup budget; returns the host.

        Each binding is started as :func:`mcpclient.connect` would; a failure
        of one (recorded in :attr:`failed`) never affects another. Calling it
        again after it returned does nothing.

        Raises:
            Error: a server named in ``required`` failed; the error has that
                failure's class, names the server, and chains the failure.
                Every binding started is closed first, and the host with
                them (a later ``connect()`` raises ``ShutdownError``).
            ShutdownError: the host was closed (before or during connect).
        """
        with self._connect_lock:
            with self._lock:
                if self._forked is not None:
                    raise ForkedError(self._forked.message, op="connect")
                if self._closing:
                    raise ShutdownError("the host is closed", op="connect")
                if self._started:
                    return self
                self._started = True
                self._pid = os.getpid()
                registry.register_host(self)
            starts = list(self._plan.starts)
            if self._lazy is not None:  # reads the stored catalogs: I/O, lock not held
                now_names = set(self._lazy.load(self._required))
                starts = [start for start in starts if start.name in now_names]
            with self._lock:
                if self._closing_now():  # close() came while the catalogs were read
                    starts = []
                self._in_flight = starts
            for name in self._names:
                if name in self._required and name in self._plan.failed:
                    with self._lock:
                        self._in_flight = []
                    self._shut()
                    raise self._required_error(name, self._plan.failed[name])
            deadline = None if self._startup_timeout is None else now() + self._startup_timeout
            try:
                run_all(
                    "connect",
                    starts,
                    lambda start: self._start(start, deadline),
                    interrupted=lambda: self._cancel(starts, "connect was interrupted"),
                )
            except BaseException:
                self._finish(starts)
                self._close_clients([s.client for s in starts if s.client is not None], None)
                self._shut()
                raise
            closing, abort = self._finish(starts)
            if closing or abort is not None:
                self._close_clients([s.client for s in starts if s.client is not None], None)
                self._shut()
            if closing:
                raise ShutdownError("the host was closed while connecting", op="connect")
            if abort is not None:
                assert abort.error is not None
                raise self._required_error(abort.name, abort.error) from abort.error
            if self._lazy is not None:
                for start in starts:
                    if start.client is not None:
                        self._lazy.connected(start.name, start.client)
            return self

    def _closing_now(self) -> bool:
        return self._closing  # read anew (another thread may have set it)

    def _shut(self) -> None:
        """Mark the host closed after connect() closed what it started (close() is then a no-op)."""
        with self._lock:
            first = not self._closing
            self._closing = True
        if first:
            if self._lazy is not None:
                self._lazy.shutdown()
            self._closed.set()
            registry.unregister_host(self)

    def _start(self, start: Start, deadline: float | None) -> None:
        """One binding's start (a startup pool thread)."""
        start_one(start, deadline, self._startup_timeout)
        if start.error is None or start.name not in self._required:
            return
        with self._lock:
            first = self._abort is None
            if first:
                self._abort = start
            others = list(self._in_flight)
        if first:  # the host will not be used: the others need not finish starting
            self._cancel(others, f"required server {start.name!r} failed to start")

    @staticmethod
    def _cancel(starts: list[Start], reason: str) -> None:
        for start in starts:
            start.token.cancel(reason)

    def _finish(self, starts: list[Start]) -> tuple[bool, Start | None]:
        """Record the starts' outcomes; returns (host closing, the failed required start)."""
        with self._lock:
            self._in_flight = []
            clients = dict(self._clients)  # a lazy host's calls may have started some already
            for start in starts:
                if start.error is not None:
                    self._failed[start.name] = start.error
                elif start.client is not None:
                    clients[start.name] = start.client
            self._seat_all(clients)
            return self._closing, self._abort

    def _seat_all(self, clients: Mapping[str, Client]) -> None:
        """Replace the connected clients, in the host's server order (lock held)."""
        self._clients = {name: clients[name] for name in self._names if name in clients}
        self._order = tuple(self._clients.items())

    def _required_error(self, name: str, cause: Error) -> Error:
        error = error_for(
            cause.failure_class,
            f"required server {bound(name, 64)!r} failed to start: {cause.message}",
            binding=cause.binding,
            op="connect",
            code=cause.code,
        )
        error.__cause__ = cause
        return error

    def close(self, timeout: float | None = None) -> None:
        """Close every binding, concurrently; also stops a connect in flight.

        Idempotent and safe from any thread, in any order with the other
        methods. ``timeout`` is each binding's close budget (as
        :meth:`Client.close`; None = 5 s) and also bounds the wait for a
        connect in flight.
        """
        budget = 5.0 if timeout is None else max(0.0, float(timeout))
        with self._lock:
            first = not self._closing
            self._closing = True
            in_flight = list(self._in_flight)
        if not first:
            self._closed.wait(budget)
            return
        lazy = self._lazy
        try:
            self._cancel(in_flight, "the host is closing")
            if lazy is not None:
                lazy.shutdown()  # no start on demand or idle stop begins after this
            # connect() closes what it started once it sees the host closing;
            # waiting for it here means nothing it starts outlives close().
            got = self._connect_lock.acquire(timeout=budget + 1.0)
            try:
                with self._lock:
                    clients = dict(self._clients)
                if lazy is not None:
                    for name, client in clients.items():
                        lazy.save(name, client)
                self._close_clients(list(clients.values()), timeout)
            finally:
                if got:
                    self._connect_lock.release()
            if lazy is not None:
                lazy.join(budget)  # a start in flight closes its own client
        finally:
            self._closed.set()
            registry.unregister_host(self)

    def _forget_after_fork(self) -> None:
        """In a forked child (the registry's hook; the only thread): belong to nobody.

        The clients forget their own connections; the host replaces its locks
        (a parent thread may have held one at fork time, and it would stay
        held) and records the fork as every server's failure.
        """
        self._lock = threading.Lock()
        self._connect_lock = threading.Lock()
        self._aggregate = Aggregate()
        self._closed = threading.Event()
        self._closed.set()
        self._closing = True
        self._in_flight = []
        self._forked = forked_error("", self._pid, "host")
        self._failed = {
            name: forked_error(self._bindings.get(name, name), self._pid, "host")
            for name in self._names
        }
        self._clients = {}
        self._order = ()
        self._lazy = None  # its threads and timers were the parent's

    @staticmethod
    def _close_clients(clients: list[Client], timeout: float | None) -> None:
        run_all("close", clients, lambda client: client.close(timeout))

    # -- what the host holds -----------------------------------------------

    @property
    def clients(self) -> Mapping[str, Client]:
        """Server name to its :class:`Client`, for every binding that connected (read-only)."""
        return types.MappingProxyType(self._clients)

    @property
    def failed(self) -> Mapping[str, Error]:
        """Server name to the error that stopped its start (read-only snapshot).

        In a child of ``os.fork()`` every server is here with a
        :class:`~mcpclient.ForkedError`: the host belongs to its parent.
        """
        with self._lock:
            return types.MappingProxyType(dict(self._failed))

    @property
    def skipped(self) -> tuple[str, ...]:
        """The servers not started because they are disabled, in the given order."""
        return tuple(self._plan.skipped)

    def status(self) -> dict[str, Status]:
        """Server name to its binding's :class:`Status` (skipped servers excluded).

        A server that failed to start is ``FAILED`` with its failure; one not
        started yet, or a lazy host's dormant one, is ``CONFIGURED``; one a
        lazy host is starting on demand is ``STARTING``.
        """
        lazy = self._lazy
        with self._lock:
            clients, failed = self._clients, dict(self._failed)
            waking = {name for name in self._names if lazy is not None and lazy.starting(name)}
        out: dict[str, Status] = {}
        for name in self._names:
            client = clients.get(name)
            if client is not None:
                out[name] = client.status()
                continue
            error = failed.get(name)
            binding = self._bindings.get(name, error.binding if error is not None else name)
            if name in waking:
                out[name] = Status(binding=binding, state=State.STARTING)
            elif error is not None:
                failure = Failure(error.failure_class, error.message, error.code)
                out[name] = Status(binding=binding, state=State.FAILED, failure=failure)
            else:
                out[name] = Status(binding=binding, state=State.CONFIGURED)
        return out

    def catalog(self) -> Catalog:
        """The tools of every serving binding, with model names unique across all of them.

        Each tool keeps its binding's model name unless another binding's
        tool has the same one; then every such tool is renamed
        deterministically (``^[A-Za-z0-9_-]{1,64}$``). The aggregate is
        rebuilt only when a binding's adopted generation, or whether it is
        serving (connected and ready, degraded or authenticating), changes; its
        ``generation`` counts those rebuilds. A lazy host's dormant servers
        are in it with their stored tools. Immutable: share it freely.
        """
        return self._current().catalog

    def search_tools(self, query: str, limit: int = 10) -> list[ToolMatch]:
        """The tools of :meth:`catalog` best matching ``query``, best first; at most ``limit``.

        BM25 over tool names (snake_case and camelCase split), titles,
        descriptions and parameter names. The index is rebuilt only when the
        aggregate catalog is (a binding adopts a new generation); equal scores
        are ordered by model name. The query is cut to 1024 characters. A
        lazy host starts the dormant servers whose tools it returns, without
        waiting for them.

        Raises:
            ConfigError: ``query`` is not a str, or ``limit`` not an int in 1..100.
        """
        view = self._current()

        def entries() -> list[tuple[str, list[Any]]]:
            by_server: dict[str, list[Any]] = {}
            for tool in view.catalog.tools:
                by_server.setdefault(view.routes[tool.model_name][0], []).append(tool)
            return list(by_server.items())

        matches = self._search.index(view.catalog, entries).search(query, limit)
        if self._lazy is not None and view.stored:
            dormant = {name for name, _ in view.stored}
            servers = [view.routes[match.model_name][0] for match in matches]
            self._lazy.prewake([server for server in servers if server in dormant])
        return matches

    def _bindings_now(self) -> tuple[tuple[tuple[str, Client], ...], Any]:
        """The connected clients and the dormant catalogs, read together."""
        if self._lazy is None:
            return self._order, NO_DORMANT
        with self._lock:  # a start on demand moves a server from one to the other
            return self._order, self._lazy.stored

    def _current(self) -> View:
        return self._aggregate.current(*self._bindings_now())

    # -- calls ------------------------------------------------------------

    def route(self, model_name: str) -> tuple[str, str]:
        """The (server name, raw tool name) behind a model name of :meth:`catalog`.

        A binding that is reconnecting or failed is not in the catalog, but
        still routes the names it had: a call to one of them waits for its
        reconnect (or starts the next attempt) within the call's deadline,
        or raises that binding's own failure.

        Raises:
            ToolUnavailableError: no binding has a tool of that name.
            ForkedError: the host was inherited through ``os.fork()``.
        """
        server, raw_name, _ = self._routed(model_name)
        return server, raw_name

    def _routed(self, model_name: str) -> tuple[str, str, View]:
        """:meth:`route`, and the view that routed it."""
        if not isinstance(model_name, str):
            raise ConfigError("call_tool model_name must be a str", op="call_tool")
        forked = self._forked
        if forked is not None:
            raise ForkedError(forked.message, op="call_tool")
        view = self._current()
        route = view.routes.get(model_name)
        if route is None:
            if self._closing:
                raise ShutdownError("the host is closed", op="call_tool")
            view = self._aggregate.known(*self._bindings_now())
            route = view.routes.get(model_name)
        if route is None:
            raise ToolUnavailableError(
                f"tool {bound(model_name, 64)!r} is not in the host's catalog", op="call_tool"
            )
        return route[0], route[1], view

    def call_tool(
        self,
        model_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
        task: bool | None = None,
    ) -> ToolResult:
        """Call a tool by its model name in :meth:`catalog`, on the binding that has it.

        Takes the options of :meth:`Client.call_tool` (``task`` included); a
        tool error is a ``ToolResult(is_error=True)``.

        Raises:
            ToolUnavailableError: no serving binding has a tool of that name.
            ShutdownError: the host is closed.
            Error: anything :meth:`Client.call_tool` raises.
        """
        server, raw_name, view = self._routed(model_name)
        lazy = self._lazy
        if lazy is None:
            return self._hooked_call(
                self._clients[server],
                server=server,
                raw_name=raw_name,
                model_name=model_name,
                arguments=arguments,
                call=lambda client, args: client.call_tool(
                    raw_name,
                    args,
                    opts,
                    timeout=timeout,
                    progress=progress,
                    cancel=cancel,
                    task=task,
                ),
            )
        opts = self._call_opts(
            server, "call_tool", opts, timeout=timeout, progress=progress, cancel=cancel
        )
        client = lazy.acquire(server, opts.deadline, opts.cancel)
        try:
            self._check_stored(view, server, raw_name, client)
            return self._hooked_call(
                client,
                server=server,
                raw_name=raw_name,
                model_name=model_name,
                arguments=arguments,
                call=lambda client, args: client.call_tool(raw_name, args, opts, task=task),
            )
        finally:
            lazy.release(server)

    def submit_tool_call(
        self,
        model_name: str,
        arguments: Mapping[str, Any] | None = None,
        opts: CallOpts | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> concurrent.futures.Future[ToolResult]:
        """Start a tool call by its model name and return its future at once.

        As :meth:`Client.submit_tool_call` on the binding that has the tool:
        local refusals raise here, everything later is on the future.

        Raises:
            ToolUnavailableError: no serving binding has a tool of that name.
            ShutdownError: the host is closed.
        """
        server, raw_name, view = self._routed(model_name)
        lazy = self._lazy
        if lazy is None:
            return self._hooked_submit(
                self._clients[server],
                server=server,
                raw_name=raw_name,
                model_name=model_name,
                arguments=arguments,
                submit=lambda client, args: client.submit_tool_call(
                    raw_name, args, opts, timeout=timeout, progress=progress, cancel=cancel
                ),
            )
        opts = self._call_opts(
            server, "submit_tool_call", opts, timeout=timeout, progress=progress, cancel=cancel
        )
        submit_opts = opts

        def submit(client: Client) -> concurrent.futures.Future[ToolResult]:
            self._check_stored(view, server, raw_name, client)
            return self._hooked_submit(
                client,
                server=server,
                raw_name=raw_name,
                model_name=model_name,
                arguments=arguments,
                submit=lambda client, args: client.submit_tool_call(raw_name, args, submit_opts),
            )

        return lazy.submit(server, opts.deadline, opts.cancel, submit)

    def _hooked_call(
        self,
        client: Client,
        *,
        server: str,
        raw_name: str,
        model_name: str,
        arguments: Mapping[str, Any] | None,
        call: Callable[[Client, Mapping[str, Any] | None], ToolResult],
    ) -> ToolResult:
        """``call`` on ``client``, inside the host's hooks if it has them."""
        hooks = self._hooks
        if hooks is None:
            return call(client, arguments)
        spec = client.catalog().tool_by_raw_name(raw_name)
        return run_hooked(
            hooks,
            binding=self._bindings.get(server, server),
            tool=raw_name,
            model_name=model_name,
            arguments=arguments,
            annotations=spec.annotations if spec is not None else None,
            call=lambda args: call(client, args),
        )

    def _hooked_submit(
        self,
        client: Client,
        *,
        server: str,
        raw_name: str,
        model_name: str,
        arguments: Mapping[str, Any] | None,
        submit: Callable[[Client, Mapping[str, Any] | None], concurrent.futures.Future[ToolResult]],
    ) -> concurrent.futures.Future[ToolResult]:
        """``submit`` on ``client``, inside the host's hooks if it has them."""
        hooks = self._hooks
        if hooks is None:
            return submit(client, arguments)
        spec = client.catalog().tool_by_raw_name(raw_name)
        return submit_hooked(
            hooks,
            binding=self._bindings.get(server, server),
            tool=raw_name,
            model_name=model_name,
            arguments=arguments,
            annotations=spec.annotations if spec is not None else None,
            submit=lambda args: submit(client, args),
        )

    def _call_opts(
        self,
        server: str,
        op: str,
        opts: CallOpts | None,
        *,
        timeout: float | None,
        progress: Callable[[Progress], None] | None,
        cancel: CancelToken | None,
    ) -> CallOpts:
        """A lazy host's call options, its deadline fixed now: a start on demand uses its time."""
        opts = options_of(opts, timeout, progress, cancel, binding=server, op=op)
        deadline = opts.resolve_deadline(now(), self._request_timeouts[server])
        return attrs.evolve(opts, deadline=deadline, timeout=None)

    @staticmethod
    def _check_stored(view: View, server: str, raw_name: str, client: Client) -> None:
        """A call routed by a stored catalog goes on only if the live tool is the same."""
        stored = view.stored_catalog(server)
        if stored is not None:
            error = tool_check(stored, client.catalog(), raw_name, server)
            if error is not None:
                raise error

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
        """Run the tool calls in an LLM ``response`` on this host; return the result messages.

        See :func:`mcpclient.export.run_tool_calls` (here calling by model
        name): the calls run concurrently under one deadline and come back as
        the provider's result messages, in order; every failure is an error
        result for the model, never an exception; ``loaded`` (a search-mode
        export's :class:`~mcpclient.export.LoadedTools`) has the meta-calls
        answered here.

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
            call_by="model_name",
            approve=approve,
            budget=budget,
            full_results=full_results,
            loaded=loaded,
        )
