"""Calls end to end, in both eras: what is refused locally, what is validated, how
results are bounded, futures, deadlines, concurrency and the outcome classes.

Most tests run against the scriptable testing server (``--era legacy`` and
``--era modern``; the client's ``protocol="auto"`` probes and falls back for the
legacy one), many through one module-scoped binding per era whose ``--catalog``
holds the schemas under test; ``--record`` shows what reached the server. The
last section runs the official SDK's peer (``peers/sdk_server.py`` with its
extras switched on) in both eras.

Outcome classes a call can produce, and where each is exercised (here, or in
the engine tests when already covered there):

* deadline: ``test_deadline_is_the_earlier_of_deadline_and_timeout``,
  ``test_endless_progress_ends_at_the_deadline_off_the_reader_thread``
* cancelled: ``test_submit_later_outcomes_arrive_on_the_future`` (a token),
  ``test_future_cancel_cancels_on_the_wire``
* shutdown: ``test_submit_local_refusals_raise_synchronously`` (closed binding)
* transport_closed, indeterminate: ``test_exit_mid_call_is_indeterminate_then_transport_closed``
* server_protocol: ``test_malformed_results_are_server_protocol_errors``,
  ``test_modern_result_types``
* limit_exceeded: ``test_input_required_rounds_are_bounded`` (and the oversized
  frame tests in ``test_engine_hostile.py``)
* tool_unavailable: ``test_unknown_tool_is_refused_before_sending``,
  ``test_filtered_tool_is_refused_before_sending``
* invalid_arguments: ``test_arguments_failing_the_schema_name_the_json_path`` and friends
* unsupported_protocol: ``test_capability_gating_sends_nothing``,
  ``test_task_support_without_the_servers_task_capability``
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import functools
import itertools
import json
import math
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import (
    Audio,
    CallOpts,
    CancelToken,
    ConnectionLostError,
    DeadlineExceededError,
    EmbeddedResource,
    Error,
    FailureClass,
    Handlers,
    Image,
    IndeterminateError,
    InvalidArgumentsError,
    LimitExceededError,
    Limits,
    PromptRef,
    ProtocolError,
    ReconnectPolicy,
    RequestCancelledError,
    ResourceLink,
    ResourceTemplateRef,
    ResourceUpdated,
    ShutdownError,
    State,
    Text,
    ToolFilter,
    ToolUnavailableError,
    Unsupported,
    connect,
)
from mcpclient._core.limits import TRUNCATION_MARKER
from tests.support import Events, delivered
from tests.support.scripted_http import Answer, RouteServer

from .conftest import MakeDefinition
from .engine_support import SLACK, Recording, definition, wait_until

ERAS = ["legacy", "modern"]
ERA_VERSION = {"legacy": "2025-11-25", "modern": "2026-07-28"}

# ---------------------------------------------------------------------------------------- fixtures

#: The output schema of the catalog's ``hostile`` tool (its ``result`` action lets a
#: test answer with any structuredContent).
OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def _tool(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"catalog tool {name}", "inputSchema": schema, **extra}


class SchemaHost(RouteServer):
    """A local HTTP server that records requests: a fetched ``$ref`` would show here."""

    def __init__(self) -> None:
        # A schema that would refuse the calls below, were it ever used.
        schema = {"type": "string", "definitions": {"z": {"type": "string"}}}
        super().__init__(default=Answer(body=schema))

    def hits_for(self, path: str) -> list[str]:
        return [hit for hit in self.paths() if hit.startswith(path)]


@pytest.fixture(scope="module")
def schema_host() -> Iterator[SchemaHost]:
    host = SchemaHost()
    try:
        yield host
    finally:
        host.close()


def _unvalidated_tools(host: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Tool name → (its input schema, arguments that schema would refuse if validated).

    Each schema is beyond the client-side validator, so the call must go out
    unvalidated, with a warning.
    """
    return {
        "prefix": (
            _obj({"t": {"type": "array", "prefixItems": [{"type": "integer"}]}}),
            {"t": ["not an integer"]},
        ),
        "uneval": (
            _obj({"a": {"type": "integer"}}, unevaluatedProperties=False),
            {"a": 1, "unexpected": 2},
        ),
        "dependent": (
            _obj(
                {"a": {"type": "integer"}, "b": {"type": "integer"}}, dependentRequired={"a": ["b"]}
            ),
            {"a": 1},
        ),
        "extref": (_obj({"a": {"$ref": f"{host}/extref.json"}}), {"a": 5}),
        "relref": (_obj({"a": {"$ref": "relref.json#/x"}}), {"a": 5}),
        "withid": (
            {"$id": f"{host}/withid.json", **_obj({"a": {"type": "string"}})},
            {"a": 5},
        ),
        "backref": (_obj({"s": {"type": "string", "pattern": "^(a)\\1$"}}), {"s": "ab"}),
        "lookahead": (_obj({"s": {"type": "string", "pattern": "^(?!x)"}}), {"s": "xyz"}),
    }


UNVALIDATED = sorted(_unvalidated_tools("http://h"))


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory, schema_host: SchemaHost) -> Path:
    tools: list[Any] = [
        "echo",
        "slow",
        "progress",
        "fail",
        _tool(
            "hostile",
            _obj({"action": {"type": "string"}}, required=["action"]),
            outputSchema=OUTPUT_SCHEMA,
        ),
        _tool(
            "fmt",
            _obj(
                {
                    "email": {"type": "string", "format": "email"},
                    "when": {"type": "string", "format": "date-time"},
                    "site": {"type": "string", "format": "uri"},
                }
            ),
        ),
        _tool(
            "defaults",
            _obj(
                {
                    "x": {"type": "integer", "default": 7},
                    "o": {
                        "type": "object",
                        "default": {"d": 1},
                        "properties": {"y": {"type": "integer", "default": 2}},
                    },
                }
            ),
        ),
        _tool("nested", _obj({"a": _obj({"b": {"type": "array", "items": {"type": "integer"}}})})),
        _tool(
            "optionals",
            _obj(
                {
                    "q": {"type": "string"},
                    "verbose": {"type": "boolean"},
                    "maybe": {"type": ["string", "null"]},
                },
                required=["q"],
            ),
        ),
        _tool(
            "localref",
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/count"}},
                "$defs": {"count": {"type": "integer", "minimum": 0}},
            },
        ),
        _tool("anchored", _obj({"s": {"type": "string", "pattern": "^abc$"}})),
        _tool("redos", _obj({"s": {"type": "string", "pattern": "^(a+)+$"}})),
        # A draft-04 ``id`` (no dollar) moves the base URI exactly like ``$id``.
        _tool(
            "draft4id",
            _obj(
                {
                    "a": {
                        "id": f"{schema_host.url}/draft4id.json#frag",
                        "properties": {"b": {"$ref": "#/definitions/z"}},
                    }
                }
            ),
        ),
        # fastjsonschema also resolves a `$ref` found inside a value (here a default).
        _tool(
            "valueref",
            _obj({"a": {"type": "integer", "default": {"$ref": f"{schema_host.url}/valueref"}}}),
        ),
        _tool("taskreq", {"type": "object"}, execution={"taskSupport": "required"}),
        _tool("taskopt", {"type": "object"}, execution={"taskSupport": "optional"}),
    ]
    tools += [
        _tool(name, schema) for name, (schema, _) in _unvalidated_tools(schema_host.url).items()
    ]
    path = tmp_path_factory.mktemp("calls-catalog") / "catalog.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    return path


