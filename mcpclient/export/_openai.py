"""JSON Schema for OpenAI (strict and not) and Anthropic tool parameters.

Not strict (OpenAI, Anthropic): the schema is kept as written, bounded
(see ``_schema``), with an object root; OpenAI also gets ``items`` on an
array schema that lacks it, which it refuses otherwise.

Strict (OpenAI Structured Outputs): references inlined, every property
listed in ``required`` with the optional ones made nullable, and
``additionalProperties: false`` on every object; ``oneOf`` becomes ``anyOf``,
``allOf`` is merged, and keywords strict mode does not support are dropped,
reported, and noted in the description. A schema that strict mode cannot
express without changing what it accepts (an open or free-form object, a
schema that accepts any value, recursion, tuples, or more than strict mode's
nesting and size limits) raises :class:`NotStrict`; the exporter then sends
that tool with ``strict: false`` and reports why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpclient.export._schema import Walk, child, merge_all_of, note_text, with_notes

__all__ = [
    "STRICT_FORMATS",
    "STRICT_KEYWORDS",
    "NotStrict",
    "to_loose_schema",
    "to_strict_schema",
]

#: Keywords strict mode accepts.
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "description",
        "title",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
#: String formats strict mode accepts.
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
#: Strict mode's documented limits.
STRICT_MAX_NESTING = 10
STRICT_MAX_PROPERTIES = 5000
STRICT_MAX_ENUM_VALUES = 1000
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


class NotStrict(Exception):  # noqa: N818 - a control-flow signal, never raised to a caller
    """The schema cannot be made strict without changing what it accepts."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def object_root(walk: Walk, schema: Any) -> dict[str, Any]:
    """``schema`` as an object schema: the root every provider requires."""
    if not isinstance(schema, Mapping):
        walk.note("", "converted", "the input schema was not an object schema; any object allowed")
        return {"type": "object"}
    if "$ref" in schema or "allOf" in schema:
        resolved, _ = walk.deref(schema, "", ())
        schema = merge_all_of(walk, resolved or {}, "")
    root = dict(schema)
    kind = root.get("type")
    if kind == "object":
        return root
    if kind is None and not {"anyOf", "oneOf"} & set(root):
        walk.note("", "added", 'type "object" on the root')
        root["type"] = "object"
        return root
    if isinstance(kind, list) and "object" in kind:
        walk.note(
            "", "converted", 'the root type list narrowed to "object" (arguments are an object)'
        )
        root["type"] = "object"
        return root
    walk.note("", "converted", "the root was not an object schema; wrapped in an object")
    return {"type": "object"}


def to_loose_schema(walk: Walk, schema: Any, *, array_items: bool) -> dict[str, Any]:
    """A bounded copy of ``schema`` with an object root (OpenAI non-strict, Anthropic)."""
    copied = _copy(walk, object_root(walk, schema), "", 0, array_items)
    return copied if isinstance(copied, dict) else {"type": "object"}


def _copy(walk: Walk, node: Any, path: str, depth: int, array_items: bool) -> Any:
    if not isinstance(node, Mapping):
        return node if isinstance(node, bool) else {}
    if walk.over_budget(path, depth):
        return {}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                str(k): _copy(walk, v, child(path, key, k), depth + 1, array_items)
                for k, v in value.items()
            }
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                _copy(walk, v, child(path, key, i), depth + 1, array_items)
                for i, v in enumerate(value)
            ]
        elif key in _SUBSCHEMAS and isinstance(value, Mapping):
            out[key] = _copy(walk, value, child(path, key), depth + 1, array_items)
        elif key == "items" and isinstance(value, list):
            out[key] = [
                _copy(walk, v, child(path, key, i), depth + 1, array_items)
                for i, v in enumerate(value)
            ]
        else:
            out[key] = _plain(value)
    kind = out.get("type")
    is_array = kind == "array" or (isinstance(kind, list) and "array" in kind)
    if array_items and is_array and "items" not in out:
        walk.note(child(path, "items"), "added", "an array schema needs items; any item allowed")
        out["items"] = {}
    return out


