"""`notifications/tools/list_changed` of the guard's own: what a client sees changed without a
re-list (an approval or a revocation through the pin store's change feed, `Guard.approve`).

Not a public module. No SDK import: the engine decides (which names this connection listed,
whether the client was told to expect the notification, whether one is already due), the seam
delivers (`ListChangedNotice.deliver`, set by the seam: schedule `take` on the connection's
event loop; it is called from any thread, the feed's watcher thread included).

Spec: 2025-11-25 server/tools "List Changed Notification": a server that declared
`capabilities.tools.listChanged` SHOULD send `notifications/tools/list_changed` when its list
of tools changes. The guard's list is the one the client sees, so it declares the capability
itself when it can change that list on its own (docs/guard.md "Live approvals"). 2026-07-28
(schema `SubscriptionFilter`): only on a `subscriptions/listen` stream that asked for
`toolsListChanged`, stamped with the stream's id; the guard honours the request in the
server's acknowledgment under the same condition.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Final

#: The notification's method (spec server/tools "List Changed Notification").
LIST_CHANGED: Final = "notifications/tools/list_changed"
#: 2026-07-28: the request that opens a notification stream, the server's acknowledgment of
#: what it will send there, and the `_meta` key naming the stream on each of its notifications
#: (spec 2026-07-28 schema `SubscriptionsListenRequest`, `SubscriptionFilter`).
LISTEN: Final = "subscriptions/listen"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
#: Seconds a due notice waits for more changes before it is sent: a burst of feed changes
#: (an `--all-pending` approval, a fleet's revocations) is one notification.
COALESCE_SECONDS: Final = 0.05


class ListChangedNotice:
    """One connection's notice: the names it listed, whether its client expects
    `notifications/tools/list_changed`, and whether one is due.

    Coalesced twice: changes within `COALESCE_SECONDS` of the first one are one notification,
    and after it is sent none is sent again until the client lists the tools again (its next
    listing shows every change since). Thread-safe: `changed` runs on the feed's thread.
    """

    __slots__ = (
        "__weakref__",
        "_lock",
        "asked",
        "declared",
        "deliver",
        "due",
        "listed",
        "sent",
        "streams",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: the client was told the list may change (`capabilities.tools.listChanged: true`).
        self.declared = False
        #: 2026-07-28: open `subscriptions/listen` streams (key: the id as the SDK correlates
        #: it -> the id as sent) that asked for `toolsListChanged`, before the server's
        #: acknowledgment (`asked`) and once it honours it (`streams`: where it is sent).
        self.asked: dict[Any, Any] = {}
        self.streams: dict[Any, Any] = {}
        #: names of this connection's current listing (the server's, hidden ones included).
        self.listed: set[str] = set()
        #: a notification is scheduled and not yet taken.
        self.due = False
        #: one was taken since the client last began a listing.
        self.sent = False
        #: the seam's scheduler, callable from any thread: `deliver(seconds)` makes the
        #: connection's event loop call `take()` after `seconds` and send what it returns;
        #: `None` until the seam knows its event loop (nothing is sent before).
        self.deliver: Callable[[float], None] | None = None

    def relisting(self) -> None:
        """The client begins a complete listing: it will see every change made so far."""
        with self._lock:
            self.listed = set()
            self.sent = False

    def saw(self, names: Iterable[str]) -> None:
        """Names a page of this connection's listing held (accepted, held or removed)."""
        with self._lock:
            self.listed.update(names)

    def changed(self, name: str) -> None:
        """What the client sees of `name` changed: schedule one notification, when the client
        was told to expect it, listed `name`, and has none due or unanswered."""
        with self._lock:
            told = self.declared or self.streams
            if not told or self.due or self.sent or name not in self.listed:
                return
            deliver = self.deliver
            if deliver is None:
                return
            self.due = True
        try:
            deliver(COALESCE_SECONDS)
        except Exception:  # the connection's loop is gone: nobody to tell
            with self._lock:
                self.due = False

    def take(self) -> list[dict[str, Any]]:
        """The notifications to send now: one per 2026-07-28 stream that asked for it, else
        the one a session's `initialize` declared (none when nothing is due any more)."""
        with self._lock:
            if not self.due:
                return []
            self.due = False
            self.sent = True
            streams = list(self.streams.values())
        if streams:
            return [
                {
                    "jsonrpc": "2.0",
                    "method": LIST_CHANGED,
                    "params": {"_meta": {SUBSCRIPTION_ID: s}},
                }
                for s in streams
            ]
        return [{"jsonrpc": "2.0", "method": LIST_CHANGED}] if self.declared else []

    def listen(self, key: Any, request_id: Any, params: Any) -> None:
        """The client opens a `subscriptions/listen` stream; remembered when it asks for
        `toolsListChanged`."""
        wanted = params.get("notifications") if isinstance(params, dict) else None
        if isinstance(wanted, dict) and wanted.get("toolsListChanged") is True:
            with self._lock:
                self.asked[key] = request_id

    def acknowledged(self, key: Any, message: dict[str, Any], ours: bool) -> dict[str, Any] | None:
        """The server's acknowledgment of stream `key`: when the stream asked for
        `toolsListChanged` and the guard changes the list itself (`ours`), the acknowledgment
        the client receives honours it (a new message; `None`: pass the server's as is)."""
        with self._lock:
            request_id = self.asked.get(key)
        if request_id is None:
            return None
        params = message.get("params")
        honored = params.get("notifications") if isinstance(params, dict) else None
        if not isinstance(params, dict) or not isinstance(honored, dict):
            return None
        said = honored.get("toolsListChanged") is True
        if said or ours:
            with self._lock:
                self.streams[key] = request_id
        if said or not ours:
            return None
        rewritten = {**honored, "toolsListChanged": True}
        return {**message, "params": {**params, "notifications": rewritten}}

    def closed(self, key: Any) -> None:
        """Stream `key` ended (its response, or a cancellation either way)."""
        with self._lock:
            self.asked.pop(key, None)
            self.streams.pop(key, None)


