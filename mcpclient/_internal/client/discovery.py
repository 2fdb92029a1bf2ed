"""Discovery: fetch every advertised family and build one catalog generation.

Discovery is all-or-nothing: it returns a complete :class:`Catalog` or
raises a classified error; nothing is published partially. A defective item
is dropped with a bounded warning; a defect that makes the whole offering
untrustworthy (a cursor loop, a duplicate name, an over-limit count, a bent
rule the profile does not permit) fails the generation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from mcpclient._internal.canonical import compact
from mcpclient._internal.checks import JSONText
from mcpclient._internal.client.connection import MethodNotFoundError
from mcpclient._internal.convert import json_depth
from mcpclient._internal.digest import catalog_digest, schema_digest
from mcpclient._internal.limits import bound, utf8_len
from mcpclient._internal.naming import assign_model_names
from mcpclient._internal.session.headers import header_annotations
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.wire.apps import tool_ui
from mcpclient.catalog import (
    Catalog,
    PromptArg,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolAnnotations,
    ToolSpec,
    ToolUI,
)
from mcpclient.compat import Profile, Tolerance
from mcpclient.definition import Limits
from mcpclient.errors import CatalogError, FailureClass, LimitExceededError, ProtocolError

__all__ = ["Fetch", "discover"]

#: ``fetch(method, params) -> result``: one list request within the discovery deadline.
Fetch = Callable[[str, dict[str, Any]], Any]

#: Converts one raw item (with its index) or drops it with a page warning.
Converter = Callable[[Any, int, "_Warnings"], Any]

MAX_IDENTIFIER_BYTES = 512
MAX_CURSOR_BYTES = 4096
MAX_PROMPT_ARGS = 64
MAX_CATALOG_WARNINGS = 64
MAX_PAGE_WARNINGS = 8
_SHORT = 1024


def _bad_identifier(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return "is missing or empty"
    if utf8_len(value) > MAX_IDENTIFIER_BYTES:
        return f"is longer than {MAX_IDENTIFIER_BYTES} bytes"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return "contains a control character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    return ""


class _Warnings:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.items: list[str] = []
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.items) < self.cap - 1:
            self.items.append(bound(text, 512))
        else:
            self.dropped += 1

    def extend(self, other: _Warnings) -> None:
        for item in other.items:
            self.add(item)
        self.dropped += other.dropped

    def result(self, what: str) -> tuple[str, ...]:
        if not self.dropped:
            return tuple(self.items)
        total = len(self.items) + self.dropped
        return (
            *self.items,
            f"{self.dropped} further {what} were discarded without their text"
            f" ({total} raised in all, over this client's {self.cap} warning cap)",
        )


def _schema_problem(schema: Any, limits: Limits) -> str:
    if schema is None:
        return "is missing"
    if not isinstance(schema, dict):
        return "is not a JSON object"
    try:
        size = utf8_len(compact(schema))
    except (TypeError, ValueError):
        return "is not valid JSON"
    if size > limits.max_schema_bytes:
        return f"is {size} bytes, over max_schema_bytes"
    if json_depth(schema, limits.max_schema_depth) > limits.max_schema_depth:
        return "nests deeper than max_schema_depth"
    return ""


def _tool_ui(meta: Any) -> ToolUI | None:
    """A tool's MCP Apps metadata (SEP-1865), or None."""
    fields = tool_ui(meta)
    return None if fields is None else ToolUI(**fields)


def _optional_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


