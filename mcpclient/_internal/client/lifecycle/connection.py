"""One live connection: a transport, its JSON-RPC session, and what it negotiated.

:func:`open_connection` starts the transport and negotiates the era
(docs/architecture.md, "Era negotiation"): ``auto`` runs the negotiation of
``session/negotiation.py`` (the probe first, ``initialize`` beside it when
the probe is not answered within min(5 s, half the budget), every late
answer read for what it says), and restarts a stdio server that died after
the probe once. The detected era is cached per server for the life of the
process; a failed assumption re-probes.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from mcpclient._core import watcher
from mcpclient._core.deadline import now
from mcpclient._core.limits import bound
from mcpclient._internal.session import protocol as proto
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.session.headers import EraHeaders
from mcpclient._internal.session.negotiation import Negotiation
from mcpclient._internal.session.rpc import RemoteError, RpcSession
from mcpclient._internal.transport.stdio import StdioProcess, build_child_env
from mcpclient._internal.transport.stdio_backend import stdio_process
from mcpclient._internal.wire.session import required_capabilities
from mcpclient.calls import CancelToken
from mcpclient.compat import Tolerance
from mcpclient.definition import LEGACY_VERSIONS, MODERN_VERSIONS, Definition
from mcpclient.errors import (
    ConfigError,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    ProtocolError,
    RequestCancelledError,
    ToolUnavailableError,
)
from mcpclient.transports import LegacySSETransport, StdioTransport, StreamableHTTPTransport

if TYPE_CHECKING:
    from mcpclient._internal.transport.legacy_sse import LegacySSEConnection
    from mcpclient._internal.transport.streamable_http import StreamableHTTPConnection

__all__ = ["Connection", "Hooks", "MethodNotFoundError", "open_connection", "translate_remote"]

#: How long the probe waits alone before ``initialize`` is sent beside it.
FALLBACK_AFTER = 5.0

_log = logging.getLogger(__name__)

_era_lock = threading.Lock()  # guards _era_cache
_era_cache: dict[tuple[Any, ...], str] = {}


@attrs.frozen
class Hooks:
    """Callbacks a connection's session reports to (each only queues work)."""

    post_progress: Callable[[Callable[[], None]], Any]
    on_notification: Callable[[str, dict[str, Any]], None]
    on_request: Callable[[Any, str, dict[str, Any], CancelToken], None] | None
    on_lost: Callable[[Connection, Error], None]


