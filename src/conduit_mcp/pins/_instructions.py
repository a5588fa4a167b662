"""The server's instructions, pinned: approved per server id like a tool, and the text awaiting
a person when it is new or changed.

Not a public module: `PinStore.check_instructions`, `approve_instructions`,
`pending_instructions`; `InstructionsCheck` and `PendingInstructions` are exported from
`conduit_mcp.pins`. Every statement on `conduit_mcp_instructions` (migration 4) is here: one
row per server id holds the approved text (its fingerprint, approver, time, protocol
version) and the text awaiting approval, if any (status `"new"` or `"changed"`, first and last
sighting, how often seen). Texts are stored as JSON strings (so U+0000 and any other
character survive PostgreSQL text); the fingerprint is `conduit_mcp.client.fingerprint` of
the string (RFC 8785 + SHA-256, `"jcs-sha256:"`).

The instructions are what a server's `initialize` result (`server/discover` from 2026-07-28)
hands the model as a hint, often put into its system prompt (spec 2025-11-25
basic/lifecycle `InitializeResult.instructions`): a server that changes them changes what the
model is told, so a change waits for a person as a tool change does (docs/guard.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..client._fingerprint import fingerprint as _fingerprint
from ..client._tool import check_server_id
from ..client._versions import check_version
from . import _audit, _feed
from ._database import Database, Room
from ._rows import Row, store_text, stored_approver

_COLUMNS: Final = (
    "fingerprint, instructions, approver, approved_at, protocol_version, pending_status,"
    " pending_fingerprint, pending_instructions, first_seen, last_seen, seen, pending_version"
)
_READ: Final = f"SELECT server_id, {_COLUMNS} FROM conduit_mcp_instructions"
_ONE: Final = _READ + " WHERE server_id = ?"
#: The approved text (the pending one cleared: it is approved now, or superseded).
_APPROVE: Final = """
INSERT INTO conduit_mcp_instructions (server_id, fingerprint, instructions, approver,
    approved_at, protocol_version, seen) VALUES (?, ?, ?, ?, ?, ?, 0)
ON CONFLICT (server_id) DO UPDATE SET fingerprint = excluded.fingerprint,
    instructions = excluded.instructions, approver = excluded.approver,
    approved_at = excluded.approved_at, protocol_version = excluded.protocol_version,
    pending_status = NULL, pending_fingerprint = NULL, pending_instructions = NULL,
    first_seen = NULL, last_seen = NULL, seen = 0, pending_version = NULL
"""
#: A text awaiting approval, replacing another (its counter restarts).
_HOLD: Final = """
INSERT INTO conduit_mcp_instructions (server_id, pending_status, pending_fingerprint,
    pending_instructions, first_seen, last_seen, seen, pending_version)
VALUES (?, ?, ?, ?, ?, ?, 1, ?)
ON CONFLICT (server_id) DO UPDATE SET pending_status = excluded.pending_status,
    pending_fingerprint = excluded.pending_fingerprint,
    pending_instructions = excluded.pending_instructions, first_seen = excluded.first_seen,
    last_seen = excluded.last_seen, seen = 1, pending_version = excluded.pending_version
"""
#: The same text awaiting approval, seen again.
_BUMP: Final = """
UPDATE conduit_mcp_instructions SET seen = seen + 1, last_seen = ?
WHERE server_id = ? AND pending_fingerprint = ?
"""
#: The server lists the approved text again: nothing waits any more.
_SETTLE: Final = """
UPDATE conduit_mcp_instructions SET pending_status = NULL, pending_fingerprint = NULL,
    pending_instructions = NULL, first_seen = NULL, last_seen = NULL, seen = 0,
    pending_version = NULL
