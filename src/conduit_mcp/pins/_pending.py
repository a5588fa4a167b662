"""The pending queue: tools a check found new, changed or cosmetic, awaiting a person.

Not a public module. Every statement on `conduit_mcp_pending` is here: the writes a
check-and-pin transaction makes (`hold`, `bump`, `settle`, called by `_checks.py` and
`_pins.py` inside their transaction) and the read of `PendingQueue.pending`, which joins
each row to the revocation its tool is under (`conduit_mcp_revoked`, kept by `_pins.py`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from ..client._tool import check_server_id
from ._changes import FieldChange
from ._database import Database, Room
from ._rows import Row, filters, store_text, stored_name


@dataclass(frozen=True, slots=True)
class Pending:
    """One tool awaiting a person's approval, as the store's pending queue keeps it. Immutable.

    A check (`check_page` with `audit=True`, a guard's `check_and_pin`) that finds a tool new,
    changed or cosmetic (and does not pin it) writes or refreshes its row; an approval or a pin
    of the tool removes it. A tool seen again in the same state moves `last_seen` and `seen`
    only (no audit row); a new definition or status replaces the row (one audit row).

    Attributes:
        server_id, name: the tool.
        status: `"new"`, `"changed"` (material) or `"cosmetic"`.
        fingerprint: the fingerprint of the definition awaiting approval.
        pinned: the approved fingerprint it differs from, or `None` for a new tool.
        definition: the listed definition as RFC 8785 canonical JSON, or `None` when it was
            checked by fingerprint alone (or is too deep to write).
        changes: the field changes from the approved definition (`FieldChange`s; values too
            deep to store are `None`).
        first_seen, last_seen: seconds since the Unix epoch (UTC) of the first and the last
            check that found it in this state.
        seen: how many checks found it in this state.
        protocol_version: of the last check, or `None`.
        revoked_at: when a person revoked the tool's pin, in seconds since the Unix epoch
            (UTC), if the tool is new because its pin was revoked (and not approved since);
            else `None`. The audit log keeps the same revocation (`action="revoke"`).
        revoked_by: who revoked it (the revocation's approver), or `None`.
        revoked_fingerprint: the fingerprint whose pin was revoked, or `None`.
        revoked_reason: the reason given with the revocation, or `None`.
    """

    server_id: str
    name: str
    status: str
    fingerprint: str
    pinned: str | None
    definition: str | None
    changes: tuple[FieldChange, ...]
    first_seen: float
    last_seen: float
    seen: int
    protocol_version: str | None
    revoked_at: float | None = None
    revoked_by: str | None = None
    revoked_fingerprint: str | None = None
    revoked_reason: str | None = None


class PendingRow(NamedTuple):
    """One tool awaiting approval, as a check writes it (the counters are the database's)."""

    server_id: str
    name: str
    status: str  # "new" | "changed" | "cosmetic"
    fingerprint: str
    pinned_fingerprint: str | None
    definition: str | None
    changes: str  # JSON array of FieldChange.to_json()
    seen_at: float
    protocol_version: str | None


_COLUMNS: Final = (
    "server_id, name, status, fingerprint, pinned_fingerprint, definition, changes,"
    " first_seen, last_seen, seen, protocol_version"
)
#: A pending row with the revocation its tool is under, if any (`_COLUMNS`, then the
#: revocation's time, approver and fingerprint, `NULL` when the tool was never revoked).
_READ: Final = (
    "SELECT "
    + ", ".join(f"p.{column.strip()}" for column in _COLUMNS.split(","))
    + ", r.revoked_at, r.approver, r.fingerprint, r.reason FROM conduit_mcp_pending AS p"
    " LEFT JOIN conduit_mcp_revoked AS r ON r.server_id = p.server_id AND r.name = p.name"
)
_STATES: Final = (
    "SELECT name, status, fingerprint FROM conduit_mcp_pending"
    " WHERE server_id = ? AND name {in_json}"
)
_HOLD: Final = f"""
INSERT INTO conduit_mcp_pending ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
ON CONFLICT (server_id, name) DO UPDATE SET status = excluded.status,
    fingerprint = excluded.fingerprint, pinned_fingerprint = excluded.pinned_fingerprint,
    definition = excluded.definition, changes = excluded.changes,
    first_seen = excluded.first_seen, last_seen = excluded.last_seen, seen = 1,
    protocol_version = excluded.protocol_version
"""
_BUMP: Final = """
UPDATE conduit_mcp_pending SET seen = seen + 1, last_seen = ?
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_SETTLE: Final = "DELETE FROM conduit_mcp_pending WHERE server_id = ? AND name = ?"
_ONE: Final = (
    "SELECT fingerprint, definition, protocol_version FROM conduit_mcp_pending"
    " WHERE server_id = ? AND name = ?"
)
#: The queue without the definitions and field changes (`pending(..., brief=True)`).
_BRIEF: Final = _READ.replace("p.definition, p.changes", "NULL, '[]'")


def states(db: Database, server_id: str, names: list[str]) -> dict[str, tuple[str, str]]:
    """Name -> (status, fingerprint) of the pending rows of `names` (stored names)."""
    rows = db.run(_STATES, (server_id, json.dumps(names)))
    return {row[0]: (row[1], row[2]) for row in rows}


def hold(db: Database, rows: Sequence[PendingRow]) -> None:
    """Write each row, replacing the tool's earlier pending state (its counter restarts)."""
    db.many(
        _HOLD,
        [
            (
                row.server_id,
                row.name,
                row.status,
                row.fingerprint,
                row.pinned_fingerprint,
                row.definition,
                row.changes,
                row.seen_at,
                row.seen_at,
                row.protocol_version,
            )
            for row in rows
        ],
    )


def bump(db: Database, server_id: str, seen: Sequence[tuple[str, str, float]]) -> None:
    """The same pending state seen again: (name, fingerprint, at) -> counter and last_seen."""
    db.many(_BUMP, [(at, server_id, name, value) for name, value, at in seen])


def fingerprint_of(db: Database, server_id: str, name: str) -> str | None:
    """The fingerprint the pending row of one tool holds (stored names), or `None`."""
    row = db.run(_ONE, (server_id, name)).fetchone()
    return None if row is None else str(row[0])


def entry_of(db: Database, server_id: str, name: str) -> tuple[str, str | None, str | None] | None:
    """(fingerprint, definition, protocol version) of one tool's pending row, or `None`."""
    row = db.run(_ONE, (server_id, name)).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def settle(db: Database, server_id: str, names: Sequence[str]) -> None:
    """Remove the pending rows of `names` (approved or pinned now)."""
    db.many(_SETTLE, [(server_id, name) for name in names])


class PendingQueue(Room):
    """`PinStore`'s reading of the pending queue."""

    def pending(
        self, server_id: str | None = None, name: str | None = None, *, brief: bool = False
    ) -> tuple[Pending, ...]:
        """The pending queue: tools awaiting a person's approval, by server id and name.

        Args:
            server_id: only this server's, or `None` for all.
            name: only this tool (with `server_id`), or `None`.
            brief: leave the definitions and field changes out (`definition` is `None` and
                `changes` is `()` in every row): a queue of a thousand tools with large
                definitions, read for a list.

        Returns:
            `Pending` rows ordered by server id and name.

        Raises:
            TypeError, ValueError: bad `server_id` or `name`; the store is closed; a row the
                store holds is malformed (the message names its table and column).
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else store_text(check_server_id(server_id))
        key = None if name is None else stored_name(name)
        where, args = filters(stored, key, "p.")
        sql = f"{_BRIEF if brief else _READ}{where} ORDER BY p.server_id, p.name"
        return tuple(_pending(row) for row in self._open().fetch(sql, args))


def _pending(row: tuple[Any, ...]) -> Pending:
    r = Row("conduit_mcp_pending", row)
    changes = r.text(6, "changes")
    if changes == "[]":  # no change (a new tool), or read `brief`
        return _pending_row(r, row, ())
    try:
        items = json.loads(changes)
        parsed = tuple(
            FieldChange(c["path"], c["op"], c.get("old"), c.get("new"), c["material"])
            for c in items
        )
    except (ValueError, TypeError, KeyError, RecursionError):
        raise r.fail("changes", changes, "a JSON array of field changes") from None
    return _pending_row(r, row, parsed)


def _pending_row(r: Row, row: tuple[Any, ...], parsed: tuple[FieldChange, ...]) -> Pending:
    return Pending(
        r.name(0, "server_id"),
        r.name(1, "name"),
        r.text(2, "status"),
        r.text(3, "fingerprint"),
        r.text(4, "pinned_fingerprint", optional=True),
        r.text(5, "definition", optional=True),
        parsed,
        r.number(7, "first_seen"),
        r.number(8, "last_seen"),
        r.integer(9, "seen"),
        r.text(10, "protocol_version", optional=True),
        *_revocation(row),
    )


def _revocation(
    row: tuple[Any, ...],
) -> tuple[float | None, str | None, str | None, str | None]:
    """The revocation columns of a pending row: (revoked_at, revoked_by, fingerprint, reason),
    each `None` when the tool was never revoked."""
    r = Row("conduit_mcp_revoked", row)
    if len(row) < 15 or row[11] is None:
        return None, None, None, None
    return (
        r.number(11, "revoked_at"),
        r.name(12, "approver", optional=True),
        r.text(13, "fingerprint", optional=True),
        r.name(14, "reason", optional=True),
    )
