"""DESIGN.md §3 rule 1: a module imports only from its own layer or the layers below.

Every module under ``mcpclient/`` is parsed with ``ast`` (nothing is imported)
and each import it makes, at module level or inside a function, absolute or
relative, or through ``importlib.import_module``/``__import__`` with a literal
name, is checked against the layer map. Imports under ``if TYPE_CHECKING:``
never run and are exempt from the ordering (not from ``mcpclient.testing``'s
isolation). A module missing from the map fails, so a new module must be placed.

No two modules may import each other, directly or round a longer loop: every
import counts for that, those under ``if TYPE_CHECKING:`` and inside
functions included (a type-only or deferred import hides a cycle, it does
not remove it). Importing a submodule is not counted as importing the
packages above it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import mcpclient

from ..support.sources import parsed

ROOT = Path(mcpclient.__file__).resolve().parent

# Lowest first. "x.*" covers the package x and everything under it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "L0 pure helpers",
        (
            "mcpclient._internal",  # the empty package marker itself
            "mcpclient._core",  # the package marker
            "mcpclient._core.watcher",  # the deadline watcher (one thread, a heap)
            "mcpclient._core.limits",
            "mcpclient._core.naming",
            "mcpclient._core.canonical",
            "mcpclient._core.digest",
            "mcpclient._core.deadline",
            "mcpclient._core.jsonio",
            "mcpclient._core.version",
            "mcpclient._core.backoff",  # retry budget arithmetic, stdlib only
            "mcpclient._core.threads",  # the on-demand worker primitive, stdlib only
            "mcpclient._core.frontmatter",  # skill frontmatter (YAML subset), stdlib only
            "mcpclient._core.redaction",  # configured secrets, redacted from messages
            "mcpclient._core.statedir",  # the user state directory, stdlib only
        ),
    ),
    (
        "L1 public values",
        (
            "mcpclient.errors",
            "mcpclient.compat",
            "mcpclient.definition",
            "mcpclient.transports",
            "mcpclient.calls",
            "mcpclient.handlers",
            "mcpclient.catalog",
            "mcpclient.content",
            "mcpclient.status",
            "mcpclient.skills",
            "mcpclient.events",
            "mcpclient.tasks",
            "mcpclient.hooks",  # call hook values (CallHooks, CallInfo, Decision)
            "mcpclient._core.checks",
        ),
    ),
    (
        "L2 value-aware helpers",
        (
            "mcpclient._internal.schema",
            # host configuration files -> ServerConfig/Definition; never the client
            "mcpclient.config.*",
            # tools for LLMs: values in, dicts out; Client.run_tool_calls delegates to it,
            # so it must sit below the client (it reaches a client through a Protocol)
            "mcpclient.export.*",
            "mcpclient._internal.wire.*",  # every wire <-> value mapping (cattrs)
            # host configuration files -> ServerConfig/Definition; never the client
            "mcpclient.config.*",
            # OpenTelemetry (a soft dependency): the call path's hooks, and the public
            # process-wide switch over them; it reads a binding's state (type-only import)
            "mcpclient._internal.telemetry",
            "mcpclient.telemetry",
        ),
    ),
    ("L3 transports", ("mcpclient._internal.transport.*", "mcpclient.auth.*")),
    ("L4 session", ("mcpclient._internal.session.*",)),
    ("L5 client", ("mcpclient.client", "mcpclient._internal.client.*")),
    (
        "L6 host",
        (
            "mcpclient.host",
            "mcpclient._internal.host.*",
            "mcpclient",
        ),
    ),
    # The command line drives the public API (and the config and export layers).
    ("L7 command line", ("mcpclient.cli.*", "mcpclient.__main__")),
]
TESTING = "mcpclient.testing"
STDLIB = frozenset(sys.stdlib_module_names)


def layer_of(module: str) -> int | None:
    """The layer index of ``module``, or None when the map does not place it."""
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if pattern.endswith(".*"):
                prefix = pattern[:-2]
                if module == prefix or module.startswith(prefix + "."):
                    return index
            elif module == pattern:
                return index
    return None


def is_testing(module: str) -> bool:
    return module == TESTING or module.startswith(TESTING + ".")


def is_ours(module: str) -> bool:
    return module == "mcpclient" or module.startswith("mcpclient.")


def discover() -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their own name)."""
    modules: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ["mcpclient", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = discover()


@dataclass(frozen=True)
class Import:
    target: str
    line: int
    type_checking: bool


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _resolve_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    if node.level - 1 >= len(parts):
        raise ValueError(f"{module}: relative import beyond the top package")
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def imports_of(source: str, module: str, is_package: bool = False) -> list[Import]:
    """Every import ``source`` (the text of ``module``) can make, with its line."""
    found: list[Import] = []

    def visit(node: ast.AST, type_checking: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno, type_checking) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(node, module, is_package)
            for alias in node.names:
                # "from pkg import name" imports the submodule pkg.name when there is one
                candidate = f"{base}.{alias.name}"
                target = candidate if candidate in MODULES else base
                found.append(Import(target, node.lineno, type_checking))
        elif isinstance(node, ast.Call) and _dynamic_name(node):
            found.append(Import(_dynamic_name(node), node.lineno, type_checking))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_checking)
            visit(node.test, type_checking)
            return
        for sub in ast.iter_child_nodes(node):
            visit(sub, type_checking)

    visit(parsed(source), False)
    return found


