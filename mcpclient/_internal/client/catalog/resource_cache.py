"""A bounded, per-binding cache of ``resources/read`` results the server allows caching.

2026-07-28 ``ReadResourceResult`` (schema.json, ``$defs.ReadResourceResult``)
requires ``ttlMs`` (integer >= 0: "how long the client MAY cache this response",
0 = immediately stale) and ``cacheScope`` (``"public"`` | ``"private"``:
private responses "MAY be cached and reused only within the same authorization
context"). Legacy results carry neither, and are never cached.

Entries are keyed by ``(uri, context)``: ``context`` is ``""`` for ``public``
and a digest of the authorization context for ``private`` (the caller passes
the digest, never the token). A cached value is the frozen result the read
returned, served as is. Freshness uses the one clock, ``deadline.now``.

Threads:
    None of its own; called from the caller's thread (reads) and the reader
    thread (invalidation on notifications).

Locks:
    ``_lock`` guards every field; nothing else is taken under it.

Shutdown:
    :meth:`ResourceCache.clear` on close and on a new session.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from mcpclient._core import deadline

#: The scopes the 2026-07-28 schema defines for ``cacheScope``.
SCOPES = ("public", "private")


class CacheHint(NamedTuple):
    """A read result's cache hint: seconds of freshness and its scope."""

    ttl: float
    scope: str


def read_cache_hint(result: Any) -> CacheHint | None:
    """The hint of a raw ``resources/read`` result, or None when it allows no caching.

    None for a legacy result (no hint), a malformed hint (never invented), or
    ``ttlMs`` 0 (immediately stale).
    """
    if not isinstance(result, dict):
        return None
    ttl_ms = result.get("ttlMs")
    scope = result.get("cacheScope")
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0:
        return None
    if scope not in SCOPES:
        return None
    return CacheHint(ttl_ms / 1000.0, scope)


class _Entry(NamedTuple):
    value: Any
    size: int
    expires: float


class ResourceCache:
    """Fresh read results by ``(uri, context)``, bounded in entries and bytes (LRU)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self._lock = threading.Lock()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._bytes = 0

    def get(self, uri: str, context: str) -> Any | None:
        """The fresh value for ``uri`` (public first, then ``context``'s), or None."""
        now = deadline.now()
        with self._lock:
            for key in ((uri, ""), (uri, context)):
                entry = self._entries.get(key)
                if entry is None:
                    continue
                if entry.expires <= now:
                    self._drop(key)
                    continue
                self._entries.move_to_end(key)
                return entry.value
        return None

    def put(self, uri: str, context: str, hint: CacheHint, value: Any, size: int) -> None:
        """Keep ``value`` (``size`` bytes on the wire) for ``hint.ttl`` seconds."""
        if size > self._max_bytes or self._max_entries <= 0:
            return
        key = (uri, "" if hint.scope == "public" else context)
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = _Entry(value, size, deadline.now() + hint.ttl)
            self._bytes += size
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                self._drop(next(iter(self._entries)))

    def invalidate(self, uri: str) -> None:
        """Forget every entry of ``uri`` (``notifications/resources/updated``)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == uri]:
                self._drop(key)

    def clear(self) -> None:
        """Forget everything (``list_changed``, a new session, close)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _drop(self, key: tuple[str, str]) -> None:
        entry = self._entries.pop(key)
        self._bytes -= entry.size
