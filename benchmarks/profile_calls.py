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

``--stages`` times the caller's stages of one call one at a time, each in a
hot loop on a connected client (``time.thread_time``, ``--calls`` runs each):
what each costs alone, before caches go cold in the real loop.

``--levels`` (stdio only) prints instead, per thread and per call, what each
layer costs: the same echo call made through ``call_tool`` (every local check,
the gates, the result's conversion), through the binding's session alone
(``RpcSession.call``: request table, deadline, framing, the reader's strict
decoding and routing; reached through private attributes, a benchmark's
privilege), and by the raw client (``raw_client.py``), interleaved
``--reps`` times over one server process each, so the three share the
machine's state. The differences are each layer's own cost.

Usage::

    python benchmarks/profile_calls.py [--calls 2000] [--server bare|sdk] [--era legacy|modern]
        [--transport stdio|http] [--levels [--reps 5]] [--stages]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import threading
import time
from collections.abc import Callable
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


def _thread_cpu_us(run: Callable[[], object], n: int) -> tuple[float, dict[int, float]]:
    """Run ``run()`` (n calls) once: its wall µs per call, and each thread's CPU µs per call."""
    before, t0 = _thread_ns(), time.perf_counter()
    run()
    wall, after = time.perf_counter() - t0, _thread_ns()
    return wall / n * 1e6, {t: (spent - before.get(t, 0)) / n / 1000 for t, spent in after.items()}


def per_thread(adapter: McpclientAdapter, n: int) -> None:
    names = _names()
    c0 = time.process_time()
    wall, by_thread = _thread_cpu_us(lambda: _calls(adapter, n, "m"), n)
    cpu = time.process_time() - c0
    print(f"{n} calls: {wall:.1f} µs/call wall, {cpu / n * 1e6:.1f} µs/call CPU")
    for tid, spent in sorted(by_thread.items(), key=lambda row: row[1], reverse=True):
        if spent:
            print(f"  {spent:7.1f} µs/call  {names.get(tid, f'tid {tid}')}")


#: One measured run: wall µs per call, and CPU µs per call by thread role.
_Run = tuple[float, dict[str, float]]


def _per_role_us(fn: Callable[[int], None], n: int) -> _Run:
    """Run ``fn(i)`` n times (after 300 untimed); wall µs per call, CPU µs per call by role."""

    def calls(count: int) -> None:
        for i in range(count):
            fn(i)

    calls(300)
    wall, by_thread = _thread_cpu_us(lambda: calls(n), n)
    names = _names()
    cpu: dict[str, float] = {}
    for tid, spent in by_thread.items():
        name = names.get(tid, f"tid {tid}")
        # The library's reader is named after its binding; the raw one "raw-reader".
        role = "caller" if name == "MainThread" else "reader" if "reader" in name else name
        cpu[role] = cpu.get(role, 0.0) + spent
    return wall, cpu


def levels(era: str, target: Target, n: int, reps: int) -> None:
    """Each layer's CPU per call: call_tool, the session alone, the raw client (medians)."""
    from raw_client import RawClient

    from mcpclient._core.deadline import now
    from mcpclient._internal.session.request_table import CallContext

    adapter = McpclientAdapter(era, transport="stdio")
    adapter.connect(target)
    assert adapter.client is not None
    client = adapter.client
    conn, _ = client._calls._st.serving("call_tool", now() + 60, None)
    session = conn.session
    raw = RawClient(list(target.argv))
    raw.initialize()

    def full(i: int) -> None:
        if client.call_tool("echo", {"text": f"f{i}"}).text != f"f{i}":
            raise RuntimeError("wrong echo")

    def session_only(i: int) -> None:
        params = conn.protocol.params({"name": "echo", "arguments": {"text": f"s{i}"}})
        ctx = CallContext(op="call_tool", deadline=now() + 60)
        if session.call("tools/call", params, ctx)["content"][0]["text"] != f"s{i}":
            raise RuntimeError("wrong echo")

    def raw_call(i: int) -> None:
        if raw.call_tool("echo", {"text": f"r{i}"}) != f"r{i}":
            raise RuntimeError("wrong echo")

    runs: dict[str, list[_Run]] = {"call_tool": [], "session": [], "raw": []}
    try:
        for _ in range(reps):
            runs["call_tool"].append(_per_role_us(full, n))
            runs["session"].append(_per_role_us(session_only, n))
            runs["raw"].append(_per_role_us(raw_call, n))
    finally:
        adapter.close()
        raw.close()
    print(f"{n} calls x {reps} interleaved repetitions, medians, µs per call")
    print(f"{'level':10s} {'wall':>7s} {'caller CPU':>11s} {'reader CPU':>11s} {'all CPU':>8s}")
    for level, results in runs.items():
        wall = statistics.median(w for w, _ in results)
        caller = statistics.median(c.get("caller", 0.0) for _, c in results)
        reader = statistics.median(c.get("reader", 0.0) for _, c in results)
        total = statistics.median(sum(c.values()) for _, c in results)
        print(f"{level:10s} {wall:7.1f} {caller:11.1f} {reader:11.1f} {total:8.1f}")


def stages(era: str, target: Target, n: int) -> None:
    """Each caller-side stage of ``call_tool``, alone in a hot loop: CPU µs per run."""
    from mcpclient import CallOpts
    from mcpclient._core import jsonio
    from mcpclient._core.deadline import now
    from mcpclient._internal.session.frames import encode_request

    adapter = McpclientAdapter(era, transport=target.transport)
    adapter.connect(target)
    assert adapter.client is not None
    client = adapter.client
    calls = client._calls  # the binding's call path (private: a benchmark's privilege)
    deadline = now() + 3600
    opts = CallOpts()
    prepared = calls.prepare_tool_call("echo", {"text": "x"})
    ctx = calls._context(opts, "call_tool", deadline, indeterminate_on_loss=True)
    result = {"content": [{"type": "text", "text": "x"}]}
    line = jsonio.encode({"jsonrpc": "2.0", "id": 7, "result": result})
    work: dict[str, Callable[[], object]] = {
        "_begin (options, the absolute deadline)": lambda: client._begin(
            "call_tool", None, None, None, None
        ),
        "_traced (is telemetry on?)": calls._traced,
        "prepare_tool_call (filter, catalog, encode, validate)": lambda: calls.prepare_tool_call(
            "echo", {"text": "x"}
        ),
        "_context (the call's frozen context)": lambda: calls._context(
            opts, "call_tool", deadline, indeterminate_on_loss=True
        ),
        "_task_mode (task or plain call)": lambda: calls._task_mode(prepared, ctx, None),
        "state.serving (the live connection)": lambda: calls._st.serving(
            "call_tool", deadline, None
        ),
        "encode_request (the frame)": lambda: encode_request(7, "tools/call", prepared.params),
        "convert_tool (ToolResult, output check)": lambda: calls.convert_tool(prepared, result),
        "jsonio.decode of the answer (reader thread)": lambda: jsonio.decode(line),
    }
    try:
        print(f"each stage alone, {n} runs, CPU µs per run")
        total = 0.0
        for label, fn in work.items():
            for _ in range(min(n, 1000)):
                fn()
            start = time.thread_time()
            for _ in range(n):
                fn()
            spent = (time.thread_time() - start) / n * 1e6
            total += spent
            print(f"  {spent:6.2f}  {label}")
        print(f"  {total:6.2f}  in all")
    finally:
        adapter.close()


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
    parser.add_argument("--levels", action="store_true", help="each layer's cost (stdio)")
    parser.add_argument("--reps", type=int, default=5, help="--levels repetitions")
    parser.add_argument("--stages", action="store_true", help="each caller stage alone")
    args = parser.parse_args()
    if args.stages:
        with TRANSPORTS[args.transport](args.server) as target:
            stages(args.era, target, args.calls)
        return
    if args.levels:
        if args.transport != "stdio":
            parser.error("--levels measures the stdio call path only")
        with TRANSPORTS["stdio"](args.server) as target:
            levels(args.era, target, args.calls, args.reps)
        return
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
