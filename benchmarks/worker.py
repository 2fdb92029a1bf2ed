"""One benchmark worker: a fresh process that measures one client in given phases.

Run by ``run.py`` as ``python benchmarks/worker.py '<json spec>'``; prints one
JSON object (the measurements) as its last stdout line. The spec names the
client, its era, the server kind, the transport, the phases in order, and
their sizes. Over HTTP the worker starts a fresh server of that kind (the
floor: the floor's own server) before the first phase and stops it after the
last; connects never include the server's start. Phases:

- ``cold``: ``sizes.cold`` times: connect (spawn + negotiate + discover), one echo
  call (*first call*: from the start of connect to that first tool result), then close;
- ``seq``: connect, ``sizes.warmup`` calls, then ``sizes.seq`` sequential echo calls:
  per-call latency, and client CPU per call (``time.process_time`` deltas);
- ``tput``: ``sizes.tput`` echo calls with 16 in flight (OS threads for sync
  clients, asyncio tasks for async ones; the stdio floor pipelines from one
  thread, the HTTP floor uses 16 threads with a connection each);
- ``rss``: connect, ``sizes.rss`` sequential calls, then peak RSS (``ru_maxrss``);
- ``blob``: for each of ``sizes.blobs``: one warm-up, ``sizes.blob_reps`` timed calls;
  over HTTP against the SDK server, each timed call is followed by one of the HTTP
  floor (``http_floor.SocketFloor``: a raw socket reading the same response to its
  last byte, same server, same era), so each client's *own share* (its latency
  minus the floor's, paired call by call) is measured in the same process;
- ``catalog``: for each of ``sizes.catalog`` (a tool count): the testing server with
  that many generated tools, paged by ``sizes.catalog_page`` (``benchlib.catalog_target``);
  ``sizes.catalog_warmup`` untimed connects, then ``sizes.catalog_reps`` timed ones
  (spawn over stdio + handshake + every ``tools/list`` page + the client's catalog):
  client CPU (``time.process_time``) and wall time of each; every connect is closed
  (untimed) before the next;
- ``fanout``: ``sizes.fanout`` bindings open at once: RSS, threads and fds per binding
  (after ``sizes.fanout_settle_s`` with one open, and ``sizes.fanout_idle_s`` idle);
- ``host`` (mcpclient only): ``sizes.host_bindings`` testing servers through one
  ``mcpclient.Host`` (server kind ``host``) or as separate Clients opened one after
  another (``hostsep``) or all at once (``hostpar``); see ``host_phase.py``;
- ``era`` (mcpclient over stdio only): cold connects with the worker's era as the
  ``protocol`` (``legacy`` or ``auto``) to a legacy-only testing server that answers
  the probe with an error (``eraerr``) or dies of it (``eraexit``): time, handshake
  requests and server starts per connect; see ``era_phase.py``;
- ``export`` (mcpclient only, no server): the bytes of the tool list handed to the
  model per turn for ``sizes.export_tools`` tools, full export vs ``mode="search"``,
  with the worker's era as the provider; see ``export_phase.py``.

Every echo reply is checked against its request (a unique text); a mismatch
counts as ``bad``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import era_phase
import export_phase
import host_phase
from adapters import ADAPTERS
from benchlib import (
    TRANSPORTS,
    Target,
    catalog_target,
    open_fds,
    os_threads,
    peak_rss_kib,
    percentile,
    rss_kib,
)
from http_floor import SocketFloor

CONCURRENCY = 16


def _target(spec: dict[str, Any]) -> contextlib.AbstractContextManager[Target]:
    """The target of this worker, with its server running (over HTTP) while in use."""
    transport = spec["transport"]
    if spec["server"] in ("catalog", "export", *host_phase.HOST_SERVERS, *era_phase.ERA_SERVERS):
        # these phases start their own servers
        return contextlib.nullcontext(Target(server=spec["server"], transport=transport))
    if spec["client"] == "floor":
        if transport == "stdio":  # the floor starts its own child; no server
            return contextlib.nullcontext(Target(server="none", transport=transport))
        return TRANSPORTS[transport]("floor")
    return TRANSPORTS[transport](spec["server"])


def _mib(kib: int) -> float:
    return round(kib / 1024, 2)


def _latency_stats(samples: list[float], cpu: float, wall: float, bad: int) -> dict[str, Any]:
    ordered = sorted(samples)
    n = len(samples)
    return {
        "n": n,
        "p50_us": percentile(ordered, 0.50) * 1e6,
        "p99_us": percentile(ordered, 0.99) * 1e6,
        "mean_us": wall / n * 1e6,
        "cpu_us": cpu / n * 1e6,
        "bad": bad,
    }


def _cold_stats(
    cold: list[float], first_call: list[float], close: list[float], options: dict[str, Any]
) -> dict[str, Any]:
    return {
        "n": len(cold),
        "cold_ms": statistics.median(cold) * 1e3,
        "first_call_ms": statistics.median(first_call) * 1e3,
        "close_ms": statistics.median(close) * 1e3,
        "first_ms": cold[0] * 1e3,
        "cold_all_ms": [round(v * 1e3, 3) for v in cold],
        "options": options,
    }


def _http_floor(spec: dict[str, Any], target: Target) -> SocketFloor | None:
    """The HTTP floor of this worker's blob phase (HTTP, SDK server), connected; or None."""
    if spec["transport"] != "http" or spec["server"] != "sdk" or spec["client"] == "floor":
        return None
    floor = SocketFloor(target.url, spec["era"])
    floor.connect()
    return floor


