"""``read_resource`` through the binding's result cache (2026-07-28 ``ttlMs``/``cacheScope``).

A fresh cached result is returned as the same frozen value the read that
fetched it returned (no request, no re-validation). A miss reads through the
call path and keeps what the result's hint allows. Only a 2026-07-28 session
is cached (a legacy result carries no hint); ``cache=False`` neither looks up
nor keeps. ``tools/call`` never comes here.

Threads:
    None of its own: runs on the caller's thread.

Locks:
    None of its own: the cache's lock, taken briefly.

Shutdown:
    Nothing to stop; the cache is cleared at close and on a new session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpclient._internal.client.calls.callpath import CallPath
from mcpclient._internal.client.catalog.resource_cache import auth_context
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.wire.interactions import read_cache_hint, result_size
from mcpclient.calls import CallOpts
from mcpclient.content import Resource


def read_resource(
    st: BindingState,
    calls: CallPath,
    uri: str,
    opts: CallOpts,
    *,
    deadline: float,
    convert: Callable[[Any], Resource],
    cache: bool,
) -> Resource:
    """Read ``uri``: from the cache when fresh and allowed, else from the server."""
    protocol = st.protocol
    if not cache or protocol is None or not protocol.modern:
        return calls.call(
            "resources/read", {"uri": uri}, opts, convert, op="read_resource", deadline=deadline
        )
    store = st.resource_cache
    # The context the request is sent in (hashed; never the token itself).
    context = auth_context(st.definition.transport)
    found = store.get(uri, context)
    calls.cache_lookup(found is not None)
    if found is not None:
        value: Resource = found
        return value
    generation = store.generation

    def convert_and_keep(raw: Any) -> Resource:
        value = convert(raw)
        hint = read_cache_hint(raw)
        if hint is not None:
            store.put(uri, context, hint, value, size=result_size(raw), generation=generation)
        return value

    return calls.call(
        "resources/read",
        {"uri": uri},
        opts,
        convert_and_keep,
        op="read_resource",
        deadline=deadline,
    )
