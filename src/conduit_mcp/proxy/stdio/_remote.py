"""The stdio proxy with an HTTP upstream: the client's lines through the guard to the upstream's
session client, the upstream's messages through the guard to the client's stdout.

Not a public module (`run_stdio(..., upstream=...)` in `_run` serves with it). Each line is
parsed once (`_message.read_message`, as the child relay does) and decided on by the guard
over plain JSON-RPC `dict`s (`GuardSeam.connect`); a message it lets pass is POSTed as the
bytes the client wrote. No SDK stream pair or model sits on the way: the upstream's messages
come parsed from `upstream/_session`, each written to the client as one line. A line that is
no message is answered (-32700 / -32600, a request whose id is null included) and never sent.

Spec: MCP 2025-11-25 basic/transports "stdio" (newline-delimited JSON-RPC on stdin/stdout) and
"Streamable HTTP" (`upstream/_session`); 2026-07-28 requests carry their routing headers
(`upstream/_headers.request_headers_for`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from mcp_types import PROTOCOL_VERSION_META_KEY

from .._message import dump_message, invalid_line_answer, read_message
from .._seam import GuardSeam
from .._settings import HttpUpstream
from ..upstream._headers import request_headers_for
from ..upstream._session import UpstreamSession
from ._framing import LineReader, LineTooLong

logger = logging.getLogger("conduit_mcp.proxy")


class ClientSide(Protocol):
    """The client's stdin and stdout (`_run._ClientStdio`)."""

    async def read_chunk(self) -> bytes: ...

    async def write(self, data: bytes) -> None: ...


async def serve_remote(seam: GuardSeam, client: ClientSide, upstream: HttpUpstream) -> int:
    """Serve the client on stdio with `upstream` as its server until the client closes our
    stdin; returns 0.

    Args:
        seam: the guard.
        client: our stdin and stdout.
        upstream: the Streamable HTTP server.
    """
    session: UpstreamSession | None = None
    gone = anyio.Event()

    async def write(data: bytes) -> None:
        if gone.is_set():
            return
        try:
            await client.write(data)
        except OSError:  # the client went away
            logger.info("client stdout closed")
            gone.set()

    async def own(request: dict[str, Any]) -> None:
        """A request of the guard's own (its listing before an unlisted call)."""
        assert session is not None
        await session.send(request, None, _routing(request, seam))

    link = seam.connect(own, transport="streamable-http")

    async def down(message: dict[str, Any]) -> None:
        """A message from the upstream: through the guard to the client."""
        action, other = await link.from_server(message)
        if action == "drop":
            return
        line = _line(message if action == "pass" else other)
        if line is not None:
            await write(line)

    def notices(messages: list[dict[str, Any]]) -> None:
        """The guard's own notifications (`notifications/tools/list_changed`)."""
        for message in messages:
            line = _line(message)
            if line is not None:
                tg.start_soon(write, line)

    async with anyio.create_task_group() as tg:
        async with UpstreamSession(upstream, down) as session:
            link.send_notices_to(notices)
            await _up(client, link, session, seam, write)
        tg.cancel_scope.cancel()
    return 0


async def _up(
    client: ClientSide,
    link: Any,
    session: UpstreamSession,
    seam: GuardSeam,
    write: Callable[[bytes], Awaitable[None]],
) -> None:
    """Client -> guard -> upstream, in order, until the client's input ends."""
    lines = LineReader(client.read_chunk, keep_newline=True)
    while True:
        try:
            line = await lines.next_line()
        except LineTooLong as exc:
            logger.warning("client input: %s: dropped", exc)
            continue
        if line is None:
            return
        parsed = read_message(line)
        if parsed is None:
            logger.warning("client sent a line that is not a JSON-RPC message: answered")
            answer = _line(invalid_line_answer(line))
            if answer is not None:
                await write(answer)
            continue
        del line
        message, data = parsed
        action, other = await link.from_client(message)
        if action == "answer":
            answer = _line(other)
            if answer is not None:
                await write(answer)
            continue
        if action == "drop":
            continue
        if action == "pass":
            await session.send(message, data.rstrip(b"\n"), _routing(message, seam))
        elif other is not None:
            await session.send(other, None, _routing(other, seam))


def _routing(message: dict[str, Any], seam: GuardSeam) -> dict[str, str] | None:
    """A 2026-07-28 message's own headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    `Mcp-Param-*`); `None` for a session's message (the session client stamps those)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get(PROTOCOL_VERSION_META_KEY), str):
        return None
    return request_headers_for(message, seam.raw_tool)


def _line(message: dict[str, Any] | None) -> bytes | None:
    """A message as one line to the client (`None`, logged: JSON cannot hold it)."""
    if message is None:
        return None
    try:
        return dump_message(message)
    except (TypeError, ValueError):
        logger.exception("a message could not be written as JSON: dropped")
        return None