class _Builder:
    def __init__(
        self, binding: str, limits: Limits, profile: Profile, *, header_params: bool = False
    ) -> None:
        self.binding = binding
        # x-mcp-header annotations matter (and are validated) on modern HTTP only.
        self.header_params = header_params
        self.limits = limits
        self.profile = profile
        self.warnings = _Warnings(MAX_CATALOG_WARNINGS)
        self.applied: set[Tolerance] = set()

    def text(self, raw: Mapping[str, Any], key: str, limit: int | None = None) -> str:
        value = raw.get(key)
        return (
            bound(value, limit or self.limits.max_text_result_bytes)
            if isinstance(value, str)
            else ""
        )

    def missing_method(self, method: str, declared: str) -> None:
        """The server declares ``declared`` but answered ``method`` with -32601.

        Raises:
            CatalogError: the profile does not permit ``missing_list_method``.
        """
        if not self.profile.permits(Tolerance.MISSING_LIST_METHOD):
            raise CatalogError(
                f"the server declares {declared} but does not implement {method} (-32601),"
                f" and profile {self.profile} does not permit missing_list_method",
                binding=self.binding,
                op="discover",
            )
        self.applied.add(Tolerance.MISSING_LIST_METHOD)
        self.warnings.add(
            f"{method}: the server declares {declared} but does not implement this method"
            " (-32601); the listing is taken as empty"
        )

    # -- per-item conversion (drop with a warning) ------------------------

    def tool(self, raw: Any, index: int, page: _Warnings) -> dict[str, Any] | None:
        if not isinstance(raw, Mapping):
            page.add(f"tool {index} dropped: not an object")
            return None
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            page.add(f"tool {index} dropped: it has no name")
            return None
        problem = _schema_problem(raw.get("inputSchema"), self.limits)
        if problem:
            page.add(f"tool {index} dropped: its input schema {problem}")
            return None
        if self.header_params:
            header_params = header_annotations(raw["inputSchema"])
            if isinstance(header_params, str):
                page.add(f"tool {index} dropped: {header_params}")
                return None
        warnings: list[str] = []
        output = raw.get("outputSchema")
        if output is not None:
            out_problem = _schema_problem(output, self.limits)
            if out_problem:
                if not self.profile.permits(Tolerance.INVALID_OUTPUT_SCHEMA):
                    raise CatalogError(
                        f"tool {bound(name, 64)!r} has an output schema that {out_problem}, and"
                        f" profile {self.profile} does not permit invalid_output_schema",
                        binding=self.binding,
                        op="discover",
                    )
                self.applied.add(Tolerance.INVALID_OUTPUT_SCHEMA)
                warnings.append(f"output schema dropped: it {out_problem}")
                output = None
        annotations = raw.get("annotations")
        spec_annotations = None
        if isinstance(annotations, Mapping):
            spec_annotations = ToolAnnotations(
                title=self.text(annotations, "title", _SHORT),
                read_only_hint=annotations.get("readOnlyHint") is True,
                idempotent_hint=annotations.get("idempotentHint") is True,
                destructive_hint=_optional_bool(annotations.get("destructiveHint")),
                open_world_hint=_optional_bool(annotations.get("openWorldHint")),
            )
        title = self.text(raw, "title", _SHORT) or (
            spec_annotations.title if spec_annotations else ""
        )
        extras = {}
        for key, field in (("icons", "icons"), ("execution", "execution"), ("_meta", "meta")):
            value = raw.get(key)
            if isinstance(value, dict | list):
                try:
                    text = compact(value)
                except (TypeError, ValueError):
                    continue  # metadata is passed through when it can be, never fatal
                if len(text) <= 16 * 1024:
                    extras[field] = JSONText(text)
        return {
            "raw_name": name,
            "title": title,
            "description": self.text(raw, "description"),
            "input_schema": raw["inputSchema"],
            "output_schema": output,
            "annotations": spec_annotations,
            "warnings": tuple(warnings),
            "ui": _tool_ui(raw.get("_meta")),
            **extras,
        }

    def prompt(self, raw: Any, index: int, page: _Warnings) -> PromptSpec | None:
        if not isinstance(raw, Mapping):
            page.add(f"prompt {index} dropped: not an object")
            return None
        name = raw.get("name")
        if (
            not isinstance(name, str)
            or not name
            or utf8_len(name) > self.limits.max_text_result_bytes
        ):
            page.add(f"prompt {index} dropped: its name is missing or too long")
            return None
        args_raw = raw.get("arguments") or []
        if not isinstance(args_raw, list) or len(args_raw) > MAX_PROMPT_ARGS:
            page.add(f"prompt {index} dropped: more than {MAX_PROMPT_ARGS} arguments or malformed")
            return None
        args = []
        for arg in args_raw:
            arg_name = arg.get("name") if isinstance(arg, Mapping) else None
            if not isinstance(arg_name, str) or not arg_name or utf8_len(arg_name) > _SHORT:
                page.add(f"prompt {index} dropped: an argument has no valid name")
                return None
            args.append(
                PromptArg(
                    name=arg_name,
                    title=self.text(arg, "title", _SHORT),
                    description=self.text(arg, "description"),
                    required=arg.get("required") is True,
                )
            )
        return PromptSpec(
            name=name,
            title=self.text(raw, "title", _SHORT),
            description=self.text(raw, "description"),
            arguments=tuple(args),
        )

    def resource(self, raw: Any, index: int, page: _Warnings) -> ResourceSpec | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("uri"), str) or not raw["uri"]:
            page.add(f"resource {index} dropped: it has no uri")
            return None
        if utf8_len(raw["uri"]) > self.limits.max_text_result_bytes:
            page.add(f"resource {index} dropped: its uri is too long")
            return None
        return ResourceSpec(
            uri=raw["uri"],
            name=self.text(raw, "name", _SHORT),
            title=self.text(raw, "title", _SHORT),
            description=self.text(raw, "description"),
            mime_type=self.text(raw, "mimeType", _SHORT),
        )

    def template(self, raw: Any, index: int, page: _Warnings) -> ResourceTemplateSpec | None:
        uri = raw.get("uriTemplate") if isinstance(raw, Mapping) else None
        if not isinstance(uri, str) or not uri or utf8_len(uri) > self.limits.max_text_result_bytes:
            page.add(f"resource template {index} dropped: it has no valid uriTemplate")
            return None
        return ResourceTemplateSpec(
            uri_template=uri,
            name=self.text(raw, "name", _SHORT),
            title=self.text(raw, "title", _SHORT),
            description=self.text(raw, "description"),
            mime_type=self.text(raw, "mimeType", _SHORT),
        )