class Connection:
    """A negotiated connection. Thread safety: any thread may call :meth:`request`."""

    def __init__(
        self,
        transport: StdioProcess | StreamableHTTPConnection,
        session: RpcSession,
        binding: str,
        kind: str,
    ) -> None:
        self.transport = transport
        self.session = session
        self.binding = binding
        self.protocol: proto.Protocol | None = None
        #: The transport in use, as ``Transport.kind`` names it: "sse" after a
        #: Streamable HTTP URL fell back to HTTP+SSE.
        self.kind = kind
        #: The era cache's key for this server (set by :func:`open_connection`).
        self.era_key: tuple[Any, ...] | None = None

    def request(self, method: str, params: dict[str, Any] | None, ctx: CallContext) -> Any:
        """Send one request shaped for the negotiated era; translate server errors.

        ``ctx`` goes down to the session whole; a version retry carries the
        same one (its deadline, cancel token and the call's own headers).

        Modern era: a -32022 whose ``data.supported`` names a version this
        client speaks is sent once more at the highest such version (even the
        one just sent: a rolling deploy may reach an older instance once),
        within the same deadline; the binding then uses that version.

        Over HTTP, an answer that says the server now speaks the other era
        (see :meth:`_era_moved`: a server at one URL redeployed) fails the
        request and loses the connection, so the binding reconnects and
        negotiates the server's new era; the era remembered for the URL is
        forgotten.

        Raises:
            Error: classified; a JSON-RPC error becomes ``ProtocolError``.
        """
        protocol = self.protocol
        assert protocol is not None
        for attempt in range(2):
            try:
                return self.session.call(method, protocol.params(params), ctx)
            except RemoteError as exc:
                protocol = self.version_to_retry(exc, protocol, retried=attempt > 0, op=ctx.op)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def version_to_retry(
        self, exc: RemoteError, protocol: proto.Protocol, *, retried: bool, op: str
    ) -> proto.Protocol:
        """The era to send a refused request again in, or raise what the refusal means.

        The one rule of :meth:`request`, also for a submitted call that sends
        without blocking: a modern -32022 naming a common version, not yet
        retried, is sent again (the server refused before running anything).

        Raises:
            Error: the refusal translated (``unsupported_protocol`` once retried).
        """
        if self._era_moved(exc, protocol):
            raise self._era_changed(exc, protocol, op) from None
        if exc.code != proto.UNSUPPORTED_VERSION or not protocol.modern:
            raise translate_remote(exc, self.binding, op) from None
        common = proto.common_version(proto.supported_versions(exc.data), MODERN_VERSIONS)
        if common is None or retried:
            raise proto.version_refused(
                exc.data,
                binding=self.binding,
                op=op,
                sent=protocol.version,
                retried=common is not None,
                ours=MODERN_VERSIONS,
            ) from None
        return self._use_version(protocol, common)

    def _era_moved(self, exc: RemoteError, protocol: proto.Protocol) -> bool:
        """Whether ``exc`` says this HTTP server now speaks the other era.

        A legacy session's request refused with a modern era's code (-32022,
        -32020), or with -32602 as an HTTP 400 (a 2026-07-28 server refusing
        a request without its ``_meta`` envelope; a legacy server answers a
        bad request's -32602 with 200); a modern request refused with a
        -32022 that lists only legacy versions this client speaks. Never over
        stdio: one process keeps its era.
        """
        if isinstance(self.transport, StdioProcess):
            return False
        code = exc.code
        if protocol.modern:
            if code != proto.UNSUPPORTED_VERSION:
                return False
            supported = proto.supported_versions(exc.data)
            return (
                proto.common_version(supported, MODERN_VERSIONS) is None
                and proto.common_version(supported, LEGACY_VERSIONS) is not None
            )
        if code in (proto.UNSUPPORTED_VERSION, proto.HEADER_MISMATCH):
            return True
        return code == INVALID_PARAMS and exc.http_status == 400

    def _era_changed(self, exc: RemoteError, protocol: proto.Protocol, op: str) -> Error:
        """Lose this connection to a server whose era changed; the caller's error."""
        era = "2026-07-28 (modern)" if not protocol.modern else "2025 (legacy)"
        status = f" as HTTP {exc.http_status}" if exc.http_status else ""
        error = ProtocolError(
            f"the server no longer speaks protocol {protocol.version}: it refused {op} with"
            f" {exc.code}{status} ({bound(exc.message, 200)}), as a server of the {era} era"
            " does; the binding reconnects to negotiate its new era",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=self.binding,
            op=op,
        )
        error.code = exc.code
        if self.era_key is not None:
            with _era_lock:
                _era_cache.pop(self.era_key, None)  # the next connect probes afresh
        self.session.lose(error)
        return error

    def _use_version(self, protocol: proto.Protocol, version: str) -> proto.Protocol:
        """Switch this connection to ``version`` (kept for its later requests)."""
        if version == protocol.version:
            return protocol
        protocol = attrs.evolve(protocol, version=version)
        self.protocol = protocol
        if not isinstance(self.transport, StdioProcess):
            self.transport.protocol_version = version
        return protocol

    def close(self, timeout: float | None = None) -> None:
        """Fail what is pending (``shutdown``) and stop the server."""
        self.session.close(timeout)


class URLElicitationRequiredError(ProtocolError):
    """2025-11-25's -32042: the server wants URL elicitations done, then a retry."""

    def __init__(self, message: str, elicitations: list[Any], *, binding: str, op: str) -> None:
        super().__init__(message, binding=binding, op=op)
        self.elicitations = elicitations


