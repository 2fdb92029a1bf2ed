"""Where mcpclient's CPU goes when it discovers a large catalog.

Runs the catalog phase's connect (``mcpclient.connect`` against the testing
server with ``--tools`` generated tools, ``--page-size`` a page, as in
``run.py``'s catalog phase) in this one process and prints:

1. client CPU (``time.process_time``, every thread) of ``--connects``
   unprofiled connects after one warm-up, and their median;
2. one more connect under cProfile, every thread of the process profiled
   (the calling thread, and each thread started during the connect: the
   reader, the deadline watcher, over HTTP the I/O workers), merged and
   sorted by own time, then by cumulative time.

cProfile inflates CPU several-fold; read the shares, not the absolute times.
Blocking waits (``lock.acquire``, ``poll``) appear in the profile but are not
CPU.

Usage::

    python benchmarks/profile_catalog.py [--tools 10000] [--page-size 1000]
        [--era legacy|modern] [--transport stdio|http] [--connects 5] [--top 30]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import threading
import time
from typing import Any

from adapters import McpclientAdapter
from benchlib import Target, catalog_target


def _connect_cpu(args: argparse.Namespace, target: Target) -> float:
    adapter = McpclientAdapter(args.era, transport=args.transport, catalog_items=args.tools)
    gc.collect()
    c0 = time.process_time()
    adapter.connect(target)
    cpu = time.process_time() - c0
    try:
        if adapter.tool_count() < args.tools:
            raise RuntimeError(f"only {adapter.tool_count()} tools discovered")
    finally:
        adapter.close()
    return cpu


def _profiled_connect(args: argparse.Namespace, target: Target) -> pstats.Stats:
    profiles: list[cProfile.Profile] = []

    def start_in_new_thread(*_: Any) -> None:
        # Called once in each thread started from here on; the C profiler then replaces it.
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.enable()

    adapter = McpclientAdapter(args.era, transport=args.transport, catalog_items=args.tools)
    gc.collect()
    main = cProfile.Profile()
    threading.setprofile(start_in_new_thread)
    try:
        main.enable()
        adapter.connect(target)
        main.disable()
    finally:
        threading.setprofile(None)
        for profile in profiles:
            profile.disable()  # a no-op from another thread for a C profiler; harmless
        adapter.close()
    return pstats.Stats(main, *profiles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=10_000, help="generated tools")
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--connects", type=int, default=5, help="unprofiled timed connects")
    parser.add_argument("--top", type=int, default=30, help="rows of each profile listing")
    args = parser.parse_args()

    with catalog_target(args.transport, args.tools, args.page_size) as target:
        _connect_cpu(args, target)  # warm-up: lazy imports, caches
        cpu = [_connect_cpu(args, target) for _ in range(args.connects)]
        print(
            f"{args.tools} tools, {args.era}, {args.transport}: client CPU per connect"
            f" {statistics.median(cpu) * 1e3:.1f} ms (median of {len(cpu)};"
            f" {', '.join(f'{c * 1e3:.0f}' for c in cpu)})\n"
        )
        stats = _profiled_connect(args, target)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
