"""The server as a child process speaking stdio: its command started, each message written to
its stdin as one line, each line of its stdout read as a message, and its shutdown.

Not a public module. The stdio proxy's shutdown sequence (`SHUTDOWN_GRACE`) and, for the HTTP
listener, an upstream that is a child process (`child_upstream`, one per session). Spec: MCP
2025-11-25 basic/transports "stdio" and basic/lifecycle "Shutdown" (stdio: close the server's
input, wait for it to exit, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream

from .._message import decode, encode
from ._framing import LineReader, chunk_size

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

logger = logging.getLogger("conduit_mcp.proxy")

#: Seconds the server gets to exit after its stdin is closed, then again after SIGTERM.
SHUTDOWN_GRACE: Final = 2.0


@asynccontextmanager
async def child_upstream(command: Sequence[str]) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server command; yields `(read, write)`. On exit its stdin is closed, then it
    gets the stdio shutdown sequence (wait, SIGTERM, SIGKILL).

    Raises:
        OSError: the command cannot be started.
    """
    process = await anyio.open_process(
        list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None
    )
    assert process.stdin is not None and process.stdout is not None
    send, receive = anyio.create_memory_object_stream[Any](0)
    writer = _ServerWriter(process.stdin)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_server, process.stdout, send)
            try:
                yield receive, writer
            finally:
                with anyio.CancelScope(shield=True):
                    await writer.aclose()
                    with anyio.move_on_after(SHUTDOWN_GRACE):
                        await process.wait()
                    if process.returncode is None:
                        process.terminate()
                        with anyio.move_on_after(SHUTDOWN_GRACE):
                            await process.wait()
                tg.cancel_scope.cancel()
    finally:
        send.close()
        receive.close()
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()


class _ServerWriter:
    """The send side of the upstream pair: each message written as one line to the server."""

    def __init__(self, stdin: anyio.abc.ByteSendStream) -> None:
        self._stdin = stdin
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            data = encode(item)
        except Exception:
            logger.exception("a client message could not be written as JSON: dropped")
            return
        try:
            await self._stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._closed = True
            raise anyio.ClosedResourceError from None

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                await self._stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass


async def _read_server(
    stdout: anyio.abc.ByteReceiveStream,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    """Server stdout -> upstream read stream. Lines that are not JSON-RPC messages are dropped
    (logged): the client never sees bytes the guard has not read."""

    async def chunk() -> bytes:
        try:
            return await stdout.receive(chunk_size())
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return b""

    lines = LineReader(chunk)
    async with sink:
        while (line := await lines.next_kept("server stdout")) is not None:
            item = decode(line)
            if isinstance(item, Exception):
                logger.warning("server stdout: a line that is not a JSON-RPC message: dropped")
                continue
            await sink.send(item)
