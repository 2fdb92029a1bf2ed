"""The per-request HTTP headers of the modern era (SEP-2243).

Computed above the transport and handed down with the bytes, so the HTTP
transports never parse JSON-RPC (DESIGN.md §7 "Lost sessions"). A call's own
headers (``Mcp-Name``, ``Mcp-Param-*``: :func:`call_headers`) are computed
when the call is prepared, from the catalog its arguments were checked
against, and travel down with the request (its MRTR rounds and a resend
carry the same ones); the session adds its era's (:class:`EraHeaders`).

* ``Mcp-Method``: the JSON-RPC method of every request.
* ``Mcp-Name``: ``params.name`` of ``tools/call`` and ``prompts/get``,
  ``params.uri`` of ``resources/read``.
* ``Mcp-Param-<Name>``: each tool argument whose input-schema property is
  annotated ``"x-mcp-header": "<Name>"``; strings as-is, integers in decimal,
  booleans as ``true``/``false``; absent or null → no header.

A value that cannot travel as a plain ASCII header value (non-ASCII,
control characters, leading/trailing whitespace) or that looks like the
sentinel itself is sent as ``=?base64?<Base64 of the UTF-8 bytes>?=``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from mcpclient._internal.wire.tasks import TASK_ID_KEY

__all__ = [
    "NAME_METHODS",
    "EraHeaders",
    "call_headers",
    "encode_header_value",
    "header_annotations",
    "request_headers",
]

_SENTINEL_OPEN = "=?base64?"
_SENTINEL_CLOSE = "?="
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_MAX_SAFE_INTEGER = 2**53 - 1
_NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (SEP-2663): load balancers route a task's requests by its id.
    "tasks/get": TASK_ID_KEY,
    "tasks/update": TASK_ID_KEY,
    "tasks/cancel": TASK_ID_KEY,
}
#: The methods whose requests name their target in ``Mcp-Name``.
NAME_METHODS = frozenset(_NAME_PARAMS)
# protocol.META_VERSION (not imported: the session layer below it uses this module).
_META_VERSION = "io.modelcontextprotocol/protocolVersion"


def encode_header_value(value: str) -> str:
    """``value`` as a header value, Base64-sentinel encoded when it must be."""
    plain = (
        value.isascii()
        and all(0x20 <= ord(ch) < 0x7F for ch in value)
        and value == value.strip(" \t")
        and not (value.startswith(_SENTINEL_OPEN) and value.endswith(_SENTINEL_CLOSE))
    )
    if plain:
        return value
    encoded = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
    return f"{_SENTINEL_OPEN}{encoded}{_SENTINEL_CLOSE}"


def header_annotations(schema: Any) -> dict[tuple[str, ...], str] | str:
    """The ``x-mcp-header`` annotations of an input schema: property → header name.

    Returns a reason (a str) when an annotation is invalid: the tool must
    then be dropped on HTTP transports. Only properties reached from the root
    through ``properties`` may be annotated, only string/integer/boolean
    ones, with non-empty token names unique case-insensitively.
    """
    found: dict[tuple[str, ...], str] = {}
    seen: set[str] = set()

    def visit(node: Any, path: tuple[str, ...], reachable: bool) -> str | None:
        if isinstance(node, list):
            for item in node:
                problem = visit(item, path, False)
                if problem:
                    return problem
            return None
        if not isinstance(node, dict):
            return None
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            if not reachable or not path:
                return "x-mcp-header is only allowed on properties reached through 'properties'"
            if not isinstance(name, str) or not name or not set(name) <= _TOKEN_CHARS:
                return "x-mcp-header must name a valid HTTP header token"
            if name.lower() in seen:
                return f"x-mcp-header {name!r} is used twice"
            kind = node.get("type")
            if kind not in ("string", "integer", "boolean"):
                return "x-mcp-header is only allowed on string, integer or boolean properties"
            seen.add(name.lower())
            found[path] = name
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    problem = visit(sub, (*path, prop), reachable)
                    if problem:
                        return problem
            elif key not in ("x-mcp-header", "enum", "const", "default", "examples"):
                problem = visit(value, path, False)
                if problem:
                    return problem
        return None

    problem = visit(schema, (), True)
    return problem if problem is not None else found


def _argument(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    param_headers: Mapping[tuple[str, ...], str] | None = None,
) -> dict[str, str]:
    """The modern headers for one request (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``)."""
    return {"Mcp-Method": method, **call_headers(method, params, param_headers=param_headers)}


def call_headers(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    param_headers: Mapping[tuple[str, ...], str] | None = None,
) -> dict[str, str]:
    """A call's own headers (``Mcp-Name``, ``Mcp-Param-*``), computed when it is prepared.

    ``param_headers``: the ``x-mcp-header`` annotations of the tool's input
    schema (:func:`header_annotations`), for ``tools/call``.
    """
    headers: dict[str, str] = {}
    key = _NAME_PARAMS.get(method)
    if key is not None and params is not None and isinstance(params.get(key), str):
        headers["Mcp-Name"] = encode_header_value(params[key])
    if param_headers and params is not None:
        arguments = params.get("arguments")
        if isinstance(arguments, Mapping):
            for path, name in param_headers.items():
                value = _argument(arguments, path)
                if value is None:
                    continue
                if isinstance(value, bool):
                    text = "true" if value else "false"
                elif isinstance(value, int):
                    if abs(value) > _MAX_SAFE_INTEGER:
                        continue
                    text = str(value)
                elif isinstance(value, str):
                    text = value
                else:
                    continue
                headers[f"Mcp-Param-{name}"] = encode_header_value(text)
    return headers


class EraHeaders:
    """The headers every message of one HTTP session carries in its era.

    Set on the session once the era is known (``RpcSession.era_headers``),
    and computed there from the message alone: the session never asks the
    client. Legacy (after ``initialize``): ``MCP-Protocol-Version`` on every
    message. Modern: ``MCP-Protocol-Version`` (the version the body's
    ``_meta`` names: a request re-sent at another version after -32022
    carries it in both) and ``Mcp-Method``, then the call's own headers
    (:func:`call_headers`), handed down with the request.
    """

    __slots__ = ("_fixed", "modern", "version")

    def __init__(self, version: str, *, modern: bool) -> None:
        self.version = version
        self.modern = modern
        self._fixed = {"MCP-Protocol-Version": version}

    def for_message(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        call: Mapping[str, str] | None,
    ) -> Mapping[str, str]:
        """The headers of one message; ``call``: its own (modern only, else ignored)."""
        if not self.modern:
            return self._fixed  # shared: transports read it, never change it
        meta = params.get("_meta") if params is not None else None
        sent = meta.get(_META_VERSION) if isinstance(meta, dict) else None
        headers = {
            "MCP-Protocol-Version": sent if isinstance(sent, str) else self.version,
            "Mcp-Method": method,
        }
        if call:
            headers.update(call)
        return headers
