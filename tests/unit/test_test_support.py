"""The test suite's own rules: shared helpers live once, in tests/support/; unit tests stay offline.

Reads the test sources (no import, no socket, no process): a module that grows its
own wait helper or event recorder again fails here with the helper to use instead.
"""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = TESTS / "support"
#: Names of helpers that tests/support provides once (``wait_until``, ``soon``, ``Events``).
WAIT_HELPERS = {"wait_until", "wait_for", "soon", "eventually"}
RECORDER_METHODS = {"on_event", "on_progress"}


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if SUPPORT not in p.parents)


def _reinvented(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in WAIT_HELPERS:
            shared = node.name if node.name == "soon" else "wait_until"
            found.append(f"def {node.name} (use tests.support.{shared})")
        if isinstance(node, ast.ClassDef) and not node.bases:
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if node.name in ("Events", "Recorder") or methods & RECORDER_METHODS:
                found.append(f"class {node.name} (use or subclass tests.support.Events)")
    return found


def test_no_module_reinvents_the_shared_helpers() -> None:
    offenders = {
        str(path.relative_to(TESTS)): found for path in _modules() if (found := _reinvented(path))
    }
    assert offenders == {}


def test_the_unit_guard_refuses_sockets_and_processes() -> None:
    with pytest.raises(AssertionError, match="tests/integration"):
        socket.getaddrinfo("localhost", 80)
    with pytest.raises(AssertionError, match="tests/integration"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
