"""Discovery: fetch every advertised family and build one catalog generation.

Discovery is all-or-nothing: it returns a complete :class:`Catalog` or
raises a classified error; nothing is published partially. A defective item
is dropped with a bounded warning; a defect that makes the whole offering
untrustworthy (a cursor loop, a duplicate name, an over-limit count, a bent
rule the profile does not permit) fails the generation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs

from mcpclient._core.digest import catalog_digest
from mcpclient._core.limits import bound, utf8_len
from mcpclient._core.naming import assign_model_names
from mcpclient._internal.client.lifecycle.connection import MethodNotFoundError
from mcpclient._internal.session.headers import header_annotations
from mcpclient._internal.session.protocol import Protocol
from mcpclient._internal.wire.catalog import (
    PROMPTS,
    RESOURCES,
    TEMPLATES,
    TOOLS,
    Family,
    Lister,
    ToolDraft,
    next_cursor,
    page_items,
)
from mcpclient._internal.wire.state import Warnings
from mcpclient.catalog import (
    Catalog,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ServerCapabilities,
    ServerIdentity,
    ToolSpec,
)
from mcpclient.compat import Profile, Tolerance
from mcpclient.definition import Limits
from mcpclient.errors import CatalogError, FailureClass, LimitExceededError, ProtocolError

__all__ = ["Fetch", "Start", "discover"]

#: ``fetch(method, params) -> result``: one list request within the discovery deadline.
Fetch = Callable[[str, dict[str, Any]], Any]
#: ``start(method, params) -> page``: send a list request now; ``page()`` is its result.
Start = Callable[[str, dict[str, Any]], Callable[[], Any]]

MAX_IDENTIFIER_BYTES = 512
MAX_CURSOR_BYTES = 4096
MAX_CATALOG_WARNINGS = 64
MAX_PAGE_WARNINGS = 8
_WARNING_BYTES = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _bad_identifier(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return "is missing or empty"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        size = utf8_len(value)
        if size > MAX_IDENTIFIER_BYTES:
            return f"is longer than {MAX_IDENTIFIER_BYTES} bytes"
        if _CONTROL.search(value):
            return "contains a control character"
        return "is not valid UTF-8"
    if size > MAX_IDENTIFIER_BYTES:
        return f"is longer than {MAX_IDENTIFIER_BYTES} bytes"
    if _CONTROL.search(value):
        return "contains a control character"
    return ""


class _Builder:
    def __init__(
        self, binding: str, limits: Limits, profile: Profile, *, header_params: bool = False
    ) -> None:
        self.binding = binding
        # x-mcp-header annotations matter (and are validated) on modern HTTP only.
        self.header_params = header_params
        self.limits = limits
        self.profile = profile
        self.warnings = Warnings(MAX_CATALOG_WARNINGS, _WARNING_BYTES)
        self.applied: set[Tolerance] = set()
        self.lister = Lister(limits)

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

    def tool(self, draft: ToolDraft, index: int, page: Warnings) -> ToolDraft | None:
        """Apply the binding's rules to a tool read from the wire (drop, tolerate or fail).

        Raises:
            CatalogError: an invalid output schema the profile does not tolerate.
        """
        if self.header_params:
            header_params = header_annotations(draft.input_schema.value)
            if isinstance(header_params, str):
                page.add(f"tool {index} dropped: {header_params}")
                return None
        output = draft.output_schema
        if output is not None and output.problem:
            if not self.profile.permits(Tolerance.INVALID_OUTPUT_SCHEMA):
                raise CatalogError(
                    f"tool {bound(draft.name, 64)!r} has an output schema that {output.problem},"
                    f" and profile {self.profile} does not permit invalid_output_schema",
                    binding=self.binding,
                    op="discover",
                )
            self.applied.add(Tolerance.INVALID_OUTPUT_SCHEMA)
            draft.warnings = (f"output schema dropped: it {output.problem}",)
            draft.output_schema = None
        return draft


def _paginate(
    fetch: Fetch,
    family: Family,
    *,
    cap: int,
    builder: _Builder,
    first: Callable[[], Any] | None = None,
) -> list[Any]:
    limits, binding, method = builder.limits, builder.binding, family.method
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
            if first is not None:  # the first page, sent already
                result, first = first(), None
            else:
                result = fetch(method, {} if cursor is None else {"cursor": cursor})
        except MethodNotFoundError:
            # Only a first page can say "not implemented": a server that
            # served a page has the method, and a later -32601 is a failure.
            if page_number:
                raise
            builder.missing_method(method, family.declared)
            return []
        page_raw = page_items(result, family)
        if page_raw is None:
            raise ProtocolError(
                f"{method} returned no {family.key} list", binding=binding, op="discover"
            )
        page = Warnings(MAX_PAGE_WARNINGS, _WARNING_BYTES)

        def accept(item: Any, index: int) -> None:
            if family is TOOLS:
                item = builder.tool(item, index, page)  # noqa: B023 - runs before the loop moves on
                if item is None:
                    return
            if len(items) >= cap:
                raise LimitExceededError(
                    f"{method} offered more than the {cap} items this binding accepts",
                    failure_class=FailureClass.CATALOG_OVER_LIMIT,
                    binding=binding,
                    op="discover",
                )
            items.append(item)

        builder.lister.items(family, page_raw, index, page, accept)
        index += len(page_raw)
        builder.warnings.extend(page)
        cursor_raw = next_cursor(result)
        if cursor_raw is None or cursor_raw == "":
            return items
        if not isinstance(cursor_raw, str) or utf8_len(cursor_raw) > MAX_CURSOR_BYTES:
            raise CatalogError(
                f"{method} returned a cursor that is not a string of at most"
                f" {MAX_CURSOR_BYTES} bytes",
                binding=binding,
                op="discover",
            )
        if cursor_raw in seen:
            raise CatalogError(
                f"{method} returned a pagination cursor it already served; the listing does not"
                " terminate",
                binding=binding,
                op="discover",
            )
        seen.add(cursor_raw)
        cursor = cursor_raw
    return items  # pragma: no cover - the loop returns or raises


def _unique(binding: str, what: str, names: list[str]) -> None:
    if _all_valid_and_distinct(names):
        return  # the common listing, checked in a few whole-list steps
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


def _all_valid_and_distinct(names: list[str]) -> bool:
    """Whether every name is a valid identifier and none repeats (``False``: look closer)."""
    if not all(type(name) is str and 0 < len(name) <= MAX_IDENTIFIER_BYTES // 4 for name in names):
        return False  # at most 4 bytes a character: these fit without measuring
    joined = "".join(names)
    if _CONTROL.search(joined):
        return False
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return len(set(names)) == len(names)


#: Each family, and whether a server's capabilities advertise it (in listing order).
_FAMILIES: tuple[tuple[Family, Callable[[ServerCapabilities], bool]], ...] = (
    (TOOLS, lambda caps: bool(caps.tools)),
    (PROMPTS, lambda caps: bool(caps.prompts)),
    (RESOURCES, lambda caps: bool(caps.resources)),
    (TEMPLATES, lambda caps: bool(caps.resources)),
)


def discover(
    fetch: Fetch,
    *,
    binding: str,
    generation: int,
    protocol: Protocol,
    limits: Limits,
    profile: Profile,
    http: bool = False,
    start: Start | None = None,
) -> Catalog:
    """Fetch every advertised family and build generation ``generation``.

    With ``start``, the first page of every advertised family is asked for at
    once (pipelined on stdio, concurrent over HTTP), before any is read: a
    catalog costs one round trip, not one per family. Later pages follow
    their family's cursor with ``fetch``.

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
    families = [f for f, declared in _FAMILIES if declared(caps)]
    firsts = {f.method: start(f.method, {}) for f in families} if start is not None else {}

    def listed(family: Family, cap: int) -> list[Any]:
        if family not in families:
            return []
        first = firsts.get(family.method)
        return _paginate(fetch, family, cap=cap, builder=builder, first=first)

    tools_read: list[ToolDraft] = listed(TOOLS, limits.max_catalog_items)
    prompts: list[PromptSpec] = listed(PROMPTS, limits.max_prompt_count)
    resources: list[ResourceSpec] = listed(RESOURCES, limits.max_resource_count)
    templates: list[ResourceTemplateSpec] = listed(TEMPLATES, limits.max_resource_count)

    _unique(binding, "tool", [t.name for t in tools_read])
    _unique(binding, "prompt", [p.name for p in prompts])
    _unique(binding, "resource", [r.uri for r in resources])
    _unique(binding, "resource template", [t.uri_template for t in templates])

    # The order is the identifiers' UTF-8 bytes. They are valid UTF-8 now
    # (_unique): no surrogates, so code-point order is that same order.
    tools_read.sort(key=lambda t: t.name)
    prompts.sort(key=lambda p: p.name)
    resources.sort(key=lambda r: r.uri)
    templates.sort(key=lambda t: t.uri_template)

    try:
        names = assign_model_names(binding, [t.name for t in tools_read])
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

    by_raw = names.by_raw
    tools = tuple(t.finish(by_raw[t.name]) for t in tools_read)
    applied = tuple(sorted(builder.applied))
    for tolerance in applied:
        builder.warnings.add(f"compatibility: applied tolerance {tolerance}")
    fields = _Fields(
        binding=binding,
        protocol_version=protocol.version,
        capabilities=caps,
        server=protocol.server,
        instructions=protocol.instructions,
        tools=tools,
        prompts=tuple(prompts),
        resources=tuple(resources),
        resource_templates=tuple(templates),
    )
    # The digest is taken before the catalog is built, so it is built (and
    # its validators run over every tool) once.
    return Catalog(
        binding=binding,
        generation=generation,
        digest=catalog_digest(fields),
        protocol_version=protocol.version,
        server=protocol.server,
        capabilities=caps,
        instructions=protocol.instructions,
        tools=fields.tools,
        prompts=fields.prompts,
        resources=fields.resources,
        resource_templates=fields.resource_templates,
        warnings=builder.warnings.summary("warning(s)"),
        applied_tolerances=applied,
    )


@attrs.frozen(kw_only=True)
class _Fields:
    """What the catalog digest covers, gathered before the catalog is built."""

    binding: str
    protocol_version: str
    capabilities: ServerCapabilities
    server: ServerIdentity
    instructions: str
    tools: tuple[ToolSpec, ...]
    prompts: tuple[PromptSpec, ...]
    resources: tuple[ResourceSpec, ...]
    resource_templates: tuple[ResourceTemplateSpec, ...]
