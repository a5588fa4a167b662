"""Run in a subprocess by test_guard_memory.py: one guard memory scenario, through the official
SDK's `ClientSession` on in-memory streams, with or without the guard; prints JSON figures.

    python tests/limits/guard_memory.py renames guard    # or: bare
    python tests/limits/guard_memory.py rewrite guard
    python tests/limits/guard_memory.py renames guard --scale 0.25

Scenarios (a hostile server's habits, from the guard's memory review):
  renames  2,000 tools, every one renamed on every listing, 25 listings (each listing's tools
           are all new: pinned, then gone from the next complete listing).
  rewrite  one tool whose 20 MB description is rewritten on every listing, 10 listings (a
           changed definition each time: blocked, with a field-level change event).

The guard runs with `max_tools` 10,000 (its default; scaled with `--scale`).

Figures: `peak_rss_mb` (VmHWM), `rss_mb` after the last listing and a collection,
`rss_mb_per_listing`, `listing_cpu_s` per listing (CPU time of this thread),
`listing_wall_s`, `audit_rows` read from the pin store's audit log per listing (guard only),
`events` kept; counted (guard only): `pins_kept` (the private store's pins), `held_past_limit`
(tools held past `max_tools`), `lookalike_keys`, `names_known`.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse

from conduit_mcp.guard import Guard

#: The review's sizes; `--scale F` multiplies the tools, bytes and rewrites, never the number
#: of renaming listings (`make test` runs 0.25).
RENAMED_TOOLS = 2_000
RENAME_LISTINGS = 25
REWRITE_BYTES = 20_000_000
REWRITE_LISTINGS = 10
#: The guard's `max_tools` (its default, 10,000, at full scale): the renames reach it at the
#: fifth listing whatever the scale.
MAX_TOOLS = 10_000


def scale(factor: float) -> None:
    global RENAMED_TOOLS, REWRITE_BYTES, REWRITE_LISTINGS, MAX_TOOLS
    RENAMED_TOOLS = max(1, round(RENAMED_TOOLS * factor))
    REWRITE_BYTES = max(1, round(REWRITE_BYTES * factor))
    REWRITE_LISTINGS = max(5, round(REWRITE_LISTINGS * factor))
    MAX_TOOLS = max(1, round(MAX_TOOLS * factor))


def renamed_page(listing: int) -> dict[str, Any]:
    return {
        "tools": [
            {
                "name": f"tool_{listing}_{i}",
                "description": f"Tool {i} of listing {listing}: does one small thing well.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                    "required": ["q"],
                },
            }
            for i in range(RENAMED_TOOLS)
        ]
    }


def rewritten_page(listing: int) -> dict[str, Any]:
    letter = "abcdefghijklmnopqrstuvwxyz"[listing % 26]
    return {
        "tools": [
            {
                "name": "big",
                "description": letter * REWRITE_BYTES,
                "inputSchema": {"type": "object"},
            }
        ]
    }


def _kib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


async def run(scenario: str, mode: str) -> dict[str, Any]:
    page_of = renamed_page if scenario == "renames" else rewritten_page
    listings = RENAME_LISTINGS if scenario == "renames" else REWRITE_LISTINGS
    held_past_limit = [0]

    def count(event: Any) -> None:
        if event.reason == "too_many_tools":
            held_past_limit[0] += 1

    guard = Guard("memory", max_tools=MAX_TOOLS, on_event=count) if mode == "guard" else None
    audit_rows: list[int] = []
    if guard is not None:
        store = guard.pins
        real_audit = store.audit_log

        def counted(*args: Any, **kwargs: Any) -> Any:
            rows = real_audit(*args, **kwargs)
            audit_rows[-1] += len(rows)
            return rows

        store.audit_log = counted  # type: ignore[method-assign]
    served = [0]
    cpu: list[float] = []
    rss: list[float] = []
    wall: list[float] = []
    to_client_send, read = anyio.create_memory_object_stream[Any](4)
    write, to_server_recv = anyio.create_memory_object_stream[Any](4)

    async def serve() -> None:
        async for item in to_server_recv:
            message = item.message
            if not isinstance(message, JSONRPCRequest):
                continue
            if message.method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "memory", "version": "0"},
                }
            else:
                result = page_of(served[0])
                served[0] += 1
            response = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
            await to_client_send.send(SessionMessage(response))

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        pair: tuple[Any, Any] = (read, write)
        if guard is not None:
            pair = guard.wrap_streams(read, write)
        async with ClientSession(*pair) as session:
            await session.initialize()
            for _ in range(listings):
                audit_rows.append(0)
                start, wall_start = time.thread_time(), time.perf_counter()
                await session.list_tools()
                cpu.append(round(time.thread_time() - start, 4))
                wall.append(round(time.perf_counter() - wall_start, 4))
                rss.append(round(_kib("VmRSS"), 1))
        tg.cancel_scope.cancel()
    gc.collect()
    return {
        "tools": RENAMED_TOOLS if scenario == "renames" else 1,
        "tool_bytes": REWRITE_BYTES if scenario == "rewrite" else 0,
        "scenario": scenario,
        "mode": mode,
        "peak_rss_mb": round(_kib("VmHWM"), 1),
        "rss_mb": round(_kib("VmRSS"), 1),
        "listing_cpu_s": cpu,
        "listing_wall_s": wall,
        "rss_mb_per_listing": rss,
        "audit_rows": audit_rows if guard is not None else [],
        "events": len(guard.events) if guard is not None else 0,
        # What the guard keeps per server, counted: its private store's pins, the tools held
        # past `max_tools`, its look-alike index, the names it knows now.
        "max_tools": MAX_TOOLS if guard is not None else 0,
        "pins_kept": len(guard.pins.pinned("memory")) if guard is not None else 0,
        "held_past_limit": held_past_limit[0],
        "lookalike_keys": len(guard._shared.book.lookalike_index) if guard is not None else 0,
        "names_known": len(guard._shared.book.tools) if guard is not None else 0,
        "event_bytes": (sum(len(repr(e)) for e in guard.events) if guard is not None else 0),
    }


def main() -> None:
    scenario, mode = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 4 and sys.argv[3] == "--scale":
        scale(float(sys.argv[4]))
    print(json.dumps(anyio.run(run, scenario, mode)))


if __name__ == "__main__":
    main()
