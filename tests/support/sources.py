"""Source files parsed once per test process.

Several structural tests (layers, wire names, state ownership, stdio modules, the
shared helpers) walk the syntax tree of every module; each tree is parsed once and
shared. The trees are read, never changed.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

__all__ = ["parsed", "parsed_file"]


@functools.cache
def parsed(source: str) -> ast.Module:
    """The syntax tree of ``source`` (cached by its text: callers must not change it)."""
    return ast.parse(source)


def parsed_file(path: Path) -> ast.Module:
    """The syntax tree of the Python file at ``path``."""
    return parsed(path.read_text(encoding="utf-8"))
