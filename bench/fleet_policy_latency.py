"""A fleet's policy latency, proxy to proxy (issue 32: "a `policy set` reaches every proxy
within 1 s"): from the start of a new policy version committed to the shared PostgreSQL pin
store (as `conduit-mcp policy set` does) to the first call decided by it through each of two
`conduit-mcp proxy --listen --auth jwt` processes on that store.

Two proxies on loopback, each in front of its own copy of tests/guard/hostile_server.py's mixed
page (`--new pin`), a JWKS server on loopback (tests/proxy/jwks.py) and one caller of group
`dev`, on a throwaway PostgreSQL server started the way the tests start it. The versions
alternate: `dev` may call `add`, then may not. Each proxy is asked for `add` (2026-07-28
stateless `tools/call` POSTs with the caller's bearer token, back to back, one proxy after the
other) until its answer flips; the figure is the time from just before the store call to the
flipped answer's arrival, so it includes one HTTP round trip through the proxy (and its token
check). Prints the median and the maximum per proxy over `--changes` versions.

    .venv/bin/python -m bench.fleet_policy_latency [--changes 20]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.fleet_feed_latency import CONDUIT, HOSTILE, VERSION, _call_body
from conduit_mcp.pins import PinStore

#: The two versions: `dev` may call `add` in the first, not in the second.
ALLOWED = """\
default = "deny"
[[rule]]
groups = ["dev"]
allow = ["mixed/add", "mixed/echo"]
"""
DENIED = ALLOWED.replace('"mixed/add", ', "")


def call(http: httpx.Client, url: str, n: int, bearer: str) -> bool:
    """Whether `add` went through (`False`: refused by the policy)."""
    headers = {
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {bearer}",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    answer = http.post(url, json=_call_body(n), headers=headers).json()
    if "result" in answer:
        return True
    if answer.get("error", {}).get("data", {}).get("reason") == "policy_denied":
        return False
    raise RuntimeError(f"unexpected answer: {answer}")


@contextlib.contextmanager
def proxies(store: str, folder: Path, issuer: object) -> Iterator[list[str]]:
    """Two listening proxies with `--auth jwt` on `store`; yields their MCP URLs."""
    from tests.guard.conftest import free_port, stop, wait_for_port

    started: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for i in (1, 2):
            port = free_port()
            argv = [
                str(CONDUIT), "proxy", "--server-id", "mixed", "--quiet", "--pins", store,
                "--new", "pin", "--listen", f"127.0.0.1:{port}",
                "--auth", "jwt", "--jwks-url", issuer.jwks_url,  # type: ignore[attr-defined]
                "--issuer", issuer.issuer, "--audience", "mcp-proxy",  # type: ignore[attr-defined]
                "--", sys.executable, str(HOSTILE), "--scenario", "mixed",
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


def measure(store: str, urls: list[str], changes: int, bearer: str) -> list[list[float]]:
    """Per proxy, the seconds from each version's start to its flipped answer."""
    seen: list[list[float]] = [[] for _ in urls]
    n = 0
    with PinStore(store) as pins, httpx.Client(timeout=30) as http:
        for url in urls:  # settle: both let add through under the first version
            while not call(http, url, n := n + 1, bearer):
                time.sleep(0.01)
        for i in range(changes):
            deny = i % 2 == 0
            start = time.perf_counter()
            pins.set_policy(DENIED if deny else ALLOWED, approver="bench", source="bench")
            pending = set(range(len(urls)))
            while pending:
                if time.perf_counter() - start > 10:
                    raise RuntimeError(f"no proxy of {sorted(pending)} saw version {i} in 10 s")
                for j in sorted(pending):
                    went = call(http, urls[j], n := n + 1, bearer)
                    if went != deny:
                        seen[j].append(time.perf_counter() - start)
                        pending.discard(j)
            time.sleep(0.1)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    from tests.pgserver import postgres_bin, running_postgres
    from tests.proxy.jwks import Key, serve_issuer

    folder_bin = postgres_bin()
    if folder_bin is None:
        print("skipped: no PostgreSQL binaries")
        return
    key = Key("bench")
    with (
        running_postgres(folder_bin) as url,
        tempfile.TemporaryDirectory() as scratch,
        serve_issuer(key) as issuer,
    ):
        with PinStore(url) as pins:
            pins.set_policy(ALLOWED, approver="bench", source="bench")
        exp = int(time.time()) + 3600
        bearer = key.sign(issuer.claims(sub="bench", groups=["dev"], iat=None, exp=exp))
        with proxies(url, Path(scratch), issuer) as urls:
            per_proxy = measure(url, urls, args.changes, bearer)
    for name, values in zip("AB", per_proxy, strict=True):
        print(
            f"proxy {name}: {len(values)}/{args.changes} versions, first call decided by it"
            f" after median {statistics.median(values) * 1000:.0f} ms,"
            f" max {max(values) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
