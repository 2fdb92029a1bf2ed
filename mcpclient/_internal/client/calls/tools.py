"""Tool calls: the local checks before sending, and result validation after.

Every local refusal (filter, unknown tool, invalid
arguments) happens on the caller's thread before anything is sent, so
``submit_tool_call`` can raise it synchronously. On an HTTP binding the
call's own headers (``Mcp-Name``, ``Mcp-Param-*``) are computed here too, from
the tool as the catalog it was checked against describes it, and travel down
with the request (its MRTR rounds and a resend included).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import attrs

from mcpclient._core import jsonio
from mcpclient._core.limits import bound
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.session.headers import call_headers, header_annotations
from mcpclient._internal.session.rpc import JSONArguments
from mcpclient.catalog import Catalog, ToolSpec
from mcpclient.content import ToolResult
from mcpclient.definition import ToolFilter
from mcpclient.errors import (
    ConfigError,
    InvalidArgumentsError,
    ToolUnavailableError,
)

__all__ = ["HeaderParams", "PreparedCall", "check_structured", "prepare_tool_call"]

#: The ``x-mcp-header`` annotations of input schemas, by schema digest (a
#: binding's cache; filled without a lock: a race computes the same value twice).
HeaderParams = dict[str, Mapping[tuple[str, ...], str]]


class PreparedCall:
    """A tool call that passed every local check; never changed once made.

    A plain slotted class, not an attrs value: one is made per call, and
    attrs' generated ``__init__`` costs twice as much for nothing here.
    """

    __slots__ = ("headers", "params", "spec", "warnings")

    def __init__(
        self,
        params: dict[str, Any],
        spec: ToolSpec,
        warnings: list[str],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.params = params
        self.spec = spec
        self.warnings = warnings
        #: Its own HTTP headers (``Mcp-Name``, ``Mcp-Param-*``); None off HTTP.
        self.headers = headers


def prepare_tool_call(
    raw_name: str,
    arguments: Mapping[str, Any] | None,
    *,
    binding: str,
    tool_filter: ToolFilter,
    adopted: Catalog,
    schemas: SchemaCache,
    header_params: HeaderParams | None = None,
) -> PreparedCall:
    """Every local check of a tool call, on the caller's thread, before anything is sent.

    ``header_params`` (HTTP bindings only): the binding's annotation cache;
    with it the call's own headers are computed from ``adopted``'s tool.

    Raises:
        ToolUnavailableError, ProtocolError (unsupported_protocol),
        InvalidArgumentsError, ConfigError.
    """
    if not isinstance(raw_name, str):
        raise ConfigError("call_tool raw_name must be a str", binding=binding, op="call_tool")
    if not tool_filter.permits(raw_name):
        raise ToolUnavailableError(
            f"tool {bound(raw_name, 64)!r} is not permitted by this binding's tool filter",
            binding=binding,
            op="call_tool",
        )
    spec = adopted.tool_by_raw_name(raw_name)
    if spec is None:
        raise ToolUnavailableError(
            f"tool {bound(raw_name, 64)!r} is not in the adopted catalog",
            binding=binding,
            op="call_tool",
        )
    if arguments is None:
        arguments = {}
    # type() first: a plain dict (the usual case) skips the slower ABC check;
    # map() checks the keys without a Python frame per key.
    if (type(arguments) is not dict and not isinstance(arguments, Mapping)) or not all(
        map(isinstance, arguments, itertools.repeat(str))
    ):
        raise InvalidArgumentsError(
            "tool arguments must be a mapping with string keys", binding=binding, op="call_tool"
        )
    arguments = JSONArguments(arguments)  # a Mapping of any kind; also our own copy to send
    try:
        # Encoded once, here: this checks that they are JSON, and the session
        # sends these very bytes (the arguments that are validated below).
        arguments.encoded = jsonio.encode(arguments)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentsError(
            f"tool arguments are not representable as JSON: {exc}", binding=binding, op="call_tool"
        ) from None
    warnings: list[str] = []
    validator = schemas.get(spec.input_schema_digest, lambda: spec.input_schema)
    if isinstance(validator, str):
        warnings.append(f"arguments were not validated client-side: {validator}")
    else:
        problem = validator.check(arguments)
        if problem is not None:
            arguments = _without_optional_nulls(arguments, spec.input_schema, warnings)
            if arguments is None or validator.check(arguments) is not None:
                raise InvalidArgumentsError(
                    f"arguments for tool {bound(raw_name, 64)!r} fail its input schema"
                    f" at {problem}",
                    binding=binding,
                    op="call_tool",
                )
    params = {"name": raw_name, "arguments": arguments}
    if header_params is None:
        return PreparedCall(params, spec, warnings)
    annotations = header_params.get(spec.input_schema_digest)
    if annotations is None:
        found = header_annotations(spec.input_schema)
        # An invalid annotation dropped the tool from a modern catalog; a
        # legacy one keeps it, and legacy sends no call headers anyway.
        annotations = found if isinstance(found, dict) else {}
        header_params[spec.input_schema_digest] = annotations
    headers = call_headers("tools/call", params, param_headers=annotations)
    return PreparedCall(params, spec, warnings, headers)


def _without_optional_nulls(
    arguments: JSONArguments, schema: Any, warnings: list[str]
) -> JSONArguments | None:
    """The arguments without ``None`` for optional properties, or None if none was dropped.

    Models (and Python callers) write ``null`` for an optional argument they
    mean to leave out; a schema that does not admit null would refuse the call.
    Only after the arguments failed as given, and only top-level properties
    the schema does not require, are such nulls read as "not given" (with a
    warning on the result). A schema that admits null keeps them: it passed.
    """
    required = schema.get("required", ()) if isinstance(schema, dict) else ()
    required = required if isinstance(required, list) else ()
    dropped = [k for k, v in arguments.items() if v is None and k not in required]
    if not dropped:
        return None
    kept = JSONArguments({k: v for k, v in arguments.items() if k not in dropped})
    try:
        kept.encoded = jsonio.encode(kept)
    except (TypeError, ValueError):  # pragma: no cover - a subset of JSON is JSON
        return None
    names = ", ".join(bound(k, 64) for k in sorted(dropped)[:8])
    warnings.append(f"optional arguments given as null were omitted: {names}")
    return kept


def check_structured(
    prepared: PreparedCall, result: ToolResult, schemas: SchemaCache
) -> ToolResult:
    """Validate structured content against the output schema; add the call's warnings.

    A mismatch does not throw away a call that ran: the result comes back
    with ``structured=None`` and a warning naming the mismatch.
    """
    warnings = list(prepared.warnings)
    spec = prepared.spec
    if spec.output_schema_digest and not result.is_error and result.structured is not None:
        validator = schemas.get(spec.output_schema_digest, lambda: spec.output_schema)
        if isinstance(validator, str):
            warnings.append(f"structured content was not validated: {validator}")
        else:
            problem = validator.check(result.structured)
            if problem is not None:
                warnings.append(
                    f"structured content dropped: it fails the output schema at {problem}"
                )
                result = attrs.evolve(result, structured=None)
    if warnings:
        result = attrs.evolve(result, warnings=(*result.warnings, *warnings))
    return result
