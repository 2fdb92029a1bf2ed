"""Catalog generations end to end (origin-client.md §7, DESIGN.md §7 "Caching", "Identity").

Discovery against the scriptable testing server (advertised families only,
pagination bounds, item caps, per-item drops, build-time failures, names,
ordering, digests, the tool filter as a projection), the generation lifecycle
(stale → candidate → adopt, revert, coalescing, retried failures, TTL hints)
in both eras, and runtime catalog changes on the official SDK's server.

Every test starts its own server and closes its client; the suite's leak
guard checks nothing is left behind.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    PROFILE_STRICT,
    CallOpts,
    CatalogAdopted,
    CatalogCandidate,
    CatalogError,
    CatalogRefreshed,
    CatalogRejected,
    CatalogStale,
    Event,
    FailureClass,
    Handlers,
    LimitExceededError,
    Limits,
    RetryPolicy,
    State,
    StateChanged,
    Tolerance,
    ToolFilter,
    ToolUnavailableError,
    connect,
)
from mcpclient._core.deadline import now
from mcpclient._internal.client.catalog import catalog_refresh
from tests import support
from tests.support.scripted_http import Answer, RouteServer

from .conftest import MakeDefinition
from .engine_support import MODERN, Recording, definition, text_of, wait_until

MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LATEST_LEGACY = "2025-11-25"
ERAS = [("legacy", LATEST_LEGACY), ("modern", MODERN)]
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
OBJ: dict[str, Any] = {"type": "object"}


class Events(support.Events):
    """The shared recorder, with a view of the catalog events alone."""

    def catalog_events(self) -> list[Event]:
        kinds = (CatalogStale, CatalogCandidate, CatalogRefreshed, CatalogAdopted, CatalogRejected)
        return [e for e in self.events if isinstance(e, kinds)]


def catalog_file(tmp_path: Path, name: str = "catalog.json", **families: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(families))
    return str(path)


def tool(name: str, schema: Any = OBJ, **extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "inputSchema": schema}
    raw.update(extra)
    return raw


def mutate(client: mcpclient.Client, **args: Any) -> None:
    result = client.call_tool("mutate_catalog", args)
    assert not result.is_error, text_of(result)


def list_counts(rec: Recording) -> dict[str, int]:
    methods = [m["method"] for m in rec.messages() if "id" in m and m.get("method") in LISTS]
    return {method: methods.count(method) for method in LISTS}


def refresh_done(binding: str = "engine", timeout: float = 5.0) -> None:
    """Wait until the binding's refresh worker has ended: no pass (or retry) runs or is queued.

    The worker (``mcpclient-refresh-<binding>``) exists only while a signal is
    pending or a pass runs, so once it is gone every queued pass has finished
    and posted its events (see :func:`tests.support.delivered` to see them arrive).
    """
    name = f"mcpclient-refresh-{binding}"
    assert support.threads_ended(name, timeout), f"{name} still running after {timeout}s"


class TTLTimers:
    """Spy on the TTL timers ``catalog_refresh`` arms: each one's delay, in arming order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._lock = threading.Lock()
        self._delays: list[float] = []
        real = catalog_refresh.watcher

        def schedule(due: float, callback: Any) -> Any:
            with self._lock:
                self._delays.append(due - now())
            return real.schedule(due, callback)

        spy = types.SimpleNamespace(schedule=schedule, Timer=real.Timer)
        monkeypatch.setattr(catalog_refresh, "watcher", spy)

    @property
    def delays(self) -> list[float]:
        with self._lock:
            return list(self._delays)


def era_flags(era: str) -> tuple[str, ...]:
    return ("--era", era)


def era_protocol(era: str) -> str:
    return "legacy" if era == "legacy" else "auto"


# =================================================================== discovery


