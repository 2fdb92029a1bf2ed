"""The stdio transport's modules: time from one clock, and a thread/lock/shutdown header.

Parsed with ``ast``; nothing is imported or run. Every module of the stdio
transport takes its time from ``mcpclient._core.deadline`` (DESIGN.md §3
rule 4), never from the ``time`` module, and each one that threads touch says
in its docstring which threads use it, what its locks guard and how it shuts
down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcpclient

from ..support.sources import parsed_file

TRANSPORT = Path(mcpclient.__file__).resolve().parent / "_internal" / "transport"
MODULES = sorted(TRANSPORT.glob("stdio*.py"))
# Pure helpers: no thread, no lock, nothing to shut down.
PURE = {"stdio_backend.py", "stdio_lines.py", "stdio_platform.py"}


def test_the_stdio_transport_is_split() -> None:
    names = {path.name for path in MODULES}
    parts = {"stdio.py", "stdio_fds.py", "stdio_frames.py", "stdio_group.py", "stdio_stderr.py"}
    parts |= {"stdio_job.py", "stdio_platform.py", "stdio_portable.py"}
    assert parts <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_time_comes_from_the_deadline_module(path: Path) -> None:
    tree = parsed_file(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == "time"]
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found.append(f"from time import {', '.join(a.name for a in node.names)}")
    assert found == [], f"{path.name} uses the time module; use _core.deadline.now()"


@pytest.mark.parametrize("path", [p for p in MODULES if p.name not in PURE], ids=lambda p: p.name)
def test_threaded_modules_have_the_header(path: Path) -> None:
    doc = ast.get_docstring(parsed_file(path)) or ""
    for section in ("Threads:", "Locks:", "Shutdown:"):
        assert f"\n{section}\n" in doc, f"{path.name}'s docstring lacks its {section} section"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_stdio_module_imports_fcntl(path: Path) -> None:
    # Windows has no fcntl: the portable backend imports every stdio module.
    tree = parsed_file(path)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "fcntl" not in imported, f"{path.name} imports fcntl"
