"""The test server's process-wide configuration: protocol tables, wire keys, codes, knobs.

:class:`ServerConfig` holds one field per command-line flag (documented in
``docs/testing-server.md``); :class:`VersionRejects` is the one piece of it that
changes at runtime, shared by every core made from one config.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .catalog import FAMILIES, LOG_LEVELS
from .eras import EraState

__all__ = [
    "CAPABILITY_NAMES",
    "CLIENT_CAPABILITIES_KEY",
    "ERAS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_RESOURCE_NOT_FOUND",
    "LEGACY_VERSIONS",
    "LOG_LEVEL_KEY",
    "METHOD_NOT_FOUND",
    "MODERN_VERSIONS",
    "PARSE_ERROR",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SERVER_NAME",
    "SUBSCRIPTION_ID_KEY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ServerConfig",
    "VersionRejects",
    "advertised_capabilities",
    "server_info",
]

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
CAPABILITY_NAMES: tuple[str, ...] = ("tools", "prompts", "resources", "logging", "completions")
ERAS: tuple[str, ...] = ("modern", "legacy", "dual")

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
LEGACY_RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_PROTOCOL_VERSION = -32022

SERVER_NAME = "mcpclient-testing"


class VersionRejects:
    """How many more version-naming requests to refuse, process-wide.

    Shared by every core made from one :class:`ServerConfig` (an HTTP server
    runs a core per legacy session), so a scripted refusal is used once per
    process, not once per session: like an old instance met once during a
    rolling deploy. Set by ``--reject-versions`` and ``mutate_catalog``'s
    ``reject_versions``.

    Thread safety: any thread.
    """

    def __init__(self) -> None:
        """No refusal pending."""
        self._lock = threading.Lock()
        self._count = 0
        self._supported: tuple[str, ...] | None = None
        self._method: str | None = None

    def set(
        self, count: int, supported: Iterable[str] | None = None, method: str | None = None
    ) -> None:
        """Refuse the next ``count`` requests (of ``method`` only, if given).

        ``supported`` replaces the versions the refusals name.
        """
        if count < 0:
            raise ValueError("reject_versions count must be >= 0")
        with self._lock:
            self._count = count
            self._supported = None if supported is None else tuple(supported)
            self._method = method

    def take(self, method: str, default: tuple[str, ...]) -> tuple[str, ...] | None:
        """Consume one refusal: the ``supported`` list to answer with, or None if none is due."""
        with self._lock:
            if self._count <= 0 or self._method not in (None, method):
                return None
            self._count -= 1
            return self._supported if self._supported is not None else default


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """Process-wide behavior of the test server (one field per CLI flag).

    See ``docs/testing-server.md`` for what each knob does.
    """

    era: str = "dual"
    capabilities: tuple[str, ...] = CAPABILITY_NAMES
    server_version: str = "1.0.0"
    instructions: str | None = None
    legacy_versions: tuple[str, ...] = LEGACY_VERSIONS
    modern_versions: tuple[str, ...] = MODERN_VERSIONS
    page_size: int = 0
    catalog: Mapping[str, list[Any]] | None = None
    ttl_ms: int = 0
    #: Per-resource ``resources/read`` cache hints (modern era): uri -> (ttlMs, cacheScope).
    read_hints: Mapping[str, tuple[int, str]] | None = None
    log_level: str = "debug"
    exit_on_discover: bool = False
    silent_discover: bool = False
    #: Never answer ``ping`` (a server that stopped responding; the keepalive's test).
    ignore_pings: bool = False
    #: The era knobs (``eras.py``): lock to the first era, answer discover late,
    #: list these versions in it, die at the line after it.
    lock_era: bool = False
    #: Start locked to this era, as if a client of it had come first (needs lock_era).
    locked_era: str | None = None
    discover_delay: float = 0.0
    discover_versions: tuple[str, ...] | None = None
    die_after_discover: bool = False
    no_initialize_answer: bool = False
    exit_after_initialize: bool = False
    record_path: str | None = None
    item_counts: Mapping[str, int] | None = None
    cursor_loop: tuple[str, ...] = ()
    endless_pages: tuple[str, ...] = ()
    huge_cursor: tuple[str, ...] = ()
    list_delay: float = 0.0
    mrtr: bool = False
    missing_lists: tuple[str, ...] = ()
    reject_versions: int = 0
    #: Extension identifiers declared in ``capabilities.extensions`` (settings ``{}``).
    extensions: tuple[str, ...] = ()
    #: Serve the skills of :mod:`.skills` (and declare the Skills extension).
    skills: bool = False
    #: List the MCP Apps tools and view of :mod:`.apps` (and declare the UI extension).
    apps: bool = False
    #: The process-wide refusals ``reject_versions`` starts (shared by every core).
    version_rejects: VersionRejects = dataclasses.field(
        default_factory=VersionRejects, compare=False, repr=False
    )
    #: The process-wide state of the era knobs (shared by every core).
    era_state: EraState = dataclasses.field(default_factory=EraState, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Reject values the server could not act on."""
        if self.reject_versions < 0:
            raise ValueError("reject_versions must be >= 0")
        self.version_rejects.set(self.reject_versions)
        if self.era not in ERAS:
            raise ValueError(f"era must be one of {ERAS}, not {self.era!r}")
        unknown = set(self.capabilities) - set(CAPABILITY_NAMES)
        if unknown:
            raise ValueError(f"capabilities: unknown {sorted(unknown)}")
        if not self.legacy_versions or not self.modern_versions:
            raise ValueError("legacy_versions and modern_versions must not be empty")
        if self.log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {LOG_LEVELS}")
        if self.page_size < 0 or self.ttl_ms < 0:
            raise ValueError("page_size and ttl_ms must be >= 0")
        for knob in ("cursor_loop", "endless_pages", "huge_cursor", "missing_lists"):
            unknown = set(getattr(self, knob)) - set(FAMILIES)
            if unknown:
                raise ValueError(f"{knob}: unknown families {sorted(unknown)}")
        for family, count in (self.item_counts or {}).items():
            if family not in FAMILIES:
                raise ValueError(f"item_counts: unknown family {family!r}")
            if count < 0:
                raise ValueError("item_counts must be >= 0")
        if self.list_delay < 0 or self.discover_delay < 0:
            raise ValueError("list_delay and discover_delay must be >= 0")
        if self.lock_era and self.era != "dual":
            raise ValueError("lock_era needs era 'dual'")
        if self.locked_era is not None:
            if not self.lock_era or self.locked_era not in ("modern", "legacy"):
                raise ValueError("locked_era is 'modern' or 'legacy', with lock_era")
            self.era_state.lock(self.locked_era)


def server_info(config: ServerConfig) -> dict[str, Any]:
    """The ``Implementation`` object a server with ``config`` reports."""
    return {"name": SERVER_NAME, "version": config.server_version}


def advertised_capabilities(config: ServerConfig, version: str | None) -> dict[str, Any]:
    """The server capabilities advertised for ``version`` (None: modern)."""
    caps: dict[str, Any] = {}
    for name in config.capabilities:
        if name in ("tools", "prompts"):
            caps[name] = {"listChanged": True}
        elif name == "resources":
            caps[name] = {"subscribe": True, "listChanged": True}
        elif name == "completions" and version == "2024-11-05":
            continue  # the capability did not exist yet
        else:
            caps[name] = {}
    extensions: dict[str, Any] = {}
    if config.skills:
        extensions["io.modelcontextprotocol/skills"] = {"directoryRead": True}
    if config.apps:
        extensions["io.modelcontextprotocol/ui"] = {}
    # An explicit --extension declares {} (with --skills: no directoryRead).
    extensions.update({identifier: {} for identifier in config.extensions})
    if extensions:
        caps["extensions"] = extensions
    return caps