def _dynamic_name(node: ast.Call) -> str:
    func = node.func
    named = (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")) or (
        isinstance(func, ast.Attribute) and func.attr == "import_module"
    )
    if named and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return ""


def check_source(module: str, source: str, is_package: bool = False) -> list[str]:
    """Layer violations of ``module`` whose text is ``source``."""
    where = module
    if is_testing(module):
        return [
            f"{where}:{imp.line} imports {imp.target}; mcpclient.testing stands alone"
            for imp in imports_of(source, module, is_package)
            if is_ours(imp.target) and not is_testing(imp.target)
        ]
    own = layer_of(module)
    if own is None:
        return [f"{where} is not in the layer map; place it in tests/unit/test_layers.py"]
    problems = []
    for imp in imports_of(source, module, is_package):
        top = imp.target.split(".")[0]
        if (
            own == 0
            and top not in STDLIB
            and not (is_ours(imp.target) and layer_of(imp.target) == 0)
        ):
            problems.append(f"{where}:{imp.line} imports {imp.target}; L0 uses the stdlib only")
        if not is_ours(imp.target):
            continue
        if is_testing(imp.target):
            problems.append(f"{where}:{imp.line} imports {imp.target}, which is for tests")
            continue
        target = layer_of(imp.target)
        if target is None:
            problems.append(f"{where}:{imp.line} imports {imp.target}, which the map omits")
        elif target > own and not imp.type_checking:
            problems.append(
                f"{where}:{imp.line} ({LAYERS[own][0]}) imports {imp.target} ({LAYERS[target][0]})"
            )
    return problems


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """Module -> {imported module of ours: first line} for ``{module: (source, is_package)}``."""
    graph: dict[str, dict[str, int]] = {}
    for module, (source, is_package) in sources.items():
        edges = graph.setdefault(module, {})
        for imp in imports_of(source, module, is_package):
            if imp.target in sources and imp.target != module:
                edges.setdefault(imp.target, imp.line)
    return graph


def import_cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """One loop (``[a, b, ..., a]``) through each group of modules that import each other."""
    # Tarjan's strongly connected components, iteratively (no recursion limit).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return [_loop_in(group, graph) for group in groups]


