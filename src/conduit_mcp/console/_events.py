"""Live updates: the store's change feed, fanned out to every open page as server-sent events.

Not a public module. One `PinWatcher` per console process (`PinStore.watch(every_entry=True)`:
every audit entry, from any proxy, CLI or other console, within its ~50 ms wake-up) calls
`Broadcast.publish` from its thread; each `/api/events` stream has a bounded queue on the event
loop. A stream that falls behind by `QUEUE` events is ended (the page reconnects and reloads
what it shows), so a slow reader never holds memory.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Final

#: Events a stream may have waiting before it is ended.
QUEUE: Final = 256
#: Open streams at most (each is one connection and one queue).
MAX_STREAMS: Final = 200


def event_json(entry: Any) -> str:
    """One audit entry as the event's data: JSON with every non-ASCII character and `<`, `>`,
    `&` escaped (`\\uXXXX`), on one line; server strings are data, never markup."""
    data = {
        "id": entry.id,
        "at": entry.at,
        "action": entry.action,
        "outcome": entry.outcome,
        "server_id": entry.server_id,
        "tool": entry.name,
        "fingerprint": entry.fingerprint,
        "approver": entry.approver,
    }
    text = json.dumps(data, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Broadcast:
    """The open event streams, fed from the watcher's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Queue[str | None]]] = {}
        self._next = 0

    def subscribe(self) -> tuple[int, asyncio.Queue[str | None]] | None:
        """A new stream's id and queue (on the running loop), or `None` when too many are open."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE)
        with self._lock:
            if len(self._streams) >= MAX_STREAMS:
                return None
            self._next += 1
            self._streams[self._next] = (loop, queue)
            return self._next, queue

    def unsubscribe(self, key: int) -> None:
        with self._lock:
            self._streams.pop(key, None)

    def publish(self, entry: Any) -> None:
        """Hand one audit entry to every stream (called from the watcher's thread)."""
        data = event_json(entry)
        with self._lock:
            streams = list(self._streams.items())
        for key, (loop, queue) in streams:
            try:
                loop.call_soon_threadsafe(self._put, key, queue, data)
            except RuntimeError:  # the loop is closed
                self.unsubscribe(key)

    def _put(self, key: int, queue: asyncio.Queue[str | None], data: str) -> None:
        try:
            queue.put_nowait(data)
        except asyncio.QueueFull:  # too far behind: end the stream (the page reconnects)
            self.unsubscribe(key)
            while not queue.empty():
                queue.get_nowait()
            queue.put_nowait(None)

    def close(self) -> None:
        """End every stream (the console stops)."""
        with self._lock:
            streams = list(self._streams.items())
            self._streams.clear()
        for _, (loop, queue) in streams:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except (RuntimeError, asyncio.QueueFull):
                pass
