"""The audit log: one row per approval, revocation and change of a tool's pending state.

Not a public module. Every statement on `conduit_mcp_audit` is here: `append` (the rooms
that write call it inside their transaction), the reads of `AuditLog` (`audit_log`,
`audit_since`) and `prune_checks`. The database refuses to update the log or to delete an
approval or a revocation (the triggers of `_migrations.py`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..client._tool import check_server_id
from ._database import Database, Room
from ._rows import Row, check_age, filters, store_text, stored_approver, stored_name


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row of the append-only audit log. Immutable.

    Attributes:
        id: ascending in commit order on both backends (gaps are possible): the cursor of
            `PinStore.audit_since` and `PinStore.changes_since`.
        at: seconds since the Unix epoch (UTC), taken by the writer.
        server_id, name: the pin concerned.
        action: `"approve"`, `"revoke"`, `"reject"` (a person refused a pending definition:
            that fingerprint stays blocked), `"check"`, or `"account"` (a console account
            added or removed: `server_id` is `""`, `name` the account).
        outcome: for a check, `"new"`, `"changed"` or `"cosmetic"` (a definition awaiting a
            person), `"approved"` (the server lists the approved definition again: its pending
            entry left the queue) or `"rejected"` (it lists a rejected definition: the
            tool's pending entry left the queue); for an account, `"added"`, `"removed"` or
            `"token"`; for an approval of a server's instructions, `"instructions"` (`name`
            is `""`, `definition` the text as a JSON string); for a check of a server's
            instructions (`name` `""`), `"instructions"` (a text awaiting a person) or
            `"instructions_approved"` (the server sends the approved text again: the waiting
            text left the queue); `None` otherwise.
        fingerprint: approve: the fingerprint pinned; revoke: the one removed; reject: the one
            rejected; check: the one listed.
        previous_fingerprint: approve: the pin it replaced (`None` for a first approval);
            check: the pinned fingerprint (`None` for a new tool); revoke: `None`.
        definition: approve: the approved definition (canonical JSON), else `None`.
        approver: approve, revoke, reject and account: who did it, or `None`.
        protocol_version: approve and check: the protocol version given, or `None`.
        reason: reject and revoke: the person's reason (`None` when none was given); a check
            that took an entry out of the queue: why; account: the role.
    """

    id: int
    at: float
    server_id: str
    name: str
    action: str
    outcome: str | None
    fingerprint: str | None
    previous_fingerprint: str | None
    definition: str | None
    approver: str | None
    protocol_version: str | None
    reason: str | None = None


#: The audit log's actions (`AuditEntry.action`).
ACTIONS: Final = ("approve", "revoke", "reject", "check", "account")

_WRITTEN: Final = (
    "at, server_id, name, action, outcome, fingerprint, previous_fingerprint, definition,"
    " approver, protocol_version, reason"
)
_COLUMNS: Final = "id, " + _WRITTEN

