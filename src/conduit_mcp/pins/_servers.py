"""The servers a store knows: when each was last listed, and its tools by state.

Not a public module. Every statement on `conduit_mcp_servers` is here: `note_listed` (a
guard's check of a page records the time, at most once per `NOTE_EVERY` seconds per server
and process, so the steady state stays one read) and `ServerFacts.servers`, which counts each
server's tools from the tables of the other rooms (read only).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Final

from ._database import Database, Room
from ._rows import Row

logger = logging.getLogger("conduit_mcp.pins")

#: Seconds between two notes of the same server's listing by one `PinStore`.
NOTE_EVERY: Final = 30.0


@dataclass(frozen=True, slots=True)
class ServerSummary:
    """One server id the store knows, and its tools by state. Immutable.

    Attributes:
        server_id: the operator-assigned id.
        last_listed: when a guard last checked a listing of it (seconds since the Unix
            epoch, UTC; recorded at most every 30 s per guard process), or, for a server no
            guard of this version listed, the last time a listing left something to review;
            `None` when the store saw no listing (only approvals).
        ok: approved tools (pinned, and not awaiting review of a change).
        held: tools never approved, awaiting a person (pending, status new).
        blocked: approved tools whose definition changed (pending changed or cosmetic), and
            tools whose pin a person revoked.
        rejected: definitions a person rejected.
    """

    server_id: str
    last_listed: float | None
    ok: int
    held: int
    blocked: int
    rejected: int


_NOTE: Final = """
INSERT INTO conduit_mcp_servers (server_id, last_listed) VALUES (?, ?)
ON CONFLICT (server_id) DO UPDATE SET last_listed = CASE
    WHEN excluded.last_listed > conduit_mcp_servers.last_listed THEN excluded.last_listed
    ELSE conduit_mcp_servers.last_listed END
"""
_LISTED: Final = "SELECT server_id, last_listed FROM conduit_mcp_servers"
_PINS: Final = "SELECT server_id, count(*) FROM conduit_mcp_pins GROUP BY server_id"
_PENDING: Final = """
SELECT p.server_id, p.status, CASE WHEN r.name IS NULL THEN 0 ELSE 1 END, count(*),
    max(p.last_seen)
FROM conduit_mcp_pending AS p
LEFT JOIN conduit_mcp_revoked AS r ON r.server_id = p.server_id AND r.name = p.name
GROUP BY p.server_id, p.status, CASE WHEN r.name IS NULL THEN 0 ELSE 1 END
"""
_REVOKED: Final = """
SELECT r.server_id, count(*) FROM conduit_mcp_revoked AS r WHERE NOT EXISTS (
    SELECT 1 FROM conduit_mcp_pending AS p WHERE p.server_id = r.server_id AND p.name = r.name)
GROUP BY r.server_id
"""
_REJECTED: Final = "SELECT server_id, count(*) FROM conduit_mcp_rejected GROUP BY server_id"


def note_listed(db: Database, server_id: str, at: float) -> None:
    """Record that a listing of `server_id` (stored) was checked at `at` (its own transaction)."""
    with db.writing(None):
        db.run(_NOTE, (server_id, at))


class ServerFacts(Room):
    """`PinStore`'s view of the servers it knows."""

    _noted: dict[str, float]

    def _note_listed(self, stored_id: str) -> None:
        """A guard checked a listing of `stored_id`: recorded at most every `NOTE_EVERY`
        seconds by this store object; a failure is logged, never raised (the listing's
        check decides, not this note)."""
        now = time.time()
        last = self._noted.get(stored_id)
        if last is not None and 0 <= now - last < NOTE_EVERY:
            return
        self._noted[stored_id] = now
        if len(self._noted) > 10_000:  # many server ids in one process: keep the newest
            self._noted.pop(next(iter(self._noted)))
        try:
            note_listed(self._open(), stored_id, now)
        except Exception:
            logger.debug("pin store: could not record the listing of a server", exc_info=True)

    def servers(self) -> tuple[ServerSummary, ...]:
        """Every server id the store knows (a pin, a pending tool, a revocation, a rejection
        or a listing), ordered by id, with its tools counted by state.

        Raises:
            ValueError: the store is closed; a malformed row.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        db = self._open()
        with db.reading(snapshot=True):
            listed = list(db.run(_LISTED).fetchall())
            pins = list(db.run(_PINS).fetchall())
            pending = list(db.run(_PENDING).fetchall())
            revoked = list(db.run(_REVOKED).fetchall())
            rejected = list(db.run(_REJECTED).fetchall())
        facts: dict[str, dict[str, Any]] = {}

        def entry(server: Any) -> dict[str, Any]:
            key = Row("conduit_mcp_servers", (server,)).name(0, "server_id")
            return facts.setdefault(
                key, {"last": None, "ok": 0, "held": 0, "blocked": 0, "rejected": 0}
            )

        for server, at in listed:
            entry(server)["last"] = float(at)
        for server, count in pins:
            entry(server)["ok"] += int(count)
        for server, status, was_revoked, count, last_seen in pending:
            item = entry(server)
            if status in ("changed", "cosmetic"):
                item["ok"] -= int(count)
                item["blocked"] += int(count)
            elif was_revoked:
                item["blocked"] += int(count)
            else:
                item["held"] += int(count)
            if item["last"] is None or float(last_seen) > item["last"]:
                item["last"] = float(last_seen)
        for server, count in revoked:
            entry(server)["blocked"] += int(count)
        for server, count in rejected:
            entry(server)["rejected"] += int(count)
        return tuple(
            ServerSummary(
                server,
                item["last"],
                max(0, item["ok"]),
                item["held"],
                item["blocked"],
                item["rejected"],
            )
            for server, item in sorted(facts.items())
        )