class Notices:
    """Every live connection's notice of one guard (weakly held: a connection that ends is
    gone from here with its engine)."""

    __slots__ = ("_lock", "_notices")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notices: weakref.WeakSet[ListChangedNotice] = weakref.WeakSet()

    def join(self, notice: ListChangedNotice) -> None:
        """Register a connection's notice (held weakly)."""
        with self._lock:
            self._notices.add(notice)

    def changed(self, name: str) -> None:
        """What a client sees of tool `name` changed without a re-list: each connection that
        listed it is told (at most one notification per burst and per listing)."""
        with self._lock:
            live = list(self._notices)
        for notice in live:
            notice.changed(name)


def declare_list_changed(result: Any) -> dict[str, Any] | None:
    """An `initialize` (or `server/discover`) result with `capabilities.tools.listChanged`
    set to `true`, as a new dict (the server's is left as is); `None` when the result declares
    no `tools` capability (a server without tools: nothing to change) or already says `true`.
    """
    if not isinstance(result, dict):
        return None
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        return None
    tools = capabilities.get("tools")
    if not isinstance(tools, dict) or tools.get("listChanged") is True:
        return None
    return {**result, "capabilities": {**capabilities, "tools": {**tools, "listChanged": True}}}


def declares_list_changed(result: Any) -> bool:
    """Whether a result's `capabilities.tools.listChanged` is `true`."""
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    tools = capabilities.get("tools") if isinstance(capabilities, dict) else None
    return isinstance(tools, dict) and tools.get("listChanged") is True


def loop_scheduler(call: Callable[[], None]) -> Callable[[float], None] | None:
    """A `ListChangedNotice.deliver` for the running event loop: `deliver(seconds)`, from any
    thread, makes that loop call `call()` after `seconds` (asyncio; trio calls it at once).
    `None` (logged: the client then sees a change at its next listing) outside an asyncio or
    trio loop. Call it from a task on the loop. Asks the loops themselves (no `sniffio`: anyio
    4.16 no longer installs it)."""
    import asyncio
    import sys

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:

        def later(seconds: float) -> None:
            loop.call_soon_threadsafe(loop.call_later, seconds, call)

        return later
    trio: Any = sys.modules.get("trio")  # anyio's other backend, loaded only if in use
    if trio is not None:
        try:
            token = trio.lowlevel.current_trio_token()
        except RuntimeError:
            token = None
        if token is not None:
            return lambda seconds: token.run_sync_soon(call)
    logging.getLogger("conduit_mcp.guard").warning(
        "no asyncio or trio loop is running: notifications/tools/list_changed cannot be sent "
        "on this connection (its client sees changes at its next listing)"
    )
    return None
