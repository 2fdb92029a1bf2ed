"""OpenTelemetry for the call path: a CLIENT span per call, two histograms, trace context.

A soft dependency (the ``otel`` extra, ``opentelemetry-api``): this module
imports nothing of OpenTelemetry until the first binding whose
``Definition.telemetry`` is on is built, and when the package is missing
:func:`for_binding` answers ``None`` and the call path pays one attribute
check per call, nothing more. The same holds for a binding built with
``telemetry=False``. While the application has set no tracer or meter
provider, or ``mcpclient.telemetry.disable()`` is in force, no span is
started (two global reads a call). A provider or propagator that raises is
logged and the call goes on without its span.

The calls traced are the public ones that go through the call path
(``call_tool``, ``submit_tool_call``, ``get_prompt``, ``read_resource``,
``complete``, ``ping``); a connect's own requests (``initialize``, list
pages, ``logging/setLevel``), a catalog refresh and ``subscribe`` are not.

What a call records follows the MCP semantic conventions (OpenTelemetry's
GenAI conventions, ``docs/gen-ai/mcp.md``):

- a span of kind CLIENT named ``{mcp.method.name} {target}`` (the target is
  the tool's or the prompt's name; a resource URI is an attribute, never in
  the name, which the conventions advise against by default), with
  ``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id`` (a
  legacy HTTP session's id only), ``gen_ai.tool.name`` and
  ``gen_ai.operation.name = "execute_tool"`` (``tools/call``),
  ``gen_ai.prompt.name`` (``prompts/get``), ``mcp.resource.uri`` (resource
  requests), ``network.transport`` (``pipe`` for stdio, ``tcp`` over HTTP),
  ``server.address``/``server.port`` (HTTP), and on failure ``error.type``
  (``tool_error`` for an ``isError`` result, else the raised error's failure
  class, e.g. ``deadline``; a foreign exception's class name) with status
  ERROR, and ``rpc.response.status_code`` (the code, as a string) when the
  server answered with a JSON-RPC error;
- ``mcp.client.operation.duration`` per call and
  ``mcp.client.session.duration`` per binding (connect to close), seconds,
  with the conventions' advised bucket boundaries;
- ``mcp.client.resource_cache.lookups``, a counter of ``read_resource``
  cache lookups with ``mcp.cache.result`` = ``hit`` or ``miss`` (only for a
  lookup the cache could answer: a 2026-07-28 session, ``cache`` on);
- the W3C trace context (``traceparent``, ``tracestate``, ``baggage``: what
  the configured propagator writes) of the call's span in its request's
  ``params._meta``.

The span is started on the caller's thread, at the public method, as a
child of the caller's current context; it is passed along explicitly (never
made current), so the I/O threads need no context of their own.

Threads:
    None of its own. A blocking call's span ends on its caller's thread; a
    submission's on the binding's event lane (never on the reader), with the
    end time taken when its future completed.

Locks:
    ``_LOAD_LOCK``, once per process, around the import of OpenTelemetry.

Shutdown:
    Nothing to stop: a binding's session duration is recorded when its call
    path closes.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mcpclient._core.version import VERSION
from mcpclient.errors import Error
from mcpclient.transports import StdioTransport

if TYPE_CHECKING:
    from mcpclient._internal.client.state import BindingState

__all__ = [
    "BUCKETS",
    "BindingTelemetry",
    "Traced",
    "disable",
    "enable",
    "enabled",
    "for_binding",
    "with_meta",
]

_T = TypeVar("_T")
_log = logging.getLogger(__name__)

#: The conventions' advised bucket boundaries (seconds) of both histograms.
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

_TARGET_METHODS = frozenset({"tools/call", "prompts/get"})
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
# Span-only attributes: high cardinality, kept off the histograms.
_SPAN_ONLY = ("mcp.session.id", "mcp.resource.uri")

_enabled = True  # the process-wide switch (mcpclient.telemetry)
_LOAD_LOCK = threading.Lock()
_api: _Api | None = None
_loaded = False


def enable() -> None:
    """Record telemetry again (for bindings whose ``Definition.telemetry`` is on)."""
    global _enabled
    _enabled = True


def disable() -> None:
    """Stop recording telemetry process-wide; calls already started finish theirs."""
    global _enabled
    _enabled = False


def enabled() -> bool:
    """Whether the process-wide switch is on."""
    return _enabled


class _Api:
    """The OpenTelemetry API pieces this module uses, loaded once."""

    def __init__(self) -> None:
        from opentelemetry import metrics, propagate, trace  # noqa: PLC0415 - the optional extra
        from opentelemetry.metrics import _internal as metrics_state  # noqa: PLC0415 - as above

        # Loads the providers the environment names (OTEL_PYTHON_*_PROVIDER), if any.
        trace.get_tracer_provider()
        metrics.get_meter_provider()
        self._trace_state: Any = trace
        self._metrics_state: Any = metrics_state
        self.trace = trace
        self.propagate = propagate
        self.kind = trace.SpanKind.CLIENT
        self.error = trace.Status(trace.StatusCode.ERROR)
        self.status = trace.Status
        self.status_code = trace.StatusCode
        # Proxies: a provider the application sets later still receives them.
        self.tracer = trace.get_tracer("mcpclient", VERSION)
        meter = metrics.get_meter("mcpclient", VERSION)
        self.operation = _histogram(
            meter,
            "mcp.client.operation.duration",
            "The duration of an MCP request, from the call until its outcome.",
        )
        self.session = _histogram(
            meter, "mcp.client.session.duration", "The duration of an MCP binding's session."
        )

        self.cache_lookups = meter.create_counter(
            "mcp.client.resource_cache.lookups",
            unit="{lookup}",
            description="read_resource lookups in the binding's result cache, by hit or miss.",
        )

    def configured(self) -> bool:
        """Whether the application has set a tracer or a meter provider.

        Until it does, every span and measurement would be a no-op that still
        costs a call's worth of work; the API's own check reads the
        environment on each call, so this one reads the API's globals (a
        missing one counts as set: record, as the API would).
        """
        return (
            getattr(self._trace_state, "_TRACER_PROVIDER", True) is not None
            or getattr(self._metrics_state, "_METER_PROVIDER", True) is not None
        )


def _histogram(meter: Any, name: str, description: str) -> Any:
    try:
        return meter.create_histogram(
            name, unit="s", description=description, explicit_bucket_boundaries_advisory=BUCKETS
        )
    except TypeError:  # opentelemetry-api before 1.23 knows no advisory boundaries
        return meter.create_histogram(name, unit="s", description=description)


def _load() -> _Api | None:
    global _api, _loaded
    if _loaded:
        return _api
    with _LOAD_LOCK:
        if not _loaded:
            try:
                _api = _Api()
            except ImportError:
                _api = None
            _loaded = True
    return _api


def for_binding(state: BindingState) -> BindingTelemetry | None:
    """The binding's telemetry, or ``None``: off in its definition, or no OpenTelemetry."""
    if not state.definition.telemetry:
        return None
    api = _load()
    return None if api is None else BindingTelemetry(api, state)