class Bound:
    """A connected client and what its server recorded."""

    def __init__(self, client: mcpclient.Client, rec: Recording, era: str) -> None:
        self.client = client
        self.rec = rec
        self.era = era

    def mark(self) -> int:
        return len(self.rec.messages())

    def requests_since(self, mark: int) -> list[dict[str, Any]]:
        """Requests recorded since ``mark``, flushed by a sentinel ping round trip.

        The binding's own ``subscriptions/listen`` (modern; opened in the background
        once connected) is not a call and is left out.
        """
        self.client.ping(CallOpts(timeout=5))
        new = [
            m
            for m in self.rec.messages()[mark:]
            if isinstance(m, dict)
            and "id" in m
            and "method" in m
            and m["method"] != "subscriptions/listen"
        ]
        assert new, "the sentinel ping was not recorded"
        assert new[-1]["method"] in ("ping", "server/discover")
        return new[:-1]

    def refused(self, expected: type[Error], action: Callable[[], object]) -> Error:
        """Run ``action``, expect ``expected``, and check that nothing reached the server."""
        mark = self.mark()
        with pytest.raises(expected) as info:
            action()
        assert self.requests_since(mark) == [], "a refused call reached the server"
        return info.value

    def sent(self, action: Callable[[], Any]) -> tuple[Any, list[dict[str, Any]]]:
        mark = self.mark()
        value = action()
        return value, self.requests_since(mark)


def _bound(
    era: str,
    tmp_path_factory: pytest.TempPathFactory,
    *flags: str,
    **fields: Any,
) -> Iterator[Bound]:
    rec = Recording(tmp_path_factory.mktemp(f"calls-{era}") / "rec.jsonl")
    client = connect(definition("--era", era, *flags, record=rec.path, **fields))
    try:
        assert client.status().protocol_version == ERA_VERSION[era]
        yield Bound(client, rec, era)
    finally:
        client.close()


@pytest.fixture(scope="module", params=ERAS)
def calls(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    catalog_file: Path,
) -> Iterator[Bound]:
    """A binding per era to the testing server with the schema catalog."""
    yield from _bound(request.param, tmp_path_factory, "--catalog", str(catalog_file))


#: Small result bounds for the ``bounded`` binding.
SMALL = Limits(
    max_text_result_bytes=21,
    max_binary_item_bytes=8,
    max_binary_items=2,
    max_structured_bytes=64,
    max_input_rounds=2,
)


@pytest.fixture(scope="module", params=ERAS)
def bounded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Bound]:
    """A binding per era to the default testing server, with ``SMALL`` limits."""
    yield from _bound(request.param, tmp_path_factory, limits=SMALL)


def _raw(bound: Bound, result: Any, opts: CallOpts | None = None) -> mcpclient.ToolResult:
    """Call ``hostile`` so that it answers with exactly ``result``."""
    return bound.client.call_tool(
        "hostile", {"action": "result", "result": result}, opts or CallOpts(timeout=10)
    )


def _echoed(result: mcpclient.ToolResult) -> Any:
    """The arguments a catalog tool echoed back (the server's view of the call)."""
    assert not result.is_error, result
    return json.loads(result.text)


# ------------------------------------------------------------------------------- capability gating


@pytest.mark.parametrize("era", ERAS)
def test_capability_gating_sends_nothing(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, "--capabilities", "tools", record=rec.path)) as client:
        bound = Bound(client, rec, era)
        caps = client.catalog().capabilities
        assert (caps.tools, caps.prompts, caps.resources, caps.completions) == (
            True,
            False,
            False,
            False,
        )
        attempts: list[tuple[str, Callable[[], object]]] = [
            ("get_prompt", lambda: client.get_prompt("greet", {"name": "x"})),
            ("read_resource", lambda: client.read_resource("test://static/hello")),
            ("subscribe", lambda: client.subscribe("test://static/hello")),
            ("unsubscribe", lambda: client.unsubscribe("test://static/hello")),
            ("complete", lambda: client.complete(PromptRef("greet"), "name", "a")),
            (
                "complete",
                lambda: client.complete(ResourceTemplateRef("test://items/{id}"), "id", ""),
            ),
        ]
        for op, attempt in attempts:
            error = bound.refused(ProtocolError, attempt)
            assert error.failure_class is FailureClass.UNSUPPORTED_PROTOCOL, op
            assert error.op == op
            assert error.binding == "engine"
        # Tools still work, and nothing of the refused families was ever sent.
        assert client.call_tool("echo", {"message": "tools only"}).text == "tools only"
        methods = set(rec.methods())
        assert not methods & {
            "prompts/get",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "completion/complete",
        }


