"""``get_prompt`` refuses missing required arguments before anything is sent.

The catalog knows which prompt arguments are required; like ``call_tool``'s
schema check, a request lacking one raises ``InvalidArgumentsError`` on the
caller's thread, and the testing server's ``--record`` file shows that no
``prompts/get`` reached it. The official SDK's server (``greet`` {name}) is
checked too: it never sees the request either, which is what keeps its
validation error from being the caller's only signal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpclient import CallOpts, Client, Error, FailureClass, InvalidArgumentsError, Text, connect

from .conftest import MakeDefinition
from .engine_support import Recording, definition

ERAS = ["legacy", "modern"]

#: A prompt with two required arguments and one optional, besides the default ``greet``.
CATALOG = {
    "prompts": [
        {"name": "greet", "arguments": [{"name": "name", "required": True}]},
        {
            "name": "brief",
            "arguments": [
                {"name": "topic", "required": True},
                {"name": "audience", "required": True},
                {"name": "tone"},
            ],
        },
        {"name": "plain"},
    ]
}


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prompt-args") / "catalog.json"
    path.write_text(json.dumps(CATALOG), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=ERAS)
def bound(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, catalog_file: Path
) -> Iterator[tuple[Client, Recording]]:
    rec = Recording(tmp_path_factory.mktemp(f"prompt-args-{request.param}") / "rec.jsonl")
    flags = ("--era", request.param, "--catalog", str(catalog_file))
    with connect(definition(*flags, record=rec.path)) as client:
        yield client, rec


def _prompt_requests(client: Client, rec: Recording) -> list[dict[str, object]]:
    # A ping round trip first: everything sent before it has been recorded.
    client.ping(CallOpts(timeout=5))
    return rec.requests("prompts/get")


def test_missing_required_argument_is_refused_before_sending(
    bound: tuple[Client, Recording],
) -> None:
    client, rec = bound
    before = len(_prompt_requests(client, rec))
    for arguments in (None, {}, {"other": "x"}):
        with pytest.raises(InvalidArgumentsError) as info:
            client.get_prompt("greet", arguments)
        error = info.value
        assert error.failure_class is FailureClass.INVALID_ARGUMENTS
        assert error.op == "get_prompt"
        assert error.binding == "engine"
        assert "'greet'" in error.message
        assert "'name'" in error.message
    assert len(_prompt_requests(client, rec)) == before, "a refused prompt reached the server"


def test_the_error_names_every_missing_argument_and_only_those(
    bound: tuple[Client, Recording],
) -> None:
    client, rec = bound
    before = len(_prompt_requests(client, rec))
    with pytest.raises(InvalidArgumentsError) as info:
        client.get_prompt("brief", {"tone": "dry"})
    message = info.value.message
    assert "'topic'" in message
    assert "'audience'" in message
    assert "'tone'" not in message
    with pytest.raises(InvalidArgumentsError) as info:
        client.get_prompt("brief", {"topic": "MCP"})
    assert "'audience'" in info.value.message
    assert "'topic'" not in info.value.message
    assert len(_prompt_requests(client, rec)) == before


def test_complete_arguments_are_sent(bound: tuple[Client, Recording]) -> None:
    client, rec = bound
    before = len(_prompt_requests(client, rec))
    prompt = client.get_prompt("greet", {"name": "Ada"})
    assert prompt.messages[0].content == Text("Hello, Ada!")
    # The optional argument may be left out; a prompt without arguments needs none.
    client.get_prompt("brief", {"topic": "MCP", "audience": "hosts"})
    client.get_prompt("plain")
    # An empty string is a value: whether it is acceptable is the server's call.
    client.get_prompt("brief", {"topic": "", "audience": ""})
    assert len(_prompt_requests(client, rec)) == before + 4


def test_a_prompt_the_catalog_does_not_list_is_left_to_the_server(
    bound: tuple[Client, Recording],
) -> None:
    client, rec = bound
    before = len(_prompt_requests(client, rec))
    with pytest.raises(Error) as info:  # the server's own refusal
        client.get_prompt("no_such_prompt", {})
    assert not isinstance(info.value, InvalidArgumentsError)
    assert len(_prompt_requests(client, rec)) == before + 1


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_sdk_server_never_sees_a_prompt_missing_its_argument(
    sdk_definition: MakeDefinition, protocol: str
) -> None:
    with connect(sdk_definition(protocol=protocol)) as client:
        spec = next(p for p in client.catalog().prompts if p.name == "greet")
        assert [(a.name, a.required) for a in spec.arguments] == [("name", True)]
        with pytest.raises(InvalidArgumentsError) as info:
            client.get_prompt("greet", {})
        assert "'name'" in info.value.message
        assert client.get_prompt("greet", {"name": "Ada"}).messages
