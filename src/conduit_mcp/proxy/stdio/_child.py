"""The server as a child process speaking stdio: its command started, each message written to
its stdin as one line, each line of its stdout read as a message, and its shutdown.

Not a public module. The stdio proxy's shutdown sequence (`SHUTDOWN_GRACE`) and, for the HTTP
listener, an upstream that is a child process (`child_upstream`, one per session). Spec: MCP
2025-11-25 basic/transports "stdio" and basic/lifecycle "Shutdown" (stdio: close the server's
input, wait for it to exit, then SIGTERM, then SIGKILL).

The two pipes are the proxy's own non-blocking file descriptors, driven by the event loop's
readiness callbacks (`loop.add_reader`, `loop.add_writer`), not anyio's process streams: a
message written is one `os.write` when the pipe has room (no task switch, no drain), and the
lines of one read of the server's stdout are decoded in the callback and queued for the
consumer, who takes them without a trip round the event loop while any wait. At 32 calls in
flight the anyio stdin stream and the memory object stream to the guard were a fifth of the
proxy's profile (docs/performance.md, "X2 throughput, the stdio child's streams"). Memory
stays bounded both ways: reading pauses while `READ_AHEAD` bytes of lines wait for the
consumer (the server then blocks on its full pipe), and a send waits until its bytes are in
the stdin pipe. POSIX only: asyncio's Windows (proactor) event loop watches no pipes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, Final

import anyio

from .._message import decode, encode
from ._framing import FedLines, LineTooLong, chunk_size

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

logger = logging.getLogger("conduit_mcp.proxy")

#: Seconds the server gets to exit after its stdin is closed, then again after SIGTERM.
SHUTDOWN_GRACE: Final = 2.0
#: Bytes of server lines read, decoded and not yet taken by the consumer, past which reading
#: stops until the consumer has taken them all (one read more may land: `chunk_size()`).
READ_AHEAD: Final = 256 * 1024


@asynccontextmanager
async def child_upstream(command: Sequence[str]) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server command; yields `(read, write)`: `read.receive()` returns the next
    `SessionMessage` the server wrote (raises `anyio.EndOfStream` once its stdout ended),
    `await write.send(message)` writes one line to its stdin (raises
    `anyio.ClosedResourceError` once it cannot be written). On exit its stdin is closed, then
    it gets the stdio shutdown sequence (wait, SIGTERM, SIGKILL); what it still writes to
    stdout meanwhile is read and dropped, so a full pipe does not keep it from exiting.

    Raises:
        OSError: the command cannot be started.
    """
    loop = asyncio.get_running_loop()
    child_in, to_child = os.pipe()
    try:
        from_child, child_out = os.pipe()
    except BaseException:
        os.close(child_in)
        os.close(to_child)
        raise
    try:
        process = await anyio.open_process(
            list(command), stdin=child_in, stdout=child_out, stderr=None
        )
    except BaseException:
        for fd in (to_child, from_child):
            os.close(fd)
        raise
    finally:  # the child's ends are the child's alone: its stdout ends when it exits
        os.close(child_in)
        os.close(child_out)
    writer = _ServerWriter(loop, to_child)
    reader = _ServerReader(loop, from_child)
    try:
        try:
            yield reader, writer
        finally:
            with anyio.CancelScope(shield=True):
                writer.close()
                reader.discard()
                with anyio.move_on_after(SHUTDOWN_GRACE):
                    await process.wait()
                if process.returncode is None:
                    process.terminate()
                    with anyio.move_on_after(SHUTDOWN_GRACE):
                        await process.wait()
    finally:
        writer.close()
        reader.release()
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()


