"""`notifications/tools/list_changed` of the guard's own: what a client sees changed without a
re-list (an approval or a revocation through the pin store's change feed, `Guard.approve`).

Not a public module. No SDK import: the engine decides (which names this connection listed,
whether the client was told to expect the notification, whether one is already due), the seam
delivers (`ListChangedNotice.deliver`, set by the seam: schedule `take` on the connection's
event loop; it is called from any thread, the feed's watcher thread included).

Spec: 2025-11-25 server/tools "List Changed Notification": a server that declared
`capabilities.tools.listChanged` SHOULD send `notifications/tools/list_changed` when its list
of tools changes. The guard's list is the one the client sees, so it declares the capability
itself when it can change that list on its own (docs/guard.md "Live approvals").
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Final

#: The notification's method (spec server/tools "List Changed Notification").
LIST_CHANGED: Final = "notifications/tools/list_changed"
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

    __slots__ = ("__weakref__", "_lock", "declared", "deliver", "due", "listed", "sent")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: the client was told the list may change (`capabilities.tools.listChanged: true`).
        self.declared = False
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
            if not self.declared or self.due or self.sent or name not in self.listed:
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

    def take(self) -> dict[str, Any] | None:
        """The notification to send now (`None`: nothing due any more)."""
        with self._lock:
            if not self.due:
                return None
            self.due = False
            self.sent = True
        return {"jsonrpc": "2.0", "method": LIST_CHANGED}


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
    `None` outside a known event loop. Call it from a task on the loop."""
    try:
        import sniffio

        library = sniffio.current_async_library()
    except Exception:
        return None
    if library == "asyncio":
        import asyncio

        loop = asyncio.get_running_loop()

        def later(seconds: float) -> None:
            loop.call_soon_threadsafe(loop.call_later, seconds, call)

        return later
    if library == "trio":
        import importlib

        trio: Any = importlib.import_module("trio")  # optional: anyio's other backend
        token = trio.lowlevel.current_trio_token()
        return lambda seconds: token.run_sync_soon(call)
    return None
