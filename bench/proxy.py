"""Proxy overhead: a `tools/call` round trip through `conduit-mcp proxy` (stdio) against the
same round trip straight to the server.

A side row of `make bench` (bench/run.py calls `rows(quick)` and adds what it returns to
results.json under `side_rows`; `python bench/run.py --no-proxy` leaves it out); also runs
alone:

- row P1, stdio proxy: `mcp.ClientSession` over stdio to the raw JSON-RPC echo server of
  bench/guard.py (`python bench/guard.py --serve`), once directly and once through
  `conduit-mcp proxy --server-id bench -- python bench/guard.py --serve` (the guard with its
  defaults: arguments checked, the result parsed). Both sessions open at once, batches of calls
  alternating between them (order flipped every batch), so load on a shared machine hits both
  alike; wall time (the round trip a caller waits for); the ratio is the median of the
  per-batch proxied/direct ratios. Target: <= 1.25x.
  On a loaded machine the wall ratio mostly measures scheduling (a third process must be woken
  twice per round trip), so the row also gives the CPU time each process spent per round trip
  during the timed batches (Linux: the sum over the process's threads of
  `/proc/PID/task/TID/schedstat`, nanoseconds on the CPU; start-up and shutdown excluded):
  `proxy_cpu_us_per_call` is the proxy's own (the server behind it counted apart), the median
  over batches. Elsewhere, the CPU of finished child processes (`RUSAGE_CHILDREN`) for a
  session of N calls minus that of a session of none.

- row P2: one `tools/call` result of 50 MB (5 MB with `--quick`) through the proxy, its peak
  RSS before and after (`VmHWM`); target (conduit-defined, "a small multiple"): <= 6 bytes of
  growth per result byte.

Usage:
    python bench/proxy.py                  # P1 (9 batches of 200 calls) and P2
    python bench/proxy.py --quick          # 3 batches of 20, a 5 MB result (smoke)
    python bench/proxy.py --large 50000000 # P2 alone
    python bench/proxy.py --bare threads   # P1 with a bare relay, no guard (or asyncio): the floor
    python bench/proxy.py --bare unguarded # P1 with the proxy's relay and parse, no guard
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "bench" / "guard.py"), "--serve"]
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
PROXIED = [str(CONDUIT), "proxy", "--server-id", "bench", "--quiet", "--", *SERVER]
TARGET = 1.25
PROC = Path("/proc")


@asynccontextmanager
async def _session(argv: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            yield session


async def _batch(session: ClientSession, calls: int) -> float:
    """µs per call over `calls` sequential round trips (wall time)."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        await session.call_tool("echo", {"message": "hello"})
    return (time.perf_counter_ns() - start) / calls / 1000


