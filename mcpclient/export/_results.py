"""Tool results shaped as each provider's result messages.

* OpenAI Chat: one ``{"role": "tool", "tool_call_id", "content"}`` message per
  call. Its content is text, so an image or audio item is described, not sent.
* OpenAI Responses: one ``{"type": "function_call_output", "call_id", "output"}``
  item per call; ``output`` is text, or a list with ``input_image`` (and
  ``input_file`` for a PDF) items when the result carries them.
* Anthropic: ONE ``{"role": "user", "content": [...]}`` message holding a
  ``tool_result`` block per call (``tool_use_id``, ``is_error``), with image
  blocks (JPEG, PNG, GIF, WebP) and PDF document blocks inside it.
* Gemini: ONE ``{"role": "user", "parts": [...]}`` content holding a
  ``functionResponse`` part per call: ``response`` is ``{"output": ...}`` or
  ``{"error": ...}``; images and PDFs go in its ``parts`` as ``inlineData``.

Structured content is sent as JSON (text) when the result has no text item,
and as the Gemini ``output`` object.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from mcpclient.content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    ToolResult,
    Unsupported,
)
from mcpclient.export._calls import ToolCall
from mcpclient.export._values import ANTHROPIC, GEMINI, OPENAI_CHAT, OPENAI_RESPONSES

__all__ = ["Outcome", "describe", "shape_results"]

#: What became of one call: the tool's result, or an error text for the model.
Outcome = ToolResult | str

_ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_GEMINI_INLINE = frozenset({"image/jpeg", "image/png", "image/webp", "application/pdf"})
_PDF = "application/pdf"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def describe(item: Content, why: str = "") -> str:
    """A text stand-in for a content item this provider cannot take."""
    suffix = f"; {why}" if why else ""
    if isinstance(item, Image | Audio):
        kind = "image" if isinstance(item, Image) else "audio"
        return f"[{kind} {item.mime_type or 'of unknown type'}, {len(item.data)} bytes{suffix}]"
    if isinstance(item, EmbeddedResource):
        return (
            f"[resource {item.uri} ({item.mime_type or 'binary'}, {len(item.data)} bytes){suffix}]"
        )
    if isinstance(item, ResourceLink):
        label = item.title or item.name
        return f"[resource link {label + ' ' if label else ''}{item.uri}]"
    if isinstance(item, Unsupported):
        return f"[content omitted: {item.kind}, {item.bytes} bytes]"
    return ""


def _item_text(item: Content, why: str) -> str:
    if isinstance(item, Text):
        return item.text
    if isinstance(item, EmbeddedResource) and item.text:
        return item.text
    return describe(item, why)


def _structured_text(result: ToolResult) -> str | None:
    structured = result.structured
    if structured is None or any(isinstance(item, Text) for item in result.content):
        return None
    return json.dumps(structured, ensure_ascii=False, sort_keys=True)


def _as_text(outcome: Outcome, why: str) -> str:
    if isinstance(outcome, str):
        return f"Error: {outcome}"
    pieces = [_item_text(item, why) for item in outcome.content]
    structured = _structured_text(outcome)
    if structured is not None:
        pieces.append(structured)
    text = "\n".join(p for p in pieces if p) or "(the tool returned no content)"
    return f"Error: {text}" if outcome.is_error else text


def _openai_chat(calls: Sequence[tuple[ToolCall, Outcome]]) -> list[dict[str, Any]]:
    why = "not shown: tool messages carry text only"
    return [
        {"role": "tool", "tool_call_id": call.call_id, "content": _as_text(outcome, why)}
        for call, outcome in calls
    ]


def _responses_output(outcome: Outcome) -> str | list[dict[str, Any]]:
    if isinstance(outcome, str) or not any(
        isinstance(item, Image) or (isinstance(item, EmbeddedResource) and item.mime_type == _PDF)
        for item in outcome.content
    ):
        return _as_text(outcome, "not shown")
    parts: list[dict[str, Any]] = []
    if outcome.is_error:
        parts.append({"type": "input_text", "text": "Error:"})
    for item in outcome.content:
        if isinstance(item, Image):
            url = f"data:{item.mime_type or 'image/png'};base64,{_b64(item.data)}"
            parts.append({"type": "input_image", "image_url": url})
        elif isinstance(item, EmbeddedResource) and item.mime_type == _PDF and item.data:
            name = item.uri.rsplit("/", 1)[-1] or "document.pdf"
            data = f"data:{_PDF};base64,{_b64(item.data)}"
            parts.append({"type": "input_file", "filename": name, "file_data": data})
        else:
            text = _item_text(item, "not shown")
            if text:
                parts.append({"type": "input_text", "text": text})
    structured = _structured_text(outcome)
    if structured is not None:
        parts.append({"type": "input_text", "text": structured})
    return parts


def _openai_responses(calls: Sequence[tuple[ToolCall, Outcome]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": _responses_output(outcome),
        }
        for call, outcome in calls
    ]


def _anthropic_block(call: ToolCall, outcome: Outcome) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.call_id}
    if isinstance(outcome, str):
        block["content"] = [{"type": "text", "text": outcome}]
        block["is_error"] = True
        return block
    content: list[dict[str, Any]] = []
    for item in outcome.content:
        if isinstance(item, Image) and item.mime_type in _ANTHROPIC_IMAGES:
            source = {"type": "base64", "media_type": item.mime_type, "data": _b64(item.data)}
            content.append({"type": "image", "source": source})
        elif isinstance(item, EmbeddedResource) and item.mime_type == _PDF and item.data:
            source = {"type": "base64", "media_type": _PDF, "data": _b64(item.data)}
            content.append({"type": "document", "source": source})
        else:
            text = _item_text(item, "not a type Claude accepts in a tool result")
            if text:
                content.append({"type": "text", "text": text})
    structured = _structured_text(outcome)
    if structured is not None:
        content.append({"type": "text", "text": structured})
    if not content:
        content.append({"type": "text", "text": "(the tool returned no content)"})
    block["content"] = content
    block["is_error"] = outcome.is_error
    return block


def _anthropic(calls: Sequence[tuple[ToolCall, Outcome]]) -> list[dict[str, Any]]:
    if not calls:
        return []
    return [{"role": "user", "content": [_anthropic_block(c, o) for c, o in calls]}]


def _gemini_part(call: ToolCall, outcome: Outcome) -> dict[str, Any]:
    response: dict[str, Any]
    inline: list[dict[str, Any]] = []
    if isinstance(outcome, str):
        response = {"error": outcome}
    else:
        pieces = []
        for item in outcome.content:
            data = item.data if isinstance(item, Image | Audio | EmbeddedResource) else b""
            mime = getattr(item, "mime_type", "")
            if data and mime in _GEMINI_INLINE:
                inline.append({"inlineData": {"mimeType": mime, "data": _b64(data)}})
                pieces.append(describe(item, "attached"))
            else:
                pieces.append(_item_text(item, "not attached: a type Gemini does not accept here"))
        text = "\n".join(p for p in pieces if p)
        structured = outcome.structured
        value: Any = structured if structured is not None else text
        response = {"error": value} if outcome.is_error else {"output": value}
    function_response: dict[str, Any] = {"name": call.name, "response": response}
    if call.call_id:
        function_response["id"] = call.call_id
    if inline:
        function_response["parts"] = inline
    return {"functionResponse": function_response}


def _gemini(calls: Sequence[tuple[ToolCall, Outcome]]) -> list[dict[str, Any]]:
    if not calls:
        return []
    return [{"role": "user", "parts": [_gemini_part(c, o) for c, o in calls]}]


_SHAPERS = {
    OPENAI_CHAT: _openai_chat,
    OPENAI_RESPONSES: _openai_responses,
    ANTHROPIC: _anthropic,
    GEMINI: _gemini,
}


def shape_results(provider: str, calls: Sequence[tuple[ToolCall, Outcome]]) -> list[dict[str, Any]]:
    """The messages (or items) to append to the conversation, in call order."""
    return _SHAPERS[provider](calls)
