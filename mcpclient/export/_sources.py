"""What the exporters and the runner accept as tools, and each provider's names for them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcpclient.catalog import ToolSpec
from mcpclient.errors import ConfigError
from mcpclient.export._names import export_names

__all__ = ["Tools", "names_for", "tool_specs"]

#: What an exporter accepts: a ``Catalog``, anything with ``catalog()`` (a
#: ``Client``, a ``Host``), anything with a ``tools`` sequence of ``ToolSpec``,
#: or the ``ToolSpec`` list itself.
Tools = Any


def tool_specs(tools: Tools, op: str = "export") -> list[ToolSpec]:
    """The ``ToolSpec`` list behind any accepted ``tools`` argument, for a model.

    Tools whose MCP Apps visibility lacks ``"model"`` are left out.

    Raises:
        ConfigError: ``tools`` is none of the accepted kinds.
    """
    source = tools
    catalog = getattr(source, "catalog", None)
    if callable(catalog):
        source = catalog()
    listed = getattr(source, "tools", None)
    if listed is not None and not isinstance(source, list | tuple):
        source = listed
    if isinstance(source, ToolSpec):
        source = [source]
    if isinstance(source, Iterable) and not isinstance(source, str | bytes | dict):
        specs = list(source)
        if all(isinstance(spec, ToolSpec) for spec in specs):
            # Exports are for a model: MCP Apps tools not visible to it are left out.
            return [spec for spec in specs if spec.model_visible]
    raise ConfigError(
        f"{op}() needs a Catalog, an object with catalog(), or a list of ToolSpec;"
        f" got {type(tools).__name__}",
        op=op,
    )


def names_for(provider: str, tools: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    """Exported name -> tool, as the exporter for ``provider`` names them."""
    named, _ = export_names(provider, tools)
    return {name: spec for name, spec in named}
