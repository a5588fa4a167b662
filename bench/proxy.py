"""Proxy overhead: a `tools/call` round trip through `conduit-mcp proxy` (stdio) against the
same round trip straight to the server.

Not part of `make bench`'s results.json (a separate script, like bench/guard.py, so its row
merges cleanly):

- row P1, stdio proxy: `mcp.ClientSession` over stdio to the raw JSON-RPC echo server of
  bench/guard.py (`python bench/guard.py --serve`), once directly and once through
  `conduit-mcp proxy --server-id bench -- python bench/guard.py --serve` (the guard with its
  defaults: arguments checked, the result parsed). Both sessions open at once, batches of calls
  alternating between them (order flipped every batch), so load on a shared machine hits both
  alike; wall time (the round trip a caller waits for); the ratio is the median of the
  per-batch proxied/direct ratios. Target: <= 1.25x.
  On a loaded machine the wall ratio mostly measures scheduling (a third process must be woken
  twice per round trip), so the row also gives the proxy's own CPU time per round trip: the
  CPU of finished child processes (`RUSAGE_CHILDREN`: the proxy and the server it reaped) for
  a proxied session of N calls, minus that of a session of none (start-up and shutdown),
  minus the server's own CPU per call measured the same way on a direct session.

Usage:
    python bench/proxy.py            # 9 batches of 200 calls
    python bench/proxy.py --quick    # 3 batches of 20 (smoke)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "bench" / "guard.py"), "--serve"]
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
TARGET = 1.25


@asynccontextmanager
async def _session(argv: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            yield session


async def _batch(session: ClientSession, calls: int) -> float:
    """µs per call over `calls` sequential round trips (wall time)."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        await session.call_tool("echo", {"message": "hello"})
    return (time.perf_counter_ns() - start) / calls / 1000


async def run(batches: int, calls: int) -> dict[str, object]:
    proxied_argv = [str(CONDUIT), "proxy", "--server-id", "bench", "--quiet", "--", *SERVER]
    direct_us: list[float] = []
    proxied_us: list[float] = []
    async with _session(SERVER) as direct, _session(proxied_argv) as proxied:
        for session in (direct, proxied):
            await _batch(session, max(calls // 4, 5))  # warm up
        gc.collect()
        gc.disable()
        try:
            for index in range(batches):
                pair = [(direct, direct_us), (proxied, proxied_us)]
                for session, into in pair if index % 2 == 0 else pair[::-1]:
                    into.append(await _batch(session, calls))
        finally:
            gc.enable()
    ratios = [p / d for d, p in zip(direct_us, proxied_us, strict=True)]
    ratio = statistics.median(ratios)
    return {
        "row": "P1 stdio proxy tools/call round trip (echo)",
        "direct_us_median": round(statistics.median(direct_us), 1),
        "proxied_us_median": round(statistics.median(proxied_us), 1),
        "ratio_median": round(ratio, 3),
        "target": TARGET,
        "met": ratio <= TARGET,
        "batches": batches,
        "calls_per_batch": calls,
    }


async def _children_cpu(argv: list[str], calls: int) -> float:
    """CPU seconds used by finished child processes over one session of `calls` calls."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    async with _session(argv) as session:
        for _ in range(calls):
            await session.call_tool("echo", {"message": "hello"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


async def cpu_per_call(calls: int) -> dict[str, float]:
    """The proxy's and the server's CPU µs per round trip (see the module docstring)."""
    proxied_argv = [str(CONDUIT), "proxy", "--server-id", "bench", "--quiet", "--", *SERVER]
    server = (await _children_cpu(SERVER, calls) - await _children_cpu(SERVER, 0)) / calls
    both = (await _children_cpu(proxied_argv, calls) - await _children_cpu(proxied_argv, 0)) / calls
    return {
        "server_cpu_us_per_call": round(server * 1e6, 1),
        "proxy_cpu_us_per_call": round((both - server) * 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 batches of 20 calls (smoke)")
    args = parser.parse_args(argv)
    batches, calls = (3, 20) if args.quick else (9, 200)
    row = anyio.run(run, batches, calls)
    row.update(anyio.run(cpu_per_call, batches * calls))
    row["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
