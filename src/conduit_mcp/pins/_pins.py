"""The pins: approved definitions per server id and tool name, and the revocations remembered.

Not a public module. Every statement on `conduit_mcp_pins` and `conduit_mcp_revoked` is
here: the page lookup (`lookup`, what every check reads), a person's writes (`Pins.approve`,
`approve_all`, `revoke`, each one transaction with its audit rows), the conditional writes a
check-and-pin transaction makes (`pin_first`, `replace`, `accept_cosmetic`: each does nothing
when the row is not as read) and the reads (`pin`, `pins`, `pinned`).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from ..client._errors import Error
from ..client._fingerprint import fingerprint as _fingerprint
from ..client._jcs import canonical_json
from ..client._json import parse_json
from ..client._tool import Tool, check_server_id
from ..client._versions import check_version
from . import _audit, _feed, _pending, _rejected
from ._audit import audit_row
from ._database import Database, Room
from ._dialect import Dialect
from ._rows import (
    Row,
    check_fingerprint,
    check_unicode,
    filters,
    store_text,
    stored_approver,
    stored_name,
)


@dataclass(frozen=True, slots=True)
class Pin:
    """One approved tool, as the store keeps it. Immutable.

    Attributes:
        server_id: the operator-assigned server id.
        name: the tool name exactly as sent.
        fingerprint: the approved `"jcs-sha256:"` fingerprint.
        definition: the approved definition as RFC 8785 canonical JSON text, or `None` when
            it was approved by fingerprint alone (or before conduit-mcp kept definitions).
        approver: who approved it (free text, e.g. `"alice@example.com"`), or `None`.
        approved_at: when, in seconds since the Unix epoch (UTC).
        protocol_version: the negotiated protocol version it was listed under, or `None`.
        cosmetic_fingerprint: a variant that differs from the approved definition in cosmetic
            fields only and was accepted beside it (`PinStore.check_and_pin` with
            `accept_cosmetic`), or `None`. It checks as `"approved"`; the approved definition,
            its fingerprint and its approver stay as they were.
        cosmetic_definition: that variant's canonical JSON, or `None`.
    """

    server_id: str
    name: str
    fingerprint: str
    definition: str | None
    approver: str | None
    approved_at: float
    protocol_version: str | None
    cosmetic_fingerprint: str | None = None
    cosmetic_definition: str | None = None


@dataclass(frozen=True, slots=True)
class Revocation:
    """A pin a person revoked (and nobody approved since). Immutable.

    Attributes:
        server_id, name: the tool.
        fingerprint: the fingerprint whose pin was revoked, or `None` (an old store's row).
        revoked_at: seconds since the Unix epoch (UTC).
        approver: who revoked it, or `None`.
        reason: the reason given, or `None`.
    """

    server_id: str
    name: str
    fingerprint: str | None
    revoked_at: float
    approver: str | None
    reason: str | None


class PinRow(NamedTuple):
    """One pin as written (values stored: escaped names)."""

    server_id: str
    name: str
    fingerprint: str
    definition: str | None
    approver: str | None
    approved_at: float
    protocol_version: str | None


#: What `lookup` returns per differing tool: (index in the page, the pinned fingerprint or
#: `None` when the tool has no pin, the approved definition or `None`, and whether the listed
#: fingerprint is approved after all: a tool listing its approved definition again while a
#: pending row still holds another one, which the check then settles).
Found = tuple[int, str | None, str | None, bool]

_WRITTEN: Final = (
    "server_id, name, fingerprint, definition, approver, approved_at, protocol_version"
)
_READ: Final = f"SELECT {_WRITTEN}, cosmetic_fingerprint, cosmetic_definition FROM conduit_mcp_pins"

# The page lookup. The page is a table (`{page}`: `_dialect.py` says how each database
# receives it) joined to the covering index, and the comparison is made in the database:
# only entries whose pin differs come back, so an approved page moves no rows. The definition
# is a correlated subquery, evaluated only for the rows returned (an indexed column join
# would read every row's definition: sqlite's WITHOUT ROWID table has no deferred seek;
# PostgreSQL's hash join took 7 times the memory). An approved entry also comes back while
# the pending queue holds a row for its name (a server that went back to the approved
# definition after a change: the check takes the stale row out of the queue; the join is
# on the queue's primary key). Marks: the page's, then the server id three times.
_LOOKUP: Final = """{page}
SELECT page.ord, pin.fingerprint,
    CASE WHEN pin.fingerprint IS NULL THEN NULL ELSE (
        SELECT old.definition FROM conduit_mcp_pins AS old
        WHERE old.server_id = ? AND old.name = page.name
    ) END,
    CASE WHEN pin.fingerprint = page.fingerprint OR pin.cosmetic_fingerprint = page.fingerprint
        THEN 1 ELSE 0 END
FROM page LEFT JOIN conduit_mcp_pins AS pin{lookup_index}
    ON pin.server_id = ? AND pin.name = page.name
LEFT JOIN conduit_mcp_pending AS queued ON queued.server_id = ? AND queued.name = page.name
WHERE (pin.fingerprint {is_not} page.fingerprint
    AND pin.cosmetic_fingerprint {is_not} page.fingerprint)
OR queued.name IS NOT NULL"""

_PREVIOUS: Final = (
    "SELECT name, fingerprint FROM conduit_mcp_pins WHERE server_id = ? AND name {in_json}"
)
_APPROVE: Final = f"""
INSERT INTO conduit_mcp_pins ({_WRITTEN}) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (server_id, name) DO UPDATE SET fingerprint = excluded.fingerprint,
    definition = excluded.definition, approver = excluded.approver,
    approved_at = excluded.approved_at, protocol_version = excluded.protocol_version,
    cosmetic_fingerprint = NULL, cosmetic_definition = NULL, cosmetic_at = NULL
"""
_REVOKE: Final = (
    "DELETE FROM conduit_mcp_pins WHERE server_id = ? AND name = ? RETURNING fingerprint"
)
# Trust on first use: only when there is no pin and no revocation.
_PIN_FIRST: Final = f"""
INSERT INTO conduit_mcp_pins ({_WRITTEN}) SELECT ?, ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM conduit_mcp_revoked WHERE server_id = ? AND name = ?)
ON CONFLICT (server_id, name) DO NOTHING
"""
# Only while the pin is the one read.
_REPLACE: Final = """
UPDATE conduit_mcp_pins SET fingerprint = ?, definition = ?, approver = ?, approved_at = ?,
    protocol_version = ?, cosmetic_fingerprint = NULL, cosmetic_definition = NULL,
    cosmetic_at = NULL
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_ACCEPT_COSMETIC: Final = """
UPDATE conduit_mcp_pins SET cosmetic_fingerprint = ?, cosmetic_definition = ?, cosmetic_at = ?
WHERE server_id = ? AND name = ? AND fingerprint = ?
"""
_REVOKED: Final = """
INSERT INTO conduit_mcp_revoked (server_id, name, fingerprint, revoked_at, approver, reason)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (server_id, name) DO UPDATE SET fingerprint = excluded.fingerprint,
    revoked_at = excluded.revoked_at, approver = excluded.approver, reason = excluded.reason
"""
_PINNED_FINGERPRINT: Final = (
    "SELECT fingerprint FROM conduit_mcp_pins WHERE server_id = ? AND name = ?"
)
_REVOCATIONS: Final = (
    "SELECT server_id, name, fingerprint, revoked_at, approver, reason FROM conduit_mcp_revoked"
)
_UNREVOKE: Final = "DELETE FROM conduit_mcp_revoked WHERE server_id = ? AND name = ?"
_REVOKED_AMONG: Final = (
    "SELECT name FROM conduit_mcp_revoked WHERE server_id = ? AND name {in_json}"
)