@pytest.mark.parametrize("era", ERAS)
def test_completions_gated_alone(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    flags = ("--era", era, "--capabilities", "tools,prompts,resources")
    with connect(definition(*flags, record=rec.path)) as client:
        bound = Bound(client, rec, era)
        error = bound.refused(
            ProtocolError, lambda: client.complete(PromptRef("greet"), "name", "a")
        )
        assert error.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
        assert "completions" in error.message
        # The advertised families are served.
        assert client.get_prompt("greet", {"name": "Ada"}).messages[0].content == Text(
            "Hello, Ada!"
        )
        assert client.read_resource("test://static/hello").contents


# ---------------------------------------------------------------------------------- local refusals


def test_unknown_tool_is_refused_before_sending(calls: Bound) -> None:
    error = calls.refused(
        ToolUnavailableError, lambda: calls.client.call_tool("no_such_tool", {"x": 1})
    )
    assert error.failure_class is FailureClass.TOOL_UNAVAILABLE
    assert isinstance(error, LookupError)
    assert "no_such_tool" in error.message
    assert error.op == "call_tool"


@pytest.mark.parametrize("era", ERAS)
def test_filtered_tool_is_refused_before_sending(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    tool_filter = ToolFilter(allow=("echo", "fail", "add"), deny=("fail",))
    with connect(definition("--era", era, record=rec.path, tool_filter=tool_filter)) as client:
        bound = Bound(client, rec, era)
        assert {t.raw_name for t in client.catalog().tools} == {"echo", "add"}
        for name in ("fail", "slow", "hostile"):  # denied; not allowed; not allowed
            error = bound.refused(
                ToolUnavailableError, functools.partial(client.call_tool, name, {})
            )
            assert error.failure_class is FailureClass.TOOL_UNAVAILABLE
            assert "filter" in error.message
            with pytest.raises(ToolUnavailableError):
                client.submit_tool_call(name, {})
        assert client.call_tool("echo", {"message": "allowed"}).text == "allowed"
        assert rec.tool_call_ids("fail") == rec.tool_call_ids("slow") == []


def test_task_support_without_the_servers_task_capability(calls: Bound) -> None:
    # The server declares no tasks (neither 2025-11-25's capability nor the
    # extension): a task-required tool is the server's bug, called plainly
    # (the extensions digest, section 2.4); asking for a task is refused
    # locally, naming the tool. (Tasks proper: test_tasks_everything.py and
    # test_tasks_modern.py.)
    spec = calls.client.catalog().tool_by_raw_name("taskreq")
    assert spec is not None, "a task-required tool stays in the catalog"
    assert spec.execution == {"taskSupport": "required"}
    assert _echoed(calls.client.call_tool("taskreq", {"k": 2})) == {"k": 2}
    error = calls.refused(
        ProtocolError, lambda: calls.client.call_tool("taskopt", {"k": 1}, task=True)
    )
    assert error.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert "taskopt" in error.message
    # Optional task support is a plain call.
    assert _echoed(calls.client.call_tool("taskopt", {"k": 1})) == {"k": 1}


# --------------------------------------------------------------------------------------- arguments


def test_arguments_failing_the_schema_name_the_json_path(calls: Bound) -> None:
    client = calls.client
    error = calls.refused(InvalidArgumentsError, lambda: client.call_tool("echo", {"message": 5}))
    assert error.failure_class is FailureClass.INVALID_ARGUMENTS
    assert isinstance(error, ValueError)
    assert "$.message" in error.message
    assert "echo" in error.message
    nested = calls.refused(
        InvalidArgumentsError, lambda: client.call_tool("nested", {"a": {"b": [1, "two"]}})
    )
    assert "$.a.b[1]" in nested.message
    missing = calls.refused(InvalidArgumentsError, lambda: client.call_tool("echo", {}))
    assert "message" in missing.message
    extra = calls.refused(
        InvalidArgumentsError, lambda: client.call_tool("echo", {"message": "x", "other": 1})
    )
    assert "other" in extra.message or "$" in extra.message
    # A same-document $ref is followed.
    below = calls.refused(InvalidArgumentsError, lambda: client.call_tool("localref", {"a": -1}))
    assert "$.a" in below.message
    assert _echoed(client.call_tool("localref", {"a": 3})) == {"a": 3}
    assert _echoed(client.call_tool("nested", {"a": {"b": [1, 2]}})) == {"a": {"b": [1, 2]}}


def test_null_for_an_optional_argument_is_omitted_with_a_warning(calls: Bound) -> None:
    client = calls.client
    result = client.call_tool("optionals", {"q": "x", "verbose": None})
    # The server never sees the null it would refuse; the host is told.
    assert _echoed(result) == {"q": "x"}
    assert any("null were omitted: verbose" in w for w in result.warnings), result.warnings
    # A schema that admits null keeps it; no warning.
    kept = client.call_tool("optionals", {"q": "x", "maybe": None})
    assert _echoed(kept) == {"q": "x", "maybe": None}
    assert not any("null" in w for w in kept.warnings)
    # A required argument given as null is still refused.
    error = calls.refused(
        InvalidArgumentsError, lambda: client.call_tool("optionals", {"q": None, "verbose": None})
    )
    assert "$.q" in error.message


@pytest.mark.parametrize(
    "arguments",
    [
        {"message": math.nan},
        {"message": "x", "n": math.inf},
        {"message": "x", "deep": [{"v": -math.inf}]},
        {"message": "x", "obj": object()},
        {1: "not a string key"},
    ],
    ids=["nan", "inf", "nested-inf", "object", "int-key"],
)
def test_unrepresentable_arguments_are_invalid(calls: Bound, arguments: Any) -> None:
    error = calls.refused(InvalidArgumentsError, lambda: calls.client.call_tool("echo", arguments))
    assert error.failure_class is FailureClass.INVALID_ARGUMENTS


def test_arguments_that_are_not_a_mapping_are_invalid(calls: Bound) -> None:
    not_mappings: list[Any] = [["message", "x"], "message=x", 5]
    for arguments in not_mappings:
        calls.refused(
            InvalidArgumentsError,
            functools.partial(calls.client.call_tool, "echo", arguments),
        )


def test_schema_defaults_are_not_written_into_the_callers_dict(calls: Bound) -> None:
    cases: list[dict[str, Any]] = [{}, {"o": {}}, {"x": 1, "o": {"y": 5}}]
    for arguments in cases:
        before = copy.deepcopy(arguments)
        result = calls.client.call_tool("defaults", arguments)
        assert arguments == before, "validation wrote defaults into the caller's dict"
        assert _echoed(result) == before, "defaults reached the wire"
        assert result.warnings == ()


@pytest.mark.parametrize(
    "arguments",
    [
        {"email": "a@b"},
        {"email": "not-an-email"},
        {"when": "yesterday at noon"},
        {"site": "::not a uri::"},
    ],
)
def test_formats_are_not_enforced(calls: Bound, arguments: dict[str, Any]) -> None:
    result, sent = calls.sent(lambda: calls.client.call_tool("fmt", arguments))
    assert _echoed(result) == arguments
    assert result.warnings == ()
    assert [m["params"]["arguments"] for m in sent] == [arguments]


@pytest.mark.parametrize("tool", UNVALIDATED)
def test_schemas_beyond_the_validator_go_out_unvalidated_with_a_warning(
    calls: Bound, schema_host: SchemaHost, tool: str
) -> None:
    _, arguments = _unvalidated_tools(schema_host.url)[tool]
    result, sent = calls.sent(lambda: calls.client.call_tool(tool, arguments, CallOpts(timeout=10)))
    assert [m["params"]["name"] for m in sent] == [tool]
    assert _echoed(result) == arguments
    assert any("not validated" in w for w in result.warnings), result.warnings
    assert schema_host.hits_for(f"/{tool}") == [], "a schema reference was fetched"


def test_a_draft4_id_is_never_followed(calls: Bound, schema_host: SchemaHost) -> None:
    arguments = {"a": {"b": 5}}
    try:
        result = calls.client.call_tool("draft4id", arguments, CallOpts(timeout=10))
    finally:
        fetched = schema_host.hits_for("/draft4id")
    assert fetched == [], "the client fetched a URL named by a server's schema"
    assert _echoed(result) == arguments
    assert any("not validated" in w for w in result.warnings)


def test_a_ref_inside_a_default_is_never_followed(calls: Bound, schema_host: SchemaHost) -> None:
    try:
        result = calls.client.call_tool("valueref", {"a": 1}, CallOpts(timeout=10))
    finally:
        fetched = schema_host.hits_for("/valueref")
    assert fetched == [], "the client fetched a URL named by a server's schema"
    assert _echoed(result) == {"a": 1}


def test_catastrophic_pattern_is_refused_promptly(calls: Bound) -> None:
    start = time.monotonic()
    error = calls.refused(
        InvalidArgumentsError,
        lambda: calls.client.call_tool("redos", {"s": "a" * 50 + "!"}, CallOpts(timeout=5)),
    )
    assert time.monotonic() - start < 2.0
    assert "$.s" in error.message
    result = calls.client.call_tool("redos", {"s": "a" * 50}, CallOpts(timeout=5))
    assert _echoed(result) == {"s": "a" * 50}
    assert result.warnings == ()


def test_patterns_use_their_original_anchors(calls: Bound) -> None:
    # fastjsonschema rewrites `$` as `\Z`, which RE2 lacks: the pattern must still be
    # validated (no warning), on its original text.
    result = calls.client.call_tool("anchored", {"s": "abc"})
    assert _echoed(result) == {"s": "abc"}
    assert result.warnings == ()
    error = calls.refused(
        InvalidArgumentsError, lambda: calls.client.call_tool("anchored", {"s": "abcd"})
    )
    assert "$.s" in error.message


def test_any_mapping_is_accepted_as_arguments(calls: Bound) -> None:
    result = calls.client.call_tool("echo", types.MappingProxyType({"message": "proxied"}))
    assert result.text == "proxied"


# ----------------------------------------------------------------------------------- output schema


def test_structured_content_failing_the_output_schema_is_dropped_with_a_warning(
    calls: Bound,
) -> None:
    result = _raw(
        calls,
        {"content": [{"type": "text", "text": "ran"}], "structuredContent": {"n": "one"}},
    )
    assert result.is_error is False
    assert result.text == "ran", "the call ran: its content is kept"
    assert result.structured is None
    (warning,) = result.warnings
    assert "output schema" in warning and "$.n" in warning


def test_structured_content_matching_the_output_schema_is_kept(calls: Bound) -> None:
    result = _raw(calls, {"content": [], "structuredContent": {"n": 3, "extra": [1]}})
    assert result.structured == {"n": 3, "extra": [1]}
    assert result.warnings == ()


def test_a_tool_error_is_not_validated_against_the_output_schema(calls: Bound) -> None:
    result = _raw(
        calls,
        {
            "content": [{"type": "text", "text": "failed"}],
            "structuredContent": {"n": "one"},
            "isError": True,
        },
    )
    assert result.is_error is True
    assert result.text == "failed"
    assert result.structured == {"n": "one"}
    assert result.warnings == ()


# ------------------------------------------------------------------------- JSON-RPC error answers


def _rpc_error(bound: Bound, **error: Any) -> ProtocolError:
    """Call ``hostile`` so that it answers with the JSON-RPC error ``error``."""
    with pytest.raises(ProtocolError) as info:
        bound.client.call_tool("hostile", {"action": "error", **error}, CallOpts(timeout=10))
    return info.value


def test_a_json_rpc_error_answer_keeps_its_code(bounded: Bound) -> None:
    error = _rpc_error(bounded, code=-32050, message="quota exhausted", data={"retry": 30})
    assert error.code == -32050
    assert error.failure_class is FailureClass.SERVER_PROTOCOL
    assert error.op == "call_tool"
    assert "-32050" in error.message and "quota exhausted" in error.message
    # a code the library gives a meaning to keeps it too
    missing = _rpc_error(bounded, code=-32601, message="Method not found")
    assert missing.code == -32601
    assert missing.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    # the binding is fine afterwards
    assert bounded.client.call_tool("echo", {"message": "after"}).text == "after"


@pytest.mark.parametrize("code", ["-32050", None, 1.5, True], ids=repr)
def test_an_error_answer_without_an_integer_code_has_none(bounded: Bound, code: Any) -> None:
    error = _rpc_error(bounded, code=code, message="odd")
    assert error.code is None
    assert error.failure_class is FailureClass.SERVER_PROTOCOL
    assert "without a code" in error.message and "odd" in error.message


# ----------------------------------------------------------------------------------- result bounds


def test_text_over_the_limit_is_cut_at_a_utf8_boundary(bounded: Bound) -> None:
    # 21 bytes, 14 of them the marker: 7 bytes of room, which splits the 4th "é".
    result = _raw(bounded, {"content": [{"type": "text", "text": "é" * 20}]})
    (item,) = result.content
    assert isinstance(item, Text)
    assert item.truncated is True
    assert item.text == "é" * 3 + TRUNCATION_MARKER
    assert len(item.text.encode("utf-8")) <= SMALL.max_text_result_bytes
    assert any("max_text_result_bytes" in w for w in result.warnings)
    emoji = _raw(bounded, {"content": [{"type": "text", "text": "\U0001f600" * 6}]})
    (cut,) = emoji.content
    assert isinstance(cut, Text) and cut.truncated
    assert cut.text == "\U0001f600" + TRUNCATION_MARKER
    fits = _raw(bounded, {"content": [{"type": "text", "text": "é" * 10}]})
    assert fits.content == (Text("é" * 10),)
    assert fits.warnings == ()


def test_binary_items_over_the_limits_become_placeholders(bounded: Bound) -> None:
    nine = "AAAAAAAAAAAA"  # base64 of 9 zero bytes, over max_binary_item_bytes=8
    eight = "AAAAAAAAAAA="  # 8 bytes: fits
    result = _raw(
        bounded,
        {
            "content": [
                {"type": "image", "data": nine, "mimeType": "image/png"},
                {"type": "image", "data": eight, "mimeType": "image/png"},
            ]
        },
    )
    big, fits = result.content
    assert big == Unsupported("image", 9)
    assert isinstance(fits, Image) and fits.data == bytes(8)
    assert any("max_binary_item_bytes" in w for w in result.warnings)
    blob = _raw(
        bounded,
        {"content": [{"type": "resource", "resource": {"uri": "test://b", "blob": nine}}]},
    )
    assert blob.content == (Unsupported("resource", 9),)


def test_binary_items_past_the_count_become_placeholders(bounded: Bound) -> None:
    three = [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}] * 3
    result = _raw(bounded, {"content": [*three, {"type": "text", "text": "after"}]})
    first, second, third, text = result.content
    assert isinstance(first, Audio) and isinstance(second, Audio)
    assert first.data == second.data == bytes(3)
    assert third == Unsupported("audio", 3)
    assert text == Text("after")
    assert any("max_binary_items" in w for w in result.warnings)


def test_structured_content_over_the_limit_is_dropped(bounded: Bound) -> None:
    result = _raw(bounded, {"content": [], "structuredContent": {"pad": "x" * 100}})
    assert result.structured is None
    assert any("max_structured_bytes" in w for w in result.warnings)
    small = _raw(bounded, {"content": [], "structuredContent": {"ok": True}})
    assert small.structured == {"ok": True}


def test_unknown_content_kinds_are_kept_as_placeholders(bounded: Bound) -> None:
    result = _raw(
        bounded,
        {"content": [{"type": "hologram", "depth": 3}, {"type": "text", "text": "t"}]},
    )
    hologram, text = result.content
    assert isinstance(hologram, Unsupported)
    assert hologram.kind == mcpclient.KIND_UNKNOWN  # the server's type is in the warning
    assert text == Text("t")
    assert any("hologram" in w for w in result.warnings)


@pytest.mark.parametrize(
    "result",
    [{"content": "not a list"}, {"content": {"type": "text"}}, ["not", "an", "object"], "text"],
    ids=["content-str", "content-object", "list", "str"],
)
def test_malformed_results_are_server_protocol_errors(bounded: Bound, result: Any) -> None:
    with pytest.raises(ProtocolError) as info:
        _raw(bounded, result)
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    assert info.value.op == "call_tool"
    # One bad answer does not hurt the binding.
    assert bounded.client.status().state is State.READY
    assert bounded.client.call_tool("echo", {"message": "ok"}).text == "ok"


def test_an_out_of_range_priority_is_not_an_unclassified_exception(bounded: Bound) -> None:
    item = {"type": "text", "text": "x", "annotations": {"priority": 10**400}}
    try:
        result = _raw(bounded, {"content": [item]})
    except Error:
        return  # classified is acceptable; dropping the priority is kinder
    assert result.text == "x"


def test_a_result_without_content_is_empty(bounded: Bound) -> None:
    result = _raw(bounded, {"isError": True})
    assert result.is_error is True
    assert result.content == ()


# ------------------------------------------------------------------------------------ result types


@pytest.fixture(scope="module")
def modern(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bound]:
    """A modern binding with ``SMALL`` limits (``resultType`` exists in that era only)."""
    yield from _bound("modern", tmp_path_factory, limits=SMALL)


def test_modern_result_types(modern: Bound) -> None:
    client = modern.client
    # No resultType at all (the server adds none to a raw result): complete.
    result = _raw(modern, {"content": [{"type": "text", "text": "bare"}]})
    assert result.text == "bare"
    for kind in ("bogus", "task", ""):
        with pytest.raises(ProtocolError) as info:
            _raw(modern, {"resultType": kind, "content": []})
        assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
        assert info.value.op == "call_tool"

    def script(method: str, result: Any) -> None:
        client.call_tool("hostile", {"action": "script_result", "method": method, "result": result})

    # A prompt result without resultType is complete; an unknown one is not.
    script(
        "prompts/get", {"messages": [{"role": "user", "content": {"type": "text", "text": "p"}}]}
    )
    assert client.get_prompt("greet", {"name": "x"}).messages[0].content == Text("p")
    script("prompts/get", {"resultType": "later", "messages": []})
    with pytest.raises(ProtocolError) as info:
        client.get_prompt("greet", {"name": "x"})
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    assert client.get_prompt("greet", {"name": "x"}).messages[0].content == Text("Hello, x!")


@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("completion/complete", lambda c: c.complete(PromptRef("greet"), "name", "a")),
        ("server/discover", lambda c: c.ping()),
    ],
    ids=["complete", "ping"],
)
def test_input_required_outside_the_mrtr_methods_is_a_protocol_error(
    modern: Bound, method: str, call: Callable[[mcpclient.Client], object]
) -> None:
    client = modern.client
    client.call_tool(
        "hostile",
        {
            "action": "script_result",
            "method": method,
            "result": {"resultType": "input_required", "requestState": "opaque"},
        },
    )
    mark = modern.mark()
    with pytest.raises(ProtocolError) as info:
        call(client)
    assert info.value.failure_class is FailureClass.SERVER_PROTOCOL
    # Not retried: exactly one request went out.
    assert [m["method"] for m in modern.requests_since(mark)] == [method]
    assert client.status().state is State.READY
    assert client.complete(PromptRef("greet"), "name", "a").values == ("alice",)


