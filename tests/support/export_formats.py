"""The provider formats of ``tests/fixtures/export``, as validators and checks.

``conforms(provider, part, value)`` validates ``value`` against the fixture
schema's ``definitions.<part>`` (``tool_list``, ``result_messages``,
``mcp_tool``, ``mcp_server``) and returns the problem ("" when it conforms).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import fastjsonschema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "export"
SCHEMA_FILES = {
    "openai_chat": "openai_chat.schema.json",
    "openai_responses": "openai_responses.schema.json",
    "anthropic": "anthropic.schema.json",
    "gemini": "gemini.schema.json",
}
#: Keywords OpenAI's strict mode accepts (from the Structured Outputs guide).
STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "description", "title", "pattern", "format", "multipleOf", "minimum",
        "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
    }
)  # fmt: skip


@functools.cache
def _validator(provider: str, part: str) -> Any:
    document = json.loads((FIXTURES / SCHEMA_FILES[provider]).read_text(encoding="utf-8"))
    schema = {"definitions": document["definitions"], "$ref": f"#/definitions/{part}"}
    return fastjsonschema.compile(schema)


def conforms(provider: str, part: str, value: Any) -> str:
    """ "" when ``value`` fits the provider's documented ``part``, else the problem."""
    try:
        _validator(provider, part)(value)
    except fastjsonschema.JsonSchemaException as exc:
        return str(exc)
    return ""


def response(provider: str) -> dict[str, Any]:
    """The recorded response of ``provider`` (a fresh copy)."""
    text = (FIXTURES / f"{provider}_response.json").read_text(encoding="utf-8")
    value: dict[str, Any] = json.loads(text)
    return value


def schemas_in(schema: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (sub)schema of ``schema`` with its JSON pointer."""
    if not isinstance(schema, Mapping):
        return
    yield path, schema
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            yield from schemas_in(sub, f"{path}/{key}/{name}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for index, sub in enumerate(schema.get(key) or ()):
            yield from schemas_in(sub, f"{path}/{key}/{index}")
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), Mapping):
            yield from schemas_in(schema[key], f"{path}/{key}")


def strict_problems(schema: Any) -> list[str]:
    """Where ``schema`` breaks OpenAI strict mode's documented rules."""
    problems = []
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        problems.append("the root is not an object schema")
    for path, node in schemas_in(schema):
        extra = set(node) - STRICT_KEYWORDS
        if extra:
            problems.append(f"{path}: unsupported keywords {sorted(extra)}")
        if "$ref" in node:
            problems.append(f"{path}: a $ref is left")
        kind = node.get("type")
        kinds = [kind] if isinstance(kind, str) else list(kind or [])
        if "object" in kinds or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties is not false")
            if sorted(node.get("required") or []) != sorted(node.get("properties") or {}):
                problems.append(f"{path}: not every property is required")
        if not ({"type", "anyOf", "enum", "const"} & set(node)):
            problems.append(f"{path}: a schema with no type")
    return problems