# -- statements run inside the callers' transactions -----------------------------------------


@functools.lru_cache(maxsize=128)
def _lookup_text(dialect: Dialect, rows: int) -> str:
    """`_LOOKUP` for a page sent as `rows` rows (sqlite: a few sizes; PostgreSQL: one)."""
    return _LOOKUP.replace("{page}", dialect.page.sql(rows))


def lookup(db: Database, server_id: str, names: list[str], fingerprints: list[str]) -> list[Found]:
    """The entries of a page whose pin is not `fingerprints[i]`, compared in the database
    (`Found`s, in no particular order); an approved entry returns nothing, so the steady
    state moves no rows. `names` are unique and stored. One statement (sqlite: one per
    `_chunk` tools, in one read transaction), so one snapshot."""
    with db.reading(snapshot=len(names) > db._chunk):
        return lookup_in(db, server_id, names, fingerprints)


def lookup_in(
    db: Database, server_id: str, names: Sequence[str], fingerprints: Sequence[str]
) -> list[Found]:
    """`lookup`'s statements, in the caller's transaction."""
    dialect = db.dialect
    total = len(names)
    out: list[Found] = []
    for start in range(0, total, db._chunk):
        size = min(db._chunk, total - start)
        rows = dialect.page.padded(size, db._chunk)
        args = dialect.page.args(
            names[start : start + size], fingerprints[start : start + size], rows
        )
        args += (server_id, server_id, server_id)
        # Never prepared (psycopg would prepare it from the fifth call): a generic plan
        # cannot see the page's length, guesses 100 rows and probes the index once per
        # tool. Measured against 50,000 pins (50 servers): 4.1 ms of server CPU per
        # 1,000-tool page prepared, 2.2 ms planned for the actual page (a hash join).
        cursor = db.run(_lookup_text(dialect, rows), args, prepare=False)
        out.extend(
            (start + ord_, pinned, definition, bool(approved))
            for ord_, pinned, definition, approved in cursor
        )
    return out


