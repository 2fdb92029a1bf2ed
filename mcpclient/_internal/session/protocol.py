"""Era negotiation and the per-request shape of each protocol era.

The legacy era (2024-11-05 … 2025-11-25) opens with an ``initialize``
handshake; the modern era (2026-07-28) has none: every request carries
``_meta`` with the protocol version, the client's capabilities and its
identity. :class:`Protocol` holds what was negotiated and shapes requests
accordingly, so nothing above the session needs to know the era.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from mcpclient._core.limits import bound
from mcpclient._internal.session.context import startup_context
from mcpclient._internal.session.headers import EraHeaders
from mcpclient._internal.session.rpc import RemoteError, RpcSession
from mcpclient._internal.wire.extensions import negotiated as negotiated_extensions
from mcpclient._internal.wire.session import (
    CLIENT_INFO,
    client_capabilities,
    initialize_params,
    read_discover,
    read_initialize,
)
from mcpclient._internal.wire.tasks import (
    ServerTasks,
    server_tasks,
)
from mcpclient.calls import CancelToken
from mcpclient.catalog import ServerCapabilities, ServerIdentity
from mcpclient.definition import (
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    TASKS_EXTENSION,
    ClientCapabilities,
    Extension,
    LogLevel,
)
from mcpclient.errors import (
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    ProtocolError,
)

__all__ = [
    "CLIENT_INFO",
    "LATEST_LEGACY",
    "MODERN",
    "LegacyOffer",
    "ModernRefusalError",
    "NotModernError",
    "Protocol",
    "discover_refused",
    "initialize",
    "initialize_refused",
    "initialized",
    "probe_modern",
    "read_discover_answer",
    "refused_over_http",
]

MODERN = MODERN_VERSIONS[-1]
LATEST_LEGACY = LEGACY_VERSIONS[-1]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"

UNSUPPORTED_VERSION = -32022
INVALID_PARAMS = -32602
MISSING_CAPABILITY = -32021
HEADER_MISMATCH = -32020
MODERN_ERRORS = frozenset({UNSUPPORTED_VERSION, MISSING_CAPABILITY, HEADER_MISMATCH})


class NotModernError(Exception):
    """The probe says the server is not a modern one (fall back to the handshake)."""


def _raw_capabilities(result: Any) -> Any:
    """The server's capabilities object as sent (its tasks support is read from it)."""
    return result.get("capabilities") if isinstance(result, Mapping) else None


@attrs.frozen(kw_only=True)
class Protocol:
    """What one connection negotiated, and how its requests are shaped.

    Thread safety: immutable.
    """

    era: str  # "modern" or "legacy"
    version: str
    server: ServerIdentity
    capabilities: ServerCapabilities
    instructions: str
    client_caps: dict[str, Any]
    log_level: LogLevel | None = None  # modern: per-request opt-in to logs
    tasks: ServerTasks = ServerTasks()  # what the server declared of tasks
    #: The extensions in use: the host opted in and the server declared them, sorted.
    extensions: tuple[str, ...] = ()

    def uses(self, identifier: str) -> bool:
        """Whether the extension ``identifier`` is in use on this connection."""
        return identifier in self.extensions

    @property
    def modern(self) -> bool:
        """Whether this is the stateless 2026-07-28 era."""
        return self.era == "modern"

    def params(self, params: dict[str, Any] | None, *, tasks: bool = True) -> dict[str, Any] | None:
        """``params`` with the modern era's per-request ``_meta`` added.

        ``tasks=False``: the request does not declare the tasks extension, so
        the server may not answer it with a task (a submission cannot drive one).
        """
        if not self.modern:
            return params
        out = dict(params or {})
        meta = dict(out.get("_meta") or {})
        meta[META_VERSION] = self.version
        meta[META_CAPABILITIES] = self.client_caps if tasks else without_tasks(self.client_caps)
        meta[META_CLIENT_INFO] = CLIENT_INFO
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = str(self.log_level)
        out["_meta"] = meta
        return out


def without_tasks(caps: dict[str, Any]) -> dict[str, Any]:
    """The client capabilities ``caps`` without the tasks extension (the same object if absent)."""
    declared = caps.get("extensions")
    if not isinstance(declared, dict) or TASKS_EXTENSION not in declared:
        return caps
    rest = {k: v for k, v in declared.items() if k != TASKS_EXTENSION}
    out = {k: v for k, v in caps.items() if k != "extensions"}
    if rest:
        out["extensions"] = rest
    return out


