"""The pin store's schema: its migrations, numbered, in the one order every database runs them.

Not a public module. `migrate` runs on every open, under a lock (sqlite: the database write
lock; PostgreSQL: an advisory lock), applies the migrations a database has not recorded in
`conduit_mcp_migrations`, in number order, and records each; a database that recorded a
number this list does not hold is refused (it was written by a newer conduit-mcp). A
database made by any earlier conduit-mcp opens and is upgraded in place
(tests/pins/test_schema_history.py builds one with main's own statements).

A step is one statement for both dialects (its `{word}`s from `_dialect.py`), or a
`Spelled` pair where the SQL itself differs (the audit log's append-only triggers, sqlite's
`application_id`). A new migration: append a `Migration` with the next number and one line
saying what it does; never edit one that has shipped (databases recorded it as applied).

Tables, as of the last migration: `conduit_mcp_pins` (`_pins.py`), `conduit_mcp_revoked`
(`_pins.py`), `conduit_mcp_pending` (`_pending.py`), `conduit_mcp_audit` (`_audit.py`),
`conduit_mcp_instructions` (`_instructions.py`), `conduit_mcp_rejected` (`_rejected.py`),
`conduit_mcp_servers` (`_servers.py`), `conduit_mcp_accounts` and `conduit_mcp_tokens`
(`_accounts.py`), `conduit_mcp_policy` (`_policy.py`), `conduit_mcp_calls` (`_calls.py`),
`conduit_mcp_migrations` (here).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from ._database import APPLICATION_ID, Database


class Spelled(NamedTuple):
    """One step written per dialect, where the SQL itself differs (`None`: no such step)."""

    sqlite: str | None
    postgresql: str | None


class Migration(NamedTuple):
    """One schema version: its number, what it does, and its steps in order."""

    number: int
    what: str
    steps: tuple[str | Spelled, ...]


# Revocations made before migration 3 live only in the audit log: a name whose last approve or
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

#: The audit log's actions from migration 5 on.
_ACTIONS_5: Final = "('approve', 'revoke', 'check', 'reject', 'account')"

#: sqlite cannot change a CHECK constraint: migration 5 rebuilds the audit log (ids, and the
#: AUTOINCREMENT sequence, kept: a tailing reader's cursor stays valid), then its index and
#: its append-only triggers. DROP TABLE fires no trigger.
_AUDIT_REBUILT: Final = (
    Spelled(
        f"""CREATE TABLE conduit_mcp_audit5 (
            id                   INTEGER PRIMARY KEY AUTOINCREMENT,
            at                   REAL NOT NULL,
            server_id            TEXT NOT NULL,
            name                 TEXT NOT NULL,
            action               TEXT NOT NULL CHECK (action IN {_ACTIONS_5}),
            outcome              TEXT,
            fingerprint          TEXT,
            previous_fingerprint TEXT,
            definition           TEXT,
            approver             TEXT,
            protocol_version     TEXT,
            reason               TEXT
        )""",
        "ALTER TABLE conduit_mcp_audit ADD COLUMN reason TEXT",
    ),
    Spelled(
        """INSERT INTO conduit_mcp_audit5 (id, at, server_id, name, action, outcome,
            fingerprint, previous_fingerprint, definition, approver, protocol_version)
        SELECT id, at, server_id, name, action, outcome, fingerprint, previous_fingerprint,
            definition, approver, protocol_version FROM conduit_mcp_audit""",
        "ALTER TABLE conduit_mcp_audit DROP CONSTRAINT conduit_mcp_audit_action_check",
    ),
    Spelled(
        """INSERT INTO sqlite_sequence (name, seq)
        SELECT 'conduit_mcp_audit5', 0 WHERE NOT EXISTS
            (SELECT 1 FROM sqlite_sequence WHERE name = 'conduit_mcp_audit5')""",
        f"""ALTER TABLE conduit_mcp_audit ADD CONSTRAINT conduit_mcp_audit_action_check
        CHECK (action IN {_ACTIONS_5})""",
    ),
    Spelled(
        """UPDATE sqlite_sequence SET seq = max(seq, coalesce(
            (SELECT seq FROM sqlite_sequence WHERE name = 'conduit_mcp_audit'), 0))
        WHERE name = 'conduit_mcp_audit5'""",
        None,
    ),
    Spelled("DROP TABLE conduit_mcp_audit", None),
    Spelled("ALTER TABLE conduit_mcp_audit5 RENAME TO conduit_mcp_audit", None),
    Spelled("CREATE INDEX conduit_mcp_audit_server ON conduit_mcp_audit (server_id, id)", None),
    Spelled(
        """CREATE TRIGGER conduit_mcp_audit_no_update BEFORE UPDATE ON conduit_mcp_audit
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
        None,
    ),
    Spelled(
        """CREATE TRIGGER conduit_mcp_audit_no_delete BEFORE DELETE ON conduit_mcp_audit
        WHEN OLD.action <> 'check'
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
        None,
    ),
)

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "the pins: one fingerprint per server id and tool name, and when it was approved",
        (
            """CREATE TABLE IF NOT EXISTS conduit_mcp_pins (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            approved_at {real} NOT NULL,
            PRIMARY KEY (server_id, name)
        ){without_rowid}""",
        ),
    ),
    Migration(
        2,
        "the approved definition, its approver and protocol version on each pin; the covering"
        " lookup index; the audit log, whose rows the database refuses to update or delete",
        (
            "ALTER TABLE conduit_mcp_pins ADD COLUMN definition TEXT",
            "ALTER TABLE conduit_mcp_pins ADD COLUMN approver TEXT",
            "ALTER TABLE conduit_mcp_pins ADD COLUMN protocol_version TEXT",
            # Covering: a page check reads this index only, never the rows with definitions.
            "CREATE INDEX conduit_mcp_pins_lookup ON conduit_mcp_pins {cover_fingerprint}",
            """CREATE TABLE conduit_mcp_audit (
            id                   {audit_id},
            at                   {real} NOT NULL,
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
            Spelled(
                """CREATE TRIGGER conduit_mcp_audit_no_update BEFORE UPDATE ON conduit_mcp_audit
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
                """CREATE FUNCTION conduit_mcp_audit_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'conduit_mcp_audit is append-only'; END $$""",
            ),
            Spelled(
                """CREATE TRIGGER conduit_mcp_audit_no_delete BEFORE DELETE ON conduit_mcp_audit
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
                """CREATE TRIGGER conduit_mcp_audit_append_only BEFORE UPDATE OR DELETE
        ON conduit_mcp_audit FOR EACH ROW EXECUTE FUNCTION conduit_mcp_audit_append_only()""",
            ),
        ),
    ),
    Migration(
        3,
        "accepted cosmetic variants beside a pin (and the lookup index that covers them);"
        " revocations remembered (filled from the audit log); the pending queue; check rows"
        " of the audit log may be deleted; sqlite's application_id marker",
        (
            "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_fingerprint TEXT",
            "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_definition TEXT",
            "ALTER TABLE conduit_mcp_pins ADD COLUMN cosmetic_at {real}",
            "DROP INDEX conduit_mcp_pins_lookup",
            """CREATE INDEX conduit_mcp_pins_lookup3
        ON conduit_mcp_pins {cover_cosmetic}""",
            """CREATE TABLE conduit_mcp_revoked (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT,
            revoked_at  {real} NOT NULL,
            approver    TEXT,
            PRIMARY KEY (server_id, name)
        ){without_rowid}""",
            """CREATE TABLE conduit_mcp_pending (
            server_id          TEXT NOT NULL,
            name               TEXT NOT NULL,
            status             TEXT NOT NULL,
            fingerprint        TEXT NOT NULL,
            pinned_fingerprint TEXT,
            definition         TEXT,
            changes            TEXT NOT NULL,
            first_seen         {real} NOT NULL,
            last_seen          {real} NOT NULL,
            seen               {bigint} NOT NULL,
            protocol_version   TEXT,
            PRIMARY KEY (server_id, name)
        ){without_rowid}""",
            _REVOKED_FROM_AUDIT,
            # Retention: check rows may be deleted (`PinStore.prune_checks`); approvals and
            # revocations stay append-only.
            Spelled("DROP TRIGGER conduit_mcp_audit_no_delete", None),
            Spelled(
                """CREATE TRIGGER conduit_mcp_audit_no_delete BEFORE DELETE ON conduit_mcp_audit
        WHEN OLD.action <> 'check'
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_audit is append-only'); END""",
                """CREATE OR REPLACE FUNCTION conduit_mcp_audit_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' AND OLD.action = 'check' THEN RETURN OLD; END IF;
            RAISE EXCEPTION 'conduit_mcp_audit is append-only';
        END $$""",
            ),
            Spelled(f"PRAGMA application_id = {APPLICATION_ID}", None),
        ),
    ),
    Migration(
        4,
        "servers' instructions: the approved text per server id, and the one awaiting approval",
        (
            """CREATE TABLE conduit_mcp_instructions (
            server_id            TEXT NOT NULL PRIMARY KEY,
            fingerprint          TEXT,
            instructions         TEXT,
            approver             TEXT,
            approved_at          {real},
            protocol_version     TEXT,
            pending_status       TEXT,
            pending_fingerprint  TEXT,
            pending_instructions TEXT,
            first_seen           {real},
            last_seen            {real},
            seen                 {bigint} NOT NULL,
            pending_version      TEXT
        ){without_rowid}""",
        ),
    ),
    Migration(
        5,
        "decisions and the console: rejected definitions (per fingerprint, with a reason);"
        " a reason on revocations and audit rows, and the audit actions reject and account;"
        " each server's last listing; the console's accounts and their API tokens (hashed)",
        (
            *_AUDIT_REBUILT,
            "ALTER TABLE conduit_mcp_revoked ADD COLUMN reason TEXT",
            """CREATE TABLE conduit_mcp_rejected (
            server_id   TEXT NOT NULL,
            name        TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            rejected_at {real} NOT NULL,
            approver    TEXT,
            reason      TEXT NOT NULL,
            PRIMARY KEY (server_id, name, fingerprint)
        ){without_rowid}""",
            """CREATE TABLE conduit_mcp_servers (
            server_id   TEXT NOT NULL PRIMARY KEY,
            last_listed {real} NOT NULL
        ){without_rowid}""",
            """CREATE TABLE conduit_mcp_accounts (
            name          TEXT NOT NULL PRIMARY KEY,
            role          TEXT NOT NULL CHECK (role IN ('approver', 'viewer')),
            password_hash TEXT,
            created_at    {real} NOT NULL
        ){without_rowid}""",
            """CREATE TABLE conduit_mcp_tokens (
            token_hash TEXT NOT NULL PRIMARY KEY,
            name       TEXT NOT NULL,
            created_at {real} NOT NULL
        ){without_rowid}""",
            "CREATE INDEX conduit_mcp_audit_name ON conduit_mcp_audit (name, id)",
        ),
    ),
    Migration(
        6,
        "the stored policy, one row per version, append-only (its own audit); the call"
        " audit, whose rows the database refuses to update (old ones may be deleted)",
        (
            """CREATE TABLE conduit_mcp_policy (
            version  {bigint} PRIMARY KEY,
            at       {real} NOT NULL,
            digest   TEXT NOT NULL,
            source   TEXT,
            approver TEXT,
            text     TEXT NOT NULL
        )""",
            Spelled(
                """CREATE TRIGGER conduit_mcp_policy_no_update BEFORE UPDATE ON conduit_mcp_policy
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_policy is append-only'); END""",
                """CREATE FUNCTION conduit_mcp_policy_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'conduit_mcp_policy is append-only'; END $$""",
            ),
            Spelled(
                """CREATE TRIGGER conduit_mcp_policy_no_delete BEFORE DELETE ON conduit_mcp_policy
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_policy is append-only'); END""",
                """CREATE TRIGGER conduit_mcp_policy_append_only BEFORE UPDATE OR DELETE
        ON conduit_mcp_policy FOR EACH ROW EXECUTE FUNCTION conduit_mcp_policy_append_only()""",
            ),
            """CREATE TABLE conduit_mcp_calls (
            id               {audit_id},
            at               {real} NOT NULL,
            server_id        TEXT NOT NULL,
            tool             TEXT NOT NULL,
            subject          TEXT,
            caller_groups    TEXT,
            verdict          TEXT NOT NULL,
            reason           TEXT,
            arguments_digest TEXT NOT NULL,
            arguments        TEXT,
            request_id       TEXT
        )""",
            "CREATE INDEX conduit_mcp_calls_at ON conduit_mcp_calls (at)",
            Spelled(
                """CREATE TRIGGER conduit_mcp_calls_no_update BEFORE UPDATE ON conduit_mcp_calls
        BEGIN SELECT RAISE(ABORT, 'conduit_mcp_calls is append-only'); END""",
                """CREATE FUNCTION conduit_mcp_calls_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'conduit_mcp_calls is append-only'; END $$""",
            ),
            Spelled(
                None,
                """CREATE TRIGGER conduit_mcp_calls_append_only BEFORE UPDATE
        ON conduit_mcp_calls FOR EACH ROW EXECUTE FUNCTION conduit_mcp_calls_append_only()""",
            ),
        ),
    ),
)

