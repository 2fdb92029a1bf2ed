"""Tool search: a BM25 index over tool names, titles, descriptions and parameter names.

Pure and value-aware: no I/O, no threads, no dependency beyond the standard
library. An index is built from a sequence of (binding, tools) pairs, so a
caller may add tools it knows but has not connected (a last known catalog)
without the index caring where they came from. It is immutable: build one
per catalog generation and share it; :class:`IndexCache` keeps the last one
and rebuilds only when handed a different catalog.

Ranking is Okapi BM25 with fixed parameters (``k1=1.2``, ``b=0.75``) over
one bag of terms per tool; names are split on ``_``, ``-``, ``.``, ``/``,
digits and camelCase humps, and the whole lower-cased name is a term too.
A name term counts three times (a tool's name says most about it). Ties are
broken by model name, so the order is deterministic for one catalog.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from mcpclient.catalog import ToolSpec
from mcpclient.errors import ConfigError

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_SEARCH_RESULTS",
    "IndexCache",
    "SearchIndex",
    "ToolMatch",
    "terms_of",
]

#: A query is cut to this many characters before it is tokenized.
MAX_QUERY_CHARS = 1024
#: The largest ``limit`` a search takes.
MAX_SEARCH_RESULTS = 100
#: At most this many parameter names of one tool are indexed (a hostile
#: schema with a million properties costs no more than this).
MAX_INDEXED_PARAMETERS = 256
#: Text of one field indexed, in characters.
MAX_FIELD_CHARS = 8192

_K1 = 1.2
_B = 0.75
_NAME_WEIGHT = 3

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def terms_of(text: str) -> list[str]:
    """The lower-cased search terms of ``text`` (snake_case, kebab-case and camelCase split)."""
    out: list[str] = []
    for chunk in _SPLIT.split(text):
        if not chunk:
            continue
        words = _WORDS.findall(chunk)
        out.extend(word.lower() for word in words)
        if len(words) > 1:
            out.append(chunk.lower())  # the whole identifier matches too
    return out


@attrs.frozen
class ToolMatch:
    """One search hit: the tool, its binding, and its BM25 score (higher is better).

    Attributes:
        model_name: the name to call it by (the host's aggregate model name).
        binding: the server name in the host (the client's binding for a
            ``Client``).
        score: the BM25 score, rounded to 6 places so equal scores compare equal.
        tool: the :class:`~mcpclient.ToolSpec` itself.
    """

    model_name: str
    binding: str
    score: float
    tool: ToolSpec


def _parameter_names(spec: ToolSpec) -> list[str]:
    schema: Any = spec.input_schema
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    return [name for name in list(properties)[:MAX_INDEXED_PARAMETERS] if isinstance(name, str)]


def _document(spec: ToolSpec) -> Counter[str]:
    bag: Counter[str] = Counter()
    for name in {spec.model_name, spec.raw_name}:
        for term in terms_of(name[:MAX_FIELD_CHARS]):
            bag[term] += _NAME_WEIGHT
    bag.update(terms_of(spec.title[:MAX_FIELD_CHARS]))
    bag.update(terms_of(spec.description[:MAX_FIELD_CHARS]))
    for parameter in _parameter_names(spec):
        bag.update(terms_of(parameter[:MAX_FIELD_CHARS]))
    return bag


class SearchIndex:
    """An immutable BM25 index over the tools of some bindings."""

    __slots__ = ("_average", "_documents", "_entries", "_frequency", "source")

    def __init__(
        self, entries: Iterable[tuple[str, Iterable[ToolSpec]]], source: object = None
    ) -> None:
        """Index every model-visible tool of ``entries`` (binding, its tools).

        ``source`` is what the index was built from (a catalog), for
        :class:`IndexCache` to compare by identity.
        """
        self.source = source
        self._entries: list[tuple[str, ToolSpec]] = []
        self._documents: list[tuple[Counter[str], int]] = []
        self._frequency: Counter[str] = Counter()
        for binding, tools in entries:
            for spec in tools:
                if not spec.model_visible:
                    continue
                bag = _document(spec)
                self._entries.append((binding, spec))
                self._documents.append((bag, sum(bag.values())))
                self._frequency.update(bag.keys())
        total = sum(length for _, length in self._documents)
        self._average = total / len(self._documents) if self._documents else 0.0

    def __len__(self) -> int:
        return len(self._entries)

    def search(self, query: str, limit: int = 10) -> list[ToolMatch]:
        """The tools matching ``query``, best first (ties by model name); at most ``limit``.

        A query with no indexable term, or no tool sharing a term with it,
        finds nothing.

        Raises:
            ConfigError: ``query`` is not a str, or ``limit`` is not an int in
                ``1..MAX_SEARCH_RESULTS``.
        """
        if not isinstance(query, str):
            raise ConfigError("search_tools query must be a str", op="search_tools")
        if (
            not isinstance(limit, int)
            or isinstance(limit, bool)
            or not 1 <= limit <= MAX_SEARCH_RESULTS
        ):
            raise ConfigError(
                f"search_tools limit must be an int in 1..{MAX_SEARCH_RESULTS}", op="search_tools"
            )
        terms = list(dict.fromkeys(terms_of(query[:MAX_QUERY_CHARS])))
        count = len(self._documents)
        if not terms or not count:
            return []
        weights = {}
        for term in terms:
            df = self._frequency.get(term, 0)
            if df:
                weights[term] = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        scored: list[tuple[float, str, int]] = []
        for position, (bag, length) in enumerate(self._documents):
            score = 0.0
            norm = _K1 * (1.0 - _B + _B * length / self._average)
            for term, weight in weights.items():
                tf = bag.get(term, 0)
                if tf:
                    score += weight * tf * (_K1 + 1.0) / (tf + norm)
            if score > 0.0:
                scored.append((round(score, 6), self._entries[position][1].model_name, position))
        scored.sort(key=lambda item: (-item[0], item[1]))
        out = []
        for score, _, position in scored[:limit]:
            binding, spec = self._entries[position]
            out.append(ToolMatch(spec.model_name, binding, score, spec))
        return out


class IndexCache:
    """The index of the last catalog asked for; rebuilt only when the catalog changes.

    Locks:
        ``_lock`` serializes rebuilds; a reader whose catalog is the cached
        one takes no lock (one reference read).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index = SearchIndex(())

    def index(
        self, source: object, entries: Callable[[], Iterable[tuple[str, Iterable[ToolSpec]]]]
    ) -> SearchIndex:
        """The index of ``source``; ``entries()`` (binding, tools) builds it when it is new."""
        index = self._index
        if index.source is source:
            return index
        with self._lock:
            if self._index.source is not source:
                self._index = SearchIndex(entries(), source)
            return self._index
