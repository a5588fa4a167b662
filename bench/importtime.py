"""Where a start's import time goes: `-X importtime` of fresh processes, medians per module.

Two starts (issue 33): `client`, `import conduit_mcp.client` (bench/run.py's import figure);
`proxy`, `conduit-mcp proxy --server-id start --quiet -- SERVER` with the client's `initialize`
on its stdin (bench/proxy_start.py's row P3; the server answers one line and exits). Bytecode
as an installed package has it (`PYTHONDONTWRITEBYTECODE` dropped; a first run, untimed, writes
it). Each line: median self µs | median cumulative µs | module (indented as Python nests the
imports), sorted by cumulative time; the header gives the runs, the load average and the
module count. A profile, not a verdict: `-X importtime` adds its own cost, and the load moves
it; judge with CPU time (bench/proxy_start.py, bench/run.py) or instruction counts.

Usage:
    python bench/importtime.py client [--runs 15]
    python bench/importtime.py proxy [--runs 9]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n'
)
PROXY = (
    "import sys\n"
    "sys.argv = ['conduit-mcp', 'proxy', '--server-id', 'start', '--quiet', '--', sys.executable,"
    " '-I', '-S', '-c', 'import sys; print(sys.stdin.readline().strip())']\n"
    "from conduit_mcp.cli import main\n"
    "main()\n"
)
STARTS = {"client": ("import conduit_mcp.client", b""), "proxy": (PROXY, INITIALIZE)}


def profile(start: str, runs: int) -> str:
    """The median table of `runs` starts of `start` (a key of `STARTS`)."""
    code, stdin = STARTS[start]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    selfs: dict[str, list[int]] = collections.defaultdict(list)
    cumulative: dict[str, list[int]] = collections.defaultdict(list)
    for index in range(runs + 1):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            input=stdin,
            env=env,
            capture_output=True,
            check=False,
        )
        if index == 0:
            continue  # writes the bytecode
        for line in done.stderr.decode().splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, total, name = line[len("import time:") :].split("|")
            selfs[name.rstrip()].append(int(own))
            cumulative[name.rstrip()].append(int(total))
    rows = sorted(cumulative, key=lambda name: -statistics.median(cumulative[name]))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    out = [
        f"# {start}: -X importtime, median of {runs} fresh processes, bytecode; load average"
        f" {load}; {len(rows)} modules",
        "# self us | cumulative us | module",
    ]
    out += [
        f"{statistics.median(selfs[n]):8.0f} | {statistics.median(cumulative[n]):8.0f} | {n}"
        for n in rows
    ]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("start", choices=sorted(STARTS))
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    sys.stdout.write(profile(args.start, args.runs))


if __name__ == "__main__":
    main()
