"""What a hostile `--upstream` costs the proxy: the figures of issue 30 (items 8 and 10) measured
on the real `conduit-mcp proxy --listen ... --upstream URL`, before and after a change.

Two scenarios, each against a raw HTTP/1.1 upstream in a child process (no SDK, so only the
proxy is measured), driven with 2026-07-28 stateless `ping` requests over the listener:

- `junk`: each answer is an event stream whose first event is one `--junk-mb` MB `data:` line
  that is no JSON-RPC message (dropped by the proxy), then the answer. Three requests in a row;
  the proxy's resident memory (`VmRSS`) before, after each, and its peak (`VmHWM`).
- `comments`: each answer is `--comments-mb` MB of two-byte comment lines (`:` and LF) before
  the answer. The proxy's CPU time for that one request (user + system from /proc/PID/stat),
  and the wall time of a plain request sent by another client while it runs.

Usage:
    python bench/upstream_hostile.py junk [--junk-mb 150]
    python bench/upstream_hostile.py comments [--comments-mb 16]
    python bench/upstream_hostile.py junk --program /path/to/other/conduit-mcp   # before/after

Prints one JSON object (the load average with it). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
MODERN = "2026-07-28"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"a process exited early ({process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


# -- the upstream (a child process: `--serve SCENARIO PORT SIZE`) -------------------------------


def _serve(scenario: str, port: int, size: int) -> None:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_connection, args=(conn, scenario, size), daemon=True).start()


def _connection(conn: socket.socket, scenario: str, size: int) -> None:
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            body += conn.recv(65536)
        request = json.loads(body)
        if "id" not in request:
            conn.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            return
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete"}}
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        )
        slow = request.get("params", {}).get("_meta", {}).get("bench/plain") is None
        if slow and scenario == "junk":
            conn.sendall(b"data: ")
            piece = b"x" * (1 << 20)
            for _ in range(size // len(piece)):
                conn.sendall(piece)
            conn.sendall(b"\n\n")
        elif slow and scenario == "comments":
            piece = b":\n" * (1 << 19)
            for _ in range(size // len(piece)):
                conn.sendall(piece)
        conn.sendall(b"data: " + json.dumps(answer).encode() + b"\n\n")


# -- the client ---------------------------------------------------------------------------------


def _ping(port: int, rid: int, plain: bool = False) -> float:
    """One 2026-07-28 `ping` through the proxy; its wall time in seconds."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if plain:
        meta["bench/plain"] = True
    body = json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {"_meta": meta}}
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\nmcp-protocol-version: {MODERN}\r\n"
        f"mcp-method: ping\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        sock.sendall(head + body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    if b'"result"' not in reply:
        raise SystemExit(f"no answer: {reply[:300]!r}")
    return time.perf_counter() - started


def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024  # MiB
    raise KeyError(field)


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(scenario: str, size_mb: int, program: str = str(CONDUIT)) -> dict[str, Any]:
    up_port, port = _free_port(), _free_port()
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--serve", scenario, str(up_port), str(size_mb << 20)]
    )
    proxy = None
    try:
        _wait_port(up_port, upstream)
        argv = [program, "proxy", "--server-id", "hostile", "--quiet"]
        argv += ["--listen", f"127.0.0.1:{port}", "--upstream", f"http://127.0.0.1:{up_port}/mcp"]
        proxy = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
        _wait_port(port, proxy)
        _ping(port, 0, plain=True)  # warm: the pool's first connection, imports
        result: dict[str, Any] = {"scenario": scenario, "size_mb": size_mb}
        result["load_average"] = os.getloadavg()[0]
        if scenario == "junk":
            rss = [_status(proxy.pid, "VmRSS")]
            for rid in range(1, 4):
                _ping(port, rid)
                rss.append(_status(proxy.pid, "VmRSS"))
            result["rss_mib"] = rss
            result["peak_mib"] = _status(proxy.pid, "VmHWM")
            result["grown_mib"] = rss[-1] - rss[0]
        else:
            before = _cpu(proxy.pid)
            other: list[float] = []

            def plain() -> None:
                time.sleep(0.2)
                other.append(_ping(port, 99, plain=True))

            thread = threading.Thread(target=plain)
            thread.start()
            result["request_s"] = round(_ping(port, 1), 3)
            thread.join()
            result["proxy_cpu_s"] = round(_cpu(proxy.pid) - before, 3)
            result["other_client_s"] = round(other[0], 3)
        result["load_average_end"] = os.getloadavg()[0]
        return result
    finally:
        for process in (proxy, upstream):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--serve"]:
        _serve(args[1], int(args[2]), int(args[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=("junk", "comments"))
    parser.add_argument("--junk-mb", type=int, default=150)
    parser.add_argument("--comments-mb", type=int, default=16)
    parser.add_argument("--program", default=str(CONDUIT), help="the conduit-mcp to measure")
    options = parser.parse_args(args)
    size = options.junk_mb if options.scenario == "junk" else options.comments_mb
    print(json.dumps(measure(options.scenario, size, options.program)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
