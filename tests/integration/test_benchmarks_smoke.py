"""The benchmark suite runs end to end (``benchmarks/run.py --smoke``).

It checks only that the suite works: exit status 0, both report files, a
row for every client over every transport (the default: stdio and HTTP), a
catalog-size row for mcpclient and the SDK client in both eras over every
transport, an own-share row (latency, HTTP floor, own share) for every client
over HTTP, the host phase's three rows (one ``Host``, separate Clients opened one after
another and all at once), the era phase's rows (``protocol="legacy"`` and ``"auto"``
against a legacy-only server that refuses the probe or dies of it, with their request
and start counts), the export phase's rows (bytes handed to the model per turn, full
export vs search mode, for every provider), and their
targets. It never asserts a speed: figures are measured
and reported by ``tox -e bench``, never tested.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, missing_peer

RUN = REPO_ROOT / "benchmarks" / "run.py"
CLIENTS = ("mcpclient", "sdk", "raw", "floor")
TRANSPORTS = {"stdio": "stdio", "http": "HTTP"}  # as the run names them, and the report
#: The catalog-size phase's rows (mcpclient's testing server, generated tools).
CATALOG_ROWS = ("sdk@legacy", "sdk@modern", "mcpclient@legacy", "mcpclient@modern")
#: The rows of the HTTP own-share table (each client's latency above the socket floor).
OWN_SHARE_ROWS = ("raw@legacy", *CATALOG_ROWS)

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
        timeout=300,  # < 60 s on a quiet machine; a busy 2-core one takes much longer
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
    _check_catalog_rows(results, summary)
    _check_own_share_rows(results, summary)
    _check_host_rows(results, summary)
    _check_era_rows(results, summary)
    _check_export_rows(results, summary)


def _table_rows(results: dict[str, Any], table: str) -> dict[str, dict[str, Any]]:
    return {row["label"]: row for row in results["summary"]["rows"] if row["table"] == table}


def _markdown_labels(summary: str, heading: str) -> set[str]:
    lines = [line for line in _section(summary, heading).splitlines() if line.startswith("| ")]
    return {line.split("|")[1].strip().strip("*") for line in lines}


def _check_catalog_rows(results: dict[str, Any], summary: str) -> None:
    counts = results["meta"]["sizes"]["catalog"]
    targets = {t["name"] for t in results["summary"]["targets"]}
    for transport, name in TRANSPORTS.items():
        rows = _table_rows(results, f"catalog_{transport}")
        labels = _markdown_labels(summary, f"## Catalog size: discovering generated tools, {name}")
        for label in CATALOG_ROWS:
            assert label in rows, f"no {transport} catalog row {label} in results.json"
            assert label in labels, f"no {transport} catalog row {label} in summary.md"
            row = rows[label]
            assert row["protocol"] == ("2025-11-25" if label.endswith("legacy") else "2026-07-28")
            for count in counts:
                assert row[f"catalog_{count}_cpu_ms"] > 0
                assert row[f"catalog_{count}_wall_ms"] > 0
                assert row[f"catalog_{count}_tools"] >= count  # every page was listed
        for era in ("legacy", "modern"):
            assert f"client CPU to discover {max(counts)} tools ({name}) vs SDK, {era}" in targets


def _check_own_share_rows(results: dict[str, Any], summary: str) -> None:
    big = max(results["meta"]["sizes"]["blobs"])
    rows = _table_rows(results, "own_share_http")
    labels = _markdown_labels(summary, "## Large results over HTTP: each client's own share")
    for label in OWN_SHARE_ROWS:
        assert label in rows, f"no own-share row {label} in results.json"
        assert label in labels, f"no own-share row {label} in summary.md"
        row = rows[label]
        assert row[f"blob_{big}_floor_ms"] > 0
        assert row[f"blob_{big}_own_ms"] is not None
    targets = {t["name"] for t in results["summary"]["targets"]}
    assert sum(t.startswith("own share of a ") for t in targets) == 2  # both eras


def _check_host_rows(results: dict[str, Any], summary: str) -> None:
    rows = _table_rows(results, "host")
    count = results["meta"]["sizes"]["host_bindings"]
    labels = _markdown_labels(summary, f"## {count} stdio testing servers")
    for label in ("mcpclient@host", "mcpclient@separate", "mcpclient@parallel"):
        assert label in rows, f"no host-phase row {label} in results.json"
        assert label in labels, f"no host-phase row {label} in summary.md"
        assert rows[label]["host_connect_ms"] > 0
        assert rows[label]["host_threads"] is not None
    assert rows["mcpclient@host"]["host_catalog_read_us"] > 0
    assert (
        rows["mcpclient@host"]["host_catalog_tools"]
        >= count * results["meta"]["sizes"]["host_tools"]
    )
    targets = {t["name"] for t in results["summary"]["targets"]}
    assert f"Host connect of {count} stdio servers vs one connect (absolute quotient)" in targets
    assert "memory per binding, Host vs separate Clients" in targets
    assert "memory per binding, Host vs the same Clients started at once" in targets


ERA_SERVER = "a legacy-only stdio testing server"
#: The era phase's tables: a legacy-only server refusing the probe, and one dying of it.
ERA_TABLES = {
    "era_eraerr": "answers the probe with an error",
    "era_eraexit": "dies of the probe",
}


def _check_era_rows(results: dict[str, Any], summary: str) -> None:
    for table, what in ERA_TABLES.items():
        rows = _table_rows(results, table)
        heading = f"## Connect with protocol auto vs legacy: {ERA_SERVER} that {what}"
        labels = _markdown_labels(summary, heading)
        for label in ("mcpclient@legacy", "mcpclient@auto"):
            assert label in rows, f"no era row {label} in {table} in results.json"
            assert label in labels, f"no era row {label} in summary.md"
            row = rows[label]
            assert row["protocol"] == "2025-11-25"
            for prefix in ("uncached", "cached"):  # the counts were read from the record
                assert row[f"era_{prefix}_ms"] > 0
                assert row[f"era_{prefix}_requests"] >= 1
                assert row[f"era_{prefix}_starts"] >= 1
    names = [t["name"] for t in results["summary"]["targets"]]
    assert sum("extra round trips" in n for n in names) == 1
    assert sum("extra starts (restarts)" in n for n in names) == 1
    assert sum(n.startswith("second auto connect (era cached)") for n in names) == 2


def _check_export_rows(results: dict[str, Any], summary: str) -> None:
    rows = _table_rows(results, "export")
    labels = _markdown_labels(summary, "## Tools handed to the model per turn, 500 tools")
    for provider in ("openai_chat", "openai_responses", "anthropic", "gemini"):
        label = f"mcpclient@{provider}"
        assert label in rows, f"no export row {label} in results.json"
        assert label in labels, f"no export row {label} in summary.md"
        row = rows[label]
        assert 0 < row["export_search_bytes"] < row["export_search_loaded_bytes"]
        assert row["export_search_loaded_bytes"] < row["export_full_bytes"]
        assert row["export_full_tokens"] == round(row["export_full_bytes"] / 4)


def _section(markdown: str, heading: str) -> str:
    """The text of the section whose heading starts with ``heading``."""
    start = markdown.find(heading)
    assert start >= 0, f"summary.md has no section {heading!r}"
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else len(markdown)]
