"""``status()`` reads the catalogs in one step, never torn by an adoption.

An adoption (or a refresh publishing a candidate) runs on another thread; it
is injected here between the reads a torn ``status()`` would make, with no
threads and no sleeps.
"""

from __future__ import annotations

from mcpclient import Definition, Handlers, StdioTransport
from mcpclient._internal.client.catalog.catalog_store import CatalogStore
from mcpclient._internal.client.state import BindingState
from mcpclient.catalog import Catalog


def _catalog(generation: int) -> Catalog:
    return Catalog(binding="snap", generation=generation, digest=f"d{generation}")


class _AdoptsWhileRead(CatalogStore):
    """A store whose next read of ``adopted`` lets a concurrent ``adopt()`` land right after."""

    def __init__(self) -> None:
        super().__init__("snap", lambda _event: 0)
        self.adopt_first(_catalog(1))
        self.publish(_catalog(2))  # the candidate
        self.interleave = True

    @property
    def adopted(self) -> Catalog:
        seen = super().adopted
        if self.interleave:
            self.interleave = False
            self.adopt(2)  # "another thread" adopts between this read and the next
        return seen


def _state(store: CatalogStore) -> BindingState:
    state = BindingState(Definition("snap", StdioTransport("/usr/bin/server")), Handlers())
    state.catalogs = store
    return state


def test_snapshot_reads_adopted_candidate_and_stale_together() -> None:
    store = CatalogStore("snap", lambda _event: 0)
    store.adopt_first(_catalog(1))
    store.publish(_catalog(2))
    store.mark_stale("tools")
    snap = store.snapshot()
    assert (snap.adopted.generation, snap.candidate) == (1, _catalog(2))
    assert snap.stale_families == ("tools",)
    store.adopt(2)
    assert (store.snapshot().adopted.generation, store.snapshot().candidate) == (2, None)


def test_status_is_never_torn_by_an_adoption() -> None:
    store = _AdoptsWhileRead()
    status = _state(store).status()
    # Before the adoption: 1 with candidate 2; after: 2 with none. Never 1 with none.
    pair = (status.catalog_generation, status.candidate_generation)
    assert pair in ((1, 2), (2, 0)), pair
    assert status.catalog_digest == f"d{status.catalog_generation}"
