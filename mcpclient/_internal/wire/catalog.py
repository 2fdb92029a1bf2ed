"""Catalog items: tool, prompt, resource and template specs, and the list pages that carry them.

A list page's items are structured by the converter into drafts whose every
field a hook has bounded; an item a hook finds defective is dropped with a
page warning (``"tool 3 dropped: ..."``), never failing the page. Policy
(tolerances, uniqueness, model names, the catalog's own limits) stays with
discovery; this module only reads the wire.

Each schema is serialized once: its compact canonical text is measured
(size, then depth), stored on the spec, and keys the discovery's memo of
JCS digests, so identical schemas (a catalog of 10,000 ``{"type": "object"}``
tools) are digested once. Specs are built from the checked drafts without
re-running their validators (:mod:`.trusted`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import cattrs
from cattrs.gen import override

from mcpclient._core.canonical import as_read, compact_decoded
from mcpclient._core.checks import JSONText
from mcpclient._core.digest import schema_digest
from mcpclient._core.limits import utf8_len
from mcpclient._internal.wire.apps import tool_ui
from mcpclient._internal.wire.converter import Bounds, converter_for, hooks, record
from mcpclient._internal.wire.state import (
    MAX_SHORT_BYTES,
    Call,
    Warnings,
    current,
    enter,
    flag,
    json_depth,
    leave,
    optional_flag,
    passthrough,
    raw,
    text,
)
from mcpclient._internal.wire.trusted import trusted
from mcpclient.catalog import (
    PromptArg,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolAnnotations,
    ToolSpec,
    ToolUI,
)
from mcpclient.definition import Limits

__all__ = [
    "FAMILIES",
    "MAX_PROMPT_ARGS",
    "PROMPTS",
    "RESOURCES",
    "TEMPLATES",
    "TOOLS",
    "Family",
    "Lister",
    "Schema",
    "ToolDraft",
    "next_cursor",
    "page_items",
]

MAX_PROMPT_ARGS = 64


@attrs.frozen
class Family:
    """One paginated catalog family: its list method, its result key, its item's name."""

    method: str
    key: str
    item: str
    declared: str  # the capability that advertises it


TOOLS = Family("tools/list", "tools", "tool", "tools")
PROMPTS = Family("prompts/list", "prompts", "prompt", "prompts")
RESOURCES = Family("resources/list", "resources", "resource", "resources")
TEMPLATES = Family(
    "resources/templates/list", "resourceTemplates", "resource template", "resources"
)
FAMILIES = (TOOLS, PROMPTS, RESOURCES, TEMPLATES)


def page_items(result: Any, family: Family) -> list[Any] | None:
    """The raw items of one list page, or ``None`` when the result has no such list."""
    if not isinstance(result, Mapping):
        return None
    items = result.get(family.key)
    return items if isinstance(items, list) else None


def next_cursor(result: Mapping[str, Any]) -> Any:
    """The page's raw next cursor (``None`` when absent)."""
    return result.get("nextCursor")


@attrs.define(slots=True)
class Schema:
    """A schema as read: the decoded value, its canonical text, digest, or its defect.

    One discovery shares one :class:`Schema` among all equal schemas: read only.
    """

    value: Any = None
    text: JSONText | None = None
    digest: str = ""
    problem: str = ""


_MISSING = Schema(problem="is missing")


@attrs.define(slots=True)
class ToolDraft:
    """A tool as read from the wire, every field bounded; discovery names and finishes it."""

    name: str = ""
    input_schema: Schema = _MISSING
    output_schema: Schema | None = None
    annotations: ToolAnnotations | None = None
    title: str = ""
    description: str = ""
    icons: JSONText | None = None
    execution: JSONText | None = None
    meta: JSONText | None = None
    #: Its MCP Apps metadata (SEP-1865), read from the same ``_meta``.
    ui: ToolUI | None = None
    #: Set by discovery's rules, not read from the wire.
    warnings: tuple[str, ...] = ()

    def finish(self, model_name: str) -> ToolSpec:
        """The :class:`ToolSpec` named ``model_name``."""
        out = self.output_schema
        return _tool_spec(
            raw_name=self.name,
            model_name=model_name,
            title=self.title or (self.annotations.title if self.annotations else ""),
            description=self.description,
            input_schema=self.input_schema.text,
            output_schema=out.text if out is not None else None,
            input_schema_digest=self.input_schema.digest,
            output_schema_digest=out.digest if out is not None else "",
            annotations=self.annotations,
            warnings=self.warnings,
            icons=self.icons,
            execution=self.execution,
            meta=self.meta,
            ui=self.ui,
        )


@attrs.define(slots=True)
class _PromptArg:
    name: Any = None
    title: str = ""
    description: str = ""
    required: bool = False


