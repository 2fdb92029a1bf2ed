"""Client-side validation of tool arguments and structured results.

The one module that touches fastjsonschema (DESIGN.md §3 rule 7), and it
does so defensively, because a schema comes from an untrusted server:

* Nothing is ever fetched. fastjsonschema resolves a remote ``$ref`` by
  calling ``urlopen`` itself, so every schema is scanned first: a ``$ref`` or
  ``$dynamicRef`` that is not a same-document fragment, or any ``$id`` (which
  moves the base URI), means the schema is not compiled at all.
* Patterns never backtrack. fastjsonschema compiles ``pattern`` and
  ``patternProperties`` with Python's ``re`` (and rewrites ``$`` as ``\\Z``);
  here every pattern is recompiled from its ORIGINAL text with RE2 and
  swapped in before the generated code runs. A pattern RE2 cannot compile
  (backreferences, lookaround) disables client-side validation for that
  schema.
* Validation never refuses a call the server would accept: keywords
  fastjsonschema does not implement (2019-09/2020-12 ones such as
  ``prefixItems`` or ``unevaluatedProperties``) mean "not compiled", and the
  call goes out unvalidated with a warning. Defaults and formats are off:
  ``use_default`` would write into the caller's dict and ``use_formats``
  rejects values servers accept.

Compiled validators are cached by schema digest (bounded LRU); compiling a
large schema can take a good fraction of a second, so it happens lazily, on
a tool's first call.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

import fastjsonschema
import re2

__all__ = ["SchemaCache", "Validator", "unsupported_reason"]

_log = logging.getLogger(__name__)

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is our warning, not stderr noise


def _re2(pattern: str) -> Any:
    return re2.compile(pattern, options=_RE2_OPTIONS)


#: Keywords fastjsonschema does not implement correctly (or at all).
UNSUPPORTED_KEYWORDS = frozenset(
    {
        "prefixItems",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentSchemas",
        "dependentRequired",
        "contentSchema",
        "$vocabulary",
    }
)
# Keywords whose value is a map of names to schemas (names are not keywords).
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependencies", "dependentSchemas"}
)


class Validator:
    """A compiled schema: ``check(instance)`` returns ``None`` or a failure text."""

    __slots__ = ("_validate",)

    def __init__(self, validate: Callable[[Any], Any]) -> None:
        self._validate = validate

    def check(self, instance: Any) -> str | None:
        """Validate ``instance``; return ``None`` when it passes, else "<path>: <problem>"."""
        try:
            self._validate(instance)
        except fastjsonschema.JsonSchemaValueException as exc:
            return f"{_json_path(exc.name or '')}: {_problem(exc)}"
        except (RecursionError, re2.error, TypeError, ValueError) as exc:
            # A validator that cannot decide must not refuse: report, don't block.
            _log.debug("schema validation could not decide: %r", exc)
            return None
        return None

    def violation(self, instance: Any) -> tuple[str, str] | None:
        """The failing field's JSON path and the keyword it fails, or ``None``.

        Unlike :meth:`check`, it never quotes the instance: it is safe to log
        (a missing required field is named from the schema's own list).
        """
        try:
            self._validate(instance)
        except fastjsonschema.JsonSchemaValueException as exc:
            path = _json_path(exc.name or "")
            rule = str(exc.rule or "schema")[:64]
            value, wanted = exc.value, exc.rule_definition
            if rule == "required" and isinstance(value, dict) and isinstance(wanted, list):
                missing = [n for n in wanted if isinstance(n, str) and n not in value]
                if missing:
                    path = f"{path}.{missing[0][:64]}"
            return path[:256], rule
        except (RecursionError, re2.error, TypeError, ValueError):
            return None
        return None


def _json_path(name: str) -> str:
    # fastjsonschema names the failing value "data.a.b[0]"; show it as "$.a.b[0]".
    if name.startswith("data"):
        return "$" + name[4:]
    return name or "$"


def _problem(exc: fastjsonschema.JsonSchemaValueException) -> str:
    message = str(exc.message)
    name = str(exc.name or "")
    if message.startswith(name + " "):
        message = message[len(name) + 1 :]
    return message[:300]


def _foreign_ref(node: Any) -> bool:
    """Whether any ``$ref`` anywhere in ``node`` (even inside a value) leaves the document.

    fastjsonschema resolves every ``$ref`` it finds, including inside
    ``enum``/``const``/``default``/``examples`` values.
    """
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                # fastjsonschema resolves a string "$ref" wherever it sits.
                if key == "$ref" and isinstance(value, str) and not value.startswith("#"):
                    return True
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return False


class _RefuseEveryScheme(dict[str, Callable[[str], Any]]):
    """A ``handlers`` mapping that claims every URI scheme and fetches nothing.

    fastjsonschema falls back to ``urlopen`` for a scheme missing from its
    handlers; claiming them all closes that door even if the scan missed a
    reference.
    """

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str], Any]:
        return _refuse_fetch

    def get(self, key: str, default: Any = None) -> Callable[[str], Any]:
        return _refuse_fetch


def _refuse_fetch(uri: str) -> Any:
    raise ValueError("remote schema references are never fetched")


def unsupported_reason(schema: Any) -> str | None:
    """Why ``schema`` must not be compiled here, or ``None`` if it may be."""
    if _foreign_ref(schema):
        return "it refers to another document with $ref; nothing is ever fetched"
    patterns: list[str] = []
    stack: list[tuple[Any, bool]] = [(schema, True)]
    while stack:
        node, is_schema = stack.pop()
        if isinstance(node, list):
            stack.extend((item, True) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if not is_schema:  # a name map: every value is a schema
            stack.extend((value, True) for value in node.values())
            continue
        for key, value in node.items():
            if key in UNSUPPORTED_KEYWORDS:
                return f"it uses the keyword {key!r}, which client-side validation does not support"
            if key in ("$ref", "$dynamicRef") and (
                not isinstance(value, str) or not value.startswith("#")
            ):
                return "it refers to another document with $ref; nothing is ever fetched"
            if key == "$id" or (key == "id" and isinstance(value, str)):
                # draft-04 spells it "id": either moves the base URI.
                return "it sets $id, which moves the base URI"
            if key == "pattern" and isinstance(value, str):
                patterns.append(value)
            if key == "patternProperties" and isinstance(value, dict):
                patterns.extend(k for k in value if isinstance(k, str))
            if key in _NAME_MAPS and isinstance(value, dict):
                stack.append((value, False))
            elif key not in ("enum", "const", "default", "examples") and isinstance(
                value, dict | list
            ):
                stack.append((value, True))
    for pattern in patterns:
        try:
            _re2(pattern)
        except re2.error:
            return f"its pattern {pattern[:60]!r} needs backtracking (RE2 cannot run it)"
    return None


def compile_schema(schema: Any) -> Validator | str:
    """Compile ``schema``; return the validator, or why it was not compiled."""
    reason = unsupported_reason(schema)
    if reason is not None:
        return reason
    try:
        # _factory is fastjsonschema's own compile() minus the exec, which lets
        # us swap every regex for RE2 before the generated code can run one.
        resolver, generator = fastjsonschema._factory(
            schema,
            handlers=_RefuseEveryScheme(),
            formats={},
            use_default=False,
            use_formats=False,
        )
        global_state = generator.global_state
        patterns = global_state.get("REGEX_PATTERNS", {})
        for original in list(patterns):
            patterns[original] = _re2(original)
        exec(generator.func_code, global_state)  # fastjsonschema's own generated code
        validate = global_state[resolver.get_scope_name()]
    except Exception as exc:  # any failure to compile means "not validated", never a refusal
        return f"it could not be compiled for client-side validation ({type(exc).__name__})"
    return Validator(validate)


class SchemaCache:
    """A bounded LRU of compiled schemas keyed by schema digest.

    Thread safety: any thread. Compilation runs outside the lock; two threads
    compiling the same schema at once both succeed and one result is kept.
    """

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()  # guards _entries
        self._entries: collections.OrderedDict[str, Validator | str] = collections.OrderedDict()

    def get(self, digest: str, schema: Callable[[], Any]) -> Validator | str:
        """The validator for ``digest`` (compiling ``schema()`` on a miss), or a reason."""
        with self._lock:
            entry = self._entries.get(digest)
            if entry is not None:
                self._entries.move_to_end(digest)
                return entry
        entry = compile_schema(schema())
        with self._lock:
            self._entries[digest] = entry
            self._entries.move_to_end(digest)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        return entry
