"""The conformance runner's verdicts and its choice of runs (no harness needed)."""

from __future__ import annotations

import pytest

from tests.conformance import run


def check(status: str, name: str = "c") -> dict[str, object]:
    return {"id": name, "name": name, "status": status}


@pytest.mark.parametrize(
    ("checks", "exit_code", "verdict"),
    [
        ([check("SUCCESS"), check("INFO")], 0, "PASS"),
        ([check("SUCCESS"), check("WARNING")], 0, "PASS"),
        ([check("SUCCESS"), check("FAILURE")], 0, "FAIL"),
        ([], 0, "FAIL"),  # nothing recorded is not a pass
        ([check("SKIPPED"), check("SKIPPED")], 0, "FAIL"),  # all skipped is not a pass
        ([check("SUCCESS")], 1, "FAIL"),  # the client crashed
    ],
)
def test_judge(checks: list[dict[str, object]], exit_code: int, verdict: str) -> None:
    assert run.judge(checks, exit_code)[0] == verdict


def test_runs_at_default_and_again_at_the_stateless_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = """Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - tools_call [2025-06-18,2025-11-25,2026-07-28]
  - request-metadata [2026-07-28]
  - auth/dpop [extension]

Authorization server scenarios (test against an authorization server):
"""

    class Done:
        stdout = listing

    monkeypatch.setattr(run.subprocess, "run", lambda *a, **k: Done())
    runs = run.list_runs(run.Path("conformance"), {})
    assert [r.label for r in runs] == [
        "initialize@default",
        "tools_call@default",
        "tools_call@2026-07-28",
        "request-metadata@default",
        "auth/dpop@default",
        "auth/dpop@2026-07-28",
    ]
    assert [r.extension for r in runs if r.scenario == "auth/dpop"] == [True, True]
