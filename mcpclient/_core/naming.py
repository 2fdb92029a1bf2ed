"""Model-facing tool names: ``mcp__<binding>__<sanitized raw name>``, unique and bounded.

Model APIs accept tool names of ``^[A-Za-z0-9_-]{1,64}$`` only, while MCP servers
may name tools with any text. This module maps raw names to model names
deterministically (origin-client.md section 7.6):

* Each character outside ``[A-Za-z0-9_-]`` becomes one ``_``.
* A candidate that is too long, or that two tools share, is cut to 55 bytes and
  suffixed with ``_`` + 8 hex characters of the tool's name digest. Every member
  of a colliding group is suffixed (there is no arbitrary winner), so a name
  depends only on the binding and its colliding siblings, never on server order.
* A sanitized but unique short name is not suffixed.

The mapping back is a lookup table kept by the catalog; model names are never
parsed. A name that still collides after suffixing is a hard failure
(``ValueError``; the catalog builder reports it as ``catalog_invalid``).
"""

from __future__ import annotations

import itertools
import re
import types
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcpclient._core.digest import name_digest

__all__ = ["MAX_MODEL_NAME_BYTES", "ModelNames", "assign_model_names", "sanitize"]

#: Longest model name, in bytes (model names are ASCII).
MAX_MODEL_NAME_BYTES = 64
# "_" + 8 hex characters.
_SUFFIX_BYTES = 9
_CUT_BYTES = MAX_MODEL_NAME_BYTES - _SUFFIX_BYTES

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_BINDING = re.compile(r"[a-z0-9_-]{1,32}")


@dataclass(frozen=True, slots=True)
class ModelNames:
    """Model names assigned to one tool set.

    Attributes:
        by_raw: Raw name to model name, for every raw name given.
        lossy: Raw names whose model name needed normalization: sanitizing
            changed the name, the candidate exceeded 64 bytes, or another tool
            shared the candidate. A profile that forbids normalization fails the
            catalog when this is non-empty.
    """

    by_raw: Mapping[str, str]
    lossy: frozenset[str]


def sanitize(text: str) -> str:
    """Replace each character outside ``[A-Za-z0-9_-]`` with one ``_``.

    Case is preserved; a non-ASCII character becomes a single ``_``.

    Args:
        text: Any text.

    Returns:
        ASCII text of the same length in characters.

    Examples:
        ``files.read`` -> ``files_read``, ``café`` -> ``caf_``.
    """
    return _UNSAFE.sub("_", text)


def assign_model_names(binding: str, raw_names: Sequence[str]) -> ModelNames:
    """Assign a model name to every raw tool name of one binding.

    The result depends only on the binding and the set of raw names, not on
    their order.

    Args:
        binding: The binding name, 1-32 bytes of ``[a-z0-9_-]``.
        raw_names: The tools' raw names, distinct.

    Returns:
        The names, each matching ``^[A-Za-z0-9_-]{1,64}$`` and starting with
        ``mcp__<binding>__``, and which of them were normalized.

    Raises:
        ValueError: If the binding is malformed, a raw name repeats, or two
            tools end with the same model name even after suffixing.
    """
    if not _BINDING.fullmatch(binding):
        raise ValueError(f"binding name {binding!r} is not 1-32 bytes of [a-z0-9_-]")
    ordered = sorted(raw_names)
    for previous, current in itertools.pairwise(ordered):
        if previous == current:
            raise ValueError(f"raw tool name {current!r} appears twice")

    prefix = f"mcp__{binding}__"
    room = MAX_MODEL_NAME_BYTES - len(prefix)
    # The common catalog: every name already safe and short. Distinct raw
    # names then give distinct model names, none lossy: no per-name work.
    if all(len(raw) <= room for raw in ordered) and not _UNSAFE.search("".join(ordered)):
        return ModelNames(
            by_raw=types.MappingProxyType({raw: prefix + raw for raw in ordered}),
            lossy=frozenset(),
        )
    candidates = {raw: prefix + sanitize(raw) for raw in ordered}
    shared = Counter(candidates.values())

    by_raw: dict[str, str] = {}
    lossy: set[str] = set()
    owners: dict[str, str] = {}
    for raw in ordered:
        candidate = candidates[raw]
        too_long = len(candidate) > MAX_MODEL_NAME_BYTES
        collides = shared[candidate] > 1
        if too_long or collides or candidate != prefix + raw:
            lossy.add(raw)
        name = candidate
        if too_long or collides:
            name = candidate[:_CUT_BYTES] + "_" + name_digest(binding, raw)[:4].hex()
        if name in owners:
            raise ValueError(f"tools {owners[name]!r} and {raw!r} both map to model name {name!r}")
        owners[name] = raw
        by_raw[raw] = name
    return ModelNames(by_raw=types.MappingProxyType(by_raw), lossy=frozenset(lossy))
