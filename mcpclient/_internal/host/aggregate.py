"""The host's aggregate catalog: every serving binding's tools under unique model names.

A :class:`View` is immutable: the aggregate :class:`~mcpclient.Catalog` and
the route of each model name back to its binding and raw name, built
together from one set of binding catalogs and keyed by their generations.
:class:`Aggregate` holds the host's current view and swaps it by one
reference assignment, so a reader sees a whole view, old or new, never a mix.
It also keeps a second view, of the bindings serving or coming back
(reconnecting, or failed), that only routes: a model name of a binding that
is reconnecting or failed still reaches that binding, whose call then waits
for its reconnect, starts the next attempt, or raises its own classified
failure.

A lazy host (``Host(connect="lazy")``) also hands in the stored catalogs of
its dormant servers (not started, or stopped when idle): their tools join the
view under the same naming, and :attr:`View.stored` says which servers they
came from, so a call routed to one knows to start it and check the tool.

Locks:
    ``Aggregate._lock`` serializes rebuilds (two readers that both see a
    moved generation build it once). Readers take no lock: checking the
    current view is a few attribute reads per binding.
"""

from __future__ import annotations

import hashlib
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from mcpclient._internal.client.state import SERVING
from mcpclient._internal.host.names import Owner, aggregate_names
from mcpclient.catalog import Catalog, ServerCapabilities
from mcpclient.status import State

if TYPE_CHECKING:
    from mcpclient.client import Client

__all__ = ["EMPTY_KEY", "NO_DORMANT", "Aggregate", "Dormant", "View", "build_view"]

#: One entry per binding of the host, in a fixed order: its adopted
#: generation when it is serving, 0 otherwise.
Key = tuple[int, ...]
EMPTY_KEY: Key = ()
#: The dormant servers' stored catalogs (server name, catalog), swapped whole.
Dormant = tuple[tuple[str, Catalog], ...]
NO_DORMANT: Dormant = ()


class View:
    """One aggregate: the catalog, its routes, and the generations it was built from."""

    __slots__ = ("catalog", "key", "routes", "stored")

    def __init__(
        self, key: Key, catalog: Catalog, routes: Mapping[str, Owner], stored: Dormant = NO_DORMANT
    ) -> None:
        self.key = key
        self.catalog = catalog
        #: Aggregate model name to (server name in the host, raw tool name).
        self.routes = routes
        #: The stored catalogs in this view, by dormant server (the tuple handed in).
        self.stored = stored

    def stored_catalog(self, server: str) -> Catalog | None:
        """The stored catalog ``server``'s tools in this view came from, or None if live."""
        for name, catalog in self.stored:
            if name == server:
                return catalog
        return None


def build_view(
    key: Key, catalogs: Sequence[tuple[str, Catalog]], ordinal: int, stored: Dormant = NO_DORMANT
) -> View:
    """The aggregate of ``catalogs`` (server name, its projected adopted catalog).

    ``ordinal`` numbers the aggregate (its ``generation``); the host bumps it
    each time the set of binding generations changes. The aggregate is for a
    model: MCP Apps tools whose visibility lacks ``"model"`` are left out.
    ``stored`` catalogs join ``catalogs`` as if their servers were serving.
    """
    catalogs = [*catalogs, *stored]
    names = aggregate_names(
        (server, tool.raw_name, tool.model_name)
        for server, catalog in catalogs
        for tool in catalog.tools
        if tool.model_visible
    )
    tools = []
    routes: dict[str, Owner] = {}
    digest = hashlib.sha256()
    for server, catalog in sorted(catalogs, key=lambda pair: pair[0]):
        digest.update(f"{len(server)}:{server}{catalog.digest}\n".encode())
        for tool in catalog.tools:
            if not tool.model_visible:
                continue
            name = names[(server, tool.raw_name)]
            tools.append(tool if name == tool.model_name else attrs.evolve(tool, model_name=name))
            routes[name] = (server, tool.raw_name)
    aggregate = Catalog(
        generation=ordinal,
        digest=digest.hexdigest() if catalogs else "",
        capabilities=ServerCapabilities(tools=True),
        tools=tuple(tools),
    )
    return View(key, aggregate, types.MappingProxyType(routes), stored)


def _generation(client: Client) -> int:
    """The binding's adopted generation while it can serve calls, else 0 (a few reads).

    Serving: a live connection in a serving state (a ``degraded`` binding
    whose connection was lost, with reconnection disabled, has none).
    """
    st = client._st
    return st.catalogs.adopted.generation if st.state in SERVING and st.conn is not None else 0


def _known(client: Client) -> int:
    """The adopted generation of a binding that is serving or coming back, else 0.

    Coming back: reconnecting, or failed with a call able to start the next
    attempt. With reconnection disabled only a serving binding routes.
    """
    st = client._st
    if st.closing or st.definition.reconnect.disabled:
        return _generation(client)
    if st.state in (State.RECONNECTING, State.FAILED) or _generation(client):
        return st.catalogs.adopted.generation
    return 0


class Aggregate:
    """The host's current :class:`View`, rebuilt only when a binding's generation moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view = build_view(EMPTY_KEY, (), 0)
        self._known = self._view  # every binding not closed: only its routes are used

    def current(self, bindings: Sequence[tuple[str, Client]], stored: Dormant = NO_DORMANT) -> View:
        """The view of ``bindings`` (server name, client) as they are now, and ``stored``."""
        view = self._view
        if view.stored is stored and tuple(map(_generation, (c for _, c in bindings))) == view.key:
            return view
        with self._lock:
            view = self._rebuilt(bindings, _generation, self._view, stored)
            self._view = view  # one reference swap: readers see all of it or none
            return view

    def known(self, bindings: Sequence[tuple[str, Client]], stored: Dormant = NO_DORMANT) -> View:
        """The view of every binding not closed, serving or not (for routing only)."""
        view = self._known
        if view.stored is stored and tuple(map(_known, (c for _, c in bindings))) == view.key:
            return view
        with self._lock:
            view = self._rebuilt(bindings, _known, self._known, stored)
            self._known = view
            return view

    @staticmethod
    def _rebuilt(
        bindings: Sequence[tuple[str, Client]],
        generation_of: Callable[[Client], int],
        view: View,
        stored: Dormant,
    ) -> View:
        pairs = []
        key = []
        for name, client in bindings:
            generation = generation_of(client)
            if generation:
                catalog = client.catalog()
                # The key is what was read: a generation adopted since the
                # check above is in this view, and the next read agrees.
                generation = catalog.generation
                pairs.append((name, catalog))
            key.append(generation)
        if tuple(key) != view.key or view.stored is not stored:
            view = build_view(tuple(key), pairs, view.catalog.generation + 1, stored)
        return view
