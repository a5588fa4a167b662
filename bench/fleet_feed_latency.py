"""A fleet's change latency, proxy to proxy: from the start of a revocation or an approval
committed to the shared PostgreSQL pin store (as `conduit-mcp pins revoke|approve` does) to the
first call refused (after a revocation) or let through (after an approval) by each of two
`conduit-mcp proxy --listen` processes on that store.

Two proxies on loopback, each in front of its own copy of tests/guard/hostile_server.py's mixed
page, on a throwaway PostgreSQL server started the way the tests start it. Each proxy is asked
for `add` (2026-07-28 stateless `tools/call` POSTs, back to back, one proxy after the other)
until its answer flips; the figure is the time from just before the store call to the flipped
answer's arrival, so it includes one HTTP round trip through the proxy. Prints the median and
the maximum per proxy over `--changes` changes (alternately revoke and approve).

    .venv/bin/python -m bench.fleet_feed_latency [--changes 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "guard" / "hostile_server.py"
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
VERSION = "2026-07-28"


def _call_body(n: int) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    }
    params = {"name": "add", "arguments": {"a": n, "b": 1}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def call(http: httpx.Client, url: str, n: int) -> bool:
    """Whether `add` went through (`False`: refused by the guard)."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    answer = http.post(url, json=_call_body(n), headers=headers).json()
    if "result" in answer:
        return True
    if answer.get("error", {}).get("data", {}).get("source") == "conduit-mcp.guard":
        return False
    raise RuntimeError(f"unexpected answer: {answer}")


@contextlib.contextmanager
def proxies(store: str, folder: Path) -> Iterator[list[str]]:
    """Two listening proxies on `store`; yields their MCP URLs."""
    from tests.guard.conftest import free_port, stop, wait_for_port

    started: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for i in (1, 2):
            port = free_port()
            argv = [
                str(CONDUIT), "proxy", "--server-id", "mixed", "--quiet", "--pins", store,
                "--held-dir", str(folder / "held"), "--listen", f"127.0.0.1:{port}", "--",
                sys.executable, str(HOSTILE), "--scenario", "mixed",
                "--log", str(folder / f"server-{i}.jsonl"), "--discover",
            ]  # fmt: skip
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            started.append(process)
            wait_for_port(port, process)
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls
    finally:
        for process in started:
            stop(process)


def measure(store: str, urls: list[str], changes: int) -> list[list[float]]:
    """Per proxy, the seconds from each change's start to its flipped answer."""
    seen: list[list[float]] = [[] for _ in urls]
    n = 0
    with PinStore(store) as pins, httpx.Client(timeout=30) as http:
        for url in urls:  # each proxy lists through its own first call: add is held
            n += 1
            assert not call(http, url, n)
        (held,) = [p for p in pins.pending("mixed") if p.name == "add"]
        assert held.definition is not None  # the page the proxies listed, as held
        tool = Tool.from_wire("mixed", json.loads(held.definition))
        for i in range(changes):
            revoke = i % 2 == 0
            if revoke:
                pins.approve("mixed", tool, approver="bench")
                for url in urls:  # settle: both let add through before the revocation
                    while not call(http, url, n := n + 1):
                        time.sleep(0.01)
            start = time.perf_counter()
            if revoke:
                pins.revoke("mixed", "add", approver="bench")
            else:
                pins.approve("mixed", tool, approver="bench")
            pending = set(range(len(urls)))
            while pending:
                if time.perf_counter() - start > 10:
                    raise RuntimeError(f"no proxy of {sorted(pending)} saw change {i} in 10 s")
                for j in sorted(pending):
                    went = call(http, urls[j], n := n + 1)
                    if went != revoke:
                        seen[j].append(time.perf_counter() - start)
                        pending.discard(j)
            time.sleep(0.1)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    from tests.pgserver import postgres_bin, running_postgres

    folder_bin = postgres_bin()
    if folder_bin is None:
        print("skipped: no PostgreSQL binaries")
        return
    with running_postgres(folder_bin) as url, tempfile.TemporaryDirectory() as scratch:
        PinStore(url).close()
        with proxies(url, Path(scratch)) as urls:
            per_proxy = measure(url, urls, args.changes)
    for name, values in zip("AB", per_proxy, strict=True):
        print(
            f"proxy {name}: {len(values)}/{args.changes} changes, first decided call after"
            f" median {statistics.median(values) * 1000:.0f} ms,"
            f" max {max(values) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
