"""The client against real peers: the official SDK's server and server-everything.

The SDK server (``peers/sdk_server.py``) is dual-era on stdio: it answers the
modern ``server/discover`` probe (so ``protocol="auto"`` lands on 2026-07-28)
and also serves the legacy ``initialize`` handshake (``protocol="legacy"``,
2025-11-25). server-everything is legacy only: it answers the probe with
-32601 and the client falls back to the handshake.

The era a client detects is cached per server command for the life of the
process, so each protocol mode here gets its own transport (a tag in the
child's environment) and no test sees another's cached era.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

import mcpclient
from mcpclient import (
    Audio,
    CallOpts,
    DeadlineExceededError,
    EmbeddedResource,
    FailureClass,
    Handlers,
    Image,
    IndeterminateError,
    PromptRef,
    RequestProgress,
    ResourceLink,
    ResourceTemplateRef,
    ShutdownError,
    State,
    Text,
    ToolUnavailableError,
)
from tests.support import Events, wait_until

from .conftest import MakeDefinition

pytestmark = pytest.mark.peer

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SDK_TOOLS = {"add", "audio", "boom", "echo", "embedded", "image", "link", "slow"}
# (Definition.protocol, the version it must negotiate with the SDK server)
SDK_ERAS = [("auto", MODERN), ("legacy", LATEST_LEGACY)]
TAG = "MCPCLIENT_TEST_PEER_TAG"


# --------------------------------------------------------------------------- SDK server


class SDKBinding:
    """One connected client shared by the read-only tests of one era."""

    def __init__(self, client: mcpclient.Client, expected: str, recorder: Events) -> None:
        self.client = client
        self.expected = expected
        self.recorder = recorder


@pytest.fixture(scope="module", params=SDK_ERAS, ids=[mode for mode, _ in SDK_ERAS])
def sdk(request: pytest.FixtureRequest, sdk_definition: MakeDefinition) -> Iterator[SDKBinding]:
    mode, expected = request.param
    recorder = Events()
    definition = sdk_definition(protocol=mode, env={TAG: f"shared-{mode}"})
    client = mcpclient.connect(definition, Handlers(event=recorder.on_event))
    try:
        yield SDKBinding(client, expected, recorder)
    finally:
        client.close()


def test_sdk_negotiates_the_expected_era(sdk: SDKBinding) -> None:
    status = sdk.client.status()
    catalog = sdk.client.catalog()
    assert status.protocol_version == sdk.expected
    assert catalog.protocol_version == sdk.expected
    assert status.state is State.READY
    assert status.failure is None
    assert status.server.name == "sdk-peer"
    assert status.server.version == "2.3.0-peer"
    assert catalog.server == status.server
    assert status.transport_kind == "stdio"
    assert status.redacted_origin.startswith("stdio:python")
    assert status.catalog_generation == catalog.generation >= 1
    assert status.catalog_digest == catalog.digest != ""
    assert status.compat_profile == str(mcpclient.PROFILE_DEFAULT)
    assert status.binding == catalog.binding == "sdk"


def test_sdk_capabilities_and_instructions(sdk: SDKBinding) -> None:
    catalog = sdk.client.catalog()
    caps = catalog.capabilities
    assert (caps.tools, caps.prompts, caps.resources, caps.completions) == (True,) * 4
    assert caps.logging is False  # the peer registers no logging handler
    assert catalog.instructions == "A test peer built on the official SDK."


def test_sdk_catalog_tools(sdk: SDKBinding) -> None:
    catalog = sdk.client.catalog()
    assert {t.raw_name for t in catalog.tools} == SDK_TOOLS
    for tool in catalog.tools:
        assert tool.model_name == f"mcp__sdk__{tool.raw_name}"
        assert catalog.tool_by_model_name(tool.model_name) is tool
    echo = catalog.tool_by_raw_name("echo")
    assert echo is not None
    assert echo.description == "Echo the message back."
    assert echo.input_schema["type"] == "object"
    assert echo.input_schema["properties"]["message"]["type"] == "string"
    assert echo.input_schema["required"] == ["message"]
    assert echo.output_schema is None
    assert echo.output_schema_digest == ""
    add = catalog.tool_by_raw_name("add")
    assert add is not None
    assert set(add.input_schema["properties"]) == {"a", "b"}
    assert add.output_schema is not None
    assert add.output_schema["type"] == "object"
    assert add.output_schema["properties"]["sum"]["type"] == "integer"
    assert add.output_schema["required"] == ["sum"]
    assert add.output_schema_digest != ""


def test_sdk_catalog_prompts_and_resources(sdk: SDKBinding) -> None:
    catalog = sdk.client.catalog()
    assert [p.name for p in catalog.prompts] == ["greet"]
    (arg,) = catalog.prompts[0].arguments
    assert (arg.name, arg.required) == ("name", True)
    resources = {r.uri: r for r in catalog.resources}
    assert set(resources) == {"test://static/text", "test://static/blob"}
    assert resources["test://static/text"].mime_type == "text/plain"
    assert resources["test://static/blob"].mime_type == "application/octet-stream"
    assert [t.uri_template for t in catalog.resource_templates] == ["test://items/{item_id}"]


def test_sdk_echo_returns_text(sdk: SDKBinding) -> None:
    result = sdk.client.call_tool("echo", {"message": "hello, peer"})
    assert result.is_error is False
    assert result.text == "hello, peer"
    assert result.content == (Text("hello, peer"),)
    assert result.structured is None


def test_sdk_add_returns_structured_content(sdk: SDKBinding) -> None:
    result = sdk.client.call_tool("add", {"a": 2, "b": 40})
    assert result.is_error is False
    assert result.structured == {"sum": 42}
    assert result.warnings == ()


def test_sdk_image_and_audio(sdk: SDKBinding) -> None:
    (image,) = sdk.client.call_tool("image").content
    assert isinstance(image, Image)
    assert image.mime_type == "image/png"
    assert image.data.startswith(PNG_MAGIC)
    (audio,) = sdk.client.call_tool("audio").content
    assert isinstance(audio, Audio)
    assert audio.mime_type == "audio/wav"
    assert audio.data[:4] == b"RIFF" and audio.data[8:12] == b"WAVE"


def test_sdk_embedded_resource(sdk: SDKBinding) -> None:
    (item,) = sdk.client.call_tool("embedded").content
    assert isinstance(item, EmbeddedResource)
    assert (item.uri, item.mime_type, item.text) == (
        "test://static/text",
        "text/plain",
        "embedded text",
    )
    assert item.data == b""


def test_sdk_resource_link(sdk: SDKBinding) -> None:
    (item,) = sdk.client.call_tool("link").content
    assert isinstance(item, ResourceLink)
    assert item.uri == "test://static/blob"
    assert item.name == "blob"
    assert item.description == "the binary resource"
    assert item.mime_type == "application/octet-stream"


def test_sdk_tool_error_is_a_result_not_an_exception(sdk: SDKBinding) -> None:
    result = sdk.client.call_tool("boom")
    assert result.is_error is True
    assert "boom: this tool always fails" in result.text
    # The binding is unaffected.
    assert sdk.client.status().state is State.READY
    assert sdk.client.call_tool("echo", {"message": "still here"}).text == "still here"


def test_sdk_unknown_tool_is_refused_locally(sdk: SDKBinding) -> None:
    with pytest.raises(ToolUnavailableError):
        sdk.client.call_tool("no-such-tool")


def test_sdk_get_prompt(sdk: SDKBinding) -> None:
    prompt = sdk.client.get_prompt("greet", {"name": "Ada"})
    assert prompt.description == "Greet someone by name."
    (message,) = prompt.messages
    assert message.role == "user"
    assert message.content == Text("Hello, Ada!")


def test_sdk_read_text_resource(sdk: SDKBinding) -> None:
    resource = sdk.client.read_resource("test://static/text")
    (content,) = resource.contents
    assert isinstance(content, mcpclient.ResourceContent)
    assert (content.uri, content.mime_type, content.text) == (
        "test://static/text",
        "text/plain",
        "static text",
    )
    assert content.data == b""


def test_sdk_read_blob_resource(sdk: SDKBinding) -> None:
    resource = sdk.client.read_resource("test://static/blob")
    (content,) = resource.contents
    assert isinstance(content, mcpclient.ResourceContent)
    assert content.mime_type == "application/octet-stream"
    assert content.data == bytes(range(256))
    assert content.text == ""


def test_sdk_read_templated_resource(sdk: SDKBinding) -> None:
    (content,) = sdk.client.read_resource("test://items/42").contents
    assert isinstance(content, mcpclient.ResourceContent)
    assert content.text == "item 42"


def test_sdk_unknown_resource_is_not_found(sdk: SDKBinding) -> None:
    with pytest.raises(mcpclient.ToolUnavailableError) as info:
        sdk.client.read_resource("test://nothing/here")
    assert info.value.failure_class is mcpclient.FailureClass.NOT_FOUND
    assert isinstance(info.value.code, int)  # the server's JSON-RPC code, kept
    assert sdk.client.status().state is State.READY


def test_sdk_complete_prompt_argument(sdk: SDKBinding) -> None:
    assert sdk.client.catalog().capabilities.completions
    completion = sdk.client.complete(PromptRef("greet"), "name", "Al")
    assert completion.values == ("Alice", "Albert")
    assert completion.total == 2
    assert completion.has_more is False
    assert sdk.client.complete(PromptRef("greet"), "name", "Zz").values == ()


def test_sdk_complete_template_argument(sdk: SDKBinding) -> None:
    completion = sdk.client.complete(ResourceTemplateRef("test://items/{item_id}"), "item_id", "")
    assert completion.values == ("1", "2", "3")


def test_sdk_ping(sdk: SDKBinding) -> None:
    # Modern: a server/discover round trip (the SDK answers a modern ping with -32601).
    assert sdk.client.ping() is None
    assert sdk.client.status().state is State.READY


def test_sdk_progress_reaches_callback_and_events(sdk: SDKBinding) -> None:
    recorder = Events()
    sdk.recorder.reset()
    result = sdk.client.call_tool(
        "slow", {"seconds": 0.2}, CallOpts(progress=recorder.on_progress, timeout=10)
    )
    assert result.text == "slept 0.2"
    assert wait_until(lambda: len(recorder.progress) >= 1)
    assert wait_until(lambda: len(sdk.recorder.of(RequestProgress)) >= 1)
    reports = list(recorder.progress)
    assert all(r.binding == "sdk" and r.total == 10.0 for r in reports)
    values = [r.progress for r in reports]
    assert values == sorted(values) and values[0] >= 1.0 and values[-1] <= 10.0
    assert all(r.message == f"step {int(r.progress)}" for r in reports)
    events = sdk.recorder.of(RequestProgress)
    assert all(e.binding == "sdk" and e.total == 10.0 for e in events)


def test_sdk_no_progress_without_a_callback(sdk: SDKBinding) -> None:
    sdk.recorder.reset()
    sdk.client.call_tool("slow", {"seconds": 0.05})
    # An echo after it drains the lane's order: anything the slow call produced is in by now.
    sdk.client.call_tool("echo", {"message": "x"})
    time.sleep(0.1)
    assert sdk.recorder.of(RequestProgress) == []


def test_sdk_deadline_is_held_and_the_binding_survives(sdk: SDKBinding) -> None:
    # Modern: the binding's open subscriptions/listen stream has no deadline; an expiring
    # call deadline must not upset the watcher that serves both (filterwarnings=error
    # turns a crashed mcpclient-deadline thread into a failure here).
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError) as info:
        sdk.client.call_tool("slow", {"seconds": 5}, CallOpts(timeout=0.3))
    assert time.monotonic() - started < 3.0
    assert info.value.failure_class is FailureClass.DEADLINE
    assert sdk.client.status().state is State.READY
    assert sdk.client.call_tool("echo", {"message": "after"}).text == "after"


@pytest.mark.parametrize(("mode", "expected"), SDK_ERAS, ids=[m for m, _ in SDK_ERAS])
def test_sdk_close(sdk_definition: MakeDefinition, mode: str, expected: str) -> None:
    recorder = Events()
    definition = sdk_definition(protocol=mode, env={TAG: f"close-{mode}"})
    client = mcpclient.connect(definition, Handlers(event=recorder.on_event))
    assert client.status().protocol_version == expected
    catalog = client.catalog()
    client.close()
    assert client.status().state is State.CLOSED
    client.close()  # idempotent
    for call in (
        lambda: client.call_tool("echo", {"message": "x"}),
        lambda: client.get_prompt("greet", {"name": "x"}),
        lambda: client.read_resource("test://static/text"),
        lambda: client.complete(PromptRef("greet"), "name", "A"),
        client.ping,
    ):
        with pytest.raises(ShutdownError):
            call()
    assert client.catalog() == catalog  # still readable after close
    assert wait_until(
        lambda: any(
            isinstance(e, mcpclient.StateChanged) and e.to_state is State.CLOSED
            for e in recorder.events
        )
    )


@pytest.mark.parametrize("mode", [mode for mode, _ in SDK_ERAS])
def test_sdk_close_with_a_tool_call_in_flight(sdk_definition: MakeDefinition, mode: str) -> None:
    definition = sdk_definition(protocol=mode, env={TAG: f"close-inflight-{mode}"})
    client = mcpclient.connect(definition)
    started = threading.Event()
    try:
        future = client.submit_tool_call(
            "slow", {"seconds": 3}, CallOpts(progress=lambda _r: started.set(), timeout=30)
        )
        assert started.wait(10), "the slow call never reported progress"
    finally:
        client.close()
    # The server saw the call: its outcome is unknown, and it is never re-sent.
    error = future.exception(timeout=5)
    assert isinstance(error, IndeterminateError)
    assert error.failure_class is FailureClass.INDETERMINATE
    assert client.status().state is State.CLOSED


@pytest.mark.parametrize("version", ["2026-07-28", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_sdk_pinned_versions(sdk_definition: MakeDefinition, version: str) -> None:
    definition = sdk_definition(protocol=version, env={TAG: f"pinned-{version}"})
    with mcpclient.connect(definition) as client:
        assert client.status().protocol_version == version
        assert client.catalog().protocol_version == version
        assert client.call_tool("echo", {"message": version}).text == version
        added = client.call_tool("add", {"a": 1, "b": 2})
        assert added.is_error is False
        if version >= "2025-06-18":
            assert added.structured == {"sum": 3}
        client.ping()


def test_sdk_legacy_pin_does_not_poison_the_auto_era(sdk_definition: MakeDefinition) -> None:
    # The era cache is per server command: a pinned legacy connection says nothing about
    # what protocol="auto" would find, so it must not make a later auto connection skip
    # the modern probe.
    env = {TAG: "era-cache"}
    with mcpclient.connect(sdk_definition(protocol="legacy", env=env)) as client:
        assert client.status().protocol_version == LATEST_LEGACY
    with mcpclient.connect(sdk_definition(protocol="auto", env=env)) as client:
        assert client.status().protocol_version == MODERN


# --------------------------------------------------------------------- server-everything


@pytest.fixture
def everything(
    everything_definition: MakeDefinition,
) -> Iterator[tuple[mcpclient.Client, Events]]:
    recorder = Events()
    client = mcpclient.connect(everything_definition(), Handlers(event=recorder.on_event))
    try:
        yield client, recorder
    finally:
        client.close()


def test_everything_falls_back_to_legacy_and_lists(
    everything: tuple[mcpclient.Client, Events],
) -> None:
    client, _ = everything
    status = client.status()
    assert status.state is State.READY
    assert status.protocol_version == LATEST_LEGACY
    assert status.server.name == "mcp-servers/everything"
    catalog = client.catalog()
    assert catalog.protocol_version == LATEST_LEGACY
    names = {t.raw_name for t in catalog.tools}
    assert {"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} <= names
    for tool in catalog.tools:
        assert tool.model_name == f"mcp__everything__{tool.raw_name}"
    assert catalog.capabilities.tools and catalog.capabilities.prompts
    assert catalog.capabilities.resources and catalog.capabilities.logging
    assert catalog.prompts and catalog.resources


def test_everything_tools(everything: tuple[mcpclient.Client, Events]) -> None:
    client, _ = everything
    echo = client.call_tool("echo", {"message": "hi there"})
    assert echo.is_error is False
    assert echo.text == "Echo: hi there"
    total = client.call_tool("get-sum", {"a": 2, "b": 3})
    assert total.is_error is False
    assert "5" in total.text
    images = [c for c in client.call_tool("get-tiny-image").content if isinstance(c, Image)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    assert images[0].data.startswith(PNG_MAGIC)


def test_everything_structured_content(everything: tuple[mcpclient.Client, Events]) -> None:
    client, _ = everything
    spec = client.catalog().tool_by_raw_name("get-structured-content")
    if spec is None:
        pytest.skip("this server-everything has no get-structured-content tool")
    assert spec.output_schema is not None
    result = client.call_tool("get-structured-content", {"location": "Chicago"})
    assert result.is_error is False
    assert isinstance(result.structured, dict)
    assert set(spec.output_schema["required"]) <= set(result.structured)


def test_everything_progress(everything: tuple[mcpclient.Client, Events]) -> None:
    client, recorder = everything
    reports = Events()
    result = client.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.6, "steps": 3},
        CallOpts(progress=reports.on_progress, timeout=20),
    )
    assert result.is_error is False
    assert "Long running operation completed" in result.text
    assert wait_until(lambda: len(reports.progress) >= 1)
    assert wait_until(lambda: len(recorder.of(RequestProgress)) >= 1)
    assert all(r.binding == "everything" and r.total == 3.0 for r in reports.progress)
    values = [r.progress for r in reports.progress]
    assert values == sorted(values) and values[-1] <= 3.0
    assert all(e.total == 3.0 for e in recorder.of(RequestProgress))


def test_everything_ping_and_close(everything_definition: MakeDefinition) -> None:
    client = mcpclient.connect(everything_definition(name="everything2"))
    try:
        client.ping()
        assert client.status().state is State.READY
    finally:
        client.close()
    assert client.status().state is State.CLOSED
    with pytest.raises(ShutdownError):
        client.call_tool("echo", {"message": "x"})
