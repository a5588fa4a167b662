"""The two databases behind `PinStore`: one schema, versioned migrations, sqlite and PostgreSQL.

Not a public module. Every value arrives already checked and escaped by `_store.py`; every
value is a bound parameter (the SQL text holds only numbers this module generates). Each
backend call is one transaction.

Schema (both dialects; `conduit_mcp_migrations` records which versions were applied):

* version 1 (the first schema, before definitions and approvers were kept):
  `conduit_mcp_pins(server_id, name, fingerprint, approved_at)`, primary key (`server_id`, `name`);
* version 2: `definition` (canonical JSON of the approved tool, `NULL` when approved by
  fingerprint alone), `approver`, `protocol_version` on the pins; the append-only
  `conduit_mcp_audit` log, whose rows a trigger refuses to update or delete.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple, Protocol

from ._location import StoreLocation


class PinRow(NamedTuple):
    """One pin as stored."""

    server_id: str
    name: str
    fingerprint: str
    definition: str | None
    approver: str | None
    approved_at: float
    protocol_version: str | None


class PendingRow(NamedTuple):
    """One tool awaiting approval, as written by a check (the counters are the database's)."""

    server_id: str
    name: str
    status: str  # "new" | "changed" | "cosmetic"
    fingerprint: str
    pinned_fingerprint: str | None
    definition: str | None
    changes: str  # JSON array of FieldChange.to_json()
    seen_at: float
    protocol_version: str | None


class Writes(NamedTuple):
    """What one check-and-pin transaction writes (built by `PinStore` from what it read under
    the lock). Every pin write is conditional: it does nothing when the row is not as read."""

    new_pins: list[PinRow]  # inserted only when no pin and no revocation exists
    replace: list[tuple[PinRow, str]]  # (pin, the fingerprint it must still replace)
    cosmetic: list[tuple[str, str, str, str | None, float]]  # name, pinned, fp, definition, at
    pending: list[PendingRow]
    bump: list[tuple[str, str, float]]  # (name, fingerprint, at): the same pending state seen again
    unpend: list[str]  # names whose pending row is settled
    audit: list[tuple[tuple[Any, ...], str | None]]  # (audit row, name of the write it needs)


class Seen(NamedTuple):
    """What a check-and-pin transaction reads under the lock, for the differing tools."""

    found: list[tuple[int, str | None, str | None]]  # as `Backend.lookup`
    revoked: set[str]  # names with a revocation not followed by an approval
    pending: dict[str, tuple[str, str]]  # name -> (status, fingerprint) of its pending row


_PIN_COLUMNS: Final = (
    "server_id, name, fingerprint, definition, approver, approved_at, protocol_version"
)
_AUDIT_COLUMNS: Final = (
    "id, at, server_id, name, action, outcome, fingerprint, previous_fingerprint, definition,"
    " approver, protocol_version"
)
_AUDIT_INSERT_COLUMNS: Final = (
    "at, server_id, name, action, outcome, fingerprint, previous_fingerprint, definition,"
    " approver, protocol_version"
)

#: The newest schema version this library writes.
SCHEMA_VERSION: Final = 3

#: `PRAGMA application_id` of a sqlite pin store ("CMCP"): a file without it (and without the
#: store's tables) is not a pin store.
APPLICATION_ID: Final = 0x434D4350

_PENDING_COLUMNS: Final = (
    "server_id, name, status, fingerprint, pinned_fingerprint, definition, changes,"
    " first_seen, last_seen, seen, protocol_version"
)
_PIN_READ_COLUMNS: Final = _PIN_COLUMNS + ", cosmetic_fingerprint, cosmetic_definition"
#: A pending row with the revocation its tool is under, if any (`_PENDING_COLUMNS`, then the
#: revocation's time, approver and fingerprint, `NULL` when the tool was never revoked).
_PENDING_READ: Final = (
    "SELECT "
    + ", ".join(f"p.{column.strip()}" for column in _PENDING_COLUMNS.split(","))
    + ", r.revoked_at, r.approver, r.fingerprint FROM conduit_mcp_pending AS p"
    " LEFT JOIN conduit_mcp_revoked AS r ON r.server_id = p.server_id AND r.name = p.name"
)


class Backend(Protocol):
    """What `PinStore` needs from a database."""

    def lookup(
        self, server_id: str, names: Sequence[str], fingerprints: Sequence[str]
    ) -> list[tuple[int, str | None, str | None]]:
        """The entries of a page whose pin is not `fingerprints[i]`, compared in the database.

        Returns (i, pinned fingerprint or None when `names[i]` has no pin, the pinned
        definition or None), in no particular order; an approved entry returns nothing, so
        the steady state moves no rows. `names` are unique. One statement (sqlite: one per
        16,382 tools, in one read transaction), so one snapshot.
        """

    def approve(self, server_id: str, rows: Sequence[PinRow]) -> None:
        """Upsert the pins and append one audit row each, in one transaction."""

    def revoke(self, server_id: str, name: str, at: float, approver: str | None) -> str | None:
        """Delete a pin and audit it, in one transaction; the revoked fingerprint or None."""

    def settle(
        self,
        server_id: str,
        names: Sequence[str],
        fingerprints: Sequence[str],
        found: list[tuple[int, str | None, str | None]] | None,
        decide: Callable[[Seen], Writes],
    ) -> set[str]:
        """One write transaction under the server's lock: look the page up (unless `found` is
        given: then only pending rows and revocations are read), call `decide` with what was
        read, apply its writes (each pin write conditional), and return the names whose
        conditional pin writes took effect."""

    def pending(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        """Pending rows (`_PENDING_COLUMNS`, then the revocation's `revoked_at`, approver and
        fingerprint, or three `NULL`s), ordered by server and name."""

    def audit_after(self, cursor: int, limit: int) -> list[tuple[Any, ...]]:
        """Audit rows with `id > cursor`, ascending, at most `limit`."""

    def prune_checks(self, before: float) -> int:
        """Delete the check rows written before `before`; how many."""

    def pins(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        """The pins of one server (or all), ordered by server and name (`_PIN_READ_COLUMNS`:
        as stored, unchecked: sqlite may hold any type in any column)."""

    def audit(self, server_id: str | None, limit: int | None) -> list[tuple[Any, ...]]:
        """Audit rows in id order (the last `limit` when set)."""

    def close(self) -> None:
        """Close the connection."""


# -- sqlite ---------------------------------------------------------------------------------

# Revocations made before version 3 live only in the audit log: a name whose last approve or
# revoke row is a revoke, and which has no pin, was revoked.
_REVOKED_FROM_AUDIT: Final = """
INSERT INTO conduit_mcp_revoked (server_id, name, fingerprint, revoked_at, approver)
SELECT a.server_id, a.name, a.fingerprint, a.at, a.approver FROM conduit_mcp_audit AS a
WHERE a.action = 'revoke' AND a.id = (
    SELECT max(b.id) FROM conduit_mcp_audit AS b
    WHERE b.server_id = a.server_id AND b.name = a.name AND b.action IN ('approve', 'revoke'))
AND NOT EXISTS (
    SELECT 1 FROM conduit_mcp_pins AS p WHERE p.server_id = a.server_id AND p.name = a.name)
"""

_SQLITE_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS conduit_mcp_pins (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            approved_at REAL NOT NULL,
            PRIMARY KEY (server_id, name)
        ) WITHOUT ROWID""",
    ),
    2: (
        "ALTER TABLE conduit_mcp_pins ADD COLUMN definition TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN approver TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN protocol_version TEXT",
        # Covering: a page check reads this index only, never the rows with their definitions.
        "CREATE INDEX conduit_mcp_pins_lookup ON conduit_mcp_pins (server_id, name, fingerprint)",
        """CREATE TABLE conduit_mcp_audit (
            id                   INTEGER PRIMARY KEY AUTOINCREMENT,
            at                   REAL NOT NULL,
            server_id            TEXT NOT NULL,
            name                 TEXT NOT NULL,
            action               TEXT NOT NULL CHECK (action IN ('approve', 'revoke', 'check')),
            outcome              TEXT,
            fingerprint          TEXT,
            previous_fingerprint TEXT,
            definition           TEXT,
            approver             TEXT,
            protocol_version     TEXT
        )""",
        "CREATE INDEX conduit_mcp_audit_server ON conduit_mcp_audit (server_id, id)",
        """CREATE TRIGGER conduit_mcp_audit_no_update BEFORE UPDATE ON conduit_mcp_audit
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
        """CREATE TRIGGER conduit_mcp_audit_no_delete BEFORE DELETE ON conduit_mcp_audit
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
    ),
    3: (
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_fingerprint TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_definition TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_at REAL",
        "DROP INDEX conduit_mcp_pins_lookup",
        """CREATE INDEX conduit_mcp_pins_lookup3
        ON conduit_mcp_pins (server_id, name, fingerprint, cosmetic_fingerprint)""",
        """CREATE TABLE conduit_mcp_revoked (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT,
            revoked_at  REAL NOT NULL,
            approver    TEXT,
            PRIMARY KEY (server_id, name)
        ) WITHOUT ROWID""",
        """CREATE TABLE conduit_mcp_pending (
            server_id          TEXT NOT NULL,
            name               TEXT NOT NULL,
            status             TEXT NOT NULL,
            fingerprint        TEXT NOT NULL,
            pinned_fingerprint TEXT,
            definition         TEXT,
            changes            TEXT NOT NULL,
            first_seen         REAL NOT NULL,
            last_seen          REAL NOT NULL,
            seen               INTEGER NOT NULL,
            protocol_version   TEXT,
            PRIMARY KEY (server_id, name)
        ) WITHOUT ROWID""",
        _REVOKED_FROM_AUDIT,
        # Retention: check rows may be deleted (`PinStore.prune_checks`); approvals and
        # revocations stay append-only.
        "DROP TRIGGER conduit_mcp_audit_no_delete",
        """CREATE TRIGGER conduit_mcp_audit_no_delete BEFORE DELETE ON conduit_mcp_audit
        WHEN OLD.action <> 'check'
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
        f"PRAGMA application_id = {APPLICATION_ID}",
    ),
}

_SQLITE_UPSERT: Final = f"""
INSERT INTO conduit_mcp_pins ({_PIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (server_id, name) DO UPDATE SET fingerprint = excluded.fingerprint,
    definition = excluded.definition, approver = excluded.approver,
    approved_at = excluded.approved_at, protocol_version = excluded.protocol_version,
    cosmetic_fingerprint = NULL, cosmetic_definition = NULL, cosmetic_at = NULL
"""

_SQLITE_AUDIT: Final = (
    f"INSERT INTO conduit_mcp_audit ({_AUDIT_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@functools.lru_cache(maxsize=64)
def _sqlite_lookup(rows: int) -> str:
    """The page lookup for `rows` (name, fingerprint) parameters, then the server id.

    The page is a VALUES table joined to the covering index, and the comparison is made in
    the database: only entries whose pin differs come back (an approved 1,000-tool page moves
    no rows: 0.7 ms of CPU, where an IN list returning every fingerprint took 1.9 ms). The
    definition is a correlated subquery, evaluated only for the rows returned (an indexed
    column join would read every row's definition from the table: a WITHOUT ROWID table has
    no deferred seek). Padding rows (NULL, NULL) never match: `NULL IS NOT NULL` is false.
    """
    page = ",".join(f"({i},?,?)" for i in range(rows))
    server = f"?{2 * rows + 1}"
    return (
        f"WITH page(ord, name, fingerprint) AS (VALUES {page})"
        " SELECT page.ord, pin.fingerprint,"
        " CASE WHEN pin.fingerprint IS NULL THEN NULL ELSE"
        " (SELECT old.definition FROM conduit_mcp_pins AS old"
        f" WHERE old.server_id = {server} AND old.name = page.name) END"
        " FROM page LEFT JOIN conduit_mcp_pins AS pin INDEXED BY conduit_mcp_pins_lookup3"
        f" ON pin.server_id = {server} AND pin.name = page.name"
        " WHERE pin.fingerprint IS NOT page.fingerprint"
        " AND pin.cosmetic_fingerprint IS NOT page.fingerprint"
    )


def _padded(rows: int, most: int) -> int:
    """`rows` rounded up to one of a few sizes per power of two (at most 25 % more), so that
    pages of varying length reuse a few cached statements (preparing a 1,000-row lookup
    costs more than running it)."""
    step = 1 << max(0, rows.bit_length() - 3)
    return min(most, -(-rows // step) * step)


class SqliteBackend:
    """A sqlite file or `":memory:"`; writers take the database lock (`BEGIN IMMEDIATE`)."""

    def __init__(self, path: Any, timeout: float, *, create: bool = True) -> None:
        self.path = path
        self._conn = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        try:
            _check_marker(self._conn, path, create)  # before anything writes to the file
        except BaseException:
            self._conn.close()
            raise
        self._lock = threading.Lock()
        # Bound parameters per statement: two per tool, then the server id.
        getlimit = getattr(self._conn, "getlimit", None)  # Python 3.11+
        # SQLITE_LIMIT_VARIABLE_NUMBER is 9 (the constant is exported from Python 3.11 on).
        limit = getlimit(9) if getlimit else 999
        self._chunk = max(1, (min(limit, 32766) - 1) // 2)
        # No other PRAGMA: measured on a 1,000-tool page, cache_size (default 2 MB) and
        # mmap_size change nothing, since the page cache outlives a read transaction in WAL
        # mode unless another connection commits (then mmap was slower, not faster); the
        # lookup needs no temporary b-tree, so temp_store does not matter either.
        try:
            if path != ":memory:":
                # Readers never wait for a writer, and a commit is one fsync of the log
                # (synchronous stays FULL: an approval, and an audited check outcome, that
                # returned survives a power cut; NORMAL could lose the last ones).
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def _migrate(self) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS conduit_mcp_migrations"
                " (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            done = {row[0] for row in conn.execute("SELECT version FROM conduit_mcp_migrations")}
            _refuse_newer(done)
            for version, statements in sorted(_SQLITE_MIGRATIONS.items()):
                if version in done:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO conduit_mcp_migrations VALUES (?, ?)", (version, time.time())
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def lookup(
        self, server_id: str, names: Sequence[str], fingerprints: Sequence[str]
    ) -> list[tuple[int, str | None, str | None]]:
        # One statement per page, up to sqlite's bound-parameter limit (16,382 tools by
        # default); a longer page is several statements in one read transaction (one snapshot).
        with self._lock:
            conn = self._conn
            several = len(names) > self._chunk
            if several:
                conn.execute("BEGIN")
            try:
                return self._lookup_in(server_id, names, fingerprints)
            finally:
                if several:
                    conn.execute("COMMIT")

    def _lookup_in(
        self, server_id: str, names: Sequence[str], fingerprints: Sequence[str]
    ) -> list[tuple[int, str | None, str | None]]:
        """`lookup`'s statements, in the caller's transaction (lock held)."""
        total = len(names)
        out: list[tuple[int, str | None, str | None]] = []
        for start in range(0, total, self._chunk):
            size = min(self._chunk, total - start)
            rows = _padded(size, self._chunk)
            args: list[str | None] = [None] * (2 * rows + 1)
            args[0 : 2 * size : 2] = names[start : start + size]
            args[1 : 2 * size : 2] = fingerprints[start : start + size]
            args[-1] = server_id
            for ord_, pinned, definition in self._conn.execute(_sqlite_lookup(rows), args):
                out.append((start + ord_, pinned, definition))
        return out

    def approve(self, server_id: str, rows: Sequence[PinRow]) -> None:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                audit = []
                for row in rows:
                    previous = conn.execute(
                        "SELECT fingerprint FROM conduit_mcp_pins WHERE server_id = ? AND name = ?",
                        (row.server_id, row.name),
                    ).fetchone()
                    audit.append(approve_audit(row, previous[0] if previous else None))
                conn.executemany(_SQLITE_UPSERT, rows)
                keys = [(row.server_id, row.name) for row in rows]
                conn.executemany(_UNREVOKE, keys)
                conn.executemany(_UNPEND, keys)
                conn.executemany(_SQLITE_AUDIT, audit)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def revoke(self, server_id: str, name: str, at: float, approver: str | None) -> str | None:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "DELETE FROM conduit_mcp_pins WHERE server_id = ? AND name = ?"
                    " RETURNING fingerprint",
                    (server_id, name),
                ).fetchone()
                if row is not None:
                    conn.execute(_REVOKED_UPSERT, (server_id, name, row[0], at, approver))
                    conn.execute(
                        _SQLITE_AUDIT,
                        (at, server_id, name, "revoke", None, row[0], None, None, approver, None),
                    )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return None if row is None else str(row[0])

    def settle(
        self,
        server_id: str,
        names: Sequence[str],
        fingerprints: Sequence[str],
        found: list[tuple[int, str | None, str | None]] | None,
        decide: Callable[[Seen], Writes],
    ) -> set[str]:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                if found is None:
                    found = self._lookup_in(server_id, names, fingerprints)
                wanted = json.dumps([names[i] for i, _, _ in found])
                revoked = {
                    row[0]
                    for row in conn.execute(
                        "SELECT name FROM conduit_mcp_revoked WHERE server_id = ?"
                        " AND name IN (SELECT value FROM json_each(?))",
                        (server_id, wanted),
                    )
                }
                pending = {
                    row[0]: (row[1], row[2])
                    for row in conn.execute(
                        "SELECT name, status, fingerprint FROM conduit_mcp_pending"
                        " WHERE server_id = ? AND name IN (SELECT value FROM json_each(?))",
                        (server_id, wanted),
                    )
                }
                writes = decide(Seen(found, revoked, pending))
                applied = _apply(_sqlite_run(conn), _sqlite_many(conn), server_id, writes, _nothing)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return applied

    def pending(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        where, args = _filters(server_id, name, "?", "p.")
        sql = f"{_PENDING_READ}{where} ORDER BY p.server_id, p.name"
        with self._lock:
            return list(self._conn.execute(sql, args).fetchall())

    def audit_after(self, cursor: int, limit: int) -> list[tuple[Any, ...]]:
        sql = f"SELECT {_AUDIT_COLUMNS} FROM conduit_mcp_audit WHERE id > ? ORDER BY id LIMIT ?"
        with self._lock:
            rows = self._conn.execute(sql, (cursor, limit)).fetchall()
        return list(rows)

    def prune_checks(self, before: float) -> int:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                count = conn.execute(_PRUNE_CHECKS, (before,)).rowcount
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return int(count)

    def pins(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        sql = f"SELECT {_PIN_READ_COLUMNS} FROM conduit_mcp_pins"
        where, args = _filters(server_id, name, "?")
        with self._lock:
            return list(self._conn.execute(sql + where + " ORDER BY server_id, name", args))

    def audit(self, server_id: str | None, limit: int | None) -> list[tuple[Any, ...]]:
        where, args = _filters(server_id, None, "?")
        sql = f"SELECT {_AUDIT_COLUMNS} FROM conduit_mcp_audit{where} ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, args).fetchall()
        return list(reversed(rows))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- PostgreSQL -----------------------------------------------------------------------------

# Any constant will do: it names the lock that serializes migrations across processes.
_PG_MIGRATION_LOCK: Final = 0x636F6E64756974  # "conduit"
# The lock that orders audit ids (see `PostgresBackend._lock_audit`).
_PG_AUDIT_LOCK: Final = 0x636F6E6461756474  # "condaudt"

_PG_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS conduit_mcp_pins (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            approved_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (server_id, name)
        )""",
    ),
    2: (
        "ALTER TABLE conduit_mcp_pins ADD COLUMN definition TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN approver TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN protocol_version TEXT",
        # Covering: a page check can be an index-only scan, never reading the definitions.
        """CREATE INDEX conduit_mcp_pins_lookup ON conduit_mcp_pins (server_id, name)
        INCLUDE (fingerprint)""",
        """CREATE TABLE conduit_mcp_audit (
            id                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at                   DOUBLE PRECISION NOT NULL,
            server_id            TEXT NOT NULL,
            name                 TEXT NOT NULL,
            action               TEXT NOT NULL CHECK (action IN ('approve', 'revoke', 'check')),
            outcome              TEXT,
            fingerprint          TEXT,
            previous_fingerprint TEXT,
            definition           TEXT,
            approver             TEXT,
            protocol_version     TEXT
        )""",
        "CREATE INDEX conduit_mcp_audit_server ON conduit_mcp_audit (server_id, id)",
        """CREATE FUNCTION conduit_mcp_audit_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'conduit_mcp_audit is append-only'; END $$""",
        """CREATE TRIGGER conduit_mcp_audit_append_only BEFORE UPDATE OR DELETE
        ON conduit_mcp_audit FOR EACH ROW EXECUTE FUNCTION conduit_mcp_audit_append_only()""",
    ),
    3: (
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_fingerprint TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_definition TEXT",
        "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_at DOUBLE PRECISION",
        "DROP INDEX conduit_mcp_pins_lookup",
        """CREATE INDEX conduit_mcp_pins_lookup3 ON conduit_mcp_pins (server_id, name)
        INCLUDE (fingerprint, cosmetic_fingerprint)""",
        """CREATE TABLE conduit_mcp_revoked (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT,
            revoked_at  DOUBLE PRECISION NOT NULL,
            approver    TEXT,
            PRIMARY KEY (server_id, name)
        )""",
        """CREATE TABLE conduit_mcp_pending (
            server_id          TEXT NOT NULL,
            name               TEXT NOT NULL,
            status             TEXT NOT NULL,
            fingerprint        TEXT NOT NULL,
            pinned_fingerprint TEXT,
            definition         TEXT,
            changes            TEXT NOT NULL,
            first_seen         DOUBLE PRECISION NOT NULL,
            last_seen          DOUBLE PRECISION NOT NULL,
            seen               BIGINT NOT NULL,
            protocol_version   TEXT,
            PRIMARY KEY (server_id, name)
        )""",
        _REVOKED_FROM_AUDIT,
        """CREATE OR REPLACE FUNCTION conduit_mcp_audit_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' AND OLD.action = 'check' THEN RETURN OLD; END IF;
            RAISE EXCEPTION 'conduit_mcp_audit is append-only';
        END $$""",
    ),
}

_PG_UPSERT: Final = f"""
INSERT INTO conduit_mcp_pins ({_PIN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (server_id, name) DO UPDATE SET fingerprint = excluded.fingerprint,
    definition = excluded.definition, approver = excluded.approver,
    approved_at = excluded.approved_at, protocol_version = excluded.protocol_version,
    cosmetic_fingerprint = NULL, cosmetic_definition = NULL, cosmetic_at = NULL
"""

_PG_AUDIT: Final = (
    f"INSERT INTO conduit_mcp_audit ({_AUDIT_INSERT_COLUMNS})"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)

# The page travels as two text parameters: the names as a JSON array (any text survives) and
# the fingerprints joined by "," (each is `jcs-sha256:` + 64 hex digits, checked before it gets
# here). Measured on a 1,000-tool page against one JSON array of [name, fingerprint] pairs:
# half the client CPU (JSON-encoding the fingerprints dominated) and two thirds of the
# server's. Only entries whose pin differs come back; the definition is a subquery run only
# for those (joined, every pin's definition went into the hash table: 7 times the memory).
_PG_LOOKUP: Final = """
SELECT page.ord - 1, pin.fingerprint,
    CASE WHEN pin.fingerprint IS NOT NULL THEN (
        SELECT old.definition FROM conduit_mcp_pins AS old
        WHERE old.server_id = %(server)s AND old.name = page.name
    ) END
FROM ROWS FROM (
    jsonb_array_elements_text(%(names)s::jsonb), unnest(string_to_array(%(fingerprints)s, ','))
) WITH ORDINALITY AS page(name, fingerprint, ord)
LEFT JOIN conduit_mcp_pins AS pin ON pin.server_id = %(server)s AND pin.name = page.name
WHERE pin.fingerprint IS DISTINCT FROM page.fingerprint
AND pin.cosmetic_fingerprint IS DISTINCT FROM page.fingerprint
"""


class PostgresBackend:
    """A PostgreSQL database reached by URL (psycopg 3, one connection, autocommit).

    Writers of one server take a transaction-scoped advisory lock on its id, so the previous
    fingerprint an approval audits is exact even when two hosts approve at once; readers
    never wait (MVCC) and never see half an approval (both rows commit together). A call
    that finds the connection broken (server restart, network cut) opens a new one first; the
    call that met the break raises and is not retried (it may or may not have committed).
    """

    def __init__(self, location: StoreLocation, timeout: float) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            from .._program import install_command

            raise ImportError(
                f"a postgresql:// PinStore needs psycopg 3: {install_command('postgresql')}"
            ) from exc
        self._psycopg = psycopg
        self.location = location
        self.timeout = timeout
        self._conn = self._connect()
        self._lock = threading.Lock()
        try:
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> Any:
        return pg_connect(self.location, self.timeout)

    def _live(self) -> Any:
        """The connection, reopened when the last one broke. Call with the lock held, once
        per call: every statement of a call then runs on the same connection."""
        if self._conn.broken or self._conn.closed:
            self._conn.close()
            self._conn = self._connect()
        return self._conn

    def _migrate(self) -> None:
        conn = self._conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS conduit_mcp_migrations"
                " (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {row[0] for row in conn.execute("SELECT version FROM conduit_mcp_migrations")}
            _refuse_newer(done)
            for version, statements in sorted(_PG_MIGRATIONS.items()):
                if version in done:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO conduit_mcp_migrations"
                    " VALUES (%s, extract(epoch FROM clock_timestamp()))",
                    (version,),
                )

    def lookup(
        self, server_id: str, names: Sequence[str], fingerprints: Sequence[str]
    ) -> list[tuple[int, str | None, str | None]]:
        if not names:
            return []
        # Names are escaped: no U+0000, which jsonb cannot hold.
        args = {
            "names": json.dumps(names),
            "fingerprints": ",".join(fingerprints),
            "server": server_id,
        }
        with self._lock:
            # Never prepared (psycopg would prepare it from the fifth call): a generic plan
            # cannot see the page's length, guesses 100 rows and probes the index once per
            # tool. Measured against 50,000 pins (50 servers): 4.1 ms of server CPU per
            # 1,000-tool page prepared, 2.2 ms planned for the actual page (a hash join).
            cursor = self._live().execute(_PG_LOOKUP, args, prepare=False)
            rows: list[tuple[int, str | None, str | None]] = cursor.fetchall()
            return rows

    @staticmethod
    def _lock_server(conn: Any, server_id: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (server_id,))

    def approve(self, server_id: str, rows: Sequence[PinRow]) -> None:
        with self._lock:
            conn = self._live()
            with conn.transaction():
                self._lock_server(conn, server_id)
                previous: dict[str, str] = dict(
                    conn.execute(
                        "SELECT name, fingerprint FROM conduit_mcp_pins"
                        " WHERE server_id = %s AND name = ANY(%s::text[])",
                        (server_id, [row.name for row in rows]),
                    ).fetchall()
                )
                keys = [(row.server_id, row.name) for row in rows]
                with conn.cursor() as cursor:
                    cursor.executemany(_PG_UPSERT, rows)
                    cursor.executemany(_pg(_UNREVOKE), keys)
                    cursor.executemany(_pg(_UNPEND), keys)
                    self._lock_audit(conn)
                    cursor.executemany(
                        _PG_AUDIT, [approve_audit(row, previous.get(row.name)) for row in rows]
                    )
                _notify(conn, server_id)

    def revoke(self, server_id: str, name: str, at: float, approver: str | None) -> str | None:
        with self._lock:
            conn = self._live()
            with conn.transaction():
                self._lock_server(conn, server_id)
                row = conn.execute(
                    "DELETE FROM conduit_mcp_pins WHERE server_id = %s AND name = %s"
                    " RETURNING fingerprint",
                    (server_id, name),
                ).fetchone()
                if row is not None:
                    conn.execute(_pg(_REVOKED_UPSERT), (server_id, name, row[0], at, approver))
                    self._lock_audit(conn)
                    conn.execute(
                        _PG_AUDIT,
                        (at, server_id, name, "revoke", None, row[0], None, None, approver, None),
                    )
                    _notify(conn, server_id)
        return None if row is None else str(row[0])

    @staticmethod
    def _lock_audit(conn: Any) -> None:
        """Audit ids in commit order: every writer takes this lock right before its first
        audit row and keeps it to its commit, so an id is drawn only after every smaller one
        has committed (an identity column alone draws at INSERT time, in any order)."""
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_AUDIT_LOCK,))

    def settle(
        self,
        server_id: str,
        names: Sequence[str],
        fingerprints: Sequence[str],
        found: list[tuple[int, str | None, str | None]] | None,
        decide: Callable[[Seen], Writes],
    ) -> set[str]:
        with self._lock:
            conn = self._live()
            with conn.transaction():
                self._lock_server(conn, server_id)
                if found is None:
                    args = {
                        "names": json.dumps(list(names)),
                        "fingerprints": ",".join(fingerprints),
                        "server": server_id,
                    }
                    found = list(conn.execute(_PG_LOOKUP, args, prepare=False).fetchall())
                wanted = [names[i] for i, _, _ in found]
                revoked = {
                    row[0]
                    for row in conn.execute(
                        "SELECT name FROM conduit_mcp_revoked"
                        " WHERE server_id = %s AND name = ANY(%s::text[])",
                        (server_id, wanted),
                    )
                }
                pending = {
                    row[0]: (row[1], row[2])
                    for row in conn.execute(
                        "SELECT name, status, fingerprint FROM conduit_mcp_pending"
                        " WHERE server_id = %s AND name = ANY(%s::text[])",
                        (server_id, wanted),
                    )
                }
                writes = decide(Seen(found, revoked, pending))

                def run(sql: str, args: Sequence[Any]) -> Any:
                    return conn.execute(_pg(sql), args, prepare=False)

                def many(sql: str, rows: list[tuple[Any, ...]]) -> None:
                    if rows:  # one pipelined batch (psycopg's executemany)
                        with conn.cursor() as cursor:
                            cursor.executemany(_pg(sql), rows)

                lock = lambda: self._lock_audit(conn)  # noqa: E731
                applied = _apply(run, many, server_id, writes, lock)
                if applied:
                    _notify(conn, server_id)
                return applied

    def pending(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        where, args = _filters(server_id, name, "%s", "p.")
        sql = f"{_PENDING_READ}{where} ORDER BY p.server_id, p.name"
        with self._lock:
            return list(self._live().execute(sql, args).fetchall())

    def audit_after(self, cursor: int, limit: int) -> list[tuple[Any, ...]]:
        sql = f"SELECT {_AUDIT_COLUMNS} FROM conduit_mcp_audit WHERE id > %s ORDER BY id LIMIT %s"
        with self._lock:
            rows = self._live().execute(sql, (cursor, limit)).fetchall()
        return list(rows)

    def prune_checks(self, before: float) -> int:
        with self._lock:
            return int(self._live().execute(_pg(_PRUNE_CHECKS), (before,)).rowcount)

    def pins(self, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
        where, args = _filters(server_id, name, "%s")
        sql = f"SELECT {_PIN_READ_COLUMNS} FROM conduit_mcp_pins{where} ORDER BY server_id, name"
        with self._lock:
            return list(self._live().execute(sql, args).fetchall())

    def audit(self, server_id: str | None, limit: int | None) -> list[tuple[Any, ...]]:
        where, args = _filters(server_id, None, "%s")
        sql = f"SELECT {_AUDIT_COLUMNS} FROM conduit_mcp_audit{where} ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        with self._lock:
            rows = self._live().execute(sql, args).fetchall()
        return list(reversed(rows))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


#: The PostgreSQL channel a pin write notifies (payload: the stored server id), delivered at
#: commit; `PinStore.watch` listens on it.
PG_CHANNEL: Final = "conduit_mcp_pins"


def _notify(conn: Any, server_id: str) -> None:
    """Wake the watchers at commit (no payload: they read the audit log by their cursor)."""
    del server_id
    conn.execute("SELECT pg_notify(%s, '')", (PG_CHANNEL,))


def pg_connect(location: StoreLocation, timeout: float) -> Any:
    """A psycopg connection (autocommit) to `location`, from its parsed parameters.

    Raises:
        psycopg.Error: of the driver's class, re-worded: the redacted location, and the
            driver's first line with every piece of the password and every quoted value
            hidden; no cause or context is chained (they would carry the location).
    """
    import psycopg

    params = {
        **location.connect_params(),
        "connect_timeout": max(1, round(timeout)),
        "application_name": "conduit-mcp",
    }
    failure: Exception
    try:
        return psycopg.connect(autocommit=True, **params)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = f"cannot connect to the pin store at {location.display}: {location.scrub(first)}"
        try:
            failure = type(exc)(message)
        except Exception:
            failure = psycopg.OperationalError(message)
    raise failure


# -- shared ---------------------------------------------------------------------------------


def _nothing() -> None:
    pass


def _check_marker(conn: sqlite3.Connection, path: Any, create: bool) -> None:
    """Refuse a sqlite file that is not a pin store, reading only (nothing is written).

    A pin store carries `PRAGMA application_id` = `APPLICATION_ID` (from schema version 3) or,
    older, the `conduit_mcp_migrations` table (or, oldest, `conduit_mcp_pins`). Without
    `create`, anything else (an empty file, another application's database) is refused; with
    it, a file another application marked as its own (a non-zero id), or one holding other
    tables, is.

    Raises:
        ValueError: the file is not a pin store.
        sqlite3.DatabaseError: the file is not a sqlite database.
    """
    if path == ":memory:":
        return
    marker = conn.execute("PRAGMA application_id").fetchone()[0]
    if marker == APPLICATION_ID:
        return
    ours = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table'"
        " AND name IN ('conduit_mcp_migrations', 'conduit_mcp_pins')"
    ).fetchone()
    if marker == 0 and ours is not None:
        return
    if (
        marker == 0
        and create
        and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    ):
        return  # a new or empty file: the store is created in it
    owner = "another application's" if marker else "no pin store's"
    raise ValueError(
        f"not a pin store: the sqlite file has {owner} marker (application_id {marker})"
    )


def _sqlite_many(conn: sqlite3.Connection) -> Callable[[str, list[tuple[Any, ...]]], None]:
    def many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            conn.executemany(sql, rows)

    return many


def _sqlite_run(conn: sqlite3.Connection) -> _Run:
    def run(sql: str, args: Sequence[Any]) -> Any:
        return conn.execute(sql, args)

    return run


def _refuse_newer(done: set[int]) -> None:
    newer = [version for version in done if version > SCHEMA_VERSION]
    if newer:
        raise ValueError(
            f"the pin store has schema version {max(newer)}; this conduit-mcp knows up to"
            f" {SCHEMA_VERSION} (upgrade conduit-mcp)"
        )


def approve_audit(row: PinRow, previous: str | None) -> tuple[Any, ...]:
    """The audit row of an approval that writes `row` over the pin `previous` (or none)."""
    return (
        row.approved_at,
        row.server_id,
        row.name,
        "approve",
        None,
        row.fingerprint,
        previous,
        row.definition,
        row.approver,
        row.protocol_version,
    )


def _filters(
    server_id: str | None, name: str | None, mark: str, table: str = ""
) -> tuple[str, list[Any]]:
    clauses, args = [], []
    if server_id is not None:
        clauses.append(f"{table}server_id = {mark}")
        args.append(server_id)
    if name is not None:
        clauses.append(f"{table}name = {mark}")
        args.append(name)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


# -- check-and-pin: one transaction, written in `?` marks (PostgreSQL: `_pg`) -------------------

_TOFU_PIN: Final = f"""
INSERT INTO conduit_mcp_pins ({_PIN_COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM conduit_mcp_revoked WHERE server_id = ? AND name = ?)
ON CONFLICT (server_id, name) DO NOTHING
"""
_REPLACE_PIN: Final = """
UPDATE conduit_mcp_pins SET fingerprint = ?, definition = ?, approver = ?, approved_at = ?,
    protocol_version = ?, cosmetic_fingerprint = NULL, cosmetic_definition = NULL,
    cosmetic_at = NULL
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_ACCEPT_COSMETIC: Final = """
UPDATE conduit_mcp_pins SET cosmetic_fingerprint = ?, cosmetic_definition = ?, cosmetic_at = ?
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_PENDING_UPSERT: Final = f"""
INSERT INTO conduit_mcp_pending ({_PENDING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
ON CONFLICT (server_id, name) DO UPDATE SET status = excluded.status,
    fingerprint = excluded.fingerprint, pinned_fingerprint = excluded.pinned_fingerprint,
    definition = excluded.definition, changes = excluded.changes,
    first_seen = excluded.first_seen, last_seen = excluded.last_seen, seen = 1,
    protocol_version = excluded.protocol_version
"""
_PENDING_BUMP: Final = """
UPDATE conduit_mcp_pending SET seen = seen + 1, last_seen = ?
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_PRUNE_CHECKS: Final = "DELETE FROM conduit_mcp_audit WHERE action = 'check' AND at < ?"
_UNPEND: Final = "DELETE FROM conduit_mcp_pending WHERE server_id = ? AND name = ?"
_UNREVOKE: Final = "DELETE FROM conduit_mcp_revoked WHERE server_id = ? AND name = ?"
_REVOKED_UPSERT: Final = """
INSERT INTO conduit_mcp_revoked (server_id, name, fingerprint, revoked_at, approver)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (server_id, name) DO UPDATE SET fingerprint = excluded.fingerprint,
    revoked_at = excluded.revoked_at, approver = excluded.approver
"""
_AUDIT_INSERT: Final = (
    f"INSERT INTO conduit_mcp_audit ({_AUDIT_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@functools.cache
def _pg(sql: str) -> str:
    """A `?`-marked statement in psycopg's `%s` marks (the statements above hold no `?`
    or `%` of their own)."""
    return sql.replace("?", "%s")


class _Run(Protocol):
    def __call__(self, sql: str, args: Sequence[Any]) -> Any: ...


def _apply(
    run: _Run,
    many: Callable[[str, list[tuple[Any, ...]]], None],
    server_id: str,
    writes: Writes,
    before_audit: Callable[[], None],
) -> set[str]:
    """Apply a check-and-pin transaction's writes with `run(sql, args)` (one statement, marks
    `?`; the conditional pin writes, whose row counts matter) and `many(sql, rows)` (a batch:
    pending rows and audit rows); `before_audit` runs before the first audit row (PostgreSQL:
    the audit lock)."""
    applied: set[str] = set()
    for row in writes.new_pins:
        if run(_TOFU_PIN, (*row, server_id, row.name)).rowcount == 1:
            applied.add(row.name)
    for row, expected in writes.replace:
        replace = (
            row.fingerprint,
            row.definition,
            row.approver,
            row.approved_at,
            row.protocol_version,
            server_id,
            row.name,
            expected,
        )
        if run(_REPLACE_PIN, replace).rowcount == 1:
            applied.add(row.name)
    for name, expected, value, definition, at in writes.cosmetic:
        if run(_ACCEPT_COSMETIC, (value, definition, at, server_id, name, expected)).rowcount:
            applied.add(name)
    many(_UNPEND, [(server_id, name) for name in writes.unpend])
    many(
        _PENDING_UPSERT,
        [
            (
                pending.server_id,
                pending.name,
                pending.status,
                pending.fingerprint,
                pending.pinned_fingerprint,
                pending.definition,
                pending.changes,
                pending.seen_at,
                pending.seen_at,
                pending.protocol_version,
            )
            for pending in writes.pending
        ],
    )
    many(_PENDING_BUMP, [(at, server_id, name, value) for name, value, at in writes.bump])
    audit = [row for row, needs in writes.audit if needs is None or needs in applied]
    if audit:
        before_audit()
        many(_AUDIT_INSERT, audit)
    return applied
