"""Proxy start-up: from starting `conduit-mcp proxy` to the first byte it relays.

A client that launches a server through the proxy (what `conduit-mcp wrap` makes a desktop
client do) waits this long before its first answer. Each run starts the command with the
client's `initialize` already waiting on its stdin, and times, from just before the start:

- `forwarded_ms`: until the server child has read that line (the first byte relayed from the
  client to the server; the server reads `time.monotonic()` the moment its first line arrives,
  the same clock as this process, and answers with it);
- `answered_ms`: until the answer's first byte reaches the client (relayed back);
- `cpu_ms`: the CPU the proxy process spent until then (`/proc/PID/stat` utime + stime, Linux;
  the server child not counted).

The same server started directly (no proxy) is the floor: what a Python server costs to start
and answer, which the proxy cannot remove. Runs alternate direct / proxied; the figures are
medians. The server is a few lines of Python (`python -I -S`: no site, so it starts as fast as
an interpreter does). Target (issue 33 item 4): `answered_ms` through the proxy <= 300.
Then P4: the CPU of a whole `conduit-mcp --help` process (target <= 200 ms).

Usage:
    python bench/proxy_start.py             # 20 runs each (P4: 10)
    python bench/proxy_start.py --runs 5    # smoke
    python bench/proxy_start.py --json      # two JSON objects, P3 and P4 (bench/run.py's shape)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CONDUIT = Path(sys.executable).parent / "conduit-mcp"
TARGET_MS = 300.0

SERVER = r"""
import json, sys, time
line = sys.stdin.buffer.readline()
seen = time.monotonic()
request = json.loads(line)
result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
          "serverInfo": {"name": "start", "version": str(seen)}}
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
sys.stdout.flush()
sys.stdin.buffer.read()
"""
SERVER_ARGV = [sys.executable, "-I", "-S", "-c", SERVER]
PROXY_ARGV = [str(CONDUIT), "proxy", "--server-id", "start", "--quiet", "--", *SERVER_ARGV]
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    ).encode()
    + b"\n"
)
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_ms(pid: int) -> float:
    """utime + stime of `pid` so far, in ms (clock ticks: 10 ms resolution)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / TICKS


def once(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """One start: the times in ms from just before the process starts."""
    read_in, write_in = os.pipe()
    os.write(write_in, INITIALIZE)  # waiting on stdin before the process exists
    start = time.monotonic()
    process = subprocess.Popen(argv, stdin=read_in, stdout=subprocess.PIPE, env=env)
    os.close(read_in)
    assert process.stdout is not None
    try:
        select.select([process.stdout], [], [])
        answered = time.monotonic()
        cpu = _cpu_ms(process.pid)
        line = process.stdout.readline()
        seen = float(json.loads(line)["result"]["serverInfo"]["version"])
    finally:
        os.close(write_in)  # end of input: the proxy and the server exit
        process.wait(timeout=30)
        process.stdout.close()
    return {
        "forwarded_ms": (seen - start) * 1000,
        "answered_ms": (answered - start) * 1000,
        "cpu_ms": cpu,
    }


def run(runs: int) -> dict[str, Any]:
    """`runs` starts each way, alternating; medians and the verdict."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    samples: dict[str, list[dict[str, float]]] = {"direct": [], "proxied": []}
    # The warm-up writes the bytecode an installation has (pip compiles at install): a fresh
    # checkout would otherwise compile every module in every timed start.
    warm = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    once(PROXY_ARGV, warm)  # warm the page cache and the bytecode of both
    once(SERVER_ARGV, warm)
    for index in range(runs):
        order = ["direct", "proxied"] if index % 2 == 0 else ["proxied", "direct"]
        for way in order:
            samples[way].append(once(SERVER_ARGV if way == "direct" else PROXY_ARGV, env))

    def median(way: str, key: str) -> float:
        return round(statistics.median(s[key] for s in samples[way]), 1)

    proxied = median("proxied", "answered_ms")
    return {
        "row": "P3 proxy start to the first byte relayed (stdio, a Python server)",
        "runs": runs,
        "direct_answered_ms": median("direct", "answered_ms"),
        "proxied_forwarded_ms": median("proxied", "forwarded_ms"),
        "proxied_answered_ms": proxied,
        "proxy_cpu_ms": median("proxied", "cpu_ms"),
        "target_ms": TARGET_MS,
        "met": proxied <= TARGET_MS,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


#: `conduit-mcp --help` at most this much CPU (issue 33 item 4).
HELP_TARGET_MS = 200.0


def help_cpu(runs: int) -> dict[str, Any]:
    """CPU of `conduit-mcp --help` as a whole process (user + system, `getrusage` of the
    children), median of `runs`; bytecode written by a first run."""
    argv = [str(CONDUIT), "--help"]
    subprocess.run(argv, capture_output=True, check=True)  # bytecode, page cache
    spent = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    cpu = round(statistics.median(spent), 1)
    return {
        "row": "P4 conduit-mcp --help, CPU of the whole process",
        "id": "P4-help-cpu",
        "runs": runs,
        "cpu_ms": cpu,
        "target_ms": HELP_TARGET_MS,
        "met": cpu <= HELP_TARGET_MS,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """The rows of this script, for `make bench` (bench/run.py): P3 and P4."""
    start = run(3 if quick else 20)
    start["id"] = "P3-proxy-start"
    return [start, help_cpu(3 if quick else 10)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    row = run(args.runs)
    help_row = help_cpu(max(3, args.runs // 2))
    if args.json:
        print(json.dumps(row))
        print(json.dumps(help_row))
        return
    print(row["row"])
    print(f"  direct: answered {row['direct_answered_ms']} ms (the floor: the server's own start)")
    print(
        f"  proxied: forwarded {row['proxied_forwarded_ms']} ms, answered"
        f" {row['proxied_answered_ms']} ms, proxy CPU {row['proxy_cpu_ms']} ms"
    )
    verdict = "met" if row["met"] else "NOT met"
    print(f"  target <= {TARGET_MS:.0f} ms: {verdict}; load average {row['load_average']}")
    print(help_row["row"])
    verdict = "met" if help_row["met"] else "NOT met"
    print(
        f"  {help_row['cpu_ms']} ms of CPU (median of {help_row['runs']});"
        f" target <= {HELP_TARGET_MS:.0f} ms: {verdict}"
    )


if __name__ == "__main__":
    main()
