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

import hashlib
import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from mcpclient._core import deadline
from mcpclient._internal.wire.interactions import CacheHint
from mcpclient.transports import StdioTransport

#: The bounds of one binding's cache: the entries it keeps, and the bytes of
#: their contents (text and base64 blob lengths); least recently used go first.
MAX_ENTRIES = 64
MAX_BYTES = 4 * 1024 * 1024


def auth_context(transport: object, method: str = "resources/read") -> str | None:
    """A digest naming the authorization context a request is sent in, or None.

    The bearer token (a plain callable's, or the ``Authorization`` header an
    auth provider gives for this request, else a static header's) is hashed at
    once and never kept: a different token is a different context. stdio has
    one context per binding. None when it cannot be told (a failing provider):
    ``private`` results are then not cached.
    """
    if isinstance(transport, StdioTransport):
        return "stdio"
    auth: Any = getattr(transport, "auth", None)
    url: Any = getattr(transport, "url", "")
    token: str | None
    try:
        if auth is None:
            token = _header(dict(getattr(transport, "headers", None) or ()), "authorization")
        elif callable(auth):
            token = auth()
        else:
            token = _header(dict(auth.headers_for(method, url)), "authorization")
    except Exception:  # the request itself reports the provider's failure
        return None
    if token is None:
        return "anonymous"
    return hashlib.sha256(str(token).encode("utf-8", "replace")).hexdigest()


def _header(headers: Any, name: str) -> str | None:
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name and isinstance(value, str):
            return value
    return None


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
        # Bumped by every invalidation: a read in flight across one is not kept
        # (its result may predate the change the server announced).
        self._generation = 0

    @property
    def generation(self) -> int:
        """The invalidation count; pass the value read before a request to :meth:`put`."""
        with self._lock:
            return self._generation

    def get(self, uri: str, context: str | None) -> Any | None:
        """The fresh value for ``uri`` (public first, then ``context``'s), or None."""
        now = deadline.now()
        keys = [(uri, "")] if context is None else [(uri, ""), (uri, context)]
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    continue
                if entry.expires <= now:
                    self._drop(key)
                    continue
                self._entries.move_to_end(key)
                return entry.value
        return None

    def put(
        self,
        uri: str,
        context: str | None,
        hint: CacheHint,
        value: Any,
        *,
        size: int,
        generation: int | None = None,
    ) -> None:
        """Keep ``value`` (``size`` bytes on the wire) for ``hint.ttl`` seconds.

        Not kept when it is larger than the cache, when it is private and
        ``context`` is unknown (None), or when an invalidation happened since
        ``generation`` was read.
        """
        if size > self._max_bytes or self._max_entries <= 0:
            return
        if hint.scope == "public":
            key = (uri, "")
        elif context is None:
            return
        else:
            key = (uri, context)
        with self._lock:
            if generation is not None and generation != self._generation:
                return
            if key in self._entries:
                self._drop(key)
            self._entries[key] = _Entry(value, size, deadline.now() + hint.ttl)
            self._bytes += size
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                self._drop(next(iter(self._entries)))

    def invalidate(self, uri: str) -> None:
        """Forget every entry of ``uri`` (``notifications/resources/updated``)."""
        with self._lock:
            self._generation += 1
            for key in [k for k in self._entries if k[0] == uri]:
                self._drop(key)

    def clear(self) -> None:
        """Forget everything (``list_changed``, a new session, close)."""
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _drop(self, key: tuple[str, str]) -> None:
        entry = self._entries.pop(key)
        self._bytes -= entry.size
