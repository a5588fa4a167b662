"""The seam for mcp 2.x stream pairs: SDK messages in, engine verdicts applied.

Not a public module. `GuardedWriteStream.send` hands each outgoing message to the engine (a
refused request is queued as a local response and never written); `GuardedReadStream.receive`
hands each server message to the engine before the SDK sees it and applies the verdict (the
same object on "pass", a new message on "replace", nothing on "drop").

Converting costs no copy: a JSON-RPC response's `result` and a request's `params` are plain
dicts inside the SDK's message models already; the engine reads them as they are.

Structured concurrency: no task is started here. A local response wakes a reader parked on
the transport by cancelling the reader's own inner cancel scope; anyio delivers that
cancellation only to a task whose wait has not completed, so a message the transport already
handed over is never lost (memory object streams are cancel-safe).
"""

from __future__ import annotations

import collections
from typing import Any, TypeVar

import anyio
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from ._engine import Engine
from ._events import logger


def to_plain(message: Any) -> dict[str, Any] | None:
    """The JSON-RPC dict the engine reads for an SDK message (`None`: not a JSON-RPC one)."""
    if isinstance(message, JSONRPCResponse):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, JSONRPCRequest):
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "method": message.method,
            "params": message.params,
        }
    if isinstance(message, JSONRPCNotification):
        return {"jsonrpc": "2.0", "method": message.method, "params": message.params}
    if isinstance(message, JSONRPCError):
        error = message.error
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "error": {"code": error.code, "message": error.message, "data": error.data},
        }
    return None


def to_session_message(message: dict[str, Any]) -> SessionMessage:
    """The SDK message for a JSON-RPC dict the engine wrote (a response or a request)."""
    if "error" in message:
        error = message["error"]
        return SessionMessage(
            JSONRPCError(
                jsonrpc="2.0",
                id=message["id"],
                error=ErrorData(
                    code=error["code"], message=error["message"], data=error.get("data")
                ),
            )
        )
    if "result" in message:
        return SessionMessage(
            JSONRPCResponse(jsonrpc="2.0", id=message["id"], result=message["result"])
        )
    return SessionMessage(
        JSONRPCRequest(
            jsonrpc="2.0", id=message["id"], method=message["method"], params=message.get("params")
        )
    )


class Connection:
    """One wrapped stream pair: its engine and the local answers waiting for the SDK."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.local: collections.deque[SessionMessage] = collections.deque()
        self.reader: GuardedReadStream | None = None

    def inject(self, message: SessionMessage) -> None:
        self.local.append(message)
        if self.reader is not None:
            self.reader.wake()

    async def outbound(self, item: SessionMessage) -> bool:
        """Whether `item` is written: `False` when the engine answered it locally."""
        plain = to_plain(item.message)
        if plain is None:
            return True
        verdict = await self.engine.outbound(plain)
        if verdict.action == "answer" and verdict.message is not None:
            self.inject(to_session_message(verdict.message))
            return False
        return verdict.action != "drop"

    async def inbound(self, item: Any) -> Any:
        """What the SDK receives for `item`, or `DROP`."""
        if not isinstance(item, SessionMessage):
            return item  # an exception from the transport
        plain = to_plain(item.message)
        if plain is None:
            return item
        verdict = await self.engine.inbound(plain)
        if verdict.action == "drop":
            return DROP
        if verdict.action == "replace" and verdict.message is not None:
            return to_session_message(verdict.message)
        return item


#: What `Connection.inbound` returns for a message the SDK must not receive.
DROP = object()


class _GuardedStream:
    """What both guarded ends share: the wrapped stream, the connection, closing."""

    def __init__(self, inner: Any, connection: Connection) -> None:
        self._inner = inner
        self._connection = connection

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    async def __aenter__(self: _S) -> _S:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_S = TypeVar("_S", bound=_GuardedStream)


class GuardedReadStream(_GuardedStream):
    """The receive side the SDK reads: server messages after the guard's decisions."""

    def __init__(self, inner: Any, connection: Connection) -> None:
        super().__init__(inner, connection)
        self._waiting: anyio.CancelScope | None = None
        #: The running backend's cancel-scope class, learned from the first `anyio.CancelScope()`:
        #: made directly it skips anyio's backend lookup on every message.
        self._scope_type: Any = None
        #: the sender's contextvars snapshot for the last item (Streamable HTTP), for the SDK.
        self.last_context: Any = None

    def wake(self) -> None:
        scope = self._waiting
        if scope is not None:
            scope.cancel()

    async def receive(self) -> Any:
        connection = self._connection
        while True:
            if connection.local:
                self.last_context = None
                return connection.local.popleft()
            got = False
            item: Any = None
            scope_type = self._scope_type
            if scope_type is None:
                scope = anyio.CancelScope()
                self._scope_type = type(scope)
            else:
                scope = scope_type()
            with scope:
                self._waiting = scope
                try:
                    item = await self._inner.receive()
                    got = True
                finally:
                    self._waiting = None
            if not got:
                continue  # woken for a local response
            self.last_context = getattr(self._inner, "last_context", None)
            decided = await connection.inbound(item)
            if decided is not DROP:
                return decided

    def __aiter__(self) -> GuardedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class GuardedWriteStream(_GuardedStream):
    """The send side the SDK writes: refused requests stop here."""

    async def send(self, item: Any, /) -> None:
        if isinstance(item, SessionMessage):
            try:
                written = await self._connection.outbound(item)
            except Exception:
                logger.exception("guard failed on an outgoing message")
                written = True
            if not written:
                return
        await self._inner.send(item)
