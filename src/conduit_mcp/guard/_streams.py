"""The seam for SDK stream pairs: SDK messages in, engine verdicts applied.

Not a public module. `GuardedWriteStream.send` hands each outgoing message to the engine (a
refused request is queued as a local response and never written); `GuardedReadStream.receive`
hands each server message to the engine before the SDK sees it and applies the verdict (the
same object on "pass", a new message on "replace", nothing on "drop").

Which SDK's messages: a `Codec` turns a stream item into the plain JSON-RPC dict the engine
reads and the engine's answers back into items. `installed_codec()` picks the installed `mcp`'s:
`_codec2` (mcp 2.x), else `_codec1` (mcp 1.x). An item the codec does not recognise is never
handed on, in either direction (event `unchecked`, reason `unrecognized_message`, decision
`dropped`, the item's type in `details`); an exception from the transport passes to the SDK,
which reports it.

Structured concurrency: no task is started here. A local response wakes a reader parked on
the transport by cancelling the reader's own inner cancel scope; anyio delivers that
cancellation only to a task whose wait has not completed, so a message the transport already
handed over is never lost (memory object streams are cancel-safe).
"""

from __future__ import annotations

import collections
import functools
from typing import Any, Protocol, TypeVar

import anyio

from ._engine import Engine
from ._events import logger
from ._notify import loop_scheduler


class Codec(Protocol):
    """One SDK's stream items <-> plain JSON-RPC dicts (`_codec2`, `_codec1`)."""

    #: the SDK named in events, e.g. `"mcp 2.x"`.
    SDK: str

    def to_plain(self, item: Any) -> dict[str, Any] | None:
        """The JSON-RPC dict for `item`; `None` when it is not one of the SDK's messages."""

    def to_item(self, message: dict[str, Any]) -> Any:
        """The SDK's stream item for a JSON-RPC dict the engine wrote; raises if it cannot."""


@functools.cache
def installed_codec() -> Codec:
    """The codec of the installed `mcp`: 2.x when `mcp.types.jsonrpc` imports, else 1.x.

    Raises:
        ModuleNotFoundError: no `mcp` installed: one line naming the `mcp` extra and the
            command that installs it.
        ImportError: a release whose messages neither codec reads: the error importing the
            2.x codec raised.
    """
    try:
        from . import _codec2

        return _codec2
    except ImportError as no_mcp2:  # mcp 1.x: `mcp.types` is a module, not the 2.x package
        try:
            import mcp  # noqa: F401
        except ModuleNotFoundError:
            from .._program import install_command

            raise ModuleNotFoundError(
                f"conduit_mcp.guard needs the mcp extra (mcp is not installed): "
                f"{install_command('mcp')}",
                name="mcp",
            ) from None
        try:
            from . import _codec1
        except ImportError:
            raise no_mcp2 from None
        if not _codec1.MCP1:
            raise no_mcp2 from None
        return _codec1


class Connection:
    """One wrapped stream pair: its engine, its SDK's codec and the local answers waiting for
    the SDK (`codec`: `installed_codec()` unless given)."""

    def __init__(self, engine: Engine, codec: Codec | None = None) -> None:
        self.engine = engine
        self.codec = codec if codec is not None else installed_codec()
        self.local: collections.deque[Any] = collections.deque()
        self.reader: GuardedReadStream | None = None
        #: the transport's send stream (the server's side): a request of the guard's own
        #: is written there directly (`EngineBase.send_requests_to`).
        self.server: Any = None

    def inject(self, message: Any) -> None:
        self.local.append(message)
        if self.reader is not None:
            self.reader.wake()

    def _send_notice(self) -> None:
        """On the event loop: the engine's due `notifications/tools/list_changed`, to the SDK."""
        for message in self.engine.notice.take():
            item = self.encode(message)
            if item is not DROP:
                self.inject(item)

    async def _send_own(self, message: dict[str, Any]) -> None:
        """A request of the guard's own, written to the server as the SDK's item."""
        item = self.encode(message)
        if item is not DROP:
            await self.server.send(item)

    async def outbound(self, item: Any) -> bool:
        """Whether `item` is written: `False` when the engine answered it locally or the
        codec does not recognise it (refused: never written)."""
        if self.engine.notice.deliver is None:  # the first message: the loop is known now
            self.engine.notice.deliver = loop_scheduler(self._send_notice)
            if self.server is not None:
                self.engine.send_requests_to(self._send_own)
        plain = self.codec.to_plain(item)
        if plain is None:
            self.refuse(item, "outgoing")
            return False
        verdict = await self.engine.outbound(plain)
        if verdict.action == "answer" and verdict.message is not None:
            answer = self.encode(verdict.message)
            if answer is not DROP:
                self.inject(answer)
            return False
        return verdict.action != "drop"

    async def inbound(self, item: Any) -> Any:
        """What the SDK receives for `item`, or `DROP`."""
        plain = self.codec.to_plain(item)
        if plain is None:
            if isinstance(item, Exception):
                return item  # the transport's own error: the SDK reports it
            self.refuse(item, "incoming")
            return DROP
        verdict = await self.engine.inbound(plain)
        if verdict.action == "drop":
            return DROP
        if verdict.action == "replace" and verdict.message is not None:
            return self.encode(verdict.message)
        return item

    def encode(self, message: dict[str, Any]) -> Any:
        """The SDK's item for a message the engine wrote, or `DROP` (with an event) when the
        SDK's models refuse it: nothing the guard did not decide reaches the SDK."""
        try:
            return self.codec.to_item(message)
        except Exception as exc:
            logger.exception("guard could not build an SDK message; dropped")
            self.engine.emit(
                "unchecked",
                None,
                "guard_internal_error",
                "dropped",
                message=f"the guard's own message does not fit {self.codec.SDK}'s models",
                details={"error": type(exc).__name__, "sdk": self.codec.SDK},
            )
            return DROP

    def refuse(self, item: Any, direction: str) -> None:
        """Record that `item`, which the codec does not recognise, is never handed on."""
        kind = type(item)
        inner = getattr(item, "message", None)
        details = {
            "direction": direction,
            "type": f"{kind.__module__}.{kind.__qualname__}",
            "sdk": self.codec.SDK,
        }
        if inner is not None:
            root = getattr(inner, "root", inner)
            details["message_type"] = f"{type(root).__module__}.{type(root).__qualname__}"
        self.engine.emit(
            "unchecked",
            None,
            "unrecognized_message",
            "dropped",
            message=(
                f"an {direction} stream item that is not a JSON-RPC message of "
                f"{self.codec.SDK} ({details['type']}): never handed on"
            ),
            details=details,
        )


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
        try:
            written = await self._connection.outbound(item)
        except Exception:
            logger.exception("guard failed on an outgoing message")
            written = True
        if not written:
            return
        await self._inner.send(item)