URL_ELICITATION_REQUIRED = -32042
INVALID_PARAMS = -32602
#: Resource not found, up to 2025-11-25 (2026-07-28 answers -32602).
RESOURCE_NOT_FOUND = -32002
#: The ops whose -32602 may mean "no such thing", and the thing.
_NOT_FOUND_OPS = {"get_prompt": "prompt", "read_resource": "resource"}
# How servers word it: "Unknown prompt: x" (Python SDK), "Prompt x not found"
# (TypeScript SDK), "Resource not found: x"...
_NOT_FOUND_TEXT = re.compile(
    r"not\s+found|unknown\s+(prompt|resource)|no\s+such|does\s+not\s+exist", re.IGNORECASE
)
METHOD_NOT_FOUND = -32601


class MethodNotFoundError(ProtocolError):
    """-32601: the server does not implement the method (``unsupported_protocol``).

    Its own type so that discovery can tell a missing list method from a
    failing one (the ``missing_list_method`` tolerance).
    """

    classes: tuple[FailureClass, ...] = (FailureClass.UNSUPPORTED_PROTOCOL,)


def translate_remote(exc: RemoteError, binding: str, op: str) -> Error:
    """A JSON-RPC error response as a classified error carrying the response's ``code``."""
    error = _classified(exc, binding, op)
    error.code = exc.code
    return error


def _classified(exc: RemoteError, binding: str, op: str) -> Error:
    if exc.code == URL_ELICITATION_REQUIRED:
        data = exc.data if isinstance(exc.data, dict) else {}
        items = data.get("elicitations")
        return URLElicitationRequiredError(
            "the server asks for URL elicitations before this request can run",
            items[:16] if isinstance(items, list) else [],
            binding=binding,
            op=op,
        )
    if exc.code == proto.MISSING_CAPABILITY:
        required = required_capabilities(exc.data)
        return ProtocolError(
            f"the server requires client capabilities this binding did not declare:"
            f" {str(required)[:200]}",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=binding,
            op=op,
        )
    if exc.code == proto.UNSUPPORTED_VERSION:
        return ProtocolError(
            "the server no longer supports the negotiated protocol version",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=binding,
            op=op,
        )
    if exc.code == METHOD_NOT_FOUND:
        return MethodNotFoundError(
            f"the server does not implement {op}: {exc.message}", binding=binding, op=op
        )
    if op in _NOT_FOUND_OPS and (
        exc.code == RESOURCE_NOT_FOUND
        or (exc.code == INVALID_PARAMS and _NOT_FOUND_TEXT.search(exc.message[:500]))
    ):
        # The spec answers an unknown prompt or resource with -32602 (and,
        # before 2026-07-28, a resource with -32002): the server's text is
        # what tells "not found" from a malformed request.
        return ToolUnavailableError(
            f"the server has no such {_NOT_FOUND_OPS[op]} ({exc.code}: {exc.message})",
            failure_class=FailureClass.NOT_FOUND,
            binding=binding,
            op=op,
        )
    if exc.code is None:
        return ProtocolError(
            f"the server answered an error without a code: {exc.message}", binding=binding, op=op
        )
    return ProtocolError(
        f"the server answered error {exc.code}: {exc.message}", binding=binding, op=op
    )


def _cache_key(
    transport: StdioTransport | StreamableHTTPTransport | LegacySSETransport,
) -> tuple[Any, ...]:
    if isinstance(transport, StreamableHTTPTransport | LegacySSETransport):
        return ("http", transport.url)
    return (
        "stdio",
        transport.command,
        transport.args,
        transport.cwd,
        transport.env,
        transport.inherit_env,
    )


def _refused_post(exc: Error) -> bool:
    """Whether ``exc`` says the server refused the initialize POST (HTTP 400, 404, 405)."""
    if exc.failure_class is not FailureClass.REMOTE_HTTP:
        return False
    # The public error carries the transport's HTTPStatusError as its cause.
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return getattr(cause, "status", None) in (400, 404, 405)


