"""Tool names each provider accepts: deterministic, collision-free, mapped back.

OpenAI and Anthropic accept ``^[a-zA-Z0-9_-]{1,64}$``; Gemini also wants the
first character to be a letter or an underscore (it would take dots and
colons too, but the narrower set is valid everywhere). A catalog's model
names (``mcp__<binding>__<tool>``) already fit every provider and are kept;
a name from a hand-made ``ToolSpec`` list that does not fit is sanitized,
and a sanitized or over-long name that another tool shares is suffixed with
8 hex characters of its digest, so the result depends only on the set of
tools, never on their order.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

from mcpclient.catalog import ToolSpec
from mcpclient.export._values import GEMINI, Change

__all__ = ["MAX_NAME", "export_names", "name_problem"]

MAX_NAME = 64
_SUFFIX = 9  # "_" + 8 hex
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_GEMINI_VALID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def name_problem(provider: str, name: str) -> str:
    """Why ``name`` is not a valid tool name for ``provider`` ("" when it is)."""
    pattern = _GEMINI_VALID if provider == GEMINI else _VALID
    if pattern.fullmatch(name):
        return ""
    if provider == GEMINI:
        return "must be 1-64 characters of [A-Za-z0-9_-] starting with a letter or underscore"
    return "must be 1-64 characters of [A-Za-z0-9_-]"


def _digest(spec: ToolSpec, salt: int) -> str:
    key = "\0".join((spec.model_name, spec.raw_name, spec.input_schema_digest, str(salt)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _sanitize(provider: str, name: str) -> str:
    clean = _UNSAFE.sub("_", name) or "tool"
    if provider == GEMINI and not re.match(r"[A-Za-z_]", clean):
        clean = "_" + clean
    return clean


def export_names(
    provider: str, tools: Sequence[ToolSpec]
) -> tuple[list[tuple[str, ToolSpec]], list[Change]]:
    """An exported name for each tool (duplicates dropped), and what was renamed.

    Returns ``[(name, spec), ...]`` in the tools' order, and the changes.
    """
    changes: list[Change] = []
    unique: list[ToolSpec] = []
    seen: set[tuple[str, str, str]] = set()
    for spec in tools:
        key = (spec.model_name, spec.raw_name, spec.input_schema_digest)
        if key in seen:
            changes.append(Change(spec.model_name, "/name", "dropped", "the same tool twice"))
            continue
        seen.add(key)
        unique.append(spec)
    valid = Counter(
        spec.model_name for spec in unique if not name_problem(provider, spec.model_name)
    )
    candidates = [
        spec.model_name if spec.model_name in valid else _sanitize(provider, spec.model_name)
        for spec in unique
    ]
    shared = Counter(candidates)
    taken: set[str] = set()
    result: dict[int, str] = {}
    # A valid name that no other tool has is kept, and claimed first, so a
    # sanitized name never displaces it.
    for index, spec in enumerate(unique):
        if valid.get(spec.model_name) == 1:
            result[index] = spec.model_name
            taken.add(spec.model_name)
    for index, spec in enumerate(unique):
        if index in result:
            continue
        candidate = candidates[index]
        if len(candidate) <= MAX_NAME and shared[candidate] == 1 and candidate not in taken:
            name = candidate
        else:
            salt = 0
            name = candidate[: MAX_NAME - _SUFFIX] + "_" + _digest(spec, salt)
            while name in taken:
                salt += 1
                name = candidate[: MAX_NAME - _SUFFIX] + "_" + _digest(spec, salt)
        why = name_problem(provider, spec.model_name) or "is shared by another tool"
        changes.append(Change(name, "/name", "renamed", f"{spec.model_name!r} {why}"))
        taken.add(name)
        result[index] = name
    named = [(result[index], spec) for index, spec in enumerate(unique)]
    return named, changes
