"""Model names unique across a host's bindings.

Each binding's catalog already gives every tool a model name qualified by its
binding name (``mcp__<binding>__<tool>``, :mod:`mcpclient._core.naming`),
unique within that binding. Across bindings they can still collide: two
servers whose definitions carry the same binding name, or names that meet
across the ``__`` separator (binding ``a`` with tool ``b__c`` and binding
``a__b`` with tool ``c``). The aggregate re-checks, with the policy the
per-binding names use:

* A model name that only one tool of the whole host has is kept as it is, so
  a tool is named the same through its ``Client`` and through the ``Host``.
* Every member of a colliding group is renamed (there is no arbitrary
  winner): its name cut to 55 bytes, ``_`` and 8 hex characters of a digest of
  (host server name, raw tool name).
* A renamed tool never takes a name kept by another; the (astronomically
  rare) clash of two digests is resolved by salting the digest with an
  attempt number, visiting the tools in sorted order.

So the result depends only on the set of (server name, raw name, model name)
triples, never on their order, and is collision-free by construction.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable

from mcpclient._core.digest import name_digest
from mcpclient._core.naming import MAX_MODEL_NAME_BYTES

__all__ = ["Owner", "aggregate_names"]

#: A tool of the host: (server name in the host, raw tool name).
Owner = tuple[str, str]

_SUFFIX_BYTES = 9  # "_" + 8 hex characters
_CUT_BYTES = MAX_MODEL_NAME_BYTES - _SUFFIX_BYTES


def _renamed(model_name: str, owner: Owner, attempt: int) -> str:
    server, raw = owner
    salt = server if attempt == 0 else f"{server}\x00{attempt}"
    return model_name[:_CUT_BYTES] + "_" + name_digest(salt, raw)[:4].hex()


def aggregate_names(tools: Iterable[tuple[str, str, str]]) -> dict[Owner, str]:
    """Assign every tool of the host a model name unique across all bindings.

    Args:
        tools: ``(server, raw_name, model_name)`` for every tool of every
            binding; ``model_name`` is the binding's own (valid, unique within
            the binding) model name. ``(server, raw_name)`` pairs are distinct.

    Returns:
        ``(server, raw_name)`` to its aggregate model name; each matches
        ``^[A-Za-z0-9_-]{1,64}$`` when the inputs do.

    Raises:
        ValueError: a ``(server, raw_name)`` pair appears twice.
    """
    entries = sorted(tools)
    for (s1, r1, _), (s2, r2, _) in itertools.pairwise(entries):
        if (s1, r1) == (s2, r2):
            raise ValueError(f"tool {r1!r} of server {s1!r} appears twice")
    shared = Counter(model for _, _, model in entries)
    names: dict[Owner, str] = {}
    taken: set[str] = set()
    colliding: list[tuple[str, Owner]] = []
    for server, raw, model in entries:
        if shared[model] == 1:
            names[(server, raw)] = model
            taken.add(model)
        else:
            colliding.append((model, (server, raw)))
    # Kept names are all reserved before any rename, so a renamed tool can
    # never displace one; the sorted order makes a digest clash deterministic.
    for model, owner in colliding:
        attempt = 0
        name = _renamed(model, owner, attempt)
        while name in taken:
            attempt += 1
            name = _renamed(model, owner, attempt)
        names[owner] = name
        taken.add(name)
    return names
