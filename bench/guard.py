"""Guard overhead (issue 9): what `conduit_mcp.guard` adds to the official SDK's client.

Not part of `make bench`'s results.json (a separate script, so its rows merge cleanly):

- row G1, `tools/call` round trip: `mcp.ClientSession` over in-memory streams to an in-process
  echo server, with and without the guard, in the same process, interleaved round by round.
  Two tools: `echo` (no outputSchema: argument check + result parse) and `weather` (an
  outputSchema: + structured-output validation in a worker thread). Target: <= 10 % overhead.
- row G2, `tools/list` page of 100 corpus tools (bench/workload.py): the guard's own work per
  page (intake, the SDK-model check, pins in one worker-thread hop), in µs per tool.
  Target: <= 30 µs per tool. Also the end-to-end `list_tools()` with and without the guard.

Usage:
    python bench/guard.py            # 9 rounds
    python bench/guard.py --quick    # 2 rounds, small counts (smoke)
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402
from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse  # noqa: E402

from bench import workload  # noqa: E402
from conduit_mcp.guard import Guard  # noqa: E402
from conduit_mcp.guard._streams import Connection, _Pending  # noqa: E402

ECHO = {
    "name": "echo",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}
WEATHER = {
    "name": "weather",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "outputSchema": {
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
        "required": ["temperature", "conditions"],
    },
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench", "version": "0"},
}


def _answer(method: str, params: dict[str, Any], page: list[Any]) -> dict[str, Any]:
    if method == "initialize":
        return INIT
    if method == "tools/list":
        return {"tools": page}
    if params.get("name") == "weather":
        data = {"temperature": 21.5, "conditions": "clear"}
        return {"content": [{"type": "text", "text": "21.5"}], "structuredContent": data}
    return {"content": [{"type": "text", "text": params.get("arguments", {}).get("message", "")}]}


async def _session(
    guard: Guard | None, page: list[Any], body: Callable[[ClientSession], Awaitable[float]]
) -> float:
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](8)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](8)

    async def serve() -> None:
        async for item in to_server_recv:
            message = item.message
            if isinstance(message, JSONRPCRequest):
                result = _answer(message.method, message.params or {}, page)
                await to_client_send.send(
                    SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result))
                )

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        read: Any = to_client_recv
        write: Any = to_server_send
        if guard is not None:
            read, write = guard.wrap_streams(read, write)
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            elapsed = await body(session)
        tg.cancel_scope.cancel()
    for stream in (to_client_send, to_client_recv, to_server_send, to_server_recv):
        stream.close()
    return elapsed


def _calls(
    name: str, arguments: dict[str, Any], n: int
) -> Callable[[ClientSession], Awaitable[float]]:
    async def body(session: ClientSession) -> float:
        for _ in range(20):  # warm caches (compiled validators, pydantic)
            await session.call_tool(name, arguments)
        gc.collect()
        gc.disable()
        try:
            start = _clock()
            for _ in range(n):
                await session.call_tool(name, arguments)
            return (_clock() - start) / n / 1000
        finally:
            gc.enable()

    return body


def _lists(n: int) -> Callable[[ClientSession], Awaitable[float]]:
    async def body(session: ClientSession) -> float:
        gc.collect()
        gc.disable()
        try:
            start = _clock()
            for _ in range(n):
                await session.list_tools()
            return (_clock() - start) / n / 1000
        finally:
            gc.enable()

    return body


async def _guard_page_cost(page: list[Any], n: int) -> float:
    """µs per tool of the guard's own work on one page (no SDK parsing, no transport)."""
    guard = Guard("bench")
    connection = Connection(guard, "stdio")
    connection.version = "2025-11-25"
    message = JSONRPCResponse(jsonrpc="2.0", id=1, result={"tools": page})
    item = SessionMessage(message)
    for _ in range(3):  # first listing pins; later ones compare
        await connection._on_list(item, message, _Pending("tools/list", None, None, False))
    gc.collect()
    gc.disable()
    try:
        start = _clock()
        for _ in range(n):
            connection.listing = set()
            await connection._on_list(item, message, _Pending("tools/list", None, None, False))
        return (_clock() - start) / n / len(page) / 1000
    finally:
        gc.enable()


