"""Probe: how far the HTTP proxy's stateless path would go without uvicorn's per-request ASGI
machinery. A throwaway listener, not the product: an asyncio `Protocol` on httptools that
serves only `POST /mcp` 2026-07-28 requests (anything else: 404), hands each to the very
`ModernRouter.handle` the product's listener calls (the same guard, `_direct` pooled POST,
budget and metrics, built by the same `conduit-mcp proxy` command line), and writes the
response head and body in one write. No Host/Origin check (the product remembers a passing
one: a set lookup), no pipelining, no flow control, no head bound: it must not be deployed.

One run, as bench/proxy_http_ab.py: an upstream (bench/http_echo.py or bench/http_sdk_echo.py),
the product's `conduit-mcp proxy --listen` and this probe in front of it, and the upstream
directly; batches of sequential `tools/call` requests alternating between the three (order
rotated every batch); per side the median over batches of the CPU µs per call of the process
answering (/proc/PID/schedstat) and the p50 wall time of a call, and each proxy's p50 over the
direct one's (H1's ratio).

Usage:
    python bench/probe_listener.py                    # raw echo upstream
    python bench/probe_listener.py --upstream sdk --calls 1000 --batches 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import proxy_http as ph  # noqa: E402
from bench.proxy_http_ab import on_cpu_ns  # noqa: E402

_REASONS = {200: b"OK", 202: b"Accepted", 400: b"Bad Request", 404: b"Not Found"}


class _Probe(asyncio.Protocol):
    """One client connection: httptools parses, each complete request is one task running
    `ModernRouter.handle` with a minimal ASGI `receive` / `send`."""

    def __init__(self, listener: Any, tg: Any) -> None:
        import httptools

        self._listener = listener
        self._tg = tg
        self._parser = httptools.HttpRequestParser(self)
        self._transport: Any = None
        self._peer: Any = None
        #: each request in flight's end: its response written, or the connection lost
        self._open: set[asyncio.Future[None]] = set()
        self._url = b""
        self._raw: list[tuple[str, str]] = []
        self._body: list[bytes] = []

    def connection_made(self, transport: Any) -> None:
        self._transport = transport
        self._peer = transport.get_extra_info("peername")

    def connection_lost(self, exc: Exception | None) -> None:
        for answered in self._open:
            if not answered.done():
                answered.set_result(None)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except Exception:
            self._transport.close()

    def on_message_begin(self) -> None:
        self._url, self._raw, self._body = b"", [], []

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._raw.append((name.decode("latin-1").lower(), value.decode("latin-1")))

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        raw, body = self._raw, b"".join(self._body)
        method = self._parser.get_method()
        asyncio.get_running_loop().create_task(self._serve(method, self._url, raw, body))

    async def _serve(
        self, method: bytes, url: bytes, raw: list[tuple[str, str]], body: bytes
    ) -> None:
        headers = dict(raw)
        transport = self._transport
        if method != b"POST" or url.split(b"?")[0].rstrip(b"/") != b"/mcp":
            transport.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            return
        head: list[bytes] = []
        chunked = False
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._open.add(answered)

        async def receive() -> dict[str, Any]:
            await answered
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal chunked
            if message["type"] == "http.response.start":
                status = message["status"]
                lines = [b"HTTP/1.1 %d %s" % (status, _REASONS.get(status, b"Status"))]
                names = set()
                for name, value in message.get("headers", []):
                    lines.append(name + b": " + value)
                    names.add(name.lower())
                if b"content-length" not in names:
                    chunked = True
                    lines.append(b"transfer-encoding: chunked")
                head.append(b"\r\n".join(lines) + b"\r\n\r\n")
                return
            data = message.get("body", b"")
            more = message.get("more_body", False)
            if chunked:
                data = (b"%x\r\n%s\r\n" % (len(data), data) if data else b"") + (
                    b"" if more else b"0\r\n\r\n"
                )
            if head:
                data = head.pop() + data
            transport.write(data)
            if not more and not answered.done():
                answered.set_result(None)

        listener = self._listener
        if listener.metrics is not None and b'"tools/call"' in body:
            listener.metrics.call()
        try:
            await listener.modern.handle(self._tg, raw, body, receive, send, self._peer, headers)
        finally:
            self._open.discard(answered)
            if not answered.done():
                answered.set_result(None)


async def probe_serve(
    seam: Any, target: Any, host: str, port: int, metrics: Any = None, budget: Any = None
) -> int:
    """`listen/_server.serve`'s stand-in: the product's `Listener` (for its router and metrics)
    behind `_Probe` instead of uvicorn."""
    import anyio

    from conduit_mcp.proxy.listen._server import Listener

    listener = Listener(seam, target, host=host, port=port, metrics=metrics, budget=budget)
    async with anyio.create_task_group() as tg:
        await tg.start(listener.run)
        assert listener._task_group is not None
        server = await asyncio.get_running_loop().create_server(
            lambda: _Probe(listener, listener._task_group), host, port
        )
        async with server:
            await anyio.sleep_forever()
    return 0


def _serve_probe(argv: list[str]) -> None:
    from conduit_mcp.proxy.listen import _server

    _server.serve = probe_serve  # type: ignore[assignment]
    from conduit_mcp.cli import main as launch

    sys.argv = ["conduit-mcp", *argv]
    launch()


async def _compare(sides: dict[str, tuple[int, int]], calls: int, batches: int) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    wall: dict[str, list[float]] = {name: [] for name in sides}
    for port, _ in sides.values():
        await ph._list(port)
        conn = await ph.Connection(port).open()
        await ph._echo_calls(conn, calls // 4 + 5)
        conn.close()
    order = list(sides.items())
    for index in range(batches):
        turn = order[index % len(order) :] + order[: index % len(order)]
        for name, (port, pid) in turn:
            conn = await ph.Connection(port).open()
            start = on_cpu_ns(pid)
            await ph._echo_calls(conn, calls, wall[name])
            cpu[name].append((on_cpu_ns(pid) - start) / calls / 1000)
            conn.close()
    row: dict[str, Any] = {}
    for name in sides:
        row[f"{name}_cpu_us_per_call"] = round(statistics.median(cpu[name]), 1)
        row[f"{name}_us_p50"] = round(statistics.median(wall[name]), 1)
    for name in sides:
        if name != "direct":
            row[f"{name}_ratio"] = round(row[f"{name}_us_p50"] / row["direct_us_p50"], 2)
    return row


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--serve"]:
        _serve_probe(args_in[1:])
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--upstream", choices=("raw", "sdk"), default="raw")
    parser.add_argument("--calls", type=int, default=1000, help="calls per batch")
    parser.add_argument("--batches", type=int, default=9)
    args = parser.parse_args(args_in)
    start_load = os.getloadavg()[0]
    upstream = ph.ECHO if args.upstream == "raw" else ph.SDK_ECHO
    echo_port = ph._free_port()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        with ph._started([*upstream, str(echo_port)], echo_port) as echo:
            sides: dict[str, tuple[int, int]] = {"direct": (echo_port, echo.pid)}
            for name, head in (
                ("uvicorn", [str(ph.CONDUIT)]),
                ("probe", [sys.executable, str(Path(__file__).resolve()), "--serve"]),
            ):
                port = ph._free_port()
                argv = [
                    *head,
                    "proxy",
                    "--server-id",
                    "bench",
                    "--quiet",
                    "--listen",
                    f"127.0.0.1:{port}",
                    "--upstream",
                    f"http://127.0.0.1:{echo_port}/mcp",
                ]
                env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
                process = subprocess.Popen(
                    argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                processes.append(process)
                ph._wait_port(port, process)
                sides[name] = (port, process.pid)
            row = asyncio.run(_compare(sides, args.calls, args.batches))
    finally:
        for process in processes:
            process.terminate()
            process.wait()
    load = max(start_load, os.getloadavg()[0])
    print(
        json.dumps(
            {
                "row": f"probe listener vs uvicorn listener, tools/call (2026-07-28, "
                f"{args.upstream})",
                **row,
                "batches": args.batches,
                "calls_per_batch": args.calls,
                "load_average_1m": round(load, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
