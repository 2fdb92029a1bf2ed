"""Run the benchmark suite: mcpclient beside the official SDK client, a raw client and the floor.

Every measurement runs in a fresh worker process (``worker.py``); the import
phase runs in fresh interpreters. Repetitions are interleaved, and the worker
order rotates each repetition. Results go to ``<out>/results.json`` (every
raw measurement plus the summary) and ``<out>/summary.md``, plus
``<out>/summary.png`` when matplotlib is importable.

Usage::

    python benchmarks/run.py --reps 3            # the real suite (~30 minutes on 2 cores)
    python benchmarks/run.py --smoke --out /tmp/b  # a quick check that it all works
    python benchmarks/run.py --transport http    # one transport only
    python benchmarks/run.py --phases catalog    # only the catalog-size phase
    python benchmarks/run.py --summarize benchmarks/results/results.json

``--transport`` picks the transports, comma-separated (default ``stdio,http``,
measured side by side in the same repetitions; see ``benchlib.TRANSPORTS``).
The fan-out runs over stdio only. ``--phases`` keeps only the given phases
(default: all of ``PHASES``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import report
from adapters import ERAS, IMPORTS
from benchlib import HERE, MIB, REPO_ROOT, TRANSPORTS, parse_transports
from era_phase import ERA_SERVERS
from host_phase import HOST_SERVERS

WORKER = HERE / "worker.py"
CLIENTS = ("mcpclient", "sdk", "raw")
PHASES = (
    "import", "cold", "seq", "tput", "rss", "blob", "fanout", "catalog", "host", "era", "export",
)  # fmt: skip
#: The export phase's workers, one per provider (each worker's "era").
EXPORT_PROVIDERS = ("openai_chat", "openai_responses", "anthropic", "gemini")
#: The clients of the catalog-size phase (the raw client lists one page only).
CATALOG_CLIENTS = ("mcpclient", "sdk")

FULL = {
    "cold": 8,  # connects per cold-start measurement, bare server
    "cold_sdk": 3,  # the same on the SDK server (its own start, ~0.6 s, dominates)
    "cold_http": 20,  # connects per cold-start measurement over HTTP (the server is up)
    "warmup": 200,
    "seq": 2000,
    "tput": 4000,
    "rss": 10_000,
    "blobs": [MIB, 10 * MIB],
    "blob_reps": 5,
    "fanout": 50,
    "fanout_settle_s": 0.3,  # one binding open, before the baseline is read
    "fanout_idle_s": 0.5,  # all open and idle, before the figures are read
    "imports": 5,  # fresh interpreters per import measurement
    "catalog": [1000, 10_000],  # generated tools per catalog-size measurement
    "catalog_page": 1000,  # tools per tools/list page
    "catalog_reps": 5,  # timed connects per catalog size
    "catalog_warmup": 1,  # untimed connects before them (lazy imports, caches)
    "host_bindings": 20,  # stdio testing servers in one Host (and as separate Clients)
    "host_tools": 100,  # generated tools per server
    "host_one": 5,  # single connects: the reference of the Host's connect
    "host_connects": 3,  # Host connects (or rounds of separate connects) per worker
    "host_reads": 10_000,  # reads of the built aggregate catalog
    "host_idle_s": 0.5,  # idle before the resource figures are read
    "era_cold": 5,  # uncached connects per era worker (each to a command never seen)
    "era_cached": 5,  # then connects to the last of them again (the era cache's entry)
    "export_tools": 500,  # generated tools handed to the model, full export vs search mode
    "export_loaded": 5,  # tools loaded in search mode
    "export_reps": 5,  # timed builds of each export
}
SMOKE = {
    "cold": 1,
    "cold_sdk": 1,
    "cold_http": 1,
    "warmup": 5,
    "seq": 20,
    "tput": 64,
    "rss": 50,
    "blobs": [64 * 1024, 256 * 1024],
    "blob_reps": 1,
    "fanout": 3,
    "fanout_settle_s": 0.05,
    "fanout_idle_s": 0.05,
    "imports": 1,
    "catalog": [30, 120],
    "catalog_page": 25,
    "catalog_reps": 1,
    "catalog_warmup": 0,
    "host_bindings": 3,
    "host_tools": 10,
    "host_one": 1,
    "host_connects": 1,
    "host_reads": 100,
    "host_idle_s": 0.05,
    "era_cold": 1,
    "era_cached": 1,
    "export_tools": 500,  # pure computation, well under a second: the real size
    "export_loaded": 5,
    "export_reps": 1,
}


def _jobs(args: argparse.Namespace, sizes: dict[str, Any]) -> list[dict[str, Any]]:
    """Every job of one repetition, in a fixed order (rotated per repetition by the caller)."""
    jobs: list[dict[str, Any]] = []
    wanted = set(args.phases)

    def worker(
        transport: str, client: str, era: str, server: str, phases: list[str], **extra: Any
    ) -> None:
        phases = [p for p in phases if p in wanted]
        if not phases:
            return
        job_sizes = {**sizes, **extra}
        label = f"{transport} {server}:{client}@{era} {'+'.join(phases)}"
        if "blobs" in extra:
            label += " " + "+".join(report.size_label(s) for s in extra["blobs"])
        if "catalog" in extra:
            label += " " + "+".join(f"{n} tools" for n in extra["catalog"])
        jobs.append(
            {
                "kind": "worker",
                "label": label,
                "client": client,
                "era": era,
                "server": server,
                "transport": transport,
                "phases": phases,
                "sizes": job_sizes,
            }
        )

    for transport in args.transports:
        # Over HTTP a connect never includes the server's start: more of them.
        cold = {} if transport == "stdio" else {"cold": sizes["cold_http"]}
        cold_sdk = {"cold": sizes["cold_sdk"]} if transport == "stdio" else cold
        for client in args.clients if "import" in wanted else ():
            jobs.append(
                {
                    "kind": "import",
                    "label": f"{transport} import:{client}",
                    "client": client,
                    "transport": transport,
                }
            )
        # The floor: no client library, no MCP; measured once per repetition.
        if args.smoke:
            worker(transport, "floor", "-", "none", ["cold", "seq", "tput", "rss", "blob"])
        else:
            worker(transport, "floor", "-", "none", ["cold", "seq", "tput"], **cold)
            worker(transport, "floor", "-", "none", ["rss"])
            for size in sizes["blobs"]:
                worker(transport, "floor", "-", "none", ["blob"], blobs=[size])
        # Client cost: the bare server, legacy era.
        for client in args.clients:
            worker(transport, client, "legacy", "bare", ["cold", "seq", "tput"], **cold)
        # Latency, large results and memory: the official SDK server, both eras.
        for client in args.clients:
            for era in ERAS[client]:
                if args.smoke:  # one worker per config keeps the smoke run short; seq and
                    # rss share a connection (the others reconnect with their settings);
                    # the catalog phase starts its own server (its figures are filed under
                    # server "catalog": report.catalog_key)
                    catalog = ["catalog"] if client in CATALOG_CLIENTS else []
                    worker(transport, client, era, "sdk", ["seq", "rss", "tput", "blob", *catalog])
                    continue
                worker(transport, client, era, "sdk", ["cold", "seq", "tput"], **cold_sdk)
                worker(transport, client, era, "sdk", ["rss"])
                for size in sizes["blobs"]:
                    worker(transport, client, era, "sdk", ["blob"], blobs=[size])
        # Catalog size: the testing server with 1k and 10k generated tools, both eras.
        for client in (c for c in args.clients if c in CATALOG_CLIENTS and not args.smoke):
            for era in ERAS[client]:
                for count in sizes["catalog"]:
                    worker(transport, client, era, "catalog", ["catalog"], catalog=[count])
    # Many idle bindings (stdio only).
    if "stdio" in args.transports:
        for client in args.clients:
            worker("stdio", client, "legacy", args.fanout_server, ["fanout"])
    # Many servers through one Host, and the same as separate Clients opened one after
    # another and all at once (mcpclient, stdio).
    if "stdio" in args.transports and "mcpclient" in args.clients:
        # (the "era" names the mode; report.HOST labels the rows by it)
        for server, mode in HOST_SERVERS.items():
            worker("stdio", "mcpclient", mode, server, ["host"])
    # What protocol="auto" costs over "legacy" against a legacy-only server that answers
    # the probe with an error or dies of it (mcpclient, stdio); a fresh worker each, so
    # the era cache starts empty (the "era" is the protocol of every connect).
    if "stdio" in args.transports and "mcpclient" in args.clients:
        for server in ERA_SERVERS:
            for protocol in ("legacy", "auto"):
                worker("stdio", "mcpclient", protocol, server, ["era"])
    # The tool list handed to the model per turn, full export vs search mode (mcpclient,
    # no server: filed under stdio; the "era" is the provider).
    if "stdio" in args.transports and "mcpclient" in args.clients:
        for provider in EXPORT_PROVIDERS:
            worker("stdio", "mcpclient", provider, "export", ["export"])
    return jobs


def _worker_env() -> dict[str, str]:
    """The workers' environment: bytecode caches on, the repo on PYTHONPATH if need be."""
    # Workers read compiled bytecode, as an installed package's users do (pip
    # compiles at install, and the SDK's caches are in site-packages): with
    # PYTHONDONTWRITEBYTECODE set (tox sets it) a checkout's first connect would
    # include compiling mcpclient, which its lazy imports load on first use.
    # main() compiles the checkout's __pycache__ (git-ignored) before the first job.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if importlib.util.find_spec("mcpclient") is None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
        )
    return env