def revoked_among(db: Database, server_id: str, names: list[str]) -> set[str]:
    """The stored `names` whose last pin was revoked (and not approved since)."""
    return {row[0] for row in db.run(_REVOKED_AMONG, (server_id, json.dumps(names)))}


def pin_first(db: Database, server_id: str, row: PinRow) -> bool:
    """Pin a tool that has no pin and no revocation; whether it was written."""
    return bool(db.run(_PIN_FIRST, (*row, server_id, row.name)).rowcount == 1)


def replace(db: Database, server_id: str, row: PinRow, expected: str) -> bool:
    """Replace the pin `expected` by `row`; whether the pin was still `expected`."""
    args = (
        row.fingerprint,
        row.definition,
        row.approver,
        row.approved_at,
        row.protocol_version,
        server_id,
        row.name,
        expected,
    )
    return bool(db.run(_REPLACE, args).rowcount == 1)


def accept_cosmetic(
    db: Database,
    server_id: str,
    name: str,
    expected: str,
    fingerprint: str,
    definition: str | None,
    at: float,
) -> bool:
    """Record a cosmetic variant beside the pin `expected`; whether the pin was still it."""
    args = (fingerprint, definition, at, server_id, name, expected)
    return bool(db.run(_ACCEPT_COSMETIC, args).rowcount)


def approval(row: PinRow, previous: str | None) -> tuple[Any, ...]:
    """The audit row of an approval that writes `row` over the pin `previous` (or none)."""
    return audit_row(
        row.approved_at,
        row.server_id,
        row.name,
        "approve",
        fingerprint=row.fingerprint,
        previous=previous,
        definition=row.definition,
        approver=row.approver,
        protocol_version=row.protocol_version,
    )


# -- the room -----------------------------------------------------------------------------------