def modern_meta(caps: dict[str, Any], version: str = MODERN) -> dict[str, Any]:
    """The ``_meta`` every modern request carries."""
    return {META_VERSION: version, META_CAPABILITIES: caps, META_CLIENT_INFO: CLIENT_INFO}


def supported_versions(data: Any) -> list[str] | None:
    """``data.supported`` of a version error, or None when it names no list."""
    supported = data.get("supported") if isinstance(data, Mapping) else None
    if not isinstance(supported, list):
        return None
    return [v for v in supported[:64] if isinstance(v, str)]


def common_version(supported: list[str] | None, ours: tuple[str, ...]) -> str | None:
    """The highest of ``ours`` (oldest first) that ``supported`` lists, or None."""
    if not supported:
        return None
    offered = set(supported)
    return next((v for v in reversed(ours) if v in offered), None)


def version_refused(
    data: Any, *, binding: str, op: str, sent: str, retried: bool, ours: tuple[str, ...]
) -> ProtocolError:
    """The classified error of a version refusal that is not retried."""
    named = ", ".join(bound(v, 40) for v in (supported_versions(data) or [])[:8]) or "none"
    if retried:
        message = (
            f"the server refused protocol version {sent} again after listing it as"
            f" supported (supported: {named})"
        )
    else:
        message = (
            f"the server supports no protocol version this client speaks"
            f" (supported: {named}; this client: {', '.join(ours)})"
        )
    return ProtocolError(
        message, failure_class=FailureClass.UNSUPPORTED_PROTOCOL, binding=binding, op=op
    )


def probe_modern(
    session: RpcSession,
    *,
    client_caps: ClientCapabilities,
    deadline: float,
    cancel: CancelToken | None,
    binding: str,
    log_level: LogLevel | None,
    pinned: bool,
    extensions: tuple[Extension, ...] = (),
) -> Protocol:
    """Ask ``server/discover``; return the modern protocol, or raise :class:`NotModernError`.

    A recognized modern error (-32022 with ``data.supported``) means modern:
    it never falls back. It is retried once, within ``deadline``, at the
    highest version both sides support, even the one just sent (a rolling
    deploy may reach an older instance once). With ``pinned`` any failure is
    final.

    Raises:
        NotModernError: no modern answer (legacy server), and not pinned.
        ProtocolError: modern, but no version in common, or refused again
            (``unsupported_protocol``).
    """
    version = MODERN
    caps = client_capabilities(client_caps, version, extensions)
    retried = False
    # A legacy server never saw a request it knows: nothing to cancel on the wire.
    ctx = startup_context("server/discover", deadline, cancel, cancel_on_wire=False)
    while True:
        try:
            result = session.call("server/discover", {"_meta": modern_meta(caps, version)}, ctx)
        except RemoteError as exc:
            retry = discover_refused(
                exc, sent=version, retried=retried, pinned=pinned, binding=binding
            )
            if not isinstance(retry, str):
                raise NotModernError(str(exc)) from None
            retried = True
            version = retry
            caps = client_capabilities(client_caps, version, extensions)
            continue
        except DeadlineExceededError:
            if pinned:
                raise
            raise NotModernError("no answer to server/discover") from None
        except ProtocolError as exc:
            if pinned or not refused_over_http(exc):
                raise
            raise NotModernError(exc.message) from None
        answer = read_discover_answer(
            result,
            sent=version,
            client_caps=client_caps,
            extensions=extensions,
            binding=binding,
            log_level=log_level,
            pinned=pinned,
        )
        if isinstance(answer, Protocol):
            return answer
        if isinstance(answer, LegacyOffer):
            raise NotModernError(f"the server lists only legacy versions ({answer.version})")
        raise NotModernError("not a discover result")


def refused_over_http(exc: ProtocolError) -> bool:
    """Whether ``exc`` is an HTTP refusal without a JSON-RPC error (400, 404, 405...).

    Over HTTP a legacy server answers the probe so.
    """
    return exc.failure_class is FailureClass.REMOTE_HTTP


