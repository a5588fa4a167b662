"""Rejections: pending definitions a person refused, remembered per fingerprint.

Not a public module. Every statement on `conduit_mcp_rejected` is here: `Rejections.reject`
(one transaction: the rejection, the pending row settled, its audit row), the reads the
checks make inside their transaction (`rejected_among`), the rejection an approval of the same
definition takes back (`unreject`), and `Rejections.rejections`. A rejected fingerprint stays
blocked and never comes back to the queue; another definition of the same tool does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..client._tool import check_server_id
from . import _audit, _feed, _pending
from ._audit import audit_row
from ._database import Database, Room
from ._rows import Row, check_fingerprint, filters, store_text, stored_approver, stored_name


@dataclass(frozen=True, slots=True)
class RejectedDefinition:
    """One definition a person rejected. Immutable.

    Attributes:
        server_id, name: the tool.
        fingerprint: the rejected definition's `"jcs-sha256:"` fingerprint: while a server
            lists it, the tool is blocked and stays out of the pending queue.
        rejected_at: seconds since the Unix epoch (UTC).
        approver: who rejected it.
        reason: why (the person's words).
    """

    server_id: str
    name: str
    fingerprint: str
    rejected_at: float
    approver: str | None
    reason: str


_REJECT: Final = """
INSERT INTO conduit_mcp_rejected (server_id, name, fingerprint, rejected_at, approver, reason)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (server_id, name, fingerprint) DO UPDATE SET rejected_at = excluded.rejected_at,
    approver = excluded.approver, reason = excluded.reason
"""
_UNREJECT: Final = (
    "DELETE FROM conduit_mcp_rejected WHERE server_id = ? AND name = ? AND fingerprint = ?"
)
# The (name, fingerprint) pairs of a page that were rejected: names as a JSON array, and the
# fingerprints as a second array at the same positions.
_AMONG: Final = (
    "SELECT name, fingerprint FROM conduit_mcp_rejected WHERE server_id = ? AND name {in_json}"
)
_READ: Final = (
    "SELECT server_id, name, fingerprint, rejected_at, approver, reason FROM conduit_mcp_rejected"
)

#: The longest reason kept (characters): a reason is a person's sentence, not a document.
MAX_REASON: Final = 2000


def rejected_among(db: Database, server_id: str, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """The stored names among (stored name, fingerprint) `pairs` whose listed fingerprint was
    rejected, in the caller's transaction."""
    if not pairs:
        return set()
    wanted = set(pairs)
    names = sorted({name for name, _ in pairs})
    rows = db.run(_AMONG, (server_id, json.dumps(names)))
    return {name for name, value in rows if (name, value) in wanted}


def unreject(db: Database, rows: Sequence[tuple[str, str, str]]) -> None:
    """Take back the rejections of (server id, name, fingerprint) `rows` (approved now)."""
    db.many(_UNREJECT, rows)


def check_reason(reason: object, *, required: bool) -> str | None:
    """A decision's reason as stored (`None` when absent and not `required`).

    Raises:
        TypeError: not a `str` (nor `None`).
        ValueError: empty when `required`; longer than `MAX_REASON`; a lone surrogate.
    """
    if reason is None and not required:
        return None
    if not isinstance(reason, str):
        raise TypeError(f"reason must be a str, got {type(reason).__name__}")
    if required and not reason.strip():
        raise ValueError("a rejection needs a reason (a person's words, non-empty)")
    if len(reason) > MAX_REASON:
        raise ValueError(f"a reason holds at most {MAX_REASON} characters")
    return stored_approver(reason)


class Rejections(Room):
    """`PinStore`'s rejections of pending definitions."""

    def reject(
        self,
        server_id: str,
        name: str,
        *,
        fingerprint: str,
        approver: str,
        reason: str,
    ) -> bool:
        """Reject the pending definition `fingerprint` of one tool: it leaves the queue and stays
        blocked; a server listing it again does not bring it back, another definition does.

        One transaction under the server's lock: only when the pending row still holds
        `fingerprint` (the definition the person reviewed) is anything written — the
        rejection, the pending row removed, one audit row (`action="reject"`, the reason).

        Args:
            server_id: the operator-assigned id of the server.
            name: the tool name.
            fingerprint: the pending definition's `"jcs-sha256:"` fingerprint, as reviewed.
            approver: who rejects (non-empty text).
            reason: why (non-empty text, at most `MAX_REASON` characters).

        Returns:
            `True` when rejected; `False` when that fingerprint is not what is pending for the
            tool (nothing written: the server listed another definition since, or a person
            decided meanwhile).

        Raises:
            TypeError, ValueError: a bad argument (an empty approver or reason, a fingerprint
                not of the form `jcs-sha256:` + 64 lowercase hex digits); the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written (nothing changed).
        """
        check_server_id(server_id)
        key = stored_name(name)
        check_fingerprint(fingerprint)
        if not isinstance(approver, str) or not approver.strip():
            raise ValueError("approver must name who rejects (non-empty)")
        who = stored_approver(approver)
        why = check_reason(reason, required=True)
        stored_id = store_text(server_id)
        db = self._open()
        at = time.time()
        with db.writing(stored_id):
            if _pending.fingerprint_of(db, stored_id, key) != fingerprint:
                return False
            db.run(_REJECT, (stored_id, key, fingerprint, at, who, why))
            _pending.settle(db, stored_id, [key])
            row = audit_row(
                at, stored_id, key, "reject", fingerprint=fingerprint, approver=who, reason=why
            )
            _audit.append(db, [row])
            _feed.notify(db)
        return True

    def rejections(
        self, server_id: str | None = None, name: str | None = None
    ) -> tuple[RejectedDefinition, ...]:
        """The rejected definitions (of one server, or one tool), by server id, name and time.

        Raises:
            TypeError, ValueError: bad `server_id` or `name`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else store_text(check_server_id(server_id))
        key = None if name is None else stored_name(name)
        where, args = filters(stored, key)
        rows = self._open().fetch(f"{_READ}{where} ORDER BY server_id, name, rejected_at", args)
        return tuple(_rejection(row) for row in rows)


def _rejection(row: tuple[Any, ...]) -> RejectedDefinition:
    r = Row("conduit_mcp_rejected", row)
    return RejectedDefinition(
        r.name(0, "server_id"),
        r.name(1, "name"),
        r.text(2, "fingerprint"),
        r.number(3, "rejected_at"),
        r.name(4, "approver", optional=True),
        r.name(5, "reason"),
    )
