"""Where the HTTP proxy's CPU goes per stateless `tools/call`, grouped by layer.

Starts bench/http_echo.py and `conduit-mcp proxy --listen ... --upstream ...` in front of it
(as bench/proxy_http.py's H1), the proxy under cProfile with the CPU-time clock of its main
thread (`time.thread_time_ns`: a shared machine's preemption lands on nothing). After a warm-up
the client signals the proxy (SIGUSR1: profiling starts), makes `--calls` sequential 2026-07-28
`tools/call` requests on one keep-alive connection, and signals again (SIGUSR2: the stats are
written). Before that, as many calls unprofiled give the proxy's real CPU µs per call
(/proc/PID/schedstat). The report: own (cProfile "tottime") CPU per call of each layer, then
the top functions, then the cumulative time of a few entry points. Reading the clock on every
Python call inflates each call alike: the shares, not the absolute figures, are the point.

`--session` profiles the other path instead, bench/peers.py's X2 row: `conduit-mcp proxy
--listen ... -- python bench/guard.py --serve` (a stdio child per session) driven by
bench/peers_client.py's `StreamableClient` (a 2025-11-25 session: `initialize`, then
`Mcp-Session-Id` on every POST), sequential or, with `--in-flight 32`, 32 keep-alive
connections of the session with one call in flight on each. Its CPU per call counts every
thread of the proxy (/proc/PID/task/*/schedstat), never the child server.

Usage:
    python bench/proxy_profile.py                      # 3000 calls, to stdout
    python bench/proxy_profile.py --session --in-flight 32 --calls 3000
    python bench/proxy_profile.py --calls 2000 --out bench/profiles/proxy_http_after.txt
    python bench/proxy_profile.py --stats /tmp/proxy.prof   # and the raw stats (pstats)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import proxy_http as ph  # noqa: E402

#: (layer, substrings of a function's file or, for a builtin, its name): first match wins.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "guard (guard/, proxy/_seam.py, client/ checks)",
        (
            "conduit_mcp/guard/",
            "proxy/_seam.py",
            "conduit_mcp/client/",
        ),
    ),
    (
        "SDK session transport (mcp/server/streamable_http.py, sse_starlette, mcp.shared)",
        (
            "mcp/server/streamable_http",
            "sse_starlette/",
            "mcp/shared/message",
            "mcp/shared/session",
        ),
    ),
    ("memory streams (anyio/streams/memory.py)", ("anyio/streams/memory",)),
    ("stdio child (proxy/stdio/, proxy/_message.py)", ("proxy/stdio/", "proxy/_message.py")),
    (
        "SDK checks (mcp.shared.inbound; Host/Origin: transport_security, starlette)",
        (
            "mcp/shared/inbound",
            "mcp/server/transport_security",
            "starlette/",
        ),
    ),
    (
        "hooks: auth, policy, tracing, call audit, bounds (listen/_auth, _callers, _limits; "
        "proxy/_access, _tracing, _callaudit)",
        (
            "listen/_auth.py",
            "listen/_callers.py",
            "listen/_limits.py",
            "proxy/_access.py",
            "proxy/_tracing.py",
            "proxy/_callaudit.py",
            "opentelemetry/",
        ),
    ),
    (
        "pooled POST (upstream/_pool.py, _direct.py)",
        ("upstream/_pool.py", "upstream/_direct.py"),
    ),
    ("router (listen/_stateless.py)", ("listen/_stateless.py",)),
    ("upstream headers (upstream/_headers.py)", ("upstream/_headers.py",)),
    (
        "budget, metrics (listen/_budget.py, proxy/_metrics.py, prometheus_client)",
        (
            "listen/_budget.py",
            "proxy/_metrics.py",
            "prometheus_client",
        ),
    ),
    (
        "listener (uvicorn, listen/_server.py, _protocol.py, httptools)",
        (
            "uvicorn/",
            "listen/_server.py",
            "listen/_protocol.py",
            "httptools",
        ),
    ),
    ("other conduit_mcp", ("conduit_mcp/",)),
    (
        "client/wire models (pydantic, mcp.types, jsonschema)",
        (
            "pydantic",
            "mcp/types",
            "mcp_types",
            "jsonschema",
        ),
    ),
    ("json (stdlib)", ("json/",)),
    ("anyio", ("anyio/",)),
    (
        "event loop (asyncio, uvloop, sockets)",
        (
            "asyncio/",
            "uvloop",
            "socket",
            "Transport",
            "Future",
            "Task",
            "Handle",
        ),
    ),
]
ENTRY_POINTS = (
    ("listen/_server.py", "__call__"),
    ("listen/_stateless.py", "handle"),
    ("listen/_stateless.py", "_handle_direct"),
    ("listen/_stateless.py", "_check_headers"),
    ("listen/_stateless.py", "_exchange_direct"),
    ("upstream/_direct.py", "gate"),
    ("upstream/_direct.py", "post"),
    ("upstream/_direct.py", "_guarded"),
    ("upstream/_pool.py", "request"),
    ("listen/_stateless.py", "write_json"),
    ("listen/_server.py", "_in_session"),
    ("listen/_server.py", "_pump_down_to_up"),
    ("listen/_server.py", "_gated_and_sent"),
    ("listen/_server.py", "send"),
    ("proxy/_pump.py", "pump"),
    ("mcp/server/streamable_http.py", "handle_request"),
    ("mcp/server/streamable_http.py", "_handle_post_request"),
    ("mcp/server/streamable_http.py", "message_router"),
    ("sse_starlette/sse.py", "__call__"),
    ("proxy/_seam.py", "receive"),
    ("proxy/_seam.py", "send"),
    ("proxy/_seam.py", "before_call"),
    ("stdio/_child.py", "_read_server"),
    ("stdio/_child.py", "send"),
)


def layer_of(key: tuple[str, int, str]) -> str:
    """The layer a cProfile entry belongs to (by file, or by name for a builtin)."""
    filename, _, name = key
    text = name if filename == "~" else filename
    for layer, marks in LAYERS:
        if any(mark in text for mark in marks):
            return layer
    return "other (builtins, stdlib)"


def serve(stats_path: str, argv: list[str]) -> None:
    """Run the `conduit-mcp` command `argv` with a profiler the signals drive."""
    profiler = cProfile.Profile(time.thread_time_ns, 1e-9)

    def start(signum: int, frame: Any) -> None:
        profiler.enable()

    def stop(signum: int, frame: Any) -> None:
        profiler.disable()
        profiler.dump_stats(stats_path)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from conduit_mcp.cli import main as launch

    sys.argv = ["conduit-mcp", *argv]
    launch()


async def _drive(port: int, pid: int, calls: int) -> float:
    await ph._list(port)
    conn = await ph.Connection(port).open()
    await ph._echo_calls(conn, 500)
    start = ph.run_queue_wait(pid), int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    await ph._echo_calls(conn, calls)
    cpu_us = (int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) - start[1]) / calls / 1000
    os.kill(pid, signal.SIGUSR1)
    await asyncio.sleep(0.2)
    await ph._echo_calls(conn, calls)
    os.kill(pid, signal.SIGUSR2)
    await asyncio.sleep(0.5)
    conn.close()
    return cpu_us


def threads_cpu_ns(pid: int) -> int:
    """CPU ns of every live thread of `pid` (/proc/PID/task/*/schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass
    return total


def _drive_session(port: int, pid: int, calls: int, in_flight: int) -> tuple[float, float]:
    """bench/peers.py's X2 client against the proxy at `port`: CPU µs a call sequential and
    at `in_flight` (every thread of the proxy), then the profiled run (`in_flight` calls in
    flight, or sequential when 0)."""
    from bench.peers_client import StreamableClient

    client = StreamableClient(port)
    client.open()
    client.calls(300)
    client.in_flight(600, max(in_flight, 1))
    figures = []
    for depth in (0, max(in_flight, 1)):
        start = threads_cpu_ns(pid)
        if depth:
            done, _ = client.in_flight(calls, depth)
        else:
            client.calls(calls)
            done = calls
        figures.append((threads_cpu_ns(pid) - start) / done / 1000)
    os.kill(pid, signal.SIGUSR1)
    time.sleep(0.2)
    if in_flight:
        client.in_flight(calls, in_flight)
    else:
        client.calls(calls)
    os.kill(pid, signal.SIGUSR2)
    time.sleep(0.5)
    return figures[0], figures[1]


def report(stats_path: str, calls: int, cpu_us: float, top: int, command: str) -> str:
    stats = pstats.Stats(stats_path)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values())
    by_layer: dict[str, float] = {}
    for key, entry in raw.items():
        if key[0] == "~" and entry[4]:  # a builtin: its time goes to the layers calling it
            for caller, (_, _, own, _) in entry[4].items():
                layer = layer_of(caller)
                by_layer[layer] = by_layer.get(layer, 0.0) + own
        else:
            by_layer[layer_of(key)] = by_layer.get(layer_of(key), 0.0) + entry[2]
    lines = [
        f"# {command}",
        f"# load average (1m) at the end: {os.getloadavg()[0]:.2f} (the machine is shared)",
        f"proxy CPU per call, unprofiled (/proc/PID/schedstat): {cpu_us:.0f} µs",
        f"profiled main-thread CPU per call (cProfile, inflated by the clock reads): "
        f"{total / calls * 1e6:.0f} µs",
        f"function calls per call (cProfile's count; independent of the machine's load): "
        f"{sum(entry[1] for entry in raw.values()) / calls:.0f}",
        "",
        "own CPU per call by layer (µs, share; a builtin's time is its callers' layer's):",
    ]
    for layer, seconds in sorted(by_layer.items(), key=lambda item: -item[1]):
        lines.append(f"  {seconds / calls * 1e6:7.1f}  {seconds / total:6.1%}  {layer}")
    lines += ["", f"top {top} functions by own CPU per call (µs, calls per call):"]
    ranked = sorted(raw.items(), key=lambda item: -item[1][2])[:top]
    for (filename, line, name), entry in ranked:
        where = name if filename == "~" else f"{_short(filename)}:{line}({name})"
        lines.append(f"  {entry[2] / calls * 1e6:7.1f}  {entry[1] / calls:5.1f}  {where}")
    lines += ["", "cumulative CPU per call of entry points (µs):"]
    for suffix, name in ENTRY_POINTS:
        for (filename, _, fname), entry in raw.items():
            if filename.endswith(suffix) and fname == name:
                lines.append(f"  {entry[3] / calls * 1e6:7.1f}  {suffix}:{name}")
    return "\n".join(lines) + "\n"


def _short(filename: str) -> str:
    for mark in ("site-packages/", "src/", "lib/python3"):
        if mark in filename:
            return filename.split(mark, 1)[1]
    return filename


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--serve"]:
        serve(args_in[1], args_in[2:])
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument(
        "--session",
        action="store_true",
        help="profile --listen in front of a stdio server (X2) instead of --upstream (H1)",
    )
    parser.add_argument(
        "--in-flight",
        type=int,
        default=0,
        help="--session: calls in flight while profiled (0: sequential)",
    )
    parser.add_argument("--out", help="write the report here (else stdout)")
    parser.add_argument("--stats", help="also keep cProfile's stats here (pstats)")
    parser.add_argument(
        "--src", default=str(ROOT / "src"), help="the proxy's source tree (e.g. a git archive's)"
    )
    args = parser.parse_args(args_in)
    command = "python bench/proxy_profile.py " + " ".join(args_in)
    with tempfile.TemporaryDirectory() as scratch:
        stats_path = str(Path(scratch) / "proxy.prof")
        echo_port, proxy_port = ph._free_port(), ph._free_port()
        with ph._started([*ph.ECHO, str(echo_port)], echo_port):
            proxy = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--serve",
                stats_path,
                "proxy",
                "--server-id",
                "bench",
                "--quiet",
                "--listen",
                f"127.0.0.1:{proxy_port}",
            ]
            if args.session:
                proxy += ["--", sys.executable, str(ROOT / "bench" / "guard.py"), "--serve"]
            else:
                proxy += ["--upstream", f"http://127.0.0.1:{echo_port}/mcp"]
            env = {**os.environ, "PYTHONPATH": args.src}
            process = subprocess.Popen(
                proxy, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                ph._wait_port(proxy_port, process)
                if args.session:
                    sequential, flight = _drive_session(
                        proxy_port, process.pid, args.calls, args.in_flight
                    )
                    cpu_us = flight if args.in_flight else sequential
                    note = (
                        f"proxy CPU per call, every thread, unprofiled: sequential "
                        f"{sequential:.0f} µs, {max(args.in_flight, 1)} in flight {flight:.0f} µs"
                    )
                else:
                    cpu_us = asyncio.run(_drive(proxy_port, process.pid, args.calls))
                    note = ""
            finally:
                process.terminate()
                process.wait()
        text = report(stats_path, args.calls, cpu_us, args.top, command)
        if note:
            head, rest = text.split("\n", 2)[:2], text.split("\n", 2)[2]
            text = "\n".join([*head, note, rest])
        if args.stats:
            shutil.copyfile(stats_path, args.stats)
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
