"""The server as a child process (`proxy/stdio/_child.py`, the HTTP listener's upstream for a
session or the stateless router): messages in order both ways, lines that are not JSON-RPC
dropped and logged, memory bounded against a server that floods its stdout and against one
that does not read its stdin, a server that dies ends the stream, and the shutdown sequence.

MCP 2025-11-25 basic/transports "stdio" (newline-delimited JSON-RPC messages; the server MUST
NOT write anything to stdout that is not a valid MCP message) and basic/lifecycle "Shutdown"
(stdio: close the server's input, wait for it to exit, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCNotification, JSONRPCRequest

from conduit_mcp.proxy.stdio import _child
from conduit_mcp.proxy.stdio._child import READ_AHEAD, child_upstream
from conduit_mcp.proxy.stdio._framing import chunk_size

pytestmark = pytest.mark.anyio


def _server(source: str) -> list[str]:
    return [sys.executable, "-c", source]


def _request(rid: int, text: str = "") -> SessionMessage:
    return SessionMessage(
        JSONRPCRequest(jsonrpc="2.0", id=rid, method="echo", params={"text": text})
    )


#: A server that writes back every line it reads.
_ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"


async def _yield_until(ready: Any) -> None:
    """Checkpoints (each lets the loop run its callbacks) until `ready()`."""
    while not ready():
        await anyio.sleep(0.01)


async def test_lines_come_in_order_and_what_is_not_json_rpc_is_dropped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Four messages between a line of text, a JSON value that is not a message and a blank
    # line; the last one has no newline (the stream's end ends it).
    source = (
        "import sys\n"
        "out = sys.stdout\n"
        'out.write(\'{"jsonrpc":"2.0","method":"n/1"}\\n\')\n'
        "out.write('not json\\n')\n"
        'out.write(\'{"jsonrpc":"2.0","id":2,"result":{}}\\n\\n\')\n'
        "out.write('[1, 2]\\n')\n"
        'out.write(\'{"jsonrpc":"2.0","method":"n/3"}\\n\')\n'
        'out.write(\'{"jsonrpc":"2.0","method":"n/4"}\')\n'
    )
    caplog.set_level(logging.WARNING, "conduit_mcp.proxy")
    got: list[Any] = []
    async with child_upstream(_server(source)) as (read, _write):
        with anyio.fail_after(30):
            while True:
                try:
                    got.append((await read.receive()).message)
                except anyio.EndOfStream:
                    break
    described = [getattr(m, "method", None) or getattr(m, "id", None) for m in got]
    assert described == ["n/1", 2, "n/3", "n/4"]
    dropped = [r for r in caplog.records if "not a JSON-RPC message: dropped" in r.getMessage()]
    assert len(dropped) == 2


async def test_a_server_flooding_stdout_is_held_back_while_nobody_reads() -> None:
    # 32 MiB of notifications: read without bound, all of it would be held in memory.
    line_count = 64 * 1024
    source = (
        "import sys\n"
        'line = \'{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}\\n\'\n'
        f"for i in range({line_count}):\n"
        "    sys.stdout.write(line % (i, 'x' * 460))\n"
        "sys.stdout.flush()\n"
    )
    async with child_upstream(_server(source)) as (read, _write):
        with anyio.fail_after(60):
            # Reading stops (or, without a bound, the whole flood is read to its end).
            await _yield_until(lambda: not read._reading or read._ended)
            assert not read._ended
            assert READ_AHEAD <= read._held <= READ_AHEAD + chunk_size()
            seen = 0
            while True:
                try:
                    item = await read.receive()
                except anyio.EndOfStream:
                    break
                assert isinstance(item.message, JSONRPCNotification)
                assert item.message.params is not None
                assert item.message.params["i"] == seen  # every one, in order
                seen += 1
                assert read._held <= READ_AHEAD + chunk_size()
    assert seen == line_count


async def test_a_server_not_reading_its_stdin_holds_its_senders_back(tmp_path: Path) -> None:
    # The server waits on a FIFO before it reads anything, then echoes every line back.
    go = tmp_path / "go"
    os.mkfifo(go)
    source = f"open({str(go)!r}).read(1)\n" + _ECHO
    texts = [chr(ord("a") + i) * (1536 * 1024) for i in range(3)]  # 1.5 MiB each, past the pipe
    sent: list[int] = []
    async with child_upstream(_server(source)) as (read, write):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def send_all() -> None:
                    for rid, text in enumerate(texts):
                        await write.send(_request(rid, text))
                        sent.append(rid)

                tg.start_soon(send_all)
                await _yield_until(lambda: bool(write._pending))
                assert sent == []  # the first line is not all in the pipe: its sender waits
                assert len(write._pending) <= len(texts[0]) + 100
                with open(go, "w") as fifo:
                    fifo.write("g")
                echoed = [await read.receive() for _ in texts]
        assert sent == [0, 1, 2]
        assert [(m.message.id, m.message.params) for m in echoed] == [
            (rid, {"text": text}) for rid, text in enumerate(texts)
        ]


async def test_a_server_that_dies_mid_call_ends_the_stream() -> None:
    source = "import sys\nsys.stdin.readline()\nsys.exit(3)\n"
    async with child_upstream(_server(source)) as (read, write):
        with anyio.fail_after(30):
            await write.send(_request(1))
            with pytest.raises(anyio.EndOfStream):
                await read.receive()
            with pytest.raises(anyio.ClosedResourceError):  # EPIPE: nobody reads its stdin
                await write.send(_request(2, "x" * (256 * 1024)))
            with pytest.raises(anyio.ClosedResourceError):
                await write.send(_request(3))


_MARKS = (
    "import os, signal, sys\n"
    "def mark(what):\n"
    "    with open({marks!r}, 'a') as f:\n"
    "        f.write(what + '\\n')\n"
)


async def test_shutdown_closes_stdin_then_sends_sigterm_then_sigkill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_child, "SHUTDOWN_GRACE", 0.3)
    marks = tmp_path / "marks"
    source = _MARKS.format(marks=str(marks)) + (
        "signal.signal(signal.SIGTERM, lambda *a: mark('term'))\n"
        "mark(str(os.getpid()))\n"
        "sys.stdin.read()\n"
        "mark('eof')\n"
        "while True:\n"
        "    signal.pause()\n"
    )
    with anyio.fail_after(30):
        async with child_upstream(_server(source)) as (_read, _write):
            await _yield_until(marks.exists)
    pid, *rest = marks.read_text().split()
    assert rest == ["eof", "term"]
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(int(pid), 0)


async def test_a_server_blocked_on_a_full_stdout_still_sees_its_stdin_close(
    tmp_path: Path,
) -> None:
    # 2 MiB written before it reads stdin: past the pipe and `READ_AHEAD`, so it only gets
    # to its stdin if the proxy reads (and drops) what it writes during the shutdown.
    marks = tmp_path / "marks"
    source = _MARKS.format(marks=str(marks)) + (
        "signal.signal(signal.SIGTERM, lambda *a: (mark('term'), sys.exit(1)))\n"
        'line = \'{"jsonrpc":"2.0","method":"n","params":{"pad":"%s"}}\\n\'\n'
        "for i in range(4096):\n"
        "    sys.stdout.write(line % ('x' * 480))\n"
        "sys.stdout.flush()\n"
        "sys.stdin.read()\n"
        "mark('eof')\n"
    )
    with anyio.fail_after(30):
        async with child_upstream(_server(source)) as (read, _write):
            await read.receive()
    assert marks.read_text().split() == ["eof"]


async def test_a_command_that_cannot_start_raises_oserror() -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        async with child_upstream(["/nonexistent/server"]):
            pass
    assert sorted(os.listdir("/proc/self/fd")) == before  # no pipe end left open


async def test_a_message_json_cannot_write_is_dropped_and_the_next_one_goes() -> None:
    async with child_upstream(_server(_ECHO)) as (read, write):
        with anyio.fail_after(30):
            await write.send(_request(1, "\ud800"))  # a lone surrogate: no JSON text holds it
            await write.send(_request(2, "ok"))
            echoed = await read.receive()
    assert json.loads(echoed.message.model_dump_json()) == {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "echo",
        "params": {"text": "ok"},
    }
