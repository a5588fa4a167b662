"""Measure what `conduit-mcp proxy --listen` keeps for a hostile HTTP client (issue 30, items 2
and 8): the proxy's resident memory around a request head of 100 MiB, how long an unfinished
head, a connection that sends nothing and an idle kept-alive connection stay open, how many
connections one address holds, and how many sessions one credential-less client opens before
another client's `initialize` is refused.

    python bench/listen_bounds.py                  # everything, the proxy's default bounds
    python bench/listen_bounds.py --header-mib 101 --wait 60
    python bench/listen_bounds.py --only head,slow

Each figure is one run against a fresh `conduit-mcp proxy --listen 127.0.0.1:PORT` in a
subprocess (its `/proc/PID/status`: VmRSS now, VmHWM the peak). Times are wall-clock seconds
from the client's side (a slow head: from its first byte until the proxy closes, or `--wait`
when it never does). The server behind the proxy is `tests/proxy/http_server.py` over
`--upstream` for the sessions figure (a session there costs no process), and no server at all
for the others (nothing reaches one). Prints one JSON object a line and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
HTTP_SERVER = ROOT / "tests" / "proxy" / "http_server.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the process on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listening on {port}")


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of `pid` in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


class Proxy:
    """`conduit-mcp proxy --listen` on a free port, its extra options given."""

    def __init__(self, *options: str, upstream: str | None = None) -> None:
        self.port = _free_port()
        target = ["--upstream", upstream] if upstream else ["--", sys.executable, "-c", "pass"]
        argv = [
            str(CONDUIT),
            "proxy",
            "--server-id",
            "bounds",
            "--quiet",
            "--listen",
            f"127.0.0.1:{self.port}",
            *options,
            *target,
        ]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, self.process)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _read_answer(sock: socket.socket, wait: float) -> tuple[bytes, float | None]:
    """Everything the proxy sends until it closes (or `wait` seconds): (bytes, seconds until
    the close, `None` when it stayed open)."""
    sock.settimeout(0.5)
    data = b""
    start = time.monotonic()
    while time.monotonic() - start < wait:
        try:
            piece = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return data, time.monotonic() - start
        if not piece:
            return data, time.monotonic() - start
        data += piece
    return data, None


def _status_line(data: bytes) -> str:
    return data.split(b"\r\n", 1)[0].decode("latin-1") if data else "(nothing)"


def big_head(mib: int, wait: float) -> dict[str, Any]:
    """One connection sends a request whose single header value is `mib` MiB (never ending
    it), as fast as the proxy takes it (a proxy that refused it reads and drops the rest for
    a moment, so that the client sees the answer: `sent_bytes` may be all of it)."""
    proxy = Proxy()
    try:
        before = _status(proxy.process.pid)
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
        piece = b"a" * (1 << 20)
        sent = 0
        started = time.monotonic()
        try:
            for _ in range(mib):
                sock.sendall(piece)
                sent += len(piece)
        except OSError:
            pass
        answer, _closed = _read_answer(sock, wait)
        seconds = time.monotonic() - started
        sock.close()
        after = _status(proxy.process.pid)
        return {
            "figure": "head",
            "header_mib": mib,
            "sent_bytes": sent,
            "answer": _status_line(answer),
            "seconds": round(seconds, 2),
            "rss_kib_before": before["VmRSS"],
            "rss_kib_after": after["VmRSS"],
            "peak_kib_before": before["VmHWM"],
            "peak_kib_after": after["VmHWM"],
            "peak_growth_mib": round((after["VmHWM"] - before["VmHWM"]) / 1024, 1),
        }
    finally:
        proxy.close()


def slow(wait: float) -> list[dict[str, Any]]:
    """How long the proxy keeps (a) a head that never ends, (b) a connection that sends
    nothing, (c) a connection kept alive after one answered request."""
    proxy = Proxy()
    rows = []
    try:
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n" % proxy.port)
        answer, closed = _read_answer(sock, wait)
        sock.close()
        rows.append(
            {"figure": "slow head", "answer": _status_line(answer), "closed_after_s": _r(closed)}
        )
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        answer, closed = _read_answer(sock, wait)
        sock.close()
        rows.append(
            {
                "figure": "silent connection",
                "answer": _status_line(answer),
                "closed_after_s": _r(closed),
            }
        )
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % proxy.port)
        sock.settimeout(5)
        first = sock.recv(65536)
        answer, closed = _read_answer(sock, wait)
        sock.close()
        rows.append(
            {
                "figure": "idle kept-alive",
                "answer": _status_line(first),
                "closed_after_s": _r(closed),
            }
        )
    finally:
        proxy.close()
    return rows


def _r(value: float | None) -> float | str:
    return "open at the end of the wait" if value is None else round(value, 2)


def connections(count: int) -> dict[str, Any]:
    """`count` connections from one address, each with the first line of a request: how many
    the proxy keeps, how many it answers at once, and its memory."""
    proxy = Proxy()
    socks = []
    try:
        before = _status(proxy.process.pid)
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", proxy.port))
            sock.sendall(b"POST /mcp HTTP/1.1\r\n")
            socks.append(sock)
        time.sleep(1.0)  # the answers the proxy writes at once are in by now
        refused = kept = closed = 0
        for sock in socks:
            sock.setblocking(False)
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                kept += 1
                continue
            except OSError:
                data = b""
            if data.startswith(b"HTTP/1.1 429"):
                refused += 1
            else:
                closed += 1
        after = _status(proxy.process.pid)
        return {
            "figure": "connections from one address",
            "opened": count,
            "kept_open": kept,
            "answered_429": refused,
            "closed_otherwise": closed,
            "rss_growth_mib": round((after["VmRSS"] - before["VmRSS"]) / 1024, 1),
        }
    finally:
        for sock in socks:
            sock.close()
        proxy.close()


def _initialize(port: int, source: str, authorization: str | None = None) -> int:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bounds", "version": "0"},
            },
        }
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n"
    )
    if authorization:
        head += f"authorization: {authorization}\r\n"
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(head.encode() + b"\r\n" + body)
    sock.settimeout(30)
    data = b""
    while b"\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    sock.close()
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0


def sessions(count: int) -> dict[str, Any]:
    """One credential-less client (127.0.0.1) opens `count` sessions; then a client from
    another address (127.0.0.2) initializes."""
    upstream_port = _free_port()
    upstream = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), "--port", str(upstream_port), "--log", os.devnull],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(upstream_port, upstream)
        proxy = Proxy(upstream=f"http://127.0.0.1:{upstream_port}/mcp")
        try:
            statuses: dict[int, int] = {}
            started = time.monotonic()
            for _ in range(count):
                status = _initialize(proxy.port, "127.0.0.1")
                statuses[status] = statuses.get(status, 0) + 1
            seconds = time.monotonic() - started
            other = _initialize(proxy.port, "127.0.0.2")
            return {
                "figure": "sessions",
                "attacker_initializes": count,
                "attacker_statuses": statuses,
                "seconds": round(seconds, 1),
                "another_address_initialize": other,
            }
        finally:
            proxy.close()
    finally:
        upstream.terminate()
        upstream.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--header-mib", type=int, default=100)
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a close")
    parser.add_argument("--connections", type=int, default=400)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--only", default="head,slow,connections,sessions")
    args = parser.parse_args()
    only = set(args.only.split(","))
    print(json.dumps({"load_average": os.getloadavg()}))
    if "head" in only:
        print(json.dumps(big_head(args.header_mib, args.wait)))
    if "slow" in only:
        for row in slow(args.wait):
            print(json.dumps(row))
    if "connections" in only:
        print(json.dumps(connections(args.connections)))
    if "sessions" in only:
        print(json.dumps(sessions(args.sessions)))
    print(json.dumps({"load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
