"""The catalog store: adopted generation, candidate, stale families.

Generations are swapped atomically under one lock; readers take a reference
to an immutable :class:`Catalog` and keep it (an in-flight call keeps the
generation it started with). The client never adopts on its own after
generation 1: a refresh that differs becomes a candidate.

Locks:
    ``_lock`` guards every field. Events are posted (a non-blocking append to
    the event lane) under it, so they are delivered in commit order. It may be
    taken with ``BindingState.lock`` held (``status()``, a refresh publishing),
    never the other way round; :meth:`CatalogStore.snapshot` reads the fields
    together under it, so a status never pairs one generation's adopted
    catalog with another's candidate.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from mcpclient.catalog import Catalog
from mcpclient.errors import CatalogError, FailureClass
from mcpclient.events import (
    CatalogAdopted,
    CatalogCandidate,
    CatalogRefreshed,
    CatalogStale,
    Event,
)

__all__ = ["CatalogSnapshot", "CatalogStore"]


class CatalogSnapshot(NamedTuple):
    """The store's fields read together, under its lock (one consistent view)."""

    adopted: Catalog
    candidate: Catalog | None
    stale_families: tuple[str, ...]


class CatalogStore:
    """Holds a binding's catalog generations. Thread safety: any thread."""

    def __init__(self, binding: str, emit: Callable[[Event], int]) -> None:
        self._binding = binding
        self._emit = emit
        self._lock = threading.Lock()
        self._adopted = Catalog(binding=binding)
        self._candidate: Catalog | None = None
        self._ordinals = 0
        self._stale: set[str] = set()

    def forget_after_fork(self) -> None:
        """In a forked child: replace the lock (a parent thread may have held it)."""
        self._lock = threading.Lock()

    def reserve(self) -> int:
        """The next generation ordinal (every fetch attempt takes one; gaps are normal)."""
        with self._lock:
            self._ordinals += 1
            return self._ordinals

    @property
    def adopted(self) -> Catalog:
        """The adopted generation (the zero catalog before the first)."""
        return self._adopted

    @property
    def candidate(self) -> Catalog | None:
        """The candidate awaiting adoption, or ``None``."""
        return self._candidate

    def snapshot(self) -> CatalogSnapshot:
        """Adopted, candidate and stale families as of one instant (for ``status()``)."""
        with self._lock:
            return CatalogSnapshot(self._adopted, self._candidate, tuple(sorted(self._stale)))

    @property
    def stale_families(self) -> tuple[str, ...]:
        """Families announced changed and not refetched since, sorted."""
        with self._lock:
            return tuple(sorted(self._stale))

    def adopt_first(self, catalog: Catalog) -> int:
        """Adopt the startup generation; returns the event's lane sequence."""
        with self._lock:
            self._adopted = catalog
            return self._emit(
                CatalogAdopted(
                    binding=self._binding,
                    generation=catalog.generation,
                    digest=catalog.digest,
                    previous=0,
                    at=time.time(),
                )
            )

    def mark_stale(self, family: str) -> bool:
        """Record a change announcement; emits ``CatalogStale`` if none is pending."""
        with self._lock:
            if family in self._stale:
                return False
            self._stale.add(family)
            self._emit(CatalogStale(binding=self._binding, family=family, at=time.time()))
            return True

    def publish(self, catalog: Catalog) -> None:
        """Offer a refreshed generation: refreshed, kept, or a new candidate."""
        with self._lock:
            self._stale.clear()
            adopted = self._adopted
            if catalog.digest == adopted.digest:
                # A reverted change makes an outstanding candidate wrong.
                self._candidate = None
                self._emit(
                    CatalogRefreshed(
                        binding=self._binding,
                        generation=adopted.generation,
                        digest=adopted.digest,
                        at=time.time(),
                    )
                )
            elif self._candidate is not None and catalog.digest == self._candidate.digest:
                pass  # keep its ordinal stable for a caller on its way to adopt()
            else:
                self._candidate = catalog
                self._emit(
                    CatalogCandidate(
                        binding=self._binding,
                        generation=catalog.generation,
                        digest=catalog.digest,
                        adopted=adopted.generation,
                        at=time.time(),
                    )
                )

    def adopt(self, generation: int) -> int:
        """Swap in the candidate numbered ``generation``; returns the event's sequence.

        Raises:
            CatalogError: ``catalog_stale`` naming the real candidate, if any.
        """
        with self._lock:
            candidate = self._candidate
            if candidate is None:
                raise CatalogError(
                    f"generation {generation} is not adoptable: the binding has no candidate",
                    failure_class=FailureClass.CATALOG_STALE,
                    binding=self._binding,
                    op="adopt",
                )
            if candidate.generation != generation:
                raise CatalogError(
                    f"generation {generation} is not adoptable: the candidate is generation"
                    f" {candidate.generation}",
                    failure_class=FailureClass.CATALOG_STALE,
                    binding=self._binding,
                    op="adopt",
                )
            previous = self._adopted.generation
            self._adopted, self._candidate = candidate, None
            return self._emit(
                CatalogAdopted(
                    binding=self._binding,
                    generation=candidate.generation,
                    digest=candidate.digest,
                    previous=previous,
                    at=time.time(),
                )
            )
