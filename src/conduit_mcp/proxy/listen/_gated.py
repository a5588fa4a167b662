"""A session's downstream write stream under its caller's tool policy (`--auth jwt`).

Not a public module. `GatedSink` sits between the session's guarded read side and its
client: it applies the caller's policy to the answers of the session's `tools/list` and
`tools/call` requests (`CallerGate.answered`), answers its refusals, tells the client of a
new policy version that changes what it would see, and keeps the call audit whole:

- every request of the session in flight is known by its id (`answer_key`: as the guard and
  the SDK match a response to it), whatever its method, so an answer is never paired with
  another request's call; a request reusing such an id is answered Invalid Request at once,
  never sent on (MCP basic "Requests": an id MUST NOT have been used before by the requestor
  in the same session), and its row says so (`refused`, `request_id_in_use`); so is one
  reusing the id of a request handed to the guard and neither written nor answered yet
  (`_seam.not_written`: a cancelled call let go whose guard's refusal is still on its way,
  which would be taken for the new call's answer);
- a tools/call the client cancels keeps its id (and its row's subject) until its answer comes
  (the answer's own verdict: one the guard passed before it read the cancellation) or until
  the session ends or `CANCELLED_KEPT` newer cancellations push it out: then its row is
  `unanswered`, reason `cancelled`;
- a tools/call still in flight when the session ends: `unanswered`, reason `session_closed`
  (`cancelled` for one cancelled); one never written to the server (it waited for the
  proxy's own tools/list, `GuardSeam.before_call`, or the guard had neither written nor
  answered it: `_seam.not_written`): `refused` with that reason, as a call the guard
  answered unsent (the server never got it).

Spec: MCP 2025-11-25 basic "Requests"; basic/utilities/cancellation (the receiver of a
cancelled request's late response MAY ignore it).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Final

import anyio
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

from .._seam import answer_key, never_written, not_written, server_wrote
from ._callers import CallerGate

#: A session's requests in flight at once, at most (the guard's own table holds 4,096): past
#: it a request is refused, so none goes on unwatched.
MAX_WATCHED: Final = 4096
#: Cancelled requests whose ids a session keeps (refused for reuse; a cancelled call's late
#: answer still audited as its own), the oldest let go first.
CANCELLED_KEPT: Final = 256

#: What `GatedSink` keeps per request in flight: `(raw request, caller)` for a tools/list or
#: tools/call (the gate reads its answer), `None` for any other method.
_Entry = tuple[dict[str, Any], Any] | None
_WATCHED: Final = frozenset({"tools/list", "tools/call"})


class GatedSink:
    """A session's downstream write stream with the tool policy of its caller (`CallerGate`):
    the answers to its `tools/list` and `tools/call` requests as that caller may see them, its
    refusals, and `notifications/tools/list_changed` when a new policy version changes what it
    would see (told from the policy follower's thread through `changed`). See the module
    docstring for the ids it keeps and the rows it writes.

    Args:
        inner: the session's downstream write stream (`send(SessionMessage)`, `aclose()`).
        gate: the listener's `CallerGate`.
        caller: the session's caller (a request without one of its own is the session's).
        guarded_write: the session's guarded write side (`GuardSeam.wrap`), whose record
            tells a call handed to the guard and never written (`_seam.not_written`), or
            `None` (every call handed on counts as written).
    """

    def __init__(
        self, inner: Any, gate: CallerGate, caller: Any, guarded_write: Any = None
    ) -> None:
        self._inner = inner
        self._gate = gate
        self._caller = caller
        self._guarded_write = guarded_write
        #: the session's requests in flight, by `answer_key` (see `_Entry`)
        self._pending: dict[Any, _Entry] = {}
        #: cancelled requests not answered yet, by `answer_key`, oldest first
        self._cancelled: OrderedDict[Any, _Entry] = OrderedDict()
        #: the tools/calls in flight not handed to the guard's write side yet (`writing`)
        self._unwritten: set[Any] = set()
        #: their ids as written, by `answer_key` (what `_seam.not_written` reads)
        self._ids: dict[Any, Any] = {}
        self._loop = asyncio.get_running_loop()
        self._changes_send, self._changes = anyio.create_memory_object_stream[None](1)
        self.key = gate.sessions.opened(caller, self._changed)

    def _changed(self) -> None:
        """From the follower's thread: wake `tell_changes` (a change already waiting is
        enough: one list_changed tells of both)."""
        try:
            self._loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop is closed: the proxy is stopping
            pass

    def _wake(self) -> None:
        try:
            self._changes_send.send_nowait(None)
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def tell_changes(self) -> None:
        """Send `notifications/tools/list_changed` for each change (until the session ends)."""
        try:
            async for _ in self._changes:
                notice = JSONRPCNotification(
                    jsonrpc="2.0", method="notifications/tools/list_changed", params=None
                )
                await self._inner.send(SessionMessage(notice))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def refused(self, message: JSONRPCRequest, caller: Any) -> bool:
        """Whether the gate answered the client's request `message` (sent by `caller`, else
        the session's caller): a request reusing the id of one in flight (or of a cancelled
        one kept, or of one the guard has neither written nor answered), a tools/call
        outside the caller's policy, any request past `MAX_WATCHED` in flight. Else it is
        noted as in flight, and a tools/list or tools/call answer will be read by the gate."""
        key = answer_key(message.id)
        caller = caller if caller is not None else self._caller
        watched = message.method in _WATCHED
        raw = message.model_dump(by_alias=True, exclude_none=True) if watched else {}
        if (
            key in self._pending
            or key in self._cancelled
            or not_written(self._guarded_write, message.id)
        ):
            # Fail closed: sent on, the second request would take the first one's place (its
            # answer audited as the other's, or a call the server ran left unrecorded).
            await self._inner.send(InUse(id_in_use(message.id)))
            self._gate.refused_here(raw, caller, "request_id_in_use")
            return True
        refusal = self._gate.refuse(raw, caller) if watched else None
        if refusal is None and len(self._pending) >= MAX_WATCHED:
            # Fail closed: an answer that is not watched would reach the client unfiltered.
            refusal = {
                "jsonrpc": "2.0",
                "id": message.id,
                "error": {
                    "code": -32603,
                    "message": f"conduit-mcp proxy: more than {MAX_WATCHED} requests of this "
                    "session in flight; wait for their answers",
                },
            }
            self._gate.refused_here(raw, caller, "too_many_in_flight")
        if refusal is not None:
            await self._inner.send(SessionMessage(jsonrpc_message_adapter.validate_python(refusal)))
            return True
        self._pending[key] = (raw, caller) if watched else None
        if message.method == "tools/call":
            self._unwritten.add(key)
            self._ids[key] = message.id
        return False

    def writing(self, request_id: Any) -> None:
        """The request `request_id` (after `refused` let it go on) is handed to the guard's
        write side now: from here the guard's record says whether the server got it
        (`_seam.not_written`). Before, a call whose session ends is `refused` (never
        written)."""
        self._unwritten.discard(answer_key(request_id))

    def reused(self, request_id: Any) -> bool:
        """Whether a request of the session with `request_id` is in flight, or a cancelled
        one is kept, or the guard has one neither written nor answered (after `refused`: the
        refused request reused its id)."""
        key = answer_key(request_id)
        return (
            key in self._pending
            or key in self._cancelled
            or not_written(self._guarded_write, request_id)
        )

    def cancelled(self, message: JSONRPCNotification) -> None:
        """The client cancelled a request (`notifications/cancelled`): its id stays taken, its
        answer may still come (one the guard passed before it read the cancellation), and a
        call's row waits for it (see the module docstring)."""
        request_id = (message.params or {}).get("requestId")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        key = answer_key(request_id)
        if key not in self._pending:
            return
        self._cancelled[key] = self._pending.pop(key)
        if len(self._cancelled) > CANCELLED_KEPT:
            self._unanswered(*self._cancelled.popitem(last=False), "cancelled")

    def _unanswered(self, key: Any, entry: _Entry, reason: str) -> None:
        """A request that will have no answer: a call's row (`unanswered`, or `refused` when
        it was never written to the server)."""
        unwritten = key in self._unwritten
        self._unwritten.discard(key)
        request_id = self._ids.pop(key, None)
        if entry is None:
            return
        if not unwritten and request_id is not None:  # handed to the guard: written since?
            unwritten = not_written(self._guarded_write, request_id)
        if unwritten:  # the server never got it: `refused`, as a call the guard answered unsent
            self._gate.never_sent(entry[0], entry[1], reason)
        else:  # counted as the stateless paths count theirs (`allowed`)
            self._gate.unanswered(entry[0], entry[1], reason)

    async def send(self, item: SessionMessage) -> None:
        """Hand `item` to the client: the answer to a watched request as its caller may see
        it (and its call audited); any answer frees its request's id."""
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError) and (
            self._pending or self._cancelled
        ):
            # As the guard matched it (a server may spell 5 as " 5"): else the answer would
            # reach the client unfiltered and unaudited.
            key = answer_key(message.id)
            if key in self._pending:
                found = self._pending.pop(key)
            else:
                found = self._cancelled.pop(key, None)
            self._unwritten.discard(key)
            self._ids.pop(key, None)
            if found is not None:
                answer = message.model_dump(by_alias=True, exclude_none=True)
                seen = self._gate.answered(
                    found[0],
                    found[1],
                    answer,
                    self.key,
                    by_server=server_wrote(item),
                    unsent=never_written(item),
                )
                if seen is not answer:
                    item = SessionMessage(
                        jsonrpc_message_adapter.validate_python(seen), metadata=item.metadata
                    )
        await self._inner.send(item)

    def close(self) -> None:
        """The session ended: the rows of its calls never answered are written
        (`unanswered`: `cancelled`, or `session_closed`; a call never written: `refused`).
        Idempotent."""
        cancelled, self._cancelled = self._cancelled, OrderedDict()
        pending, self._pending = self._pending, {}
        for key, entry in cancelled.items():
            self._unanswered(key, entry, "cancelled")
        for key, entry in pending.items():
            self._unanswered(key, entry, "session_closed")
        self._gate.sessions.closed(self.key)
        self._changes_send.close()
        self._changes.close()

    async def aclose(self) -> None:
        self.close()
        await self._inner.aclose()


class InUse(SessionMessage):
    """`id_in_use`'s answer on its way to the client: its id is another request's in flight,
    so nothing of that request's routes it (`_server._RelatingSink`)."""


def id_in_use(request_id: Any) -> Any:
    """The answer to a request whose id a request of the session in flight has
    (`GatedSink.refused`, the lean path's): JSON-RPC Invalid Request, never sent on.

    Args:
        request_id: the refused request's id, as it wrote it.

    Returns:
        The SDK's `JSONRPCError` (code -32600)."""
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(
            code=-32600,
            message="conduit-mcp proxy: a request of this session with this id is still in "
            "flight (request ids must not be reused within a session)",
        ),
    )
