"""The change feed's latency: from a `pins approve` / `pins revoke` in another process to the
callback of a `PinStore.watch` in this one, on a sqlite file and a throwaway PostgreSQL server.

The writer process stamps each approval and revocation with `time.time()` taken just before the
call (as the approver's name); the watcher's callback subtracts it from its own clock (one
host, one clock). Prints the median and the maximum over `--changes` changes.

    .venv/bin/python -m bench.pins_feed_latency [--changes 40]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import threading
import time
from pathlib import Path

from conduit_mcp.client import Tool
from conduit_mcp.pins import AuditEntry, PinStore


def writer(location: str, changes: int, pause: float) -> None:
    """Alternate approvals and revocations of one tool, each stamped with its start time."""
    raw = {"name": "t", "inputSchema": {"type": "object"}}
    with PinStore(location) as store:
        for i in range(changes):
            time.sleep(pause)
            stamp = repr(time.time())
            if i % 2 == 0:
                store.approve("s", Tool.from_wire("s", raw), approver=stamp)
            else:
                store.revoke("s", "t", approver=stamp)


def latencies(location: str, changes: int, pause: float = 0.1) -> list[float]:
    """Seconds from each change's start to the watcher's callback, in order."""
    seen: list[float] = []
    done = threading.Event()

    def callback(entry: AuditEntry) -> None:
        seen.append(time.time() - float(entry.approver or "nan"))
        if len(seen) >= changes:
            done.set()

    with PinStore(location) as store:
        watcher = store.watch(callback)
        process = multiprocessing.get_context("spawn").Process(
            target=writer, args=(location, changes, pause)
        )
        process.start()
        process.join(120)
        done.wait(10)
        watcher.close()
    return seen


def report(name: str, values: list[float], changes: int) -> str:
    return (
        f"{name}: {len(values)}/{changes} changes seen, latency median"
        f" {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--changes", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        values = latencies(str(Path(folder) / "pins.db"), args.changes)
        print(report("sqlite", values, args.changes))
    from tests.pgserver import postgres_bin, running_postgres

    folder_bin = postgres_bin()
    if folder_bin is None:
        print("postgresql: skipped (no PostgreSQL binaries)")
        return
    with running_postgres(folder_bin) as url:
        PinStore(url).close()
        values = latencies(url, args.changes)
        print(report("postgresql", values, args.changes))


if __name__ == "__main__":
    main()
