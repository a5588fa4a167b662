"""Where the pin store's SQL lives: each statement that writes a table is in the module of
that table's room (the map in `conduit_mcp.pins`' docstring), written once for both
databases; only the migrations write every table."""

from __future__ import annotations

import re
from pathlib import Path

import conduit_mcp.pins

PINS = Path(conduit_mcp.pins.__file__).parent

#: conduit-defined: the table -> the module that keeps it.
ROOMS = {
    "conduit_mcp_pins": "_pins.py",
    "conduit_mcp_revoked": "_pins.py",
    "conduit_mcp_pending": "_pending.py",
    "conduit_mcp_audit": "_audit.py",
    "conduit_mcp_instructions": "_instructions.py",
    "conduit_mcp_rejected": "_rejected.py",
    "conduit_mcp_servers": "_servers.py",
    "conduit_mcp_accounts": "_accounts.py",
    "conduit_mcp_tokens": "_accounts.py",
    "conduit_mcp_policy": "_policy.py",
    "conduit_mcp_calls": "_calls.py",
    "conduit_mcp_migrations": "_migrations.py",
    "conduit_mcp_audit5": "_migrations.py",  # migration 5's rebuild of the audit log (sqlite)
}

_WRITE = re.compile(r"\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+(conduit_mcp_\w+)")


def writes() -> dict[str, set[str]]:
    """Module -> the tables its statements write (a scan of the source text)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PINS.glob("*.py")):
        tables = set(_WRITE.findall(path.read_text("utf-8")))
        if tables:
            found[path.name] = tables
    return found


def test_each_table_is_written_only_by_its_room() -> None:
    """conduit-defined: a newcomer finds the statement that writes a table in one module."""
    found = writes()
    assert {t for tables in found.values() for t in tables} == set(ROOMS)  # the scan sees them
    for module, tables in found.items():
        if module == "_migrations.py":
            continue  # the schema, and the one backfill of migration 3
        assert {ROOMS[t] for t in tables} == {module}, (module, tables)


def test_the_scan_sees_a_statement_out_of_its_room() -> None:
    """conduit-defined: the check can fail."""
    source = 'SQL = "DELETE FROM conduit_mcp_pending WHERE server_id = ?"'
    assert {ROOMS[t] for t in _WRITE.findall(source)} == {"_pending.py"}
    assert _WRITE.findall("UPDATE  conduit_mcp_pins SET fingerprint = ?") == ["conduit_mcp_pins"]


_PSYCOPG_MARK = re.compile(r'"[^"\n]*%s[^"\n]*"')


def test_no_statement_is_spelled_for_one_driver_outside_the_dialect_table() -> None:
    """conduit-defined: the rooms write `?` marks; only the dialect table (which renders
    them) and the drivers (their lock statements) write psycopg's `%s`."""
    assert _PSYCOPG_MARK.search('conn.execute("SELECT pg_advisory_xact_lock(%s)", (1,))')
    spelled = {p.name for p in PINS.glob("*.py") if _PSYCOPG_MARK.search(p.read_text("utf-8"))}
    assert spelled == {"_dialect.py", "_database.py"}
