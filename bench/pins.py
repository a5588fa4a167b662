"""Bench rows for issue 11: `PinStore.check_page` of a 1,000-tool page, sqlite and PostgreSQL.

    python bench/pins.py                 # 1,000 tools, 51 rounds; starts a local PostgreSQL
    python bench/pins.py --postgres URL  # use a running server instead
    python bench/pins.py --quick         # 100 tools, 3 rounds, sqlite only (smoke run)

The page is bench/workload.py's 1,000 tools (the corpus, varied, unique names), taken in by
`intake` and approved once; each round checks the whole page (every tool `approved`: the
steady state of a guard) with `audit=False`, so only the lookup is timed. A second figure
times a page where 10 tools changed (their definitions come back in the same lookup, and the
outcomes are appended to the audit log). Figures: median wall time per page and per tool,
median CPU time of the calling thread (`*_cpu_ms`: what the page costs this process, robust
when the machine is shared) and, for a PostgreSQL server on this machine, the server process's
CPU per page averaged over the rounds (`*_server_cpu_ms`).
Targets (issue 11): <= 5 ms per page on sqlite, <= 20 ms on a local PostgreSQL.
A script, not a test; it prints one JSON document (and writes it with --output).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import workload  # noqa: E402
from conduit_mcp.client import Tool, intake  # noqa: E402
from conduit_mcp.pins import PinStore  # noqa: E402

TARGET_MS = {"sqlite": 5.0, "postgresql": 20.0}


def _page(n: int) -> list[Tool]:
    return list(
        intake(
            "bench", {"tools": workload.tools(n)}, transport="stdio", protocol_version="2026-07-28"
        ).tools
    )


def _drifted(tools: list[Tool], k: int) -> list[Tool]:
    out = list(tools)
    for i in range(0, len(out), max(1, len(out) // k))[:k]:
        raw = copy.deepcopy(out[i].raw)
        raw["description"] = str(raw.get("description", "")) + " (changed)"
        out[i] = Tool.from_wire("bench", raw)
    return out


def _time(
    fn: Callable[[], object], rounds: int, server: Callable[[], float] | None = None
) -> tuple[list[float], list[float], float | None]:
    """Wall and this thread's CPU milliseconds per call (CPU: robust on a loaded machine; it
    leaves out the database server's own time), and the server's CPU milliseconds per call
    over all rounds (`server` reads its CPU seconds; the clock ticks every 10 ms, so it is an
    average, not a distribution)."""
    fn()  # warm: prepared statements, page cache
    wall, cpu = [], []
    gc.collect()
    gc.disable()
    before = server() if server else 0.0
    try:
        for _ in range(rounds):
            start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
            fn()
            cpu.append((time.thread_time_ns() - start_cpu) / 1e6)
            wall.append((time.perf_counter_ns() - start) / 1e6)
    finally:
        gc.enable()
    used = (server() - before) * 1000 / rounds if server else None
    return wall, cpu, used


def _server_cpu(pins: PinStore) -> Callable[[], float] | None:
    """A reader of the CPU seconds of the PostgreSQL process serving `pins`, when that process
    runs on this machine (Linux /proc); else `None`."""
    conn = getattr(pins._backend, "_conn", None)  # private: a bench may look inside
    pid = getattr(getattr(conn, "info", None), "backend_pid", None)
    stat = Path(f"/proc/{pid}/stat")
    if pid is None or not stat.exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime

    return read


def measure(backend: str, location: str, tools: list[Tool], rounds: int) -> dict[str, Any]:
    """One row: the whole page approved (lookup only), and with 10 changed tools."""
    with PinStore(location) as pins:
        pins.approve_all("bench", tools, approver="bench")
        server = _server_cpu(pins)
        steady, cpu, steady_server = _time(
            lambda: pins.check_page("bench", tools, audit=False), rounds, server
        )
        statuses = {c.status for c in pins.check_page("bench", tools, audit=False)}
        assert statuses == {"approved"}, statuses
        drifted = _drifted(tools, 10)
        changed_statuses = [c.status for c in pins.check_page("bench", drifted, audit=False)]
        assert changed_statuses.count("changed") == 10, changed_statuses
        changed, changed_cpu, changed_server = _time(
            lambda: pins.check_page("bench", drifted), rounds, server
        )
    page_ms = statistics.median(steady)
    row: dict[str, Any] = {
        "backend": backend,
        "tools": len(tools),
        "rounds": rounds,
        "page_ms": round(page_ms, 3),
        "page_ms_min": round(min(steady), 3),
        "page_cpu_ms": round(statistics.median(cpu), 3),
        "per_tool_us": round(page_ms * 1000 / len(tools), 3),
        "page_ms_10_changed_audited": round(statistics.median(changed), 3),
        "page_cpu_ms_10_changed_audited": round(statistics.median(changed_cpu), 3),
    }
    if steady_server is not None and changed_server is not None:
        row["page_server_cpu_ms"] = round(steady_server, 3)
        row["page_server_cpu_ms_10_changed_audited"] = round(changed_server, 3)
    row["target_ms"] = TARGET_MS[backend]
    row["met"] = page_ms <= TARGET_MS[backend]
    return row


@contextmanager
def _postgres(url: str | None) -> Iterator[str | None]:
    if url is not None:
        yield url
        return
    from tests.pgserver import postgres_bin, running_postgres

    folder = postgres_bin()
    if folder is None:
        yield None
        return
    with running_postgres(folder) as started:
        yield started


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 tools, 3 rounds, sqlite only")
    parser.add_argument("--postgres", help="a postgresql:// URL (default: start a local server)")
    parser.add_argument("--output", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    n, rounds = (100, 3) if args.quick else (1000, 51)
    tools = _page(n)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        rows.append(measure("sqlite", str(Path(folder) / "pins.db"), tools, rounds))
    if not args.quick:
        with _postgres(args.postgres) as url:
            if url is None:
                rows.append({"backend": "postgresql", "skipped": "no PostgreSQL binaries"})
            else:
                rows.append(measure("postgresql", url, tools, rounds))
    report = {"rows": rows, "python": sys.version.split()[0]}
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
