"""After a pin store outage: the guard lists the server's tools again by itself once the store
answers, so the tools it withheld come back without a client listing.

Not a public module. No SDK import. A page the store could not check withholds its tools
(`pin_store_unavailable`, `_listing.Listing._withhold_page`) and registers its connection
here; one daemon thread then asks the store a one-row question (`PinStore.pin`) after
`FIRST_WAIT` seconds, waiting twice as long after each failure up to `LONGEST_WAIT`, and once
the store answers, has each registered connection list the tools itself (its own
`tools/list`, answered to nobody: `_listing.Listing.relist_soon`), the way the proxy lists
before a call naming a tool it never saw. The listing restores the tools the store now checks,
and each client that saw them withheld is told with `notifications/tools/list_changed`.

A connection whose seam gave the engine no way to write to the server
(`EngineBase.send_requests_to`) is skipped: its client's next listing restores the tools, as
before.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final

from . import _checks

logger = logging.getLogger("conduit_mcp.guard")

#: Seconds before the store is first asked again after an outage.
FIRST_WAIT: Final = 0.25
#: The longest wait between two questions to a store that does not answer yet.
LONGEST_WAIT: Final = 5.0


class Recheck:
    """One guard's recovery from pin store outages.

    Args:
        probe: asks the store one small question; raises a store error while it is down
            (`_checks.is_store_error`), anything else (a closed store) ends the probing.
        back: called on the probe's thread with the connections to list again, once the store
            answers (each connection's `relist_soon`).
    """

    def __init__(self, probe: Callable[[], object], back: Callable[[list[Any]], None]) -> None:
        self._probe = probe
        self._back = back
        self._lock = threading.Lock()
        self._waiting: weakref.WeakSet[Any] = weakref.WeakSet()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def outage(self, connection: Any) -> None:
        """`connection` withheld a page because the store failed: list again on it once the
        store answers (the probe starts, unless it runs already). Any thread."""
        with self._lock:
            self._waiting.add(connection)
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(
                target=self._run, name="conduit-mcp store recheck", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Stop probing (the thread ends within `LONGEST_WAIT`, or once its question
        returns). Idempotent."""
        self._stop.set()

    @property
    def probing(self) -> bool:
        """Whether the store is being asked until it answers."""
        with self._lock:
            return self._thread is not None

    def _run(self) -> None:
        wait = FIRST_WAIT
        while not self._stop.wait(wait):
            try:
                self._probe()
            except Exception as exc:
                if not _checks.is_store_error(exc):  # closed, or a bug: nothing to wait for
                    logger.info("pin store recheck stopped: %s", type(exc).__name__)
                    break
                wait = min(wait * 2, LONGEST_WAIT)
                continue
            with self._lock:
                waiting = list(self._waiting)
                self._waiting.clear()
                self._thread = None
            try:
                self._back(waiting)
            except Exception:  # never out of the thread: the clients' next listing restores
                logger.exception("the guard failed to list the tools again after an outage")
            return
        with self._lock:
            self._thread = None


def loop_spawner() -> Callable[[Callable[[], Awaitable[Any]]], None] | None:
    """`spawn(fn)`, callable from any thread: the running event loop runs `await fn()` as a
    task of its own (asyncio; trio: a system task). `None` outside an asyncio or trio loop.
    Call it from a task on the loop. What `fn` raises is logged, never propagated."""

    async def logged(fn: Callable[[], Awaitable[Any]]) -> None:
        try:
            await fn()
        except Exception:
            logger.exception("a request of the guard's own failed")

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        tasks: set[asyncio.Task[None]] = set()  # held until done: a bare task may be collected

        def start(fn: Callable[[], Awaitable[Any]]) -> None:
            task = loop.create_task(logged(fn))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        def spawn(fn: Callable[[], Awaitable[Any]]) -> None:
            loop.call_soon_threadsafe(start, fn)

        return spawn
    trio: Any = sys.modules.get("trio")
    if trio is not None:
        try:
            token = trio.lowlevel.current_trio_token()
        except RuntimeError:
            token = None
        if token is not None:
            spawn_task = trio.lowlevel.spawn_system_task
            return lambda fn: token.run_sync_soon(spawn_task, logged, fn)
    return None
