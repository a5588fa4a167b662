"""The stdio-to-stdio relay: newline-delimited JSON-RPC read as bytes from each side, each line
parsed once, decided by the guard, and written on as read when the guard lets it pass.

Not a public module. No SDK stream pair, no task or memory stream between the two pipes: one
task per direction reads a line, asks the guard (`MessageLink`) and writes, so messages keep
their order and a round trip costs two wake-ups of the proxy. Lines that are no message are
answered (client) or dropped (server) as the SDK-based transport does.

Spec: MCP 2025-11-25 basic/transports "stdio" (newline-delimited JSON-RPC on stdin/stdout,
UTF-8, no embedded newlines); JSON-RPC 2.0 section 5.1 (the error for an unreadable request).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ._seam import MessageLink
from ._wire import LineReader, dump_message, invalid_line_answer, read_message

logger = logging.getLogger("conduit_mcp.proxy")

#: Writes one line (bytes, newline included) to one side; raises `OSError` when it is gone.
WriteLine = Callable[[bytes], Awaitable[None]]


class ServerGone(Exception):
    """The server's stdin is closed: client messages can no longer be written."""


class ServerPipe:
    """The server's stdin (an asyncio subprocess `StreamWriter`): one line per `write`, waiting
    while the pipe is full."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.closed = False

    async def write(self, data: bytes) -> None:
        """Write one line.

        Raises:
            ServerGone: the server closed its stdin (or exited).
        """
        if self.closed:
            raise ServerGone
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:  # BrokenPipe, ConnectionReset; a closed transport
            self.closed = True
            raise ServerGone from exc

    async def write_message(self, message: dict[str, Any]) -> None:
        """Write a message of the proxy's own (a listing before an unlisted call)."""
        await self.write(dump_message(message))

    async def close(self) -> None:
        """Close the server's stdin (its end of input). Idempotent."""
        if self.closed:
            return
        self.closed = True
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, RuntimeError):
            pass


class Relay:
    """Both directions of one stdio connection through the guard.

    Args:
        link: the guard's decisions (`GuardSeam.connect`).
        to_client: writes a line to the client (raises `OSError` when the client is gone).
        to_server: the server's stdin.
    """

    def __init__(self, link: MessageLink, to_client: WriteLine, to_server: ServerPipe) -> None:
        self._link = link
        self._to_client = to_client
        self._to_server = to_server
        self._client_gone = False
        self._notices: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Deliver the guard's own notifications to the client (call on the relay's loop)."""
        self._link.send_notices_to(self._notify)

    def _notify(self, messages: list[dict[str, Any]]) -> None:
        task = asyncio.get_running_loop().create_task(self._write_notices(messages))
        self._notices.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._notices.discard)

    async def _write_notices(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            await self._client_message(message)

    async def client_to_server(self, lines: LineReader) -> None:
        """Client -> guard -> server, in order, until the client's input ends or the server's
        stdin closes. A line that is no message is answered with a JSON-RPC error and not sent;
        a line past `MAX_LINE` is dropped (logged)."""
        link = self._link
        while (line := await lines.next_kept("client input")) is not None:
            parsed = read_message(line)
            if parsed is None:
                logger.warning("client sent a line that is not a JSON-RPC message: answered")
                await self._client(dump_message(invalid_line_answer(line)))
                continue
            del line  # a large message is held once, as `data`
            message, data = parsed
            try:
                action, other = await link.from_client(message)
                if action == "answer":
                    await self._client_message(other)
                    continue
                if action == "drop":
                    continue
                if action == "replace":
                    replaced = _dump(other)
                    if replaced is None:
                        continue
                    data = replaced
                await self._to_server.write(data)
            except ServerGone:
                logger.info("the server's stdin is closed: client messages are no longer sent")
                return
            finally:
                del message, data, parsed

    async def server_to_client(self, lines: LineReader) -> None:
        """Server -> guard -> client, in order, until the server's output ends. A line that is
        no message, or past `MAX_LINE`, is dropped (logged): the client never sees bytes the
        guard has not read. After the client went away, the server's output is still read
        (and discarded) so the server never blocks on a full pipe."""
        link = self._link
        while (line := await lines.next_kept("server stdout")) is not None:
            parsed = read_message(line)
            del line
            if parsed is None:
                logger.warning("server stdout: a line that is not a JSON-RPC message: dropped")
                continue
            message, data = parsed
            del parsed
            action, other = await link.from_server(message)
            del message
            if action == "drop":
                continue
            if action != "pass":
                await self._client_message(other)
                continue
            await self._client(data)
            del data

    async def _client_message(self, message: dict[str, Any] | None) -> None:
        data = _dump(message)
        if data is not None:
            await self._client(data)

    async def _client(self, data: bytes) -> None:
        if self._client_gone:
            return
        try:
            await self._to_client(data)
        except OSError:  # the client went away
            logger.info("client stdout closed")
            self._client_gone = True


def _dump(message: dict[str, Any] | None) -> bytes | None:
    """A message the guard wrote, as a line (`None`, logged: JSON cannot hold it)."""
    try:
        return dump_message(message)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        logger.exception("a message the guard wrote could not be written as JSON: dropped")
        return None
