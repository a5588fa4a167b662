"""A session's POST of one JSON-RPC request answered by the listener itself, past the SDK's
transport: the request into the session's pump, its answer back as one JSON body, or as an
event stream once a message related to it comes first.

Not a public module. The SDK's `StreamableHTTPServerTransport` builds, per POST, a memory
stream pair, an `EventSourceResponse` with its task group and tasks (the response, the
writer, a ping, a disconnect listener), a second stream pair and a router hop: about two
thirds of the listener's CPU per call at 32 in flight (bench/profiles/proxy_x2_*). Here a
request costs one send into the pump's `Inbox` and an `asyncio` future; the client's
leaving is watched only past `WATCH_AFTER` (`_ClientWatch`). A notification or a response
from the client goes the same way, answered 202 once it is in the inbox. Everything else of
a session (its opening `initialize`, batches, the GET stream, DELETE, anything this module
does not recognise) stays with the SDK's transport, as do the sessions of an HTTP upstream.

Spec: MCP 2025-11-25 basic/transports "Streamable HTTP", "Sending Messages to the Server":
a POST of a request is answered `Content-Type: application/json` (one object) or
`text/event-stream` (the messages related to it, then the response); "Disconnection SHOULD
NOT be interpreted as the client cancelling its request": a client that leaves stops the
wait, nothing is sent upstream (its answer, when it comes, is dropped as the SDK drops it).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Final

import anyio
import orjson
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError

from ._stateless import RELATED_BUFFER, _answer, _ClientWatch, _EventStream, write_empty

logger = logging.getLogger("conduit_mcp.proxy")

#: Seconds into a lean request before its client's leaving is watched for (a task reading
#: its `receive`, `_ClientWatch`). Leaving a session's request only ends its wait (nothing
#: goes upstream), so it need not be seen at once; at 32 calls in flight a call takes ~15 ms
#: and the stateless path's 10 ms started a task for most of them.
WATCH_AFTER: Final = 1.0
#: The `Content-Type` values a lean request may carry (anything else: the SDK's transport).
_JSON_TYPES: Final = frozenset({"application/json", "application/json; charset=utf-8"})


class Context:
    """What `_server._pump_down_to_up` reads of a request (`metadata.request_context`, as the
    SDK's starlette `Request`): its headers (names lower-cased) and its ASGI scope."""

    __slots__ = ("headers", "scope")

    def __init__(self, scope: Any, headers: dict[str, str]) -> None:
        self.scope = scope
        self.headers = headers


class Inbox:
    """A session's client messages on their way to its pump, from the lean requests and from
    the SDK's transport (`_server._forward`), in the order sent. At most `limit` wait: a
    sender then waits for room (a server that stops reading holds its clients back, as the
    SDK's unbuffered stream did). Unlike an anyio memory stream, a send or receive that need
    not wait does not go round the event loop first (a checkpoint each).

    `send` raises `anyio.ClosedResourceError` once closed; `receive` raises
    `anyio.EndOfStream` once closed and empty."""

    __slots__ = ("_getter", "_items", "_limit", "_putters", "closed")

    def __init__(self, limit: int) -> None:
        self._items: deque[Any] = deque()
        self._limit = limit
        self._getter: asyncio.Future[None] | None = None
        self._putters: deque[asyncio.Future[None]] = deque()
        self.closed = False

    async def send(self, item: Any) -> None:
        while True:
            if self.closed:
                raise anyio.ClosedResourceError
            if len(self._items) < self._limit:
                break
            room = asyncio.get_running_loop().create_future()
            self._putters.append(room)
            try:
                await room
            except BaseException:
                if room.done() and not room.cancelled():
                    self._next_putter()  # woken, but leaving: the room goes to the next
                else:
                    try:
                        self._putters.remove(room)
                    except ValueError:
                        pass
                raise
        self._items.append(item)
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    async def receive(self) -> Any:
        while not self._items:
            if self.closed:
                raise anyio.EndOfStream
            self._getter = getter = asyncio.get_running_loop().create_future()
            try:
                await getter
            finally:
                self._getter = None
        item = self._items.popleft()
        self._next_putter()
        return item

    def _next_putter(self) -> None:
        while self._putters:
            room = self._putters.popleft()
            if not room.done():
                room.set_result(None)
                return

    def close(self) -> None:
        self.closed = True
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)
        while self._putters:
            room = self._putters.popleft()
            if not room.done():
                room.set_result(None)


