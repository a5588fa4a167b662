"""The stored policy: every version of a fleet's tool policy, who set it and when.

Not a public module: `StoredPolicy` is exported by `conduit_mcp.pins`; `PinStore.set_policy`,
`policy`, `policy_history`, `policies_since` and `watch_policy` are this room's. Every
statement on `conduit_mcp_policy` is here. The table is append-only (the database refuses to
update or delete a row: migration 6's triggers), so it is its own audit: each row is a
version, numbered from 1 in commit order, with its text, the text's digest, the file it came
from, who set it and when. Setting a version notifies the change feed's PostgreSQL channel at
commit, so a `watch_policy` on any host reads it within a second; sqlite's watchers see the
commit through `PRAGMA data_version`.

The store keeps the text as given: the `conduit_mcp.policy` room checks it before it is set
(`conduit-mcp policy set` refuses a bad file and stores nothing) and parses it when read.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._database import PostgresDatabase, Room, SqliteDatabase
from ._feed import CHANNEL, notify
from ._rows import Row, check_unicode, stored_approver
from ._watch import PinWatcher, _PostgresWake, _SqliteWake

#: The lock every policy writer takes (PostgreSQL: an advisory lock on this text), so two
#: hosts setting a policy at once draw versions one after the other.
_LOCK: Final = "conduit_mcp_policy"
_COLUMNS: Final = "version, at, digest, source, approver, text"
_NEXT: Final = "SELECT coalesce(max(version), 0) + 1 FROM conduit_mcp_policy"
_SET: Final = f"INSERT INTO conduit_mcp_policy ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
_LATEST: Final = f"SELECT {_COLUMNS} FROM conduit_mcp_policy ORDER BY version DESC LIMIT 1"
_HISTORY: Final = f"SELECT {_COLUMNS} FROM conduit_mcp_policy ORDER BY version"
_AFTER: Final = f"SELECT {_COLUMNS} FROM conduit_mcp_policy WHERE version > ? ORDER BY version"


@dataclass(frozen=True, slots=True)
class StoredPolicy:
    """One version of the policy kept in a pin store. Immutable.

    Attributes:
        version: 1 for the first policy set, then one more per `set_policy`.
        at: seconds since the Unix epoch (UTC), taken by the writer.
        digest: `"sha256:"` + hex SHA-256 of the UTF-8 text.
        source: the file it was read from, as the setter named it (or `None`).
        approver: who set it.
        text: the policy file's text, as given.
    """

    version: int
    at: float
    digest: str
    source: str | None
    approver: str | None
    text: str


class PolicyRoom(Room):
    """`PinStore`'s stored policy: set a version, read the latest, its history, and watch."""

    def set_policy(self, text: str, *, approver: str, source: str | None = None) -> StoredPolicy:
        """Store `text` as the next version of the policy (one transaction, audited by its
        row: version, time, digest, source, approver).

        The text is stored as given: check it first (`conduit_mcp.policy.Policy.parse`; the
        `conduit-mcp policy set` command does).

        Args:
            text: the policy file's text (TOML).
            approver: who sets it (non-empty).
            source: the file it came from, for the record (or `None`).

        Returns:
            The `StoredPolicy` written.

        Raises:
            TypeError, ValueError: `text`, `approver` or `source` not text, an empty approver,
                a lone surrogate; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        check_unicode(text, "the policy text")
        if "\x00" in text:
            raise ValueError("the policy text holds U+0000")
        who = stored_approver(approver)
        if not who:
            raise ValueError("approver must name who sets the policy")
        where = stored_approver(source)
        digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
        db = self._open()
        at = time.time()
        with db.writing(_LOCK):
            version = int(db.run(_NEXT).fetchone()[0])
            db.run(_SET, (version, at, digest, where, who, text))
            notify(db)
        return StoredPolicy(version, at, digest, source, approver, text)

    def policy(self) -> StoredPolicy | None:
        """The latest version of the stored policy, or `None` when none was set.

        Raises:
            ValueError: the store is closed, or a malformed row.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        rows = self._open().fetch(_LATEST, ())
        return _stored(rows[0]) if rows else None

    def policy_history(self) -> tuple[StoredPolicy, ...]:
        """Every version of the stored policy, oldest first (the policy's audit).

        Raises:
            As `policy`.
        """
        return tuple(_stored(row) for row in self._open().fetch(_HISTORY, ()))

    def policies_since(self, version: int) -> tuple[StoredPolicy, ...]:
        """The versions after `version` (`0`: all), oldest first.

        Raises:
            ValueError: a negative or non-int version; as `policy`.
        """
        if type(version) is not int or version < 0:
            raise ValueError("version must be a non-negative int")
        return tuple(_stored(row) for row in self._open().fetch(_AFTER, (version,)))

    def watch_policy(
        self,
        callback: Callable[[StoredPolicy], object],
        *,
        version: int | None = None,
        interval: float = 0.05,
    ) -> PinWatcher:
        """Call `callback` with every policy version set in this store after `version`, by
        any process or host, from a daemon thread (the change feed's wake-ups: PostgreSQL
        `LISTEN`, sqlite `PRAGMA data_version`, and a poll once a second).

        Args:
            callback: called with each new `StoredPolicy`, oldest first (from the watcher's
                thread). Exceptions are logged (logger `conduit_mcp.pins`), never raised.
            version: deliver the versions after this one; `None` (default): after the latest.
            interval: as `PinStore.watch`.

        Returns:
            The running `PinWatcher` (`close()` stops it; its `cursor` is the last version
            delivered).

        Raises:
            ValueError: the store is closed or a private `":memory:"` one; a bad interval.
            sqlite3.Error, psycopg.Error: the watcher's connection cannot be opened.
        """
        if isinstance(interval, bool) or not isinstance(interval, (int, float)):
            raise ValueError("interval must be a positive number of seconds")
        if not math.isfinite(interval) or interval <= 0:
            raise ValueError("interval must be a positive number of seconds")
        db = self._open()
        if version is None:
            latest = self.policy()
            version = latest.version if latest is not None else 0
        wake: Any
        if isinstance(db, PostgresDatabase):
            wake = _PostgresWake(db.location, db.timeout, CHANNEL)
        elif isinstance(db, SqliteDatabase) and db.path != ":memory:":
            wake = _SqliteWake(db.path)
        else:
            raise ValueError("a private in-memory store has no other writer to watch")
        return PinWatcher(_Versions(self), wake, callback, version, float(interval))


class _Versions:
    """The stored policy as the `PinWatcher` reads a feed: `changes_since(cursor)`."""

    def __init__(self, room: PolicyRoom) -> None:
        self._room = room

    @property
    def _closed(self) -> bool:
        return bool(getattr(self._room, "_closed", False))

    def changes_since(self, cursor: int) -> tuple[tuple[StoredPolicy, ...], int]:
        found = self._room.policies_since(cursor)
        return found, (found[-1].version if found else cursor)


def _stored(row: Sequence[Any]) -> StoredPolicy:
    r = Row("conduit_mcp_policy", row)
    return StoredPolicy(
        r.integer(0, "version"),
        r.number(1, "at"),
        r.text(2, "digest"),
        r.name(3, "source", optional=True),
        r.name(4, "approver", optional=True),
        r.text(5, "text"),
    )