class _BlobTimes:
    """One size's timed blob calls, each paired with a floor call when there is a floor."""

    def __init__(self, size: int, floor: SocketFloor | None) -> None:
        self.size = size
        self.floor = floor
        self.times: list[float] = []
        self.floor_times: list[float] = []

    def floor_call(self, timed: bool) -> None:
        if self.floor is None:
            return
        request = self.floor.blob_request(self.size)  # built before the clock starts
        t0 = time.perf_counter()
        got = self.floor.send(request)
        elapsed = time.perf_counter() - t0
        if got < self.size:
            raise RuntimeError(f"the floor's blob({self.size}) response was only {got} bytes")
        if timed:
            self.floor_times.append(elapsed)

    def stats(self, before_kib: int, options: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "latency_ms": statistics.median(self.times) * 1e3,
            "all_ms": [round(t * 1e3, 3) for t in self.times],
            "connected_mib": _mib(before_kib),
            "peak_mib": _mib(peak_rss_kib()),
            "options": options,
        }
        if self.floor_times:
            pairs = zip(self.times, self.floor_times, strict=True)
            out.update(
                floor_ms=statistics.median(self.floor_times) * 1e3,
                floor_all_ms=[round(t * 1e3, 3) for t in self.floor_times],
                # paired call by call, so a drift of the machine cancels out
                own_ms=statistics.median(t - f for t, f in pairs) * 1e3,
            )
        return out


def _catalog_stats(
    size: int, runs: list[tuple[float, float, int]], warmup: int, options: Any
) -> dict[str, Any]:
    """One catalog size: medians of the timed connects (the first ``warmup`` are not)."""
    counts = sorted({n for _, _, n in runs})
    first = runs[0]
    runs = runs[warmup:]
    cpu = [c for c, _, _ in runs]
    wall = [w for _, w, _ in runs]
    if counts[0] < size:
        raise RuntimeError(f"a {size}-tool catalog came back with {counts[0]} tools")
    if len(counts) != 1:
        raise RuntimeError(f"a {size}-tool catalog came back with {counts} tools")
    return {
        "generated": size,
        "tools": counts[0],
        "n": len(runs),
        "cpu_ms": statistics.median(cpu) * 1e3,
        "wall_ms": statistics.median(wall) * 1e3,
        "cpu_all_ms": [round(c * 1e3, 3) for c in cpu],
        "wall_all_ms": [round(w * 1e3, 3) for w in wall],
        "first_cpu_ms": first[0] * 1e3,
        "first_wall_ms": first[1] * 1e3,
        "options": options,
    }


# -- sync clients (threads) ------------------------------------------------------


