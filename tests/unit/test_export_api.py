"""``mcpclient.export``'s public surface: importable from the package, sorted, documented."""

from __future__ import annotations

import inspect

import mcpclient
from mcpclient import export
from tests.unit.test_public_api import sort_key


def test_export_is_reachable_from_the_package() -> None:
    assert mcpclient.export is export
    assert "export" not in mcpclient.__all__  # its own namespace, not re-exported


def test_all_is_sorted_and_resolves() -> None:
    assert export.__all__ == sorted(export.__all__, key=sort_key)
    assert len(set(export.__all__)) == len(export.__all__)
    for name in export.__all__:
        assert hasattr(export, name), name
    assert export.PROVIDERS == ("openai_chat", "openai_responses", "anthropic", "gemini")


def test_public_names_and_methods_are_documented() -> None:
    missing = []
    for name in export.__all__:
        obj = getattr(export, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not inspect.getdoc(obj):
                missing.append(name)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    target = member.fget if isinstance(member, property) else member
                    public = not attr.startswith("_") and inspect.isfunction(target)
                    if public and not inspect.getdoc(target):
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_client_run_tool_calls_is_documented_and_delegates() -> None:
    doc = inspect.getdoc(mcpclient.Client.run_tool_calls) or ""
    assert "mcpclient.export.run_tool_calls" in doc
    assert list(inspect.signature(mcpclient.Client.run_tool_calls).parameters) == [
        "self",
        "response",
        "provider",
        "timeout",
        "approve",
        "budget",
        "full_results",
        "loaded",
    ]