def _loop_in(group: set[str], graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """A shortest loop from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child not in group:
                    continue
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no loop in {sorted(group)}")  # pragma: no cover - a group has one


def describe(loop: list[str], graph: Mapping[str, Mapping[str, int]]) -> str:
    return " -> ".join(
        f"{a}:{graph[a][b]}" if b else a for a, b in zip(loop, [*loop[1:], ""], strict=True)
    )


# --- the real package ---


def test_package_is_found() -> None:
    assert "mcpclient" in MODULES
    assert "mcpclient.client" in MODULES
    assert "mcpclient._core.limits" in MODULES
    assert any(name.startswith("mcpclient._internal.session.") for name in MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_respects_layers(module: str) -> None:
    path = MODULES[module]
    source = path.read_text(encoding="utf-8")
    assert check_source(module, source, is_package=path.name == "__init__.py") == []


def test_no_import_cycles() -> None:
    sources = {
        module: (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for module, path in MODULES.items()
    }
    graph = import_graph(sources)
    assert [describe(loop, graph) for loop in import_cycles(graph)] == []


def test_every_named_module_exists_or_is_planned() -> None:
    # Exact (non-wildcard) names in the map must exist, except those DESIGN.md §3 plans.
    planned = {"mcpclient._internal.schema"}
    named = {p for _, patterns in LAYERS for p in patterns if not p.endswith(".*")}
    assert named - planned <= set(MODULES)


# --- the checker itself ---


def test_checker_catches_an_upward_import() -> None:
    problems = check_source("mcpclient._core.limits", "from mcpclient.errors import Error\n")
    assert len(problems) == 2  # upward, and not standard library
    assert any("L0 pure helpers) imports mcpclient.errors (L1" in p for p in problems)
    assert check_source("mcpclient.errors", "import mcpclient.client\n") != []
    assert check_source("mcpclient.errors", "from mcpclient import Definition\n") != []
    assert (
        check_source("mcpclient._internal.schema", "import mcpclient._internal.session.rpc") != []
    )


def test_checker_catches_function_level_imports() -> None:
    source = "def late():\n    from mcpclient.client import Client\n    return Client\n"
    problems = check_source("mcpclient.errors", source)
    assert problems == [
        "mcpclient.errors:2 (L1 public values) imports mcpclient.client (L5 client)"
    ]
    nested = "class A:\n    def f(self):\n        if True:\n            import mcpclient.client\n"
    assert check_source("mcpclient.catalog", nested) != []


def test_checker_resolves_relative_imports() -> None:
    assert check_source("mcpclient.errors", "from . import client\n") != []
    assert check_source("mcpclient.errors", "from .client import Client\n") != []
    assert check_source("mcpclient._internal.schema", "from ..client import Client\n") != []
    assert check_source("mcpclient._internal.schema", "from . import limits\n") == []
    inside = "from ..session import rpc\n"
    assert check_source("mcpclient._internal.transport.stdio", inside) != []
    assert check_source("mcpclient._internal.transport", "from . import base\n", True) == []
    assert check_source("mcpclient._internal.session", "from ..client import gate\n", True) != []


def test_checker_allows_downward_and_same_layer_imports() -> None:
    source = (
        "import threading\n"
        "from mcpclient._core.limits import bound\n"
        "from mcpclient.errors import Error\n"
        "from mcpclient._internal.session.rpc import RpcSession\n"
        "from mcpclient._internal.client.calls import gate\n"
    )
    assert check_source("mcpclient.client", source) == []
    assert check_source("mcpclient.events", "from mcpclient.status import State\n") == []


def test_checker_exempts_type_checking_blocks_only() -> None:
    guarded = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from mcpclient.client import Client\n"
        "else:\n"
        "    Client = None\n"
    )
    assert check_source("mcpclient.errors", guarded) == []
    qualified = "import typing\nif typing.TYPE_CHECKING:\n    import mcpclient.client\n"
    assert check_source("mcpclient.errors", qualified) == []
    runtime_else = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    pass\n"
        "else:\n"
        "    import mcpclient.client\n"
    )
    assert check_source("mcpclient.errors", runtime_else) != []


def test_cycle_checker_catches_type_only_and_deferred_cycles() -> None:
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcpclient.b import B\n"
    sources = {
        "mcpclient.a": (guarded, False),
        "mcpclient.b": ("from mcpclient.c import C\n", False),
        "mcpclient.c": ("def f():\n    import mcpclient.a\n", False),
        "mcpclient.d": ("import mcpclient.a\nimport mcpclient.b\n", False),
        "mcpclient": ("from mcpclient.d import D\n", True),
    }
    graph = import_graph(sources)
    loops = import_cycles(graph)
    assert loops == [["mcpclient.a", "mcpclient.b", "mcpclient.c", "mcpclient.a"]]
    where = "mcpclient.a:3 -> mcpclient.b:1 -> mcpclient.c:2 -> mcpclient.a"
    assert describe(loops[0], graph) == where
    # A package importing its submodule is no loop; a submodule importing the package is.
    del sources["mcpclient.c"]
    assert import_cycles(import_graph(sources)) == []
    sources["mcpclient.d"] = ("import mcpclient\n", False)
    assert import_cycles(import_graph(sources)) == [["mcpclient", "mcpclient.d", "mcpclient"]]


def test_cycle_checker_reports_each_group_once() -> None:
    graph = {"a": {"b": 1}, "b": {"a": 2, "c": 3}, "c": {"b": 4}, "x": {"y": 1}, "y": {"x": 1}}
    assert import_cycles(graph) == [["a", "b", "a"], ["x", "y", "x"]]
    assert import_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []


def test_checker_catches_dynamic_imports() -> None:
    source = "import importlib\nmod = importlib.import_module('mcpclient.client')\n"
    assert check_source("mcpclient.errors", source) != []
    assert check_source("mcpclient.errors", "x = __import__('mcpclient.client')\n") != []


def test_checker_refuses_unmapped_modules() -> None:
    assert check_source("mcpclient.newthing", "") == [
        "mcpclient.newthing is not in the layer map; place it in tests/unit/test_layers.py"
    ]
    assert check_source("mcpclient._internal.newthing", "import os\n") != []
    assert check_source("mcpclient.errors", "import mcpclient._internal.newthing\n") != []


def test_checker_keeps_l0_on_the_standard_library() -> None:
    assert check_source("mcpclient._core.limits", "import attrs\n") != []
    assert check_source("mcpclient._core.canonical", "import rfc8785\n") != []
    assert check_source("mcpclient._core.digest", "def f():\n    import requests\n") != []
    assert check_source("mcpclient._core.naming", "from . import digest\nimport re\n") == []
    assert check_source("mcpclient._core.checks", "import attrs\n") == []


def test_checker_keeps_testing_standalone() -> None:
    assert check_source("mcpclient.testing.core", "from mcpclient.errors import Error\n") != []
    assert check_source("mcpclient.testing.core", "from .. import errors\n") != []
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mcpclient.client\n"
    assert check_source("mcpclient.testing.tools", guarded) != []
    assert check_source("mcpclient.testing.core", "from . import tools\nimport json\n") == []
    assert check_source("mcpclient.testing", "from .core import ServerCore\n", True) == []
    assert check_source("mcpclient.client", "from mcpclient.testing import ServerCore\n") != []
