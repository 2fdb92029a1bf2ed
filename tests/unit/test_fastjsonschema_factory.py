"""The private fastjsonschema API ``_internal/schema.py`` relies on keeps its shape.

``compile_schema`` calls ``fastjsonschema._factory`` (``compile()`` minus the
``exec``) so that every ``pattern`` and ``patternProperties`` regex can be
swapped for RE2 before the generated code can run one. ``compile_schema``
turns any exception into "not validated", so if a fastjsonschema release
changed this private shape, client-side validation would silently switch off
(or, worse, Python's backtracking ``re`` would run untrusted patterns). These
tests fail loudly, naming what changed, instead.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

import fastjsonschema
import pytest
import re2

from mcpclient._internal import schema as schema_module
from mcpclient._internal.schema import Validator, compile_schema

RE2 = type(re2.compile("x"))
CHANGED = "fastjsonschema's private _factory changed shape; update _internal/schema.py"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
    "patternProperties": {"^x-": {"type": "integer"}},
}


def _factory(schema: Any) -> tuple[Any, Any]:
    factory = getattr(fastjsonschema, "_factory", None)
    assert callable(factory), f"{CHANGED}: fastjsonschema._factory is gone"
    params = inspect.signature(factory).parameters
    for name in ("handlers", "formats", "use_default", "use_formats"):
        assert name in params, f"{CHANGED}: it no longer takes {name}="
    result = factory(
        schema,
        handlers=schema_module._RefuseEveryScheme(),
        formats={},
        use_default=False,
        use_formats=False,
    )
    assert isinstance(result, tuple) and len(result) == 2, (
        f"{CHANGED}: it returns {type(result).__name__}, not (resolver, generator)"
    )
    return result


def test_factory_returns_resolver_and_generator_with_the_attributes_we_use() -> None:
    resolver, generator = _factory(SCHEMA)
    scope = resolver.get_scope_name()
    assert isinstance(scope, str) and scope, f"{CHANGED}: resolver.get_scope_name()"
    assert isinstance(generator.func_code, str), f"{CHANGED}: generator.func_code"
    state = generator.global_state
    assert isinstance(state, dict), f"{CHANGED}: generator.global_state"
    patterns = state.get("REGEX_PATTERNS")
    assert isinstance(patterns, dict), f"{CHANGED}: global_state['REGEX_PATTERNS']"
    # Keyed by the ORIGINAL pattern text: RE2 is compiled from the key.
    assert set(patterns) == {"^[A-Z]{3}$", "^x-"}, f"{CHANGED}: REGEX_PATTERNS keys"


def test_generated_code_looks_patterns_up_in_the_dict_we_swap() -> None:
    resolver, generator = _factory({"type": "string", "pattern": "^a$"})
    state = generator.global_state
    # The generated code must read REGEX_PATTERNS at call time from the very
    # dict global_state handed out; a copy would leave Python's re in charge.
    seen: list[str] = []

    class Spy:
        def search(self, text: str) -> bool:
            seen.append(text)
            return True

    state["REGEX_PATTERNS"]["^a$"] = Spy()
    exec(generator.func_code, state)
    validate = state[resolver.get_scope_name()]
    validate("zzz")  # Spy says it matches, so no exception
    assert seen == ["zzz"], f"{CHANGED}: the generated code does not use REGEX_PATTERNS"


def test_compile_schema_still_compiles_and_runs_re2() -> None:
    validator = compile_schema(SCHEMA)
    assert isinstance(validator, Validator), f"{CHANGED}: compile_schema said {validator!r}"
    patterns = validator._validate.__globals__["REGEX_PATTERNS"]
    assert patterns and all(isinstance(p, RE2) for p in patterns.values()), patterns
    assert validator.check({"code": "ABC", "x-n": 1}) is None
    assert validator.check({"code": "abc"}) is not None
    assert validator.check({"x-n": "one"}) is not None


def test_an_exponential_pattern_for_re_is_linear_under_re2() -> None:
    validator = compile_schema({"type": "string", "pattern": "^(a+)+$"})
    assert isinstance(validator, Validator), validator
    # Checked first: under Python's re the check below would never end.
    patterns = validator._validate.__globals__["REGEX_PATTERNS"]
    assert all(isinstance(p, RE2) for p in patterns.values()), f"{CHANGED}: {patterns}"
    start = time.perf_counter()
    assert validator.check("a" * 64 + "!") is not None  # Python's re: ~forever
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("keyword", ["pattern", "patternProperties"])
def test_every_pattern_keyword_is_swapped(keyword: str) -> None:
    schema: dict[str, Any] = (
        {"type": "string", "pattern": "b+"}
        if keyword == "pattern"
        else {"type": "object", "patternProperties": {"b+": {"type": "string"}}}
    )
    validator = compile_schema(schema)
    assert isinstance(validator, Validator), validator
    patterns = validator._validate.__globals__["REGEX_PATTERNS"]
    assert list(patterns) == ["b+"] and isinstance(patterns["b+"], RE2)