#: CPU time of this thread (default): far less disturbed by other processes on a shared machine
#: than wall time; the guard's inline checks run on this thread. `--wall` switches.
_clock: Callable[[], int] = time.thread_time_ns


async def _guard_call_cost(n: int) -> float:
    """µs of the guard's own work per tools/call round trip (gate + result checks), no SDK."""
    from conduit_mcp.client import Tool

    guard = Guard("bench")
    connection = Connection(guard, "stdio")
    connection.version = "2025-11-25"
    from conduit_mcp.guard._guard import ToolState

    guard._tools["echo"] = ToolState("ok", Tool.from_wire("bench", ECHO, fingerprint=None))
    from conduit_mcp.client import fingerprint

    guard._tools["echo"].tool = Tool.from_wire("bench", ECHO, fingerprint=fingerprint(ECHO))
    request = JSONRPCRequest(
        jsonrpc="2.0",
        id=1,
        method="tools/call",
        params={"name": "echo", "arguments": {"message": "hi"}},
    )
    result = _answer("tools/call", {"name": "echo", "arguments": {"message": "hi"}}, [])
    item = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result=result))
    for _ in range(50):
        await connection.outbound(request)
        await connection.inbound(item)
    gc.collect()
    gc.disable()
    try:
        start = _clock()
        for _ in range(n):
            await connection.outbound(request)
            await connection.inbound(item)
        return (_clock() - start) / n / 1000
    finally:
        gc.enable()


def _row(label: str, plain: list[float], guarded: list[float], unit: str = "µs/call") -> str:
    a, b = statistics.median(plain), statistics.median(guarded)
    return (
        f"{label:<44} sdk {a:8.1f}  guarded {b:8.1f} {unit}  "
        f"overhead {b - a:+7.1f} ({(b / a - 1) * 100:+5.1f} %)"
    )


async def main(rounds: int, calls: int, lists: int) -> list[str]:
    page = [ECHO, WEATHER]
    corpus_page = workload.tools(100)
    figures: dict[str, tuple[list[float], list[float]]] = {
        "G1 tools/call echo (no outputSchema)": ([], []),
        "G1 tools/call weather (outputSchema)": ([], []),
        "G2 list_tools, page of 100 corpus tools": ([], []),
    }
    own: list[float] = []
    own_call: list[float] = []
    for r in range(rounds):
        order = [None, "guard"] if r % 2 == 0 else ["guard", None]
        for which in order:
            index = 0 if which is None else 1
            for label, page_, body in (
                (
                    "G1 tools/call echo (no outputSchema)",
                    page,
                    _calls("echo", {"message": "hi"}, calls),
                ),
                (
                    "G1 tools/call weather (outputSchema)",
                    page,
                    _calls("weather", {"city": "Oslo"}, calls),
                ),
                ("G2 list_tools, page of 100 corpus tools", corpus_page, _lists(lists)),
            ):
                guard = Guard("bench") if which else None
                figures[label][index].append(await _session(guard, page_, body))
        own.append(await _guard_page_cost(corpus_page, lists))
        own_call.append(await _guard_call_cost(calls))
    lines = [
        _row(label, plain, guarded, "µs/page" if label.startswith("G2") else "µs/call")
        for label, (plain, guarded) in figures.items()
    ]
    lines.append(
        f"{'G1 guard work per tools/call (echo)':<44} median {statistics.median(own_call):6.1f} "
        f"µs/call  min {min(own_call):6.1f}"
    )
    lines.append(
        f"{'G2 guard work per tool (page of 100)':<44} median {statistics.median(own):6.1f} µs/tool"
        f"  min {min(own):6.1f}"
    )
    lines.append(f"clock: {'wall' if _clock is time.perf_counter_ns else 'CPU (thread_time_ns)'}")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    args = parser.parse_args()
    if args.wall:
        _clock = time.perf_counter_ns
    rounds, calls, lists = (2, 20, 3) if args.quick else (args.rounds, 300, 30)
    for line in anyio.run(main, rounds, calls, lists):
        print(line)