def _fallback_instant(deadline: float) -> float:
    """When ``initialize`` joins an unanswered probe: after 5 s at most, and
    never later than half the budget left, so a silent legacy server still
    has time for it. The probe itself waits for the whole budget."""
    start = now()
    return min(deadline, start + FALLBACK_AFTER, start + (deadline - start) / 2)


def _spawn(
    definition: Definition, hooks: Hooks, deadline: float, *, http_sse: bool = False
) -> Connection:
    """Start the transport: a child process, or an HTTP connection (``http_sse``: HTTP+SSE)."""
    transport = definition.transport
    binding = definition.name
    limits = definition.limits
    process: StdioProcess | StreamableHTTPConnection
    sse: LegacySSEConnection | None = None
    if isinstance(transport, StdioTransport):
        process = stdio_process(
            command=transport.command,
            args=transport.args,
            env=build_child_env(transport.inherit_env, transport.env_mapping),
            cwd=transport.cwd,
            shutdown_grace=transport.shutdown_grace,
            max_frame_bytes=limits.max_frame_bytes,
            max_stderr_bytes=limits.max_stderr_bytes,
            binding=binding,
            max_log_bytes=limits.max_log_message_bytes,
        )
        process.start()
    elif isinstance(transport, StreamableHTTPTransport | LegacySSETransport):
        # Imported here: the HTTP stack (requests, urllib3) costs ~60 ms and
        # ~14 MiB that a stdio-only program should not pay.
        from mcpclient._internal.transport.legacy_sse import (  # noqa: PLC0415
            LegacySSEConnection,
        )
        from mcpclient._internal.transport.streamable_http import (  # noqa: PLC0415
            StreamableHTTPConnection,
        )

        kind: type[StreamableHTTPConnection] = StreamableHTTPConnection
        if http_sse or isinstance(transport, LegacySSETransport):
            kind = LegacySSEConnection
        process = kind(
            transport,
            binding=binding,
            max_body_bytes=limits.max_body_bytes,
            max_frame_bytes=limits.max_frame_bytes,
            pool_size=limits.max_concurrent_requests,
            schedule=watcher.schedule,
        )
        if isinstance(process, LegacySSEConnection):
            sse = process
    else:
        raise ConfigError(
            f"the {transport.kind} transport is not available in this version",
            binding=binding,
            op="connect",
        )
    holder: list[Connection] = []
    session = RpcSession(
        process,
        binding=binding,
        post=hooks.post_progress,
        on_notification=hooks.on_notification,
        on_request=hooks.on_request,
        on_lost=lambda exc: hooks.on_lost(holder[0], exc) if holder else None,
    )
    conn = Connection(process, session, binding, "sse" if sse is not None else transport.kind)
    holder.append(conn)
    session.start()
    if sse is not None:
        try:
            sse.start(deadline)
        except BaseException:
            conn.close(0.5)
            raise
    return conn


def _settle_http(conn: Connection) -> None:
    """After negotiation over HTTP: headers, cancellation style, the GET stream."""
    protocol = conn.protocol
    transport = conn.transport
    if protocol is None or isinstance(transport, StdioProcess):
        return
    transport.protocol_version = protocol.version
    if protocol.modern:
        conn.session.cancel_by_abort = True
    else:
        session = conn.session
        transport.open_server_stream(on_lost=session.lose)


