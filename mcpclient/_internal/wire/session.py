"""The session's wire: era negotiation, server identity and capabilities, client capabilities.

``initialize`` (legacy) and ``server/discover`` (modern) results are
structured by the converter into the server's :class:`ServerIdentity`,
:class:`ServerCapabilities` and instructions, each bounded; what this client
sends (its capabilities per version, the ``initialize`` params) is
unstructured here too. A wrong type reads as absent (the leniency rule):
an identity field that is not a string is ``""``, a capability that is not
an object is not advertised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import cattrs
from cattrs.gen import override

from mcpclient._core.version import VERSION
from mcpclient._internal.wire.converter import Bounds, converter_for, hooks, record
from mcpclient._internal.wire.errors import translated
from mcpclient._internal.wire.extensions import client_extensions, server_extensions
from mcpclient._internal.wire.state import is_object, raw, text
from mcpclient._internal.wire.tasks import TASKS_VERSION, hosted_capability
from mcpclient.catalog import ServerCapabilities, ServerIdentity
from mcpclient.definition import (
    MODERN_VERSIONS,
    TASKS_EXTENSION,
    ClientCapabilities,
    Extension,
    Limits,
)

__all__ = [
    "CLIENT_INFO",
    "Negotiated",
    "client_capabilities",
    "initialize_params",
    "read_discover",
    "read_initialize",
    "required_capabilities",
]

CLIENT_INFO: dict[str, str] = {"name": "mcpclient", "version": VERSION}
#: The ``_meta`` key of the server's identity in a modern discover result.
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

_MAX_IDENTITY_BYTES = 256
_MAX_INSTRUCTIONS_BYTES = 64 * 1024
#: Nothing here depends on the limits: every negotiation uses this converter.
_LIMITS = Limits()


def client_capabilities(
    caps: ClientCapabilities, version: str, extensions: Iterable[Extension] = ()
) -> dict[str, Any]:
    """The wire form of the capabilities this binding advertises (with its extensions)."""
    wire: dict[str, Any] = {}
    declared = client_extensions(extensions)
    if declared:
        # Legacy schemas do not name it, but forbid no extra key (SEP-2133 uses it there too).
        wire["extensions"] = declared
    if caps.roots:
        wire["roots"] = {} if version in MODERN_VERSIONS else {"listChanged": True}
    if caps.sampling:
        wire["sampling"] = {}
    if caps.elicitation:
        wire["elicitation"] = {"form": {}, "url": {}} if version >= "2025-11-25" else {}
    if version == TASKS_VERSION and TASKS_EXTENSION in declared:
        # The host allows tasks: 2025-11-25 lets the server run our sampling
        # and elicitation as tasks (client-hosted, SEP-1686).
        hosted = hosted_capability(caps.elicitation, caps.sampling)
        if hosted is not None:
            wire["tasks"] = hosted
    return wire


def initialize_params(offer: str, caps: dict[str, Any]) -> dict[str, Any]:
    """The params of a legacy ``initialize`` request offering ``offer``."""
    return {"protocolVersion": offer, "capabilities": caps, "clientInfo": CLIENT_INFO}


@attrs.frozen
class Negotiated:
    """What a server's negotiation result says, read and bounded.

    ``versions`` is the raw ``protocolVersion`` (legacy) or
    ``supportedVersions`` list (modern), for the session to judge.
    """

    versions: Any = None
    server: ServerIdentity = attrs.Factory(ServerIdentity)
    capabilities: ServerCapabilities = attrs.Factory(ServerCapabilities)
    instructions: str = ""


@attrs.define(slots=True)
class _Capabilities:
    tools: bool = False
    prompts: bool = False
    resources: Mapping[str, Any] | None = None
    logging: bool = False
    completions: bool = False


@attrs.define(slots=True)
class _Initialize:
    versions: Any = None
    server: ServerIdentity = attrs.Factory(ServerIdentity)
    capabilities: ServerCapabilities = attrs.Factory(ServerCapabilities)
    instructions: str = ""


@attrs.define(slots=True)
class _Discover(_Initialize):
    meta: Any = None


@hooks
def _register(conv: cattrs.Converter, limits: Bounds) -> None:
    short = text(_MAX_IDENTITY_BYTES)
    identity = record(
        conv,
        ServerIdentity,
        name=override(struct_hook=short),
        version=override(struct_hook=short),
        title=override(struct_hook=short),
    )

    def server(value: Any, _: Any) -> ServerIdentity:
        return identity(value, ServerIdentity) if isinstance(value, Mapping) else ServerIdentity()

    caps = record(
        conv,
        _Capabilities,
        tools=override(struct_hook=is_object),
        prompts=override(struct_hook=is_object),
        resources=override(struct_hook=lambda v, _: v if isinstance(v, Mapping) else None),
        logging=override(struct_hook=is_object),
        completions=override(struct_hook=is_object),
    )

    def capabilities(value: Any, _: Any) -> ServerCapabilities:
        if not isinstance(value, Mapping):
            return ServerCapabilities()
        rec: _Capabilities = caps(value, _Capabilities)
        return ServerCapabilities(
            tools=rec.tools,
            prompts=rec.prompts,
            resources=rec.resources is not None,
            resources_subscribe=rec.resources is not None
            and rec.resources.get("subscribe") is True,
            logging=rec.logging,
            completions=rec.completions,
            extensions=server_extensions(value),
        )

    common = {
        "capabilities": override(struct_hook=capabilities),
        "instructions": override(struct_hook=text(_MAX_INSTRUCTIONS_BYTES)),
    }
    record(
        conv,
        _Initialize,
        versions=override(rename="protocolVersion", struct_hook=raw),
        server=override(rename="serverInfo", struct_hook=server),
        **common,
    )

    def discover_meta(value: Any, _: Any) -> ServerIdentity:
        found = value.get(META_SERVER_INFO) if isinstance(value, Mapping) else None
        return server(found, None)

    record(
        conv,
        _Discover,
        versions=override(
            rename="supportedVersions", struct_hook=lambda v, _: v if isinstance(v, list) else None
        ),
        server=override(omit=True),
        meta=override(rename="_meta", struct_hook=discover_meta),
        **common,
    )


def read_initialize(result: Mapping[str, Any]) -> Negotiated:
    """An ``initialize`` result, read (``versions``: its raw ``protocolVersion``).

    Raises:
        ConversionError: never for a mapping (every field is lenient).
    """
    with translated("the initialize result"):
        rec: _Initialize = converter_for(_LIMITS).structure(result, _Initialize)
    return Negotiated(rec.versions, rec.server, rec.capabilities, rec.instructions)


def read_discover(result: Any) -> Negotiated | None:
    """A ``server/discover`` result, read; ``None`` when it lists no ``supportedVersions``."""
    if not isinstance(result, Mapping) or not isinstance(result.get("supportedVersions"), list):
        return None
    with translated("the server/discover result"):
        rec: _Discover = converter_for(_LIMITS).structure(result, _Discover)
    server = rec.meta if isinstance(rec.meta, ServerIdentity) else ServerIdentity()
    return Negotiated(rec.versions, server, rec.capabilities, rec.instructions)


def required_capabilities(data: Any) -> Any:
    """The capabilities a -32021 refusal says the server requires (raw), or ``None``."""
    return data.get("requiredCapabilities") if isinstance(data, dict) else None
