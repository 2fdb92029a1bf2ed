"""mcpclient: a synchronous, thread-based, hardened MCP client.

Example:
    >>> import mcpclient
    >>> defn = mcpclient.Definition(
    ...     "everything",
    ...     mcpclient.StdioTransport("npx", ["-y", "@modelcontextprotocol/server-everything"]),
    ... )
    >>> with mcpclient.connect(defn) as client:
    ...     print(client.call_tool("echo", {"message": "hi"}).text)
    Echo: hi

Every name listed in ``__all__`` is public; everything else, and all of
``mcpclient._internal``, is not.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from mcpclient._core.version import VERSION

#: The module each public name lives in. Names are imported on first use (PEP 562), so
#: ``import mcpclient`` and every submodule's import (the testing server's is one, a CLI
#: command's another) load only what they touch: the whole client costs ~0.25 s of CPU
#: to import, the testing server itself a fraction of that.
_HOMES: dict[str, tuple[str, ...]] = {
    "mcpclient.calls": ("CallOpts", "CancelToken"),
    "mcpclient.catalog": (
        "Catalog",
        "Completion",
        "PromptArg",
        "PromptRef",
        "PromptSpec",
        "ResourceSpec",
        "ResourceTemplateRef",
        "ResourceTemplateSpec",
        "ServerCapabilities",
        "ServerIdentity",
        "ToolAnnotations",
        "ToolSpec",
        "ToolUI",
        "check_view_call",
    ),
    "mcpclient.client": ("Client", "connect"),
    "mcpclient.compat": (
        "PROFILE_DEFAULT",
        "PROFILE_LEGACY",
        "PROFILE_STRICT",
        "Profile",
        "Tolerance",
    ),
    "mcpclient.content": (
        "KIND_AUDIO",
        "KIND_IMAGE",
        "KIND_RESOURCE",
        "KIND_RESOURCE_LINK",
        "KIND_TEXT",
        "KIND_TOOL_RESULT",
        "KIND_TOOL_USE",
        "KIND_UNKNOWN",
        "Annotations",
        "Audio",
        "Content",
        "EmbeddedResource",
        "Image",
        "Prompt",
        "PromptMessage",
        "Resource",
        "ResourceContent",
        "ResourceLink",
        "ResourceUI",
        "Text",
        "ToolResult",
        "Unsupported",
    ),
    "mcpclient.definition": (
        "DEFAULT_LIMITS",
        "DEFAULT_TIMEOUTS",
        "ClientCapabilities",
        "Definition",
        "Extension",
        "Keepalive",
        "Limits",
        "LogLevel",
        "Name",
        "ReconnectPolicy",
        "RetryPolicy",
        "Timeouts",
        "ToolFilter",
    ),
    "mcpclient.errors": (
        "AuthError",
        "CallDeniedError",
        "CatalogError",
        "ConfigError",
        "ConnectionLostError",
        "DeadlineExceededError",
        "Error",
        "FailureClass",
        "ForkedError",
        "HookFailedError",
        "IndeterminateError",
        "InteractionError",
        "InvalidArgumentsError",
        "LimitExceededError",
        "NotProcessedError",
        "ProtocolError",
        "RequestCancelledError",
        "ShutdownError",
        "SkillError",
        "ToolUnavailableError",
    ),
    "mcpclient.events": (
        "CatalogAdopted",
        "CatalogCandidate",
        "CatalogRefreshed",
        "CatalogRejected",
        "CatalogStale",
        "ConnectionLost",
        "ConnectionRestored",
        "ElicitationRequested",
        "ElicitationResolved",
        "Event",
        "KeepaliveFailed",
        "KeepaliveLost",
        "KeepaliveRecovered",
        "RequestProgress",
        "ResourceUpdated",
        "SamplingRequested",
        "SamplingResolved",
        "ServerLog",
        "StateChanged",
    ),
    "mcpclient.handlers": (
        "ElicitAction",
        "ElicitMode",
        "ElicitRequest",
        "ElicitResult",
        "HandlerContext",
        "Handlers",
        "LogMessage",
        "Progress",
        "Root",
        "SampleMessage",
        "SampleOutcome",
        "SampleRequest",
        "SampleResult",
        "SampleRole",
        "log_to_python",
    ),
    "mcpclient.host": ("Host",),
    "mcpclient.skills": ("Skill", "SkillEntry", "SkillFile"),
    "mcpclient.status": ("Failure", "State", "Status"),
    "mcpclient.tasks": ("TaskHandle", "TaskState", "TaskStatus"),
    "mcpclient.transports": ("LegacySSETransport", "StdioTransport", "StreamableHTTPTransport"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from mcpclient import telemetry as telemetry
    from mcpclient.calls import CallOpts, CancelToken
    from mcpclient.catalog import (
        Catalog,
        Completion,
        PromptArg,
        PromptRef,
        PromptSpec,
        ResourceSpec,
        ResourceTemplateRef,
        ResourceTemplateSpec,
        ServerCapabilities,
        ServerIdentity,
        ToolAnnotations,
        ToolSpec,
        ToolUI,
        check_view_call,
    )
    from mcpclient.client import Client, connect
    from mcpclient.compat import PROFILE_DEFAULT, PROFILE_LEGACY, PROFILE_STRICT, Profile, Tolerance
    from mcpclient.content import (
        KIND_AUDIO,
        KIND_IMAGE,
        KIND_RESOURCE,
        KIND_RESOURCE_LINK,
        KIND_TEXT,
        KIND_TOOL_RESULT,
        KIND_TOOL_USE,
        KIND_UNKNOWN,
        Annotations,
        Audio,
        Content,
        EmbeddedResource,
        Image,
        Prompt,
        PromptMessage,
        Resource,
        ResourceContent,
        ResourceLink,
        ResourceUI,
        Text,
        ToolResult,
        Unsupported,
    )
    from mcpclient.definition import (
        DEFAULT_LIMITS,
        DEFAULT_TIMEOUTS,
        ClientCapabilities,
        Definition,
        Extension,
        Keepalive,
        Limits,
        LogLevel,
        Name,
        ReconnectPolicy,
        RetryPolicy,
        Timeouts,
        ToolFilter,
    )
    from mcpclient.errors import (
        AuthError,
        CallDeniedError,
        CatalogError,
        ConfigError,
        ConnectionLostError,
        DeadlineExceededError,
        Error,
        FailureClass,
        ForkedError,
        HookFailedError,
        IndeterminateError,
        InteractionError,
        InvalidArgumentsError,
        LimitExceededError,
        NotProcessedError,
        ProtocolError,
        RequestCancelledError,
        ShutdownError,
        SkillError,
        ToolUnavailableError,
    )
    from mcpclient.events import (
        CatalogAdopted,
        CatalogCandidate,
        CatalogRefreshed,
        CatalogRejected,
        CatalogStale,
        ConnectionLost,
        ConnectionRestored,
        ElicitationRequested,
        ElicitationResolved,
        Event,
        KeepaliveFailed,
        KeepaliveLost,
        KeepaliveRecovered,
        RequestProgress,
        ResourceUpdated,
        SamplingRequested,
        SamplingResolved,
        ServerLog,
        StateChanged,
    )
    from mcpclient.handlers import (
        ElicitAction,
        ElicitMode,
        ElicitRequest,
        ElicitResult,
        HandlerContext,
        Handlers,
        LogMessage,
        Progress,
        Root,
        SampleMessage,
        SampleOutcome,
        SampleRequest,
        SampleResult,
        SampleRole,
        log_to_python,
    )
    from mcpclient.host import Host
    from mcpclient.skills import Skill, SkillEntry, SkillFile
    from mcpclient.status import Failure, State, Status
    from mcpclient.tasks import TaskHandle, TaskState, TaskStatus
    from mcpclient.transports import LegacySSETransport, StdioTransport, StreamableHTTPTransport


def __getattr__(name: str) -> Any:
    """Import a public name's module, or a public submodule, on first use; keep it here.

    Submodules too (``mcpclient.telemetry``, ``mcpclient.config``, ``mcpclient.export``...),
    so ``import mcpclient`` alone reaches every one of them as an attribute.
    """
    home = _HOME_OF.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
    elif name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        value = _submodule(name)
    globals()[name] = value
    return value


def _submodule(name: str) -> Any:
    qualified = f"{__name__}.{name}"
    try:
        return importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name != qualified:  # the submodule exists but needs what is missing: say so
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = VERSION

logging.getLogger(__name__).addHandler(logging.NullHandler())

#: Every public name; tests/unit/test_public_api.py checks it against the two tables above.
__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUTS",
    "KIND_AUDIO",
    "KIND_IMAGE",
    "KIND_RESOURCE",
    "KIND_RESOURCE_LINK",
    "KIND_TEXT",
    "KIND_TOOL_RESULT",
    "KIND_TOOL_USE",
    "KIND_UNKNOWN",
    "PROFILE_DEFAULT",
    "PROFILE_LEGACY",
    "PROFILE_STRICT",
    "Annotations",
    "Audio",
    "AuthError",
    "CallDeniedError",
    "CallOpts",
    "CancelToken",
    "Catalog",
    "CatalogAdopted",
    "CatalogCandidate",
    "CatalogError",
    "CatalogRefreshed",
    "CatalogRejected",
    "CatalogStale",
    "Client",
    "ClientCapabilities",
    "Completion",
    "ConfigError",
    "ConnectionLost",
    "ConnectionLostError",
    "ConnectionRestored",
    "Content",
    "DeadlineExceededError",
    "Definition",
    "ElicitAction",
    "ElicitMode",
    "ElicitRequest",
    "ElicitResult",
    "ElicitationRequested",
    "ElicitationResolved",
    "EmbeddedResource",
    "Error",
    "Event",
    "Extension",
    "Failure",
    "FailureClass",
    "ForkedError",
    "HandlerContext",
    "Handlers",
    "HookFailedError",
    "Host",
    "Image",
    "IndeterminateError",
    "InteractionError",
    "InvalidArgumentsError",
    "Keepalive",
    "KeepaliveFailed",
    "KeepaliveLost",
    "KeepaliveRecovered",
    "LegacySSETransport",
    "LimitExceededError",
    "Limits",
    "LogLevel",
    "LogMessage",
    "Name",
    "NotProcessedError",
    "Profile",
    "Progress",
    "Prompt",
    "PromptArg",
    "PromptMessage",
    "PromptRef",
    "PromptSpec",
    "ProtocolError",
    "ReconnectPolicy",
    "RequestCancelledError",
    "RequestProgress",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourceSpec",
    "ResourceTemplateRef",
    "ResourceTemplateSpec",
    "ResourceUI",
    "ResourceUpdated",
    "RetryPolicy",
    "Root",
    "SampleMessage",
    "SampleOutcome",
    "SampleRequest",
    "SampleResult",
    "SampleRole",
    "SamplingRequested",
    "SamplingResolved",
    "ServerCapabilities",
    "ServerIdentity",
    "ServerLog",
    "ShutdownError",
    "Skill",
    "SkillEntry",
    "SkillError",
    "SkillFile",
    "State",
    "StateChanged",
    "Status",
    "StdioTransport",
    "StreamableHTTPTransport",
    "TaskHandle",
    "TaskState",
    "TaskStatus",
    "Text",
    "Timeouts",
    "Tolerance",
    "ToolAnnotations",
    "ToolFilter",
    "ToolResult",
    "ToolSpec",
    "ToolUI",
    "ToolUnavailableError",
    "Unsupported",
    "__version__",
    "check_view_call",
    "connect",
    "log_to_python",
]