_APPEND: Final = (
    f"INSERT INTO conduit_mcp_audit ({_WRITTEN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_READ: Final = f"SELECT {_COLUMNS} FROM conduit_mcp_audit"
_AFTER: Final = _READ + " WHERE id > ? ORDER BY id LIMIT ?"
_PRUNE_CHECKS: Final = "DELETE FROM conduit_mcp_audit WHERE action = 'check' AND at < ?"


def audit_row(
    at: float,
    server_id: str,
    name: str,
    action: str,
    *,
    outcome: str | None = None,
    fingerprint: str | None = None,
    previous: str | None = None,
    definition: str | None = None,
    approver: str | None = None,
    protocol_version: str | None = None,
    reason: str | None = None,
) -> tuple[Any, ...]:
    """One audit row as `append` writes it (values already stored: escaped names)."""
    return (
        at,
        server_id,
        name,
        action,
        outcome,
        fingerprint,
        previous,
        definition,
        approver,
        protocol_version,
        reason,
    )


def append(db: Database, rows: Sequence[tuple[Any, ...]]) -> None:
    """Append `audit_row`s, inside the caller's write transaction (nothing for no rows)."""
    if rows:
        db.lock_audit()
        db.many(_APPEND, rows)


class AuditLog(Room):
    """`PinStore`'s reading of the audit log, and its retention of check rows."""

    def audit_log(
        self,
        server_id: str | None = None,
        *,
        limit: int | None = None,
        name: str | None = None,
        approver: str | None = None,
        action: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[AuditEntry, ...]:
        """The audit log (of one server, or all), oldest first, optionally filtered.

        Args:
            server_id: only this server's entries, or `None` for all.
            limit: only the newest `limit` entries (still oldest first), or `None` for all.
            name: only entries about this tool (or account) name.
            approver: only entries made by this person (`AuditEntry.approver`, exactly).
            action: only this action (one of `"approve"`, `"revoke"`, `"reject"`, `"check"`,
                `"account"`).
            since, until: only entries with `since <= at < until` (seconds since the Unix
                epoch, UTC).

        Raises:
            TypeError, ValueError: bad `server_id`, `name`, `approver`, `action`, times or
                `limit`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else store_text(check_server_id(server_id))
        if limit is not None and (type(limit) is not int or limit < 0):
            raise ValueError("limit must be a non-negative int or None")
        where, args = filters(stored, None if name is None else stored_name(name))
        clauses = [where[len(" WHERE ") :]] if where else []
        if approver is not None:
            who = stored_approver(approver)
            clauses.append("approver = ?")
            args.append(who)
        if action is not None:
            if action not in ACTIONS:
                raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
            clauses.append("action = ?")
            args.append(action)
        for bound, clause in ((since, "at >= ?"), (until, "at < ?")):
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise ValueError("since and until are seconds since the Unix epoch")
            if not math.isfinite(bound):
                raise ValueError("since and until must be finite")
            clauses.append(clause)
            args.append(float(bound))
        sql = _READ + (" WHERE " + " AND ".join(clauses) if clauses else "") + " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        rows = self._open().fetch(sql, args)
        return tuple(_entry(row) for row in reversed(rows))

    def audit_since(self, cursor: int = 0, *, limit: int = 1000) -> tuple[AuditEntry, ...]:
        """The audit entries after `cursor`, oldest first: the documented way to tail the log.

        The cursor is an `AuditEntry.id`: pass `0` first, then the `id` of the last entry
        read. Ids ascend in commit order on both backends (sqlite: one writer at a time;
        PostgreSQL: every writer draws its ids under one advisory lock held to its commit),
        so an entry that becomes visible later never has a smaller id than one already read:
        a reader that tails by `id > cursor` misses nothing. Ids may have gaps (a rolled back
        transaction, pruned check entries).

        Args:
            cursor: the last id read (`0` for the start).
            limit: at most this many entries (a positive `int`); call again with the new
                cursor while a full batch comes back.

        Returns:
            Entries with `id > cursor`, ascending by id.

        Raises:
            ValueError: a negative cursor or a limit below 1; the store is closed; a malformed
                row.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        if type(cursor) is not int or cursor < 0:
            raise ValueError("cursor must be a non-negative int (an AuditEntry.id, or 0)")
        if type(limit) is not int or limit < 1:
            raise ValueError("limit must be a positive int")
        return tuple(_entry(row) for row in self._open().fetch(_AFTER, (cursor, limit)))

    def prune_checks(self, older_than: float) -> int:
        """Delete the `"check"` audit entries older than `older_than` seconds: the retention of
        checks. Approvals and revocations are kept whatever their age (the database refuses to
        delete them).

        Args:
            older_than: an age in seconds (`0` deletes every check entry).

        Returns:
            How many entries were deleted.

        Raises:
            ValueError: a negative or non-finite age; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        age = check_age(older_than)
        db = self._open()
        with db.writing(None):
            return int(db.run(_PRUNE_CHECKS, (time.time() - age,)).rowcount)


def _entry(row: Sequence[Any]) -> AuditEntry:
    r = Row("conduit_mcp_audit", (row[2], row[3], *row))
    return AuditEntry(
        r.integer(2, "id"),
        r.number(3, "at"),
        r.name(4, "server_id"),
        r.name(5, "name"),
        r.text(6, "action"),
        r.text(7, "outcome", optional=True),
        r.text(8, "fingerprint", optional=True),
        r.text(9, "previous_fingerprint", optional=True),
        r.text(10, "definition", optional=True),
        r.name(11, "approver", optional=True),
        r.text(12, "protocol_version", optional=True),
        r.text(13, "reason", optional=True),
    )