def _children(pid: int) -> set[int]:
    """The live child processes of `pid` (Linux /proc; empty elsewhere)."""
    found = set()
    for entry in PROC.glob("[0-9]*") if PROC.is_dir() else ():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _cpu_ns(pid: int) -> int:
    """Nanoseconds `pid` has spent on a CPU so far, over all its threads."""
    total = 0
    for task in (PROC / str(pid) / "task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total


async def run(batches: int, calls: int) -> dict[str, Any]:
    direct_us: list[float] = []
    proxied_us: list[float] = []
    cpu: dict[str, list[float]] = {"direct_server": [], "proxy": [], "proxied_server": []}
    me = os.getpid()
    async with AsyncExitStack() as stack:
        before = _children(me)
        direct = await stack.enter_async_context(_session(SERVER))
        direct_pids = _children(me) - before
        proxied = await stack.enter_async_context(_session(PROXIED))
        proxy_pids = _children(me) - before - direct_pids
        pids = {
            "direct_server": direct_pids,
            "proxy": proxy_pids,
            "proxied_server": {c for p in proxy_pids for c in _children(p)},
        }
        measured = all(len(p) == 1 for p in pids.values())
        for session in (direct, proxied):
            await _batch(session, max(calls // 4, 5))  # warm up
        gc.collect()
        gc.disable()
        try:
            for index in range(batches):
                pair = [
                    (direct, direct_us, ("direct_server",)),
                    (proxied, proxied_us, ("proxy", "proxied_server")),
                ]
                for session, into, keys in pair if index % 2 == 0 else pair[::-1]:
                    start = {k: _cpu_ns(next(iter(pids[k]))) for k in keys} if measured else {}
                    into.append(await _batch(session, calls))
                    for k in start:
                        cpu[k].append((_cpu_ns(next(iter(pids[k]))) - start[k]) / calls / 1000)
        finally:
            gc.enable()
    ratios = [p / d for d, p in zip(direct_us, proxied_us, strict=True)]
    ratio = statistics.median(ratios)
    row: dict[str, Any] = {
        "row": "P1 stdio proxy tools/call round trip (echo)",
        "id": "P1-stdio-proxy",
        "direct_us_median": round(statistics.median(direct_us), 1),
        "proxied_us_median": round(statistics.median(proxied_us), 1),
        "ratio_median": round(ratio, 3),
        "target": TARGET,
        "met": ratio <= TARGET,
        "batches": batches,
        "calls_per_batch": calls,
    }
    if measured:
        row["cpu_method"] = "schedstat during the timed batches"
        row["server_cpu_us_per_call"] = round(statistics.median(cpu["direct_server"]), 1)
        row["proxied_server_cpu_us_per_call"] = round(statistics.median(cpu["proxied_server"]), 1)
        row["proxy_cpu_us_per_call"] = round(statistics.median(cpu["proxy"]), 1)
    return row


async def _children_cpu(argv: list[str], calls: int) -> float:
    """CPU seconds used by finished child processes over one session of `calls` calls."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    async with _session(argv) as session:
        for _ in range(calls):
            await session.call_tool("echo", {"message": "hello"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


async def cpu_per_call(calls: int) -> dict[str, Any]:
    """The proxy's and the server's CPU µs per round trip where /proc is missing: sessions of
    `calls` calls minus sessions of none (start-up and shutdown), the server's share taken
    from a direct session."""
    server = (await _children_cpu(SERVER, calls) - await _children_cpu(SERVER, 0)) / calls
    both = (await _children_cpu(PROXIED, calls) - await _children_cpu(PROXIED, 0)) / calls
    return {
        "cpu_method": "RUSAGE_CHILDREN, sessions of N calls minus sessions of none",
        "server_cpu_us_per_call": round(server * 1e6, 1),
        "proxy_cpu_us_per_call": round((both - server) * 1e6, 1),
    }


def serve_large(size: int) -> None:
    """The server of row P2: raw JSON-RPC on stdio; `tools/call` of `large` answers a text
    content block of `size` bytes (one line of about that length)."""
    tool = {"name": "large", "inputSchema": {"type": "object"}}
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "bench-large", "version": "0"},
    }
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method = message["method"]
        if method == "initialize":
            result: dict[str, Any] = init
        elif method == "tools/list":
            result = {"tools": [tool]}
        else:
            result = {"content": [{"type": "text", "text": "x" * size}]}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


def _peak_rss_kib(pid: int) -> int:
    """The peak resident set size of `pid` so far (`VmHWM`, KiB)."""
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise LookupError("no VmHWM")


def large_result(size: int) -> dict[str, Any]:
    """Row P2: the proxy relays one `tools/call` result of `size` bytes; its peak RSS before
    and after (Linux `VmHWM`). Target: memory bounded by a small multiple of the result."""
    import subprocess

    server = [sys.executable, str(Path(__file__).resolve()), "--serve-large", str(size)]
    argv = [str(CONDUIT), "proxy", "--server-id", "bench", "--quiet", "--", *server]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None

        def ask(message: dict[str, Any]) -> bytes:
            proxy.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
            proxy.stdin.flush()  # type: ignore[union-attr]
            return proxy.stdout.readline()  # type: ignore[union-attr]

        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init["clientInfo"] = {"name": "bench", "version": "0"}
        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        before = _peak_rss_kib(proxy.pid)
        started = time.perf_counter()
        call = {"name": "large", "arguments": {}}
        line = ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        seconds = time.perf_counter() - started
        after = _peak_rss_kib(proxy.pid)
        text = json.loads(line)["result"]["content"][0]["text"]
        proxy.stdin.close()
        proxy.wait(timeout=30)
    growth = (after - before) * 1024 / len(line)
    return {
        "row": "P2 stdio proxy relays a large tools/call result",
        "id": "P2-stdio-proxy-large-result",
        "result_bytes": len(line),
        "relayed_whole": len(text) == size,
        "peak_rss_mib_before": round(before / 1024, 1),
        "peak_rss_mib_after": round(after / 1024, 1),
        "growth_per_result_byte": round(growth, 2),
        "seconds": round(seconds, 2),
        "target": "growth <= 6 bytes per result byte",
        "met": len(text) == size and growth <= 6,
    }


def pipelined_cpu(calls: int) -> float:
    """The proxy's own CPU µs per `tools/call` round trip when `calls` requests are written at
    once (Linux schedstat): its work per message, without the cost of being woken for each
    one, which on a loaded machine dominates the sequential figure."""
    import subprocess
    import threading

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    with subprocess.Popen(PROXIED, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init["clientInfo"] = {"name": "bench", "version": "0"}
        proxy.stdin.write(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        proxy.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proxy.stdin.write(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        proxy.stdin.flush()
        proxy.stdout.readline()
        proxy.stdout.readline()
        params = {"name": "echo", "arguments": {"message": "hello"}}
        requests = b"".join(
            line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
            for i in range(2, calls + 2)
        )

        def write() -> None:
            proxy.stdin.write(requests)  # type: ignore[union-attr]
            proxy.stdin.flush()  # type: ignore[union-attr]

        start = _cpu_ns(proxy.pid)
        writer = threading.Thread(target=write)
        writer.start()
        for _ in range(calls):
            proxy.stdout.readline()
        used = _cpu_ns(proxy.pid) - start
        writer.join()
        proxy.stdin.close()
        proxy.wait(timeout=30)
    return used / calls / 1000


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """The rows of this script, for `make bench` (bench/run.py): each a JSON object with
    `id`, `row` (its title), `target`, `met` and its figures.

    Args:
        quick: 3 batches of 20 calls (smoke) instead of 9 of 200.
    """
    batches, calls = (3, 20) if quick else (9, 200)
    row = anyio.run(run, batches, calls)
    if "proxy_cpu_us_per_call" not in row:
        row.update(anyio.run(cpu_per_call, batches * calls))
    if PROC.is_dir():
        row["proxy_cpu_us_per_call_pipelined"] = round(pipelined_cpu(batches * calls), 1)
    row["load_average_1m"] = round(os.getloadavg()[0], 2)
    found = [row]
    if PROC.is_dir():
        found.append(large_result(5_000_000 if quick else 50_000_000))
    return found


def bare_relay(kind: str, command: list[str]) -> int:
    """A line relay with no guard and no parsing, in place of the proxy (`--bare KIND`): the
    floor of a relay built on asyncio pipes (`asyncio`) or on two blocking threads
    (`threads`); or (`unguarded`) the proxy's own stdio relay (`Relay`: its framing, its one
    parse of each line, `read_message`, its batches and outlets) with a link that passes every
    message, i.e. the proxy with the guard taken out, a mode the proxy itself does not have.
    Returns the server's exit code."""
    import asyncio
    import subprocess
    import threading

    if kind == "unguarded":
        from conduit_mcp.proxy.stdio._framing import BlockingLineReader
        from conduit_mcp.proxy.stdio._relay import ChunkReader, Outlet, Relay

        class PassEverything:
            """What `Relay` asks of a `MessageLink`, every message passed as read."""

            def from_client_now(self, message: dict[str, Any]) -> tuple[str, None]:
                return ("pass", None)

            def from_server_now(self, message: dict[str, Any]) -> tuple[str, None]:
                return ("pass", None)

        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert server.stdin is not None and server.stdout is not None
        to_server = Outlet(server.stdin.fileno(), owned=False)
        # The loop is never run: no decision of `PassEverything` waits.
        link: Any = PassEverything()
        relay = Relay(link, Outlet(1, owned=False), to_server, asyncio.new_event_loop())

        def chunks(fd: int) -> Any:
            # The bound `read` as the proxy hands it; an older tree (`--before`) has only the
            # callable instance.
            reader = ChunkReader(fd)
            return getattr(reader, "read", reader)

        def up() -> None:
            relay.client_to_server(BlockingLineReader(chunks(0), keep_newline=True))
            server.stdin.close()  # type: ignore[union-attr]  # the client is done: so is the server

        threading.Thread(target=up, daemon=True).start()
        relay.server_to_client(
            BlockingLineReader(chunks(server.stdout.fileno()), keep_newline=True)
        )
        return server.wait()

    if kind == "threads":
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert server.stdin is not None and server.stdout is not None

        def pump(source: int, sink: int) -> None:
            # One buffer a thread, as the proxy's ChunkReader: `os.read(fd, 256 KiB)` would
            # allocate past glibc's mmap threshold on every read (an mmap, an mremap and a
            # munmap per message), a cost no relay needs to pay, so no part of the floor.
            buffer = bytearray(262144)
            whole = memoryview(buffer)
            while size := os.readv(source, [buffer]):
                view = whole[:size]
                while view:
                    view = view[os.write(sink, view) :]

        def upward() -> None:
            pump(0, server.stdin.fileno())  # type: ignore[union-attr]
            server.stdin.close()  # type: ignore[union-attr]  # the client is done: so is the server

        threading.Thread(target=upward, daemon=True).start()
        pump(server.stdout.fileno(), 1)
        return server.wait()

    async def relay() -> int:
        loop = asyncio.get_running_loop()
        server = await asyncio.create_subprocess_exec(
            *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert server.stdin is not None and server.stdout is not None
        reader = asyncio.StreamReader(limit=2**20)
        stdin = os.fdopen(0, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        stdout = os.fdopen(1, "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)

        async def up() -> None:
            while line := await reader.readline():
                server.stdin.write(line)  # type: ignore[union-attr]
                await server.stdin.drain()  # type: ignore[union-attr]
            server.stdin.close()  # type: ignore[union-attr]

        task = asyncio.ensure_future(up())
        while line := await server.stdout.readline():
            writer.write(line)
            await writer.drain()
        task.cancel()
        return await server.wait()

    return asyncio.run(relay())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 batches of 20 calls (smoke)")
    parser.add_argument("--serve-large", type=int, metavar="BYTES", help="row P2's server")
    parser.add_argument("--large", type=int, metavar="BYTES", help="only row P2, this size")
    parser.add_argument(
        "--bare",
        choices=["asyncio", "threads", "unguarded"],
        help=(
            "row P1 with a bare line relay (no guard) in place of the proxy: the floor "
            "(unguarded: the proxy's own relay and parse, every message passed)"
        ),
    )
    parser.add_argument(
        "--relay", choices=["asyncio", "threads", "unguarded"], help=argparse.SUPPRESS
    )
    parser.add_argument("command", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.relay is not None:  # the bare relay's own process
        return bare_relay(args.relay, args.command)
    if args.bare is not None:
        global PROXIED
        PROXIED = [sys.executable, str(Path(__file__).resolve()), "--relay", args.bare, "--"]
        PROXIED += SERVER
        print(json.dumps({**rows(args.quick)[0], "proxy": f"bare relay ({args.bare})"}))
        return 0
    if args.serve_large is not None:
        serve_large(args.serve_large)
        return 0
    if args.large is not None:
        print(json.dumps(large_result(args.large)))
        return 0
    for row in rows(args.quick):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