@attrs.define(slots=True)
class _Prompt:
    name: Any = None
    title: str = ""
    description: str = ""
    arguments: Any = None


@attrs.define(slots=True)
class _Resource:
    uri: Any = None
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""


@attrs.define(slots=True)
class _Template:
    uri_template: Any = None
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""


_tool_spec = trusted(ToolSpec)
_prompt_spec = trusted(PromptSpec)
_prompt_arg = trusted(PromptArg)
_resource_spec = trusted(ResourceSpec)
_template_spec = trusted(ResourceTemplateSpec)


@hooks
def _register(conv: cattrs.Converter, limits: Bounds) -> None:
    short = text(MAX_SHORT_BYTES)
    long = text(limits.max_text_result_bytes)

    def schema(value: Any, _: Any) -> Schema:
        if value is None:
            return _MISSING
        if not isinstance(value, dict):
            return Schema(value, problem="is not a JSON object")
        # Equal text is an equal schema: read once, shared (never mutated). The
        # text as read finds a schema seen before in the same key order (the
        # usual case: one server writes its schemas one way) without sorting
        # its keys; the canonical text then finds it in any other order.
        memo = current().digests
        try:
            read = as_read(value)
            known: Schema | None = memo.get(read)
            if known is not None:
                return known
            text = compact_decoded(value)
        except (TypeError, ValueError, RecursionError):
            return Schema(value, problem="is not valid JSON")
        known = memo.get(text)
        if known is None:
            problem, digest = _measure(value, text, limits)
            known = memo[text] = Schema(value, JSONText(text), digest, problem)
        memo[read] = known
        return known

    tool_annotations = record(
        conv,
        ToolAnnotations,
        title=override(struct_hook=short),
        read_only_hint=override(rename="readOnlyHint", struct_hook=flag),
        idempotent_hint=override(rename="idempotentHint", struct_hook=flag),
        destructive_hint=override(rename="destructiveHint", struct_hook=optional_flag),
        open_world_hint=override(rename="openWorldHint", struct_hook=optional_flag),
    )

    def annotations(value: Any, _: Any) -> ToolAnnotations | None:
        return tool_annotations(value, ToolAnnotations) if isinstance(value, Mapping) else None

    def extra(value: Any, _: Any) -> JSONText | None:
        return passthrough(value, (dict, list))

    def ui(value: Any, _: Any) -> ToolUI | None:
        fields = tool_ui(value)
        return None if fields is None else ToolUI(**fields)

    record(
        conv,
        ToolDraft,
        name=override(struct_hook=text()),
        input_schema=override(rename="inputSchema", struct_hook=schema),
        output_schema=override(
            rename="outputSchema", struct_hook=lambda v, t: None if v is None else schema(v, t)
        ),
        annotations=override(struct_hook=annotations),
        title=override(struct_hook=short),
        description=override(struct_hook=long),
        icons=override(struct_hook=extra),
        execution=override(struct_hook=extra),
        meta=override(rename="_meta", struct_hook=extra),
        ui=override(rename="_meta", struct_hook=ui),
        warnings=override(omit=True),
    )
    record(
        conv,
        _PromptArg,
        name=override(struct_hook=raw),
        title=override(struct_hook=short),
        description=override(struct_hook=long),
        required=override(struct_hook=flag),
    )
    record(
        conv,
        _Prompt,
        name=override(struct_hook=raw),
        title=override(struct_hook=short),
        description=override(struct_hook=long),
        arguments=override(struct_hook=raw),
    )
    for cls, key, field in ((_Resource, "uri", "uri"), (_Template, "uriTemplate", "uri_template")):
        record(
            conv,
            cls,
            **{field: override(rename=key, struct_hook=raw)},
            name=override(struct_hook=short),
            title=override(struct_hook=short),
            description=override(struct_hook=long),
            mime_type=override(rename="mimeType", struct_hook=short),
        )


def _measure(value: dict[str, Any], text: str, limits: Bounds) -> tuple[str, str]:
    """A schema's defect (or "") and its digest, from its canonical text (measured once)."""
    size = utf8_len(text)
    if size > limits.max_schema_bytes:
        return f"is {size} bytes, over max_schema_bytes", ""
    if json_depth(value, limits.max_schema_depth) > limits.max_schema_depth:
        return "nests deeper than max_schema_depth", ""
    try:
        return "", schema_digest(value).hex()
    except ValueError:
        return "has no canonical JSON form", ""