class _ServerWriter:
    """The send side of the upstream pair: each message written as one line to the server's
    stdin (a non-blocking pipe). A send returns once its line is in the pipe: at once when
    the pipe has room, else when the loop's writer callback has written the rest (senders
    meanwhile queue behind it, in order)."""

    __slots__ = ("_closed", "_drained", "_fd", "_loop", "_pending")

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        os.set_blocking(fd, False)
        self._loop = loop
        self._fd = fd
        self._pending = bytearray()  # bytes not yet in the pipe, in order
        self._drained: list[asyncio.Future[None]] = []  # senders waiting for `_pending`
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            data = encode(item)
        except Exception:
            logger.exception("a client message could not be written as JSON: dropped")
            return
        if not self._pending:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            except OSError:  # EPIPE: the server closed its stdin (or exited)
                self.close()
                raise anyio.ClosedResourceError from None
            if written == len(data):
                return
            self._pending += memoryview(data)[written:]
            self._loop.add_writer(self._fd, self._on_writable)
        else:
            self._pending += data
        drained = self._loop.create_future()
        self._drained.append(drained)
        await drained  # a cancelled sender's line is still written whole (never half a line)

    def _on_writable(self) -> None:
        try:
            written = os.write(self._fd, self._pending)
        except BlockingIOError:
            return
        except OSError:
            self.close()
            return
        del self._pending[:written]
        if self._pending:
            return
        self._loop.remove_writer(self._fd)
        drained, self._drained = self._drained, []
        for future in drained:
            if not future.done():
                future.set_result(None)

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        """Close the server's stdin (its end of input); lines not yet written are dropped and
        their senders raise `anyio.ClosedResourceError`."""
        self._closed = True
        if self._fd < 0:
            return
        if self._pending:
            self._loop.remove_writer(self._fd)
            self._pending.clear()
        drained, self._drained = self._drained, []
        for future in drained:
            if not future.done():
                future.set_exception(anyio.ClosedResourceError())
        os.close(self._fd)
        self._fd = -1


class _ServerReader:
    """The receive side of the upstream pair: the server's stdout (a non-blocking pipe) read
    by the loop's reader callback, cut into lines, each decoded (lines that are not JSON-RPC
    messages are dropped and logged: the client never sees bytes the guard has not read) and
    queued in order for `receive`, at most `READ_AHEAD` bytes of them (and one read more)."""

    __slots__ = (
        "_buffers",
        "_closed",
        "_discarding",
        "_ended",
        "_fd",
        "_getter",
        "_held",
        "_items",
        "_lines",
        "_loop",
        "_reading",
        "_view",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        os.set_blocking(fd, False)
        self._loop = loop
        self._fd = fd
        self._lines = FedLines()
        # Read into a buffer of its own: `os.read(fd, 256 KiB)` allocates past glibc's mmap
        # threshold on every read (as `_relay._Reader`).
        buffer = bytearray(chunk_size())
        self._buffers = [buffer]
        self._view = memoryview(buffer)
        self._items: deque[tuple[SessionMessage, int]] = deque()  # (message, its line's bytes)
        self._held = 0  # bytes of the lines in `_items`
        self._getter: asyncio.Future[None] | None = None
        self._ended = False  # the server's stdout ended (or could not be read)
        self._closed = False  # the consumer closed this side
        self._discarding = False
        self._reading = True
        loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            size = os.readv(self._fd, self._buffers)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            size = 0
        chunk = self._view[:size].tobytes()
        if self._discarding:
            if not chunk:
                self._stop_reading()
            return
        lines = self._lines
        if chunk:
            lines.feed(chunk)
        else:
            lines.finish()
            self._ended = True
            self._stop_reading()
        items = self._items
        while True:
            try:
                line = lines.next_line()
            except LineTooLong as exc:
                logger.warning("server stdout: %s: dropped", exc)
                continue
            if line is None:
                break
            item = decode(line)
            if isinstance(item, Exception):
                logger.warning("server stdout: a line that is not a JSON-RPC message: dropped")
                continue
            items.append((item, len(line)))
            self._held += len(line)
        if self._held >= READ_AHEAD and self._reading:
            self._stop_reading()  # until the consumer took every one: the pipe holds the rest
        getter = self._getter
        if getter is not None and not getter.done() and (items or self._ended):
            getter.set_result(None)

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def _start_reading(self) -> None:
        if not self._reading and not self._ended and self._fd >= 0:
            self._reading = True
            self._loop.add_reader(self._fd, self._on_readable)

    async def receive(self) -> SessionMessage:
        items = self._items
        while not items:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._ended:
                raise anyio.EndOfStream
            self._start_reading()
            self._getter = getter = self._loop.create_future()
            try:
                await getter
            finally:
                self._getter = None
        item, size = items.popleft()
        self._held -= size
        return item

    def close(self) -> None:
        """The consumer is done: nothing more is read for it (`receive` raises
        `anyio.ClosedResourceError`)."""
        self._closed = True
        self._items.clear()
        self._held = 0
        self._stop_reading()
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    async def aclose(self) -> None:
        self.close()

    def discard(self) -> None:
        """From now on what the server writes is read and dropped (its shutdown: a server
        blocked on a full stdout would not see its stdin close)."""
        self.close()
        self._discarding = True
        if not self._ended and self._fd >= 0:
            self._reading = True
            self._loop.add_reader(self._fd, self._on_readable)

    def release(self) -> None:
        """Stop reading for good and close the pipe."""
        self.close()
        if self._fd >= 0:
            with suppress(OSError):
                os.close(self._fd)
            self._fd = -1
