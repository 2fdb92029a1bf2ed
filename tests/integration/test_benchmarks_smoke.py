"""The benchmark suite runs end to end (``benchmarks/run.py --smoke``).

It checks only that the suite works: exit status 0, both report files, and a
row for every client over every transport (the default: stdio and HTTP). It
never asserts a speed: figures are measured and reported by ``tox -e bench``,
never tested.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, missing_peer

RUN = REPO_ROOT / "benchmarks" / "run.py"
CLIENTS = ("mcpclient", "sdk", "raw", "floor")
TRANSPORTS = {"stdio": "stdio", "http": "HTTP"}  # as the run names them, and the report

pytestmark = [pytest.mark.peer, pytest.mark.slow]


def test_smoke_run_writes_both_reports_with_every_client(tmp_path: Path) -> None:
    if importlib.util.find_spec("mcp") is None:
        missing_peer("the official SDK (mcp) is not installed; the benchmarks compare against it")
    out = tmp_path / "results"
    env = dict(os.environ)
    # The workers import mcpclient from this checkout when it is not installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, str(RUN), "--smoke", "--out", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"

    results = json.loads((out / "results.json").read_text())
    summary = (out / "summary.md").read_text()
    assert all(run["ok"] for run in results["runs"])
    assert results["meta"]["transports"] == list(TRANSPORTS)
    rows = {(row["transport"], row["client"]) for row in results["summary"]["rows"]}
    for transport, name in TRANSPORTS.items():
        section = _section(summary, f"## Client cost: bare server (no MCP work), {name},")
        table_rows = [line for line in section.splitlines() if line.startswith("| ")]
        for client in CLIENTS:
            assert (transport, client) in rows, f"no {transport} {client} row in results.json"
            assert any(line.startswith((f"| {client}", f"| **{client}")) for line in table_rows), (
                f"no {transport} {client} row in summary.md"
            )


def _section(markdown: str, heading: str) -> str:
    """The text of the section whose heading starts with ``heading``."""
    start = markdown.find(heading)
    assert start >= 0, f"summary.md has no section {heading!r}"
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else len(markdown)]