@pytest.mark.parametrize(
    ("capabilities", "fetched"),
    [
        ("tools", ["tools/list"]),
        ("tools,prompts", ["tools/list", "prompts/list"]),
        ("resources", ["resources/list", "resources/templates/list"]),
        ("tools,prompts,resources,logging,completions", list(LISTS)),
    ],
)
def test_only_advertised_families_are_fetched(
    tmp_path: Path, capabilities: str, fetched: list[str]
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--capabilities", capabilities, record=rec.path)) as client:
        catalog = client.catalog()
        counts = list_counts(rec)
        assert {m for m, n in counts.items() if n} == set(fetched)
        assert all(counts[m] == 1 for m in fetched)
        assert catalog.capabilities.tools == ("tools" in capabilities)
        assert bool(catalog.tools) == ("tools" in capabilities)
        assert bool(catalog.prompts) == ("prompts" in capabilities)
        assert bool(catalog.resources) == ("resources" in capabilities)
        assert bool(catalog.resource_templates) == ("resources" in capabilities)


@pytest.mark.parametrize(("era", "version"), ERAS)
def test_pagination_collects_every_page(tmp_path: Path, era: str, version: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        *era_flags(era),
        "--page-size",
        "3",
        "--item-count",
        "tools=10",
        "--item-count",
        "prompts=4",
        record=rec.path,
        protocol=era_protocol(era),
    )
    with connect(defn) as client:
        catalog = client.catalog()
        assert catalog.protocol_version == version
        assert len(catalog.tools) == 18  # 8 built-ins + 10 generated
        assert len(catalog.prompts) == 5
        tool_lists = rec.requests("tools/list")
        assert len(tool_lists) == 6
        assert "cursor" not in (tool_lists[0].get("params") or {})
        assert all("cursor" in m["params"] for m in tool_lists[1:])


@pytest.mark.parametrize("family", ["tools", "prompts", "resources", "resourceTemplates"])
def test_endless_pages_stop_at_max_catalog_pages(tmp_path: Path, family: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    method = {
        "tools": "tools/list",
        "prompts": "prompts/list",
        "resources": "resources/list",
        "resourceTemplates": "resources/templates/list",
    }[family]
    defn = definition(
        "--endless-pages", family, record=rec.path, limits=Limits(max_catalog_pages=5)
    )
    with pytest.raises(LimitExceededError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.CATALOG_OVER_LIMIT
    assert len(rec.requests(method)) == 5


def test_exactly_max_catalog_pages_is_accepted(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    path = catalog_file(tmp_path, tools=["mutate_catalog", "echo"])
    defn = definition(
        "--catalog",
        path,
        "--page-size",
        "2",
        "--item-count",
        "tools=8",
        "--capabilities",
        "tools",
        record=rec.path,
        limits=Limits(max_catalog_pages=5),
    )
    with connect(defn) as client:
        assert len(client.catalog().tools) == 10
        assert len(rec.requests("tools/list")) == 5


def test_cursor_loop_is_a_defect(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition("--cursor-loop", "tools", "--page-size", "3", record=rec.path)
    with pytest.raises(CatalogError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    requests = rec.requests("tools/list")
    assert len(requests) == 2
    cursor = requests[1]["params"]["cursor"]
    assert cursor not in str(info.value)


def test_cursor_over_4_kib_is_a_defect_and_never_sent_back(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with pytest.raises(CatalogError) as info:
        connect(definition("--huge-cursor", "prompts", record=rec.path))
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert len(rec.requests("prompts/list")) == 1
    assert len(str(info.value)) < 1000


@pytest.mark.parametrize(
    ("family", "field", "builtin"),
    [
        ("tools", "max_catalog_items", 8),
        ("prompts", "max_prompt_count", 1),
        ("resources", "max_resource_count", 1),
        ("resourceTemplates", "max_resource_count", 1),
    ],
)
@pytest.mark.parametrize("over", [False, True], ids=["at-cap", "over-cap"])
def test_item_caps(family: str, field: str, builtin: int, over: bool) -> None:
    cap = 12
    extra = cap - builtin + (1 if over else 0)
    defn = definition(
        "--page-size", "5", "--item-count", f"{family}={extra}", limits=Limits(**{field: cap})
    )
    if over:
        with pytest.raises(LimitExceededError) as info:
            connect(defn)
        assert info.value.failure_class is FailureClass.CATALOG_OVER_LIMIT
        return
    with connect(defn) as client:
        catalog = client.catalog()
        got = {
            "tools": catalog.tools,
            "prompts": catalog.prompts,
            "resources": catalog.resources,
            "resourceTemplates": catalog.resource_templates,
        }[family]
        assert len(got) == cap


def test_refresh_over_a_cap_is_all_or_nothing() -> None:
    events = Events()
    defn = definition(
        "--era",
        "legacy",
        limits=Limits(max_catalog_items=9),
        refresh=RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01),
        protocol="legacy",
    )
    with connect(defn, events.handlers()) as client:
        mutate(client, add="one")
        candidate = events.wait(CatalogCandidate)[0]
        mutate(client, add="two")  # 10 tools: over the cap
        rejected = events.wait(CatalogRejected)[0]
        assert rejected.failure_class is FailureClass.CATALOG_OVER_LIMIT
        assert rejected.retrying is False
        assert rejected.adopted == 1
        assert client.catalog().generation == 1
        assert len(client.catalog().tools) == 8
        still = client.candidate()
        assert still is not None
        assert still.generation == candidate.generation
        assert {t.raw_name for t in still.tools} >= {"one"}
        assert "two" not in {t.raw_name for t in still.tools}


def test_duplicate_raw_names_fail_connect(tmp_path: Path) -> None:
    path = catalog_file(tmp_path, tools=["echo", tool("dup"), tool("dup", {"type": "object"})])
    with pytest.raises(CatalogError) as info:
        connect(definition("--catalog", path))
    assert info.value.failure_class is FailureClass.CATALOG_INVALID


def test_duplicate_raw_names_on_refresh_are_rejected() -> None:
    events = Events()
    defn = definition(refresh=RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01))
    with connect(defn, events.handlers()) as client:
        digest = client.catalog().digest
        mutate(client, set_tools=["mutate_catalog", "echo", tool("twice"), tool("twice")])
        rejected = events.wait(CatalogRejected)[0]
        assert rejected.failure_class is FailureClass.CATALOG_INVALID
        assert client.catalog().digest == digest
        assert client.candidate() is None
        assert client.status().candidate_generation == 0


# =================================================================== per item


def test_tools_with_bad_input_schemas_are_dropped_never_widened(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    path = catalog_file(
        tmp_path,
        tools=[
            "mutate_catalog",
            "echo",
            {"name": "missing"},
            tool("null", None),
            tool("string", "object"),
            tool("array", [{"type": "object"}]),
            tool("boolean", True),
        ],
    )
    with connect(definition("--catalog", path, record=rec.path)) as client:
        catalog = client.catalog()
        assert [t.raw_name for t in catalog.tools] == ["echo", "mutate_catalog"]
        dropped = [w for w in catalog.warnings if " dropped: its input schema" in w]
        assert len(dropped) == 5, catalog.warnings
        assert catalog.applied_tolerances == ()
        for name in ("missing", "null", "string", "array", "boolean"):
            with pytest.raises(ToolUnavailableError):
                client.call_tool(name, {})
        assert rec.requests("tools/call") == []


def test_schema_size_and_depth_bounds_drop_the_tool(tmp_path: Path) -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(10):
        deep = {"type": "object", "properties": {"p": deep}}
    path = catalog_file(
        tmp_path,
        tools=[
            "echo",
            tool("big", {"type": "object", "description": "x" * 3000}),
            tool("deep", deep),
            tool("fine", {"type": "object", "description": "x" * 100}),
        ],
    )
    limits = Limits(max_schema_bytes=2048, max_schema_depth=12)
    with connect(definition("--catalog", path, limits=limits)) as client:
        catalog = client.catalog()
        assert [t.raw_name for t in catalog.tools] == ["echo", "fine"]
        assert any("max_schema_bytes" in w for w in catalog.warnings)
        assert any("max_schema_depth" in w for w in catalog.warnings)


BAD_OUTPUT = tool("shaped", outputSchema="not a schema")


def test_invalid_output_schema_fails_the_generation_under_strict(tmp_path: Path) -> None:
    path = catalog_file(tmp_path, tools=["echo", BAD_OUTPUT])
    with pytest.raises(CatalogError) as info:
        connect(definition("--catalog", path, compat=PROFILE_STRICT))
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert "invalid_output_schema" in info.value.message


def test_invalid_output_schema_is_dropped_under_the_default_profile(tmp_path: Path) -> None:
    path = catalog_file(tmp_path, tools=["echo", "add", BAD_OUTPUT])
    with connect(definition("--catalog", path)) as client:
        catalog = client.catalog()
        spec = catalog.tool_by_raw_name("shaped")
        assert spec is not None
        assert spec.output_schema is None
        assert spec.output_schema_digest == ""
        assert any(w.startswith("output schema dropped") for w in spec.warnings)
        assert Tolerance.INVALID_OUTPUT_SCHEMA in catalog.applied_tolerances
        assert "compatibility: applied tolerance invalid_output_schema" in catalog.warnings
        add = catalog.tool_by_raw_name("add")
        assert add is not None and add.output_schema is not None and add.warnings == ()
        # The tool itself stays callable.
        assert text_of(client.call_tool("shaped", {"k": 1})) == '{"k": 1}'


def test_faithful_server_needs_no_tolerance_even_under_strict() -> None:
    with connect(definition(compat=PROFILE_STRICT)) as client:
        catalog = client.catalog()
        assert catalog.applied_tolerances == ()
        assert not any(w.startswith("compatibility:") for w in catalog.warnings)
        assert client.status().compat_profile == "strict/v1"


def test_schemas_are_kept_verbatim(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "$defs": {"positive": {"$anchor": "pos", "type": "integer", "minimum": 1}},
        "properties": {"n": {"$ref": "#/$defs/positive"}, "m": {"type": "string"}},
        "if": {"properties": {"n": {"const": 1}}, "required": ["n"]},
        "then": {"required": ["m"]},
        "else": {"not": {"required": ["m"]}},
        "additionalProperties": False,
        "x-vendor": {"keep": [1, 2.5, None, "é"]},
    }
    output = {"type": "object", "properties": {"sum": {"type": "number"}}, "$comment": "c"}
    path = catalog_file(tmp_path, tools=[tool("verbatim", schema, outputSchema=output)])
    with connect(definition("--catalog", path)) as client:
        spec = client.catalog().tool_by_raw_name("verbatim")
        assert spec is not None
        assert spec.input_schema == schema
        assert spec.output_schema == output


# ----------------------------------------------------------------- no network $ref


class Canary(RouteServer):
    """A loopback HTTP server that records every request it receives."""

    def __init__(self) -> None:
        super().__init__(
            default=Answer(body=b'{"type": "string"}', content_type="application/schema+json")
        )

    @property
    def hits(self) -> list[str]:
        return self.paths()


@pytest.fixture
def canary() -> Iterator[Canary]:
    server = Canary()
    try:
        yield server
    finally:
        server.close()


class FifoCanary:
    """A named pipe that notices being opened for reading (a ``file:`` fetch)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "schema.fifo"
        os.mkfifo(self.path)
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self._wait, name="canary-fifo", daemon=True)
        self.thread.start()

    def _wait(self) -> None:
        fd = os.open(self.path, os.O_WRONLY)  # blocks until someone opens it to read
        self.opened.set()
        os.close(fd)

    def close(self) -> None:
        # Release the writer by opening the read end ourselves (after the assertions).
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.thread.join(5)
        os.close(fd)


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[FifoCanary]:
    canary = FifoCanary(tmp_path)
    try:
        yield canary
    finally:
        canary.close()


def test_network_refs_are_never_fetched(tmp_path: Path, canary: Canary, fifo: FifoCanary) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    url = canary.url
    tools = [
        "mutate_catalog",
        # the built-in add runs: it answers structured content, checked against the output schema
        tool(
            "add",
            {
                "type": "object",
                "properties": {"a": {"$ref": f"{url}/a.json"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
            outputSchema={"$ref": f"{url}/out.json"},
        ),
        tool("refs", {"type": "object", "properties": {"x": {"$ref": f"{url}/x.json#/d"}}}),
        tool("fileref", {"type": "object", "properties": {"x": {"$ref": fifo.path.as_uri()}}}),
        tool(
            "based",
            {
                "$id": f"{url}/base/schema.json",
                "type": "object",
                "properties": {"x": {"$ref": "other.json"}},
            },
        ),
    ]
    path = catalog_file(tmp_path, tools=tools)
    events = Events()
    with connect(definition("--catalog", path, record=rec.path), events.handlers()) as client:
        catalog = client.catalog()
        add = catalog.tool_by_raw_name("add")
        assert add is not None
        assert add.input_schema["properties"]["a"] == {"$ref": f"{url}/a.json"}
        assert add.output_schema == {"$ref": f"{url}/out.json"}

        result = client.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error
        assert result.structured == {"sum": 5}
        assert any("not validated" in w for w in result.warnings), result.warnings
        assert any("structured content was not validated" in w for w in result.warnings)

        for name in ("refs", "fileref", "based"):
            # Arguments the remote schema would refuse still go out: nothing is resolved.
            result = client.call_tool(name, {"x": 12})
            assert not result.is_error
            assert any("not validated" in w for w in result.warnings), result.warnings
        assert len(rec.requests("tools/call")) == 4

        mutate(client, notify="tools")
        events.wait(CatalogRefreshed)
        assert client.catalog().digest == catalog.digest
    assert canary.hits == []
    assert not fifo.opened.is_set()


# =================================================================== names


COLLIDING = ["a.b", "a/b", "a b", "a:b"]


def test_colliding_names_get_suffixed_model_names(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    path = catalog_file(tmp_path, tools=["echo", *(tool(n) for n in COLLIDING)])
    with connect(definition("--catalog", path, record=rec.path)) as client:
        catalog = client.catalog()
        models = {t.raw_name: t.model_name for t in catalog.tools}
        assert models["echo"] == "mcp__engine__echo"
        assert len(set(models.values())) == len(models) == 5
        for raw in COLLIDING:
            model = models[raw]
            assert MODEL_NAME.match(model), model
            assert re.fullmatch(r"mcp__engine__a_b_[0-9a-f]{8}", model), model
            spec = catalog.tool_by_model_name(model)
            assert spec is not None and spec.raw_name == raw
        assert Tolerance.DISPLAY_NAME_NORMALIZATION in catalog.applied_tolerances
        assert "compatibility: applied tolerance display_name_normalization" in catalog.warnings
        # The raw name is what goes on the wire.
        assert text_of(client.call_tool("a/b", {"k": 1})) == '{"k": 1}'
        assert rec.requests("tools/call")[-1]["params"]["name"] == "a/b"


def test_lone_sanitized_name_is_not_suffixed(tmp_path: Path) -> None:
    path = catalog_file(tmp_path, tools=["echo", tool("files.read")])
    with connect(definition("--catalog", path)) as client:
        spec = client.catalog().tool_by_raw_name("files.read")
        assert spec is not None and spec.model_name == "mcp__engine__files_read"


@pytest.mark.parametrize("tools", [COLLIDING, ["a/b"]], ids=["colliding", "lone"])
def test_name_normalization_fails_the_generation_under_strict(
    tmp_path: Path, tools: list[str]
) -> None:
    path = catalog_file(tmp_path, tools=["echo", *(tool(n) for n in tools)])
    with pytest.raises(CatalogError) as info:
        connect(definition("--catalog", path, compat=PROFILE_STRICT))
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert "display_name_normalization" in info.value.message


# =================================================================== order, digest, filter


def _reordered(tmp_path: Path) -> tuple[str, str]:
    first = [
        {
            "name": "zeta",
            "description": "last",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "string", "minLength": 1}, "b": {"type": "number"}},
                "required": ["a"],
            },
        },
        {"name": "alpha", "inputSchema": {"type": "object", "additionalProperties": False}},
        "echo",
        {
            "name": "mid",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"r": {"type": "integer"}}},
            "annotations": {"readOnlyHint": True, "title": "Mid"},
        },
        "mutate_catalog",
    ]
    second = [
        "mutate_catalog",
        {
            "outputSchema": {"properties": {"r": {"type": "integer"}}, "type": "object"},
            "annotations": {"title": "Mid", "readOnlyHint": True},
            "inputSchema": {"type": "object"},
            "name": "mid",
        },
        {"inputSchema": {"additionalProperties": False, "type": "object"}, "name": "alpha"},
        {
            "inputSchema": {
                "required": ["a"],
                "properties": {"b": {"type": "number"}, "a": {"minLength": 1, "type": "string"}},
                "type": "object",
            },
            "description": "last",
            "name": "zeta",
        },
        "echo",
    ]
    return (
        catalog_file(tmp_path, "first.json", tools=first),
        catalog_file(tmp_path, "second.json", tools=second),
    )


def test_order_and_digest_do_not_depend_on_server_order(tmp_path: Path) -> None:
    first, second = _reordered(tmp_path)
    catalogs = []
    for path in (first, second):
        defn = definition("--catalog", path, "--server-version", "same", unique=False)
        with connect(defn) as client:
            catalogs.append(client.catalog())
            assert client.status().catalog_digest == client.catalog().digest
    one, two = catalogs
    names = [t.raw_name for t in one.tools]
    assert names == ["alpha", "echo", "mid", "mutate_catalog", "zeta"]
    assert names == [t.raw_name for t in two.tools]
    assert one.digest == two.digest
    assert [t.model_name for t in one.tools] == [t.model_name for t in two.tools]
    assert [t.input_schema_digest for t in one.tools] == [t.input_schema_digest for t in two.tools]
    assert [t.output_schema_digest for t in one.tools] == [
        t.output_schema_digest for t in two.tools
    ]


def test_tool_filter_is_a_projection_and_an_enforcement_point(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")

    def build(tool_filter: ToolFilter, record: Path | None = None) -> mcpclient.Definition:
        return definition(
            "--server-version", "filtered", unique=False, record=record, tool_filter=tool_filter
        )

    events = Events()
    with (
        connect(build(ToolFilter(allow=("echo", "mutate_catalog")), rec.path)) as narrow,
        connect(build(ToolFilter(deny=("echo",))), events.handlers()) as wide,
    ):
        assert narrow.status().catalog_digest == wide.status().catalog_digest
        assert narrow.catalog().digest == wide.catalog().digest
        narrow_tools = {t.raw_name for t in narrow.catalog().tools}
        wide_tools = {t.raw_name for t in wide.catalog().tools}
        assert narrow_tools == {"echo", "mutate_catalog"}
        assert "echo" not in wide_tools and "add" in wide_tools
        assert narrow.catalog().tool_by_raw_name("add") is None

        with pytest.raises(ToolUnavailableError):
            narrow.call_tool("add", {"a": 1, "b": 2})
        with pytest.raises(ToolUnavailableError):
            wide.call_tool("echo", {"message": "x"})
        assert rec.requests("tools/call") == []

        # The candidate is projected the same way.
        mutate(wide, add="extra")
        events.wait(CatalogCandidate)
        candidate = wide.candidate()
        assert candidate is not None
        assert "extra" in {t.raw_name for t in candidate.tools}
        assert "echo" not in {t.raw_name for t in candidate.tools}


# =================================================================== generations


@pytest.mark.parametrize(("era", "version"), ERAS)
def test_change_becomes_a_candidate_until_adopted(tmp_path: Path, era: str, version: str) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(*era_flags(era), record=rec.path, protocol=era_protocol(era))
    with connect(defn, events.handlers()) as client:
        status = client.status()
        assert status.protocol_version == version
        assert status.catalog_generation == 1
        assert status.candidate_generation == 0
        assert status.candidate_digest == ""
        assert client.candidate() is None
        first = client.catalog()
        assert first.generation == 1
        assert [(e.generation, e.previous) for e in events.of(CatalogAdopted)] == [(1, 0)]
        if era == "modern":
            assert wait_until(lambda: bool(rec.requests("subscriptions/listen")))
            assert rec.requests("initialize") == []

        mutate(client, add="extra")
        candidate_event = events.wait(CatalogCandidate)[0]
        kinds = [type(e) for e in events.catalog_events()]
        assert kinds == [CatalogAdopted, CatalogStale, CatalogCandidate]
        assert events.of(CatalogStale)[0].family == "tools"
        generation = candidate_event.generation
        assert generation > 1
        assert candidate_event.adopted == 1

        candidate = client.candidate()
        assert candidate is not None
        assert candidate.generation == generation
        assert candidate.digest == candidate_event.digest != first.digest
        assert "extra" in {t.raw_name for t in candidate.tools}
        status = client.status()
        assert status.candidate_generation == generation
        assert status.candidate_digest == candidate.digest
        assert status.catalog_generation == 1
        assert status.stale_families == ()
        # Not adopted yet: the catalog and the calls still see generation 1.
        assert client.catalog().digest == first.digest
        with pytest.raises(ToolUnavailableError):
            client.call_tool("extra", {})

        client.adopt(generation)
        adopted = events.of(CatalogAdopted)[-1]  # delivered before adopt() returns
        assert (adopted.generation, adopted.previous) == (generation, 1)
        assert adopted.digest == candidate.digest
        catalog = client.catalog()
        assert catalog.generation == generation
        assert "extra" in {t.raw_name for t in catalog.tools}
        assert client.candidate() is None
        assert client.status().catalog_generation == generation
        assert client.status().candidate_generation == 0
        assert text_of(client.call_tool("extra", {"k": "v"})) == '{"k": "v"}'

        with pytest.raises(CatalogError) as info:
            client.adopt(generation)  # consumed
        assert info.value.failure_class is FailureClass.CATALOG_STALE


def test_adopt_of_a_stale_or_unknown_generation_names_the_candidate() -> None:
    events = Events()
    with connect(definition(), events.handlers()) as client:
        with pytest.raises(CatalogError) as info:
            client.adopt(2)
        assert info.value.failure_class is FailureClass.CATALOG_STALE
        assert "no candidate" in info.value.message

        mutate(client, add="one")
        first = events.wait(CatalogCandidate)[0].generation
        mutate(client, add="two")
        second = events.wait(CatalogCandidate, 2)[1].generation
        assert second > first
        for wrong in (first, second + 5, 1, 0):
            with pytest.raises(CatalogError) as info:
                client.adopt(wrong)
            assert info.value.failure_class is FailureClass.CATALOG_STALE
            assert f"generation {second}" in info.value.message
        assert client.status().candidate_generation == second
        assert client.catalog().generation == 1
        client.adopt(second)
        assert {"one", "two"} <= {t.raw_name for t in client.catalog().tools}


def test_adopt_from_the_event_handler_and_after_close() -> None:
    events = Events()
    adopted: list[int] = []
    holder: list[mcpclient.Client] = []

    def on_event(event: Event) -> None:
        events(event)
        if isinstance(event, CatalogCandidate):
            holder[0].adopt(event.generation)  # on the event lane: must not wait on itself
            adopted.append(event.generation)

    client = connect(definition(), Handlers(event=on_event))
    holder.append(client)
    with client:
        started = time.monotonic()
        mutate(client, add="extra")
        assert wait_until(lambda: client.catalog().tool_by_raw_name("extra") is not None, 3)
        assert time.monotonic() - started < 2.0
        events.wait(CatalogAdopted, 2)
        assert [e.generation for e in events.of(CatalogAdopted)] == [1, adopted[0]]
        assert client.candidate() is None
    generation = client.catalog().generation  # still readable after close
    assert generation == adopted[0]
    with pytest.raises(mcpclient.ShutdownError):
        client.adopt(generation + 1)


def test_concurrent_adopts_of_one_candidate_have_one_winner() -> None:
    events = Events()
    with connect(definition(), events.handlers()) as client:
        mutate(client, add="extra")
        generation = events.wait(CatalogCandidate)[0].generation
        outcomes: list[str] = []
        barrier = threading.Barrier(8)

        def attempt() -> None:
            barrier.wait()
            try:
                client.adopt(generation)
            except CatalogError as exc:
                outcomes.append(str(exc.failure_class))
            else:
                outcomes.append("adopted")

        threads = [threading.Thread(target=attempt) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(outcomes) == ["adopted"] + ["catalog_stale"] * 7
        assert [e.generation for e in events.of(CatalogAdopted)] == [1, generation]


@pytest.mark.parametrize(("era", "version"), ERAS)
def test_revert_before_adopting_withdraws_the_candidate(era: str, version: str) -> None:
    events = Events()
    defn = definition(*era_flags(era), protocol=era_protocol(era))
    with connect(defn, events.handlers()) as client:
        digest = client.catalog().digest
        mutate(client, add="extra")
        generation = events.wait(CatalogCandidate)[0].generation
        mutate(client, remove="extra")
        refreshed = events.wait(CatalogRefreshed)[0]
        assert (refreshed.generation, refreshed.digest) == (1, digest)
        assert client.candidate() is None
        assert client.status().candidate_generation == 0
        with pytest.raises(CatalogError) as info:
            client.adopt(generation)
        assert info.value.failure_class is FailureClass.CATALOG_STALE
        assert client.catalog().digest == digest


def test_refresh_identical_to_the_candidate_keeps_it_silently(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    with connect(definition(record=rec.path), events.handlers()) as client:
        mutate(client, add="extra")
        generation = events.wait(CatalogCandidate)[0].generation
        lists = len(rec.requests("tools/list"))
        before = len(events.catalog_events())

        mutate(client, notify="tools")
        events.wait(CatalogStale, 2)
        assert wait_until(lambda: len(rec.requests("tools/list")) > lists)
        assert wait_until(lambda: client.status().stale_families == ())
        refresh_done()
        support.delivered(client)  # anything the pass posted has reached the recorder
        after = events.catalog_events()[before:]
        assert [type(e) for e in after] == [CatalogStale]
        assert client.status().candidate_generation == generation
        client.adopt(generation)
        assert client.catalog().generation == generation


def test_call_in_flight_keeps_the_generation_it_started_with(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(record=rec.path, allow_parallel_calls=True)
    with connect(defn, events.handlers()) as client:
        future = client.submit_tool_call("slow", {"seconds": 1.0}, CallOpts(timeout=10))
        assert wait_until(lambda: rec.tool_call_ids("slow"))
        mutate(client, remove="slow")
        generation = events.wait(CatalogCandidate)[0].generation
        client.adopt(generation)
        assert client.catalog().tool_by_raw_name("slow") is None
        assert not future.done()
        result = future.result(timeout=5)
        assert not result.is_error
        assert text_of(result) == "slept 1 s"
        with pytest.raises(ToolUnavailableError):
            client.call_tool("slow", {"seconds": 0})


# =================================================================== coalescing


def test_a_storm_during_a_refresh_coalesces(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(
        "--era",
        "modern",
        "--capabilities",
        "tools,prompts",
        "--list-delay",
        "0.3",
        record=rec.path,
    )
    with connect(defn, events.handlers()) as client:
        assert list_counts(rec)["tools/list"] == 1
        mutate(client, notify="prompts", storm={"family": "tools", "count": 50})
        # While the pass is pending, both families are stale.
        assert wait_until(lambda: client.status().stale_families == ("prompts", "tools"), 2)
        stale = events.wait(CatalogStale, 2)
        assert sorted(e.family for e in stale) == ["prompts", "tools"]
        assert wait_until(lambda: client.status().stale_families == (), 5)
        # Every notification was read before mutate's answer: once the worker is
        # gone, any further (wrongly) queued pass has run and posted its events.
        refresh_done()
        support.delivered(client)
        counts = list_counts(rec)
        extra = counts["tools/list"] - 1
        assert 1 <= extra <= 2, counts
        assert counts["prompts/list"] == counts["tools/list"]
        assert len(events.of(CatalogStale)) == 2  # one per family while pending
        assert len(events.of(CatalogRefreshed)) == extra
        assert events.of(CatalogCandidate) == []


# =================================================================== refresh failures


FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.1)


def _failing_binding(events: Events) -> mcpclient.Client:
    defn = definition("--era", "legacy", protocol="legacy", refresh=FAST_RETRY)
    return connect(defn, events.handlers())


def test_persistent_refresh_failure_is_retried_then_given_up() -> None:
    events = Events()
    with _failing_binding(events) as client:
        first = client.catalog()
        mutate(client, add="extra")
        generation = events.wait(CatalogCandidate)[0].generation

        mutate(client, fail_lists=-1, notify="tools")
        events.wait(CatalogRejected, 3)
        # No fourth attempt: the worker ends after the third, and what it posted arrives.
        refresh_done()
        support.delivered(client)
        rejected = events.of(CatalogRejected)
        assert [r.retrying for r in rejected] == [True, True, False]
        assert all(r.adopted == 1 for r in rejected)
        assert all(r.failure_class is FailureClass.SERVER_PROTOCOL for r in rejected)
        status = client.status()
        assert status.state is State.DEGRADED
        assert status.failure is not None
        assert status.failure.failure_class is FailureClass.SERVER_PROTOCOL
        assert status.failure.code == -32603  # the server's JSON-RPC error code, kept
        assert status.stale_families == ("tools",)
        # The adopted catalog and the candidate are untouched.
        assert client.catalog().digest == first.digest
        assert client.catalog().generation == 1
        assert status.candidate_generation == generation
        candidate = client.candidate()
        assert candidate is not None and candidate.generation == generation
        # A degraded binding still serves calls.
        assert text_of(client.call_tool("echo", {"message": "still"})) == "still"


def _fail_then_recover(events: Events, client: mcpclient.Client) -> int:
    mutate(client, add="extra")
    generation = events.wait(CatalogCandidate)[0].generation
    mutate(client, fail_lists=-1, notify="tools")
    events.wait(CatalogRejected, 3)
    assert wait_until(lambda: not events.of(CatalogRejected)[-1].retrying)
    assert client.status().state is State.DEGRADED
    mutate(client, fail_lists=0, notify="tools")
    assert wait_until(lambda: client.status().state is State.READY)
    assert wait_until(lambda: client.status().stale_families == ())
    return generation


def test_a_later_success_returns_the_binding_to_ready() -> None:
    events = Events()
    with _failing_binding(events) as client:
        generation = _fail_then_recover(events, client)

        def transitions() -> list[tuple[State, State]]:
            return [(e.from_state, e.to_state) for e in events.of(StateChanged)]

        # status() flips before the StateChanged event reaches its handler (events
        # are delivered on their own lane): wait for the event, not the state.
        assert wait_until(lambda: transitions()[-1] == (State.DEGRADED, State.READY))
        assert transitions()[-2:] == [
            (State.READY, State.DEGRADED),
            (State.DEGRADED, State.READY),
        ]
        # Same listing as the candidate: kept, ordinal stable, no new candidate.
        assert len(events.of(CatalogCandidate)) == 1
        assert client.status().candidate_generation == generation
        assert len(events.of(CatalogRejected)) == 3
        client.adopt(generation)
        # Every fetch attempt reserved an ordinal (3 failed, 1 kept): gaps, never reuse.
        mutate(client, add="more")
        later = events.wait(CatalogCandidate, 2)[1].generation
        assert later > generation + 3


def test_a_later_success_clears_the_recorded_failure() -> None:
    events = Events()
    with _failing_binding(events) as client:
        _fail_then_recover(events, client)
        assert client.status().failure is None


def test_close_during_a_refresh_is_prompt() -> None:
    events = Events()
    client = connect(definition("--era", "legacy", protocol="legacy"), events.handlers())
    try:
        mutate(client, list_delay=30, notify="tools")
        events.wait(CatalogStale)
        time.sleep(0.1)  # the pass is now waiting for tools/list
    finally:
        started = time.monotonic()
        client.close()
        took = time.monotonic() - started
    assert events.of(CatalogRejected) == []
    assert took < 0.8, f"close took {took:.2f} s"


# =================================================================== TTL hints


class _NoJitter:
    @staticmethod
    def uniform(low: float, high: float) -> float:
        return low


def _ttl_stale_times(events: Events) -> list[float]:
    return [e.at for e in events.of(CatalogStale) if e.family == "tools"]


def test_positive_ttl_refreshes_no_sooner_than_the_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    floor = 0.6
    monkeypatch.setattr(catalog_refresh, "_TTL_FLOOR", floor)
    monkeypatch.setattr(catalog_refresh, "_random", _NoJitter())
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(
        "--era", "modern", "--capabilities", "tools", "--ttl-ms", "100", record=rec.path
    )
    with connect(defn, events.handlers()) as client:
        assert client.status().protocol_version == MODERN
        start = time.time()
        # Three TTL-driven marks: two gaps, each of which must respect the floor.
        marked = wait_until(lambda: len(_ttl_stale_times(events)) >= 3, 10)
        times = _ttl_stale_times(events)
        elapsed = time.time() - start
        refreshed = len(events.of(CatalogRefreshed))
        lists = len(rec.requests("tools/list"))
    # The first refresh follows the TTL itself (no earlier TTL-driven refresh).
    assert times, "a positive ttl must mark the family stale"
    assert times[0] - start < 0.5
    assert marked and len(times) >= 2, "the timer is re-armed after a TTL-driven refresh"
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(gap >= floor - 0.05 for gap in gaps), gaps
    assert len(times) <= 1 + int(elapsed / floor) + 1
    assert refreshed >= len(times) - 1
    assert lists >= 1 + len(times) - 1
    assert not events.of(CatalogCandidate)


def test_ttl_floor_is_60_seconds_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    timers = TTLTimers(monkeypatch)
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(
        "--era", "modern", "--capabilities", "tools", "--ttl-ms", "50", record=rec.path
    )
    with connect(defn, events.handlers()) as client:
        assert wait_until(lambda: len(_ttl_stale_times(events)) >= 1, 2)
        # The refresh the TTL drove re-arms the timer: no sooner than the 60 s floor.
        assert wait_until(lambda: len(timers.delays) >= 2, 5), timers.delays
        first, rearmed = timers.delays[:2]
        assert first < 1.0, timers.delays  # the first follows the hint itself
        assert rearmed >= 55.0, timers.delays
        assert len(timers.delays) == 2, timers.delays
        refresh_done()
        support.delivered(client)
        assert len(_ttl_stale_times(events)) == 1
        assert len(rec.requests("tools/list")) == 2
        assert client.status().stale_families == ()


@pytest.mark.parametrize(
    ("era", "ttl"), [("modern", "0"), ("legacy", "200")], ids=["modern-zero", "legacy-absent"]
)
def test_zero_or_absent_ttl_starts_no_timer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str, ttl: str
) -> None:
    monkeypatch.setattr(catalog_refresh, "_TTL_FLOOR", 0.05)
    monkeypatch.setattr(catalog_refresh, "_random", _NoJitter())
    timers = TTLTimers(monkeypatch)
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    defn = definition(
        "--era",
        era,
        "--capabilities",
        "tools",
        "--ttl-ms",
        ttl,
        record=rec.path,
        protocol=era_protocol(era),
    )
    with connect(defn, events.handlers()) as client:
        # Discovery (done when connect returns) is where a timer would be armed.
        assert timers.delays == []
        # Belt and braces for a timer armed some other way: with the 0.05 s floor
        # it would have fired several times over within this short pause.
        time.sleep(0.3)
        support.delivered(client)
        assert len(rec.requests("tools/list")) == 1
        assert events.of(CatalogStale) == []


# =================================================================== official SDK server


@pytest.mark.peer
@pytest.mark.parametrize(("mode", "version"), [("auto", MODERN), ("legacy", LATEST_LEGACY)])
def test_sdk_server_runtime_tool_changes(
    sdk_definition: MakeDefinition, mode: str, version: str
) -> None:
    events = Events()
    defn = sdk_definition(
        name="sdkcat",
        protocol=mode,
        env={"MCPCLIENT_SDK_PEER_CATALOG_CONTROLS": "1"},
        timeouts=mcpclient.Timeouts(startup=20, request=10),
    )
    with connect(defn, events.handlers()) as client:
        assert client.status().protocol_version == version
        first = client.catalog()
        assert "set_extra" in {t.raw_name for t in first.tools}
        assert first.tool_by_raw_name("extra") is None

        def toggle(present: bool) -> None:
            result = client.call_tool("set_extra", {"present": present})
            assert not result.is_error, text_of(result)

        # add -> stale, candidate
        toggle(True)
        candidate = events.wait(CatalogCandidate, 1, timeout=10)[0]
        assert events.of(CatalogStale)[0].family == "tools"
        pending = client.candidate()
        assert pending is not None and pending.tool_by_raw_name("extra") is not None

        # revert before adopting -> refreshed, candidate withdrawn
        toggle(False)
        refreshed = events.wait(CatalogRefreshed, 1, timeout=10)[0]
        assert (refreshed.generation, refreshed.digest) == (1, first.digest)
        assert client.candidate() is None
        with pytest.raises(CatalogError):
            client.adopt(candidate.generation)

        # add again -> a new candidate, adopted
        toggle(True)
        again = events.wait(CatalogCandidate, 2, timeout=10)[1]
        assert again.generation > candidate.generation
        assert again.digest == candidate.digest
        client.adopt(again.generation)
        adopted = events.of(CatalogAdopted)[-1]
        assert (adopted.generation, adopted.previous) == (again.generation, 1)
        assert client.catalog().tool_by_raw_name("extra") is not None
        assert text_of(client.call_tool("extra", {"message": "hi"})) == "extra: hi"

        # remove -> a candidate without it, adopted
        toggle(False)
        gone = events.wait(CatalogCandidate, 3, timeout=10)[2]
        assert gone.digest == first.digest
        client.adopt(gone.generation)
        assert client.catalog().digest == first.digest
        with pytest.raises(ToolUnavailableError):
            client.call_tool("extra", {"message": "hi"})