def _plain(value: Any) -> Any:
    """A copy of a JSON value (never the caller's own list or dict)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class _Strict:
    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.properties = 0
        self.enum_values = 0

    def node(self, node: Any, path: str, nesting: int, refs: tuple[str, ...]) -> dict[str, Any]:
        walk = self.walk
        if walk.over_budget(path, nesting):
            raise NotStrict(path, "the schema is too large for strict mode")
        if nesting > STRICT_MAX_NESTING:
            raise NotStrict(path, f"nested deeper than strict mode's {STRICT_MAX_NESTING} levels")
        if not isinstance(node, Mapping) or not node:
            raise NotStrict(path, "a schema that accepts any value")
        resolved, refs = walk.deref(node, path, refs)
        if resolved is None:
            raise NotStrict(path, "a recursive schema")
        node = merge_all_of(walk, resolved, path)
        out: dict[str, Any] = {}
        notes: list[str] = []
        kind = node.get("type")
        if isinstance(kind, str | list):
            given = [kind] if isinstance(kind, str) else list(kind)
            if not all(isinstance(k, str) and k in _TYPES for k in given):
                raise NotStrict(child(path, "type"), f"an unknown type in {kind!r}")
            out["type"] = kind if isinstance(kind, str) else list(kind)
        elif "properties" in node:
            out["type"] = "object"
            walk.note(path, "added", 'type "object" (the schema has properties)')
        branches_key = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else ""
        if branches_key:
            branches = node[branches_key]
            if not isinstance(branches, list) or not branches:
                raise NotStrict(child(path, branches_key), "an empty or malformed union")
            if branches_key == "oneOf":
                walk.note(
                    child(path, "oneOf"), "converted", "oneOf became anyOf (exclusivity lost)"
                )
            out["anyOf"] = [
                self.node(b, child(path, branches_key, i), nesting + 1, refs)
                for i, b in enumerate(branches)
            ]
        if "const" in node:
            out["const"] = _plain(node["const"])
        if isinstance(node.get("enum"), list):
            self.enum_values += len(node["enum"])
            if self.enum_values > STRICT_MAX_ENUM_VALUES:
                raise NotStrict(child(path, "enum"), "more enum values than strict mode allows")
            out["enum"] = _plain(node["enum"])
        if "type" not in out and "anyOf" not in out:
            inferred = _type_of([out["const"]] if "const" in out else out.get("enum", []))
            if inferred:
                out["type"] = inferred
        if not {"type", "anyOf", "const", "enum"} & set(out):
            raise NotStrict(path, "a schema that accepts any value")
        declared = out.get("type")
        kinds: list[str] = [declared] if isinstance(declared, str) else list(declared or [])
        if "object" in kinds:
            self._object(node, out, path, nesting, refs)
        if "array" in kinds:
            items = node.get("items")
            if not isinstance(items, Mapping) or "prefixItems" in node:
                raise NotStrict(child(path, "items"), "an array without one items schema")
            out["items"] = self.node(items, child(path, "items"), nesting + 1, refs)
        for key, value in node.items():
            if key in out or key in ("properties", "required", "additionalProperties", "items"):
                continue
            if key in ("oneOf", "allOf", "$defs", "definitions", "type"):
                continue
            if key == "format" and value not in STRICT_FORMATS:
                notes.append(note_text(key, value))
                walk.note(
                    child(path, key), "dropped", f"format {value!r} is not supported in strict mode"
                )
                continue
            if key in STRICT_KEYWORDS and key != "description":
                out[key] = _plain(value)
                continue
            if key == "description":
                continue
            if key == "patternProperties":
                raise NotStrict(child(path, key), "patternProperties (an open object)")
            if key not in ("$schema", "$id", "$comment", "title", "examples", "default"):
                notes.append(note_text(key, value))
            walk.note(child(path, key), "dropped", f"strict mode does not support {key!r}")
        description = with_notes(node.get("description"), notes)
        if description:
            out["description"] = description
        return out

    def _object(
        self,
        node: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        nesting: int,
        refs: tuple[str, ...],
    ) -> None:
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if not isinstance(props, Mapping) or not props:
            if extra is False:
                out["properties"], out["required"], out["additionalProperties"] = {}, [], False
                return
            raise NotStrict(path, "a free-form object (no properties)")
        if extra not in (None, False):
            raise NotStrict(child(path, "additionalProperties"), "an object open to other keys")
        required = node.get("required")
        required = set(required) if isinstance(required, list) else set()
        self.properties += len(props)
        if self.properties > STRICT_MAX_PROPERTIES:
            raise NotStrict(path, "more properties than strict mode allows")
        converted: dict[str, Any] = {}
        for name, sub in props.items():
            where = child(path, "properties", name)
            schema = self.node(sub, where, nesting + 1, refs)
            if name not in required:
                schema = _nullable(schema)
                self.walk.note(where, "converted", "optional property made required and nullable")
            converted[str(name)] = schema
        out["properties"] = converted
        out["required"] = list(converted)
        if extra is None:
            self.walk.note(
                child(path, "additionalProperties"), "added", "additionalProperties: false"
            )
        out["additionalProperties"] = False


def _type_of(values: list[Any]) -> str | list[str] | None:
    """The JSON type(s) of ``values``, for an enum or const that gives none."""
    names = []
    for value in values:
        if value is None:
            name = "null"
        elif isinstance(value, bool):
            name = "boolean"
        elif isinstance(value, int):
            name = "integer"
        elif isinstance(value, float):
            name = "number"
        elif isinstance(value, str):
            name = "string"
        else:
            return None
        if name not in names:
            names.append(name)
    if not names:
        return None
    return names[0] if len(names) == 1 else names


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null``."""
    out = dict(schema)
    kind = out.get("type")
    if "const" in out or ("anyOf" in out and "type" not in out):
        branches = out.pop("anyOf", None)
        if branches is not None and not out:
            if not any(b.get("type") == "null" for b in branches):
                branches = [*branches, {"type": "null"}]
            return {"anyOf": branches}
        if branches is not None:
            out["anyOf"] = branches
        return {"anyOf": [out, {"type": "null"}]}
    if isinstance(kind, str):
        out["type"] = [kind, "null"] if kind != "null" else "null"
    elif isinstance(kind, list):
        out["type"] = kind if "null" in kind else [*kind, "null"]
    else:
        return {"anyOf": [out, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def to_strict_schema(walk: Walk, schema: Any) -> dict[str, Any]:
    """The strict form of ``schema``; raises :class:`NotStrict` when there is none."""
    root = object_root(walk, schema)
    converted = _Strict(walk).node(root, "", 0, ())
    if converted.get("type") != "object" or "anyOf" in converted:
        raise NotStrict("", "the root must be a plain object schema")
    return converted
