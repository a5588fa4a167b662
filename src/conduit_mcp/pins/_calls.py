"""The call audit: who called which tool when, the verdict, a digest of the arguments.

Not a public module: `CallRecord` and `arguments_digest` are exported by `conduit_mcp.pins`;
`PinStore.record_calls`, `calls_since` and `prune_calls` are this room's. Every statement on
`conduit_mcp_calls` is here. Opt-in (`--audit-calls` of a `--listen` proxy writes it): a call's
arguments are kept as their digest (`"sha256:"` + hex SHA-256 of their RFC 8785 canonical
JSON), never their values unless the operator asks (`arguments` then holds the canonical
text). Rows are never updated (the database refuses); old ones may be deleted
(`prune_calls`), the retention an audit of calls needs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..client import canonical_json
from ._database import Room
from ._rows import Row, check_age, check_unicode, store_text

_WRITTEN: Final = (
    "at, server_id, tool, subject, caller_groups, verdict, reason, arguments_digest, arguments,"
    " request_id"
)
_RECORD: Final = f"INSERT INTO conduit_mcp_calls ({_WRITTEN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_AFTER: Final = f"SELECT id, {_WRITTEN} FROM conduit_mcp_calls WHERE id > ? ORDER BY id LIMIT ?"
_PRUNE: Final = "DELETE FROM conduit_mcp_calls WHERE at < ?"
#: The lock writers of the call audit take (PostgreSQL: ids drawn in commit order).
_LOCK: Final = "conduit_mcp_calls"


def arguments_digest(arguments: Any) -> str:
    """`"sha256:"` + hex SHA-256 of the RFC 8785 canonical JSON of `arguments` (a call's
    `arguments` object; `None` digests as `{}`): equal arguments, equal digests, whatever the
    order of their members or the spelling of their numbers.

    Raises:
        conduit_mcp.client.Error: `arguments` is not JSON (see `canonical_json`).
    """
    data = canonical_json({} if arguments is None else arguments)
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call in the call audit. Immutable.

    Attributes:
        id: ascending in commit order (`0` for a record not yet written): the cursor of
            `PinStore.calls_since`.
        at: seconds since the Unix epoch (UTC), when the proxy decided.
        server_id: the operator-assigned server id.
        tool: the tool name called.
        subject: the caller's token subject, or `None` (no authentication).
        groups: the caller's groups.
        verdict: `"passed"` (sent on, answered); `"refused"` (answered by the proxy, never
            sent to the server: the policy or the guard, with `reason`; or never sent when
            its session ended or its client left: `session_closed`, `cancelled`,
            `caller_gone`); `"withheld"` (sent
            on, the server answered, and the guard kept that answer from the client: `reason`
            is the guard's reason code, such as `invalid_result`; `None` when it dropped the
            answer); `"unanswered"` (sent on, and no answer reached the client: `reason`
            `cancelled`, `caller_gone`, `timeout` or `session_closed`); `"error"` (an error
            the server wrote, a result with `isError`, or the upstream failed: `reason`
            `upstream_http_401` / `upstream_http_403` for an HTTP upstream refusing the
            caller's credentials, `upstream_failed` for one that gave no JSON-RPC answer).
        reason: the verdict's reason code (above), or `None`.
        arguments_digest: `arguments_digest(arguments)`.
        arguments: the canonical JSON text of the arguments, only when the operator asked to
            keep them; else `None`.
        request_id: the JSON-RPC id, as text (at most 64 characters), or `None`.
    """

    id: int
    at: float
    server_id: str
    tool: str
    subject: str | None
    groups: tuple[str, ...]
    verdict: str
    reason: str | None
    arguments_digest: str
    arguments: str | None = None
    request_id: str | None = None


class CallAudit(Room):
    """`PinStore`'s call audit: record calls, tail them, prune them."""

    def record_calls(self, records: Sequence[CallRecord]) -> None:
        """Append `records` in one transaction (their `id` is ignored: the database draws
        one).

        Raises:
            TypeError, ValueError: a record of the wrong shape (text with a lone surrogate);
                the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        rows = []
        for r in records:
            for text in (r.server_id, r.tool, r.subject or "", r.reason or "", *r.groups):
                check_unicode(text, "a call record")
            rows.append(
                (
                    float(r.at),
                    store_text(r.server_id),
                    store_text(r.tool),
                    None if r.subject is None else store_text(r.subject),
                    json.dumps(list(r.groups)),
                    r.verdict,
                    r.reason,
                    r.arguments_digest,
                    r.arguments,
                    None if r.request_id is None else str(r.request_id)[:64],
                )
            )
        if not rows:
            return
        db = self._open()
        with db.writing(_LOCK):
            db.many(_RECORD, rows)

    def calls_since(self, cursor: int = 0, *, limit: int = 1000) -> tuple[CallRecord, ...]:
        """The call records after `cursor` (a `CallRecord.id`, `0` first), oldest first.

        Raises:
            ValueError: a negative cursor or a limit below 1; the store is closed; a malformed
                row.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        if type(cursor) is not int or cursor < 0:
            raise ValueError("cursor must be a non-negative int (a CallRecord.id, or 0)")
        if type(limit) is not int or limit < 1:
            raise ValueError("limit must be a positive int")
        return tuple(_record(row) for row in self._open().fetch(_AFTER, (cursor, limit)))

    def prune_calls(self, older_than: float) -> int:
        """Delete the call records older than `older_than` seconds; how many.

        Raises:
            ValueError: a negative or non-finite age; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        age = check_age(older_than)
        db = self._open()
        with db.writing(_LOCK):
            return int(db.run(_PRUNE, (time.time() - age,)).rowcount)


def _record(row: Sequence[Any]) -> CallRecord:
    r = Row("conduit_mcp_calls", row)
    groups_text = r.text(5, "groups", optional=True)
    try:
        groups = json.loads(groups_text) if groups_text else []
    except ValueError:
        raise r.fail("groups", groups_text, "a JSON array") from None
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise r.fail("groups", groups_text, "a JSON array of strings")
    return CallRecord(
        r.integer(0, "id"),
        r.number(1, "at"),
        r.name(2, "server_id"),
        r.name(3, "tool"),
        r.name(4, "subject", optional=True),
        tuple(groups),
        r.text(6, "verdict"),
        r.text(7, "reason", optional=True),
        r.text(8, "arguments_digest"),
        r.text(9, "arguments", optional=True),
        r.text(10, "request_id", optional=True),
    )
