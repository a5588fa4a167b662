"""The review console's figures (issue 29 item 5), each printed with the machine's load:

1. the queue page with 1,000 pending tools: server time per request (the app in process,
   Starlette's test client: no network), median and max of 20, as CPU time of the process
   (the figure the target is about: a shared machine's load stretches wall time) and as wall
   time;
2. the review page of a changed tool whose pending definition holds a 200 KB description (the
   word diff against the approved one, the hidden characters marked), median and max of 20;
3. a console decision seen by a running guard (what `conduit-mcp proxy` runs, following the
   store's change feed): from the start of `POST /api/decisions` to a real `conduit-mcp
   console` process until the guard lets the tool through, 20 approvals, median and max.

Run: `.venv/bin/python -m bench.console` (about a minute). Targets: the median CPU time of
the two pages within 300 ms and 200 ms, every decision seen within 1 s.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import anyio

from conduit_mcp.client import Tool
from conduit_mcp.console import create_app
from conduit_mcp.pins import PinStore
from tests.console.browser import console_process
from tests.console.seed import PASSWORD, WEATHER, held, hostile, many


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.1f} ms, max {max(samples) * 1000:.1f} ms"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min), {os.cpu_count()} cores"


Times = tuple[list[float], list[float]]


def page_times(folder: Path) -> tuple[Times, Times]:
    from starlette.testclient import TestClient

    location = str(folder / "pages.db")
    many(location, 1000)
    big = {**hostile("http://127.0.0.1:9", 200_000), "name": "get_weather"}
    with PinStore(location) as store:
        store.approve("weather", Tool.from_wire("weather", WEATHER), approver="alice")
        held(store, "weather", [big])
        store.add_account("alice", role="approver", password=PASSWORD)
    queue: Times = ([], [])
    review: Times = ([], [])
    with TestClient(create_app(location), base_url="http://127.0.0.1") as client:
        client.post("/api/login", json={"name": "alice", "password": PASSWORD})
        for _ in range(3):  # warm: templates compiled, caches filled
            client.get("/")
            client.get("/review", params={"server_id": "weather", "tool": "get_weather"})
        for _ in range(20):
            start, cpu = time.perf_counter(), time.process_time()
            answer = client.get("/")
            queue[0].append(time.process_time() - cpu)
            queue[1].append(time.perf_counter() - start)
            assert answer.status_code == 200 and answer.text.count("tool_0") >= 1000
            start, cpu = time.perf_counter(), time.process_time()
            answer = client.get("/review", params={"server_id": "weather", "tool": "get_weather"})
            review[0].append(time.process_time() - cpu)
            review[1].append(time.perf_counter() - start)
            assert answer.status_code == 200 and len(answer.text) > 200_000
    return queue, review


def decision_latency(folder: Path, count: int = 20) -> list[float]:
    from conduit_mcp.guard import Guard
    from tests.guard.scripted import scripted_session
    from tests.guard.test_pin_feed import listing

    location = str(folder / "feed.db")
    raws = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(count)]
    with PinStore(location) as store:
        store.add_account("alice", role="approver", password=PASSWORD)
    samples: list[float] = []

    async def main(url: str) -> None:
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

        def post(path: str, body: Any, headers: dict[str, str]) -> Any:
            request = urllib.request.Request(
                url + path,
                data=json.dumps(body).encode(),
                headers={"content-type": "application/json", **headers},
            )
            with opener.open(request, timeout=30) as answer:
                return json.loads(answer.read())

        csrf = post("/api/login", {"name": "alice", "password": PASSWORD}, {})["csrf"]
        with PinStore(location) as store:
            guard = Guard("s", pins=store)
            try:
                async with scripted_session(guard, listing(*raws)) as (session, _):
                    await session.list_tools()
                    for raw in raws:
                        name = str(raw["name"])
                        assert guard.tool_status(name) == "held"
                        body = {
                            "server_id": "s",
                            "tool": name,
                            "fingerprint": guard.pending_fingerprint(name),
                            "action": "approve",
                        }
                        start = time.perf_counter()
                        await anyio.to_thread.run_sync(
                            lambda b=body: post("/api/decisions", b, {"x-csrf-token": csrf})
                        )
                        while guard.tool_status(name) != "ok":
                            await anyio.sleep(0.001)
                            if time.perf_counter() - start > 10:
                                raise AssertionError(f"{name}: not seen within 10 s")
                        samples.append(time.perf_counter() - start)
            finally:
                guard.close()

    with console_process(location) as url:
        anyio.run(main, url)
    return samples


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="conduit-bench-console-") as folder:
        print(_load())
        queue, review = page_times(Path(folder))
        print(f"queue page, 1,000 pending tools: CPU {_ms(queue[0])}; wall {_ms(queue[1])}")
        print(f"review page, 200 KB description: CPU {_ms(review[0])}; wall {_ms(review[1])}")
        latency = decision_latency(Path(folder))
        print(f"console decision seen by a running guard: {_ms(latency)} (target 1 s)")
        print(_load())
        ok = (
            statistics.median(queue[0]) <= 0.3
            and statistics.median(review[0]) <= 0.2
            and max(latency) <= 1.0
        )
        print("all within their targets" if ok else "SOME FIGURE MISSED ITS TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