def with_meta(params: dict[str, Any] | None, meta: Mapping[str, str]) -> dict[str, Any] | None:
    """``params`` (a copy) with ``meta`` merged into its ``_meta``; as is if ``meta`` is empty."""
    if not meta:
        return params
    out = dict(params or {})
    merged = dict(out.get("_meta") or {})
    merged.update(meta)
    out["_meta"] = merged
    return out


def _error_type(exc: BaseException) -> str:
    if isinstance(exc, Error):
        return str(exc.failure_class)
    if isinstance(exc, concurrent.futures.CancelledError):
        return "cancelled"
    return type(exc).__qualname__


class BindingTelemetry:
    """One binding's span and metric recorder. Thread safety: any thread."""

    __slots__ = ("_api", "_attrs", "_recorded", "_session_started", "_st")

    def __init__(self, api: _Api, state: BindingState) -> None:
        self._api = api
        self._st = state
        transport = state.definition.transport
        attrs: dict[str, Any] = {}
        if isinstance(transport, StdioTransport):
            attrs["network.transport"] = "pipe"
        else:
            attrs["network.transport"] = "tcp"
            url = urllib.parse.urlsplit(transport.url)
            if url.hostname:
                attrs["server.address"] = url.hostname
                try:
                    port = url.port
                except ValueError:
                    port = None
                attrs["server.port"] = port or (443 if url.scheme == "https" else 80)
        self._attrs = attrs
        self._session_started = time.monotonic()
        self._recorded = False

    def _conn_attrs(self, attrs: dict[str, Any]) -> None:
        conn = self._st.conn  # one read; a reconnect may replace it meanwhile
        if conn is None or conn.protocol is None:
            return
        protocol = conn.protocol
        attrs["mcp.protocol.version"] = protocol.version
        if not protocol.modern:
            session_id = getattr(conn.transport, "session_id", None)
            if isinstance(session_id, str):  # a legacy HTTP session (stdio has none)
                attrs["mcp.session.id"] = session_id

    def live(self) -> bool:
        """Whether a call now would be traced (not disabled, and a provider is set).

        The call path asks first and, when not, takes its plain path: no span
        wrapper, no closure, no ``_meta`` merge.
        """
        return _enabled and self._api.configured()

    def start(self, method: str, params: Mapping[str, Any] | None) -> Traced | None:
        """Start a call's span on the caller's thread (``None``: switched off)."""
        if not self.live():
            return None
        api = self._api
        attrs = dict(self._attrs)
        attrs["mcp.method.name"] = method
        name = method
        value = params.get("name") if params is not None else None
        if method in _TARGET_METHODS and isinstance(value, str):
            name = f"{method} {value}"
            if method == "tools/call":
                attrs["gen_ai.tool.name"] = value
                attrs["gen_ai.operation.name"] = "execute_tool"
            else:
                attrs["gen_ai.prompt.name"] = value
        elif method in _URI_METHODS and params is not None and isinstance(params.get("uri"), str):
            attrs["mcp.resource.uri"] = params["uri"]
        self._conn_attrs(attrs)
        span: Any = None
        meta: dict[str, str] = {}
        try:
            # A child of the caller's current context, taken here, on its thread.
            span = api.tracer.start_span(name, kind=api.kind, attributes=attrs)
            api.propagate.inject(meta, context=api.trace.set_span_in_context(span))
        except Exception:
            # A provider's or a propagator's bug must not fail the call.
            _log.warning("OpenTelemetry failed to start a span; the call goes on", exc_info=True)
            if span is not None:
                with contextlib.suppress(Exception):
                    span.end()
            return None
        return Traced(self, span, attrs, meta)

    def run(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        send: Callable[[Mapping[str, str]], _T],
        *,
        tool_error: Callable[[_T], bool] | None = None,
    ) -> _T:
        """``send(meta)`` inside a call's span; ``meta`` is the trace context for ``_meta``."""
        traced = self.start(method, params)
        if traced is None:
            return send({})
        try:
            result = send(traced.meta)
        except BaseException as exc:
            traced.fail(exc)
            raise
        traced.end("tool_error" if tool_error is not None and tool_error(result) else None)
        return result

    def cache_lookup(self, hit: bool) -> None:
        """Count one resource cache lookup (``mcp.cache.result``: hit or miss)."""
        if not self.live():
            return
        try:
            self._api.cache_lookups.add(1, {"mcp.cache.result": "hit" if hit else "miss"})
        except Exception:
            _log.warning("OpenTelemetry failed to count a cache lookup", exc_info=True)

    def session_closed(self) -> None:
        """Record the binding's session duration (once; at its first close)."""
        if self._recorded or not self.live():
            return
        self._recorded = True
        attrs = dict(self._attrs)
        st = self._st
        protocol = st.protocol
        if protocol is not None:
            attrs["mcp.protocol.version"] = protocol.version
        failure = st.failure
        if failure is not None:
            attrs["error.type"] = str(failure.failure_class)
        try:
            self._api.session.record(time.monotonic() - self._session_started, attrs)
        except Exception:
            _log.warning("OpenTelemetry failed to record a session", exc_info=True)