def test_input_required_rounds_are_bounded(modern: Bound) -> None:
    # Every retry is answered with input_required again: the loop stops after
    # max_input_rounds (2) rounds, inside the call.
    mark = modern.mark()
    with pytest.raises(LimitExceededError) as info:
        _raw(modern, {"resultType": "input_required", "requestState": "again"})
    assert info.value.failure_class is FailureClass.LIMIT_EXCEEDED
    sent = modern.requests_since(mark)
    assert [m["method"] for m in sent] == ["tools/call"] * 3
    assert [m["params"].get("requestState") for m in sent] == [None, "again", "again"]
    assert len({m["id"] for m in sent}) == 3, "each round is a new request id"


# ----------------------------------------------------------------------------------------- futures


@pytest.mark.parametrize("era", ERAS)
def test_submit_local_refusals_raise_synchronously(
    era: str, tmp_path: Path, catalog_file: Path
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era", era, "--catalog", str(catalog_file), record=rec.path,
        tool_filter=ToolFilter(deny=("fail",)),
    )  # fmt: skip
    client = connect(defn)
    bound = Bound(client, rec, era)
    try:
        refusals: list[tuple[type[Error], FailureClass, Callable[[], object]]] = [
            (ToolUnavailableError, FailureClass.TOOL_UNAVAILABLE,
             lambda: client.submit_tool_call("fail", {})),
            (ToolUnavailableError, FailureClass.TOOL_UNAVAILABLE,
             lambda: client.submit_tool_call("no_such_tool", {})),
            (InvalidArgumentsError, FailureClass.INVALID_ARGUMENTS,
             lambda: client.submit_tool_call("echo", {"message": 1})),
            (InvalidArgumentsError, FailureClass.INVALID_ARGUMENTS,
             lambda: client.submit_tool_call("echo", {"message": math.nan})),
            (ProtocolError, FailureClass.UNSUPPORTED_PROTOCOL,
             lambda: client.submit_tool_call("taskreq", {})),
        ]  # fmt: skip
        for expected, failure_class, attempt in refusals:
            error = bound.refused(expected, attempt)
            assert error.failure_class is failure_class
        assert "taskreq" in str(bound.refused(ProtocolError, refusals[-1][2]))
        future = client.submit_tool_call("echo", {"message": "fine"})
        assert future.result(timeout=10).text == "fine"
    finally:
        client.close()
    with pytest.raises(ShutdownError) as info:
        client.submit_tool_call("echo", {"message": "too late"})
    assert info.value.failure_class is FailureClass.SHUTDOWN
    assert rec.tool_call_ids("echo", {"message": "too late"}) == []


