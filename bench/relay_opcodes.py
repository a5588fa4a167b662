"""Python bytecodes per `tools/call` round trip of the stdio relay, by function: a count the
load cannot move, finer than callgrind's (which sees the interpreter, not the functions).

Runs the proxy's own `Relay` in this process as `conduit-mcp proxy` wires it (two threads, each
a `BlockingLineReader` over a `ChunkReader` of a pipe, `Outlet`s writing to pipes), behind a
`MessageLink` built as bench/guard_link_profile.py builds it (pins in memory, the default
policy, initialized at 2025-11-25, bench/guard.py's page listed). The main thread plays client
and server: a `json.dumps` `tools/call` line of `echo` into the client pipe, read at the server
pipe, its plain text result (`json.dumps`, as bench/guard.py's server writes it) into the server
pipe, read at the client pipe; the relay threads run under `threading.settrace` with opcode
events on (`frame.f_trace_opcodes`), counted per code object for `--calls` round trips after
50 unmeasured ones. The driver's own bytecodes are not counted. No valgrind, no SDK.

Usage:
    python bench/relay_opcodes.py               # 300 round trips, the top 40 functions
    python bench/relay_opcodes.py --calls 1000 --top 60
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.guard_link_profile import _link  # noqa: E402
from conduit_mcp.proxy.stdio._framing import BlockingLineReader  # noqa: E402
from conduit_mcp.proxy.stdio._relay import ChunkReader, Outlet, Relay  # noqa: E402


def _name(frame: FrameType) -> str:
    path = frame.f_code.co_filename
    return f"{path.split('/src/')[-1].split('/lib/python')[-1]}:{frame.f_code.co_name}"


def main(calls: int, top: int) -> list[str]:
    """The report's lines: bytecodes per round trip, in all and per function."""
    link = _link()
    c2p, p2s, s2p, p2c = os.pipe(), os.pipe(), os.pipe(), os.pipe()
    relay = Relay(
        link, Outlet(p2c[1], owned=False), Outlet(p2s[1], owned=False), asyncio.new_event_loop()
    )
    counts: collections.Counter[str] = collections.Counter()
    counting = threading.Event()

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode" and counting.is_set():
            counts[_name(frame)] += 1
        return trace

    def reader(fd: int) -> BlockingLineReader:
        chunks = ChunkReader(fd)
        return BlockingLineReader(getattr(chunks, "read", chunks), keep_newline=True)

    threading.settrace(trace)
    for side, fd in ((relay.client_to_server, c2p[0]), (relay.server_to_client, s2p[0])):
        threading.Thread(target=side, args=(reader(fd),), daemon=True).start()
    threading.settrace(None)  # type: ignore[arg-type]

    def round_trip(request_id: int) -> None:
        call = {"name": "echo", "arguments": {"message": "hello"}}
        request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
        os.write(c2p[1], json.dumps(request).encode() + b"\n")
        if not os.read(p2s[0], 65536).endswith(b"\n"):
            raise RuntimeError("the call did not reach the server whole")
        result = {"content": [{"type": "text", "text": "hello"}]}
        answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
        os.write(s2p[1], json.dumps(answer).encode() + b"\n")
        if b'"hello"' not in os.read(p2c[0], 65536):
            raise RuntimeError("the result did not reach the client")

    for request_id in range(50):
        round_trip(request_id)
    counting.set()
    for request_id in range(1000, 1000 + calls):
        round_trip(request_id)
    counting.clear()
    total = sum(counts.values())
    lines = [f"{total / calls:.0f} bytecodes per round trip ({calls} round trips); by function:"]
    for name, count in counts.most_common(top):
        lines.append(f"{count / calls:8.1f}  {name}")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    print("\n".join(main(args.calls, args.top)))
