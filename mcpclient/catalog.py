"""Catalog generations: what a server offers, as an immutable snapshot.

A :class:`Catalog` is one generation: validated whole or not at all, sorted
in a stable order, with deterministic model names and a digest that
identifies the server's offering independently of this host's filter.
"""

from __future__ import annotations

from typing import Any

import attrs

from mcpclient._core import checks
from mcpclient.compat import Tolerance
from mcpclient.errors import FailureClass, ToolUnavailableError

__all__ = [
    "Catalog",
    "Completion",
    "PromptArg",
    "PromptRef",
    "PromptSpec",
    "ResourceSpec",
    "ResourceTemplateRef",
    "ResourceTemplateSpec",
    "ServerCapabilities",
    "ServerIdentity",
    "ToolAnnotations",
    "ToolSpec",
    "ToolUI",
    "check_view_call",
]

_str = attrs.field(default="", kw_only=True, validator=checks.is_str)


def _tuple_of(*types: type) -> Any:
    return attrs.field(
        default=(), kw_only=True, converter=checks.to_tuple, validator=checks.tuple_of(*types)
    )


def _json() -> Any:
    return checks.json_field(kw_only=True)


@attrs.frozen(kw_only=True)
class ServerIdentity:
    """What a server claims to be. Cosmetic: it names a peer, never authorizes one."""

    name: str = attrs.field(default="", validator=checks.is_str)
    version: str = attrs.field(default="", validator=checks.is_str)
    title: str = attrs.field(default="", validator=checks.is_str)


@attrs.frozen(kw_only=True)
class ServerCapabilities:
    """What a server advertised.

    ``extensions`` are the protocol extensions the server declares (SEP-2133),
    identifier to settings, whether or not this binding opted in to them;
    :attr:`~mcpclient.Status.extensions` names the ones in use.
    """

    tools: bool = attrs.field(default=False, validator=checks.is_bool)
    prompts: bool = attrs.field(default=False, validator=checks.is_bool)
    resources: bool = attrs.field(default=False, validator=checks.is_bool)
    resources_subscribe: bool = attrs.field(default=False, validator=checks.is_bool)
    logging: bool = attrs.field(default=False, validator=checks.is_bool)
    completions: bool = attrs.field(default=False, validator=checks.is_bool)
    _extensions: Any = checks.json_field(default={}, optional=False, alias="extensions")

    @property
    def extensions(self) -> dict[str, Any]:
        """The server's declared extensions: identifier -> settings (a fresh copy)."""
        value: dict[str, Any] = checks.decode_json(self._extensions)
        return value

    def extension(self, identifier: str) -> dict[str, Any] | None:
        """The settings the server declared for ``identifier``, or ``None`` if it did not."""
        settings = self.extensions.get(identifier)
        return settings if isinstance(settings, dict) else None


