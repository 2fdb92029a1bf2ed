"""JSON Schema -> Gemini's ``Schema``: the select subset of OpenAPI 3.0 it accepts.

Gemini's function declarations take ``type``, ``format``, ``title``,
``description``, ``nullable``, ``enum`` (strings), ``items``, ``minItems``,
``maxItems``, ``properties``, ``required``, ``minProperties``,
``maxProperties``, ``minLength``, ``maxLength``, ``pattern``, ``minimum``,
``maximum``, ``default``, ``example``, ``anyOf`` and ``propertyOrdering``, and
nothing else. So: references are inlined (recursion cut), a type list becomes
``nullable`` or ``anyOf``, ``oneOf`` becomes ``anyOf``, ``allOf`` is merged,
``const`` becomes a one-value ``enum``, and every other keyword is dropped and
reported (a dropped constraint is also noted in the description, so the model
still reads it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpclient.export._schema import Walk, child, merge_all_of, note_text, with_notes

__all__ = ["GEMINI_KEYWORDS", "to_gemini_schema"]

#: Every keyword a Gemini ``Schema`` may carry.
GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "default",
        "example",
        "anyOf",
        "propertyOrdering",
    }
)
_PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
_COPIED: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "title": str,
    "pattern": str,
    "minItems": int,
    "maxItems": int,
    "minProperties": int,
    "maxProperties": int,
    "minLength": int,
    "maxLength": int,
    "minimum": (int, float),
    "maximum": (int, float),
}
# Keywords handled by hand below (or dropped on purpose, silently: inlined).
_HANDLED = frozenset(
    {
        "type",
        "nullable",
        "description",
        "anyOf",
        "oneOf",
        "const",
        "enum",
        "properties",
        "required",
        "items",
        "default",
        "example",
        "$defs",
        "definitions",
        "propertyOrdering",
    }
)
# Dropped constraints worth keeping in the description.
_NOTED = frozenset(
    {"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "additionalProperties"}
)
_TYPE_KEYWORDS = {
    "object": {"properties", "required", "minProperties", "maxProperties", "propertyOrdering"},
    "array": {"items", "minItems", "maxItems", "prefixItems"},
    "string": {"minLength", "maxLength", "pattern", "format", "enum"},
    "number": {"minimum", "maximum", "format", "exclusiveMinimum", "exclusiveMaximum"},
    "integer": {"minimum", "maximum", "format", "exclusiveMinimum", "exclusiveMaximum"},
}
_ALL_TYPE_KEYWORDS = frozenset(k for keys in _TYPE_KEYWORDS.values() for k in keys)


def to_gemini_schema(walk: Walk, schema: Any) -> dict[str, Any]:
    """The Gemini form of ``schema`` (a new dict); changes go to ``walk``."""
    return _node(walk, schema, "", 0, ())


def _node(walk: Walk, node: Any, path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
    if walk.over_budget(path, depth):
        return {}
    if node is True or node == {}:
        return {}
    if not isinstance(node, Mapping):
        walk.note(path, "dropped", f"not a schema ({type(node).__name__}); any value allowed")
        return {}
    resolved, refs = walk.deref(node, path, refs)
    if resolved is None:
        return {"description": "(recursive schema cut)"}
    node = merge_all_of(walk, resolved, path)
    out: dict[str, Any] = {}
    notes: list[str] = []
    nullable = node.get("nullable") is True

    types = node.get("type")
    if isinstance(types, list):
        names = [t for t in types if isinstance(t, str)]
        if "null" in names:
            nullable = True
            names = [t for t in names if t != "null"]
        if len(names) > 1:
            walk.note(child(path, "type"), "converted", f"type list {names} became anyOf")
            base = {k: v for k, v in node.items() if k not in ("type", "description", "title")}
            out["anyOf"] = [
                _node(walk, _only_for(base, name), child(path, "type", i), depth + 1, refs)
                for i, name in enumerate(names)
            ]
            types = None
            node = {k: v for k, v in node.items() if k not in _ALL_TYPE_KEYWORDS}
        else:
            if nullable:
                walk.note(child(path, "type"), "converted", "null in the type list became nullable")
            types = names[0] if names else None
    if types == "null":
        walk.note(child(path, "type"), "converted", 'type "null" became nullable')
        nullable, types = True, None
    if isinstance(types, str):
        if types in _TYPES:
            out["type"] = types
        else:
            walk.note(child(path, "type"), "dropped", f"unknown type {types!r}")

    branches_key = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else ""
    if branches_key and "anyOf" not in out:
        branches = node[branches_key]
        if branches_key == "oneOf":
            walk.note(child(path, "oneOf"), "converted", "oneOf became anyOf (exclusivity lost)")
        if isinstance(branches, list):
            kept = []
            for index, branch in enumerate(branches):
                if (
                    isinstance(branch, Mapping)
                    and branch.get("type") == "null"
                    and len(branch) == 1
                ):
                    nullable = True
                    walk.note(
                        child(path, branches_key, index), "converted", "null branch became nullable"
                    )
                    continue
                kept.append(_node(walk, branch, child(path, branches_key, index), depth + 1, refs))
            if len(kept) == 1 and not out.get("type"):
                for key, value in kept[0].items():
                    out.setdefault(key, value)
            elif kept:
                out["anyOf"] = kept

    if "const" in node:
        value = node["const"]
        if isinstance(value, str):
            out["enum"] = [value]
            out.setdefault("type", "string")
            walk.note(child(path, "const"), "converted", "const became a one-value enum")
        else:
            notes.append(note_text("const", value))
            walk.note(child(path, "const"), "dropped", "Gemini enums hold strings only")
    elif isinstance(node.get("enum"), list):
        values = node["enum"]
        if None in values:
            nullable = True
            values = [v for v in values if v is not None]
        if values and all(isinstance(v, str) for v in values):
            out["enum"] = list(values)
            if out.get("type", "string") != "string":
                walk.note(child(path, "enum"), "converted", "enum with a non-string type")
            out["type"] = "string"
        elif values:
            notes.append(note_text("enum", values))
            walk.note(child(path, "enum"), "dropped", "Gemini enums hold strings only")

    props = node.get("properties")
    if isinstance(props, Mapping):
        for name in props:
            if not _PARAMETER_NAME.fullmatch(str(name)):
                walk.note(
                    child(path, "properties", name),
                    "kept",
                    "Gemini documents parameter names as [A-Za-z_][A-Za-z0-9_]{0,63};"
                    " renaming it would change the arguments",
                )
        out["properties"] = {
            str(name): _node(walk, sub, child(path, "properties", name), depth + 1, refs)
            for name, sub in props.items()
        }
        out.setdefault("type", "object")
    required = node.get("required")
    if isinstance(required, list):
        have = out.get("properties", {})
        kept_required = [n for n in required if isinstance(n, str) and n in have]
        if len(kept_required) != len(required):
            walk.note(child(path, "required"), "dropped", "names no property of this object")
        if kept_required:
            out["required"] = kept_required
    ordering = node.get("propertyOrdering")
    if isinstance(ordering, list) and all(isinstance(n, str) for n in ordering):
        out["propertyOrdering"] = list(ordering)

    items = node.get("items", node.get("prefixItems"))
    if items is not None and "type" not in out and "anyOf" not in out:
        out["type"] = "array"
    if isinstance(items, list):
        walk.note(child(path, "items"), "converted", "tuple items became anyOf of their schemas")
        converted = [
            _node(walk, s, child(path, "items", i), depth + 1, refs) for i, s in enumerate(items)
        ]
        out["items"] = {"anyOf": converted} if len(converted) > 1 else (converted or [{}])[0]
    elif items is not None:
        out["items"] = _node(walk, items, child(path, "items"), depth + 1, refs)
    elif out.get("type") == "array":
        walk.note(child(path, "items"), "kept", "an array without items; Gemini may refuse it")
    if "prefixItems" in node and "items" in node:
        walk.note(child(path, "prefixItems"), "dropped", "Gemini has no tuple arrays")

    for key, kind in _COPIED.items():
        value = node.get(key)
        if value is None:
            continue
        if isinstance(value, kind) and not isinstance(value, bool):
            out[key] = value
        else:
            walk.note(child(path, key), "dropped", f"{key} must be a {kind}")
    for key in ("default", "example"):
        if key in node:
            out[key] = node[key]

    for key, value in node.items():
        if key in _HANDLED or key in _COPIED or key in GEMINI_KEYWORDS or key == "allOf":
            continue
        if key == "prefixItems" and "items" not in node:
            continue
        if key in _NOTED and value is not False:
            notes.append(note_text(key, value))
        walk.note(child(path, key), "dropped", f"Gemini does not support {key!r}")

    description = with_notes(node.get("description"), notes)
    if description:
        out["description"] = description
    if nullable:
        out["nullable"] = True
    return out


def _only_for(schema: Mapping[str, Any], type_name: str) -> dict[str, Any]:
    """The part of a multi-type schema that applies to ``type_name``."""
    keep = _TYPE_KEYWORDS.get(type_name, set())
    out = {k: v for k, v in schema.items() if k not in _ALL_TYPE_KEYWORDS or k in keep}
    out["type"] = type_name
    return out