@pytest.mark.parametrize("era", ERAS)
def test_submit_later_outcomes_arrive_on_the_future(era: str) -> None:
    defn = definition("--era", era, allow_parallel_calls=True)
    with connect(defn) as client:
        token = CancelToken()
        futures = {
            "error": client.submit_tool_call("fail", {"message": "nope"}),
            "deadline": client.submit_tool_call("slow", {"seconds": 5}, CallOpts(timeout=0.3)),
            "protocol": client.submit_tool_call(
                "hostile", {"action": "result", "result": {"content": 5}}
            ),
            "cancelled": client.submit_tool_call("slow", {"seconds": 5}, CallOpts(cancel=token)),
            "ok": client.submit_tool_call("echo", {"message": "fine"}),
        }
        # All of them are pending or running: nothing was raised at submission.
        token.cancel("changed my mind")
        error_result = futures["error"].result(timeout=10)
        assert error_result.is_error and error_result.text == "nope"
        assert futures["ok"].result(timeout=10).text == "fine"
        expected = {
            "deadline": (DeadlineExceededError, FailureClass.DEADLINE),
            "protocol": (ProtocolError, FailureClass.SERVER_PROTOCOL),
            "cancelled": (RequestCancelledError, FailureClass.CANCELLED),
        }
        for key, (kind, failure_class) in expected.items():
            exc = futures[key].exception(timeout=10)
            assert isinstance(exc, kind), (key, exc)
            assert exc.failure_class is failure_class
        assert not futures["cancelled"].cancelled(), "a token cancel is an outcome, not cancel()"


