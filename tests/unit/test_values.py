"""Public value classes: construction, per-field validation, defaults, immutability.

DESIGN.md §2: every value type is a frozen attrs class validated on construction
(types and per-field ranges); a zero or negative duration or limit is refused
(there is no "unlimited"); JSON values are held as text and decoded afresh on
each access. Cross-field rules of ``Definition`` live in test_definition.py.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import attrs
import pytest

import mcpclient
from mcpclient import (
    DEFAULT_LIMITS,
    DEFAULT_TIMEOUTS,
    PROFILE_DEFAULT,
    PROFILE_LEGACY,
    PROFILE_STRICT,
    Annotations,
    Audio,
    CallOpts,
    CancelToken,
    Catalog,
    CatalogAdopted,
    CatalogCandidate,
    CatalogRefreshed,
    CatalogRejected,
    CatalogStale,
    ClientCapabilities,
    Completion,
    ConfigError,
    ConnectionLost,
    ConnectionRestored,
    Definition,
    ElicitAction,
    ElicitationRequested,
    ElicitationResolved,
    ElicitMode,
    ElicitRequest,
    ElicitResult,
    EmbeddedResource,
    Failure,
    FailureClass,
    HandlerContext,
    Handlers,
    Image,
    Keepalive,
    KeepaliveFailed,
    KeepaliveLost,
    KeepaliveRecovered,
    LegacySSETransport,
    Limits,
    LogLevel,
    LogMessage,
    Name,
    Profile,
    Progress,
    Prompt,
    PromptArg,
    PromptMessage,
    PromptRef,
    PromptSpec,
    ReconnectPolicy,
    RequestProgress,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceSpec,
    ResourceTemplateRef,
    ResourceTemplateSpec,
    ResourceUpdated,
    RetryPolicy,
    Root,
    SampleMessage,
    SampleOutcome,
    SampleRequest,
    SampleResult,
    SampleRole,
    SamplingRequested,
    SamplingResolved,
    ServerCapabilities,
    ServerIdentity,
    ServerLog,
    State,
    StateChanged,
    Status,
    StdioTransport,
    StreamableHTTPTransport,
    Text,
    Timeouts,
    Tolerance,
    ToolAnnotations,
    ToolFilter,
    ToolResult,
    ToolSpec,
    Unsupported,
)
from tests.unit.test_identity_vectors import PROFILE_DEFAULT_V2 as PINNED_DEFAULT
from tests.unit.test_identity_vectors import PROFILE_LEGACY_V2 as PINNED_LEGACY
from tests.unit.test_identity_vectors import PROFILE_STRICT as PINNED_STRICT

NAN = float("nan")
INF = float("inf")
TOKEN = CancelToken()
STDIO = StdioTransport("/usr/bin/server")


def _handler(*_args: object) -> None:
    return None


# --- one good construction per public value class (keyword arguments) ---

GOOD: dict[type, dict[str, Any]] = {
    Timeouts: {},
    Limits: {},
    RetryPolicy: {},
    ReconnectPolicy: {},
    Keepalive: {"interval": 5.0, "timeout": 1.0, "failures": 2},
    ToolFilter: {"allow": ["a", "b"], "deny": ["c"]},
    ClientCapabilities: {"elicitation": True},
    mcpclient.ToolUI: {"resource_uri": "ui://a/view.html", "visibility": ["app"]},
    mcpclient.ResourceUI: {
        "connect_domains": ["https://a.example"],
        "camera": True,
        "domain": "a.example",
        "prefers_border": False,
    },
    mcpclient.SkillFile: {"uri": "skill://a/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 3},
    mcpclient.SkillEntry: {
        "binding": "srv",
        "uri": "skill://a/SKILL.md",
        "frontmatter": {"name": "a"},
        "files": [],
    },
    mcpclient.Extension: {"identifier": "io.modelcontextprotocol/skills", "settings": {"k": 1}},
    mcpclient.TaskStatus: {
        "state": mcpclient.TaskState.WORKING,
        "message": "stage 1",
        "created_at": "2026-01-01T00:00:00Z",
        "last_updated_at": "2026-01-01T00:00:01Z",
        "ttl": 300.0,
        "poll_interval": 1.0,
    },
    Profile: {"name": "mine", "version": 2, "tolerances": [Tolerance.LEGACY_SSE]},
    Definition: {"name": "srv", "transport": STDIO},
    StdioTransport: {"command": "/usr/bin/server", "args": ["--flag"], "env": {"A": "1"}},
    StreamableHTTPTransport: {"url": "https://example.com/mcp", "headers": {"X-A": "1"}},
    LegacySSETransport: {"url": "https://example.com/sse"},
    CallOpts: {"progress": _handler, "deadline": 5.0, "timeout": 1.0, "cancel": TOKEN},
    ServerIdentity: {"name": "srv", "version": "1.0", "title": "Server"},
    ServerCapabilities: {"tools": True, "resources_subscribe": True},
    ToolAnnotations: {"title": "T", "read_only_hint": True, "destructive_hint": False},
    ToolSpec: {
        "raw_name": "echo",
        "model_name": "mcp__srv__echo",
        "input_schema": {"type": "object"},
        "warnings": ["w"],
    },
    PromptArg: {"name": "topic", "required": True},
    PromptSpec: {"name": "p", "arguments": [PromptArg(name="topic")]},
    ResourceSpec: {"uri": "res://a", "mime_type": "text/plain"},
    ResourceTemplateSpec: {"uri_template": "res://{id}"},
    PromptRef: {"name": "p"},
    ResourceTemplateRef: {"uri_template": "res://{id}"},
    Completion: {"values": ["a", "b"], "total": 2, "has_more": False},
    Catalog: {
        "binding": "srv",
        "generation": 1,
        "tools": [ToolSpec(raw_name="echo", model_name="mcp__srv__echo", input_schema={})],
        "applied_tolerances": [Tolerance.INVALID_OUTPUT_SCHEMA],
    },
    Annotations: {"audience": ["user"], "priority": 0.5, "last_modified": "2025-01-01"},
    Text: {"text": "hi"},
    Image: {"data": b"\x89PNG", "mime_type": "image/png"},
    Audio: {"data": b"RIFF", "mime_type": "audio/wav"},
    EmbeddedResource: {"uri": "res://a", "text": "body"},
    ResourceLink: {"uri": "res://a", "name": "a"},
    Unsupported: {"kind": "tool_use", "bytes": 10},
    ToolResult: {"content": [Text("a"), Unsupported("unknown")], "structured": {"x": 1}},
    PromptMessage: {"role": "user", "content": Text("hi")},
    Prompt: {"description": "d", "messages": [PromptMessage("user", Text("hi"))]},
    ResourceContent: {"uri": "res://a", "data": b"\x00"},
    Resource: {"contents": [ResourceContent("res://a"), Unsupported("image", bytes=9)]},
    HandlerContext: {"deadline": 10.0, "cancelled": TOKEN, "depth": 2},
    ElicitRequest: {"binding": "srv", "mode": ElicitMode.FORM, "schema": {"type": "object"}},
    ElicitResult: {"action": ElicitAction.ACCEPT, "content": {"ok": True}},
    SampleMessage: {"role": SampleRole.USER, "text": "hi"},
    SampleRequest: {"binding": "srv", "messages": [SampleMessage(SampleRole.USER, "hi")]},
    SampleResult: {"model": "m", "text": "t"},
    Root: {"uri": "file:///tmp", "name": "tmp"},
    LogMessage: {"binding": "srv", "level": LogLevel.INFO, "logger": "l", "text": "t"},
    Progress: {"binding": "srv", "progress": 1.0, "total": 2.0},
    Handlers: {"log": _handler, "event": _handler},
    Failure: {"failure_class": FailureClass.DEADLINE, "message": "late"},
    Status: {"binding": "srv", "state": State.READY},
    StateChanged: {
        "binding": "srv",
        "from_state": State.STARTING,
        "to_state": State.READY,
        "at": 1.0,
    },
    CatalogStale: {"binding": "srv", "family": "tools", "at": 1.0},
    CatalogCandidate: {"binding": "srv", "generation": 2, "digest": "d", "adopted": 1, "at": 1.0},
    CatalogRefreshed: {"binding": "srv", "generation": 1, "digest": "d", "at": 1.0},
    CatalogAdopted: {"binding": "srv", "generation": 1, "digest": "d", "previous": 0, "at": 1.0},
    CatalogRejected: {
        "binding": "srv",
        "failure_class": FailureClass.CATALOG_INVALID,
        "adopted": 1,
        "retrying": True,
        "at": 1.0,
    },
    ConnectionLost: {
        "binding": "srv",
        "failure_class": FailureClass.TRANSPORT_CLOSED,
        "adopted": 1,
        "retrying": False,
        "at": 1.0,
    },
    ConnectionRestored: {
        "binding": "srv",
        "server": ServerIdentity(),
        "adopted": 1,
        "generation": 1,
        "at": 1.0,
    },
    KeepaliveFailed: {"binding": "srv", "failures": 1, "at": 1.0},
    KeepaliveRecovered: {"binding": "srv", "failures": 1, "at": 1.0},
    KeepaliveLost: {"binding": "srv", "failures": 3, "at": 1.0},
    ServerLog: {"binding": "srv", "level": LogLevel.ERROR, "at": 1.0},
    RequestProgress: {"binding": "srv", "progress": 0.5, "at": 1.0},
    ResourceUpdated: {"binding": "srv", "uri": "res://a", "at": 1.0},
    ElicitationRequested: {"binding": "srv", "mode": ElicitMode.URL, "at": 1.0},
    ElicitationResolved: {
        "binding": "srv",
        "mode": ElicitMode.FORM,
        "action": None,
        "duration": 0.1,
        "at": 1.0,
    },
    SamplingRequested: {"binding": "srv", "messages": 1, "max_tokens": 10, "depth": 1, "at": 1.0},
    SamplingResolved: {
        "binding": "srv",
        "outcome": SampleOutcome.COMPLETED,
        "duration": 0.1,
        "at": 1.0,
    },
}

EXPORTED_VALUE_CLASSES = sorted(
    (
        obj
        for obj in (getattr(mcpclient, n) for n in mcpclient.__all__)
        if isinstance(obj, type) and attrs.has(obj)
    ),
    key=lambda c: c.__name__,
)


def make(cls: type, **overrides: Any) -> Any:
    return cls(**{**GOOD[cls], **overrides})


def test_every_exported_value_class_is_covered() -> None:
    assert set(EXPORTED_VALUE_CLASSES) <= set(GOOD), "add the new value class to GOOD"


@pytest.mark.parametrize("cls", EXPORTED_VALUE_CLASSES, ids=lambda c: c.__name__)
def test_good_construction_frozen_hashable(cls: type) -> None:
    value = make(cls)
    init_fields = {f.alias for f in attrs.fields(cls) if f.init}
    for alias, given in GOOD[cls].items():
        assert alias in init_fields
        got = getattr(value, alias)
        if isinstance(given, list):
            assert got == tuple(given), alias
        elif isinstance(given, dict) and alias in ("env", "headers"):
            assert got == tuple(sorted(given.items()))
        else:
            assert got == given, alias
    # frozen: neither a field nor a new attribute can be set
    first = attrs.fields(cls)[0]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(value, first.name, getattr(value, first.name))
    with pytest.raises(AttributeError):
        value.not_a_field = 1
    # equal and hashable by content
    assert value == make(cls)
    assert hash(value) == hash(make(cls))


# --- per-field rejection: ConfigError naming <Class>.<field> ---

DURATION_BAD = [0, 0.0, -1, -0.001, True, False, "1", None, NAN, INF, -INF]
LIMIT_BAD = [0, -1, True, False, 1.5, 8.0, "8", None]
BOOL_BAD = [1, 0, "true", None]
STR_BAD = [None, 1, b"x"]


def _cases() -> list[tuple[type, str, object]]:
    cases: list[tuple[type, str, object]] = []

    def add(cls: type, fields: list[str], bad: list[object]) -> None:
        cases.extend((cls, field, value) for field in fields for value in bad)

    add(Timeouts, ["startup", "request", "elicitation", "auth"], DURATION_BAD)
    add(Limits, [f.name for f in attrs.fields(Limits)], LIMIT_BAD)
    add(RetryPolicy, ["attempts"], [*LIMIT_BAD, 65, 1000])
    add(RetryPolicy, ["base_delay", "max_delay", "max_total"], DURATION_BAD)
    add(ReconnectPolicy, ["disabled"], BOOL_BAD)
    add(ReconnectPolicy, ["retry"], [None, {}, Timeouts()])
    add(Keepalive, ["interval"], DURATION_BAD)
    add(Keepalive, ["timeout"], [d for d in DURATION_BAD if d is not None])
    add(Keepalive, ["failures"], [*LIMIT_BAD, 65])
    add(Definition, ["keepalive"], [True, 0, "on", Timeouts()])
    add(ToolFilter, ["allow", "deny"], ["abc", [""], ["a", "a"], [1], None, 5])
    add(ClientCapabilities, ["elicitation", "sampling", "roots"], BOOL_BAD)
    add(Profile, ["name"], ["", "x" * 65, "é" * 33, 5, None])
    add(Profile, ["version"], [0, -1, True, 1.5, "1", None])
    add(Profile, ["tolerances"], ["abc", [1], [None], [Tolerance.LEGACY_SSE, "x"], 5, None])
    add(CallOpts, ["progress"], [5, "x"])
    add(CallOpts, ["deadline"], [NAN, INF, -INF, "1", True])
    add(CallOpts, ["timeout"], [0, -1, NAN, INF, True, "1"])
    add(CallOpts, ["cancel"], [threading.Event(), True, "x"])
    add(ServerIdentity, ["name", "version", "title"], STR_BAD)
    add(
        ServerCapabilities,
        ["tools", "prompts", "resources", "resources_subscribe", "logging", "completions"],
        BOOL_BAD,
    )
    add(ToolAnnotations, ["title"], STR_BAD)
    add(ToolAnnotations, ["read_only_hint", "idempotent_hint"], BOOL_BAD)
    add(ToolAnnotations, ["destructive_hint", "open_world_hint"], [1, 0, "true"])
    add(ToolSpec, ["raw_name", "model_name", "title", "description"], STR_BAD)
    add(ToolSpec, ["input_schema_digest", "output_schema_digest"], STR_BAD)
    add(ToolSpec, ["annotations"], ["x", {}])
    add(ToolSpec, ["warnings"], ["abc", [1], None])
    add(PromptArg, ["name", "title", "description"], STR_BAD)
    add(PromptArg, ["required"], BOOL_BAD)
    add(PromptSpec, ["name", "title", "description"], STR_BAD)
    add(PromptSpec, ["arguments"], [["x"], "abc", [PromptSpec(name="p")]])
    add(ResourceSpec, ["uri", "name", "title", "description", "mime_type"], STR_BAD)
    add(ResourceTemplateSpec, ["uri_template", "name", "title", "description"], STR_BAD)
    add(PromptRef, ["name"], STR_BAD)
    add(ResourceTemplateRef, ["uri_template"], STR_BAD)
    add(Completion, ["values"], ["abc", [1], None])
    add(Completion, ["total"], ["1", 1.5])
    add(Completion, ["has_more"], BOOL_BAD)
    add(Catalog, ["binding", "digest", "protocol_version", "instructions"], STR_BAD)
    add(Catalog, ["generation"], [-1, True, 1.5, "1", None])
    add(Catalog, ["server", "capabilities"], ["x", None, {}])
    add(Catalog, ["tools", "prompts", "resources", "resource_templates"], [["x"], "abc"])
    add(Catalog, ["warnings"], [[1], "abc"])
    add(Catalog, ["applied_tolerances"], [[1], ["legacy_sse"]])
    add(Annotations, ["audience"], ["user", [1]])
    add(Annotations, ["priority"], [NAN, INF, "1", True])
    add(Annotations, ["last_modified"], STR_BAD)
    add(Text, ["text"], STR_BAD)
    add(Text, ["truncated"], BOOL_BAD)
    add(Text, ["annotations"], ["x", {}])
    add(Image, ["data"], ["str", None, bytearray(b"x")])
    add(Image, ["mime_type"], STR_BAD)
    add(Audio, ["data"], ["str", None])
    add(Audio, ["annotations"], ["x"])
    add(EmbeddedResource, ["uri", "mime_type", "text"], STR_BAD)
    add(EmbeddedResource, ["data"], ["x", None])
    add(EmbeddedResource, ["truncated"], BOOL_BAD)
    add(ResourceLink, ["uri", "name", "title", "description", "mime_type"], STR_BAD)
    add(Unsupported, ["kind"], [*STR_BAD, "hologram", "Image", ""])
    add(Unsupported, ["bytes"], [-1, True, 1.5, "1"])
    add(ToolResult, ["is_error"], BOOL_BAD)
    add(ToolResult, ["content"], [["x"], "abc", [Root("file:///a")], None])
    add(ToolResult, ["warnings"], [[1], "abc"])
    add(PromptMessage, ["role"], STR_BAD)
    add(PromptMessage, ["content"], ["x", None, Root("file:///a")])
    add(Prompt, ["description"], STR_BAD)
    add(Prompt, ["messages"], [["x"], "abc"])
    add(ResourceContent, ["uri", "mime_type", "text"], STR_BAD)
    add(ResourceContent, ["data"], ["x"])
    add(ResourceContent, ["truncated"], BOOL_BAD)
    add(Resource, ["contents"], [[Text("x")], "abc"])
    add(Resource, ["warnings"], [[1]])
    add(HandlerContext, ["deadline"], [NAN, INF, "1", True, None])
    add(HandlerContext, ["cancelled"], [None, threading.Event()])
    add(HandlerContext, ["depth"], [0, -1, True, 1.5])
    add(ElicitRequest, ["binding", "message", "url", "elicitation_id"], STR_BAD)
    add(ElicitRequest, ["mode"], [1, "form", None])
    add(ElicitResult, ["action"], [1, "accept", None])
    add(SampleMessage, ["role"], [1, "user", None])
    add(SampleMessage, ["text"], STR_BAD)
    add(SampleRequest, ["binding", "system_prompt"], STR_BAD)
    add(SampleRequest, ["messages"], [["x"], "abc"])
    add(SampleRequest, ["max_tokens"], [0, -1, True, 1.5])
    add(SampleResult, ["model", "text", "stop_reason"], STR_BAD)
    add(Root, ["uri"], ["https://example.com/", "/tmp", "tmp", "", None, 1])
    add(Root, ["name"], STR_BAD)
    add(LogMessage, ["binding", "logger", "text"], STR_BAD)
    add(LogMessage, ["level"], ["info", 1, None])
    add(Progress, ["binding", "message"], STR_BAD)
    add(Progress, ["progress", "total"], [NAN, INF, "1", True])
    add(Handlers, ["elicitation", "sampling", "roots", "log", "event"], [5, "x"])
    add(Failure, ["failure_class"], [12, "deadline", None])
    add(Failure, ["message"], STR_BAD)
    add(Status, ["binding"], STR_BAD)
    add(Status, ["state"], [5, "ready", None])
    add(StdioTransport, ["shutdown_grace"], DURATION_BAD)
    add(Definition, ["allow_parallel_calls"], BOOL_BAD)
    add(Definition, ["timeouts"], [None, Limits(), {}])
    add(Definition, ["limits"], [None, Timeouts()])
    add(Definition, ["capabilities"], [None, True])
    add(Definition, ["tool_filter"], [None, ["a"]])
    add(Definition, ["compat"], ["default", 1])
    add(Definition, ["reconnect"], [None, RetryPolicy()])
    add(Definition, ["refresh"], [None, ReconnectPolicy()])
    add(Definition, ["log_level"], ["INFO", "verbose", "", 1, None])
    add(Definition, ["protocol"], ["", "AUTO", "latest", "2025-01-01", 5, None])
    add(Definition, ["transport"], [None, "stdio", Timeouts()])
    add(Definition, ["name"], ["", "Srv", "-srv", "a" * 33, 5, None])
    add(Definition, ["extensions"], ["a/b", 5, ["nope"], ["a/b", "a/b"], {"a/b": [1]}])
    add(mcpclient.ToolUI, ["resource_uri"], STR_BAD)
    add(mcpclient.ToolUI, ["visibility"], ["model", [1], None])
    add(
        mcpclient.ResourceUI,
        ["connect_domains", "resource_domains", "frame_domains", "base_uri_domains"],
        ["a", [1], None],
    )
    add(mcpclient.ResourceUI, ["camera", "microphone", "geolocation", "clipboard_write"], BOOL_BAD)
    add(mcpclient.ResourceUI, ["domain"], STR_BAD)
    add(mcpclient.ResourceUI, ["prefers_border"], [1, "yes"])
    add(ToolSpec, ["ui"], ["ui://x", {}])
    add(ResourceContent, ["ui"], ["ui://x", {}])
    add(mcpclient.SkillFile, ["uri"], STR_BAD)
    add(mcpclient.SkillFile, ["digest"], ["", "sha256:" + "A" * 64, "md5:" + "0" * 64, 5])
    add(mcpclient.SkillFile, ["size"], [-1, True, 1.5, None])
    add(mcpclient.SkillEntry, ["binding", "uri"], STR_BAD)
    add(mcpclient.SkillEntry, ["files"], [[1], "x"])
    add(mcpclient.SkillEntry, ["dynamic"], BOOL_BAD)
    add(mcpclient.Extension, ["identifier"], ["", "skills", "a/b/c", 5, None])
    add(mcpclient.Extension, ["settings"], [[1], "x", None, {"x": "y" * 20000}])
    add(mcpclient.TaskStatus, ["state"], ["working", None, 1])
    add(mcpclient.TaskStatus, ["message", "created_at", "last_updated_at"], STR_BAD)
    add(mcpclient.TaskStatus, ["ttl", "poll_interval"], [-1, NAN, INF, True, "1"])
    events = [
        StateChanged,
        CatalogStale,
        CatalogCandidate,
        CatalogRefreshed,
        CatalogAdopted,
        CatalogRejected,
        ConnectionLost,
        ConnectionRestored,
        KeepaliveFailed,
        KeepaliveRecovered,
        KeepaliveLost,
        ServerLog,
        RequestProgress,
        ResourceUpdated,
        ElicitationRequested,
        ElicitationResolved,
        SamplingRequested,
        SamplingResolved,
    ]
    for event in events:
        add(event, ["binding"], STR_BAD)
        add(event, ["at"], [NAN, INF, "1", True, None])
    add(StateChanged, ["from_state", "to_state"], [1, "ready", None])
    add(CatalogStale, ["family"], STR_BAD)
    for event in (CatalogCandidate, CatalogRefreshed, CatalogAdopted):
        add(event, ["generation"], [-1, True, 1.5])
        add(event, ["digest"], STR_BAD)
    add(CatalogCandidate, ["adopted"], [-1, True])
    add(CatalogAdopted, ["previous"], [-1, True])
    for event in (CatalogRejected, ConnectionLost):
        add(event, ["failure_class"], [1, "deadline", None])
        add(event, ["message"], STR_BAD)
        add(event, ["adopted"], [-1, True])
        add(event, ["retrying"], BOOL_BAD)
    add(ConnectionRestored, ["server"], [None, "srv"])
    add(ConnectionRestored, ["drift"], STR_BAD)
    add(ConnectionRestored, ["adopted", "generation"], [-1, True])
    for event in (KeepaliveFailed, KeepaliveRecovered, KeepaliveLost):
        add(event, ["failures"], [0, -1, True, 1.5, None])
    add(KeepaliveFailed, ["problem"], STR_BAD)
    add(ServerLog, ["level"], ["info", None])
    add(ServerLog, ["logger", "text"], STR_BAD)
    add(RequestProgress, ["progress", "total"], [NAN, INF, True])
    add(ResourceUpdated, ["uri"], STR_BAD)
    add(ElicitationRequested, ["mode"], [1, None])
    add(ElicitationResolved, ["mode"], [1, None])
    add(ElicitationResolved, ["action"], [1, "accept"])
    add(ElicitationResolved, ["duration"], [NAN, INF, True])
    add(ElicitationResolved, ["problem"], STR_BAD)
    add(SamplingRequested, ["messages", "max_tokens"], [-1, True, 1.5])
    add(SamplingRequested, ["depth"], [0, -1, True])
    add(SamplingResolved, ["outcome"], [1, "completed", None])
    add(SamplingResolved, ["model"], STR_BAD)
    add(SamplingResolved, ["duration"], [NAN, INF, True])
    return cases


BAD = _cases()
BAD_BY_CLASS: dict[type, list[tuple[str, object]]] = {}
for _cls, _field, _bad in BAD:
    BAD_BY_CLASS.setdefault(_cls, []).append((_field, _bad))


def refusal_problems(cls: type, cases: list[tuple[str, object]]) -> list[str]:
    """Build ``cls`` with each bad field value; describe every case not refused properly."""
    problems = []
    for field, bad in cases:
        shown = repr(bad) if " at 0x" not in repr(bad) else type(bad).__name__
        try:
            make(cls, **{field: bad})
        except ConfigError as err:
            if not isinstance(err, ValueError):
                problems.append(f"{field}={shown}: not a ValueError")
            if err.failure_class is not FailureClass.INVALID_CONFIG:
                problems.append(f"{field}={shown}: class {err.failure_class}")
            if f"{cls.__name__}.{field}" not in err.message:
                problems.append(f"{field}={shown}: message {err.message!r}")
        except Exception as err:  # any other exception is itself the defect to report
            problems.append(f"{field}={shown}: raised {type(err).__name__}: {err}")
        else:
            problems.append(f"{field}={shown}: accepted")
    return problems


@pytest.mark.parametrize(
    "cls", sorted(BAD_BY_CLASS, key=lambda c: c.__name__), ids=lambda c: c.__name__
)
def test_fields_reject_bad_values(cls: type) -> None:
    """Each bad value raises ConfigError (a ValueError, invalid_config) naming Class.field."""
    assert refusal_problems(cls, BAD_BY_CLASS[cls]) == []


def test_every_value_class_has_rejection_cases() -> None:
    with_fields = {cls for cls in EXPORTED_VALUE_CLASSES if any(f.init for f in attrs.fields(cls))}
    exempt = {StreamableHTTPTransport, LegacySSETransport}  # see test_definition.py
    assert with_fields - exempt <= set(BAD_BY_CLASS)


STATUS_UNCHECKED = [
    ("protocol_version", 5),
    ("server", "srv"),
    ("transport_kind", None),
    ("redacted_origin", 5),
    ("failure", "late"),
    ("last_change", NAN),
    ("catalog_generation", -1),
    ("catalog_digest", None),
    ("candidate_generation", True),
    ("candidate_digest", 5),
    ("stale_families", [1]),
    ("compat_profile", None),
    ("reconnect_attempt", -1),
    ("dropped_notifications", "many"),
]


def test_status_fields_reject_bad_values() -> None:
    assert refusal_problems(Status, STATUS_UNCHECKED) == []


def test_completion_total_rejects_bool_and_negative() -> None:
    assert refusal_problems(Completion, [("total", True), ("total", False), ("total", -1)]) == []


# --- defaults ---


def test_timeouts_defaults() -> None:
    assert attrs.asdict(Timeouts()) == {
        "startup": 30.0,
        "request": 60.0,
        "elicitation": 300.0,
        "auth": 300.0,
        "idle": None,
    }
    assert Timeouts() == DEFAULT_TIMEOUTS


KIB = 1024
MIB = 1024 * 1024
LIMIT_DEFAULTS = {
    "max_concurrent_requests": 8,
    "max_catalog_pages": 64,
    "max_catalog_items": 1024,
    "max_frame_bytes": 16 * MIB,
    "max_body_bytes": 16 * MIB,
    "max_schema_bytes": 256 * KIB,
    "max_schema_depth": 32,
    "max_text_result_bytes": 1 * MIB,
    "max_app_view_bytes": 8 * MIB,
    "max_structured_bytes": 1 * MIB,
    "max_binary_item_bytes": 8 * MIB,
    "max_binary_items": 16,
    "max_log_message_bytes": 8 * KIB,
    "max_elicit_message_bytes": 4 * KIB,
    "max_elicit_schema_bytes": 16 * KIB,
    "max_prompt_count": 256,
    "max_resource_count": 4096,
    "max_sampling_depth": 2,
    "max_sampling_concurrency": 2,
    "max_inbound_requests": 8,
    "max_sampling_tokens": 8192,
    "max_input_rounds": 10,
    "max_input_requests": 16,
    "max_stderr_bytes": 8192,
}


def test_limits_defaults() -> None:
    assert len(LIMIT_DEFAULTS) == 24
    assert attrs.asdict(Limits()) == LIMIT_DEFAULTS
    assert Limits() == DEFAULT_LIMITS


def test_retry_defaults_and_attempt_cap() -> None:
    assert attrs.asdict(RetryPolicy()) == {
        "attempts": 5,
        "base_delay": 0.2,
        "max_delay": 30.0,
        "max_total": 120.0,
    }
    assert RetryPolicy(attempts=64).attempts == 64
    with pytest.raises(ConfigError, match=r"RetryPolicy\.attempts must be at most 64"):
        RetryPolicy(attempts=65)
    assert ReconnectPolicy() == ReconnectPolicy(disabled=False, retry=RetryPolicy())


def test_other_defaults() -> None:
    assert ToolFilter() == ToolFilter(allow=(), deny=())
    assert ClientCapabilities() == ClientCapabilities(
        elicitation=False, sampling=False, roots=False
    )
    assert CallOpts() == CallOpts(progress=None, deadline=None, timeout=None, cancel=None)
    assert Handlers() == Handlers(elicitation=None, sampling=None, roots=None, log=None, event=None)
    defn = Definition("srv", STDIO)
    assert defn.timeouts == Timeouts()
    assert defn.limits == Limits()
    assert defn.capabilities == ClientCapabilities()
    assert defn.tool_filter == ToolFilter()
    assert defn.allow_parallel_calls is False
    assert defn.compat is None
    assert defn.profile is PROFILE_DEFAULT
    assert defn.reconnect == ReconnectPolicy()
    assert defn.refresh == RetryPolicy()
    assert defn.log_level is LogLevel.INFO
    assert defn.protocol == "auto"
    assert Catalog().valid is False
    assert SampleResult("m", "t").stop_reason == "endTurn"
    assert Root("file:///a").name == ""


@pytest.mark.parametrize(
    ("cls", "field", "given"),
    [
        (ToolFilter, "allow", ["a", "b"]),
        (ToolFilter, "deny", iter(["a"])),
        (Profile, "tolerances", [Tolerance.LEGACY_SSE]),
        (Catalog, "warnings", ["w"]),
        (Catalog, "tools", []),
        (ToolSpec, "warnings", ["w"]),
        (Completion, "values", ["v"]),
        (ToolResult, "content", [Text("a")]),
        (ToolResult, "warnings", ["w"]),
        (Prompt, "messages", [PromptMessage("user", Text("a"))]),
        (PromptSpec, "arguments", [PromptArg(name="a")]),
        (Resource, "contents", [ResourceContent("res://a")]),
        (SampleRequest, "messages", [SampleMessage(SampleRole.USER, "x")]),
        (Annotations, "audience", ["user"]),
        (Status, "stale_families", ["tools"]),
        (StdioTransport, "args", ["a", "b"]),
        (StdioTransport, "inherit_env", ["PATH"]),
    ],
)
def test_lists_become_tuples(cls: type, field: str, given: Any) -> None:
    value = make(cls, **{field: given})
    assert isinstance(getattr(value, field), tuple)
    hash(value)


# --- JSON-holding fields ---

JSON_FIELDS: list[tuple[type, str]] = [
    (ToolSpec, "input_schema"),
    (ToolSpec, "output_schema"),
    (ToolSpec, "icons"),
    (ToolSpec, "execution"),
    (ToolSpec, "meta"),
    (ToolResult, "structured"),
    (ToolResult, "meta"),
    (ElicitRequest, "schema"),
    (ElicitResult, "content"),
    (Text, "meta"),
    (Image, "meta"),
    (Audio, "meta"),
    (EmbeddedResource, "meta"),
    (ResourceLink, "meta"),
    (Prompt, "meta"),
    (ResourceContent, "meta"),
    (Resource, "meta"),
    (LogMessage, "data"),
    (ServerLog, "data"),
    (mcpclient.Extension, "settings"),
    (mcpclient.SkillEntry, "frontmatter"),
    (ServerCapabilities, "extensions"),
]
JSON_IDS = [f"{c.__name__}.{f}" for c, f in JSON_FIELDS]


def test_json_fields_list_is_complete() -> None:
    held = {
        (cls, f.alias)
        for cls in EXPORTED_VALUE_CLASSES
        for f in attrs.fields(cls)
        if f.init and f.name.startswith("_")
    }
    assert held == set(JSON_FIELDS)


@pytest.mark.parametrize(("cls", "field"), JSON_FIELDS, ids=JSON_IDS)
def test_json_field(cls: type, field: str) -> None:
    # a fresh decoded copy on each access; neither the caller's input nor the
    # returned copy can change the value
    original = {"b": [1, {"c": "é"}], "a": None, "n": 1.5}
    value = make(cls, **{field: original})
    first = getattr(value, field)
    assert first == original
    assert first is not original
    first["b"].append(2)
    first["new"] = True
    original["b"][1]["c"] = "changed"
    assert getattr(value, field) == {"b": [1, {"c": "é"}], "a": None, "n": 1.5}
    assert getattr(value, field) is not getattr(value, field)
    # hashable and equal by content (key order is not content)
    one = make(cls, **{field: {"a": 1, "b": [True, None]}})
    two = make(cls, **{field: {"b": [True, None], "a": 1}})
    three = make(cls, **{field: {"a": 2, "b": [True, None]}})
    assert one == two
    assert hash(one) == hash(two)
    assert one != three
    assert len({one, two, three}) == 2
    # NaN, infinities and non-JSON types are refused
    for bad in (NAN, INF, -INF, {1, 2}, object(), b"x"):
        with pytest.raises(ConfigError) as info:
            make(cls, **{field: {"x": [bad]}})
        assert info.value.failure_class is FailureClass.INVALID_CONFIG


def test_json_field_error_names_class_and_field() -> None:
    assert refusal_problems(ToolSpec, [("input_schema", {"x": NAN})]) == []
    for cls, field in JSON_FIELDS:
        assert refusal_problems(cls, [(field, {"x": NAN})]) == []


def test_optional_json_fields_default_to_none() -> None:
    spec = make(ToolSpec)
    assert spec.output_schema is None
    assert spec.icons is None
    assert spec.execution is None
    assert spec.meta is None
    assert ToolResult().structured is None
    assert ElicitResult(ElicitAction.DECLINE).content is None
    assert Text("x").meta is None


def test_tool_spec_json_values_round_trip() -> None:
    spec = make(
        ToolSpec,
        icons=[{"src": "https://x/i.png"}],
        execution={"taskSupport": "optional"},
        output_schema={"type": "object"},
    )
    assert spec.icons == [{"src": "https://x/i.png"}]
    assert spec.execution == {"taskSupport": "optional"}
    assert spec.output_schema == {"type": "object"}
    assert spec.input_schema == {"type": "object"}


# --- Name ---


@pytest.mark.parametrize("good", ["a", "0", "a-b_c", "srv1", "a" * 32, "9-_"])
def test_name_accepts(good: str) -> None:
    name = Name(good)
    assert name == good
    assert isinstance(name, str)
    assert Name(name) is name


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("", "must not be empty"),
        ("a" * 33, "at most 32 bytes, got 33"),
        ("é" * 16 + "a", "at most 32 bytes, got 33"),
        ("A", "'A' at index 0"),
        ("aB", "'B' at index 1"),
        ("-a", "'-' at index 0"),
        ("_a", "'_' at index 0"),
        ("a.b", "'.' at index 1"),
        ("a b", "' ' at index 1"),
        ("ab/", "'/' at index 2"),
        ("aé", "'é' at index 1"),
        ("a\x00", "'\\x00' at index 1"),
    ],
)
def test_name_rejects_with_the_character_and_index(bad: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        Name(bad)
    assert "Definition.name" in info.value.message
    assert fragment in info.value.message


@pytest.mark.parametrize("bad", [None, 5, b"srv"])
def test_name_rejects_non_str(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"Definition\.name must be a str"):
        Name(bad)  # type: ignore[arg-type]


# --- ToolFilter ---


@pytest.mark.parametrize(
    ("allow", "deny", "raw", "permitted"),
    [
        ((), (), "anything", True),
        ((), ("x",), "x", False),
        ((), ("x",), "y", True),
        (("x",), (), "x", True),
        (("x",), (), "y", False),
        (("x",), ("x",), "x", False),
        (("Echo",), (), "echo", False),
        ((), ("Echo",), "echo", True),
        (("echo",), (), "echo ", False),
        (("ech",), (), "echo", False),
    ],
)
def test_tool_filter_permits(
    allow: tuple[str, ...], deny: tuple[str, ...], raw: str, permitted: bool
) -> None:
    assert ToolFilter(allow=allow, deny=deny).permits(raw) is permitted


def test_tool_filter_messages() -> None:
    with pytest.raises(ConfigError, match=r"ToolFilter\.allow\[1\] must not be empty"):
        ToolFilter(allow=["a", ""])
    with pytest.raises(ConfigError, match=r"ToolFilter\.deny lists 'a' twice"):
        ToolFilter(deny=["a", "b", "a"])
    ToolFilter(allow=["a"], deny=["a"])  # the same entry in both lists is legal


# --- Profile ---


def test_profile_sorts_and_dedups_tolerances() -> None:
    messy = Profile(
        "p",
        1,
        [
            Tolerance.DISPLAY_NAME_NORMALIZATION,
            Tolerance.INVALID_OUTPUT_SCHEMA,
            Tolerance.DISPLAY_NAME_NORMALIZATION,
        ],
    )
    tidy = Profile("p", 1, (Tolerance.INVALID_OUTPUT_SCHEMA, Tolerance.DISPLAY_NAME_NORMALIZATION))
    assert messy.tolerances == (
        Tolerance.INVALID_OUTPUT_SCHEMA,
        Tolerance.DISPLAY_NAME_NORMALIZATION,
    )
    assert messy == tidy
    assert hash(messy) == hash(tidy)
    assert messy.digest() == tidy.digest()


def test_profile_permits_and_str() -> None:
    assert not PROFILE_STRICT.permits(Tolerance.INVALID_OUTPUT_SCHEMA)
    assert PROFILE_DEFAULT.permits(Tolerance.INVALID_OUTPUT_SCHEMA)
    assert PROFILE_DEFAULT.permits(Tolerance.DISPLAY_NAME_NORMALIZATION)
    assert PROFILE_DEFAULT.permits(Tolerance.MISSING_LIST_METHOD)
    assert not PROFILE_STRICT.permits(Tolerance.MISSING_LIST_METHOD)
    assert not PROFILE_DEFAULT.permits(Tolerance.LEGACY_SSE)
    assert all(PROFILE_LEGACY.permits(t) for t in Tolerance)
    assert str(PROFILE_STRICT) == "strict/v1"
    # v2: the default and legacy profiles gained missing_list_method.
    assert str(PROFILE_DEFAULT) == "default/v2"
    assert str(PROFILE_LEGACY) == "legacy/v2"
    assert str(Profile("mine", 12)) == "mine/v12"
    assert Profile("mine", 1).tolerances == ()


@pytest.mark.parametrize(
    ("profile", "pinned"),
    [
        (PROFILE_STRICT, PINNED_STRICT),
        (PROFILE_DEFAULT, PINNED_DEFAULT),
        (PROFILE_LEGACY, PINNED_LEGACY),
    ],
    ids=str,
)
def test_shipped_profile_digests(profile: Profile, pinned: str) -> None:
    assert profile.digest() == pinned


def test_profile_digest_depends_on_every_part() -> None:
    base = Profile("p", 1, [Tolerance.LEGACY_SSE])
    variants = [
        Profile("q", 1, [Tolerance.LEGACY_SSE]),
        Profile("p", 2, [Tolerance.LEGACY_SSE]),
        Profile("p", 1, [Tolerance.INVALID_OUTPUT_SCHEMA]),
        Profile("p", 1, []),
    ]
    digests = {base.digest(), *(v.digest() for v in variants)}
    assert len(digests) == 5
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in digests)


def test_profile_name_bound_is_bytes() -> None:
    assert Profile("é" * 32, 1).name == "é" * 32
    with pytest.raises(ConfigError, match=r"Profile\.name"):
        Profile("é" * 32 + "a", 1)


# --- Catalog lookups ---


def _catalog() -> Catalog:
    echo = ToolSpec(raw_name="echo", model_name="mcp__srv__echo", input_schema={})
    dotted = ToolSpec(raw_name="a.b", model_name="mcp__srv__a_b", input_schema={})
    return Catalog(binding="srv", generation=3, tools=[echo, dotted])


def test_catalog_lookups() -> None:
    catalog = _catalog()
    assert catalog.valid
    echo = catalog.tool_by_raw_name("echo")
    assert echo is not None and echo.model_name == "mcp__srv__echo"
    dotted = catalog.tool_by_model_name("mcp__srv__a_b")
    assert dotted is not None and dotted.raw_name == "a.b"
    assert catalog.tool_by_raw_name("a_b") is None
    assert catalog.tool_by_raw_name("mcp__srv__echo") is None
    assert catalog.tool_by_model_name("echo") is None
    assert catalog.tool_by_raw_name("Echo") is None
    assert catalog.tool_by_model_name("missing") is None


def test_catalog_zero_and_equality() -> None:
    assert not Catalog().valid
    assert Catalog().tool_by_raw_name("echo") is None
    assert Catalog().tool_by_model_name("mcp__srv__echo") is None
    assert _catalog() == _catalog()
    assert hash(_catalog()) == hash(_catalog())
    assert Catalog(generation=1).valid


# --- CallOpts.resolve_deadline ---


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, 160.0),
        ({"timeout": 5.0}, 105.0),
        ({"deadline": 130.0}, 130.0),
        ({"deadline": 130.0, "timeout": 5.0}, 105.0),
        ({"deadline": 102.0, "timeout": 5.0}, 102.0),
        ({"deadline": 50.0}, 50.0),
        ({"deadline": 500.0}, 500.0),
    ],
)
def test_resolve_deadline(kwargs: dict[str, float], expected: float) -> None:
    assert CallOpts(**kwargs).resolve_deadline(now=100.0, default_timeout=60.0) == expected


def test_resolve_deadline_uses_given_now_only() -> None:
    opts = CallOpts(timeout=2.0)
    assert opts.resolve_deadline(0.0, 60.0) == 2.0
    assert opts.resolve_deadline(1000.0, 60.0) == 1002.0


# --- CancelToken ---


def test_cancel_token_runs_callbacks_once() -> None:
    token = CancelToken()
    calls: list[str] = []
    token.add_callback(lambda: calls.append("a"))
    token.add_callback(lambda: calls.append("b"))
    assert not token.cancelled
    assert calls == []
    token.cancel("stop")
    token.cancel("again")
    assert calls == ["a", "b"]
    assert token.cancelled
    assert token.reason == "stop"
    assert token.wait(0) is True


def test_cancel_token_late_callback_runs_at_once() -> None:
    token = CancelToken()
    token.cancel()
    calls: list[int] = []
    token.add_callback(lambda: calls.append(1))
    assert calls == [1]
    token.cancel()
    assert calls == [1]


def test_cancel_token_remove_callback() -> None:
    token = CancelToken()
    calls: list[str] = []
    handle = token.add_callback(lambda: calls.append("removed"))
    kept = token.add_callback(lambda: calls.append("kept"))
    assert handle != kept
    token.remove_callback(handle)
    token.remove_callback(handle)
    token.remove_callback(12345)
    token.cancel()
    assert calls == ["kept"]
    token.remove_callback(kept)


def test_cancel_token_wait_times_out_uncancelled() -> None:
    assert CancelToken().wait(0) is False
    assert "cancelled=False" in repr(CancelToken())


def test_cancel_token_callback_exception_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    token = CancelToken()
    calls: list[str] = []

    def boom() -> None:
        raise RuntimeError("callback failed")

    token.add_callback(lambda: calls.append("before"))
    token.add_callback(boom)
    token.add_callback(lambda: calls.append("after"))
    with caplog.at_level(logging.ERROR, logger="mcpclient"):
        token.cancel()
        token.add_callback(boom)
    assert calls == ["before", "after"]
    failures = [r for r in caplog.records if r.exc_info and r.name.startswith("mcpclient")]
    assert len(failures) == 2
    assert all(r.exc_info[0] is RuntimeError for r in failures if r.exc_info)


def test_cancel_token_concurrent_cancel_runs_each_callback_once() -> None:
    token = CancelToken()
    counts = [0] * 8
    lock = threading.Lock()

    def counter(index: int) -> Callable[[], None]:
        def bump() -> None:
            with lock:
                counts[index] += 1

        return bump

    for index in range(len(counts)):
        token.add_callback(counter(index))
    barrier = threading.Barrier(16)

    def worker() -> None:
        barrier.wait()
        token.cancel()

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == [1] * 8


def test_cancel_token_concurrent_register_and_cancel() -> None:
    token = CancelToken()
    counts = [0] * 16
    lock = threading.Lock()
    barrier = threading.Barrier(17)

    def register(index: int) -> None:
        def bump() -> None:
            with lock:
                counts[index] += 1

        barrier.wait()
        token.add_callback(bump)

    def cancel() -> None:
        barrier.wait()
        token.cancel()

    threads = [threading.Thread(target=register, args=(i,)) for i in range(16)]
    threads.append(threading.Thread(target=cancel))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == [1] * 16


# --- Root ---


@pytest.mark.parametrize("uri", ["file:///", "file:///home/me/project", "file://host/share"])
def test_root_accepts_file_uris(uri: str) -> None:
    assert Root(uri).uri == uri


def test_root_rejects_other_schemes_with_message() -> None:
    with pytest.raises(ConfigError, match=r"Root\.uri must be a file:// URI"):
        Root("https://example.com/")


# --- enums ---


def test_enum_strings() -> None:
    assert str(FailureClass.DEADLINE) == "deadline"
    assert str(State.READY) == "ready"
    assert str(Tolerance.LEGACY_SSE) == "legacy_sse"
    assert str(LogLevel.INFO) == "info"
    assert f"{FailureClass.INVALID_ARGUMENTS}" == "invalid_arguments"


def test_tolerance_members() -> None:
    assert {(t.value, str(t)) for t in Tolerance} == {
        (1, "invalid_output_schema"),
        (2, "legacy_sse"),
        (3, "display_name_normalization"),
        (4, "missing_list_method"),
    }
    assert len(Tolerance) == 4


SEED_FAILURE_CLASSES = [
    "invalid_config",
    "unsupported_protocol",
    "startup_timeout",
    "auth_required",
    "auth_denied",
    "auth_expired",
    "auth_failed",
    "transport_closed",
    "framing",
    "remote_http",
    "server_protocol",
    "deadline",
    "cancelled",
    "catalog_invalid",
    "catalog_stale",
    "catalog_over_limit",
    "not_found",
    "tool_unavailable",
    "tool_schema_changed",
    "remote_tool_error",
    "limit_exceeded",
    "elicitation_declined",
    "elicitation_cancelled",
    "elicitation_invalid",
    "elicitation_timeout",
    "sampling_denied",
    "sampling_over_budget",
    "indeterminate",
    "shutdown",
]


def test_failure_class_members() -> None:
    expected = {name: value for value, name in enumerate(SEED_FAILURE_CLASSES, start=1)}
    expected["invalid_arguments"] = 30
    expected["skill_invalid"] = 31
    expected["forked"] = 32
    expected["not_processed"] = 33
    expected["hook_failed"] = 34
    expected["call_denied"] = 35
    assert len(FailureClass) == 35
    assert {str(fc): fc.value for fc in FailureClass} == expected
    assert all(fc.name == str(fc).upper() for fc in FailureClass)


def test_state_members() -> None:
    assert [(s.value, str(s)) for s in State] == list(
        enumerate(
            [
                "configured",
                "starting",
                "authenticating",
                "discovering",
                "ready",
                "degraded",
                "reconnecting",
                "failed",
                "closing",
                "closed",
            ],
            start=1,
        )
    )


@pytest.mark.parametrize(
    ("enum", "members"),
    [
        (ElicitAction, ["accept", "decline", "cancel"]),
        (ElicitMode, ["form", "url"]),
        (SampleRole, ["user", "assistant"]),
        (SampleOutcome, ["completed", "denied", "failed"]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_small_enums(enum: type, members: list[str]) -> None:
    got = [(m.value, str(m), m.name) for m in enum]  # type: ignore[attr-defined]
    assert got == [(i, name, name.upper()) for i, name in enumerate(members, start=1)]


def test_log_level_members() -> None:
    levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    assert [str(level) for level in LogLevel] == levels
    assert [level.name for level in LogLevel] == [name.upper() for name in levels]
    assert LogLevel("warning") is LogLevel.WARNING


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2.69088, "2.7 s"),
        (30.0, "30 s"),
        (12.4, "12 s"),
        (0.25, "0.25 s"),
        (0.5, "0.5 s"),
        (0.05, "50 ms"),
        (5.0, "5 s"),
    ],
)
def test_durations_are_rounded_for_people(seconds: float, text: str) -> None:
    from mcpclient._core.deadline import for_people

    assert for_people(seconds) == text
