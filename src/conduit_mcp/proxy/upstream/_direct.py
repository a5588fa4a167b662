"""2026-07-28 stateless requests to a Streamable HTTP upstream without the SDK's client: each
client request is one POST on a pooled keep-alive connection (`_pool.H1Pool`), its answer read
as one JSON object or as an event stream, every message through the guard as a plain
JSON-RPC `dict` (`GuardSeam.connect`, the engine the stdio relay uses).

Not a public module.

Spec: MCP 2026-07-28 basic/transports "Streamable HTTP": a request is POSTed with `Accept:
application/json, text/event-stream`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
`Mcp-Param-*` headers its tool's `x-mcp-header` arguments call for (`_headers.request_headers`,
computed from the message the guard let through); the answer is `application/json` (the
response) or `text/event-stream` (messages related to the request, last the response); closing
the response stream cancels the request. `Authorization` from the client is forwarded with the
request, never logged. Request ids are made unique on the way up (one guard engine serves every
client) and restored on the way down; the `subscriptionId` a listen stream's notifications name
is mapped back alike.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any, Final

import orjson

from .._message import _is_message, read_message
from .._seam import GuardSeam, MessageLink
from .._settings import HttpUpstream
from ._headers import request_headers_for
from ._pool import H1Pool, UpstreamUnreachable

logger = logging.getLogger("conduit_mcp.proxy")

#: `_meta` key naming the `subscriptions/listen` request a notification belongs to.
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"
#: The largest answer (JSON body or one SSE event) read from the upstream (bytes).
MAX_ANSWER: Final = 512 * 1024 * 1024
_ACCEPT: Final = "application/json, text/event-stream"
#: The credentials of the client request being gated: a listing the guard makes for that
#: request goes with them (never with another client's).
_AUTHORIZATION: contextvars.ContextVar[tuple[str | None, str | None]] = contextvars.ContextVar(
    "conduit_mcp_proxy_authorization", default=(None, None)
)


class UpstreamFailed(Exception):
    """The upstream did not answer with a JSON-RPC message: `message` says how (no
    credentials, no body content)."""


class DirectUpstream:
    """The guard and a connection pool for one `HttpUpstream`, shared by every stateless
    request of the listener.

    Args:
        seam: the guard.
        upstream: the server (its `headers` go with every request).
    """

    def __init__(self, seam: GuardSeam, upstream: HttpUpstream) -> None:
        self.seam = seam
        self.pool = H1Pool(upstream.url, {**upstream.headers, "accept": _ACCEPT})
        self.link: MessageLink = seam.connect(self._own, transport="streamable-http")
        self._ids = itertools.count(1)
        #: open `subscriptions/listen` streams: upstream id -> writes one of the guard's own
        #: notifications (`notifications/tools/list_changed`) on that client's stream.
        self.listening: dict[str, Callable[[dict[str, Any]], object]] = {}
        self._delivering = False

    def _deliver(self, messages: list[dict[str, Any]]) -> None:
        """The guard's own notifications, each stamped with the listen stream it is for
        (`guard._notify`): handed to that stream's writer; one whose stream has closed is
        dropped (its client sees the change at its next listing)."""
        for message in messages:
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            stream = meta.get(SUBSCRIPTION_ID_META_KEY) if isinstance(meta, dict) else None
            write = self.listening.get(stream) if isinstance(stream, str) else None
            if write is not None:
                write(message)

    def upstream_id(self) -> str:
        """A request id no other request in flight upstream has."""
        return f"conduit-{next(self._ids)}"

    async def _own(self, request: dict[str, Any]) -> None:
        """A request of the guard's own (the listing before an unlisted call): POSTed with the
        credentials of the call that needed it, every message it brings back through the
        guard (which keeps the answer from any client)."""

        async def ignore(message: dict[str, Any]) -> None:
            return None

        authorization, version = _AUTHORIZATION.get()
        try:
            await self.post(request, authorization, version, ignore)
        except UpstreamFailed as exc:
            logger.warning("the guard's own listing failed: %s", exc)

    async def notify(
        self, message: dict[str, Any], authorization: str | None, version: str | None
    ) -> None:
        """A client notification: through the guard, then POSTed (the answer, 202, unread).
        `version`: the client's `MCP-Protocol-Version`."""
        action, replaced = await self.link.from_client(message)
        if action in ("drop", "answer"):
            return
        sent = replaced if replaced is not None else message
        headers = _headers(sent, self.seam, authorization, version)
        try:
            async with self.pool.post(_dump(sent), headers):
                pass
        except UpstreamUnreachable as exc:
            logger.warning("a notification could not reach the upstream: %s", exc)

    async def gate(
        self, request: dict[str, Any], authorization: str | None, version: str | None
    ) -> tuple[str, dict[str, Any] | None]:
        """The guard on a client request (ids already made unique): `("pass", message to
        send)` or `("answer", the guard's response)`; a request the guard drops is answered
        with an error. `authorization`, `version`: the client's headers (for a listing the
        guard makes first)."""
        if not self._delivering:  # the first request: on the loop the guard's notices use
            self._delivering = True
            self.link.send_notices_to(self._deliver)
        _AUTHORIZATION.set((authorization, version))
        action, replaced = await self.link.from_client(request)
        if action == "answer":
            return "answer", replaced
        if action == "drop":
            error = {"code": -32603, "message": "conduit-mcp proxy: the guard dropped the request"}
            return "answer", {"jsonrpc": "2.0", "id": request["id"], "error": error}
        return "pass", replaced if replaced is not None else request

    async def forget(self, upstream_id: str) -> None:
        """The guard stops waiting for `upstream_id` (its client left, or the upstream failed)."""
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": upstream_id},
        }
        await self.link.from_client(cancel)

    async def post(
        self,
        request: dict[str, Any],
        authorization: str | None,
        version: str | None,
        related: Callable[[dict[str, Any]], Any],
    ) -> dict[str, Any] | None:
        """POST `request` (already through the guard); each message of the answer through the
        guard; `await related(message)` for each one before the response (those the guard
        lets through); returns the response as the guard let it through, or `None` when the
        guard kept it back (the answer to its own listing, or one it refused to pass).

        Raises:
            UpstreamFailed: unreachable, an HTTP error without a JSON-RPC answer, an answer
                that is not JSON-RPC, or a stream that ended without the response.
        """
        upstream_id = request["id"]
        try:
            async with self.pool.post(
                _dump(request), _headers(request, self.seam, authorization, version)
            ) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "text/event-stream" and response.status == 200:
                    async for data in _sse_data(response.body()):
                        message = _parse(data)
                        del data
                        if message is None:
                            logger.warning("an upstream event that is not JSON-RPC: dropped")
                            continue
                        answer = "method" not in message and message.get("id") == upstream_id
                        seen = await self._guarded(message)
                        if answer:
                            return seen
                        if seen is not None and "method" in seen:
                            await related(seen)
                    raise UpstreamFailed("the event stream ended without the response")
                data = await response.read_all(MAX_ANSWER)
                if data is None:
                    raise UpstreamFailed("the answer is larger than the proxy accepts")
                if kind != "application/json":
                    raise UpstreamFailed(f"HTTP {response.status} ({kind or 'no content type'})")
        except UpstreamUnreachable as exc:
            raise UpstreamFailed(f"the upstream server could not be reached ({exc})") from None
        message = _parse(data)
        del data  # the body is not held beside the parsed answer
        if message is None or "method" in message:
            raise UpstreamFailed(f"HTTP {response.status}: no JSON-RPC response in the body")
        if message.get("id") not in (upstream_id, None):
            raise UpstreamFailed("the response names another request")
        return await self._guarded(message)

    async def _guarded(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """One message from the upstream through the guard: what the client may see, or
        `None` (dropped by the guard)."""
        action, replaced = await self.link.from_server(message)
        if action == "drop":
            return None
        return replaced if replaced is not None else message


def restore(message: dict[str, Any], upstream_id: str, client_id: Any) -> dict[str, Any]:
    """`message` with the client's ids: a response's `id`, a listen stream notification's
    `subscriptionId`."""
    if "method" not in message:
        return {**message, "id": client_id}
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID_META_KEY) == upstream_id:
        meta = {**meta, SUBSCRIPTION_ID_META_KEY: client_id}
        return {**message, "params": {**params, "_meta": meta}}  # type: ignore[dict-item]
    return message


