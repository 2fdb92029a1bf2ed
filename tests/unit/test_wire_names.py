"""Issue 16: MCP's camelCase wire names live in one place, ``mcpclient/_internal/wire/``.

Every module under ``mcpclient/`` is parsed with ``ast`` (nothing is
imported) and each string constant that is a camelCase identifier
(``"inputSchema"``, ``"progressToken"``) is a wire key spelled outside the
wire package, unless it is in ``mcpclient/testing/`` (the test server speaks
the wire itself), in ``mcpclient/export/`` or ``mcpclient/config/`` (LLM
providers' and hosts' configuration formats, not MCP's), or on the short
allow-list below. Protocol method and
notification names (``"sampling/createMessage"``,
``"notifications/tools/list_changed"``) are paths, not keys, and never
match.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mcpclient

from ..support.sources import parsed

ROOT = Path(mcpclient.__file__).resolve().parent
EXEMPT_DIRS = (
    "_internal/wire/",
    "testing/",  # the test server speaks the MCP wire itself
    # The LLM providers' own formats (Gemini's functionDeclarations, their JSON
    # Schema dialects' minItems...): another wire, kept in its own package.
    "export/",
    # Hosts' MCP configuration files (mcpServers, httpUrl, envFile): their formats, not MCP's.
    "config/",
)
CAMEL = re.compile(r"_?[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*")

#: (module, string): camelCase strings that are not MCP wire keys.
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    # JSON Schema keywords: the argument validator's vocabulary, not MCP's.
    {
        ("_internal/schema.py", keyword)
        for keyword in (
            "prefixItems",
            "unevaluatedProperties",
            "unevaluatedItems",
            "dependentSchemas",
            "dependentRequired",
            "contentSchema",
            "patternProperties",
        )
    }
    # The CLI coerces key=value words by the tool's input schema (JSON Schema unions).
    | {("cli/coerce.py", keyword) for keyword in ("anyOf", "oneOf")}
    # SampleResult's public default stop reason is the spec's value, shown to hosts as is.
    | {("handlers.py", "endTurn")}
)


def camel_constants(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each string constant in ``source`` that is a camelCase name."""
    found = []
    for node in ast.walk(parsed(source)):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and CAMEL.fullmatch(node.value)
        ):
            found.append((node.lineno, node.value))
    return sorted(found)


def test_no_camelcase_wire_key_outside_the_wire_package() -> None:
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module.startswith(EXEMPT_DIRS):
            continue
        for line, text in camel_constants(path.read_text(encoding="utf-8")):
            if (module, text) not in ALLOWED:
                offenders.append(f"mcpclient/{module}:{line}: {text!r}")
    assert not offenders, "wire names outside mcpclient/_internal/wire/:\n" + "\n".join(offenders)


def test_every_allowed_name_is_still_used() -> None:
    """A stale allow-list entry would hide a future offender of the same name."""
    used = set()
    for module, text in ALLOWED:
        source = (ROOT / module).read_text(encoding="utf-8")
        if any(found == text for _, found in camel_constants(source)):
            used.add((module, text))
    assert used == ALLOWED


def test_the_checker_finds_keys_and_skips_paths_and_prose() -> None:
    source = (
        'x = params.get("progressToken")\n'
        'y = {"inputSchema": 1, "name": 2, "_meta": 3}\n'
        'z = "notifications/tools/list_changed"\n'
        'w = "sampling/createMessage"\n'
        '"""A docstring naming inputSchema in prose."""\n'
    )
    assert camel_constants(source) == [(1, "progressToken"), (2, "inputSchema")]


def test_the_wire_package_holds_the_names() -> None:
    wire = ROOT / "_internal" / "wire"
    names = {
        text
        for path in wire.rglob("*.py")
        for _, text in camel_constants(path.read_text(encoding="utf-8"))
    }
    assert {"inputSchema", "structuredContent", "progressToken", "nextCursor"} <= names