def _paginate(
    fetch: Fetch,
    method: str,
    key: str,
    *,
    cap: int,
    convert: Converter,
    builder: _Builder,
    declared: str,
) -> list[Any]:
    limits, binding = builder.limits, builder.binding
    items: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    index = 0
    for page_number in range(limits.max_catalog_pages + 1):
        if page_number == limits.max_catalog_pages:
            raise LimitExceededError(
                f"{method} needed more than max_catalog_pages ({limits.max_catalog_pages}) pages",
                failure_class=FailureClass.CATALOG_OVER_LIMIT,
                binding=binding,
                op="discover",
            )
        try:
            result = fetch(method, {} if cursor is None else {"cursor": cursor})
        except MethodNotFoundError:
            # Only a first page can say "not implemented": a server that
            # served a page has the method, and a later -32601 is a failure.
            if page_number:
                raise
            builder.missing_method(method, declared)
            return []
        if not isinstance(result, Mapping) or not isinstance(result.get(key), list):
            raise ProtocolError(f"{method} returned no {key} list", binding=binding, op="discover")
        page_raw = result[key]
        page = _Warnings(MAX_PAGE_WARNINGS)
        for raw in page_raw:
            converted = convert(raw, index, page)
            index += 1
            if converted is None:
                continue
            if len(items) >= cap:
                raise LimitExceededError(
                    f"{method} offered more than the {cap} items this binding accepts",
                    failure_class=FailureClass.CATALOG_OVER_LIMIT,
                    binding=binding,
                    op="discover",
                )
            items.append(converted)
        builder.warnings.extend(page)
        next_cursor = result.get("nextCursor")
        if next_cursor is None or next_cursor == "":
            return items
        if not isinstance(next_cursor, str) or utf8_len(next_cursor) > MAX_CURSOR_BYTES:
            raise CatalogError(
                f"{method} returned a cursor that is not a string of at most"
                f" {MAX_CURSOR_BYTES} bytes",
                binding=binding,
                op="discover",
            )
        if next_cursor in seen:
            raise CatalogError(
                f"{method} returned a pagination cursor it already served; the listing does not"
                " terminate",
                binding=binding,
                op="discover",
            )
        seen.add(next_cursor)
        cursor = next_cursor
    return items  # pragma: no cover - the loop returns or raises


