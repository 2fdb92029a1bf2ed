"""What every schema conversion shares: bounds, local ``$ref`` resolution, the report.

A conversion never mutates its input: it reads the schema and builds a new
one. Its work is bounded whatever the schema: at most :data:`MAX_DEPTH`
nested schemas along one path, :data:`MAX_NODES` schemas in all (inlined
references count each time they are inlined, so a reference bomb is cut,
not expanded), and :data:`MAX_REF_DEPTH` references inlined inside each
other. What is cut is replaced by an empty schema and reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcpclient.export._values import Change

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_REF_DEPTH",
    "MAX_REPORT",
    "Walk",
    "child",
    "merge_all_of",
    "note_text",
    "with_notes",
]

MAX_DEPTH = 32
MAX_NODES = 10_000
MAX_REF_DEPTH = 8
#: Changes reported per tool; past it, one summary line says how many more.
MAX_REPORT = 200
_NOTE_BYTES = 200


def child(path: str, *segments: str | int) -> str:
    """``path`` extended by JSON Pointer ``segments`` (``~`` and ``/`` escaped)."""
    for segment in segments:
        text = str(segment).replace("~", "~0").replace("/", "~1")
        path = f"{path}/{text}"
    return path


def _pointer(root: Any, ref: str) -> Any:
    """The node a local reference (``#`` or ``#/a/b``) names, or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for raw in ref[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


class Walk:
    """The state of one tool's conversion: its report, its budget, its references."""

    def __init__(self, tool: str, root: Any, changes: list[Change]) -> None:
        self.tool = tool
        self.root = root
        self.changes = changes
        self.nodes = 0
        self._reported = 0
        self._unreported = 0
        self._summary_at = -1

    def note(self, path: str, action: str, detail: str) -> None:
        """Report one change (past :data:`MAX_REPORT`, only counted)."""
        if self._reported < MAX_REPORT:
            self._reported += 1
            self.changes.append(Change(self.tool, path, action, detail))
            return
        self._unreported += 1
        summary = Change(self.tool, "", "cut", f"{self._unreported} more changes not listed")
        if self._summary_at < 0:
            self._summary_at = len(self.changes)
            self.changes.append(summary)
        else:
            self.changes[self._summary_at] = summary

    def over_budget(self, path: str, depth: int) -> bool:
        """Count one schema node; True (and reported) when it must be cut."""
        self.nodes += 1
        if depth > MAX_DEPTH:
            self.note(path, "cut", f"nested deeper than {MAX_DEPTH} schemas")
            return True
        if self.nodes > MAX_NODES:
            self.note(path, "cut", f"the schema has more than {MAX_NODES} nodes")
            return True
        return False

    def deref(
        self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]
    ) -> tuple[Mapping[str, Any] | None, tuple[str, ...]]:
        """``node`` with its ``$ref`` inlined (siblings win), or None when it is cut."""
        seen = refs
        while isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                self.note(path, "cut", f"recursive reference {ref!r} cut")
                return None, seen
            if len(seen) >= MAX_REF_DEPTH:
                self.note(path, "cut", f"more than {MAX_REF_DEPTH} nested references")
                return None, seen
            target = _pointer(self.root, ref)
            if not isinstance(target, Mapping):
                self.note(path, "dropped", f"reference {ref!r} does not resolve in the schema")
                return {k: v for k, v in node.items() if k != "$ref"}, seen
            self.note(path, "inlined", f"reference {ref!r} inlined")
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **siblings}
            seen = (*seen, ref)
        return node, seen


#: ``allOf`` inside ``allOf`` parts merged, at most this deep (then dropped, reported).
MAX_ALL_OF_ROUNDS = 8


def merge_all_of(walk: Walk, node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    """``node`` with its ``allOf`` merged in (properties and required united), nested too."""
    for _ in range(MAX_ALL_OF_ROUNDS):
        if not isinstance(node.get("allOf"), list):
            return node
        node = _merge_once(walk, node, path)
    if "allOf" in node:
        walk.note(child(path, "allOf"), "dropped", "allOf nested too deep to merge")
        node = {k: v for k, v in node.items() if k != "allOf"}
    return node


def _merge_once(walk: Walk, node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    parts = node["allOf"]
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for index, given in enumerate(parts):
        part = given
        if isinstance(given, Mapping) and "$ref" in given:
            resolved, _ = walk.deref(given, child(path, "allOf", index), ())
            part = resolved or {}
        if not isinstance(part, Mapping):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, Mapping):
                props = dict(merged.get("properties") or {})
                for name, schema in value.items():
                    props.setdefault(name, schema)
                merged["properties"] = props
            elif key == "required" and isinstance(value, list):
                have = list(merged.get("required") or [])
                merged["required"] = have + [n for n in value if n not in have]
            else:
                merged.setdefault(key, value)
    walk.note(child(path, "allOf"), "converted", "allOf merged into one schema")
    return merged


def note_text(keyword: str, value: Any) -> str:
    """A short human note for a dropped constraint, e.g. ``multipleOf: 5``."""
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _NOTE_BYTES:
        text = text[:_NOTE_BYTES] + "..."
    return f"{keyword}: {text}"


def with_notes(description: Any, notes: list[str]) -> str | None:
    """A description with dropped constraints appended, so the model still sees them."""
    base = description if isinstance(description, str) else ""
    if not notes:
        return base or None
    extra = "(" + "; ".join(notes) + ")"
    return f"{base} {extra}" if base else extra