#: The newest schema version this library writes.
SCHEMA_VERSION: Final = MIGRATIONS[-1].number

_MIGRATIONS_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS conduit_mcp_migrations"
    " (version INTEGER PRIMARY KEY, applied_at {real} NOT NULL)"
)
_APPLIED: Final = "SELECT version FROM conduit_mcp_migrations"
_RECORD: Final = "INSERT INTO conduit_mcp_migrations VALUES (?, {epoch_now})"


def migrate(db: Database) -> None:
    """Bring the database at `db` to `SCHEMA_VERSION`, in one transaction under the
    migration lock (nothing is applied twice, whoever opens the store at the same time).

    Raises:
        ValueError: the database recorded a version newer than `SCHEMA_VERSION`.
        sqlite3.Error, psycopg.Error: the database refused a statement (nothing changed).
    """
    with db.migrating():
        db.run(_MIGRATIONS_TABLE)
        done = {row[0] for row in db.run(_APPLIED)}
        _refuse_newer(done)
        for migration in MIGRATIONS:
            if migration.number in done:
                continue
            for step in migration.steps:
                text = step if isinstance(step, str) else getattr(step, db.dialect.name)
                if text is not None:
                    db.run(text)
            db.run(_RECORD, (migration.number,))


def _refuse_newer(done: set[int]) -> None:
    newer = [version for version in done if version > SCHEMA_VERSION]
    if newer:
        raise ValueError(
            f"the pin store has schema version {max(newer)}; this conduit-mcp knows up to"
            f" {SCHEMA_VERSION} (upgrade conduit-mcp)"
        )