@pytest.mark.parametrize("era", ERAS)
def test_future_cancel_cancels_on_the_wire(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, record=rec.path)) as client:
        future = client.submit_tool_call("slow", {"seconds": 30}, CallOpts(timeout=20))
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 1)
        assert future.cancel() is True
        assert future.cancelled()
        with pytest.raises(concurrent.futures.CancelledError):
            future.result(timeout=1)
        (call_id,) = rec.tool_call_ids("slow")
        assert rec.wait_cancelled(call_id)
        assert client.call_tool("echo", {"message": "next"}).text == "next"


def test_serialized_submissions_are_admitted_in_order(tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", "modern", record=rec.path)) as client:
        seconds = [round(0.02 + i / 1000, 3) for i in range(16)]
        futures = [client.submit_tool_call("slow", {"seconds": s}) for s in seconds]
        for future in futures:
            future.result(timeout=20)
        order = [m["params"]["arguments"]["seconds"] for m in rec.requests("tools/call")]
        assert order == seconds


# -------------------------------------------------------------------------- deadlines and progress


@pytest.mark.parametrize("era", ERAS)
def test_deadline_is_the_earlier_of_deadline_and_timeout(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, record=rec.path)) as client:
        makers: list[Callable[[], CallOpts]] = [
            lambda: CallOpts(deadline=time.monotonic() + 30, timeout=0.4),
            lambda: CallOpts(deadline=time.monotonic() + 0.4, timeout=30),
        ]
        for opts in makers:
            start = time.monotonic()
            with pytest.raises(DeadlineExceededError) as info:
                client.call_tool("slow", {"seconds": 10}, opts())
            elapsed = time.monotonic() - start
            assert 0.35 <= elapsed < 0.4 + SLACK
            assert info.value.failure_class is FailureClass.DEADLINE
            assert isinstance(info.value, TimeoutError)
        ids = rec.tool_call_ids("slow")
        assert len(ids) == 2
        assert all(rec.wait_cancelled(i) for i in ids)


@pytest.mark.parametrize("era", ERAS)
def test_endless_progress_ends_at_the_deadline_off_the_reader_thread(
    era: str, tmp_path: Path
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    seen: list[tuple[str, float]] = []

    def on_progress(report: mcpclient.Progress) -> None:
        seen.append((threading.current_thread().name, report.progress))

    with connect(definition("--era", era, record=rec.path)) as client:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool(
                "hostile",
                {"action": "progress_forever", "interval": 0.05},
                CallOpts(timeout=0.8, progress=on_progress),
            )
        assert 0.75 <= time.monotonic() - start < 0.8 + SLACK, "progress moved the deadline"
        assert wait_until(lambda: len(seen) >= 3, 2.0)
        names = {name for name, _ in seen}
        assert all(name.startswith("mcpclient-dispatch-") for name in names), names
        (call,) = rec.requests("tools/call")
        assert "progressToken" in call["params"]["_meta"]


@pytest.mark.parametrize("era", ERAS)
def test_no_progress_token_without_a_callback(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    reports: list[mcpclient.Progress] = []
    with connect(definition("--era", era, record=rec.path)) as client:
        client.call_tool("progress", {"steps": 2, "interval": 0.01})
        client.call_tool(
            "progress", {"steps": 2, "interval": 0.01}, CallOpts(progress=reports.append)
        )
        without, with_callback = rec.requests("tools/call")
        assert "progressToken" not in (without["params"].get("_meta") or {})
        assert "progressToken" in with_callback["params"]["_meta"]
        assert wait_until(lambda: len(reports) == 2)
        assert [r.progress for r in reports] == [1.0, 2.0]


@pytest.mark.parametrize("era", ERAS)
def test_waiting_for_a_turn_counts_against_the_one_deadline(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, record=rec.path)) as client:
        busy = client.submit_tool_call("slow", {"seconds": 1.2}, CallOpts(timeout=10))
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 1)
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError):
            client.call_tool("echo", {"message": "queued"}, CallOpts(timeout=0.4))
        assert time.monotonic() - start < 0.4 + SLACK
        assert not busy.done(), "the queued call ended by its own deadline, not the other's end"
        assert busy.result(timeout=10).text == "slept 1.2 s"
        assert rec.tool_call_ids("echo") == [], "the queued call was never sent"


