"""The guard's per-message work in the stdio proxy: one `MessageLink`, as the proxy builds it.

Builds `GuardSeam(GuardSettings("bench")).connect(...)` (pins in memory, the guard's default
policy, no metrics), initializes it at 2025-11-25 and lists bench/guard.py's page (`echo`,
`weather`) through it, then drives `pairs` sequential pairs through `from_client_now` /
`from_server_now` exactly as the relay's two threads do: a `tools/call` of `echo` with valid
arguments and its plain text result; with `--notify`, one server notification
(`notifications/progress`) and one client notification (`notifications/cancelled` of an id
long answered) besides, per pair. Every message is parsed from its JSON line beforehand
(the relay's `read_message` is not measured), and every decision is checked to be a pass.

Prints, per pair: (a) µs of this thread's CPU (best of 5 unprofiled runs: still moved by the
machine's load, caches included), (b) Python function calls (cProfile's count, coroutine
resumptions included: independent of load), then the top entries by calls, and with
`--valgrind` (c) instructions (`valgrind --tool=callgrind`: a run of `pairs` pairs minus a run
of none, everything else equal, divided by `pairs`; takes a minute).

Usage:
    python bench/guard_link_profile.py                  # 5000 pairs, top 30
    python bench/guard_link_profile.py --valgrind       # and instructions per pair
    python bench/guard_link_profile.py --notify         # two notifications per pair besides
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.guard import ECHO  # noqa: E402  (the same echo tool as the guard rows)
from bench.guard_profile import _short  # noqa: E402

WEATHER = {
    "name": "weather",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "outputSchema": {
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
        "required": ["temperature"],
    },
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench", "version": "0"},
}


def _lines(pairs: int, notify: bool) -> list[tuple[str, bytes]]:
    """The wire lines of `pairs` pairs, in order: `(side, line)`; ids from 100."""
    out: list[tuple[str, bytes]] = []
    for i in range(100, 100 + pairs):
        call = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hello"}},
        }
        result = {"content": [{"type": "text", "text": "hello"}], "isError": False}
        out.append(("client", json.dumps(call).encode()))
        if notify:
            progress = {"progressToken": i, "progress": 1, "total": 2}
            out.append(
                (
                    "server",
                    json.dumps(
                        {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
                    ).encode(),
                )
            )
        out.append(("server", json.dumps({"jsonrpc": "2.0", "id": i, "result": result}).encode()))
        if notify:
            cancel = {"requestId": i - 1, "reason": "late"}
            out.append(
                (
                    "client",
                    json.dumps(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
                    ).encode(),
                )
            )
    return out


def _link() -> Any:
    """A `MessageLink` as the stdio proxy builds it, initialized and listed."""
    from conduit_mcp.proxy._seam import GuardSeam
    from conduit_mcp.proxy._settings import GuardSettings

    async def write_server(message: dict[str, Any]) -> None:
        raise AssertionError("no listing of the proxy's own is expected")

    seam = GuardSeam(GuardSettings("bench"))
    link = seam.connect(write_server)

    async def setup() -> None:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b"}}
        for side, message in (
            ("c", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
            ("s", {"jsonrpc": "2.0", "id": 0, "result": INIT}),
            ("c", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ("c", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            ("s", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [ECHO, WEATHER]}}),
        ):
            decide = link.from_client if side == "c" else link.from_server
            action, _ = await decide(message)
            assert action in ("pass", "replace"), (message, action)

    asyncio.run(setup())
    return link


def _drive(link: Any, messages: list[tuple[str, dict[str, Any]]]) -> None:
    client, server = link.from_client_now, link.from_server_now
    for side, message in messages:
        decided = client(message) if side == "client" else server(message)
        if decided != ("pass", None):
            raise AssertionError((message, decided))


def _parsed(pairs: int, notify: bool) -> list[tuple[str, dict[str, Any]]]:
    return [(side, json.loads(line)) for side, line in _lines(pairs, notify)]


def _child(pairs: int, notify: bool, drive: bool) -> None:
    """The program callgrind counts: set up, warm up, parse `pairs` pairs, drive them (or
    not: the baseline)."""
    link = _link()
    _drive(link, _parsed(200, notify))  # warm-up: ids 100.. answered, so reuse is fine
    messages = _parsed(pairs, notify)
    if drive:
        _drive(link, messages)


def _instructions(pairs: int, notify: bool, drive: bool) -> int:
    with tempfile.NamedTemporaryFile() as out:
        args = [sys.executable, __file__, "--child", str(pairs)]
        args += (["--notify"] if notify else []) + ([] if drive else ["--no-drive"])
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *args],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1).replace(",", ""))


def main(pairs: int, top: int, notify: bool, valgrind: bool) -> list[str]:
    link = _link()
    _drive(link, _parsed(500, notify))  # warm caches
    cpus = []
    for _ in range(5):
        messages = _parsed(pairs, notify)
        gc.collect()
        gc.disable()
        try:
            start = time.thread_time_ns()
            _drive(link, messages)
            cpus.append((time.thread_time_ns() - start) / pairs / 1000)
        finally:
            gc.enable()
    messages = _parsed(pairs, notify)
    profiler = cProfile.Profile(time.thread_time_ns, 1e-9)
    gc.disable()
    try:
        profiler.enable()
        _drive(link, messages)
        profiler.disable()
    finally:
        gc.enable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    stats = {k: v for k, v in stats.items() if k[2] != "_drive"}
    functions = sum(v[1] for v in stats.values()) / pairs
    what = "call/result pairs" + (" (+2 notifications each)" if notify else "")
    lines = [
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs); {pairs} {what} through one MessageLink",
        f"(a) {min(cpus):.2f} µs CPU per pair (best of 5; runs: "
        f"{', '.join(f'{c:.2f}' for c in cpus)})",
        f"(b) {functions:.1f} Python function calls per pair (cProfile)",
    ]
    if valgrind:
        count = 2000
        base = _instructions(count, notify, False)
        full = _instructions(count, notify, True)
        lines.append(f"(c) {(full - base) / count:,.0f} instructions per pair (callgrind)")
    lines += ["", f"top {top} by calls (ncalls per pair; own µs per pair, profiled):"]
    ranked = sorted(stats.items(), key=lambda item: (-item[1][1], _short(item[0])))
    for key, (_, ncalls, own, _cum, _) in ranked[:top]:
        lines.append(f"{ncalls / pairs:5.1f} {own / pairs * 1e6:6.2f}  {_short(key)}")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--notify", action="store_true")
    parser.add_argument("--valgrind", action="store_true")
    parser.add_argument("--child", type=int, default=None)
    parser.add_argument("--no-drive", action="store_true")
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.notify, not args.no_drive)
        raise SystemExit(0)
    for row in main(args.pairs, args.top, args.notify, args.valgrind):
        print(row)
