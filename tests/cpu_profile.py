"""Where the suite's CPU goes: a pytest plugin recording each test's CPU, and its report.

    CPU_PROFILE_DIR=/tmp/prof make test     # tests/conftest.py registers the plugin
    python -m tests.cpu_profile /tmp/prof [N]      # totals, per worker, file, folder and test

Each test's CPU is the xdist worker's own (user + sys, `RUSAGE_SELF`) plus that of the child
processes it waited for (`RUSAGE_CHILDREN`: servers, proxies and clients the test or a fixture
started and stopped), taken over `pytest_runtest_protocol` (setup, call, teardown), one JSON
line a test in `<dir>/<worker>.jsonl`. Not counted: collection, a process nobody waits for (a
daemon such as PostgreSQL's server), and the checks `make test` runs before pytest; a session
fixture's processes count where they are reaped. Processes started through tests/forkserver.py
are the fork server's children, reaped by it: their CPU is in no test's row (run with
`CONDUIT_TEST_FORK=0` to see it per test). CPU, not wall time: on a shared machine the
wall time measures the load as much as the suite.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import resource
import sys
import time
from collections.abc import Generator
from typing import IO, Any

import pytest

_out: IO[str] | None = None


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _file() -> IO[str]:
    global _out
    if _out is None:
        folder = os.environ.get("CPU_PROFILE_DIR", ".cache/cpu-profile")
        os.makedirs(folder, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = open(os.path.join(folder, f"{worker}.jsonl"), "a", encoding="utf-8")
    return _out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
    """Record one test's CPU (own, reaped children) and its start and end (Unix seconds)."""
    started, (own, children) = time.time(), _cpu()
    yield
    ended, (own_after, children_after) = time.time(), _cpu()
    row = {
        "id": item.nodeid,
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "start": started,
        "end": ended,
        "own": own_after - own,
        "children": children_after - children,
    }
    out = _file()
    out.write(json.dumps(row) + "\n")
    out.flush()


def report(folder: str, top: int = 40) -> None:
    """Print the totals, each worker's end and CPU, and the costliest files, folders, tests."""
    rows = []
    for path in glob.glob(os.path.join(folder, "*.jsonl")):
        with open(path, encoding="utf-8") as lines:
            rows += [json.loads(line) for line in lines]
    if not rows:
        print(f"no rows in {folder}")
        return
    first = min(row["start"] for row in rows)
    cpu = lambda row: row["own"] + row["children"]  # noqa: E731
    own = sum(row["own"] for row in rows)
    children = sum(row["children"] for row in rows)
    print(
        f"{len(rows)} tests: {own + children:.1f} s CPU ({own:.1f} own + {children:.1f} children)"
    )
    for worker in sorted({row["worker"] for row in rows}):
        mine = [row for row in rows if row["worker"] == worker]
        end = max(row["end"] for row in mine) - first
        print(
            f"  {worker}: {len(mine)} tests, ended at {end:.0f} s, {sum(map(cpu, mine)):.1f} s CPU"
        )
    for title, key in (
        ("file", lambda row: row["id"].split("::")[0]),
        ("folder", lambda row: os.path.dirname(row["id"].split("::")[0])),
        ("test", lambda row: row["id"]),
    ):
        totals: dict[str, float] = collections.defaultdict(float)
        counts: collections.Counter[str] = collections.Counter()
        for row in rows:
            totals[key(row)] += cpu(row)
            counts[key(row)] += 1
        print(f"\nby {title} (s CPU, tests)")
        for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1])[:top]:
            print(f"{seconds:8.1f} {counts[name]:6d}  {name}")


if __name__ == "__main__":
    report(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
