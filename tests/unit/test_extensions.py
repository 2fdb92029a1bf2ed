"""Issue 19, negotiation: the Extension config value and the wire of declarations."""

from __future__ import annotations

import pytest

import mcpclient
from mcpclient._internal.session.protocol import client_capabilities
from mcpclient._internal.wire.extensions import (
    MAX_SERVER_EXTENSIONS,
    negotiated,
    server_extensions,
)
from mcpclient.definition import SKILLS_EXTENSION, UI_EXTENSION, UI_MIME_TYPE, Extension

STDIO = mcpclient.StdioTransport("true")


def test_definition_takes_a_mapping_ids_or_values() -> None:
    by_map = mcpclient.Definition("a", STDIO, extensions={SKILLS_EXTENSION: None})
    by_ids = mcpclient.Definition("a", STDIO, extensions=[SKILLS_EXTENSION])
    assert by_map.extensions == by_ids.extensions == (Extension(SKILLS_EXTENSION),)
    assert by_map.uses_extension(SKILLS_EXTENSION)
    assert not by_map.uses_extension(UI_EXTENSION)
    assert mcpclient.Definition("a", STDIO).extensions == ()
    by_map.validate()


@pytest.mark.parametrize(
    "identifier", ["", "skills", "a/b/c", "-a/b", "a./b", "a/-b", "a/b-", "x" * 300 + "/b", 3]
)
def test_bad_identifiers_are_refused(identifier: object) -> None:
    with pytest.raises(mcpclient.ConfigError, match=r"Extension\.identifier"):
        Extension(identifier)  # type: ignore[arg-type]


@pytest.mark.parametrize("settings", [[1], "x", 3, {"x": object()}, {"x": "y" * 20000}])
def test_bad_settings_are_refused(settings: object) -> None:
    with pytest.raises(mcpclient.ConfigError, match=r"Extension\.settings"):
        Extension("com.example/x", settings)


def test_duplicates_are_refused() -> None:
    with pytest.raises(mcpclient.ConfigError, match="twice"):
        mcpclient.Definition("a", STDIO, extensions=["a/b", Extension("a/b", {"k": 1})])


def test_settings_are_a_fresh_copy() -> None:
    ext = Extension("com.example/x", {"k": [1]})
    ext.settings["k"].append(2)
    assert ext.settings == {"k": [1]}


def test_ui_gets_its_mime_type_and_other_settings_pass_verbatim() -> None:
    caps = client_capabilities(
        mcpclient.ClientCapabilities(),
        "2025-11-25",
        (Extension(UI_EXTENSION), Extension("com.example/x", {"k": 1})),
    )
    assert caps == {
        "extensions": {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}, "com.example/x": {"k": 1}}
    }
    assert client_capabilities(mcpclient.ClientCapabilities(), "2026-07-28") == {}


def test_server_declarations_are_bounded_and_lenient() -> None:
    raw = {"extensions": {"a/b": {}, "c/d": [], "e/f": None, "g/h": {"k": "v"}, 7: {}}}
    assert server_extensions(raw) == {"a/b": {}, "g/h": {"k": "v"}}
    assert server_extensions({"extensions": []}) == {}
    assert server_extensions(None) == {}
    many = {"extensions": {f"x/e{i}": {} for i in range(MAX_SERVER_EXTENSIONS + 10)}}
    assert len(server_extensions(many)) == MAX_SERVER_EXTENSIONS
    assert server_extensions({"extensions": {"a/b": {"k": "v" * 20000}}}) == {}


def test_negotiated_is_the_sorted_intersection() -> None:
    ours = (Extension(UI_EXTENSION), Extension(SKILLS_EXTENSION), Extension("a/b"))
    assert negotiated(ours, {SKILLS_EXTENSION: {}, UI_EXTENSION: {}, "c/d": {}}) == (
        SKILLS_EXTENSION,
        UI_EXTENSION,
    )


def test_server_capabilities_report_extensions() -> None:
    caps = mcpclient.ServerCapabilities(extensions={"a/b": {"k": 1}})
    assert caps.extensions == {"a/b": {"k": 1}}
    assert caps.extension("a/b") == {"k": 1}
    assert caps.extension("c/d") is None
    assert mcpclient.ServerCapabilities().extensions == {}