def _run_process(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    """Run a child in its own process group; kill the whole group on timeout.

    It runs in ``benchmarks/``, so ``python -c`` never picks up a source tree
    from the caller's working directory instead of the installed mcpclient.
    """
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            cwd=HERE,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            err.seek(0)
            return -1, "", f"timed out after {timeout:g} s\n" + err.read()[-4000:]
        err.seek(0)
        return proc.returncode, out, err.read()[-4000:]


IMPORT_CODE = """
import sys, time
sys.path.insert(0, {bench!r})
t0 = time.perf_counter()
{statements}
print((time.perf_counter() - t0) * 1000)
"""


def _import_env(env: dict[str, str], cache_dir: str) -> dict[str, str]:
    """The import phase's environment: a private bytecode cache of this run.

    Every client's imports read bytecode from the same place, filled by each
    job's first, untimed import. ``env`` already lets bytecode be written
    (:func:`_worker_env`).
    """
    return {**env, "PYTHONPYCACHEPREFIX": cache_dir}


def _run_import(job: dict[str, Any], env: dict[str, str], count: int, timeout: float) -> Any:
    statements = IMPORTS[job["client"]][job["transport"]]
    code = IMPORT_CODE.format(bench=str(HERE), statements=statements)
    samples = []
    for i in range(count + 1):  # the first one only fills the bytecode cache
        rc, out, err = _run_process([sys.executable, "-c", code], env, timeout)
        if rc != 0:
            raise RuntimeError(f"import failed (exit {rc}): {err.strip()[-2000:]}")
        if i:
            samples.append(float(out.strip().splitlines()[-1]))
    return {"import_ms": statistics.median(samples), "samples_ms": samples}


def _run_worker(job: dict[str, Any], env: dict[str, str], timeout: float) -> Any:
    spec = {k: job[k] for k in ("client", "era", "server", "transport", "phases", "sizes")}
    rc, out, err = _run_process([sys.executable, str(WORKER), json.dumps(spec)], env, timeout)
    lines = [line for line in out.splitlines() if line.strip()]
    if rc != 0 or not lines:
        raise RuntimeError(f"worker failed (exit {rc}): {err.strip()[-2000:]}")
    return json.loads(lines[-1])


def _versions() -> dict[str, str]:
    versions = {}
    for package in ("mcp", "mcp-types", "anyio", "pydantic", "mcpclient"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[package] = importlib.metadata.version(package)
    return versions


def _mcpclient_info(env: dict[str, str]) -> tuple[str, str]:
    code = (
        "import mcpclient, os\n"
        "print(mcpclient.__version__)\n"
        "print(os.path.dirname(mcpclient.__file__))"
    )
    rc, out, err = _run_process([sys.executable, "-c", code], env, 60)
    if rc != 0:
        raise SystemExit(f"mcpclient cannot be imported: {err.strip()[-500:]}")
    version, path = out.strip().splitlines()[-2:]
    return version, path


def _source_digest(package_dir: str) -> str:
    """A fingerprint of the mcpclient sources, to tell whether they changed mid-run."""
    digest = hashlib.sha256()
    root = Path(package_dir)
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def write_reports(data: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """Summarise ``data['runs']`` and write results.json, summary.md (and summary.png)."""
    meta = data["meta"]
    figures = report.Figures(data["runs"], report.transports_of(meta)[0])
    summary = report.build(figures, meta)
    data["summary"] = summary
    out_dir.mkdir(parents=True, exist_ok=True)
    meta["chart"] = report.chart(summary, out_dir / "summary.png")
    (out_dir / "results.json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    (out_dir / "summary.md").write_text(report.markdown(summary, meta) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument("--smoke", action="store_true", help="1 repetition, tiny sizes, < 40 s")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="report folder")
    parser.add_argument(
        "--clients",
        default=",".join(CLIENTS),
        help=f"comma-separated subset of {','.join(CLIENTS)} (the floor always runs)",
    )
    parser.add_argument(
        "--transport",
        default="stdio,http",
        help=f"comma-separated subset of {','.join(TRANSPORTS)} (default stdio,http)",
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"comma-separated subset of {','.join(PHASES)} (default all)",
    )
    parser.add_argument(
        "--fanout-server",
        default="bare",
        choices=("bare", "sdk"),
        help="server of the fan-out phase (bare: the client's cost, not 50 SDK server starts)",
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds per worker (default 900; 60 with --smoke)"
    )
    parser.add_argument("--summarize", type=Path, help="re-render a stored results.json")
    args = parser.parse_args(argv)

    if args.summarize:
        data = json.loads(args.summarize.read_text())
        write_reports(data, args.out)
        print(f"wrote {args.out / 'summary.md'}")
        return 0

    args.transports = parse_transports(args.transport)
    args.clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(args.clients) - set(CLIENTS)
    if unknown:
        parser.error(f"unknown clients: {', '.join(sorted(unknown))}")
    args.phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = set(args.phases) - set(PHASES)
    if unknown or not args.phases:
        parser.error(f"unknown phases: {', '.join(sorted(unknown)) or '(none given)'}")
    if args.smoke:
        args.reps = 1
    if args.timeout is None:
        args.timeout = 60.0 if args.smoke else 900.0
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    sizes = dict(SMOKE if args.smoke else FULL)
    env = _worker_env()
    mcpclient_version, mcpclient_path = _mcpclient_info(env)
    _run_process([sys.executable, "-m", "compileall", "-q", mcpclient_path], env, 300)

    started = time.time()
    jobs = _jobs(args, sizes)
    meta = {
        "started": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "argv": sys.argv[1:] if argv is None else argv,
        "smoke": args.smoke,
        "reps": args.reps,
        "clients": args.clients,
        "transport": ",".join(args.transports),
        "transports": args.transports,
        "phases": args.phases,
        "fanout_server": args.fanout_server,
        "sizes": sizes,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "versions": {**_versions(), "mcpclient": mcpclient_version},
        "mcpclient_path": mcpclient_path,
        "mcpclient_digest": _source_digest(mcpclient_path),
        "load_before": os.getloadavg(),
        "duration_s": 0.0,
    }
    runs: list[dict[str, Any]] = []
    total = len(jobs) * args.reps
    done = 0
    transports = ", ".join(args.transports)
    print(f"{len(jobs)} jobs x {args.reps} repetition(s), transports {transports}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as cache_dir:
        import_env = _import_env(env, cache_dir)
        for rep in range(args.reps):
            shift = rep * len(jobs) // args.reps
            for job in jobs[shift:] + jobs[:shift]:
                done += 1
                runs.append(_run_job(job, rep, env, import_env, sizes, args.timeout))
                run = runs[-1]
                status = "ok" if run["ok"] else "FAILED: " + run["error"].splitlines()[0][:200]
                head = f"[{done}/{total}] rep {rep + 1} {job['label']:<48}"
                print(f"{head} {run['seconds']:6.1f} s  {status}", flush=True)

    meta["duration_s"] = time.time() - started
    meta["load_after"] = os.getloadavg()
    if _source_digest(mcpclient_path) != meta["mcpclient_digest"]:
        meta["mcpclient_changed"] = True
        print("WARNING: the mcpclient sources changed during the run", file=sys.stderr)
    data = {"meta": meta, "runs": runs}
    summary = write_reports(data, args.out)
    print(f"\nwrote {args.out / 'results.json'} and {args.out / 'summary.md'}", end="")
    print(
        f" and {args.out / 'summary.png'}" if meta["chart"] else " (no chart: matplotlib missing)"
    )
    for target in summary["targets"]:
        verdict = "met   " if target["met"] else "MISSED"
        print(f"  {verdict} {target['name']}: {target['value']:.2f} (goal {target['goal']})")
    failed = [r for r in runs if not r["ok"]]
    if failed:
        print(f"{len(failed)} job(s) failed", file=sys.stderr)
        return 1
    return 0


def _run_job(
    job: dict[str, Any],
    rep: int,
    env: dict[str, str],
    import_env: dict[str, str],
    sizes: dict[str, Any],
    timeout: float,
) -> dict[str, Any]:
    """One job of one repetition; a failure is recorded, never raised."""
    t0 = time.perf_counter()
    run = {**job, "rep": rep}
    try:
        if job["kind"] == "import":
            run["result"] = _run_import(job, import_env, sizes["imports"], timeout)
        else:
            run["result"] = _run_worker(job, env, timeout)
        run["ok"] = True
    except Exception as exc:
        run["ok"] = False
        run["error"] = str(exc)
    run["seconds"] = round(time.perf_counter() - t0, 3)
    return run


if __name__ == "__main__":
    sys.exit(main())
