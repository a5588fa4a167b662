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
(`upstream/_headers.request_headers_for`). With traces on (`seam.tracing`, `_tracing.py`) each
client request is a span, ended by its answer, and goes upstream with its `traceparent` header.
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
    tracing: Any = getattr(seam, "tracing", None)

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
        span = token = None
        if tracing is not None and "method" not in message:  # an answer to a request
            span = tracing.span_of(message.get("id"))
            if span is not None:
                token = tracing.enter(span)
        try:
            action, other = await link.from_server(message)
        finally:
            if token is not None:
                tracing.leave(token)
        if span is not None:
            _answered(tracing, message, action, other)
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
            await _up(client, link, session, seam, write, tracing)
        tg.cancel_scope.cancel()
    return 0


async def _up(
    client: ClientSide,
    link: Any,
    session: UpstreamSession,
    seam: GuardSeam,
    write: Callable[[bytes], Awaitable[None]],
    tracing: Any = None,
) -> None:
    """Client -> guard -> upstream, in order, until the client's input ends (each request a
    span when `tracing` is on: see `_traced`)."""
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
        if tracing is not None:
            await _traced(message, data, link, session, seam, write, tracing)
            continue
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


async def _traced(
    message: dict[str, Any],
    data: bytes,
    link: Any,
    session: UpstreamSession,
    seam: GuardSeam,
    write: Callable[[bytes], Awaitable[None]],
    tracing: Any,
) -> None:
    """One client message with traces on: a request's span is started (continuing the
    client's `_meta.traceparent`) and current while the guard decides (its decisions are the
    span's children); the guard's own answer ends it `refused`, and what goes upstream carries
    the span's `traceparent` header (W3C Trace Context) beside its routing headers."""
    span = tracing.request(message)
    token = tracing.enter(span) if span is not None else None
    try:
        action, other = await link.from_client(message)
        if action == "answer":
            if span is not None:
                tracing.answered(message.get("id"), "refused", _reason(other))
            answer = _line(other)
            if answer is not None:
                await write(answer)
            return
        sent = message if action == "pass" else other
        if action == "drop" or sent is None:  # nothing goes up, nothing will answer it
            if span is not None:
                tracing.answered(message.get("id"), "refused")
            return
        headers = _routing(sent, seam) or {}
        if span is not None:
            headers.update(tracing.traceparent(span))
        body = data.rstrip(b"\n") if action == "pass" else None
        await session.send(sent, body, headers or None)
    finally:
        if token is not None:
            tracing.leave(token)


def _answered(tracing: Any, message: dict[str, Any], action: str, other: Any) -> None:
    """End the span of the request `message` answers: `error` for the server's own error,
    `withheld` when the guard replaced the answer, else `passed`; an error the proxy wrote
    for the upstream (unreachable, refused) with the guard's reason in `error.data.reason` is
    `refused`."""
    request_id = message.get("id")
    if "error" in message:
        reason = _reason(message)
        tracing.answered(request_id, "refused" if reason else "error", reason)
    elif action == "pass":
        tracing.answered(request_id, "passed")
    else:
        tracing.answered(request_id, "withheld", _reason(other))


def _reason(answer: Any) -> str | None:
    """The guard's reason code in an error answer (`error.data.reason`), if any."""
    error = answer.get("error") if isinstance(answer, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    reason = data.get("reason") if isinstance(data, dict) else None
    return reason if isinstance(reason, str) else None


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
