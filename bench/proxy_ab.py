"""The stdio proxy at an earlier revision against the working tree, in one run: two
`conduit-mcp proxy` sessions (one on `git archive REV src`, one on this tree's `src`), each in
front of its own raw echo server (`bench/guard.py --serve`, as bench/proxy.py's P1), batches of
sequential `tools/call` round trips alternating between them (order flipped every batch).

For each side: the proxy's CPU µs per call over all its threads (/proc/PID/task/*/schedstat,
on-CPU ns, the server behind it not counted) as the median over batches, and the median wall
µs per call. Both sides meet the same machine load at the same moments, so the comparison holds
on a busy machine where P1's ratio does not; the load average is reported beside it.

Usage:
    python bench/proxy_ab.py --before 3a1651b
    python bench/proxy_ab.py --before 3a1651b --calls 300 --batches 12
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proxy as p1
from bench.proxy_http_ab import _tree_at


@asynccontextmanager
async def _session(argv: list[str], env: dict[str, str]) -> AsyncIterator[ClientSession]:
    """As bench/proxy.py's, with the proxy's environment given (the SDK passes only a few
    variables of ours on by default, never PYTHONPATH)."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            yield session


async def _compare(trees: dict[str, Path], calls: int, batches: int) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    wall: dict[str, list[float]] = {name: [] for name in trees}
    me = os.getpid()
    async with AsyncExitStack() as stack:
        sides = []
        for name, tree in trees.items():
            before = p1._children(me)
            env = {**os.environ, "PYTHONPATH": str(tree)}
            session = await stack.enter_async_context(_session(p1.PROXIED, env))
            (pid,) = p1._children(me) - before
            sides.append((name, session, pid))
        for _, session, _ in sides:
            await p1._batch(session, max(calls // 4, 5))  # warm up
        gc.collect()
        gc.disable()
        try:
            for index in range(batches):
                for name, session, pid in sides if index % 2 == 0 else sides[::-1]:
                    start = p1._cpu_ns(pid)
                    wall[name].append(await p1._batch(session, calls))
                    cpu[name].append((p1._cpu_ns(pid) - start) / calls / 1000)
        finally:
            gc.enable()
    return {
        f"{name}_{measure}": value
        for name in trees
        for measure, value in (
            ("proxy_cpu_us_per_call", round(statistics.median(cpu[name]), 1)),
            ("us_median", round(statistics.median(wall[name]), 1)),
        )
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier revision (git)")
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--batches", type=int, default=10)
    args = parser.parse_args(argv)
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"before": _tree_at(args.before, Path(scratch)), "after": p1.ROOT / "src"}
        row = anyio.run(_compare, trees, args.calls, args.batches)
    load = max(start_load, os.getloadavg()[0])
    print(
        json.dumps(
            {
                "row": "stdio proxy before/after, tools/call (echo)",
                "before": args.before,
                **row,
                "batches": args.batches,
                "calls_per_batch": args.calls,
                "load_average_1m": round(load, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