def open_connection(
    definition: Definition,
    hooks: Hooks,
    *,
    deadline: float,
    cancel: CancelToken | None,
) -> Connection:
    """Start the server and negotiate; on failure nothing is left running.

    ``protocol="auto"`` runs the era negotiation (``session/negotiation.py``;
    docs/architecture.md, "Era negotiation"); a pinned version, ``legacy``
    and HTTP+SSE run their one handshake. A stdio server that died after
    the probe was sent to it is restarted once, straight to ``initialize``,
    and its era remembered, so that happens once per server command in the
    life of the process.

    Raises:
        Error: classified (``startup_timeout``, ``cancelled``, ``transport_closed``,
            ``server_protocol``, ``unsupported_protocol``, ``invalid_config``).
    """
    mode = definition.protocol
    transport = definition.transport
    http_transport = isinstance(transport, StreamableHTTPTransport)
    key = _cache_key(transport)
    with _era_lock:
        cached = _era_cache.get(key)
    # HTTP+SSE is 2024-11-05's transport: the handshake is the only era.
    legacy_only = (
        mode == "legacy" or mode in LEGACY_VERSIONS or isinstance(transport, LegacySSETransport)
    )
    # A Streamable HTTP URL may turn out to be a 2024-11-05 HTTP+SSE server
    # (the spec's backwards-compatibility procedure): allowed by the profile.
    may_fall_back = (
        http_transport
        and (mode in ("auto", "legacy") or mode == LEGACY_VERSIONS[0])
        and definition.profile.permits(Tolerance.LEGACY_SSE)
    )
    use_sse = may_fall_back and cached == "sse"
    probe_first = cached != "legacy"
    restarted = False
    while True:
        if cancel is not None and cancel.cancelled:
            raise RequestCancelledError(
                "connect was cancelled", binding=definition.name, op="connect"
            )
        if now() >= deadline:
            raise DeadlineExceededError(
                "startup ran out of time",
                failure_class=FailureClass.STARTUP_TIMEOUT,
                binding=definition.name,
                op="connect",
            )
        conn = _spawn(definition, hooks, deadline, http_sse=use_sse)
        conn.era_key = key
        negotiation: Negotiation | None = None
        try:
            if legacy_only or use_sse:
                conn.protocol = proto.initialize(
                    conn.session,
                    client_caps=definition.capabilities,
                    extensions=definition.extensions,
                    deadline=deadline,
                    cancel=cancel,
                    binding=definition.name,
                    offer=mode if mode in LEGACY_VERSIONS else proto.LATEST_LEGACY,
                    pinned=mode in LEGACY_VERSIONS,
                )
            elif mode in MODERN_VERSIONS:
                if http_transport:
                    conn.session.era_headers = EraHeaders(mode, modern=True)
                conn.protocol = proto.probe_modern(
                    conn.session,
                    client_caps=definition.capabilities,
                    extensions=definition.extensions,
                    deadline=deadline,
                    cancel=cancel,
                    binding=definition.name,
                    log_level=None,
                    pinned=True,
                )
            else:
                negotiation = Negotiation(
                    conn.session,
                    client_caps=definition.capabilities,
                    extensions=definition.extensions,
                    binding=definition.name,
                    deadline=deadline,
                    cancel=cancel,
                    fallback_at=_fallback_instant(deadline),
                )
                conn.protocol = negotiation.run(probe_first=probe_first)
        except ConnectionLostError:
            conn.close(0.5)
            # A legacy server may exit (or close stdout) when it reads the
            # modern probe, at once or at the next line: restart it once and
            # go straight to initialize.
            probed = negotiation is not None and negotiation.probe_sent
            if probed and not restarted and not http_transport:
                restarted = True
                probe_first = False
                _log.warning(
                    "binding %s: the server exited after the era probe (server/discover);"
                    " restarting it with the legacy initialize handshake (remembered for"
                    " this server command while the process lives)",
                    definition.name,
                )
                continue
            raise
        except Error as exc:
            conn.close(0.5)
            if may_fall_back and not use_sse and _refused_post(exc):
                # The server refused the POST (400/404/405): try the GET
                # stream of the old HTTP+SSE transport on the same URL.
                use_sse = True
                continue
            raise
        except BaseException:
            conn.close(0.5)
            raise
        _settle_http(conn)
        if mode == "auto" or use_sse:  # a pinned version says nothing about what auto finds
            with _era_lock:
                _era_cache[key] = "sse" if use_sse else conn.protocol.era
        return conn