class SyncRunner:
    def __init__(self, spec: dict[str, Any], target: Target) -> None:
        self.spec = spec
        self.sizes = spec["sizes"]
        self.target = target
        self.cls = ADAPTERS[spec["client"]]
        self.info: dict[str, Any] = {}
        self.live: tuple[str, Any] | None = None  # the one connection phases share

    def make(self, **kwargs: Any) -> Any:
        return self.cls(self.spec["era"], transport=self.spec["transport"], **kwargs)

    def open(self, **kwargs: Any) -> Any:
        """The shared connection, reconnecting only when the settings differ."""
        adapter = self.make(**kwargs)
        key = json.dumps(adapter.options(), sort_keys=True)
        if self.live is not None:
            if self.live[0] == key:
                return self.live[1]
            self.close()
        adapter.connect(self.target)
        self.info.setdefault("protocol_version", adapter.protocol_version())
        self.live = (key, adapter)
        return adapter

    def close(self) -> None:
        live, self.live = self.live, None
        if live is not None:
            live[1].close()

    def cold(self) -> dict[str, Any]:
        cold, first_call, close = [], [], []
        for _ in range(self.sizes["cold"]):
            adapter = self.make()
            t0 = time.perf_counter()
            adapter.connect(self.target)
            t1 = time.perf_counter()
            adapter.call("echo", {"text": "first"})
            t2 = time.perf_counter()
            adapter.close()
            cold.append(t1 - t0)
            first_call.append(t2 - t0)
            close.append(time.perf_counter() - t2)
        return _cold_stats(cold, first_call, close, self.make().options())

    @staticmethod
    def _sequential(call: Callable[[str, dict[str, Any]], str], n: int, tag: str) -> Any:
        samples = [0.0] * n
        bad = 0
        clock = time.perf_counter
        c0, t0 = time.process_time(), clock()
        for i in range(n):
            text = f"{tag}{i}"
            s = clock()
            if call("echo", {"text": text}) != text:
                bad += 1
            samples[i] = clock() - s
        wall, cpu = clock() - t0, time.process_time() - c0
        return samples, cpu, wall, bad

    def seq(self) -> dict[str, Any]:
        adapter = self.open()
        self._sequential(adapter.call, self.sizes["warmup"], "w")
        stats = _latency_stats(*self._sequential(adapter.call, self.sizes["seq"], "s"))
        return {**stats, "options": adapter.options()}

    def tput(self) -> dict[str, Any]:
        total = self.sizes["tput"]
        adapter = self.open(parallel=True)
        if self.spec["client"] == "floor" and self.spec["transport"] == "stdio":
            adapter.pipelined(CONCURRENCY * 4, CONCURRENCY)  # warm-up
            c0, t0 = time.process_time(), time.perf_counter()
            bad = adapter.pipelined(total, CONCURRENCY)
        else:
            self._threads(adapter, CONCURRENCY * 4)  # warm-up
            c0, t0 = time.process_time(), time.perf_counter()
            bad = self._threads(adapter, total)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return {
            "n": total,
            "concurrency": CONCURRENCY,
            "calls_per_s": total / wall,
            "cpu_us": cpu / total * 1e6,
            "bad": bad,
            "options": adapter.options(),
        }

    @staticmethod
    def _threads(adapter: Any, total: int) -> int:
        per = total // CONCURRENCY
        bad = [0] * CONCURRENCY
        errors: list[BaseException] = []
        gate = threading.Barrier(CONCURRENCY)

        def work(k: int) -> None:
            try:
                gate.wait()
                for i in range(per):
                    text = f"t{k}-{i}"
                    if adapter.call("echo", {"text": text}) != text:
                        bad[k] += 1
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(CONCURRENCY)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return sum(bad)

    def rss(self) -> dict[str, Any]:
        adapter = self.open()
        connected = rss_kib()
        _, _, _, bad = self._sequential(adapter.call, self.sizes["rss"], "r")
        after = rss_kib()
        return {
            "n": self.sizes["rss"],
            "peak_mib": _mib(peak_rss_kib()),
            "connected_mib": _mib(connected),
            "after_mib": _mib(after),
            "bad": bad,
            "options": adapter.options(),
        }

    def blob(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        adapter = self.open(result_bytes=max(self.sizes["blobs"]))
        floor = _http_floor(self.spec, self.target)
        try:
            for size in self.sizes["blobs"]:
                before = rss_kib()
                timing = _BlobTimes(size, floor)
                if len(adapter.call("blob", {"n": size})) != size:  # warm-up
                    raise RuntimeError(f"blob({size}) came back with the wrong length")
                timing.floor_call(timed=False)
                for _ in range(self.sizes["blob_reps"]):
                    t0 = time.perf_counter()
                    text = adapter.call("blob", {"n": size})
                    timing.times.append(time.perf_counter() - t0)
                    if len(text) != size:
                        raise RuntimeError(f"blob({size}) came back with the wrong length")
                    del text
                    timing.floor_call(timed=True)
                out[str(size)] = timing.stats(before, adapter.options())
        finally:
            if floor is not None:
                floor.close()
        return out

    def catalog(self) -> dict[str, Any]:
        self.close()
        out: dict[str, Any] = {}
        warmup = self.sizes.get("catalog_warmup", 1)
        for size in self.sizes["catalog"]:
            with catalog_target(self.spec["transport"], size, self.sizes["catalog_page"]) as target:
                runs: list[tuple[float, float, int]] = []
                for _ in range(warmup + self.sizes["catalog_reps"]):
                    adapter = self.make(catalog_items=size)
                    gc.collect()  # the last catalog's garbage is not this connect's
                    c0, t0 = time.process_time(), time.perf_counter()
                    adapter.connect(target)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    try:
                        runs.append((cpu, wall, adapter.tool_count()))
                        self.info.setdefault("protocol_version", adapter.protocol_version())
                    finally:
                        adapter.close()
                out[str(size)] = _catalog_stats(size, runs, warmup, adapter.options())
        return out

    def host(self) -> dict[str, Any]:
        if self.spec["client"] != "mcpclient" or self.spec["transport"] != "stdio":
            raise RuntimeError("the host phase measures mcpclient over stdio only")
        self.close()
        return host_phase.measure(host_phase.HOST_SERVERS[self.spec["server"]], self.sizes)

    def era(self) -> dict[str, Any]:
        if self.spec["client"] != "mcpclient" or self.spec["transport"] != "stdio":
            raise RuntimeError("the era phase measures mcpclient over stdio only")
        self.close()
        result = era_phase.measure(self.spec["server"], self.spec["era"], self.sizes)
        self.info.setdefault("protocol_version", result["protocol_version"])
        return result

    def export(self) -> dict[str, Any]:
        if self.spec["client"] != "mcpclient":
            raise RuntimeError("the export phase measures mcpclient only")
        self.close()
        return export_phase.measure(self.spec["era"], self.sizes)

    def fanout(self) -> dict[str, Any]:
        self.close()
        count = self.sizes["fanout"]
        adapters = [self.make()]
        adapters[0].connect(self.target)
        time.sleep(self.sizes.get("fanout_settle_s", 0.3))
        gc.collect()
        base = {"rss": rss_kib(), "threads": os_threads(), "fds": open_fds()}
        try:
            t0 = time.perf_counter()
            for _ in range(count - 1):
                adapters.append(self.make())
                adapters[-1].connect(self.target)
            opened = time.perf_counter() - t0
            for i, adapter in enumerate(adapters):  # each binding works
                if adapter.call("echo", {"text": f"f{i}"}) != f"f{i}":
                    raise RuntimeError("a fan-out binding answered wrongly")
            time.sleep(self.sizes.get("fanout_idle_s", 0.5))  # idle
            gc.collect()
            full = {"rss": rss_kib(), "threads": os_threads(), "fds": open_fds()}
        finally:
            t1 = time.perf_counter()
            for adapter in adapters:
                adapter.close()
            closed = time.perf_counter() - t1
        return _fanout_stats(count, base, full, opened, closed, tasks=None)


def _fanout_stats(
    count: int,
    base: dict[str, int],
    full: dict[str, int],
    opened: float,
    closed: float,
    tasks: int | None,
) -> dict[str, Any]:
    extra = max(1, count - 1)
    return {
        "bindings": count,
        "rss_per_binding_kib": (full["rss"] - base["rss"]) / extra,
        "threads_per_binding": (full["threads"] - base["threads"]) / extra,
        "fds_per_binding": (full["fds"] - base["fds"]) / extra,
        "threads_total": full["threads"],
        "fds_total": full["fds"],
        "rss_total_mib": _mib(full["rss"]),
        "asyncio_tasks": tasks,
        "open_s": opened,
        "close_s": closed,
    }


# -- async clients (asyncio tasks) ----------------------------------------------


class AsyncRunner:
    def __init__(self, spec: dict[str, Any], target: Target) -> None:
        self.spec = spec
        self.sizes = spec["sizes"]
        self.target = target
        self.cls = ADAPTERS[spec["client"]]
        self.info: dict[str, Any] = {}
        self.live: Any = None  # the one connection phases share (settings never vary)

    def make(self) -> Any:
        return self.cls(self.spec["era"], transport=self.spec["transport"])

    async def open(self) -> Any:
        if self.live is None:
            adapter = self.make()
            await adapter.connect(self.target)
            self.info.setdefault("protocol_version", adapter.protocol_version())
            self.live = adapter
        return self.live

    async def close(self) -> None:
        live, self.live = self.live, None
        if live is not None:
            await live.close()

    async def cold(self) -> dict[str, Any]:
        cold, first_call, close = [], [], []
        for _ in range(self.sizes["cold"]):
            adapter = self.make()
            t0 = time.perf_counter()
            await adapter.connect(self.target)
            t1 = time.perf_counter()
            await adapter.call("echo", {"text": "first"})
            t2 = time.perf_counter()
            await adapter.close()
            cold.append(t1 - t0)
            first_call.append(t2 - t0)
            close.append(time.perf_counter() - t2)
        return _cold_stats(cold, first_call, close, self.make().options())

    @staticmethod
    async def _sequential(adapter: Any, n: int, tag: str) -> Any:
        samples = [0.0] * n
        bad = 0
        clock = time.perf_counter
        call = adapter.call
        c0, t0 = time.process_time(), clock()
        for i in range(n):
            text = f"{tag}{i}"
            s = clock()
            if await call("echo", {"text": text}) != text:
                bad += 1
            samples[i] = clock() - s
        wall, cpu = clock() - t0, time.process_time() - c0
        return samples, cpu, wall, bad

    async def seq(self) -> dict[str, Any]:
        adapter = await self.open()
        await self._sequential(adapter, self.sizes["warmup"], "w")
        stats = _latency_stats(*await self._sequential(adapter, self.sizes["seq"], "s"))
        return {**stats, "options": adapter.options()}

    @staticmethod
    async def _tasks(adapter: Any, total: int) -> int:
        per = total // CONCURRENCY

        async def work(k: int) -> int:
            bad = 0
            for i in range(per):
                text = f"t{k}-{i}"
                if await adapter.call("echo", {"text": text}) != text:
                    bad += 1
            return bad

        return sum(await asyncio.gather(*(work(k) for k in range(CONCURRENCY))))

    async def tput(self) -> dict[str, Any]:
        total = self.sizes["tput"]
        adapter = await self.open()
        await self._tasks(adapter, CONCURRENCY * 4)  # warm-up
        c0, t0 = time.process_time(), time.perf_counter()
        bad = await self._tasks(adapter, total)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return {
            "n": total,
            "concurrency": CONCURRENCY,
            "calls_per_s": total / wall,
            "cpu_us": cpu / total * 1e6,
            "bad": bad,
            "options": adapter.options(),
        }

    async def rss(self) -> dict[str, Any]:
        adapter = await self.open()
        connected = rss_kib()
        _, _, _, bad = await self._sequential(adapter, self.sizes["rss"], "r")
        after = rss_kib()
        return {
            "n": self.sizes["rss"],
            "peak_mib": _mib(peak_rss_kib()),
            "connected_mib": _mib(connected),
            "after_mib": _mib(after),
            "bad": bad,
            "options": adapter.options(),
        }

    async def blob(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        adapter = await self.open()
        # The floor's calls block this loop for their span; nothing else is in flight then.
        floor = _http_floor(self.spec, self.target)
        try:
            for size in self.sizes["blobs"]:
                before = rss_kib()
                timing = _BlobTimes(size, floor)
                if len(await adapter.call("blob", {"n": size})) != size:  # warm-up
                    raise RuntimeError(f"blob({size}) came back with the wrong length")
                timing.floor_call(timed=False)
                for _ in range(self.sizes["blob_reps"]):
                    t0 = time.perf_counter()
                    text = await adapter.call("blob", {"n": size})
                    timing.times.append(time.perf_counter() - t0)
                    if len(text) != size:
                        raise RuntimeError(f"blob({size}) came back with the wrong length")
                    del text
                    timing.floor_call(timed=True)
                out[str(size)] = timing.stats(before, adapter.options())
        finally:
            if floor is not None:
                floor.close()
        return out

    async def catalog(self) -> dict[str, Any]:
        await self.close()
        out: dict[str, Any] = {}
        warmup = self.sizes.get("catalog_warmup", 1)
        for size in self.sizes["catalog"]:
            with catalog_target(self.spec["transport"], size, self.sizes["catalog_page"]) as target:
                runs: list[tuple[float, float, int]] = []
                for _ in range(warmup + self.sizes["catalog_reps"]):
                    adapter = self.make()
                    gc.collect()  # the last catalog's garbage is not this connect's
                    c0, t0 = time.process_time(), time.perf_counter()
                    await adapter.connect(target)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    try:
                        runs.append((cpu, wall, adapter.tool_count()))
                        self.info.setdefault("protocol_version", adapter.protocol_version())
                    finally:
                        await adapter.close()
                out[str(size)] = _catalog_stats(size, runs, warmup, adapter.options())
        return out

    async def fanout(self) -> dict[str, Any]:
        await self.close()
        count = self.sizes["fanout"]
        adapters = [self.make()]
        await adapters[0].connect(self.target)
        await asyncio.sleep(self.sizes.get("fanout_settle_s", 0.3))
        gc.collect()
        base = {"rss": rss_kib(), "threads": os_threads(), "fds": open_fds()}
        try:
            t0 = time.perf_counter()
            for _ in range(count - 1):
                adapters.append(self.make())
                await adapters[-1].connect(self.target)
            opened = time.perf_counter() - t0
            for i, adapter in enumerate(adapters):
                if await adapter.call("echo", {"text": f"f{i}"}) != f"f{i}":
                    raise RuntimeError("a fan-out binding answered wrongly")
            await asyncio.sleep(self.sizes.get("fanout_idle_s", 0.5))  # idle
            gc.collect()
            full = {"rss": rss_kib(), "threads": os_threads(), "fds": open_fds()}
            tasks = len(asyncio.all_tasks())
        finally:
            t1 = time.perf_counter()
            # anyio task groups must exit in reverse order of entry.
            for adapter in reversed(adapters):
                await adapter.close()
            closed = time.perf_counter() - t1
        return _fanout_stats(count, base, full, opened, closed, tasks=tasks)


# -- entry point -------------------------------------------------------------------


def run(spec: dict[str, Any]) -> dict[str, Any]:
    with _target(spec) as target:
        return _run(spec, target)


def _run(spec: dict[str, Any], target: Target) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if ADAPTERS[spec["client"]].is_async:
        runner: Any = AsyncRunner(spec, target)

        async def main() -> None:
            try:
                for phase in spec["phases"]:
                    results[phase] = await getattr(runner, phase)()
            finally:
                await runner.close()

        asyncio.run(main())
    else:
        runner = SyncRunner(spec, target)
        try:
            for phase in spec["phases"]:
                results[phase] = getattr(runner, phase)()
        finally:
            runner.close()
    results["info"] = {**runner.info, "peak_mib": _mib(peak_rss_kib())}
    return results


def main() -> None:
    spec = json.loads(sys.argv[1])
    results = run(spec)
    sys.stdout.flush()
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