def discover_refused(
    exc: RemoteError, *, sent: str, retried: bool, pinned: bool, binding: str
) -> str | LegacyOffer | None:
    """What a JSON-RPC error answer to ``server/discover`` means.

    A -32022 whose ``data.supported`` names a modern version this client
    speaks means modern: the version to send once more (the highest common
    one, even the one just sent: a rolling deploy may reach an older
    instance once). One that names only legacy versions this client speaks
    is a :class:`LegacyOffer` (never when ``pinned``). Any other error is
    ``None``: not a modern server.

    Raises:
        ProtocolError: -32022 refused again, or naming no version in common
            (``unsupported_protocol``); with ``pinned``, any other error
            (``server_protocol``).
    """
    if exc.code == UNSUPPORTED_VERSION:
        supported = supported_versions(exc.data)
        common = common_version(supported, MODERN_VERSIONS)
        if common is not None and not retried:
            return common
        legacy = (
            None if pinned or common is not None else common_version(supported, LEGACY_VERSIONS)
        )
        if legacy is not None:
            return LegacyOffer(legacy)
        raise version_refused(
            exc.data,
            binding=binding,
            op="server/discover",
            sent=sent,
            retried=common is not None,
            ours=MODERN_VERSIONS,
        ) from None
    if pinned:
        raise ProtocolError(
            f"the modern era's handshake (server/discover) failed: {exc.message}",
            binding=binding,
            op="server/discover",
        ) from None
    return None


@attrs.frozen
class LegacyOffer:
    """A modern answer that points to the handshake: offer ``version`` to ``initialize``."""

    version: str


def read_discover_answer(
    result: Any,
    *,
    sent: str,
    client_caps: ClientCapabilities,
    extensions: tuple[Extension, ...],
    binding: str,
    log_level: LogLevel | None,
    pinned: bool,
) -> Protocol | LegacyOffer | None:
    """What a ``server/discover`` result means.

    A :class:`Protocol` when it lists a modern version this client speaks
    (``sent`` when listed, else the highest common one); a
    :class:`LegacyOffer` when it lists only legacy versions this client
    speaks (the schema: "the client should choose a version from this
    list"; the Go SDK's stateful HTTP handler answers so); ``None`` when it
    is not a discover result at all (a legacy server's answer).

    Raises:
        ProtocolError: it lists no version this client speaks, or (``pinned``)
            it is not a modern answer (``unsupported_protocol`` /
            ``server_protocol``).
    """
    negotiated = read_discover(result)
    if negotiated is None:
        if pinned:
            raise ProtocolError(
                "the modern era's handshake (server/discover) answered no supportedVersions",
                binding=binding,
                op="server/discover",
            )
        return None
    listed = [v for v in negotiated.versions[:64] if isinstance(v, str)]
    offered = [v for v in listed if v in MODERN_VERSIONS]
    if not offered:
        common = None if pinned else common_version(listed, LEGACY_VERSIONS)
        if common is not None:
            return LegacyOffer(common)
        named = ", ".join(bound(v, 40) for v in listed[:8]) or "none"
        raise ProtocolError(
            f"the server supports no {'modern ' if pinned else ''}protocol version this"
            f" client speaks (supported: {named})",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=binding,
            op="server/discover",
        )
    version = sent if sent in offered else offered[-1]
    return Protocol(
        era="modern",
        version=version,
        server=negotiated.server,
        capabilities=negotiated.capabilities,
        instructions=negotiated.instructions,
        client_caps=client_capabilities(client_caps, version, extensions),
        log_level=log_level,
        extensions=negotiated_extensions(extensions, negotiated.capabilities.extensions),
        tasks=server_tasks(_raw_capabilities(result), modern=True),
    )


