"""Guard overhead (issue 9): what `conduit_mcp.guard` adds to the official SDK's client.

Not part of `make bench`'s results.json (a separate script, so its rows merge cleanly):

- row G1, `tools/call` round trip: `mcp.ClientSession` with and without the guard, both
  sessions open at once, batches of calls alternating between them (so load on a shared
  machine hits both alike); the ratio is the median of the per-batch guarded/plain ratios.
  In memory (an in-process server, CPU time of this thread): `echo` (no outputSchema:
  argument check + result parse) and `weather` (an outputSchema: + structured-output
  validation, inline for its linear schema). Over stdio (a raw JSON-RPC echo server in a
  subprocess, `python bench/guard.py --serve`; wall time, the round trip a caller waits for):
  `echo`. Target: <= 10 % overhead.
- row G2, `tools/list` page of 100 corpus tools (bench/workload.py): the guard's own work per
  page (intake, the SDK-model check, pins), in µs per tool, for a re-listing of the same page
  (its intake reused: the page is byte-for-byte the JSON seen before), the same parsed afresh
  for each re-listing (as a transport hands it over: no identity shortcut), and for a page
  the connection has not seen (full intake). Target: <= 30 µs per tool. Also the end-to-end
  `list_tools()` with and without the guard (paired batches, re-listings).

Usage:
    python bench/guard.py            # 9 rounds
    python bench/guard.py --quick    # 2 rounds, small counts (smoke)
    python bench/guard.py --serve    # the stdio echo server of row G1 (used by the bench)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

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


def serve_stdio() -> None:
    """The stdio echo server of row G1: raw JSON-RPC, one message per line, `_answer`."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:
            result = _answer(message["method"], message.get("params") or {}, [ECHO, WEATHER])
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve_stdio()  # before the imports below: the server starts in milliseconds
    sys.exit(0)

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402
from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse  # noqa: E402

from bench import workload  # noqa: E402
from conduit_mcp.guard import Guard  # noqa: E402
from conduit_mcp.guard._engine import Engine  # noqa: E402
from conduit_mcp.guard._state import PageCache, Pending  # noqa: E402


@asynccontextmanager
async def _open(guard: Guard | None, page: list[Any], stdio: bool) -> AsyncIterator[ClientSession]:
    """An initialized session that has listed tools: in memory (an in-process server serving
    `page`) or over stdio (`serve_stdio` in a subprocess)."""
    async with AsyncExitStack() as stack:
        if stdio:
            params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve"])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tg.cancel_scope.cancel)
            to_client_send, read = anyio.create_memory_object_stream[Any](8)
            write, to_server_recv = anyio.create_memory_object_stream[Any](8)
            for stream in (to_client_send, read, write, to_server_recv):
                stack.callback(stream.close)

            async def serve() -> None:
                async for item in to_server_recv:
                    message = item.message
                    if isinstance(message, JSONRPCRequest):
                        result = _answer(message.method, message.params or {}, page)
                        response = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
                        await to_client_send.send(SessionMessage(response))

            tg.start_soon(serve)
        if guard is not None:
            read, write = guard.wrap_streams(read, write)
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        await session.list_tools()
        yield session


async def _paired(
    page: list[Any],
    batch: Callable[[ClientSession], Awaitable[None]],
    batches: int,
    per_batch: int,
    *,
    stdio: bool = False,
) -> tuple[list[float], list[float], list[float]]:
    """Per-batch µs per operation without and with the guard, and their per-batch ratios.

    Both sessions stay open; batches alternate plain/guarded (order flipped every batch), so
    a burst of load on a shared machine lands on both. Wall time over stdio (the server is
    another process), else CPU time of this thread (`_clock`).
    """
    clock = time.perf_counter_ns if stdio else _clock
    plain_us: list[float] = []
    guarded_us: list[float] = []
    async with _open(None, page, stdio) as plain, _open(Guard("bench"), page, stdio) as guarded:
        for session in (plain, guarded):
            for _ in range(3):  # warm caches (compiled validators, pydantic)
                await batch(session)
        gc.collect()
        gc.disable()
        try:
            for index in range(batches):
                pair = [(plain, plain_us), (guarded, guarded_us)]
                for session, into in pair if index % 2 == 0 else pair[::-1]:
                    start = clock()
                    for _ in range(per_batch):
                        await batch(session)
                    into.append((clock() - start) / per_batch / 1000)
        finally:
            gc.enable()
    ratios = [g / p for p, g in zip(plain_us, guarded_us, strict=True)]
    return plain_us, guarded_us, ratios