# ------------------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize("era", ERAS)
def test_tool_calls_are_serialized_by_default(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    arrivals: list[float] = []
    results: dict[int, str] = {}
    with connect(definition("--era", era, record=rec.path)) as client:

        def call(i: int) -> None:
            seconds = 0.3 + i / 1000
            results[i] = client.call_tool("slow", {"seconds": seconds}, CallOpts(timeout=20)).text

        threads = [
            threading.Thread(target=call, args=(i,), name=f"test-serial-{i}") for i in range(4)
        ]
        start = time.monotonic()
        for t in threads:
            t.start()
        # Watch the server's inbound record: when did each call arrive?
        while any(t.is_alive() for t in threads) or len(arrivals) < 4:
            count = len(rec.tool_call_ids("slow"))
            while len(arrivals) < count:
                arrivals.append(time.monotonic())
            if time.monotonic() - start > 20:
                break
            time.sleep(0.005)
        elapsed = time.monotonic() - start
        for t in threads:
            t.join(5)
    assert results == {i: f"slept {0.3 + i / 1000:g} s" for i in range(4)}
    assert elapsed >= 1.15, f"4 serialized 0.3 s calls took only {elapsed:.2f} s"
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) == 4
    assert all(gap >= 0.2 for gap in gaps), f"the server saw overlapping calls: {gaps}"


@pytest.mark.parametrize("era", ERAS)
def test_parallel_calls_overlap_and_keep_their_results(era: str) -> None:
    defn = definition(
        "--era", era, allow_parallel_calls=True, limits=Limits(max_concurrent_requests=32)
    )
    with connect(defn) as client:
        seconds = [round(0.3 + i / 1000, 3) for i in range(32)]
        start = time.monotonic()
        futures = [
            client.submit_tool_call("slow", {"seconds": s}, CallOpts(timeout=20)) for s in seconds
        ]
        texts = [f.result(timeout=20).text for f in futures]
        elapsed = time.monotonic() - start
    assert texts == [f"slept {s:g} s" for s in seconds]
    assert elapsed < 32 * 0.3 / 3, f"32 parallel 0.3 s calls took {elapsed:.2f} s"


@pytest.mark.parametrize("era", ERAS)
def test_max_concurrent_requests_bounds_every_request(era: str, tmp_path: Path) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era", era, record=rec.path, allow_parallel_calls=True,
        limits=Limits(max_concurrent_requests=2),
    )  # fmt: skip
    with connect(defn) as client:
        busy = [
            client.submit_tool_call("slow", {"seconds": 1.2}, CallOpts(timeout=10))
            for _ in range(2)
        ]
        assert wait_until(lambda: len(rec.tool_call_ids("slow")) == 2)
        short = CallOpts(timeout=0.3)
        waiting: list[tuple[str, Callable[[], object]]] = [
            ("prompts/get", lambda: client.get_prompt("greet", {"name": "x"}, short)),
            ("resources/read", lambda: client.read_resource("test://static/hello", short)),
            (
                "completion/complete",
                lambda: client.complete(PromptRef("greet"), "n", "", opts=short),
            ),
        ]
        for method, attempt in waiting:
            start = time.monotonic()
            with pytest.raises(DeadlineExceededError):
                attempt()
            assert time.monotonic() - start < 0.3 + SLACK
            assert rec.requests(method) == [], f"{method} was sent past the concurrency limit"
        for future in busy:
            assert future.result(timeout=10).text == "slept 1.2 s"
        assert client.get_prompt("greet", {"name": "y"}).messages[0].content == Text("Hello, y!")


# ----------------------------------------------------------------------------- connection outcomes


@pytest.mark.parametrize("era", ERAS)
def test_exit_mid_call_is_indeterminate_then_transport_closed(era: str) -> None:
    defn = definition("--era", era, reconnect=ReconnectPolicy(disabled=True))
    with connect(defn) as client:
        with pytest.raises(IndeterminateError) as info:
            client.call_tool("hostile", {"action": "exit"}, CallOpts(timeout=10))
        assert info.value.failure_class is FailureClass.INDETERMINATE
        assert isinstance(info.value, ConnectionLostError)
        # Not reconnecting: the binding stays down until its owner acts.
        assert wait_until(lambda: client.status().state in (State.DEGRADED, State.FAILED))
        with pytest.raises(ConnectionLostError) as after:
            client.call_tool("echo", {"message": "x"}, CallOpts(timeout=5))
        assert after.value.failure_class is FailureClass.TRANSPORT_CLOSED
        with pytest.raises(ConnectionLostError) as prompt:
            client.get_prompt("greet", {"name": "x"}, CallOpts(timeout=5))
        assert prompt.value.failure_class is FailureClass.TRANSPORT_CLOSED


# ------------------------------------------------------------------------------------ subscriptions


