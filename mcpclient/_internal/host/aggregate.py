"""The host's aggregate catalog: every serving binding's tools under unique model names.

A :class:`View` is immutable: the aggregate :class:`~mcpclient.Catalog` and
the route of each model name back to its binding and raw name, built
together from one set of binding catalogs and keyed by their generations.
The host swaps its current view by one reference assignment, so a reader
sees a whole view, old or new, never a mix.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Mapping, Sequence

import attrs

from mcpclient._internal.host.names import Owner, aggregate_names
from mcpclient.catalog import Catalog, ServerCapabilities

__all__ = ["EMPTY_KEY", "View", "build_view"]

#: One entry per binding of the host, in a fixed order: its adopted
#: generation when it is serving, 0 otherwise.
Key = tuple[int, ...]
EMPTY_KEY: Key = ()


class View:
    """One aggregate: the catalog, its routes, and the generations it was built from."""

    __slots__ = ("catalog", "key", "routes")

    def __init__(self, key: Key, catalog: Catalog, routes: Mapping[str, Owner]) -> None:
        self.key = key
        self.catalog = catalog
        #: Aggregate model name to (server name in the host, raw tool name).
        self.routes = routes


def build_view(key: Key, catalogs: Sequence[tuple[str, Catalog]], ordinal: int) -> View:
    """The aggregate of ``catalogs`` (server name, its projected adopted catalog).

    ``ordinal`` numbers the aggregate (its ``generation``); the host bumps it
    each time the set of binding generations changes.
    """
    names = aggregate_names(
        (server, tool.raw_name, tool.model_name)
        for server, catalog in catalogs
        for tool in catalog.tools
    )
    tools = []
    routes: dict[str, Owner] = {}
    digest = hashlib.sha256()
    for server, catalog in sorted(catalogs, key=lambda pair: pair[0]):
        digest.update(f"{len(server)}:{server}{catalog.digest}\n".encode())
        for tool in catalog.tools:
            name = names[(server, tool.raw_name)]
            tools.append(tool if name == tool.model_name else attrs.evolve(tool, model_name=name))
            routes[name] = (server, tool.raw_name)
    aggregate = Catalog(
        generation=ordinal,
        digest=digest.hexdigest() if catalogs else "",
        capabilities=ServerCapabilities(tools=True),
        tools=tuple(tools),
    )
    return View(key, aggregate, types.MappingProxyType(routes))