def _call(name: str, arguments: dict[str, Any]) -> Callable[[ClientSession], Awaitable[None]]:
    async def batch(session: ClientSession) -> None:
        await session.call_tool(name, arguments)

    return batch


async def _list(session: ClientSession) -> None:
    await session.list_tools()


async def _guard_page_cost(
    page: list[Any], n: int, *, first_sight: bool = False, fresh: bool = False
) -> float:
    """µs per tool of the guard's own work on one page (no SDK parsing, no transport): a
    re-listing of the same page object, or (`fresh`) of an equal page parsed afresh each
    time, as a transport hands it over, or (`first_sight`) a page whose JSON the connection
    has not seen (its intake is not reused), all against pins already taken."""
    guard = Guard("bench")
    connection = Engine(guard._shared, "stdio")
    connection.version = "2025-11-25"
    result = {"tools": page}
    for _ in range(3):  # first listing pins; later ones compare
        await connection._on_list(1, result, Pending("tools/list"))
    data = json.dumps(result)
    results = [json.loads(data) if fresh else result for _ in range(n)]
    gc.collect()
    gc.disable()
    try:
        start = _clock()
        for listed in results:
            connection.listing = set()
            if first_sight:
                connection._pages = PageCache()
            await connection._on_list(1, listed, Pending("tools/list"))
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
    connection = Engine(guard._shared, "stdio")
    connection.version = "2025-11-25"
    from conduit_mcp.guard._state import ToolState

    guard._tools["echo"] = ToolState("ok", Tool.from_wire("bench", ECHO, fingerprint=None))
    from conduit_mcp.client import fingerprint

    guard._tools["echo"].tool = Tool.from_wire("bench", ECHO, fingerprint=fingerprint(ECHO))
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}},
    }
    result = _answer("tools/call", {"name": "echo", "arguments": {"message": "hi"}}, [])
    item = {"jsonrpc": "2.0", "id": 1, "result": result}
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


def _row(
    label: str, figures: tuple[list[float], list[float], list[float]], unit: str = "µs/call"
) -> str:
    plain, guarded, ratios = figures
    a, b = statistics.median(plain), statistics.median(guarded)
    ratio = statistics.median(ratios)
    return (
        f"{label:<44} sdk {a:8.1f}  guarded {b:8.1f} {unit}  "
        f"overhead {(ratio - 1) * 100:+5.1f} % (median of {len(ratios)} paired batches)"
    )


async def main(rounds: int, calls: int, lists: int) -> list[str]:
    """Every row; `rounds` scales the number of paired batches, `calls` / `lists` their size."""
    page = [ECHO, WEATHER]
    corpus_page = workload.tools(100)
    batches = 4 * rounds
    per_call = max(1, calls // 6)
    rows = [
        (
            "G1 tools/call echo (no outputSchema)",
            await _paired(page, _call("echo", {"message": "hi"}), batches, per_call),
            "µs/call",
        ),
        (
            "G1 tools/call weather (outputSchema)",
            await _paired(page, _call("weather", {"city": "Oslo"}), batches, per_call),
            "µs/call",
        ),
        (
            "G2 list_tools, page of 100 corpus tools",
            await _paired(corpus_page, _list, batches, lists),
            "µs/page",
        ),
        (
            "G1 stdio tools/call echo (wall)",
            await _paired(page, _call("echo", {"message": "hi"}), batches, per_call, stdio=True),
            "µs/call",
        ),
    ]
    own = [await _guard_page_cost(corpus_page, lists) for _ in range(rounds)]
    own_fresh = [await _guard_page_cost(corpus_page, lists, fresh=True) for _ in range(rounds)]
    own_first = [
        await _guard_page_cost(corpus_page, lists, first_sight=True) for _ in range(rounds)
    ]
    own_call = [await _guard_call_cost(calls) for _ in range(rounds)]
    lines = [_row(label, figures, unit) for label, figures, unit in rows]
    lines.append(
        f"{'G1 guard work per tools/call (echo)':<44} median {statistics.median(own_call):6.1f} "
        f"µs/call  min {min(own_call):6.1f}"
    )
    for label, figures_ in (
        ("G2 guard work per tool (page of 100)", own),
        ("G2 same, each re-listing parsed afresh", own_fresh),
        ("G2 same, page not seen before", own_first),
    ):
        lines.append(
            f"{label:<44} median {statistics.median(figures_):6.1f} µs/tool"
            f"  min {min(figures_):6.1f}"
        )
    lines.append(
        f"clock: {'wall' if _clock is time.perf_counter_ns else 'CPU (thread_time_ns)'}"
        " in memory, wall over stdio"
    )
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
