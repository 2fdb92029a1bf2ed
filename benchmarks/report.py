"""Turn the raw worker measurements into medians, ratios, targets and reports.

Each figure is the median over repetitions. A ratio is the median of the
per-repetition quotients ``client ÷ reference`` (both measured in the same
repetition), so slow drifts of the machine cancel out. For calls/s a higher
ratio is better; for everything else lower is better.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchlib import KIB, MIB

#: The official SDK, the raw client and the floor: the references of every ratio.
REFERENCES = ("sdk", "raw", "floor")

# -- flattening ------------------------------------------------------------------


def config_key(run: dict[str, Any], default_transport: str = "stdio") -> str:
    """``<transport>/`` then ``floor``, ``import:<client>`` or ``<server>:<client>@<era>``."""
    transport = run.get("transport") or default_transport
    if run["client"] == "floor":
        return f"{transport}/floor"
    if run["kind"] == "import":
        return f"{transport}/import:{run['client']}"
    return f"{transport}/{run['server']}:{run['client']}@{run['era']}"


def catalog_key(key: str) -> str:
    """Where a worker's catalog-phase figures go: server ``catalog``, whichever worker.

    The catalog phase starts its own server (the testing server), so ``--smoke`` can
    run it inside the SDK-server worker of the same client, era and transport.
    """
    transport, _, rest = key.partition("/")
    _, sep, label = rest.partition(":")
    return f"{transport}/catalog:{label}" if sep else key


def _metrics(run: dict[str, Any]) -> dict[str, float]:
    """The figures of one worker run, flattened to ``metric -> value``."""
    result = run.get("result") or {}
    out: dict[str, float] = {}
    bad = 0
    if run["kind"] == "import":
        out["import_ms"] = result["import_ms"]
        return out
    if "cold" in result:
        cold = result["cold"]
        out.update(cold_ms=cold["cold_ms"], close_ms=cold["close_ms"], first_ms=cold["first_ms"])
        if "first_call_ms" in cold:  # results stored before the column existed have none
            out["first_call_ms"] = cold["first_call_ms"]
    if "seq" in result:
        seq = result["seq"]
        out.update(seq_p50_us=seq["p50_us"], seq_p99_us=seq["p99_us"], seq_cpu_us=seq["cpu_us"])
        bad += seq["bad"]
    if "tput" in result:
        tput = result["tput"]
        out.update(tput_cps=tput["calls_per_s"], tput_cpu_us=tput["cpu_us"])
        bad += tput["bad"]
    if "rss" in result:
        rss = result["rss"]
        out.update(
            rss_peak_mib=rss["peak_mib"], rss_growth_mib=rss["after_mib"] - rss["connected_mib"]
        )
        bad += rss["bad"]
    for size, blob in (result.get("blob") or {}).items():
        out[f"blob_{size}_ms"] = blob["latency_ms"]
        out[f"blob_{size}_peak_mib"] = blob["peak_mib"]
        if "floor_ms" in blob:  # HTTP, SDK server: the socket floor, paired call by call
            out[f"blob_{size}_floor_ms"] = blob["floor_ms"]
            out[f"blob_{size}_own_ms"] = blob["own_ms"]
    for count, cat in (result.get("catalog") or {}).items():
        out[f"catalog_{count}_cpu_ms"] = cat["cpu_ms"]
        out[f"catalog_{count}_wall_ms"] = cat["wall_ms"]
        out[f"catalog_{count}_tools"] = cat["tools"]
    if "fanout" in result:
        fan = result["fanout"]
        out.update(
            fanout_rss_kib=fan["rss_per_binding_kib"],
            fanout_threads=fan["threads_per_binding"],
            fanout_fds=fan["fds_per_binding"],
            fanout_threads_total=fan["threads_total"],
            fanout_open_s=fan["open_s"],
            fanout_close_s=fan["close_s"],
        )
        if fan.get("asyncio_tasks") is not None:
            out["fanout_tasks"] = fan["asyncio_tasks"]
    if "host" in result:
        host = result["host"]
        out.update(
            host_one_ms=host["one_ms"],
            host_connect_ms=host["connect_ms"],
            host_connect_ratio=host["connect_ratio"],
            host_rss_kib=host["rss_per_binding_kib"],
            host_threads=host["threads_per_binding"],
            host_fds=host["fds_per_binding"],
        )
        for metric in (
            "catalog_build_ms",
            "catalog_read_us",
            "catalog_tools",
            "floor_ms",
            "connect_vs_floor",
        ):
            if metric in host:
                out[f"host_{metric}"] = host[metric]
    if "era" in result:
        era = result["era"]
        for prefix in ("uncached", "cached"):
            out[f"era_{prefix}_ms"] = era[f"{prefix}_ms"]
            out[f"era_{prefix}_close_ms"] = era[f"{prefix}_close_ms"]
            out[f"era_{prefix}_requests"] = era[f"{prefix}_requests"]
            out[f"era_{prefix}_starts"] = era[f"{prefix}_starts"]
            out[f"era_{prefix}_restarts"] = era[f"{prefix}_restarts_logged"]
    if "export" in result:
        exported = result["export"]
        for metric in (
            "full_bytes", "full_tokens", "search_bytes", "search_loaded_bytes",
            "search_loaded_tokens", "answer_bytes", "full_ms", "search_ms",
        ):  # fmt: skip
            out[f"export_{metric}"] = exported[metric]
        out["export_percent"] = exported["ratio"] * 100
    out["bad"] = bad
    return out


class Figures:
    """Per-repetition values by configuration and metric, with medians and ratios."""

    def __init__(self, runs: Iterable[dict[str, Any]], default_transport: str = "stdio") -> None:
        self.values: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
        self.protocol: dict[str, str] = {}
        self.options: dict[str, dict[str, Any]] = defaultdict(dict)
        self.failed: list[str] = []
        for run in runs:
            key = config_key(run, default_transport)
            if not run.get("ok"):
                error = (run.get("error") or "?").strip().splitlines()
                self.failed.append(
                    f"{run['label']} (rep {run['rep']}): {error[-1] if error else '?'}"
                )
                continue
            for metric, value in _metrics(run).items():
                where = catalog_key(key) if metric.startswith("catalog_") else key
                bucket = self.values[where][metric]
                bucket[run["rep"]] = bucket.get(run["rep"], 0) + value if metric == "bad" else value
            result = run.get("result") or {}
            version = (result.get("info") or {}).get("protocol_version")
            if version:
                self.protocol.setdefault(key, version)
                if "catalog" in result:
                    self.protocol.setdefault(catalog_key(key), version)
            for phase, data in result.items():
                if phase == "blob":
                    for size, blob in data.items():
                        self.options[key][f"blob {size_label(int(size))}"] = blob["options"]
                elif phase == "catalog":
                    for count, cat in data.items():
                        self.options[catalog_key(key)][f"catalog {count} tools"] = cat["options"]
                elif isinstance(data, dict) and data.get("options"):
                    self.options[key][phase] = data["options"]

    def has(self, key: str) -> bool:
        return key in self.values

    def median(self, key: str, metric: str) -> float | None:
        series = self.values.get(key, {}).get(metric)
        return statistics.median(series.values()) if series else None

    def reps(self, key: str, metric: str) -> int:
        return len(self.values.get(key, {}).get(metric, {}))

    def ratio(self, key: str, ref: str, metric: str) -> float | None:
        """Median over repetitions of ``key ÷ ref`` for ``metric``."""
        mine = self.values.get(key, {}).get(metric, {})
        theirs = self.values.get(ref, {}).get(metric, {})
        quotients = [mine[r] / theirs[r] for r in mine if theirs.get(r)]
        return statistics.median(quotients) if quotients else None


# -- formatting ------------------------------------------------------------------


def size_label(size: int) -> str:
    if size % MIB == 0:
        return f"{size // MIB} MiB"
    if size % KIB == 0:
        return f"{size // KIB} KiB"
    return f"{size} B"


def fmt(value: float | None) -> str:
    if value is None:
        return "–"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


# -- the report ------------------------------------------------------------------


def _label(key: str) -> str:
    """A row's label: ``mcpclient@legacy``, ``sdk`` (import rows), ``floor``."""
    key = key.split("/", 1)[-1]
    return key.split(":", 1)[1] if ":" in key else key