def initialize(
    session: RpcSession,
    *,
    client_caps: ClientCapabilities,
    deadline: float,
    cancel: CancelToken | None,
    binding: str,
    offer: str = LATEST_LEGACY,
    pinned: bool = False,
    extensions: tuple[Extension, ...] = (),
) -> Protocol:
    """Run the legacy ``initialize`` handshake and send ``notifications/initialized``.

    A refusal that lists the versions the server supports (``data.supported``,
    with -32022 or the -32602 of the 2025-11-25 spec's example) is retried once,
    within ``deadline``, at the highest legacy version both sides support (the
    pinned ``offer`` only, when ``pinned``).

    Raises:
        ProtocolError: the server refused, or answered a version this client
            does not speak, or lists none in common (``unsupported_protocol``).
            A refusal that names a modern version this client speaks is a
            :class:`ModernRefusalError`.
    """
    retried = False
    # initialize must never be cancelled on the wire (spec).
    ctx = startup_context("initialize", deadline, cancel, cancel_on_wire=False)
    while True:
        caps = client_capabilities(client_caps, offer, extensions)
        try:
            result = session.call("initialize", initialize_params(offer, caps), ctx)
            break
        except RemoteError as exc:
            retry = initialize_refused(
                exc, offer=offer, pinned=pinned, retried=retried, binding=binding
            )
            retried = True
            offer = retry
    return initialized(
        session,
        result,
        offer=offer,
        pinned=pinned,
        client_caps=client_caps,
        extensions=extensions,
        binding=binding,
    )


class ModernRefusalError(ProtocolError):
    """``initialize`` refused with a version list naming a modern version this client speaks.

    The server serves (or, having read a modern request first, is locked to)
    the modern era on this connection: the negotiation continues there.
    """

    def __init__(self, message: str, version: str, *, binding: str) -> None:
        super().__init__(message, binding=binding, op="initialize")
        self.version = version


def initialize_refused(
    exc: RemoteError, *, offer: str, pinned: bool, retried: bool, binding: str
) -> str:
    """What an ``initialize`` refusal means: the version to offer once more, or raise.

    Raises:
        ModernRefusalError: the refusal names a modern version this client speaks.
        ProtocolError: no version in common (``unsupported_protocol``), refused
            again, or refused outright (``server_protocol``).
    """
    supported = (
        supported_versions(exc.data) if exc.code in (UNSUPPORTED_VERSION, INVALID_PARAMS) else None
    )
    ours = (offer,) if pinned else LEGACY_VERSIONS
    common = common_version(supported, ours)
    if common is not None and not retried:
        return common
    modern = common_version(supported, MODERN_VERSIONS)
    if modern is not None and not pinned:
        raise ModernRefusalError(
            f"the server refused initialize: it serves protocol version {modern}",
            modern,
            binding=binding,
        )
    if supported and not any(v in MODERN_VERSIONS for v in supported):
        raise version_refused(
            exc.data,
            binding=binding,
            op="initialize",
            sent=offer,
            retried=common is not None,
            ours=ours,
        ) from None
    raise ProtocolError(
        f"the server refused initialize: {exc.message}", binding=binding, op="initialize"
    ) from exc


def initialized(
    session: RpcSession,
    result: Any,
    *,
    offer: str,
    pinned: bool,
    client_caps: ClientCapabilities,
    extensions: tuple[Extension, ...],
    binding: str,
) -> Protocol:
    """Read an ``initialize`` result and complete the handshake (``notifications/initialized``).

    Raises:
        ProtocolError: no result object, or a version this client does not
            speak (``unsupported_protocol``).
    """
    if not isinstance(result, Mapping):
        raise ProtocolError(
            "initialize returned no result object", binding=binding, op="initialize"
        )
    negotiated = read_initialize(result)
    version = negotiated.versions
    if (
        not isinstance(version, str)
        or version not in LEGACY_VERSIONS
        or (pinned and version != offer)
    ):
        raise ProtocolError(
            f"the server answered initialize with protocol version {str(version)[:40]!r},"
            " which this client does not speak",
            failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
            binding=binding,
            op="initialize",
        )
    if session.sends_messages:
        # HTTP: every message after initialize names the negotiated version.
        session.era_headers = EraHeaders(version, modern=False)
    session.notify("notifications/initialized")
    return Protocol(
        era="legacy",
        version=version,
        server=negotiated.server,
        capabilities=negotiated.capabilities,
        instructions=negotiated.instructions,
        tasks=server_tasks(_raw_capabilities(result), modern=False),
        client_caps=client_capabilities(client_caps, version, extensions),
        extensions=negotiated_extensions(extensions, negotiated.capabilities.extensions),
    )


def is_transport_loss(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection itself is gone."""
    return isinstance(exc, ConnectionLostError) or (
        isinstance(exc, Error) and exc.failure_class is FailureClass.TRANSPORT_CLOSED
    )
