"""The HTTP proxy at an earlier revision against the working tree, in one run: two
`conduit-mcp proxy --listen` processes (one on `git archive REV src`, one on this tree's
`src`) in front of one upstream, batches of sequential 2026-07-28 `tools/call` requests
alternating between them (order flipped every batch), as bench/proxy_http.py's H1.

For each side: the proxy's CPU µs per call (/proc/PID/schedstat, on-CPU time in ns: finer than
the clock ticks of H1's figure) as the median over batches, of its main thread and of all its
threads (H1's figure counts every thread), and the p50 wall time of a call.
Both sides meet the same machine load at the same moments, so the comparison holds on a busy
machine where H1's ratio does not; the load average is reported beside it.

Usage:
    python bench/proxy_http_ab.py --before 34bc349
    python bench/proxy_http_ab.py --before 34bc349 --upstream sdk --calls 500 --batches 8
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proxy_http as ph


def on_cpu_ns(pid: int) -> int:
    """Nanoseconds a process's main thread has run on a CPU (/proc/PID/schedstat, field 1)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def all_threads_on_cpu_ns(pid: int) -> int:
    """Nanoseconds all of a process's threads have run on a CPU (the sum of
    /proc/PID/task/*/schedstat; a thread that ended is not counted): a background thread's
    work per call, which the main thread's figure leaves out."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended between the listing and the read
    return total


def _tree_at(revision: str, into: Path) -> Path:
    """`src/` of `revision` extracted under `into` (git archive)."""
    archive = subprocess.run(
        ["git", "-C", str(ph.ROOT), "archive", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    # Compiled now, as this tree's are: a process that compiles its imports frees large
    # blocks, which raises glibc's mmap threshold, and its large reads (a 256 KiB os.read)
    # then skip the mmap / munmap an installed proxy pays: the two sides would differ by that.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(into / "src")],
        check=True,
        capture_output=True,
    )
    return into / "src"


async def _compare(ports: dict[str, tuple[int, int]], calls: int, batches: int) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {name: [] for name in ports}
    threads: dict[str, list[float]] = {name: [] for name in ports}
    wall: dict[str, list[float]] = {name: [] for name in ports}
    for port, _ in ports.values():
        await ph._list(port)
        conn = await ph.Connection(port).open()
        await ph._echo_calls(conn, calls // 4 + 5)
        conn.close()
    sides = list(ports.items())
    for index in range(batches):
        for name, (port, pid) in sides if index % 2 == 0 else sides[::-1]:
            conn = await ph.Connection(port).open()
            start, start_all = on_cpu_ns(pid), all_threads_on_cpu_ns(pid)
            await ph._echo_calls(conn, calls, wall[name])
            cpu[name].append((on_cpu_ns(pid) - start) / calls / 1000)
            threads[name].append((all_threads_on_cpu_ns(pid) - start_all) / calls / 1000)
            conn.close()
    return {
        f"{name}_{measure}": value
        for name in ports
        for measure, value in (
            ("proxy_cpu_us_per_call", round(statistics.median(cpu[name]), 1)),
            ("proxy_all_threads_cpu_us_per_call", round(statistics.median(threads[name]), 1)),
            ("us_p50", round(statistics.median(wall[name]), 1)),
        )
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier revision (git)")
    parser.add_argument("--upstream", choices=("raw", "sdk"), default="raw")
    parser.add_argument("--calls", type=int, default=1000, help="calls per batch")
    parser.add_argument("--batches", type=int, default=10)
    args = parser.parse_args(argv)
    start_load = os.getloadavg()[0]
    upstream = ph.ECHO if args.upstream == "raw" else ph.SDK_ECHO
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"before": _tree_at(args.before, Path(scratch)), "after": ph.ROOT / "src"}
        echo_port = ph._free_port()
        processes: list[subprocess.Popen[bytes]] = []
        try:
            with ph._started([*upstream, str(echo_port)], echo_port):
                ports: dict[str, tuple[int, int]] = {}
                for name, tree in trees.items():
                    port = ph._free_port()
                    argv = [
                        str(ph.CONDUIT),
                        "proxy",
                        "--server-id",
                        "bench",
                        "--quiet",
                        "--listen",
                        f"127.0.0.1:{port}",
                        "--upstream",
                        f"http://127.0.0.1:{echo_port}/mcp",
                    ]
                    env = {**os.environ, "PYTHONPATH": str(tree)}
                    process = subprocess.Popen(
                        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                    )
                    processes.append(process)
                    ph._wait_port(port, process)
                    ports[name] = (port, process.pid)
                row = asyncio.run(_compare(ports, args.calls, args.batches))
        finally:
            for process in processes:
                process.terminate()
                process.wait()
    load = max(start_load, os.getloadavg()[0])
    print(
        json.dumps(
            {
                "row": f"HTTP proxy before/after, tools/call (2026-07-28, {args.upstream})",
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
