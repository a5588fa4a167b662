"""HTTP proxy rows: `conduit-mcp proxy --listen` in front of a Streamable HTTP server
(`--upstream`), against the same requests straight to that server, in one run.

Two upstreams, each measured directly and through the proxy: bench/http_echo.py (a raw ASGI
MCP echo server on uvicorn, orjson, no SDK: as cheap as a server can be, so the ratio shows the
proxy's own cost) and bench/http_sdk_echo.py (the same tools on the official Python SDK's
`MCPServer`, JSON responses: a server as users run them). The load is a raw HTTP/1.1 client on
asyncio streams (keep-alive, one connection per client; no SDK either, so the client is not
what is measured): 2026-07-28 `tools/call` requests of `echo` (each carries its version in
`_meta`, with the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers), answered with
one JSON object. The proxy runs with the guard's defaults (arguments checked against the
listed schema, the result parsed), pins in memory.

- H1, latency: one client, batches of sequential calls alternating between direct and
  proxied (order flipped every batch); p50 of each side over all calls, the ratio of the
  medians. Beside the wall time: CPU µs per call of the proxy and of the server process, and
  the time the proxy waited runnable for a CPU (/proc/PID/schedstat). Target: <= 1.2x.
- H2, throughput: 50 clients at once, each sequential calls for a fixed number of calls,
  rounds alternating direct / proxied; calls per second; the ratio proxied/direct of the
  median round. Target: >= 0.8.
- H3, idle sessions: 1,000 sessions opened through the proxy (2025-11-25 `initialize` and
  `notifications/initialized`: an upstream session each) and left idle; the proxy's resident
  memory (VmRSS) with them open. Target: <= 200 MB.
- H4, a large result: one `tools/call` whose result is a 50 MB text block, through the proxy;
  the proxy's peak resident memory (VmHWM, reset first) above its resident memory before,
  as a multiple of the result's size. Target: <= 4x (a small multiple).

Every row gives the 1-minute load average (the higher of the run's start and end): the machine
may be shared. As in bench/run.py, above 1.5 a reached target is written `met: null`, with
`met_if_quiet`.

Usage:
    python bench/proxy_http.py           # full rows
    python bench/proxy_http.py --quick   # smaller counts (smoke)
    python bench/proxy_http.py --only H1,H2 --upstream sdk   # some rows, one upstream
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, str(ROOT / "bench" / "http_echo.py")]
SDK_ECHO = [sys.executable, str(ROOT / "bench" / "http_sdk_echo.py")]
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
LATENCY_TARGET = 1.2
THROUGHPUT_TARGET = 0.8
IDLE_TARGET_MB = 200.0
LARGE_TARGET = 4.0
LARGE_BYTES = 50 * 1024 * 1024
#: bench/run.py's: above this 1-minute load average a reached target is not claimed.
LOAD_LIMIT = 1.5
ROWS = frozenset({"H1", "H2", "H3", "H4"})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


@contextmanager
def _started(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def servers(
    upstream: list[str] = ECHO, extra: tuple[str, ...] = ()
) -> Iterator[tuple[int, int, int, int]]:
    """An echo server (`upstream`: its command, the port appended) and a proxy in front of
    it (`extra`: more proxy options): (echo port, echo pid, proxy port, proxy pid)."""
    echo_port, proxy_port = _free_port(), _free_port()
    with _started([*upstream, str(echo_port)], echo_port) as echo:
        proxy_argv = [
            str(CONDUIT),
            "proxy",
            "--server-id",
            "bench",
            "--quiet",
            "--listen",
            f"127.0.0.1:{proxy_port}",
            "--upstream",
            f"http://127.0.0.1:{echo_port}/mcp",
            *extra,
        ]
        with _started(proxy_argv, proxy_port) as proxy:
            yield echo_port, echo.pid, proxy_port, proxy.pid


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_queue_wait(pid: int) -> float:
    """Seconds a process has waited runnable for a CPU (/proc/PID/schedstat, field 2): what a
    loaded machine adds to its wall time."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


