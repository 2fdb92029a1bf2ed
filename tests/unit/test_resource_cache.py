"""The resource read cache: hints, freshness, scopes, bounds, invalidation."""

from __future__ import annotations

import pytest

from mcpclient._core import deadline
from mcpclient._internal.client.catalog import resource_cache
from mcpclient._internal.client.catalog.resource_cache import ResourceCache
from mcpclient._internal.wire.interactions import CacheHint, read_cache_hint


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    t = [1000.0]
    monkeypatch.setattr(resource_cache.deadline, "now", lambda: t[0])
    return t


def test_hint_parsing() -> None:
    assert read_cache_hint({"ttlMs": 1500, "cacheScope": "public"}) == CacheHint(1.5, "public")
    assert read_cache_hint({"ttlMs": 10, "cacheScope": "private"}) == CacheHint(0.01, "private")
    assert read_cache_hint({"contents": []}) is None  # legacy: no hint
    assert read_cache_hint({"ttlMs": 0, "cacheScope": "public"}) is None
    assert read_cache_hint({"ttlMs": -5, "cacheScope": "public"}) is None
    assert read_cache_hint({"ttlMs": True, "cacheScope": "public"}) is None
    assert read_cache_hint({"ttlMs": 5, "cacheScope": "shared"}) is None
    assert read_cache_hint(None) is None


def test_fresh_then_stale(clock: list[float]) -> None:
    cache = ResourceCache(10, 1000)
    value = object()
    cache.put("u", "", CacheHint(2.0, "public"), value, size=10)
    assert cache.get("u", "any") is value
    clock[0] += 2.0
    assert cache.get("u", "any") is None
    assert len(cache) == 0


def test_private_is_per_context(clock: list[float]) -> None:
    cache = ResourceCache(10, 1000)
    a = object()
    cache.put("u", "tokA", CacheHint(5.0, "private"), a, size=10)
    assert cache.get("u", "tokA") is a
    assert cache.get("u", "tokB") is None


def test_bounds_evict_least_recent(clock: list[float]) -> None:
    cache = ResourceCache(2, 1000)
    hint = CacheHint(5.0, "public")
    cache.put("a", "", hint, "A", size=1)
    cache.put("b", "", hint, "B", size=1)
    assert cache.get("a", "") == "A"  # a is now the most recent
    cache.put("c", "", hint, "C", size=1)
    assert cache.get("b", "") is None and cache.get("a", "") == "A"
    by_bytes = ResourceCache(10, 10)
    by_bytes.put("a", "", hint, "A", size=6)
    by_bytes.put("b", "", hint, "B", size=6)
    assert by_bytes.get("a", "") is None and by_bytes.get("b", "") == "B"
    by_bytes.put("huge", "", hint, "H", size=11)  # larger than the cache: never kept
    assert by_bytes.get("huge", "") is None and by_bytes.get("b", "") == "B"


def test_invalidation(clock: list[float]) -> None:
    cache = ResourceCache(10, 1000)
    cache.put("a", "", CacheHint(5.0, "public"), "A", size=1)
    cache.put("a", "t", CacheHint(5.0, "private"), "A2", size=1)
    cache.put("b", "", CacheHint(5.0, "public"), "B", size=1)
    cache.invalidate("a")
    assert cache.get("a", "t") is None and cache.get("b", "") == "B"
    cache.clear()
    assert len(cache) == 0


def test_uses_the_one_clock() -> None:
    assert resource_cache.deadline.now is deadline.now


def test_auth_context_names_the_token_never_holds_it() -> None:
    from mcpclient.transports import StdioTransport, StreamableHTTPTransport

    tokens = iter(["tokA", "tokB", "tokA"])
    http = StreamableHTTPTransport("https://mcp.example/mcp", auth=lambda: next(tokens))
    a, b, a2 = (resource_cache.auth_context(http) for _ in range(3))
    assert a == a2 and a != b and "tokA" not in str(a)
    assert resource_cache.auth_context(StdioTransport("x")) == "stdio"
    assert resource_cache.auth_context(StreamableHTTPTransport("https://mcp.example/mcp")) == (
        "anonymous"
    )

    def failing() -> str:
        raise RuntimeError("no token")

    assert (
        resource_cache.auth_context(
            StreamableHTTPTransport("https://mcp.example/mcp", auth=failing)
        )
        is None
    )


def test_private_with_unknown_context_is_not_kept(clock: list[float]) -> None:
    cache = ResourceCache(10, 1000)
    cache.put("u", None, CacheHint(5.0, "private"), "P", size=1)
    assert len(cache) == 0


def test_a_read_across_an_invalidation_is_not_kept(clock: list[float]) -> None:
    cache = ResourceCache(10, 1000)
    generation = cache.generation
    cache.invalidate("u")  # the server announced a change while the read was in flight
    cache.put("u", "", CacheHint(5.0, "public"), "old", size=1, generation=generation)
    assert cache.get("u", "") is None