def _optional_bool(inst: object, attr: Any, value: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise checks.fail(inst, attr.name, f"must be a bool or None, got {type(value).__name__}")


@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """A server's hints about a tool. Hints, never guarantees."""

    title: str = attrs.field(default="", validator=checks.is_str)
    read_only_hint: bool = attrs.field(default=False, validator=checks.is_bool)
    idempotent_hint: bool = attrs.field(default=False, validator=checks.is_bool)
    destructive_hint: bool | None = attrs.field(default=None, validator=_optional_bool)
    open_world_hint: bool | None = attrs.field(default=None, validator=_optional_bool)


@attrs.frozen(kw_only=True)
class ToolUI:
    """A tool's MCP Apps metadata (``_meta.ui``, SEP-1865).

    Attributes:
        resource_uri: the ``ui://`` resource of its interactive view ("" for
            none); also read from the deprecated ``_meta["ui/resourceUri"]``.
        visibility: who may call it: ``"model"`` (the agent sees and calls
            it) and/or ``"app"`` (only a view from the same server connection
            may); both by default.
    """

    resource_uri: str = attrs.field(default="", validator=checks.is_str)
    visibility: tuple[str, ...] = attrs.field(
        default=("model", "app"), converter=checks.to_tuple, validator=checks.tuple_of(str)
    )


@attrs.frozen(kw_only=True)
class ToolSpec:
    """One tool of a catalog.

    Attributes:
        raw_name: the server's own name; what goes on the wire and what
            ``call_tool`` takes.
        model_name: the sanitized, binding-qualified name to show a model
            (``mcp__<binding>__<name>``). Never parse it to recover the raw
            name; use :meth:`Catalog.tool_by_model_name`.
        input_schema: the JSON Schema of the arguments (a fresh copy on each
            access); always present.
        output_schema: the result's JSON Schema, or ``None``.
        input_schema_digest, output_schema_digest: hex digests ("" for none).
        icons, execution, meta: passed through, bounded, never interpreted.
        ui: its MCP Apps metadata, or ``None`` (a plain tool, for the model
            and apps alike).
    """

    raw_name: str = attrs.field(validator=checks.is_str)
    model_name: str = attrs.field(validator=checks.is_str)
    title: str = _str
    description: str = _str
    _input_schema: Any = checks.json_field(optional=False)
    _output_schema: Any = _json()
    input_schema_digest: str = _str
    output_schema_digest: str = _str
    annotations: ToolAnnotations | None = attrs.field(
        default=None, validator=checks.optional_instance_of(ToolAnnotations)
    )
    warnings: tuple[str, ...] = _tuple_of(str)
    _icons: Any = _json()
    _execution: Any = _json()
    _meta: Any = _json()
    ui: ToolUI | None = attrs.field(default=None, validator=checks.optional_instance_of(ToolUI))

    @property
    def model_visible(self) -> bool:
        """Whether a model may see and call it (its visibility includes ``"model"``)."""
        return self.ui is None or "model" in self.ui.visibility

    @property
    def app_visible(self) -> bool:
        """Whether an app view may call it (its visibility includes ``"app"``)."""
        return self.ui is None or "app" in self.ui.visibility

    @property
    def input_schema(self) -> Any:
        """The input JSON Schema (a fresh copy)."""
        return checks.decode_json(self._input_schema)

    @property
    def output_schema(self) -> Any:
        """The output JSON Schema (a fresh copy), or ``None``."""
        return checks.decode_json(self._output_schema)

    @property
    def icons(self) -> Any:
        """The server's icon list (a fresh copy), or ``None``."""
        return checks.decode_json(self._icons)

    @property
    def execution(self) -> Any:
        """The server's execution hints, e.g. ``{"taskSupport": "optional"}``, or ``None``."""
        return checks.decode_json(self._execution)

    @property
    def meta(self) -> Any:
        """The server's ``_meta`` for this tool (a fresh copy), or ``None``."""
        return checks.decode_json(self._meta)


@attrs.frozen(kw_only=True)
class PromptArg:
    """One argument of a prompt."""

    name: str = attrs.field(validator=checks.is_str)
    title: str = _str
    description: str = _str
    required: bool = attrs.field(default=False, validator=checks.is_bool)


@attrs.frozen(kw_only=True)
class PromptSpec:
    """One prompt of a catalog; arguments keep the server's order."""

    name: str = attrs.field(validator=checks.is_str)
    title: str = _str
    description: str = _str
    arguments: tuple[PromptArg, ...] = _tuple_of(PromptArg)


@attrs.frozen(kw_only=True)
class ResourceSpec:
    """One concrete resource. ``uri`` is an opaque identifier, never a host path."""

    uri: str = attrs.field(validator=checks.is_str)
    name: str = _str
    title: str = _str
    description: str = _str
    mime_type: str = _str


@attrs.frozen(kw_only=True)
class ResourceTemplateSpec:
    """One resource template (RFC 6570 URI template)."""

    uri_template: str = attrs.field(validator=checks.is_str)
    name: str = _str
    title: str = _str
    description: str = _str
    mime_type: str = _str


@attrs.frozen
class PromptRef:
    """A completion target: a prompt, by name."""

    name: str = attrs.field(validator=checks.is_str)


@attrs.frozen
class ResourceTemplateRef:
    """A completion target: a resource template, by its URI template."""

    uri_template: str = attrs.field(validator=checks.is_str)


@attrs.frozen(kw_only=True)
class Completion:
    """Completion suggestions (at most 100 values)."""

    values: tuple[str, ...] = attrs.field(
        default=(), converter=checks.to_tuple, validator=checks.tuple_of(str)
    )
    total: int | None = attrs.field(default=None, validator=checks.optional_non_negative_int)
    has_more: bool = attrs.field(default=False, validator=checks.is_bool)


@attrs.frozen(kw_only=True)
class Catalog:
    """One catalog generation of a binding, projected through its tool filter.

    The zero catalog (``generation == 0``) stands for "none adopted yet".
    ``digest`` describes the server's offering and does not depend on the
    host's filter. ``instructions`` are reported, never applied.

    Thread safety: immutable; share it freely.
    """

    binding: str = attrs.field(default="", validator=checks.is_str)
    generation: int = attrs.field(default=0, validator=checks.non_negative_int)
    digest: str = _str
    protocol_version: str = _str
    server: ServerIdentity = attrs.field(
        factory=ServerIdentity, validator=checks.instance_of(ServerIdentity)
    )
    capabilities: ServerCapabilities = attrs.field(
        factory=ServerCapabilities, validator=checks.instance_of(ServerCapabilities)
    )
    instructions: str = _str
    tools: tuple[ToolSpec, ...] = _tuple_of(ToolSpec)
    prompts: tuple[PromptSpec, ...] = _tuple_of(PromptSpec)
    resources: tuple[ResourceSpec, ...] = _tuple_of(ResourceSpec)
    resource_templates: tuple[ResourceTemplateSpec, ...] = _tuple_of(ResourceTemplateSpec)
    warnings: tuple[str, ...] = _tuple_of(str)
    applied_tolerances: tuple[Tolerance, ...] = _tuple_of(Tolerance)
    _by_raw: dict[str, ToolSpec] = attrs.field(init=False, eq=False, hash=False, repr=False)
    _by_model: dict[str, ToolSpec] = attrs.field(init=False, eq=False, hash=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_raw", {t.raw_name: t for t in self.tools})
        object.__setattr__(self, "_by_model", {t.model_name: t for t in self.tools})

    @property
    def valid(self) -> bool:
        """Whether this is a real generation (``generation >= 1``)."""
        return self.generation != 0

    def tool_by_raw_name(self, raw_name: str) -> ToolSpec | None:
        """The tool the server calls ``raw_name``, or ``None``."""
        return self._by_raw.get(raw_name)

    def tool_by_model_name(self, model_name: str) -> ToolSpec | None:
        """The tool shown to a model as ``model_name``, or ``None``."""
        return self._by_model.get(model_name)


def check_view_call(catalog: Catalog, raw_name: str, *, view_binding: str) -> ToolSpec:
    """Check a ``tools/call`` that an MCP Apps view asked for; return the tool.

    A view may call only tools of the server connection that rendered it
    (``view_binding`` must be ``catalog.binding``) whose visibility includes
    ``"app"``. The host then calls it on that binding
    (``client.call_tool(spec.raw_name, ...)``).

    Example:
        >>> spec = check_view_call(client.catalog(), "refresh_chart", view_binding="charts")
        ... # doctest: +SKIP

    Raises:
        ToolUnavailableError: another binding's view, an unknown tool, or a tool
            not visible to apps (``tool_unavailable``).
    """
    op = "check_view_call"
    if view_binding != catalog.binding:
        raise ToolUnavailableError(
            f"a view of binding {view_binding[:64]!r} may not call tools of another server",
            binding=catalog.binding,
            op=op,
        )
    spec = catalog.tool_by_raw_name(raw_name)
    if spec is None:
        raise ToolUnavailableError(
            f"tool {raw_name[:64]!r} is not in the catalog",
            failure_class=FailureClass.NOT_FOUND,
            binding=catalog.binding,
            op=op,
        )
    if not spec.app_visible:
        raise ToolUnavailableError(
            f"tool {raw_name[:64]!r} is not visible to apps (visibility lacks 'app')",
            binding=catalog.binding,
            op=op,
        )
    return spec