class Waiter:
    """One lean request in flight: the messages related to it, in order, then its answer;
    `ended`: the session ended first."""

    __slots__ = ("_wake", "answer", "ended", "related")

    def __init__(self) -> None:
        self.answer: Any = None
        self.ended = False
        self.related: deque[Any] = deque()
        self._wake: asyncio.Future[None] | None = None

    def finish(self, answer: Any) -> None:
        self.answer = answer
        self._poke()

    def relate(self, message: Any) -> None:
        if len(self.related) >= RELATED_BUFFER:
            logger.debug("a message related to a request dropped: its client reads too slowly")
            return
        self.related.append(message)
        self._poke()

    def end(self) -> None:
        self.ended = True
        self._poke()

    def cancel(self) -> None:
        """Its client left (`_ClientWatch`, which sets `gone` first): the wait ends."""
        self._poke()

    def _poke(self) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def wait(self) -> None:
        """Until something happens (a related message, the answer, the session's end)."""
        self._wake = asyncio.get_running_loop().create_future()
        try:
            await self._wake
        finally:
            self._wake = None


def lean_message(body: bytes, headers: dict[str, str]) -> Any:
    """The message `body` holds when the lean path may take it: one JSON-RPC message (not an
    `initialize` request; a request's or a response's id a string or an integer) with
    `Content-Type: application/json` and an `Accept` naming both `application/json` and
    `text/event-stream` (as the SDK's transport requires): a `JSONRPCRequest`,
    `JSONRPCNotification`, `JSONRPCResponse` or `JSONRPCError`. `None`: the SDK's transport
    takes it (and answers whatever is wrong with it as before)."""
    if headers.get("content-type") not in _JSON_TYPES:
        return None
    accept = headers.get("accept", "")
    if accept.find("application/json") == -1 or accept.find("text/event-stream") == -1:
        return None
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return None
    method, rid = value.get("method"), value.get("id")
    if method == "initialize":
        return None
    if (method is None or "id" in value) and (
        isinstance(rid, bool) or not isinstance(rid, str | int)
    ):
        return None
    try:
        return jsonrpc_message_adapter.validate_python(value)
    except ValidationError:
        return None


async def accept(inbox: Any, message: Any, scope: Any, headers: dict[str, str], send: Any) -> bool:
    """A notification or a response from the client into the session's pump (`inbox`), then
    202 Accepted (as the SDK's transport answers them, but only once the message is on its
    way: a request the client sends next cannot overtake it). `False`: the session was
    closed (nothing was written)."""
    item = SessionMessage(
        message, metadata=ServerMessageMetadata(request_context=Context(scope, headers))
    )
    try:
        await inbox.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    await write_empty(send, 202)
    return True


async def answer(
    waiting: dict[Any, Waiter],
    inbox: Any,
    message: JSONRPCRequest,
    scope: Any,
    headers: dict[str, str],
    receive: Any,
    send: Any,
    watchers: set[asyncio.Task[None]],
) -> bool:
    """Send `message` into the session's pump (`inbox`) and write its answer to `send`.

    Args:
        waiting: the session's lean requests in flight by id (`_server._RelatingSink` hands
            their answers and related messages to them).
        inbox: the send side the session's pump reads.
        scope, headers: the POST's ASGI scope and its headers (names lower-cased).
        receive: the POST's ASGI receive (its body read): its `http.disconnect` is the
            client leaving.
        send: the POST's ASGI send.
        watchers: where a `_ClientWatch` keeps its task while it runs.

    Returns:
        `False` when the session was closed before the request could be sent (nothing was
        written: the caller answers it as an unknown session); else `True`.
    """
    rid = message.id
    waiter = Waiter()
    waiting[rid] = waiter
    stream = _EventStream(send, True)
    item = SessionMessage(
        message, metadata=ServerMessageMetadata(request_context=Context(scope, headers))
    )
    # No cancel scope (entering and leaving one was ~6 % of the listener's CPU a call): the
    # client's leaving wakes the wait (`Waiter.cancel`), and a request still waiting for room
    # in the inbox then goes on to the server (its answer dropped), as one sent just before.
    watch = _ClientWatch(receive, stream, waiter, None, watchers, WATCH_AFTER)
    try:
        try:
            await inbox.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        while not watch.gone:
            while waiter.related and not watch.gone:
                await stream.event(waiter.related.popleft())
            if waiter.answer is not None or waiter.ended:
                break
            await waiter.wait()
    finally:
        watch.stop()
        if waiting.get(rid) is waiter:
            del waiting[rid]
    if watch.gone:
        stream.done = True
        return True
    stream.done = True  # no keep-alive ping from now on
    if stream.lock is None:  # nothing else ever wrote: nothing to wait for
        await _answer(send, rid, waiter.answer, stream.streaming, False, True, True)
        return True
    async with stream.lock:  # a ping being written ends before the answer
        await _answer(send, rid, waiter.answer, stream.streaming, False, True, True)
    return True