class Pins(Room):
    """`PinStore`'s approvals and revocations by a person, and its reading of the pins."""

    def approve(
        self,
        server_id: str,
        tool: Tool | str,
        fingerprint: str | None = None,
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> str:
        """Approve a tool: pin its definition and fingerprint, replacing any earlier pin.

        Call as `approve(server_id, tool)` (keeps the definition: `changes` can explain later
        drift) or `approve(server_id, name, fingerprint)` (fingerprint only). The replaced
        pin's fingerprint is kept in the audit row.

        Args:
            server_id: the operator-assigned id of the server (non-empty `str`).
            tool: a `Tool` of that server (its `fingerprint`, or `fingerprint(tool.raw)` when
                unset), or a tool name.
            fingerprint: with a name, the `"jcs-sha256:"` fingerprint to pin.
            approver: who approves (any text, e.g. an e-mail address or `"guard:auto-new"`).
            protocol_version: the negotiated protocol version the tool was listed under.

        Returns:
            The fingerprint now pinned.

        Raises:
            TypeError, ValueError: caller bugs: `server_id` is not a non-empty `str`; a name
                without a fingerprint or a `Tool` with one; a `Tool` of another server; a
                fingerprint not of the form `jcs-sha256:` + 64 lowercase hex digits; an
                `approver` that is not a `str`.
            Error: as `fingerprint()`, for a `Tool` whose `raw` is not JSON; kind
                `"protocol"`, reason `"invalid_json"`, path `("name",)`, when the tool name
                holds a lone surrogate; kind `"policy"`, reason `"unknown_protocol_version"` for
                a version this library does not know.
            ValueError: the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written (nothing changed).
        """
        row = _pin_row(server_id, tool, fingerprint, approver, protocol_version, time.time())
        _approve(self._open(), row.server_id, [row])
        return row.fingerprint

    def approve_all(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> None:
        """Approve every tool in `tools`, in one transaction (all or none).

        Args:
            server_id: the operator-assigned id of the server.
            tools: `Tool`s of that server.
            approver, protocol_version: as `approve`, for every tool.

        Raises:
            Error: kind `"protocol"`, reason `"duplicate_tool_name"`, path `(index, "name")`,
                when two tools share a name (which definition was approved would be ambiguous).
            TypeError, ValueError, Error: as `approve`, for any element (nothing is pinned).
            sqlite3.Error, psycopg.Error: the database cannot be written (nothing is pinned).
        """
        rows: dict[str, PinRow] = {}
        now = time.time()
        for index, tool in enumerate(tools):
            if not isinstance(tool, Tool):
                raise TypeError(f"tools must hold Tool objects, got {type(tool).__name__}")
            row = _pin_row(server_id, tool, None, approver, protocol_version, now)
            if row.name in rows:
                raise Error(
                    "protocol",
                    "duplicate_tool_name",
                    f"tool {index} repeats the name of an earlier tool",
                    path=(index, "name"),
                )
            rows[row.name] = row
        if rows:
            _approve(self._open(), store_text(server_id), list(rows.values()))

    def revoke(
        self,
        server_id: str,
        name: str,
        *,
        approver: str | None = None,
        reason: str | None = None,
        fingerprint: str | None = None,
    ) -> bool:
        """Remove the pin of one tool (it will check as `"new"` again), and audit it.

        Args:
            server_id: the operator-assigned id of the server.
            name: the tool name.
            approver: who revokes.
            reason: why (at most 2,000 characters), kept with the revocation and its audit row.
            fingerprint: revoke only while the pin is this fingerprint (the one a person
                reviewed); `None`: whatever is pinned.

        Returns:
            `True` when a pin was removed, `False` when there was none, or not `fingerprint`
            (nothing is logged).

        Raises:
            TypeError, ValueError: `server_id`/`name`/`approver`/`reason` of the wrong type, an
                empty `server_id`, a name with a lone surrogate, a malformed `fingerprint`, or
                the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_server_id(server_id)
        key = stored_name(name)
        who = stored_approver(approver)
        why = _rejected.check_reason(reason, required=False)
        if fingerprint is not None:
            check_fingerprint(fingerprint)
        stored_id = store_text(server_id)
        db = self._open()
        at = time.time()
        with db.writing(stored_id):
            if fingerprint is not None:
                now = db.run(_PINNED_FINGERPRINT, (stored_id, key)).fetchone()
                if now is None or now[0] != fingerprint:
                    return False
            row = db.run(_REVOKE, (stored_id, key)).fetchone()
            if row is not None:
                db.run(_REVOKED, (stored_id, key, row[0], at, who, why))
                revocation = audit_row(
                    at, stored_id, key, "revoke", fingerprint=row[0], approver=who, reason=why
                )
                _audit.append(db, [revocation])
                _feed.notify(db)
        return row is not None

    def approve_pending(
        self, server_id: str, name: str, *, fingerprint: str, approver: str
    ) -> bool:
        """Approve exactly the pending definition a person reviewed, by its fingerprint.

        One transaction under the server's lock: only when the tool's pending row still holds
        `fingerprint` is its definition pinned (as `approve` would, with the protocol version
        it was listed under), the row settled and the approval audited. A server that listed
        another definition since, or went back to the approved one (its check took the row
        out of the queue), gets nothing approved.

        Args:
            server_id: the operator-assigned id of the server.
            name: the tool name.
            fingerprint: the `"jcs-sha256:"` fingerprint reviewed.
            approver: who approves (non-empty text).

        Returns:
            `True` when approved; `False` when that fingerprint is not pending for the tool
            (nothing written).

        Raises:
            TypeError, ValueError: a bad argument; the store is closed; a pending definition
                whose fingerprint is not `fingerprint` (a corrupted row: nothing written).
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_server_id(server_id)
        key = stored_name(name)
        check_fingerprint(fingerprint)
        if not isinstance(approver, str) or not approver.strip():
            raise ValueError("approver must name who approves (non-empty)")
        who = stored_approver(approver)
        stored_id = store_text(server_id)
        db = self._open()
        with db.writing(stored_id):
            entry = _pending.entry_of(db, stored_id, key)
            if entry is None or entry[0] != fingerprint:
                return False
            _, definition, version = entry
            if definition is not None:
                if _fingerprint(parse_json(definition)) != fingerprint:
                    raise ValueError(
                        "the pending definition does not match its fingerprint: nothing approved"
                    )
            row = PinRow(stored_id, key, fingerprint, definition, who, time.time(), version)
            _approve_in(db, stored_id, [row])
        return True

    def revocations(self, server_id: str | None = None) -> tuple[Revocation, ...]:
        """The pins revoked and not approved since (of one server, or all), by server and name.

        Raises:
            TypeError, ValueError: bad `server_id`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else store_text(check_server_id(server_id))
        where, args = filters(stored, None)
        rows = self._open().fetch(f"{_REVOCATIONS}{where} ORDER BY server_id, name", args)
        return tuple(_revocation(row) for row in rows)

    def pin(self, server_id: str, name: str) -> Pin | None:
        """The pin of one tool, or `None`.

        Raises:
            TypeError, ValueError: bad `server_id` or `name`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        check_server_id(server_id)
        rows = _read(self._open(), store_text(server_id), stored_name(name))
        return _pin(rows[0]) if rows else None

    def pins(self, server_id: str | None = None) -> tuple[Pin, ...]:
        """Every pin of one server (or of all servers), ordered by server id and name.

        Raises:
            TypeError, ValueError: bad `server_id`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else store_text(check_server_id(server_id))
        return tuple(_pin(row) for row in _read(self._open(), stored, None))

    def pinned(self, server_id: str) -> dict[str, str]:
        """Every pin of one server, including tools it no longer lists.

        Args:
            server_id: the operator-assigned id of the server.

        Returns:
            Tool name -> pinned fingerprint; a baseline for `diff_tools`.

        Raises:
            TypeError, ValueError: `server_id` is not a non-empty `str`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        return {pin.name: pin.fingerprint for pin in self.pins(server_id)}


def _approve(db: Database, server_id: str, rows: list[PinRow]) -> None:
    """Pin `rows` over whatever pins they replace, each with its audit row, in one
    transaction; their revocations, rejections and pending rows are settled."""
    with db.writing(server_id):
        _approve_in(db, server_id, rows)


def _approve_in(db: Database, server_id: str, rows: list[PinRow]) -> None:
    """`_approve`'s statements, in the caller's write transaction."""
    previous = dict(db.run(_PREVIOUS, (server_id, json.dumps([r.name for r in rows]))))
    keys = [(row.server_id, row.name) for row in rows]
    db.many(_APPROVE, rows)
    db.many(_UNREVOKE, keys)
    _rejected.unreject(db, [(row.server_id, row.name, row.fingerprint) for row in rows])
    _pending.settle(db, server_id, [row.name for row in rows])
    _audit.append(db, [approval(row, previous.get(row.name)) for row in rows])
    _feed.notify(db)


def _revocation(row: tuple[Any, ...]) -> Revocation:
    r = Row("conduit_mcp_revoked", row)
    return Revocation(
        r.name(0, "server_id"),
        r.name(1, "name"),
        r.text(2, "fingerprint", optional=True),
        r.number(3, "revoked_at"),
        r.name(4, "approver", optional=True),
        r.name(5, "reason", optional=True),
    )


def _read(db: Database, server_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
    """The pins of one server (or all), ordered by server and name: as stored, unchecked
    (sqlite may hold any type in any column)."""
    where, args = filters(server_id, name)
    return db.fetch(f"{_READ}{where} ORDER BY server_id, name", args)


def _pin(row: tuple[Any, ...]) -> Pin:
    r = Row("conduit_mcp_pins", row)
    return Pin(
        r.name(0, "server_id"),
        r.name(1, "name"),
        r.text(2, "fingerprint"),
        r.text(3, "definition", optional=True),
        r.name(4, "approver", optional=True),
        r.number(5, "approved_at"),
        r.text(6, "protocol_version", optional=True),
        r.text(7, "cosmetic_fingerprint", optional=True),
        r.text(8, "cosmetic_definition", optional=True),
    )


def _pin_row(
    server_id: str,
    tool: Tool | str,
    fingerprint: str | None,
    approver: str | None,
    protocol_version: str | None,
    now: float,
) -> PinRow:
    name, value = pin_key(server_id, tool, fingerprint)
    definition = None
    if isinstance(tool, Tool):
        definition = canonical_json(tool.raw).decode("utf-8")
    if protocol_version is not None:
        check_version(protocol_version)
    return PinRow(
        store_text(server_id),
        store_text(name),
        value,
        definition,
        stored_approver(approver),
        now,
        protocol_version,
    )


def tool_fingerprint(tool: Tool) -> str:
    """The tool's fingerprint: as listed, or taken now."""
    return tool.fingerprint if tool.fingerprint is not None else _fingerprint(tool.raw)


def pin_key(server_id: Any, tool: Any, fingerprint: Any) -> tuple[str, str]:
    """(name, fingerprint) from either call form, with the argument checks of `approve`."""
    check_server_id(server_id)
    if isinstance(tool, Tool):
        if fingerprint is not None:
            raise TypeError("pass either a Tool, or a tool name and a fingerprint")
        if tool.server_id != server_id:
            raise ValueError("the Tool was listed by another server_id")
        name, value = tool.name, tool_fingerprint(tool)
    elif isinstance(tool, str):
        if fingerprint is None:
            raise TypeError("a tool name needs a fingerprint")
        name, value = tool, fingerprint
    else:
        raise TypeError(f"tool must be a Tool or a str name, got {type(tool).__name__}")
    check_fingerprint(value)
    check_unicode(server_id, "server_id")
    if not name.isascii():
        try:
            name.encode("utf-8")  # stored as UTF-8; a JSON parser may hand over "\ud800"
        except UnicodeEncodeError:
            raise Error(
                "protocol",
                "invalid_json",
                "$.name holds a lone surrogate, which is not Unicode text",
                path=("name",),
                details={"expected": "valid Unicode", "got": "lone surrogate"},
            ) from None
    return name, value
