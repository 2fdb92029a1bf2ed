"""The public surface: ``mcpclient.__all__`` is sorted, complete and exposes no internals.

CONVENTIONS.md: a name is public iff it is listed in ``mcpclient.__all__`` or in a
public submodule's ``__all__``; a test enforces that ``__all__`` is complete,
sorted, and exposes no ``_internal`` type.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import typing
from types import ModuleType

import attrs
import pytest

import mcpclient

PUBLIC_MODULES = [
    "mcpclient.calls",
    "mcpclient.catalog",
    "mcpclient.client",
    "mcpclient.compat",
    "mcpclient.content",
    "mcpclient.definition",
    "mcpclient.errors",
    "mcpclient.events",
    "mcpclient.handlers",
    "mcpclient.host",
    "mcpclient.hooks",
    "mcpclient.skills",
    "mcpclient.status",
    "mcpclient.tasks",
    "mcpclient.transports",
]

# Subpackages that are public but deliberately not re-exported from the package.
SEPARATE_PACKAGES = {
    # the scriptable test server: a tool for testing hosts, standard library only,
    # imported as ``mcpclient.testing`` so that ``import mcpclient`` never loads it
    "mcpclient.testing",
    # OAuth (the ``oauth`` extra): its own public API, needs cryptography and PyJWT
    "mcpclient.auth",
    # tools for LLM providers: its own namespace (``mcpclient.export.to_anthropic``...)
    "mcpclient.export",
    # reading hosts' MCP configuration files: ``from mcpclient import config``
    "mcpclient.config",
    # the ``mcpclient`` command line (console script); its interface is the command,
    # documented in docs/cli.md, and only ``main`` is a Python name
    "mcpclient.cli",
    # the process-wide OpenTelemetry switch: ``mcpclient.telemetry.disable()``
    "mcpclient.telemetry",
}

# Names public in their own module's ``__all__`` but deliberately not re-exported.
KEPT_IN_MODULE = {
    # protocol version tables, read by hosts that pin ``Definition.protocol``
    "mcpclient.definition": {
        "LEGACY_VERSIONS",
        "MODERN_VERSIONS",
        # extension identifiers (SEP-2133), read by hosts that opt in
        "SKILLS_EXTENSION",
        "TASKS_EXTENSION",
        "UI_EXTENSION",
        "UI_MIME_TYPE",
    },
    # building an error from a class is for the library and advanced hosts, and
    # ConfigFileError (a ConfigError with every problem of a config file) is
    # re-exported by mcpclient.config
    "mcpclient.errors": {"ConfigFileError", "error_for"},
    # typing Protocols for handler objects; plain callables are the documented form
    "mcpclient.handlers": {"ElicitationHandler", "RootsProvider", "SamplingHandler"},
    # the typing Protocol of Host's server values; a Definition or a ServerConfig is the form
    "mcpclient.host": {"ServerSource"},
    # call hooks: their own namespace (``from mcpclient.hooks import CallHooks``); their
    # values hold a call's arguments (a dict), so they are not the package's hashable values
    "mcpclient.hooks": {
        "AfterHook",
        "BeforeHook",
        "CallHooks",
        "CallInfo",
        "Decision",
        "ErrorHook",
    },
    # the lifecycle table is documentation for hosts, not API
    "mcpclient.status": {"TRANSITIONS"},
    # the inherited-environment allowlist, the transport union type, and the auth
    # provider seam (re-exported by mcpclient.auth, for hosts writing their own)
    "mcpclient.transports": {"AuthChallenge", "AuthProvider", "SAFE_ENV", "Transport"},
}

# Public-looking helpers defined in public modules but listed in no ``__all__``.
UNLISTED_HELPERS = {
    # Name's grammar check, used by Definition.validate() for a message without raising
    "mcpclient.definition": {"name_problem"},
}

SEED_EVENTS = {
    "StateChanged",
    "CatalogStale",
    "CatalogCandidate",
    "CatalogRefreshed",
    "CatalogAdopted",
    "CatalogRejected",
    "ConnectionLost",
    "ConnectionRestored",
    "ServerLog",
    "RequestProgress",
    "ResourceUpdated",
    "ElicitationRequested",
    "ElicitationResolved",
    "SamplingRequested",
    "SamplingResolved",
}


#: The private packages no public name, annotation or module may come from.
PRIVATE = ("mcpclient._internal", "mcpclient._core")


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


def sort_key(name: str) -> tuple[int, list[tuple[int, int | str]]]:
    """The order the project's lint enforces for ``__all__`` (ruff RUF022, "isort-style").

    SCREAMING_SNAKE_CASE first, then CamelCase, then everything else; a natural
    sort within each group. Plain ``sorted()`` would put ``Annotations`` before
    ``DEFAULT_LIMITS`` and fail ``ruff check``, so it cannot be the rule here.
    """
    if len(name) > 1 and name.upper() == name and any(ch.isalpha() for ch in name):
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, _natural(name)


def test_sort_key_matches_ruff_examples() -> None:
    names = ["connect", "__version__", "Annotations", "KIND_TEXT", "DEFAULT_LIMITS", "Audio"]
    assert sorted(names, key=sort_key) == [
        "DEFAULT_LIMITS",
        "KIND_TEXT",
        "Annotations",
        "Audio",
        "__version__",
        "connect",
    ]
    assert sorted(["V10", "V9", "V1"], key=sort_key) == ["V1", "V9", "V10"]


def test_all_is_sorted_unique_and_resolves() -> None:
    names = mcpclient.__all__
    assert names == sorted(names, key=sort_key)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(mcpclient, name), name
    assert mcpclient.__version__ == mcpclient._core.version.VERSION


def test_public_modules_list_is_complete() -> None:
    found = {
        f"mcpclient.{info.name}"
        for info in pkgutil.iter_modules(mcpclient.__path__)
        if not info.name.startswith("_")
    }
    assert found == set(PUBLIC_MODULES) | SEPARATE_PACKAGES


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_module_all_is_sorted_and_resolves(modname: str) -> None:
    module = _module(modname)
    names = module.__all__
    assert names == sorted(names, key=sort_key)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(module, name), name


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_module_all_is_reexported(modname: str) -> None:
    module = _module(modname)
    kept = KEPT_IN_MODULE.get(modname, set())
    assert kept <= set(module.__all__), "stale exception"
    for name in set(module.__all__) - kept:
        assert name in mcpclient.__all__, f"{modname}.{name} is not exported from mcpclient"
        assert getattr(mcpclient, name) is getattr(module, name)
    for name in kept:
        assert name not in mcpclient.__all__, f"{modname}.{name} is exported: drop the exception"


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_every_public_definition_is_listed(modname: str) -> None:
    module = _module(modname)
    defined = {
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == modname
    }
    unlisted = defined - set(module.__all__) - UNLISTED_HELPERS.get(modname, set())
    assert unlisted == set(), f"{modname} defines public names outside __all__"
    assert UNLISTED_HELPERS.get(modname, set()) <= defined, "stale exception"


def test_package_exports_every_module_export() -> None:
    exported = set(mcpclient.__all__) - {"__version__"}
    from_modules = {name for modname in PUBLIC_MODULES for name in _module(modname).__all__}
    assert exported <= from_modules, "mcpclient exports a name no public module lists"


def _exported() -> list[tuple[str, object]]:
    return [(name, getattr(mcpclient, name)) for name in mcpclient.__all__]


def test_nothing_exported_comes_from_internal() -> None:
    for name, obj in _exported():
        module = getattr(obj, "__module__", None)
        if isinstance(obj, type) or callable(obj):
            assert module is not None, name
        if isinstance(module, str):
            assert not module.startswith(PRIVATE), name
        for member in typing.get_args(obj):
            assert not member.__module__.startswith(PRIVATE), name


def _internal_names_in(annotation: object, namespace: dict[str, object]) -> list[str]:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    found = [word for word in ("_internal", "_core") if word in text]
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text):
        target = namespace.get(word.split(".")[0])
        module = getattr(target, "__module__", None) or getattr(target, "__name__", "")
        if isinstance(module, str) and module.startswith(PRIVATE):
            found.append(word)
    return found


def test_internal_name_checker_self_test() -> None:
    from mcpclient._internal.client.calls.gate import Gate

    namespace: dict[str, object] = {"Gate": Gate, "Catalog": mcpclient.Catalog}
    assert _internal_names_in("Gate | None", namespace) == ["Gate"]
    assert _internal_names_in("mcpclient._internal.x.Y", {}) == ["_internal"]
    assert _internal_names_in("Catalog | None", namespace) == []


def test_public_signatures_expose_no_internal_types() -> None:
    problems = []
    for name, obj in _exported():
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        namespace = vars(sys.modules[obj.__module__])
        members = [obj] if inspect.isfunction(obj) else list(vars(obj).values())
        if attrs.has(obj):
            for field in attrs.fields(obj):
                if field.init:
                    for bad in _internal_names_in(field.type, namespace):
                        problems.append(f"{name}.{field.alias}: {bad}")
        for member in members:
            target = member.fget if isinstance(member, property) else member
            if inspect.isfunction(target) and not target.__name__.startswith("_"):
                for annotation in target.__annotations__.values():
                    for bad in _internal_names_in(annotation, namespace):
                        problems.append(f"{name}.{target.__name__}: {bad}")
    assert problems == []


def test_every_exported_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name, obj in _exported()
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj)
    ]
    assert missing == []


def test_public_methods_have_docstrings() -> None:
    missing = []
    for name, obj in _exported():
        if not inspect.isclass(obj) or issubclass(obj, BaseException | int | str):
            continue
        for attr, member in vars(obj).items():
            if attr.startswith("_"):
                continue
            documentable = inspect.isfunction(member) or isinstance(member, property)
            if documentable and not inspect.getdoc(member):
                missing.append(f"{name}.{attr}")
    assert missing == []


#: Events added since the seed, each with its issue.
ADDED_EVENTS = {
    "KeepaliveFailed",  # issue 32 item 2
    "KeepaliveRecovered",
    "KeepaliveLost",
}


def test_events_are_exactly_the_seeds_fifteen_and_the_added_ones() -> None:
    from mcpclient import events

    every = SEED_EVENTS | ADDED_EVENTS
    event_classes = {name for name in events.__all__ if name != "Event"}
    assert event_classes == every
    assert {cls.__name__ for cls in typing.get_args(mcpclient.Event)} == every
    for name in every:
        cls = getattr(mcpclient, name)
        fields = {f.name for f in attrs.fields(cls)}
        assert {"binding", "at"} <= fields, name
        assert not name.endswith("Error")


def test_exception_names_end_in_error() -> None:
    exceptions = {
        name
        for name, obj in _exported()
        if isinstance(obj, type) and issubclass(obj, BaseException)
    }
    assert len(exceptions) == 19  # Error and its 18 families
    for name in exceptions:
        assert name.endswith("Error"), name
        assert issubclass(getattr(mcpclient, name), mcpclient.Error)
    suffixed = {name for name in mcpclient.__all__ if name.endswith("Error")}
    assert suffixed == exceptions


def test_package_has_a_null_handler() -> None:
    import logging

    handlers = logging.getLogger("mcpclient").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


def _type_checking_imports() -> dict[str, tuple[str, ...]]:
    """The ``if TYPE_CHECKING:`` block of ``mcpclient/__init__.py``: module → names."""
    import ast

    tree = ast.parse(inspect.getsource(mcpclient))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    found: dict[str, tuple[str, ...]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        found[node.module] = tuple(alias.asname or alias.name for alias in node.names)
    return found


def test_lazy_tables_agree_with_the_static_imports_and_all() -> None:
    # the package's names are imported on first use from ``_HOMES``; type checkers read
    # the ``TYPE_CHECKING`` imports instead: the two (and ``__all__``) must say the same
    static = _type_checking_imports()
    assert static.pop("mcpclient") == ("telemetry",)
    assert static == mcpclient._HOMES
    homes = {name for names in mcpclient._HOMES.values() for name in names}
    assert homes == set(mcpclient.__all__) - {"__version__"}


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = mcpclient.Nope  # type: ignore[attr-defined]
    assert not hasattr(mcpclient, "_internal_thing")
    assert set(mcpclient.__all__) <= set(dir(mcpclient))
    assert mcpclient.telemetry is importlib.import_module("mcpclient.telemetry")
