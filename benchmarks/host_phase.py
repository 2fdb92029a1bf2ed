"""The ``host`` phase: many stdio servers through one ``mcpclient.Host``, or as separate Clients.

Run inside a worker (``worker.py``), for mcpclient only, in one of two modes, each in
its own fresh worker process so neither inherits the other's memory:

- ``host`` (server kind ``host``): ``sizes.host_one`` single connects (the reference),
  then ``sizes.host_connects`` times a ``Host`` of ``sizes.host_bindings`` servers:
  the wall time of ``connect()`` (all of them, in parallel) and, within this process,
  its quotient by the median single connect; the first time also the threads, RSS and
  fds per binding once all are open and idle (before the aggregate exists, so the
  figures compare with separate Clients'), then the time to build ``host.catalog()``
  over every binding's tools, and the time of each read of the built aggregate.
- ``separate`` (server kind ``hostsep``): the same single connects, then the same
  number of bindings opened one after another as separate ``mcpclient.connect``
  Clients: the wall time of opening them all, and the same resources per binding.
- ``parallel`` (server kind ``hostpar``): the same separate Clients, all opened at
  once by a thread pool of one thread per binding (what a program without ``Host``
  writes to start them in parallel), the pool shut down once all are open. Its
  resources per binding are the price of a parallel start itself (allocations of
  many connects interleaved across threads), which ``Host ÷ parallel`` separates
  from the Host's own.

Each server is the testing server with ``sizes.host_tools`` generated tools in one
page (``benchlib.catalog_server_argv``); one untimed connect first warms the
process's lazy imports.

The ``host`` worker also measures the *parallel floor*: the same number of servers
started at once by the raw client (``raw_client.py``, one thread each: spawn,
``initialize``, one ``tools/list``), wall time until every one has answered, the
median of ``sizes.host_connects`` rounds. The children's own start is CPU-bound (a
Python interpreter importing the testing server), so on a machine with fewer cores
than servers no client can start them all in the time of one: the floor shows what
the cores allow, and ``connect all ÷ floor`` the Host's own share.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import statistics
import threading
import time
from typing import Any

from benchlib import CATALOG_BUILTIN_TOOLS, catalog_server_argv, open_fds, os_threads, rss_kib
from raw_client import RawClient

__all__ = ["HOST_SERVERS", "measure"]

#: The phase's server kinds (the worker's ``server``) and the mode each measures.
HOST_SERVERS = {"host": "host", "hostsep": "separate", "hostpar": "parallel"}


def _resources() -> dict[str, int]:
    gc.collect()
    return {"rss": rss_kib(), "threads": os_threads(), "fds": open_fds()}


def _per_binding(base: dict[str, int], full: dict[str, int], count: int) -> dict[str, float]:
    return {
        "rss_per_binding_kib": (full["rss"] - base["rss"]) / count,
        "threads_per_binding": (full["threads"] - base["threads"]) / count,
        "fds_per_binding": (full["fds"] - base["fds"]) / count,
    }


def measure(mode: str, sizes: dict[str, Any]) -> dict[str, Any]:
    """The host phase in ``mode`` (``host`` or ``separate``); see the module docstring."""
    import mcpclient

    count = sizes["host_bindings"]
    tools = sizes["host_tools"]
    idle = sizes.get("host_idle_s", 0.5)
    argv = catalog_server_argv(tools, max(1, tools + CATALOG_BUILTIN_TOOLS))

    def definition(name: str) -> mcpclient.Definition:
        transport = mcpclient.StdioTransport(argv[0], list(argv[1:]))
        return mcpclient.Definition(name, transport)

    mcpclient.connect(definition("warm")).close()
    _ = mcpclient.Host  # imported on first use: before the baseline, as Client's is
    one = []
    for _ in range(sizes["host_one"]):
        t0 = time.perf_counter()
        client = mcpclient.connect(definition("one"))
        one.append(time.perf_counter() - t0)
        client.close()
    one_s = statistics.median(one)

    out: dict[str, Any] = {"mode": mode, "bindings": count, "tools_per_binding": tools}
    opened: list[float] = []
    for round_ in range(sizes["host_connects"]):
        first = round_ == 0
        if first:
            time.sleep(idle)
            base = _resources()
        names = [f"b{i}" for i in range(count)]
        if mode == "host":
            host = mcpclient.Host({name: definition(name) for name in names})
            t0 = time.perf_counter()
            host.connect()
            opened.append(time.perf_counter() - t0)
            try:
                if host.failed:
                    raise RuntimeError(f"bindings failed to start: {dict(host.failed)}")
                if first:  # the resources of the bindings alone, then the aggregate's reads
                    time.sleep(idle)
                    out.update(_per_binding(base, _resources(), count))
                    out.update(_catalog_reads(host, sizes["host_reads"]))
            finally:
                host.close()
        else:
            clients: list[mcpclient.Client] = []
            t0 = time.perf_counter()
            try:
                if mode == "parallel":
                    _open_at_once(clients, [definition(name) for name in names])
                else:
                    for name in names:
                        clients.append(mcpclient.connect(definition(name)))
                opened.append(time.perf_counter() - t0)
                if first:
                    time.sleep(idle)
                    out.update(_per_binding(base, _resources(), count))
            finally:
                for client in clients:
                    client.close()
    if mode == "host":
        floor = [_parallel_floor(argv, count) for _ in range(sizes["host_connects"])]
        out.update(
            floor_ms=statistics.median(floor) * 1e3,
            connect_vs_floor=statistics.median(opened) / statistics.median(floor),
        )
    out.update(
        one_ms=one_s * 1e3,
        connect_ms=statistics.median(opened) * 1e3,
        connect_ratio=statistics.median(opened) / one_s,
        one_all_ms=[round(s * 1e3, 2) for s in one],
        connect_all_ms=[round(s * 1e3, 2) for s in opened],
        options={"mode": mode},
    )
    return out


def _open_at_once(clients: list[Any], definitions: list[Any]) -> None:
    """Connect every definition at once, one pool thread each; all joined on return."""
    import mcpclient

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(definitions))
    try:
        futures = [pool.submit(mcpclient.connect, d) for d in definitions]
        for future in futures:  # every one, so none is left open when one fails
            with contextlib.suppress(mcpclient.Error):
                clients.append(future.result())
    finally:
        pool.shutdown(wait=True)
    if len(clients) != len(definitions):
        raise RuntimeError("a Client failed to start")


def _parallel_floor(argv: tuple[str, ...], count: int) -> float:
    """Seconds until ``count`` raw clients, started at once, have each listed the tools."""
    clients: list[RawClient] = []
    failed: list[BaseException] = []
    lock = threading.Lock()

    def start() -> None:
        try:
            client = RawClient(list(argv))
            with lock:
                clients.append(client)
            client.initialize()
            client.list_tools()
        except BaseException as exc:  # reported below, after every thread ended
            with lock:
                failed.append(exc)

    threads = [threading.Thread(target=start) for _ in range(count)]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - t0
    for client in clients:
        client.close()
    if failed:
        raise RuntimeError(f"a raw client failed to start: {failed[0]!r}")
    return elapsed


def _catalog_reads(host: Any, reads: int) -> dict[str, Any]:
    """Build the aggregate once (timed), then read the built one ``reads`` times."""
    t0 = time.perf_counter()
    catalog = host.catalog()
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(reads):
        if host.catalog() is not catalog:
            raise RuntimeError("the aggregate was rebuilt while no generation moved")
    read = (time.perf_counter() - t0) / max(1, reads)
    return {
        "catalog_tools": len(catalog.tools),
        "catalog_build_ms": build * 1e3,
        "catalog_read_us": read * 1e6,
    }
