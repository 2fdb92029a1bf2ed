"""Library values (results, catalogs, status, events) as plain JSON values.

These shapes are the ``result`` of the ``--json`` envelope (docs/cli.md), so
they are written out field by field rather than derived from the attrs
classes: a field added to the library does not silently change the CLI's
documented output.
"""

from __future__ import annotations

import base64
import enum
from typing import Any

import attrs

import mcpclient
from mcpclient.catalog import Catalog, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec
from mcpclient.content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Prompt,
    Resource,
    ResourceContent,
    ResourceLink,
    Text,
    ToolResult,
    Unsupported,
)
from mcpclient.status import Status

__all__ = [
    "catalog_json",
    "content_json",
    "event_json",
    "plain",
    "prompt_json",
    "resource_json",
    "status_json",
    "tool_json",
    "tool_result_json",
]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def content_json(item: Content | ResourceContent) -> dict[str, Any]:
    """One content item: ``{"type": ..., ...}``; binary data as base64."""
    if isinstance(item, Text):
        return {"type": "text", "text": item.text, "truncated": item.truncated}
    if isinstance(item, Image | Audio):
        kind = "image" if isinstance(item, Image) else "audio"
        return {"type": kind, "mime_type": item.mime_type, "data": _b64(item.data)}
    if isinstance(item, EmbeddedResource | ResourceContent):
        out: dict[str, Any] = {
            "type": "resource",
            "uri": item.uri,
            "mime_type": item.mime_type,
            "truncated": item.truncated,
        }
        if item.data:
            out["data"] = _b64(item.data)
        else:
            out["text"] = item.text
        return out
    if isinstance(item, ResourceLink):
        return {
            "type": "resource_link",
            "uri": item.uri,
            "name": item.name,
            "mime_type": item.mime_type,
        }
    assert isinstance(item, Unsupported)
    return {"type": "unsupported", "kind": item.kind, "bytes": item.bytes}


def tool_result_json(result: ToolResult) -> dict[str, Any]:
    """A tool result: ``is_error``, ``content``, ``structured``, ``text``, ``warnings``."""
    return {
        "is_error": result.is_error,
        "text": result.text,
        "content": [content_json(item) for item in result.content],
        "structured": result.structured,
        "warnings": list(result.warnings),
    }


def prompt_json(prompt: Prompt) -> dict[str, Any]:
    """A rendered prompt: its description and messages."""
    return {
        "description": prompt.description,
        "messages": [
            {"role": message.role, "content": content_json(message.content)}
            for message in prompt.messages
        ],
    }


def resource_json(resource: Resource) -> dict[str, Any]:
    """A resource read: its contents and warnings."""
    return {
        "contents": [content_json(item) for item in resource.contents],
        "warnings": list(resource.warnings),
    }


def tool_json(tool: ToolSpec) -> dict[str, Any]:
    """One tool of a catalog."""
    return {
        "name": tool.raw_name,
        "model_name": tool.model_name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "warnings": list(tool.warnings),
    }


def _prompt_spec_json(prompt: PromptSpec) -> dict[str, Any]:
    return {
        "name": prompt.name,
        "title": prompt.title,
        "description": prompt.description,
        "arguments": [
            {"name": arg.name, "description": arg.description, "required": arg.required}
            for arg in prompt.arguments
        ],
    }


def _resource_spec_json(resource: ResourceSpec) -> dict[str, Any]:
    return {
        "uri": resource.uri,
        "name": resource.name,
        "description": resource.description,
        "mime_type": resource.mime_type,
    }


def _template_spec_json(template: ResourceTemplateSpec) -> dict[str, Any]:
    return {
        "uri_template": template.uri_template,
        "name": template.name,
        "description": template.description,
        "mime_type": template.mime_type,
    }


def catalog_json(catalog: Catalog) -> dict[str, Any]:
    """A whole catalog generation."""
    return {
        "generation": catalog.generation,
        "digest": catalog.digest,
        "protocol_version": catalog.protocol_version,
        "server": {"name": catalog.server.name, "version": catalog.server.version},
        "tools": [tool_json(tool) for tool in catalog.tools],
        "prompts": [_prompt_spec_json(prompt) for prompt in catalog.prompts],
        "resources": [_resource_spec_json(resource) for resource in catalog.resources],
        "resource_templates": [_template_spec_json(t) for t in catalog.resource_templates],
        "warnings": list(catalog.warnings),
        "applied_tolerances": [str(t) for t in catalog.applied_tolerances],
    }


def status_json(status: Status) -> dict[str, Any]:
    """A binding's status snapshot (never a credential)."""
    failure = status.failure
    return {
        "state": str(status.state),
        "protocol_version": status.protocol_version,
        "server": {
            "name": status.server.name,
            "version": status.server.version,
            "title": status.server.title,
        },
        "transport": status.transport_kind,
        "origin": status.redacted_origin,
        "catalog_generation": status.catalog_generation,
        "catalog_digest": status.catalog_digest,
        "compat_profile": status.compat_profile,
        "failure": None
        if failure is None
        else {"class": str(failure.failure_class), "message": failure.message},
    }


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return str(value)
    if isinstance(value, mcpclient.ServerIdentity):
        return {"name": value.name, "version": value.version}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def event_json(event: Any) -> dict[str, Any]:
    """An event as ``{"type": <class name>, <its public fields>}``.

    Events carry no arguments, results or secrets (``mcpclient.events``), so
    every public field is shown; a server log's ``data`` is its JSON value.
    """
    out: dict[str, Any] = {"type": type(event).__name__}
    for field in attrs.fields(type(event)):
        name = field.name.lstrip("_")
        out[name] = _plain(getattr(event, name))
    return out


def plain(value: Any, depth: int = 0) -> Any:
    """Any library value as JSON: attrs instances as objects, enums as their strings.

    For values whose shape this module does not fix (an export report).
    """
    if depth > 32:
        return repr(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return str(value)
    if isinstance(value, bytes):
        return _b64(value)
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v, depth + 1) for v in value]
    if attrs.has(type(value)):
        return {
            f.name.lstrip("_"): plain(getattr(value, f.name), depth + 1)
            for f in attrs.fields(type(value))
            if not f.name.startswith("_")
        }
    if hasattr(value, "__dict__"):
        return {k: plain(v, depth + 1) for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)
