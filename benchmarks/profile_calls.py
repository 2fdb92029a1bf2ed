"""Where mcpclient's CPU goes on sequential calls: per thread, then per function.

Runs ``--calls`` sequential echo calls (after a warm-up) in this one process
and prints:

1. CPU per call for each thread of the process, from the kernel's per-thread
   run time (``/proc/self/task/<tid>/schedstat``, nanoseconds), so the
   reader, writer and watcher threads (and, over HTTP, the I/O workers) are
   counted too;
2. a cProfile (timer: the thread's own CPU time) of the calling thread, one
   of the session's reader thread and, over HTTP, one of the I/O worker
   threads (their loops are wrapped here, from outside the library).

The profiles run on a second binding, because cProfile itself inflates CPU
several-fold; read their shares, not their absolute times.

Over HTTP (``--transport http``) a fresh server of the kind runs on
127.0.0.1 for the whole script, as in the suite.

Usage::

    python benchmarks/profile_calls.py [--calls 2000] [--server bare|sdk] [--era legacy|modern]
        [--transport stdio|http]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import threading
import time
from typing import Any

from adapters import McpclientAdapter
from benchlib import TRANSPORTS, Target


def _thread_ns() -> dict[int, int]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as stat:
                out[int(tid)] = int(stat.read().split()[0])
        except OSError:
            continue
    return out


def _names() -> dict[int, str]:
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def _calls(adapter: McpclientAdapter, n: int, tag: str) -> None:
    for i in range(n):
        text = f"{tag}{i}"
        if adapter.call("echo", {"text": text}) != text:
            raise RuntimeError("wrong echo")


def per_thread(adapter: McpclientAdapter, n: int) -> None:
    names = _names()
    before, c0, t0 = _thread_ns(), time.process_time(), time.perf_counter()
    _calls(adapter, n, "m")
    after, cpu, wall = _thread_ns(), time.process_time() - c0, time.perf_counter() - t0
    print(f"{n} calls: {wall / n * 1e6:.1f} µs/call wall, {cpu / n * 1e6:.1f} µs/call CPU")
    rows = sorted(((after[t] - before.get(t, 0), t) for t in after), reverse=True)
    for spent, tid in rows:
        if spent:
            print(f"  {spent / n / 1000:7.1f} µs/call  {names.get(tid, f'tid {tid}')}")


def _profiled(cls: Any, name: str, profiles: list[cProfile.Profile]) -> Any:
    """Wrap ``cls.name`` (a thread's loop) so each run of it is profiled on its thread."""
    original = getattr(cls, name)

    def loop(self: Any, *args: Any) -> None:
        prof = cProfile.Profile(time.thread_time)
        profiles.append(prof)
        prof.enable()
        try:
            original(self, *args)
        finally:
            prof.disable()

    setattr(cls, name, loop)
    return original


def profiles(era: str, target: Target, n: int, top: int) -> None:
    """Profile the calling thread and the library's threads of a fresh binding (CPU time)."""
    from mcpclient._internal.session import rpc

    readers: list[cProfile.Profile] = []
    workers: list[cProfile.Profile] = []
    patched = [(rpc.RpcSession, "_read_loop", _profiled(rpc.RpcSession, "_read_loop", readers))]
    if target.transport == "http":
        # The HTTP I/O pool (and every other on-demand worker) runs OnDemandThreads._main.
        from mcpclient._core import threads

        pool = threads.OnDemandThreads
        patched.append((pool, "_main", _profiled(pool, "_main", workers)))
    adapter = McpclientAdapter(era, transport=target.transport)
    try:
        adapter.connect(target)
        caller = cProfile.Profile(time.thread_time)
        try:
            _calls(adapter, 200, "w")
            caller.enable()
            _calls(adapter, n, "p")
            caller.disable()
        finally:
            adapter.close()  # ends the reader loop, and its profile
    finally:
        for cls, name, original in patched:
            setattr(cls, name, original)
    time.sleep(0.2)  # the HTTP workers see the close and leave their loops
    shown = [("calling thread", [caller]), ("reader thread (incl. warm-up)", readers)]
    if workers:
        shown.append((f"HTTP I/O worker threads, {len(workers)} (incl. warm-up)", workers))
    for title, profs in shown:
        out = io.StringIO()
        stats = pstats.Stats(profs[0], stream=out)
        for prof in profs[1:]:
            stats.add(prof)
        stats.sort_stats("tottime").print_stats(top)
        print(f"\n===== {title}: CPU time, sorted by own time =====")
        print("\n".join(out.getvalue().splitlines()[2:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--server", default="bare", choices=("bare", "sdk"))
    parser.add_argument("--era", default="legacy", choices=("legacy", "modern"))
    parser.add_argument("--transport", default="stdio", choices=sorted(TRANSPORTS))
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    with TRANSPORTS[args.transport](args.server) as target:
        adapter = McpclientAdapter(args.era, transport=args.transport)
        adapter.connect(target)
        try:
            _calls(adapter, 200, "w")
            per_thread(adapter, args.calls)
        finally:
            adapter.close()
        profiles(args.era, target, args.calls, args.top)


if __name__ == "__main__":
    main()
