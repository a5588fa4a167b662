"""Profile of the guarded `tools/call` path (row G1 of bench/guard.py), beside the unguarded one.

Runs `calls` `echo` round trips through `mcp.ClientSession` on bench/guard.py's in-memory
server, once without and once with the guard, each under cProfile, and prints per call:
Python function calls (cProfile's count, coroutine resumptions included: independent of the
machine's load), event-loop iterations and callbacks run (asyncio `_run_once` / `Handle._run`:
task switches), and CPU time of this thread (of an unprofiled run of as many calls); then the
guarded run's top entries by own time, and the functions the guarded run calls that the plain
one does not. The profiler clocks CPU time (a shared machine's preemption does not land on
whatever ran); reading that clock on every call inflates each Python call alike.

With `--listing`: the guard's own work on re-listings of bench/guard.py's page of 100 corpus
tools instead (row G2, each page parsed afresh), its top entries by own time per tool.

Usage:
    python bench/guard_profile.py                # 3000 calls, top 25
    python bench/guard_profile.py --calls 1000 --top 15
    python bench/guard_profile.py --listing      # 200 re-listings of the page of 100 tools
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from bench import guard as bench_guard  # noqa: E402
from conduit_mcp.guard import Guard  # noqa: E402
from conduit_mcp.guard._engine import Engine  # noqa: E402
from conduit_mcp.guard._state import Pending  # noqa: E402

Stats = dict[tuple[str, int, str], tuple[Any, ...]]


async def _profile(guarded: bool, calls: int) -> tuple[Stats, float]:
    """cProfile's raw stats over `calls` echo round trips, and CPU µs per call."""
    guard = Guard("bench") if guarded else None
    page = [bench_guard.ECHO, bench_guard.WEATHER]
    async with bench_guard._open(guard, page, False) as session:
        for _ in range(200):  # warm caches (compiled validators, pydantic)
            await session.call_tool("echo", {"message": "hi"})
        gc.collect()
        gc.disable()
        profiler = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU time: no preemption noise
        try:
            start = time.thread_time_ns()  # first unprofiled: the real CPU time per call
            for _ in range(calls):
                await session.call_tool("echo", {"message": "hi"})
            cpu = (time.thread_time_ns() - start) / calls / 1000
            profiler.enable()
            for _ in range(calls):
                await session.call_tool("echo", {"message": "hi"})
        finally:
            profiler.disable()
            gc.enable()
    stats: Stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return stats, cpu


def _short(key: tuple[str, int, str]) -> str:
    file, line, name = key
    if file == "~":
        return name
    for marker in ("site-packages/", "src/", "lib/python3"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{file}:{line}({name})"


def _count(stats: Stats, file_end: str, name: str) -> int:
    return sum(v[1] for (f, _, n), v in stats.items() if f.endswith(file_end) and n == name)


def _summary(label: str, stats: Stats, cpu: float, calls: int) -> str:
    functions = sum(v[1] for v in stats.values()) / calls
    loops = _count(stats, "asyncio/base_events.py", "_run_once") / calls
    handles = _count(stats, "asyncio/events.py", "_run") / calls
    return (
        f"{label:<8} {functions:6.0f} function calls/call  {loops:4.1f} loop iterations/call  "
        f"{handles:4.1f} callbacks/call  {cpu:7.1f} µs CPU/call (unprofiled)"
    )


async def _relist(pages: int) -> Stats:
    """cProfile's raw stats over `pages` re-listings of the page, each parsed afresh (the
    parse itself outside the profile)."""
    guard = Guard("bench")
    connection = Engine(guard._shared, "stdio")
    connection.version = "2025-11-25"
    data = json.dumps({"tools": bench_guard.workload.tools(100)})
    for _ in range(3):  # first listing pins; later ones compare
        await connection._on_list(1, json.loads(data), Pending("tools/list"))
    results = [json.loads(data) for _ in range(pages)]
    gc.collect()
    gc.disable()
    profiler = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU time: no preemption noise
    try:
        for result in results:
            connection.listing = set()
            profiler.enable()
            await connection._on_list(1, result, Pending("tools/list"))
            profiler.disable()
    finally:
        gc.enable()
    return pstats.Stats(profiler).stats  # type: ignore[attr-defined,no-any-return]


def listing(pages: int, top: int) -> list[str]:
    """cProfile of `pages` re-listings (row G2, parsed afresh): top entries per tool."""
    stats = anyio.run(_relist, pages)
    tools = pages * 100
    functions = sum(v[1] for v in stats.values()) / tools
    lines = [
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs); {pages} re-listings of a page of 100 corpus tools, "
        "each parsed afresh",
        f"{functions:.1f} function calls per tool",
        "",
        f"top {top} by own time (µs per tool; ncalls per page):",
        f"{'own':>7} {'cum':>7} {'ncalls':>7}  function",
    ]
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])
    for key, (_, ncalls, own, cum, _) in ranked[:top]:
        own_us, cum_us = own / tools * 1e6, cum / tools * 1e6
        lines.append(f"{own_us:7.2f} {cum_us:7.2f} {ncalls / pages:7.1f}  {_short(key)}")
    return lines


def main(calls: int, top: int) -> list[str]:
    plain, plain_cpu = anyio.run(_profile, False, calls)
    guarded, guarded_cpu = anyio.run(_profile, True, calls)
    lines = [
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs); {calls} echo tools/call round trips, in memory",
        _summary("sdk", plain, plain_cpu, calls),
        _summary("guarded", guarded, guarded_cpu, calls),
        "",
        f"guarded run, top {top} by own time (µs per tools/call; ncalls per tools/call):",
        f"{'own':>7} {'cum':>7} {'ncalls':>6}  function",
    ]
    ranked = sorted(guarded.items(), key=lambda item: -item[1][2])
    for key, (_, ncalls, own, cum, _) in ranked[:top]:
        own_us, cum_us = own / calls * 1e6, cum / calls * 1e6
        lines.append(f"{own_us:7.2f} {cum_us:7.2f} {ncalls / calls:6.1f}  {_short(key)}")
    lines += ["", f"calls the guarded run adds (top {top} by extra ncalls per tools/call):"]
    extra = []
    for key, value in guarded.items():
        more = value[1] - (plain[key][1] if key in plain else 0)
        if more > 0:
            extra.append((more / calls, value[3] / calls * 1e6, key))
    extra.sort(key=lambda row: -row[0])
    for more, cum, key in extra[:top]:
        lines.append(f"{more:6.1f} more  {cum:7.2f} µs cum  {_short(key)}")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--listing", action="store_true", help="profile re-listings instead")
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    for line in listing(args.pages, args.top) if args.listing else main(args.calls, args.top):
        print(line)