@pytest.fixture
def slow_listen_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Widen the window between a listen going out and the client noting its id.

    A fast server acknowledges inside it, as a local server sometimes does anyway
    (which makes a modern subscribe() intermittently hang until its deadline).
    """
    from mcpclient._internal.session.rpc import RpcSession

    original = RpcSession.open_stream

    def open_stream(self: RpcSession, method: str, *args: Any, **kwargs: Any) -> Any:
        sent = original(self, method, *args, **kwargs)
        if method == "subscriptions/listen":
            time.sleep(0.2)
        return sent

    monkeypatch.setattr(RpcSession, "open_stream", open_stream)


def _check_subscription(
    client: mcpclient.Client,
    events: Events,
    uri: str,
    other: str,
    touch: Callable[[str], object],
    barrier: Callable[[], None] | None = None,
) -> None:
    def updates() -> list[ResourceUpdated]:
        return [e for e in list(events) if isinstance(e, ResourceUpdated)]

    client.subscribe(uri, CallOpts(timeout=2))
    subscribed = True
    try:
        touch(uri)
        assert wait_until(lambda: len(updates()) == 1, 5.0)
        (update,) = updates()
        assert update.uri == uri
        assert update.binding == client.status().binding
        touch(other)  # not subscribed: not delivered
        client.unsubscribe(uri, CallOpts(timeout=2))
        subscribed = False
        touch(uri)  # unsubscribed: not delivered
        # The server sends an update before the touch's answer: once the echo is
        # answered and the event lane passed, any (wrong) update has been delivered.
        client.call_tool("echo", {"message": "drain"})
        (barrier or (lambda: delivered(client)))()
        assert [u.uri for u in updates()] == [uri]
    finally:
        if subscribed:
            with contextlib.suppress(Error):
                client.unsubscribe(uri, CallOpts(timeout=1))


@pytest.mark.parametrize("era", ERAS)
def test_subscription_delivers_updates_until_unsubscribed(
    request: pytest.FixtureRequest, slow_listen_registration: None, era: str, tmp_path: Path
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    events = Events()
    with connect(definition("--era", era, record=rec.path), Handlers(event=events)) as client:
        _check_subscription(
            client,
            events,
            "test://static/hello",
            "test://items/7",
            lambda uri: client.call_tool("mutate_catalog", {"touch": uri}),
        )
        if era == "legacy":
            subscribes = rec.requests("resources/subscribe")
            assert [m["params"]["uri"] for m in subscribes] == ["test://static/hello"]
            assert len(rec.requests("resources/unsubscribe")) == 1


# --------------------------------------------------------------------------- the official SDK peer

SDK_EXTRAS = {"MCPCLIENT_SDK_PEER_EXTRAS": "1", "MCPCLIENT_TEST_PEER_TAG": "calls"}
SDK_MODES = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


class SDK:
    def __init__(self, client: mcpclient.Client, events: Events) -> None:
        self.client = client
        self.events = events


@pytest.fixture(scope="module", params=SDK_MODES, ids=[mode for mode, _ in SDK_MODES])
def sdk(request: pytest.FixtureRequest, sdk_definition: MakeDefinition) -> Iterator[SDK]:
    mode, version = request.param
    events = Events()
    defn = sdk_definition(protocol=mode, env={**SDK_EXTRAS, "MODE": mode})
    client = connect(defn, Handlers(event=events))
    try:
        assert client.status().protocol_version == version
        yield SDK(client, events)
    finally:
        client.close()


@pytest.mark.peer
def test_sdk_structured_content_without_an_output_schema(sdk: SDK) -> None:
    spec = sdk.client.catalog().tool_by_raw_name("structured_plain")
    assert spec is not None and spec.output_schema is None
    result = sdk.client.call_tool("structured_plain")
    assert result.structured == {"kind": "plain", "n": 7}
    assert result.text == "plain structured"
    assert result.warnings == ()


@pytest.mark.peer
def test_sdk_every_content_kind_through_futures(sdk: SDK) -> None:
    names = ["echo", "add", "image", "audio", "embedded", "link", "boom", "structured_plain"]
    arguments: dict[str, dict[str, Any]] = {"echo": {"message": "m"}, "add": {"a": 1, "b": 2}}
    futures = {
        n: sdk.client.submit_tool_call(n, arguments.get(n), CallOpts(timeout=20)) for n in names
    }
    results = {n: f.result(timeout=20) for n, f in futures.items()}
    assert results["echo"].content == (Text("m"),)
    assert results["add"].structured == {"sum": 3}
    assert isinstance(results["image"].content[0], Image)
    assert isinstance(results["audio"].content[0], Audio)
    assert isinstance(results["embedded"].content[0], EmbeddedResource)
    assert isinstance(results["link"].content[0], ResourceLink)
    assert results["boom"].is_error is True
    assert all(not r.is_error for n, r in results.items() if n != "boom")
    assert all(r.warnings == () for r in results.values())


@pytest.mark.peer
def test_sdk_arguments_are_validated_against_its_schemas(sdk: SDK) -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        sdk.client.call_tool("add", {"a": "one", "b": 2})
    assert "$.a" in info.value.message
    with pytest.raises(InvalidArgumentsError) as missing:
        sdk.client.call_tool("echo", {})
    assert "message" in missing.value.message
    assert sdk.client.call_tool("add", {"a": -1, "b": 1}).structured == {"sum": 0}


@pytest.mark.peer
def test_sdk_prompt_with_arguments(sdk: SDK) -> None:
    spec = next(p for p in sdk.client.catalog().prompts if p.name == "brief")
    assert {(a.name, a.required) for a in spec.arguments} == {("topic", True), ("tone", False)}
    toned = sdk.client.get_prompt("brief", {"topic": "tides", "tone": "dry"})
    assert toned.messages[0].content == Text("Write a dry brief about tides.")
    plain = sdk.client.get_prompt("brief", {"topic": "tides"})
    assert plain.messages[0].content == Text("Write a neutral brief about tides.")
    # A missing required argument is refused before sending (issue 14, defect 12).
    with pytest.raises(InvalidArgumentsError) as missing:
        sdk.client.get_prompt("brief", {"tone": "dry"})
    assert "'topic'" in missing.value.message
    with pytest.raises(InvalidArgumentsError):
        sdk.client.get_prompt("brief", {"topic": 5})  # type: ignore[dict-item]


@pytest.mark.peer
@pytest.mark.parametrize(("mode", "version"), SDK_MODES, ids=[mode for mode, _ in SDK_MODES])
def test_sdk_subscription_delivers_resource_updates(
    request: pytest.FixtureRequest,
    sdk_definition: MakeDefinition,
    slow_listen_registration: None,
    mode: str,
    version: str,
) -> None:
    events = Events()
    defn = sdk_definition(protocol=mode, env={**SDK_EXTRAS, "MODE": f"subscribe-{mode}"})
    with connect(defn, Handlers(event=events)) as client:
        assert client.status().protocol_version == version
        assert client.catalog().capabilities.resources_subscribe is True
        _check_subscription(
            client,
            events,
            "test://static/text",
            "test://static/blob",
            lambda uri: client.call_tool("touch", {"uri": uri}),
            # The peer's tool that reports progress.
            lambda: delivered(client, tool="slow", arguments={"seconds": 0}),
        )


@pytest.mark.peer
def test_sdk_templates_and_completions(sdk: SDK) -> None:
    catalog = sdk.client.catalog()
    (template,) = catalog.resource_templates
    assert template.uri_template == "test://items/{item_id}"
    completion = sdk.client.complete(
        ResourceTemplateRef(template.uri_template), "item_id", "2", context={"x": "y"}
    )
    assert completion.values == ("2",)
    (content,) = sdk.client.read_resource("test://items/2").contents
    assert isinstance(content, mcpclient.ResourceContent) and content.text == "item 2"