def _client(key: str) -> str:
    return _label(key).split("@")[0]


def _present(fig: Figures, keys: Iterable[str]) -> list[str]:
    return [k for k in keys if fig.has(k)]


def transports_of(meta: dict[str, Any]) -> list[str]:
    """The transports a run measured (older results name one, as ``transport``)."""
    return list(meta.get("transports") or str(meta.get("transport", "stdio")).split(","))


TRANSPORT_NAMES = {"stdio": "stdio", "http": "HTTP"}


def _transport_tables(fig: Figures, meta: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    """The client-cost, SDK-server and import tables of one transport."""
    clients = meta["clients"]
    blobs = meta["sizes"]["blobs"]
    name = TRANSPORT_NAMES.get(transport, transport)
    t = f"{transport}/"

    def configs(server: str, eras: Iterable[str] = ("legacy", "modern")) -> list[str]:
        order = [f"{t}{server}:{c}@{e}" for c in ("raw", "sdk", "mcpclient") for e in eras]
        return _present(fig, [f"{t}floor"] + [k for k in order if _client(k) in clients])

    blob_cols = [(f"blob {size_label(s)} ms", f"blob_{s}_ms") for s in blobs] + [
        (f"peak RSS, {size_label(s)} blob, MiB", f"blob_{s}_peak_mib") for s in blobs
    ]
    floor_note = (
        "floor: `http.client` keep-alive POSTs to a JSON echo server"
        if transport == "http"
        else "floor: a `python -c` line echo child"
    )
    tables = [
        {
            "id": f"client_cost_{transport}",
            "title": f"Client cost: bare server (no MCP work), {name}, legacy era",
            "note": floor_note,
            "rows": configs("bare", ("legacy",)),
            "columns": [
                ("cold start ms", "cold_ms"),
                ("first call ms", "first_call_ms"),
                ("first connect ms", "first_ms"),
                ("close ms", "close_ms"),
                ("seq p50 µs", "seq_p50_us"),
                ("seq p99 µs", "seq_p99_us"),
                ("CPU/call µs", "seq_cpu_us"),
                ("16-way calls/s", "tput_cps"),
                ("16-way CPU/call µs", "tput_cpu_us"),
            ],
            "ratios": [
                ("mcpclient ÷ sdk", f"{t}bare:mcpclient@legacy", f"{t}bare:sdk@legacy"),
                ("mcpclient ÷ raw", f"{t}bare:mcpclient@legacy", f"{t}bare:raw@legacy"),
                ("mcpclient ÷ floor", f"{t}bare:mcpclient@legacy", f"{t}floor"),
            ],
        },
        {
            "id": f"sdk_server_{transport}",
            "title": f"Against the official SDK server, {name} (latency, large results, memory)",
            "note": floor_note + "; it talks to no MCP server",
            "rows": configs("sdk"),
            "columns": [
                ("cold start ms", "cold_ms"),
                ("first call ms", "first_call_ms"),
                ("seq p50 µs", "seq_p50_us"),
                ("seq p99 µs", "seq_p99_us"),
                ("CPU/call µs", "seq_cpu_us"),
                ("16-way calls/s", "tput_cps"),
                *blob_cols,
                ("peak RSS after 10k calls MiB", "rss_peak_mib"),
                ("RSS growth over 10k calls MiB", "rss_growth_mib"),
            ],
            "ratios": [
                (
                    "mcpclient@legacy ÷ sdk@legacy",
                    f"{t}sdk:mcpclient@legacy",
                    f"{t}sdk:sdk@legacy",
                ),
                (
                    "mcpclient@modern ÷ sdk@modern",
                    f"{t}sdk:mcpclient@modern",
                    f"{t}sdk:sdk@modern",
                ),
                ("mcpclient@legacy ÷ raw", f"{t}sdk:mcpclient@legacy", f"{t}sdk:raw@legacy"),
            ],
        },
        {
            "id": f"import_{transport}",
            "title": f"Import of the client package for {name} (fresh interpreter)",
            "rows": _present(fig, [f"{t}import:{c}" for c in ("raw", "sdk", "mcpclient")]),
            "columns": [("import ms", "import_ms")],
            "ratios": [
                ("mcpclient ÷ sdk", f"{t}import:mcpclient", f"{t}import:sdk"),
                ("mcpclient ÷ raw", f"{t}import:mcpclient", f"{t}import:raw"),
            ],
        },
    ]
    if transport == "http":
        tables.insert(2, _own_share_table(fig, meta, configs("sdk")))
    tables.append(_catalog_table(fig, meta, transport))
    return tables


def _era_ratios(t: str, server: str) -> list[tuple[str, str, str]]:
    return [
        (f"mcpclient@{era} ÷ sdk@{era}", f"{t}{server}:mcpclient@{era}", f"{t}{server}:sdk@{era}")
        for era in ("legacy", "modern")
    ]


def _own_share_table(fig: Figures, meta: dict[str, Any], rows: list[str]) -> dict[str, Any]:
    """Large results over HTTP: each client's latency, the socket floor's, and the difference."""
    t = "http/"
    columns = []
    for size in meta["sizes"]["blobs"]:
        label = size_label(size)
        columns += [
            (f"{label} ms", f"blob_{size}_ms"),
            (f"{label} floor ms", f"blob_{size}_floor_ms"),
            (f"{label} own share ms", f"blob_{size}_own_ms"),
        ]
    return {
        "id": "own_share_http",
        "title": "Large results over HTTP: each client's own share above the HTTP floor",
        "note": "floor: a raw socket reading the same `blob(n)` response from the same SDK"
        " server to its last byte, nothing decoded, one floor call after each timed call"
        " (same era); own share: the client's latency minus the floor's, paired call by call",
        "rows": [k for k in rows if fig.median(k, columns[-1][1]) is not None],
        "columns": columns,
        "ratios": [
            *_era_ratios(t, "sdk"),
            ("mcpclient@legacy ÷ raw", f"{t}sdk:mcpclient@legacy", f"{t}sdk:raw@legacy"),
        ],
    }


def _catalog_table(fig: Figures, meta: dict[str, Any], transport: str) -> dict[str, Any]:
    """Discovering large catalogs: client CPU and wall time per connect, per catalog size."""
    t = f"{transport}/"
    name = TRANSPORT_NAMES.get(transport, transport)
    counts = meta["sizes"].get("catalog") or []
    columns = [(f"{n} tools: CPU ms", f"catalog_{n}_cpu_ms") for n in counts]
    columns += [(f"{n} tools: wall ms", f"catalog_{n}_wall_ms") for n in counts]
    columns += [(f"tools listed ({n})", f"catalog_{n}_tools") for n in counts]
    order = [f"{t}catalog:{c}@{e}" for c in ("sdk", "mcpclient") for e in ("legacy", "modern")]
    spawn = "spawn + " if transport == "stdio" else ""
    return {
        "id": f"catalog_{transport}",
        "title": f"Catalog size: discovering generated tools, {name} (mcpclient's testing server)",
        "note": f"one connect = {spawn}handshake + every `tools/list` page"
        f" ({meta['sizes'].get('catalog_page', '?')} tools a page) + the client's catalog;"
        " CPU: `process_time` of the client process",
        "rows": _present(fig, [k for k in order if _client(k) in meta["clients"]]),
        "columns": columns,
        "ratios": _era_ratios(t, "catalog"),
    }


def _fanout_table(fig: Figures, meta: dict[str, Any]) -> dict[str, Any]:
    fan = f"stdio/{meta['fanout_server']}"
    return {
        "id": "fanout",
        "title": f"{meta['sizes']['fanout']} stdio bindings open at once"
        f" ({meta['fanout_server']} server)",
        "rows": _present(fig, [f"{fan}:{c}@legacy" for c in ("raw", "sdk", "mcpclient")]),
        "columns": [
            ("RSS per binding KiB", "fanout_rss_kib"),
            ("threads per binding", "fanout_threads"),
            ("OS threads, all open", "fanout_threads_total"),
            ("fds per binding", "fanout_fds"),
            ("asyncio tasks", "fanout_tasks"),
            ("open all s", "fanout_open_s"),
            ("close all s", "fanout_close_s"),
        ],
        "ratios": [("mcpclient ÷ sdk", f"{fan}:mcpclient@legacy", f"{fan}:sdk@legacy")],
    }


#: The host phase's rows: labelled ``mcpclient@host``, ``@separate`` and ``@parallel``.
HOST = "stdio/host:mcpclient@host"
HOST_SEPARATE = "stdio/hostsep:mcpclient@separate"
HOST_PARALLEL = "stdio/hostpar:mcpclient@parallel"


def _host_table(fig: Figures, meta: dict[str, Any]) -> dict[str, Any]:
    sizes = meta["sizes"]
    return {
        "id": "host",
        "title": f"{sizes.get('host_bindings', '?')} stdio testing servers"
        f" ({sizes.get('host_tools', '?')} tools each): one Host, or separate Clients",
        "note": "connect: the Host's connect() of all of them, in parallel, or opening the"
        " separate Clients one after another (separate) or all at once on a thread pool"
        " (parallel); ÷ one: that time over one connect's, in the"
        " same process; parallel floor: as many raw clients started at once (what the"
        " cores allow: each child's start is CPU-bound); per binding: growth once all are"
        " open and idle",
        "rows": _present(fig, [HOST_SEPARATE, HOST_PARALLEL, HOST]),
        "columns": [
            ("one connect ms", "host_one_ms"),
            ("connect all ms", "host_connect_ms"),
            ("connect all ÷ one", "host_connect_ratio"),
            ("parallel floor ms", "host_floor_ms"),
            ("connect all ÷ floor", "host_connect_vs_floor"),
            ("RSS per binding KiB", "host_rss_kib"),
            ("threads per binding", "host_threads"),
            ("fds per binding", "host_fds"),
            ("catalog build ms", "host_catalog_build_ms"),
            ("catalog read µs", "host_catalog_read_us"),
            ("catalog tools", "host_catalog_tools"),
        ],
        "ratios": [
            ("Host ÷ separate Clients", HOST, HOST_SEPARATE),
            ("Host ÷ the same Clients started at once", HOST, HOST_PARALLEL),
        ],
    }


def _host_targets(fig: Figures, meta: dict[str, Any]) -> list[dict[str, Any] | None]:
    count = meta["sizes"].get("host_bindings", "?")
    return [
        _target(
            fig,
            f"Host connect of {count} stdio servers vs one connect (absolute quotient)",
            HOST,
            None,
            "host_connect_ratio",
            "<=",
            1.5,
        ),
        _target(
            fig,
            f"Host connect of {count} stdio servers vs {count} raw clients started at once"
            " (absolute quotient)",
            HOST,
            None,
            "host_connect_vs_floor",
            "<=",
            1.5,
        ),
        _target(
            fig,
            "threads per binding, Host vs separate Clients",
            HOST,
            HOST_SEPARATE,
            "host_threads",
            "<=",
            1.0,
        ),
        # RSS per binding is a difference of two readings (±20 KiB run to run): 10 % slack.
        _target(
            fig,
            "memory per binding, Host vs separate Clients",
            HOST,
            HOST_SEPARATE,
            "host_rss_kib",
            "<=",
            1.1,
        ),
        # The same, against Clients started in parallel too: the Host's own share.
        _target(
            fig,
            "memory per binding, Host vs the same Clients started at once",
            HOST,
            HOST_PARALLEL,
            "host_rss_kib",
            "<=",
            1.1,
        ),
        _target(
            fig,
            "reading the built host.catalog(), µs (absolute)",
            HOST,
            None,
            "host_catalog_read_us",
            "<=",
            1000,
        ),
    ]


#: The era phase's cases: server kind, and what the legacy-only server does with the probe.
ERA_CASES = {
    "eraerr": "answers the probe with an error",
    "eraexit": "dies of the probe (--exit-on-discover)",
}


def _era_tables(fig: Figures) -> list[dict[str, Any]]:
    """protocol="auto" vs "legacy" at connect, one table per legacy-only server's case."""
    tables = []
    for server, what in ERA_CASES.items():
        legacy, auto = f"stdio/{server}:mcpclient@legacy", f"stdio/{server}:mcpclient@auto"
        tables.append(
            {
                "id": f"era_{server}",
                "title": f"Connect with protocol auto vs legacy: a legacy-only stdio testing"
                f" server that {what}",
                "note": "connect = spawn + negotiate + discover the catalog; uncached: a server"
                " command the process's era cache has never seen (the first in a fresh worker);"
                " cached: the same command again (auto goes straight to initialize);"
                " requests: what the server read up to and including the initialize it"
                " answered (the handshake's round trips); starts: server processes started"
                " (a wrapper logs each); restarts logged: mcpclient's warnings; counts are"
                " the worst connect's",
                "rows": _present(fig, [legacy, auto]),
                "columns": [
                    ("uncached connect ms", "era_uncached_ms"),
                    ("cached connect ms", "era_cached_ms"),
                    ("close ms", "era_uncached_close_ms"),
                    ("requests, uncached", "era_uncached_requests"),
                    ("requests, cached", "era_cached_requests"),
                    ("starts, uncached", "era_uncached_starts"),
                    ("starts, cached", "era_cached_starts"),
                    ("restarts logged", "era_uncached_restarts"),
                ],
                "ratios": [("auto ÷ legacy", auto, legacy)],
            }
        )
    return tables


#: The export phase's rows: one worker per provider (its "era").
EXPORT_PROVIDERS = ("openai_chat", "openai_responses", "anthropic", "gemini")


def _export_table(fig: Figures, meta: dict[str, Any]) -> dict[str, Any]:
    """The tool list handed to the model per turn: full export vs search mode."""
    sizes = meta["sizes"]
    return {
        "id": "export",
        "title": f"Tools handed to the model per turn, {sizes.get('export_tools', '?')} tools:"
        " full export vs search mode",
        "note": "bytes of the tool list's compact JSON; tokens ≈ bytes ÷ 4 (an estimate, no"
        " tokenizer); search: the two meta-tools (search_tools, load_tools) alone, and with"
        f" {sizes.get('export_loaded', '?')} tools loaded; answer: one search_tools result"
        " message (8 matches), handed once; % = search with tools loaded ÷ full; ms: median"
        " time to build the export",
        "rows": _present(fig, [f"stdio/export:mcpclient@{p}" for p in EXPORT_PROVIDERS]),
        "columns": [
            ("full bytes", "export_full_bytes"),
            ("full tokens≈", "export_full_tokens"),
            ("search bytes", "export_search_bytes"),
            ("search + loaded bytes", "export_search_loaded_bytes"),
            ("search + loaded tokens≈", "export_search_loaded_tokens"),
            ("% of full", "export_percent"),
            ("answer bytes", "export_answer_bytes"),
            ("full ms", "export_full_ms"),
            ("search ms", "export_search_ms"),
        ],
        "ratios": [],
    }


def _worst(
    fig: Figures, key: str, ref: str, value: Callable[[dict[str, float], dict[str, float]], float]
) -> float | None:
    """The largest over repetitions of ``value(key's figures, ref's figures)``."""
    mine, theirs = fig.values.get(key, {}), fig.values.get(ref, {})
    reps = sorted({r for series in mine.values() for r in series})
    out = []
    for rep in reps:
        a = {m: series[rep] for m, series in mine.items() if rep in series}
        b = {m: series[rep] for m, series in theirs.items() if rep in series}
        if a and b:
            out.append(value(a, b))
    return max(out) if out else None


def _count_target(
    fig: Figures,
    name: str,
    server: str,
    value: Callable[[dict[str, float], dict[str, float]], float],
    goal: float,
) -> dict[str, Any] | None:
    """A goal on counts (auto's row against legacy's), never on time: the worst repetition."""
    ref = f"stdio/{server}:mcpclient@legacy"
    worst = _worst(fig, f"stdio/{server}:mcpclient@auto", ref, value)
    if worst is None:
        return None
    return {
        "name": name,
        "metric": "era",
        "mcpclient": worst,
        "reference": None,
        "reference_config": None,
        "value": worst,
        "goal": f"<= {goal:g}",
        "met": worst <= goal,
    }


def _extra(metric: str) -> Callable[[dict[str, float], dict[str, float]], float]:
    return lambda auto, legacy: auto[metric] - legacy[metric]


def _unlogged(auto: dict[str, float], legacy: dict[str, float]) -> float:
    """Extra starts that mcpclient did not log as a restart."""
    return (
        auto["era_uncached_starts"] - legacy["era_uncached_starts"] - auto["era_uncached_restarts"]
    )


def _cached_extra(auto: dict[str, float], legacy: dict[str, float]) -> float:
    return max(
        auto["era_cached_requests"] - legacy["era_cached_requests"],
        auto["era_cached_starts"] - legacy["era_cached_starts"],
    )


def _era_targets(fig: Figures) -> list[dict[str, Any] | None]:
    """Issue #25: auto costs at most one extra round trip, or one restart (recorded)."""
    err, exit_ = (
        "auto vs legacy, server answering the probe with an error",
        ("auto vs legacy, server dying of the probe"),
    )
    return [
        _count_target(
            fig, f"{err}: extra round trips", "eraerr", _extra("era_uncached_requests"), 1
        ),
        _count_target(fig, f"{err}: extra starts", "eraerr", _extra("era_uncached_starts"), 0),
        _count_target(
            fig, f"{exit_}: extra starts (restarts)", "eraexit", _extra("era_uncached_starts"), 1
        ),
        _count_target(fig, f"{exit_}: restarts not logged", "eraexit", _unlogged, 0),
        _count_target(
            fig, f"{exit_}: extra requests", "eraexit", _extra("era_uncached_requests"), 1
        ),
        _count_target(
            fig,
            "second auto connect (era cached) vs legacy, probe refused: extra requests or starts",
            "eraerr",
            _cached_extra,
            0,
        ),
        _count_target(
            fig,
            "second auto connect (era cached) vs legacy, probe fatal: extra requests or starts",
            "eraexit",
            _cached_extra,
            0,
        ),
    ]


def _targets(fig: Figures, meta: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The goals (README "Targets"), for each transport measured."""
    transports = transports_of(meta)
    big = str(max(meta["sizes"]["blobs"]))
    big_label = size_label(int(big))
    counts = meta["sizes"].get("catalog") or [0]
    most = max(counts)
    fan = f"stdio/{meta['fanout_server']}"
    out: list[dict[str, Any] | None] = []
    if "stdio" in transports:
        s = "stdio/"
        out += [
            _target(
                fig,
                "client CPU per sequential call (bare, stdio) vs SDK",
                f"{s}bare:mcpclient@legacy",
                f"{s}bare:sdk@legacy",
                "seq_cpu_us",
                "<=",
                0.5,
            ),
            _target(
                fig,
                "client CPU per sequential call (bare, stdio) vs raw",
                f"{s}bare:mcpclient@legacy",
                f"{s}bare:raw@legacy",
                "seq_cpu_us",
                "<=",
                1.5,
            ),
            _target(
                fig,
                "16 in flight, calls/s (bare, stdio) vs SDK",
                f"{s}bare:mcpclient@legacy",
                f"{s}bare:sdk@legacy",
                "tput_cps",
                ">=",
                2.0,
            ),
        ]
        for era in ("legacy", "modern"):
            out.append(
                _target(
                    fig,
                    f"{big_label} result latency (SDK server, stdio) vs SDK, {era}",
                    f"{s}sdk:mcpclient@{era}",
                    f"{s}sdk:sdk@{era}",
                    f"blob_{big}_ms",
                    "<=",
                    0.2,
                )
            )
            # Issue #30's goal; the SDK server's own start (~0.8 s) is most of
            # every client's cold start, so the raw client's (below) is the honest bound.
            out.append(
                _target(
                    fig,
                    f"cold start (SDK server, stdio) vs SDK, {era}",
                    f"{s}sdk:mcpclient@{era}",
                    f"{s}sdk:sdk@{era}",
                    "cold_ms",
                    "<=",
                    0.8,
                )
            )
        out.append(
            _target(
                fig,
                "cold start (SDK server, stdio) vs raw, legacy",
                f"{s}sdk:mcpclient@legacy",
                f"{s}sdk:raw@legacy",
                "cold_ms",
                "<=",
                1.1,
            )
        )
        out.append(
            _target(
                fig,
                "import time (stdio) vs SDK",
                f"{s}import:mcpclient",
                f"{s}import:sdk",
                "import_ms",
                "<=",
                0.4,
            )
        )
        for era in ("legacy", "modern"):
            out.append(
                _target(
                    fig,
                    f"peak RSS after 10k calls (SDK server, stdio) vs SDK, {era}",
                    f"{s}sdk:mcpclient@{era}",
                    f"{s}sdk:sdk@{era}",
                    "rss_peak_mib",
                    "<=",
                    0.6,
                )
            )
        out += [
            _target(
                fig,
                "threads per idle binding (absolute)",
                f"{fan}:mcpclient@legacy",
                None,
                "fanout_threads",
                "<=",
                1,
            ),
            _target(
                fig,
                "memory per idle binding vs SDK",
                f"{fan}:mcpclient@legacy",
                f"{fan}:sdk@legacy",
                "fanout_rss_kib",
                "<=",
                1.25,
            ),
        ]
    if "http" in transports:
        h = "http/"
        out += [
            _target(
                fig,
                "client CPU per sequential call (bare, HTTP) vs SDK",
                f"{h}bare:mcpclient@legacy",
                f"{h}bare:sdk@legacy",
                "seq_cpu_us",
                "<=",
                0.8,
            ),
            _target(
                fig,
                "client CPU per sequential call (bare, HTTP) vs raw",
                f"{h}bare:mcpclient@legacy",
                f"{h}bare:raw@legacy",
                "seq_cpu_us",
                "<=",
                1.05,
            ),
            _target(
                fig,
                "16 in flight, calls/s (bare, HTTP) vs SDK",
                f"{h}bare:mcpclient@legacy",
                f"{h}bare:sdk@legacy",
                "tput_cps",
                ">=",
                1.0,
            ),
        ]
        for era in ("legacy", "modern"):
            out.append(
                _target(
                    fig,
                    f"own share of a {big_label} result above the floor (SDK server, HTTP)"
                    f" vs SDK, {era}",
                    f"{h}sdk:mcpclient@{era}",
                    f"{h}sdk:sdk@{era}",
                    f"blob_{big}_own_ms",
                    "<=",
                    0.5,
                )
            )
    for transport in transports:
        name = TRANSPORT_NAMES.get(transport, transport)
        for era in ("legacy", "modern"):
            out.append(
                _target(
                    fig,
                    f"client CPU to discover {most} tools ({name}) vs SDK, {era}",
                    f"{transport}/catalog:mcpclient@{era}",
                    f"{transport}/catalog:sdk@{era}",
                    f"catalog_{most}_cpu_ms",
                    "<=",
                    0.7,
                )
            )
    if "stdio" in transports:
        out += _host_targets(fig, meta)
        out += _era_targets(fig)
    return out


def build(fig: Figures, meta: dict[str, Any]) -> dict[str, Any]:
    """The summary: tables (rows of medians), ratio rows and the targets."""
    transports = transports_of(meta)
    tables = [table for t in transports for table in _transport_tables(fig, meta, t)]
    if "stdio" in transports:
        tables.append(_fanout_table(fig, meta))
        tables.append(_host_table(fig, meta))
        tables += _era_tables(fig)
        tables.append(_export_table(fig, meta))
    for table in tables:  # a row with no figure in a table (e.g. a phase not run) is left out
        metrics = [metric for _, metric in table["columns"]]
        table["rows"] = [
            key for key in table["rows"] if any(fig.median(key, m) is not None for m in metrics)
        ]
    tables = [table for table in tables if table["rows"]]
    for table in tables:
        table["data"] = [
            {
                "config": key,
                "label": _label(key),
                "client": _client(key),
                "transport": key.split("/", 1)[0],
                "protocol": fig.protocol.get(key, "–"),
                "reps": max((fig.reps(key, m) for _, m in table["columns"]), default=0),
                **{metric: fig.median(key, metric) for _, metric in table["columns"]},
            }
            for key in table["rows"]
        ]
        table["ratio_data"] = [
            {
                "label": label,
                **{metric: fig.ratio(key, ref, metric) for _, metric in table["columns"]},
            }
            for label, key, ref in table["ratios"]
            if fig.has(key) and fig.has(ref)
        ]
    rows = [{"table": t["id"], **row} for t in tables for row in t["data"]]
    return {
        "tables": [{k: v for k, v in t.items() if k not in ("rows", "ratios")} for t in tables],
        "rows": rows,
        "targets": [t for t in _targets(fig, meta) if t is not None],
        "options": {k: v for k, v in fig.options.items() if _client(k) == "mcpclient"},
        "failed": fig.failed,
    }


def _target(
    fig: Figures, name: str, key: str, ref: str | None, metric: str, op: str, goal: float
) -> dict[str, Any] | None:
    mine = fig.median(key, metric)
    if mine is None:
        return None
    if ref is None:
        value: float | None = mine
        reference = None
    else:
        value = fig.ratio(key, ref, metric)
        reference = fig.median(ref, metric)
        if value is None:
            return None
    met = value <= goal if op == "<=" else value >= goal
    return {
        "name": name,
        "metric": metric,
        "mcpclient": mine,
        "reference": reference,
        "reference_config": ref,
        "value": value,
        "goal": f"{op} {goal:g}" + ("" if ref is None else "×"),
        "met": met,
    }


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    """The Markdown report: one table per group, ratio rows under each, then the targets."""
    sizes = meta["sizes"]
    cold_http = f" over stdio, ×{sizes['cold_http']} over HTTP" if "cold_http" in sizes else ""
    out = ["# mcpclient benchmarks", ""]
    if meta.get("smoke"):
        out += ["**Smoke run**: tiny sizes and one repetition; the figures mean nothing.", ""]
    if meta.get("mcpclient_changed"):
        out += ["**Warning**: the mcpclient sources changed during this run.", ""]
    out += [
        f"- {meta['started']}, {meta['duration_s']:.0f} s; {meta['reps']} repetition(s), medians;"
        f" transports {', '.join(transports_of(meta))}",
        f"- Python {meta['python']}, {meta['cpus']} CPUs, {meta['platform']}",
        f"- mcpclient {meta['versions'].get('mcpclient', '?')}"
        f" ({meta.get('mcpclient_path', '?')}, sources {meta.get('mcpclient_digest', '?')});"
        f" mcp {meta['versions'].get('mcp', '?')}; anyio {meta['versions'].get('anyio', '?')}",
        "- load average (1, 5, 15 min) before / after: "
        + " / ".join(
            ", ".join(f"{v:.2f}" for v in meta[k]) if meta.get(k) else "?"
            for k in ("load_before", "load_after")
        ),
        f"- sizes: {sizes['warmup']} warm-up + {sizes['seq']} sequential calls;"
        f" {sizes['tput']} calls 16 in flight; {sizes['rss']} calls for RSS;"
        f" cold start ×{sizes['cold']} (×{sizes['cold_sdk']} on the SDK server"
        f"{cold_http});"
        f" blobs {', '.join(size_label(s) for s in sizes['blobs'])} ×{sizes['blob_reps']};"
        f" {sizes['fanout']} bindings; import ×{sizes['imports']}"
        + (
            f"; catalogs of {', '.join(str(n) for n in sizes['catalog'])} tools"
            f" ({sizes['catalog_page']} a page) ×{sizes['catalog_reps']} connects"
            f" after {sizes.get('catalog_warmup', 1)} warm-up"
            if sizes.get("catalog")
            else ""
        )
        + (
            f"; era: {sizes['era_cold']} uncached + {sizes['era_cached']} cached connects"
            " per worker"
            if "era_cold" in sizes
            else ""
        ),
        "- ratios are medians of per-repetition quotients (client ÷ reference):"
        " lower is better, except calls/s",
        "",
    ]
    for table in summary["tables"]:
        columns = [name for name, _ in table["columns"]]
        metrics = [metric for _, metric in table["columns"]]
        out += [f"## {table['title']}", ""]
        if table.get("note"):
            out += [f"({table['note']})", ""]
        body = [
            [
                f"**{row['label']}**" if row["client"] == "mcpclient" else row["label"],
                row["protocol"],
            ]
            + [fmt(row[m]) for m in metrics]
            for row in table["data"]
        ]
        body += [
            [f"*{ratio['label']}*", ""] + [fmt_ratio(ratio[m]) for m in metrics]
            for ratio in table["ratio_data"]
        ]
        out += _table(["config", "protocol", *columns], body)
        out.append("")
    out += ["## Targets", ""]
    out += _table(
        ["target", "mcpclient", "reference", "ratio", "goal", "status"],
        [
            [
                t["name"],
                fmt(t["mcpclient"]),
                "–"
                if t["reference"] is None
                else f"{fmt(t['reference'])} ({_label(t['reference_config'])})",
                "–" if t["reference"] is None else fmt_ratio(t["value"]),
                t["goal"],
                "met" if t["met"] else "**missed**",
            ]
            for t in summary["targets"]
        ],
    )
    out.append("")
    if summary["options"]:
        out += ["## mcpclient settings used (everything else is the default)", ""]
        seen: dict[str, list[str]] = {}
        for key, phases in sorted(summary["options"].items()):
            for phase, opts in phases.items():
                text = ", ".join(f"{name}={value}" for name, value in opts.items())
                seen.setdefault(text, []).append(f"{key} {phase}")
        for text, where in seen.items():
            out.append(f"- `{text}`: {'; '.join(where)}")
        out.append("")
    if summary["failed"]:
        out += ["## Failed workers", ""] + [f"- {line}" for line in summary["failed"]] + [""]
    return "\n".join(out)


def _last_metric(table: dict[str, Any] | None, suffix: str) -> str:
    """The last column of ``table`` whose metric ends with ``suffix`` ("" for none)."""
    metrics = [m for _, m in table["columns"] if m.endswith(suffix)] if table else []
    return metrics[-1] if metrics else ""


def chart(summary: dict[str, Any], path: Path) -> bool:
    """A PNG of the headline figures per client, when matplotlib is importable."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    by_table = {t["id"]: t for t in summary["tables"]}
    transports = [t["id"].rsplit("_", 1)[1] for t in summary["tables"] if t["id"].startswith("imp")]
    panels = []  # one row of panels per transport: (table id, metric, title)
    for transport in transports:
        name = TRANSPORT_NAMES.get(transport, transport)
        sdk_table = by_table.get(f"sdk_server_{transport}")
        blob_metrics = (
            [m for _, m in sdk_table["columns"] if m.endswith("_ms")] if sdk_table else []
        )
        panels += [
            (f"client_cost_{transport}", "seq_cpu_us", f"CPU per sequential call, µs ({name})"),
            (f"client_cost_{transport}", "tput_cps", f"16 in flight, calls/s ({name})"),
            (f"import_{transport}", "import_ms", f"import, ms ({name})"),
            (
                f"sdk_server_{transport}",
                blob_metrics[-1] if blob_metrics else "",
                "largest blob, ms",
            ),
            (f"sdk_server_{transport}", "rss_peak_mib", f"peak RSS after 10k calls, MiB ({name})"),
            (
                f"catalog_{transport}",
                _last_metric(by_table.get(f"catalog_{transport}"), "_cpu_ms"),
                f"CPU to discover the largest catalog, ms ({name})",
            ),
            ("fanout", "fanout_rss_kib", "RSS per binding, KiB (stdio)"),
        ]
    panels = [p for p in panels if p[0] in by_table and p[1]]
    panels = list(dict.fromkeys(panels))  # the fan-out panel once
    if not panels:
        return False
    columns = 3
    rows_n = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows_n, columns, figsize=(5 * columns, 4 * rows_n), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (table_id, metric, title) in zip(axes.flat, panels, strict=False):
        rows = [r for r in by_table[table_id]["data"] if r.get(metric) is not None]
        labels = [r["label"] for r in rows]
        colors = ["tab:blue" if r["client"] == "mcpclient" else "tab:gray" for r in rows]
        ax.bar(labels, [r[metric] for r in rows], color=colors)
        ax.set_title(title)
        ax.tick_params(axis="x", labelrotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