def _headers(
    message: dict[str, Any], seam: GuardSeam, authorization: str | None, version: str | None
) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        **request_headers_for(message, seam.raw_tool, version),
    }
    if authorization:
        headers["authorization"] = authorization
    return headers


def _dump(message: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError:  # a lone surrogate read from a \\ud800 escape: escaped again
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode()


def _parse(data: bytes | bytearray) -> dict[str, Any] | None:
    """One JSON-RPC message as the guard reads it (`_message.read_message`'s reading, without
    its copy for the bytes to relay: the proxy writes each message itself)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    if value is not None and _is_message(value):
        return value  # type: ignore[no-any-return]
    del value
    parsed = read_message(bytes(data))
    return parsed[0] if parsed is not None else None


async def _sse_data(pieces: Any) -> Any:
    """The `data` of each event of an event stream (WHATWG HTML "Server-sent events":
    lines end with CRLF, LF or CR; `data:` lines joined with LF; an event ends at a blank
    line; comments and other fields ignored). Each byte is scanned once, and an event's data
    is held once (the buffer is trimmed before the event is handed on)."""
    buffer = bytearray()
    data: bytearray | None = None
    scanned = 0  # no line end in buffer[:scanned] after the last line taken
    async for piece in pieces:
        buffer += piece
        start = 0
        events: list[bytearray] = []
        while True:
            cut = _line_end(buffer, max(start, scanned))
            if cut is None:
                scanned = max(start, len(buffer) - 1)  # a CR last may start a CRLF
                break
            end, after = cut
            if end == start:  # a blank line: the event ends
                if data is not None:
                    events.append(data)
                    data = None
            elif buffer.startswith(b"data", start):
                colon = buffer.find(b":", start, end)
                if colon == start + 4 or (colon == -1 and end == start + 4):
                    begin = end if colon == -1 else colon + 1
                    if begin < end and buffer[begin] == 0x20:
                        begin += 1
                    if data is None:
                        data = buffer[begin:end]
                    else:
                        data += b"\n"
                        data += buffer[begin:end]
                    if len(data) > MAX_ANSWER:
                        raise UpstreamFailed("an event is larger than the proxy accepts")
            start = scanned = after
        if start:
            del buffer[:start]
            scanned -= start
        events.reverse()
        while events:  # popped: the generator keeps no reference while the event is read
            yield events.pop()
        if len(buffer) > MAX_ANSWER:
            raise UpstreamFailed("an event is larger than the proxy accepts")
    if data is not None:
        yield data


def _line_end(buffer: bytearray, start: int) -> tuple[int, int] | None:
    """`(end of the line, start of the next)` for the first line end at or after `start`, or
    `None` when there is none yet (a CR last might be the first half of CRLF)."""
    cr = buffer.find(b"\r", start)
    lf = buffer.find(b"\n", start, cr if cr != -1 else len(buffer))
    if lf != -1:
        return lf, lf + 1
    if cr == -1 or cr + 1 >= len(buffer):
        return None
    return cr, cr + 2 if buffer[cr + 1] == 0x0A else cr + 1
