"""The modern HTTP headers: Mcp-Method, Mcp-Name, Mcp-Param-* and the Base64 sentinel."""

from __future__ import annotations

import base64

import pytest

from mcpclient._internal.session.headers import (
    encode_header_value,
    header_annotations,
    request_headers,
)


def _sentinel(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west-1", "us-west-1"),
        ("us west 1", "us west 1"),  # interior spaces travel as they are (SEP-2243)
        ("", ""),
        (" leading", _sentinel(" leading")),
        ("trailing ", _sentinel("trailing ")),
        ("tab\there", _sentinel("tab\there")),
        ("line\r\nbreak", _sentinel("line\r\nbreak")),
        ("café", _sentinel("café")),
        ("=?base64?abc?=", _sentinel("=?base64?abc?=")),
        ("=?base64?abc", "=?base64?abc"),
    ],
)
def test_header_values_are_plain_or_sentinel_encoded(value: str, sent: str) -> None:
    assert encode_header_value(value) == sent


def test_request_headers_name_the_method_and_target() -> None:
    assert request_headers("tools/list", {}) == {"Mcp-Method": "tools/list"}
    assert request_headers("tools/call", {"name": "get weather"})["Mcp-Name"] == "get weather"
    assert request_headers("prompts/get", {"name": "greet"})["Mcp-Name"] == "greet"
    uri = "file:///ünïcode"
    assert request_headers("resources/read", {"uri": uri})["Mcp-Name"] == _sentinel(uri)


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "nested": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
    },
}


def test_param_headers_follow_the_annotations() -> None:
    annotations = header_annotations(SCHEMA)
    assert isinstance(annotations, dict)
    params = {
        "name": "t",
        "arguments": {"region": "eu", "count": 42, "dry": False, "nested": {"zone": "b"}},
    }
    headers = request_headers("tools/call", params, param_headers=annotations)
    assert headers == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Count": "42",
        "Mcp-Param-Dry-Run": "false",
        "Mcp-Param-Zone": "b",
    }


def test_absent_or_null_arguments_send_no_header() -> None:
    annotations = header_annotations(SCHEMA)
    assert isinstance(annotations, dict)
    params = {"name": "t", "arguments": {"region": None}}
    headers = request_headers("tools/call", params, param_headers=annotations)
    assert not any(name.startswith("Mcp-Param-") for name in headers)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "string, integer"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}, "token"),
        (
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"},
                }
            },
            "twice",
        ),
        (
            {
                "properties": {
                    "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}
                }
            },
            "reached through",
        ),
        (
            {"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
            "reached through",
        ),
        ({"type": "string", "x-mcp-header": "Root"}, "reached through"),
    ],
)
def test_invalid_annotations_are_reported(schema: dict[str, object], fragment: str) -> None:
    problem = header_annotations(schema)
    assert isinstance(problem, str)
    assert fragment in problem