class Lister:
    """One discovery's conversions: the converter for its limits and its digest memo.

    Thread safety: one discovery, on one thread.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        conv = converter_for(limits)
        self._call = Call(limits, Warnings(1))
        self._tool = conv.get_structure_hook(ToolDraft)
        self._prompt = conv.get_structure_hook(_Prompt)
        self._arg = conv.get_structure_hook(_PromptArg)
        self._resource = conv.get_structure_hook(_Resource)
        self._template = conv.get_structure_hook(_Template)
        self._convert: dict[Family, Callable[[Any, int, Warnings], Any]] = {
            TOOLS: self._tool_item,
            PROMPTS: self._prompt_item,
            RESOURCES: self._resource_item,
            TEMPLATES: self._template_item,
        }

    def items(
        self,
        family: Family,
        raw_items: list[Any],
        first: int,
        page: Warnings,
        accept: Callable[[Any, int], None],
    ) -> None:
        """Structure one page's items (numbered from ``first``), in order.

        A defective item is dropped with a warning on ``page``; each other one
        (a :class:`ToolDraft` for a tool, the spec otherwise) goes to
        ``accept(item, index)`` before the next is read, so discovery's rules
        apply in the server's order.
        """
        convert = self._convert[family]
        token = enter(self._call)
        try:
            for index, raw in enumerate(raw_items, first):
                item = convert(raw, index, page)
                if item is not None:
                    accept(item, index)
        finally:
            leave(token)

    def _tool_item(self, raw: Any, index: int, page: Warnings) -> ToolDraft | None:
        # type() first: a decoded object is a dict, and the ABC check costs more.
        if type(raw) is not dict and not isinstance(raw, Mapping):
            page.add(f"tool {index} dropped: not an object")
            return None
        draft: ToolDraft = self._tool(raw, ToolDraft)
        if not draft.name:
            page.add(f"tool {index} dropped: it has no name")
            return None
        if draft.input_schema.problem:
            page.add(f"tool {index} dropped: its input schema {draft.input_schema.problem}")
            return None
        return draft

    def _prompt_item(self, raw: Any, index: int, page: Warnings) -> PromptSpec | None:
        if not isinstance(raw, Mapping):
            page.add(f"prompt {index} dropped: not an object")
            return None
        rec: _Prompt = self._prompt(raw, _Prompt)
        name = rec.name
        if (
            not isinstance(name, str)
            or not name
            or utf8_len(name) > self.limits.max_text_result_bytes
        ):
            page.add(f"prompt {index} dropped: its name is missing or too long")
            return None
        args_raw = rec.arguments or []
        if not isinstance(args_raw, list) or len(args_raw) > MAX_PROMPT_ARGS:
            page.add(f"prompt {index} dropped: more than {MAX_PROMPT_ARGS} arguments or malformed")
            return None
        args = []
        for arg in args_raw:
            arg_rec: _PromptArg | None = (
                self._arg(arg, _PromptArg) if isinstance(arg, Mapping) else None
            )
            arg_name = arg_rec.name if arg_rec is not None else None
            if (
                arg_rec is None
                or not isinstance(arg_name, str)
                or not arg_name
                or utf8_len(arg_name) > MAX_SHORT_BYTES
            ):
                page.add(f"prompt {index} dropped: an argument has no valid name")
                return None
            args.append(
                _prompt_arg(
                    name=arg_name,
                    title=arg_rec.title,
                    description=arg_rec.description,
                    required=arg_rec.required,
                )
            )
        return _prompt_spec(
            name=name, title=rec.title, description=rec.description, arguments=tuple(args)
        )

    def _resource_item(self, raw: Any, index: int, page: Warnings) -> ResourceSpec | None:
        rec: _Resource | None = self._resource(raw, _Resource) if isinstance(raw, Mapping) else None
        if rec is None or not isinstance(rec.uri, str) or not rec.uri:
            page.add(f"resource {index} dropped: it has no uri")
            return None
        if utf8_len(rec.uri) > self.limits.max_text_result_bytes:
            page.add(f"resource {index} dropped: its uri is too long")
            return None
        return _resource_spec(
            uri=rec.uri,
            name=rec.name,
            title=rec.title,
            description=rec.description,
            mime_type=rec.mime_type,
        )

    def _template_item(self, raw: Any, index: int, page: Warnings) -> ResourceTemplateSpec | None:
        rec: _Template | None = self._template(raw, _Template) if isinstance(raw, Mapping) else None
        uri = rec.uri_template if rec is not None else None
        if (
            rec is None
            or not isinstance(uri, str)
            or not uri
            or utf8_len(uri) > self.limits.max_text_result_bytes
        ):
            page.add(f"resource template {index} dropped: it has no valid uriTemplate")
            return None
        return _template_spec(
            uri_template=uri,
            name=rec.name,
            title=rec.title,
            description=rec.description,
            mime_type=rec.mime_type,
        )
