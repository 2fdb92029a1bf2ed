"""Run one documentation page's Python blocks, in order, in one fresh namespace.

Usage (what ``tests/integration/test_docs.py`` does, in a subprocess)::

    python -W error tests/support/docs_runner.py BLOCKS.json

``BLOCKS.json`` is ``{"page": str, "blocks": [{"line": int, "source": str}, ...],
"globals": {name: value}}``; ``globals`` are injected into the namespace
before the first block (``TESTING_URL``). Each block is compiled with the
file name ``<page>:<line>`` so a traceback names the page and line.

After the last block, the ``atexit`` callbacks the page registered run (as
the interpreter would run them at exit, newest first), then the runner
checks that no ``mcpclient-*`` thread and no child process is left.

Exit status: 0 every block ran and nothing leaked; 1 a block raised (its
traceback on stderr); 3 something leaked (named on stderr); 2 bad usage.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcpclient  # noqa: F401 - imported first: its own exit hook is not the page's

# Run as a script: the repository root is not on sys.path, and the leak checks
# are the suite's own (tests/support/processes.py, the one /proc scanner).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.processes import children_of, library_threads

SETTLE_SECONDS = 5.0


def _leaks() -> list[str]:
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        threads, children = sorted(t.name for t in library_threads()), children_of(os.getpid())
        if not threads and not children:
            return []
        if time.monotonic() > deadline:
            return [f"thread {name}" for name in threads] + [
                f"child pid {p}" for p in sorted(children)
            ]
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: docs_runner.py BLOCKS.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    page: str = spec["page"]
    namespace: dict[str, Any] = {"__name__": "__main__", **spec.get("globals", {})}
    registered: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
    real_register = atexit.register

    def register(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
        registered.append((func, args, kwargs))
        return func

    atexit.register = register  # type: ignore[assignment]
    try:
        for block in spec["blocks"]:
            code = compile(block["source"], f"{page}:{block['line']}", "exec")
            try:
                exec(code, namespace)  # running the documentation is the point
            except BaseException:
                print(f"{page}:{block['line']}: the block raised", file=sys.stderr)
                traceback.print_exc()
                return 1
    finally:
        atexit.register = real_register
    for func, args, kwargs in reversed(registered):
        func(*args, **kwargs)
    leaks = _leaks()
    if leaks:
        print(f"{page}: left behind: {', '.join(leaks)}", file=sys.stderr)
        return 3
    print(f"{page}: {len(spec['blocks'])} blocks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
