"""Finding the tool calls in a provider's response.

Each provider puts them elsewhere: OpenAI Chat in ``choices[0].message.tool_calls``
(or the message itself), the Responses API in ``output`` items of type
``function_call``, Anthropic in ``content`` blocks of type ``tool_use``, and
Gemini in ``candidates[0].content.parts[*].functionCall``. A response object
from a provider's SDK is accepted too when it has ``model_dump()`` (or
``to_dict()``), so no SDK is imported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from mcpclient._core.limits import depth_exceeds
from mcpclient.errors import ConfigError
from mcpclient.export._values import ANTHROPIC, GEMINI, OPENAI_CHAT, OPENAI_RESPONSES, PROVIDERS

__all__ = ["MAX_ARGUMENTS_BYTES", "MAX_ARGUMENTS_DEPTH", "ToolCall", "find_tool_calls"]

#: Longest JSON arguments text accepted from a model (longer is an error result).
MAX_ARGUMENTS_BYTES = 4 * 1024 * 1024
#: Deepest nesting of a call's arguments (deeper is an error result): a model's
#: arguments never need more, and every walker after this one may recurse.
MAX_ARGUMENTS_DEPTH = 64
_TOO_DEEP = f"the arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels"
_OP = "run_tool_calls"


@attrs.frozen
class ToolCall:
    """One call a model asked for: its id, the name it used, and its arguments.

    ``problem`` is set (and ``arguments`` is None) when the arguments could
    not be read; the call then becomes an error result.
    """

    call_id: str
    name: str
    arguments: dict[str, Any] | None
    problem: str = ""


def _plain(response: Any) -> Any:
    for method in ("model_dump", "to_dict"):
        dump = getattr(response, method, None)
        if callable(dump) and not isinstance(response, Mapping):
            return dump()
    return response


def _json_arguments(text: Any) -> tuple[dict[str, Any] | None, str]:
    if text is None or text == "":
        return {}, ""
    if isinstance(text, Mapping):
        return _object_arguments(text)
    if not isinstance(text, str):
        return None, f"the arguments are a {type(text).__name__}, not JSON text"
    if len(text) > MAX_ARGUMENTS_BYTES:
        return None, f"the arguments are longer than {MAX_ARGUMENTS_BYTES} bytes"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    except RecursionError:  # json recurses per level: deep text ends here
        return None, _TOO_DEEP
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, got {type(value).__name__}"
    if depth_exceeds(value, MAX_ARGUMENTS_DEPTH):
        return None, _TOO_DEEP
    return value, ""


def _object_arguments(value: Any) -> tuple[dict[str, Any] | None, str]:
    if value is None:
        return {}, ""
    if isinstance(value, Mapping):
        # An SDK's parsed arguments are as untrusted as the text they came from.
        if depth_exceeds(value, MAX_ARGUMENTS_DEPTH):
            return None, _TOO_DEEP
        return dict(value), ""
    return None, f"the arguments must be a JSON object, got {type(value).__name__}"


def _str(item: Mapping[str, Any], key: str, what: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ConfigError(f"{what} has no {key!r} string", op=_OP)
    return value


def _openai_chat(response: Any) -> list[ToolCall]:
    message = response
    if isinstance(response, Mapping) and "choices" in response:
        choices = response["choices"]
        if not isinstance(choices, Sequence) or not choices:
            return []
        first = choices[0]
        message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise ConfigError("an OpenAI chat response needs choices[0].message", op=_OP)
    calls = []
    for item in message.get("tool_calls") or ():
        if not isinstance(item, Mapping):
            raise ConfigError("a tool_calls item is not an object", op=_OP)
        call_id = _str(item, "id", "a tool call")
        function = item.get("function")
        if item.get("type", "function") != "function" or not isinstance(function, Mapping):
            kind = item.get("type")
            calls.append(
                ToolCall(call_id, "", None, f"tool calls of type {kind!r} are not MCP tools")
            )
            continue
        arguments, problem = _json_arguments(function.get("arguments"))
        calls.append(
            ToolCall(call_id, _str(function, "name", "a function call"), arguments, problem)
        )
    return calls


def _openai_responses(response: Any) -> list[ToolCall]:
    items = response.get("output") if isinstance(response, Mapping) else response
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise ConfigError("a Responses API response needs an output list", op=_OP)
    calls = []
    for item in items:
        if not isinstance(item, Mapping) or item.get("type") != "function_call":
            continue
        arguments, problem = _json_arguments(item.get("arguments"))
        call_id = _str(item, "call_id", "a function_call item")
        calls.append(
            ToolCall(call_id, _str(item, "name", "a function_call item"), arguments, problem)
        )
    return calls


def _anthropic(response: Any) -> list[ToolCall]:
    blocks = response.get("content") if isinstance(response, Mapping) else response
    if not isinstance(blocks, Sequence) or isinstance(blocks, str | bytes):
        raise ConfigError("an Anthropic message needs a content list", op=_OP)
    calls = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "tool_use":
            continue
        arguments, problem = _object_arguments(block.get("input"))
        call_id = _str(block, "id", "a tool_use block")
        calls.append(ToolCall(call_id, _str(block, "name", "a tool_use block"), arguments, problem))
    return calls


def _gemini(response: Any) -> list[ToolCall]:
    content = response
    if isinstance(response, Mapping) and "candidates" in response:
        candidates = response["candidates"]
        if not isinstance(candidates, Sequence) or not candidates:
            return []
        first = candidates[0]
        content = first.get("content") if isinstance(first, Mapping) else None
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if parts is None and isinstance(content, Mapping):
        return []
    if not isinstance(parts, Sequence):
        raise ConfigError("a Gemini response needs candidates[0].content.parts", op=_OP)
    calls = []
    for part in parts:
        call = part.get("functionCall") if isinstance(part, Mapping) else None
        if call is None and isinstance(part, Mapping):
            call = part.get("function_call")
        if not isinstance(call, Mapping):
            continue
        arguments, problem = _object_arguments(call.get("args"))
        given_id = call.get("id")
        call_id = given_id if isinstance(given_id, str) else ""
        calls.append(
            ToolCall(call_id, _str(call, "name", "a functionCall part"), arguments, problem)
        )
    return calls


_FINDERS = {
    OPENAI_CHAT: _openai_chat,
    OPENAI_RESPONSES: _openai_responses,
    ANTHROPIC: _anthropic,
    GEMINI: _gemini,
}


def check_provider(provider: Any) -> str:
    """``provider`` if it is one of ``PROVIDERS``.

    Raises:
        ConfigError: it is not.
    """
    if provider not in _FINDERS:
        raise ConfigError(
            f"provider must be one of {', '.join(PROVIDERS)}; got {provider!r}", op=_OP
        )
    return str(provider)


_TITLES = {
    OPENAI_CHAT: "an OpenAI Chat Completions response",
    OPENAI_RESPONSES: "an OpenAI Responses API response",
    ANTHROPIC: "an Anthropic message",
    GEMINI: "a Gemini response",
}


def _item_shape(items: Sequence[Any]) -> tuple[str, str] | None:
    for item in items:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "tool_use":
            return ANTHROPIC, "a tool_use block"
        if item.get("type") == "function_call":
            return OPENAI_RESPONSES, "a function_call item"
        if "functionCall" in item or "function_call" in item:
            return GEMINI, "a functionCall part"
    return None


def shape_of(response: Any) -> tuple[str, str] | None:
    """The provider whose response ``response`` is shaped like, and the key that says so.

    Only marks no other provider uses count; None when nothing tells.
    """
    if isinstance(response, Mapping):
        kind = response.get("type")
        for key, provider in (
            ("choices", OPENAI_CHAT),
            ("tool_calls", OPENAI_CHAT),
            ("output", OPENAI_RESPONSES),
            ("candidates", GEMINI),
            ("parts", GEMINI),
            ("stop_reason", ANTHROPIC),
        ):
            if key in response:
                return provider, f"its {key!r} key"
        if kind == "message" and isinstance(response.get("content"), list):
            return ANTHROPIC, "type 'message' with a content list"
        content = response.get("content")
        if isinstance(content, list):
            return _item_shape(content)
        return None
    if isinstance(response, Sequence) and not isinstance(response, str | bytes):
        return _item_shape(response)
    return None


def find_tool_calls(response: Any, provider: str) -> list[ToolCall]:
    """The tool calls in ``response``, in order.

    Raises:
        ConfigError: ``provider`` is unknown, or ``response`` is not shaped
            like that provider's response (a call without its id, say, or
            another provider's response: the error names the shape seen).
    """
    provider = check_provider(provider)
    plain = _plain(response)
    seen = shape_of(plain)
    if seen is not None and seen[0] != provider:
        # Read as the wrong provider, a response has no tool calls at all, and
        # the model's calls would silently never run.
        raise ConfigError(
            f"the response looks like {_TITLES[seen[0]]} ({seen[1]}), not"
            f" {_TITLES[provider]}; pass provider={seen[0]!r}",
            op=_OP,
        )
    return _FINDERS[provider](plain)
