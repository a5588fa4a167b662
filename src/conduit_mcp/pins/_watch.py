"""`PinWatcher`: approvals and revocations made elsewhere, delivered to a running process.

Not a public module: `PinStore.watch` (`_feed.py`) starts one. A daemon thread waits for the
database to say something was committed (PostgreSQL: `LISTEN` on `_feed.CHANNEL`, which every
pin write notifies at commit; sqlite: `PRAGMA data_version` on a connection of its own, which
moves when another connection commits), then reads `PinStore.changes_since` from its cursor and
calls the callback with each entry, in commit order. A poll every `_SAFETY_POLL` seconds covers
a lost notification (a reconnect).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ._database import pg_connect

if TYPE_CHECKING:
    from ._location import StoreLocation

logger = logging.getLogger("conduit_mcp.pins")

_SAFETY_POLL: Final = 1.0


class _SqliteWake:
    """Wakes when another connection commits to the sqlite file (`PRAGMA data_version`)."""

    def __init__(self, path: str) -> None:
        uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(path))) + "?mode=ro"
        self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._version = self._read()

    def _read(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def wait(self, seconds: float, step: float) -> bool:
        until = time.monotonic() + seconds
        while True:
            version = self._read()
            if version != self._version:
                self._version = version
                return True
            left = until - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(step, left))

    def close(self) -> None:
        self._conn.close()


class _PostgresWake:
    """Wakes on a notification of `channel` (`_feed.CHANNEL`: every pin write sends one at its
    commit)."""

    def __init__(self, location: StoreLocation, timeout: float, channel: str) -> None:
        self._location = location
        self._timeout = timeout
        self._channel = channel
        self._conn: Any = None
        self._listen()

    def _listen(self) -> None:
        self._conn = pg_connect(self._location, self._timeout)
        self._conn.execute(f"LISTEN {self._channel}")

    def wait(self, seconds: float, step: float) -> bool:
        del step
        try:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._listen()
                return True  # notifications may have been lost: read the log
            for _ in self._conn.notifies(timeout=seconds, stop_after=1):
                return True
            return False
        except Exception:
            logger.warning("pin watcher: the PostgreSQL connection failed; reconnecting")
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            time.sleep(min(seconds, 1.0))
            return True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class PinWatcher:
    """A running watch of a pin store (see `PinStore.watch`); stop it with `close`.

    Built by `PinStore.watch` (its arguments: the store, the wake-up source, the callback
    taking an `AuditEntry`, the first cursor, the interval in seconds and what reads the
    entries after a cursor), never directly.

    Attributes:
        cursor: the last audit id delivered (or skipped as not a change).
    """

    def __init__(
        self,
        store: Any,
        wake: Any,
        callback: Callable[[Any], object],
        cursor: int,
        interval: float,
        read: Callable[[int], tuple[tuple[Any, ...], int]] | None = None,
    ) -> None:
        self.cursor = cursor
        self._read = read if read is not None else store.changes_since
        self._store = store
        self._wake = wake
        self._callback = callback
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="conduit-mcp pin watcher", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        last = time.monotonic()
        try:
            while not self._stop.is_set():
                woke = self._wake.wait(self._interval, min(self._interval, 0.02))
                if self._stop.is_set():
                    break
                if woke or time.monotonic() - last >= _SAFETY_POLL:
                    last = time.monotonic()
                    if not self._poll():
                        break
        finally:
            self._wake.close()

    def _poll(self) -> bool:
        """Deliver every change after the cursor; `False` once the store is closed."""
        while True:
            try:
                changes, cursor = self._read(self.cursor)
            except ValueError:  # the store was closed (or a malformed row: reported once)
                if self._store._closed:
                    return False
                logger.exception("pin watcher: cannot read the audit log")
                return True
            except Exception:
                logger.exception("pin watcher: cannot read the audit log")
                return True
            for entry in changes:
                try:
                    self._callback(entry)
                except Exception:
                    logger.exception("pin watcher: the callback raised")
            if cursor == self.cursor:
                return True
            self.cursor = cursor

    def close(self) -> None:
        """Stop watching (the thread ends within the interval). Idempotent."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(max(2.0, 4 * self._interval))

    @property
    def running(self) -> bool:
        """Whether the watching thread is alive."""
        return self._thread.is_alive()