def _unique(binding: str, what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        problem = _bad_identifier(name)
        if problem:
            raise CatalogError(f"a {what} identifier {problem}", binding=binding, op="discover")
        if name in seen:
            raise CatalogError(
                f"the server lists {what} {bound(name, 64)!r} twice", binding=binding, op="discover"
            )
        seen.add(name)


def discover(
    fetch: Fetch,
    *,
    binding: str,
    generation: int,
    protocol: Protocol,
    limits: Limits,
    profile: Profile,
    http: bool = False,
) -> Catalog:
    """Fetch every advertised family and build generation ``generation``.

    With ``http`` (a Streamable HTTP transport), tools whose ``x-mcp-header``
    annotations are invalid are dropped with a warning; on stdio the
    annotation is ignored.

    A declared family whose list method answers -32601 is empty, with a
    warning, when the profile permits ``missing_list_method``.

    Raises:
        LimitExceededError: ``catalog_over_limit``.
        CatalogError: ``catalog_invalid`` (also a missing list method the
            profile does not tolerate).
        ProtocolError: a malformed list result, or a list request that failed.
    """
    builder = _Builder(binding, limits, profile, header_params=http and protocol.modern)
    caps = protocol.capabilities
    tools_raw: list[dict[str, Any]] = []
    prompts: list[PromptSpec] = []
    resources: list[ResourceSpec] = []
    templates: list[ResourceTemplateSpec] = []

    def fetch_all(method: str, key: str, cap: int, convert: Converter, declared: str) -> list[Any]:
        return _paginate(
            fetch, method, key, cap=cap, convert=convert, builder=builder, declared=declared
        )

    if caps.tools:
        tools_raw = fetch_all(
            "tools/list", "tools", limits.max_catalog_items, builder.tool, "tools"
        )
    if caps.prompts:
        prompts = fetch_all(
            "prompts/list", "prompts", limits.max_prompt_count, builder.prompt, "prompts"
        )
    if caps.resources:
        resources = fetch_all(
            "resources/list", "resources", limits.max_resource_count, builder.resource, "resources"
        )
        templates = fetch_all(
            "resources/templates/list",
            "resourceTemplates",
            limits.max_resource_count,
            builder.template,
            "resources",
        )

    _unique(binding, "tool", [t["raw_name"] for t in tools_raw])
    _unique(binding, "prompt", [p.name for p in prompts])
    _unique(binding, "resource", [r.uri for r in resources])
    _unique(binding, "resource template", [t.uri_template for t in templates])

    tools_raw.sort(key=lambda t: t["raw_name"].encode("utf-8"))
    prompts.sort(key=lambda p: p.name.encode("utf-8"))
    resources.sort(key=lambda r: r.uri.encode("utf-8"))
    templates.sort(key=lambda t: t.uri_template.encode("utf-8"))

    try:
        names = assign_model_names(binding, [t["raw_name"] for t in tools_raw])
    except ValueError as exc:
        raise CatalogError(
            f"tool names cannot be made unique: {exc}", binding=binding, op="discover"
        ) from None
    if names.lossy:
        if not profile.permits(Tolerance.DISPLAY_NAME_NORMALIZATION):
            example = sorted(names.lossy)[0]
            raise CatalogError(
                f"tool {bound(example, 64)!r} needs its name normalized for models, and profile"
                f" {profile} does not permit display_name_normalization",
                binding=binding,
                op="discover",
            )
        builder.applied.add(Tolerance.DISPLAY_NAME_NORMALIZATION)

    tools = []
    for raw in tools_raw:
        output = raw["output_schema"]
        tools.append(
            ToolSpec(
                model_name=names.by_raw[raw["raw_name"]],
                input_schema_digest=schema_digest(raw["input_schema"]).hex(),
                output_schema_digest=schema_digest(output).hex() if output is not None else "",
                **raw,
            )
        )
    applied = tuple(sorted(builder.applied))
    for tolerance in applied:
        builder.warnings.add(f"compatibility: applied tolerance {tolerance}")
    draft = Catalog(
        binding=binding,
        generation=generation,
        protocol_version=protocol.version,
        server=protocol.server,
        capabilities=caps,
        instructions=protocol.instructions,
        tools=tuple(tools),
        prompts=tuple(prompts),
        resources=tuple(resources),
        resource_templates=tuple(templates),
        warnings=builder.warnings.result("warning(s)"),
        applied_tolerances=applied,
    )
    return _with_digest(draft)


def _with_digest(catalog: Catalog) -> Catalog:
    return attrs.evolve(catalog, digest=catalog_digest(catalog))