class Traced:
    """One call's span, until it ends. Thread safety: ended once, by one thread."""

    __slots__ = ("_attrs", "_owner", "_span", "_started", "meta")

    def __init__(
        self, owner: BindingTelemetry, span: Any, attrs: dict[str, Any], meta: dict[str, str]
    ) -> None:
        self._owner = owner
        self._span = span
        self._attrs = attrs
        #: The trace context fields the request's ``_meta`` carries.
        self.meta = meta
        self._started = time.monotonic()

    def fail(self, exc: BaseException, ended: float | None = None) -> None:
        """End the span with the error ``exc`` raised."""
        message = exc.message if isinstance(exc, Error) else str(exc)
        if isinstance(exc, Error) and exc.code is not None:  # the server's JSON-RPC error
            self._attrs["rpc.response.status_code"] = str(exc.code)
        self.end(_error_type(exc), message, ended)

    def end(
        self, error_type: str | None = None, message: str = "", ended: float | None = None
    ) -> None:
        """End the span (``error_type``: failed) and record its duration; never raises."""
        try:
            self._end(error_type, message, ended)
        except Exception:
            _log.warning("OpenTelemetry failed to end a span", exc_info=True)

    def _end(self, error_type: str | None, message: str, ended: float | None) -> None:
        owner = self._owner
        api = owner._api
        attrs = self._attrs
        span = self._span
        if "mcp.protocol.version" not in attrs:
            owner._conn_attrs(attrs)  # it connected while the call waited
            for key in ("mcp.protocol.version", "mcp.session.id"):
                if key in attrs:
                    span.set_attribute(key, attrs[key])
        if error_type is not None:
            attrs["error.type"] = error_type
            span.set_attribute("error.type", error_type)
            if "rpc.response.status_code" in attrs:
                span.set_attribute("rpc.response.status_code", attrs["rpc.response.status_code"])
            span.set_status(api.status(api.status_code.ERROR, message or None))
        now = time.monotonic()
        ended = now if ended is None else ended
        # The span's clock is the wall clock: shift its end back by the lane's delay.
        span.end(end_time=time.time_ns() - int((now - ended) * 1e9))
        api.operation.record(
            ended - self._started, {k: v for k, v in attrs.items() if k not in _SPAN_ONLY}
        )

    def follow(self, future: concurrent.futures.Future[Any]) -> None:
        """End the span when ``future`` (a submission) completes, off the library's threads."""
        stamp: list[float] = []
        # Runs first, on the completing thread: the end time, nothing else.
        concurrent.futures.Future.add_done_callback(
            future, lambda _f: stamp.append(time.monotonic())
        )
        future.add_done_callback(lambda f: self._settled(f, stamp[0] if stamp else None))

    def _settled(self, future: concurrent.futures.Future[Any], ended: float | None) -> None:
        if future.cancelled():
            self.end("cancelled", "the future was cancelled", ended)
            return
        exc = future.exception()
        if exc is not None:
            self.fail(exc, ended)
            return
        is_error = getattr(future.result(), "is_error", False)
        self.end("tool_error" if is_error else None, "", ended)
