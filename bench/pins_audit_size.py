"""The audit log's size under a server that keeps listing held tools.

A guard with a team store (new="hold") sees the same 1,000 held tools on every listing; before
the pending queue each listing appended one `check` row per tool. This runs `LISTINGS`
listings of `TOOLS` held tools through the guard's `pin_page` and prints the audit rows, the
pending rows, and the size of the audit table (sqlite: `dbstat`; PostgreSQL:
`pg_total_relation_size`), for a sqlite file and a throwaway PostgreSQL server.

    .venv/bin/python -m bench.pins_audit_size [--listings 200] [--tools 1000]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from conduit_mcp.client import Tool
from conduit_mcp.guard._checks import pin_page
from conduit_mcp.pins import PinStore


def held_page(tools: int) -> list[Tool]:
    return [
        Tool.from_wire(
            "s",
            {
                "name": f"tool_{i}",
                "description": f"Tool number {i}: does something useful with its input.",
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        )
        for i in range(tools)
    ]


def listings(store: PinStore, page: list[Tool], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        pin_page(store, "s", page, pin_new=False, pin_changed=False)
    return time.perf_counter() - started


def sqlite_size(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        try:
            row = conn.execute(
                "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'conduit_mcp_audit%'"
            ).fetchone()
            return int(row[0] or 0)
        except sqlite3.OperationalError:  # no dbstat in this sqlite build: the whole file
            return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listings", type=int, default=200)
    parser.add_argument("--tools", type=int, default=1000)
    args = parser.parse_args()
    page = held_page(args.tools)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pins.db"
        with PinStore(path) as store:
            seconds = listings(store, page, args.listings)
            rows, pending = len(store.audit_log()), len(store.pending())
        print(
            f"sqlite: {args.listings} listings x {args.tools} held tools: {rows} audit rows,"
            f" {pending} pending rows, audit table {sqlite_size(path) / 1e6:.2f} MB"
            f" ({seconds:.1f} s)"
        )
    from tests.pgserver import postgres_bin, running_postgres

    folder_bin = postgres_bin()
    if folder_bin is None:
        print("postgresql: skipped (no PostgreSQL binaries)")
        return
    with running_postgres(folder_bin) as url, PinStore(url) as store:
        seconds = listings(store, page, args.listings)
        rows, pending = len(store.audit_log()), len(store.pending())
        conn = store._backend._conn  # type: ignore[attr-defined]
        size = conn.execute("SELECT pg_total_relation_size('conduit_mcp_audit')").fetchone()[0]
        print(
            f"postgresql: {args.listings} listings x {args.tools} held tools: {rows} audit rows,"
            f" {pending} pending rows, audit table {size / 1e6:.2f} MB ({seconds:.1f} s)"
        )


if __name__ == "__main__":
    main()