def memory_kb(pid: int, field: str) -> int:
    """A `/proc/PID/status` memory field (VmRSS, VmHWM) in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class Connection:
    """One keep-alive HTTP/1.1 connection posting JSON-RPC bodies to `/mcp`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", self.port, limit=2**27
        )
        return self

    def close(self) -> None:
        self.writer.close()

    async def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        head = [
            "POST /mcp HTTP/1.1",
            f"host: 127.0.0.1:{self.port}",
            "content-type: application/json",
            "accept: application/json, text/event-stream",
            f"content-length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        got = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                got[name.strip().lower()] = value.strip()
        if "content-length" in got:
            data = await self.reader.readexactly(int(got["content-length"]))
        elif got.get("transfer-encoding") == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                parts.append(await self.reader.readexactly(size + 2))
                if size == 0:
                    break
            data = b"".join(p[:-2] for p in parts)
        else:
            data = b""
        return status, got, data


def _call_body(rid: int, name: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": name, "arguments": arguments, "_meta": META}
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


def _call_headers(name: str) -> dict[str, str]:
    return {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name}


async def _echo_calls(conn: Connection, calls: int, into: list[float] | None = None) -> None:
    body = _call_body(1, "echo", {"message": "hello"})
    headers = _call_headers("echo")
    for _ in range(calls):
        start = time.perf_counter_ns()
        status, _, data = await conn.post(body, headers)
        if into is not None:
            into.append((time.perf_counter_ns() - start) / 1000)
        if status != 200 or b'"hello"' not in data:
            raise RuntimeError(f"unexpected answer {status}: {data[:200]!r}")


async def _list(port: int) -> None:
    conn = await Connection(port).open()
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    )
    await conn.post(
        body.encode(), {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    )
    conn.close()


async def latency(
    label: str,
    echo_port: int,
    echo_pid: int,
    proxy_port: int,
    proxy_pid: int,
    batches: int,
    calls: int,
) -> dict[str, Any]:
    await _list(proxy_port)  # the guard learns the tools (else its first call lists itself)
    for port in (echo_port, proxy_port):  # warm up
        conn = await Connection(port).open()
        await _echo_calls(conn, calls // 4 + 5)
        conn.close()
    direct_us: list[float] = []
    proxied_us: list[float] = []
    proxy_cpu = echo_cpu_direct = echo_cpu_proxied = proxy_wait = 0.0
    for index in range(batches):
        order = [(echo_port, direct_us), (proxy_port, proxied_us)]
        for port, into in order if index % 2 == 0 else order[::-1]:
            # A connection per batch: the servers close one idle past their keep-alive (5 s).
            conn = await Connection(port).open()
            p0, e0, w0 = cpu_seconds(proxy_pid), cpu_seconds(echo_pid), run_queue_wait(proxy_pid)
            await _echo_calls(conn, calls, into)
            if port == proxy_port:
                proxy_cpu += cpu_seconds(proxy_pid) - p0
                proxy_wait += run_queue_wait(proxy_pid) - w0
                echo_cpu_proxied += cpu_seconds(echo_pid) - e0
            else:
                echo_cpu_direct += cpu_seconds(echo_pid) - e0
            conn.close()
    n = batches * calls
    d50, p50 = statistics.median(direct_us), statistics.median(proxied_us)
    return {
        "row": f"H1 HTTP proxy tools/call latency p50 (2026-07-28, --upstream {label})",
        "direct_us_p50": round(d50, 1),
        "proxied_us_p50": round(p50, 1),
        "ratio_p50": round(p50 / d50, 3),
        "direct_us_p90": round(statistics.quantiles(direct_us, n=10)[-1], 1),
        "proxied_us_p90": round(statistics.quantiles(proxied_us, n=10)[-1], 1),
        "proxy_cpu_us_per_call": round(proxy_cpu / n * 1e6, 1),
        "server_cpu_us_per_call": round(echo_cpu_direct / n * 1e6, 1),
        "server_cpu_us_per_call_proxied": round(echo_cpu_proxied / n * 1e6, 1),
        "proxy_runqueue_wait_us_per_call": round(proxy_wait / n * 1e6, 1),
        "target": LATENCY_TARGET,
        "met": p50 / d50 <= LATENCY_TARGET,
        "batches": batches,
        "calls_per_batch": calls,
    }


async def _round(port: int, clients: int, calls: int) -> float:
    """Calls per second of `clients` clients making `calls` sequential calls each."""
    conns = [await Connection(port).open() for _ in range(clients)]
    start = time.perf_counter()
    await asyncio.gather(*(_echo_calls(conn, calls) for conn in conns))
    elapsed = time.perf_counter() - start
    for conn in conns:
        conn.close()
    return clients * calls / elapsed


async def throughput(
    label: str,
    echo_port: int,
    proxy_port: int,
    proxy_pid: int,
    rounds: int,
    clients: int,
    calls: int,
) -> dict[str, Any]:
    await _list(proxy_port)
    await _round(echo_port, clients, 5)
    await _round(proxy_port, clients, 5)
    direct: list[float] = []
    proxied: list[float] = []
    p0 = cpu_seconds(proxy_pid)
    for index in range(rounds):
        order = [(echo_port, direct), (proxy_port, proxied)]
        for port, into in order if index % 2 == 0 else order[::-1]:
            into.append(await _round(port, clients, calls))
    proxy_cpu = cpu_seconds(proxy_pid) - p0
    ratios = [p / d for d, p in zip(direct, proxied, strict=True)]
    ratio = statistics.median(ratios)
    return {
        "row": f"H2 HTTP proxy throughput, {clients} concurrent clients (2026-07-28, {label})",
        "direct_calls_per_s": round(statistics.median(direct)),
        "proxied_calls_per_s": round(statistics.median(proxied)),
        "ratio_median": round(ratio, 3),
        "proxy_cpu_us_per_call": round(proxy_cpu / (rounds * clients * calls) * 1e6, 1),
        "target": THROUGHPUT_TARGET,
        "met": ratio >= THROUGHPUT_TARGET,
        "rounds": rounds,
        "calls_per_client": calls,
    }


async def idle_sessions(proxy_port: int, proxy_pid: int, sessions: int) -> dict[str, Any]:
    before = memory_kb(proxy_pid, "VmRSS")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    opened = 0
    conns = [await Connection(proxy_port).open() for _ in range(min(sessions, 20))]

    async def opener(conn: Connection, count: int) -> None:
        nonlocal opened
        for _ in range(count):
            status, headers, _ = await conn.post(json.dumps(init).encode(), {})
            session = headers.get("mcp-session-id")
            if status != 200 or session is None:
                raise RuntimeError(f"initialize through the proxy: {status}")
            extra = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            await conn.post(initialized, extra)
            opened += 1

    share = [sessions // len(conns) + (i < sessions % len(conns)) for i in range(len(conns))]
    await asyncio.gather(*(opener(c, n) for c, n in zip(conns, share, strict=True)))
    for conn in conns:
        conn.close()
    await asyncio.sleep(1.0)  # let the sessions' upstream connections settle
    after = memory_kb(proxy_pid, "VmRSS")
    return {
        "row": f"H3 HTTP proxy, {sessions} idle sessions (2025-11-25, --upstream)",
        "sessions": opened,
        "proxy_rss_mb_before": round(before / 1024, 1),
        "proxy_rss_mb": round(after / 1024, 1),
        "kb_per_session": round((after - before) / max(opened, 1), 1),
        "target_mb": IDLE_TARGET_MB,
        "met": after / 1024 <= IDLE_TARGET_MB,
    }


async def large_result(proxy_port: int, proxy_pid: int, size: int) -> dict[str, Any]:
    await _list(proxy_port)
    conn = await Connection(proxy_port).open()
    await _echo_calls(conn, 3)
    Path(f"/proc/{proxy_pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = memory_kb(proxy_pid, "VmRSS")
    start = time.perf_counter()
    status, _, data = await conn.post(_call_body(2, "blob", {"size": size}), _call_headers("blob"))
    elapsed = time.perf_counter() - start
    peak = memory_kb(proxy_pid, "VmHWM")
    conn.close()
    if status != 200 or len(data) < size:
        raise RuntimeError(f"large result through the proxy: {status}, {len(data)} bytes")
    multiple = (peak - before) * 1024 / size
    return {
        "row": f"H4 HTTP proxy, a {size // 2**20} MB result (2026-07-28, --upstream)",
        "result_mb": round(size / 2**20, 1),
        "proxy_rss_mb_before": round(before / 1024, 1),
        "proxy_peak_rss_mb": round(peak / 1024, 1),
        "peak_over_result": round(multiple, 2),
        "seconds": round(elapsed, 2),
        "target": LARGE_TARGET,
        "met": multiple <= LARGE_TARGET,
    }


def rows(quick: bool, only: frozenset[str] = ROWS, upstream: str = "both") -> list[dict[str, Any]]:
    """The HTTP proxy rows H1-H4 (see the module docstring), each a dict with `row`, the
    measures, `target`, `met` (`None` when reached on a loaded machine), `met_if_quiet`,
    `load_average_1m` and `command`. `quick`: smaller counts; `only`: the rows to run;
    `upstream`: `raw`, `sdk` or `both` (H1 and H2's upstreams).

    Raises:
        RuntimeError: a server did not start, or answered something else than expected."""
    batches, calls = (3, 50) if quick else (9, 300)
    rounds, per_client = (3, 10) if quick else (5, 60)
    sessions = 100 if quick else 1000
    command = "python bench/proxy_http.py" + (" --quick" if quick else "")
    if only != ROWS:
        command += " --only " + ",".join(sorted(only))
    if upstream != "both":
        command += f" --upstream {upstream}"
    start_load = os.getloadavg()[0]
    out: list[dict[str, Any]] = []
    upstreams = [
        ("raw echo", ECHO, per_client, "raw"),
        ("SDK server", SDK_ECHO, max(per_client // 3, 5), "sdk"),
    ]
    for label, argv, each, key in upstreams:
        if upstream not in ("both", key) or not only & {"H1", "H2"}:
            continue
        with servers(argv) as (echo_port, echo_pid, proxy_port, proxy_pid):
            if "H1" in only:
                measured = latency(
                    label, echo_port, echo_pid, proxy_port, proxy_pid, batches, calls
                )
                out.append(asyncio.run(measured))
            if "H2" in only:
                out.append(
                    asyncio.run(
                        throughput(label, echo_port, proxy_port, proxy_pid, rounds, 50, each)
                    )
                )
    if "H4" in only:
        with servers() as (_, _, proxy_port, proxy_pid):
            out.append(asyncio.run(large_result(proxy_port, proxy_pid, LARGE_BYTES)))
    if "H3" in only:
        # One client on one address opens every session: the row measures idle sessions'
        # memory, so the per-client and per-address caps (32 and 128) are lifted to its count.
        caps = ("--max-sessions-per-client", str(sessions))
        caps += ("--max-sessions-per-address", str(sessions))
        with servers(extra=caps) as (_, _, proxy_port, proxy_pid):
            out.append(asyncio.run(idle_sessions(proxy_port, proxy_pid, sessions)))
    load = max(start_load, os.getloadavg()[0])
    for row in out:
        # As bench/run.py: a target reached on a busy machine is not claimed (`met: null`).
        row["met_if_quiet"] = row["met"]
        row["met"] = None if (row["met"] and load > LOAD_LIMIT) else row["met"]
        row["load_average_1m"] = round(load, 2)
        row["command"] = command
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (smoke)")
    parser.add_argument(
        "--only", default=",".join(sorted(ROWS)), help="comma-separated rows (default: all)"
    )
    parser.add_argument(
        "--upstream", choices=("raw", "sdk", "both"), default="both", help="H1/H2's upstream"
    )
    args = parser.parse_args(argv)
    only = frozenset(part.strip().upper() for part in args.only.split(",") if part.strip())
    if not only <= ROWS:
        parser.error(f"--only: rows are {', '.join(sorted(ROWS))}")
    for row in rows(args.quick, only, args.upstream):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