WHERE server_id = ?
"""

InstructionsStatus = Literal["approved", "new", "changed"]
#: The audit `outcome` of an approval of instructions (action `"approve"`) and of a text held
#: for review (action `"check"`); `name` `""`: no tool of that name, so a guard following the
#: change feed finds no tool to change.
AUDIT_OUTCOME: Final = "instructions"
#: The audit `outcome` of a check that found the approved text again while another one waited
#: (action `"check"`): the waiting text left the queue, as a tool's pending entry does with
#: outcome `"approved"` (`_checks.py`); its own word, so it is never read as a text held.
SETTLED_OUTCOME: Final = "instructions_approved"
#: The `reason` of that entry (a tool's says the same of its definition).
_SETTLED_REASON: Final = (
    "listed with its approved instructions again: the pending text left the queue"
)


@dataclass(frozen=True, slots=True)
class InstructionsCheck:
    """What the store says about a server's instructions as listed now. Immutable.

    Attributes:
        status: `"approved"` (the approved text), `"new"` (none approved yet) or `"changed"`
            (another text is approved).
        fingerprint: the fingerprint of the text checked.
        approved: the approved text after the check (the one checked when it was pinned now),
            or `None` when none is approved.
        approved_fingerprint: its fingerprint, or `None`.
        pinned: whether this check approved the text (`pin_new` / `pin_changed`).
    """

    status: InstructionsStatus
    fingerprint: str
    approved: str | None
    approved_fingerprint: str | None
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class PendingInstructions:
    """A server's instructions awaiting a person's approval. Immutable.

    Attributes:
        server_id: the server.
        status: `"new"` (none approved before) or `"changed"`.
        fingerprint: the fingerprint of the text awaiting approval.
        instructions: that text, as the server sent it.
        pinned: the approved fingerprint it differs from, or `None`.
        approved: the approved text, or `None`.
        first_seen, last_seen: seconds since the Unix epoch (UTC) of the first and the last
            check that found this text.
        seen: how many checks found it.
        protocol_version: of the last check, or `None`.
    """

    server_id: str
    status: str
    fingerprint: str
    instructions: str
    pinned: str | None
    approved: str | None
    first_seen: float
    last_seen: float
    seen: int
    protocol_version: str | None


class _Stored:
    """One stored row, read."""

    __slots__ = ("approved", "fingerprint", "pending", "pending_fingerprint")

    def __init__(self, row: tuple[Any, ...] | None) -> None:
        self.fingerprint: str | None = None
        self.approved: str | None = None
        self.pending_fingerprint: str | None = None
        self.pending: str | None = None
        if row is not None:
            r = Row("conduit_mcp_instructions", row)
            self.fingerprint = r.text(1, "fingerprint", optional=True)
            self.approved = _text(r, 2, "instructions")
            self.pending_fingerprint = r.text(7, "pending_fingerprint", optional=True)
            self.pending = _text(r, 8, "pending_instructions")


class Instructions(Room):
    """`PinStore`'s room for servers' instructions."""

    def check_instructions(
        self,
        server_id: str,
        instructions: str,
        *,
        approver: str,
        pin_new: bool = False,
        pin_changed: bool = False,
        protocol_version: str | None = None,
        queue: bool = True,
    ) -> InstructionsCheck:
        """Check a server's instructions against the approved text, and write what a policy
        allows, in one transaction (what a guard calls at each `initialize`).

        A first read without any lock answers approved instructions when nothing waits.
        Otherwise, under the server's lock (read again there): the approved text while another
        waits takes the waiting one out of the queue, with one audit entry (action `"check"`,
        outcome `"instructions_approved"`, `name` `""`, the fingerprint listed, the waiting
        one as the previous fingerprint, a reason), as a tool's pending entry leaves with
        outcome `"approved"`; `pin_new` approves a first text, `pin_changed` replaces the approved
        one (each with `approver`, and an audit entry: action `"approve"`, outcome
        `"instructions"`, as a person's approval); anything else not approved waits in the queue
        (`pending_instructions`; `queue=False`: not written, for a store nobody reads). A
        text that starts to wait writes one audit entry (action `"check"`, outcome
        `"instructions"`, `name` `""`, the previous approved fingerprint), so a console or
        `pins audit --follow` learns of it at once; a text already waiting writes none.

        Args:
            server_id: the operator-assigned id of the server.
            instructions: the `instructions` string as the server sent it.
            approver: recorded with an approval this call writes (e.g. `"conduit-mcp
                guard"`).
            pin_new, pin_changed: which automatic approvals are allowed.
            protocol_version: recorded with what is written.
            queue: write the waiting text.

        Returns:
            An `InstructionsCheck`.

        Raises:
            TypeError, ValueError: a bad `server_id`, `instructions` that is not a `str`, an
                empty `approver`; the store is closed.
            Error: `instructions` holds a lone surrogate (not JSON text: it has no
                fingerprint).
            sqlite3.Error, psycopg.Error: the database cannot be read or written.

        Spec: 2025-11-25 basic/lifecycle (`InitializeResult.instructions`), 2026-07-28
        (`DiscoverResult.instructions`): a hint to the model, which clients MAY add to the
        system prompt.
        """
        check_server_id(server_id)
        if not isinstance(instructions, str):
            raise TypeError(f"instructions must be a str, got {type(instructions).__name__}")
        if not isinstance(approver, str) or not approver.strip():
            raise ValueError("approver must name who writes the automatic approvals")
        if protocol_version is not None:
            check_version(protocol_version)
        value = _fingerprint(instructions)
        stored_id = store_text(server_id)
        db = self._open()
        now = _stored(db, stored_id)
        if now.fingerprint == value and now.pending_fingerprint is None:
            return InstructionsCheck("approved", value, now.approved, value)
        who = stored_approver(approver)
        at = time.time()
        text = json.dumps(instructions, ensure_ascii=False)
        with db.writing(stored_id):
            now = _stored(db, stored_id, locked=True)  # again, under the lock
            if now.fingerprint == value:
                if now.pending_fingerprint is not None:
                    # Read under the lock: of two guards settling at once, one writes this.
                    _settle(db, stored_id, at, value, now.pending_fingerprint, protocol_version)
                return InstructionsCheck("approved", value, now.approved, value)
            status: InstructionsStatus = "new" if now.fingerprint is None else "changed"
            if (pin_new and status == "new") or (pin_changed and status == "changed"):
                db.run(_APPROVE, (stored_id, value, text, who, at, protocol_version))
                # An automatic approval is an audit entry, as a tool's is (`pins audit` shows
                # who let which text reach the model, a policy's as a person's).
                approved = _audit.audit_row(
                    at,
                    stored_id,
                    "",
                    "approve",
                    outcome=AUDIT_OUTCOME,
                    fingerprint=value,
                    previous=now.fingerprint,
                    definition=text,
                    approver=who,
                    protocol_version=protocol_version,
                )
                _audit.append(db, [approved])
                _feed.notify(db)
                return InstructionsCheck(status, value, instructions, value, pinned=True)
            if queue:
                if now.pending_fingerprint == value:
                    db.run(_BUMP, (at, stored_id, value))
                else:
                    db.run(_HOLD, (stored_id, status, value, text, at, at, protocol_version))
                    # One audit entry per text held, as for a held tool: every page and
                    # `pins audit --follow` following the log learns that a text waits.
                    held = _audit.audit_row(
                        at,
                        stored_id,
                        "",
                        "check",
                        outcome=AUDIT_OUTCOME,
                        fingerprint=value,
                        previous=now.fingerprint,
                        protocol_version=protocol_version,
                    )
                    _audit.append(db, [held])
                    _feed.notify(db)
            return InstructionsCheck(status, value, now.approved, now.fingerprint)

    def approve_instructions(
        self,
        server_id: str,
        instructions: str | None = None,
        *,
        approver: str,
        fingerprint: str | None = None,
        protocol_version: str | None = None,
    ) -> str | None:
        """Approve a server's instructions: `instructions` as given, or (without it) the text
        awaiting approval; the waiting text leaves the queue.

        Args:
            server_id: the operator-assigned id of the server.
            instructions: the text to approve, or `None` for the one the queue holds.
            approver: who approves (required, e.g. `"alice@example.com"`).
            fingerprint: the fingerprint of the text the person reviewed (`pins pending`
                shows it): when the text to approve has another one (the server sent a new
                text since), nothing is approved.
            protocol_version: recorded with the approval (default: the waiting text's).

        Returns:
            The fingerprint approved, or `None` when nothing was (nothing waits, or the text
            is not the one reviewed). An approval writes its audit entry in the same
            transaction: action `"approve"`, outcome `"instructions"`, `name` `""`, the
            fingerprint approved and the one it replaced, the text (as JSON) and `approver`.

        Raises:
            TypeError, ValueError: a bad `server_id`, `instructions` or `approver` (empty, a
                lone surrogate); the store is closed.
            Error: `instructions` holds a lone surrogate.
            sqlite3.Error, psycopg.Error: the database cannot be written (nothing changed).
        """
        check_server_id(server_id)
        if not isinstance(approver, str) or not approver.strip():
            raise ValueError("approver must name who approves (non-empty)")
        if protocol_version is not None:
            check_version(protocol_version)
        who = stored_approver(approver)
        stored_id = store_text(server_id)
        db = self._open()
        with db.writing(stored_id):
            rows = list(db.run(_ONE, (stored_id,)).fetchall())
            before = _Stored(rows[0] if rows else None).fingerprint
            if instructions is None:
                waiting = _pending(rows[0]) if rows else None
                if waiting is None:
                    return None
                instructions = waiting.instructions
                version = protocol_version or waiting.protocol_version
            elif not isinstance(instructions, str):
                raise TypeError(f"instructions must be a str, got {type(instructions).__name__}")
            else:
                version = protocol_version
            value = _fingerprint(instructions)
            if fingerprint is not None and _bare(fingerprint) != _bare(value):
                return None
            text = json.dumps(instructions, ensure_ascii=False)
            at = time.time()
            db.run(_APPROVE, (stored_id, value, text, who, at, version))
            row = _audit.audit_row(
                at,
                stored_id,
                "",
                "approve",
                outcome=AUDIT_OUTCOME,
                fingerprint=value,
                previous=before,
                definition=text,
                approver=who,
                protocol_version=version,
            )
            _audit.append(db, [row])
            _feed.notify(db)
        return value

    def pending_instructions(self, server_id: str | None = None) -> tuple[PendingInstructions, ...]:
        """The instructions awaiting approval, by server id.

        Args:
            server_id: only this server's, or `None` for every server's.

        Returns:
            `PendingInstructions`, ordered by server id.

        Raises:
            TypeError, ValueError: a bad `server_id`; the store is closed; a malformed row.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        if server_id is None:
            sql, args = _READ + " WHERE pending_fingerprint IS NOT NULL", []
        else:
            sql = _READ + " WHERE server_id = ? AND pending_fingerprint IS NOT NULL"
            args = [store_text(check_server_id(server_id))]
        rows = self._open().fetch(sql + " ORDER BY server_id", args)
        found = (_pending(row) for row in rows)
        return tuple(item for item in found if item is not None)


def _settle(
    db: Database,
    stored_id: str,
    at: float,
    value: str,
    waiting: str,
    protocol_version: str | None,
) -> None:
    """The approved text `value` listed again while `waiting` waited: the waiting text leaves
    the queue, and one audit entry says so (in the caller's write transaction)."""
    db.run(_SETTLE, (stored_id,))
    row = _audit.audit_row(
        at,
        stored_id,
        "",
        "check",
        outcome=SETTLED_OUTCOME,
        fingerprint=value,
        previous=waiting,
        protocol_version=protocol_version,
        reason=_SETTLED_REASON,
    )
    _audit.append(db, [row])
    _feed.notify(db)


def _bare(value: str) -> str:
    return value.removeprefix("jcs-sha256:")


def _stored(db: Database, stored_id: str, *, locked: bool = False) -> _Stored:
    """The server's row; `locked`: read inside the caller's write transaction."""
    if locked:
        rows = list(db.run(_ONE, (stored_id,)).fetchall())
    else:
        rows = db.fetch(_ONE, (stored_id,))
    return _Stored(rows[0] if rows else None)


def _text(r: Row, index: int, column: str) -> str | None:
    """A stored JSON string (`None` for SQL NULL)."""
    raw = r.text(index, column, optional=True)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise r.fail(column, raw, "a JSON string")
    return value


def _pending(row: tuple[Any, ...]) -> PendingInstructions | None:
    r = Row("conduit_mcp_instructions", row)
    value = r.text(7, "pending_fingerprint", optional=True)
    if value is None:
        return None
    text = _text(r, 8, "pending_instructions")
    if text is None:
        raise r.fail("pending_instructions", None, "a JSON string")
    return PendingInstructions(
        r.name(0, "server_id"),
        r.text(6, "pending_status"),
        value,
        text,
        r.text(1, "fingerprint", optional=True),
        _text(r, 2, "instructions"),
        r.number(9, "first_seen"),
        r.number(10, "last_seen"),
        r.integer(11, "seen"),
        r.text(12, "pending_version", optional=True),
    )
