"""`PinStore`: approved tool definitions a team can act on, in sqlite or PostgreSQL.

Not a public module: import from `conduit_mcp.client`.
"""

from __future__ import annotations

import asyncio
import errno
import json
import math
import os
import re
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from types import TracebackType
from typing import Any, Final, Literal, NamedTuple

from ..client._errors import Error
from ..client._fingerprint import fingerprint as _fingerprint
from ..client._jcs import canonical_json
from ..client._json import parse_json
from ..client._tool import Tool, check_server_id
from ..client._versions import check_version
from ._changes import DEFAULT_COSMETIC, FieldChange, field_changes, normalized
from ._drift import ToolDiff, diff_tools
from ._location import StoreLocation
from ._sql import (
    Backend,
    PendingRow,
    PinRow,
    PostgresBackend,
    Seen,
    SqliteBackend,
    Writes,
    approve_audit,
    pg_connect,
)
from ._watch import PinWatcher, _PostgresWake, _SqliteWake

PinStatus = Literal["approved", "new", "changed", "cosmetic"]
"""`PinStore.check`'s answer: the pinned definition; no pin; a material change; or a change
of cosmetic fields only (`title`, `icons`, `annotations.title` by default)."""

_FINGERPRINT: Final = re.compile(r"jcs-sha256:[0-9a-f]{64}\Z")
# Fingerprints already checked against _FINGERPRINT (bounded; a pure function of the text).
_VALID_FINGERPRINTS: Final[set[str]] = set()
_VALID_FINGERPRINTS_MAX: Final = 100_000


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
class AuditEntry:
    """One row of the append-only audit log. Immutable.

    Attributes:
        id: ascending in commit order on both backends (gaps are possible): the cursor of
            `PinStore.audit_since` and `PinStore.changes_since`.
        at: seconds since the Unix epoch (UTC), taken by the writer.
        server_id, name: the pin concerned.
        action: `"approve"`, `"revoke"` or `"check"`.
        outcome: for a check, `"new"`, `"changed"` or `"cosmetic"` (approved checks are not
            logged); `None` otherwise.
        fingerprint: approve: the fingerprint pinned; revoke: the one removed; check: the one
            listed.
        previous_fingerprint: approve: the pin it replaced (`None` for a first approval);
            check: the pinned fingerprint (`None` for a new tool); revoke: `None`.
        definition: approve: the approved definition (canonical JSON), else `None`.
        approver: approve and revoke: who did it, or `None`.
        protocol_version: approve and check: the protocol version given, or `None`.
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


class PinCheck(NamedTuple):
    """The verdict on one tool of a page. Immutable (a named tuple: one is built per tool of
    every page checked, so construction cost counts).

    Attributes:
        name: the tool name.
        status: `"approved"`, `"new"`, `"changed"` (material) or `"cosmetic"`.
        fingerprint: the tool's fingerprint now.
        pinned: the approved fingerprint, or `None` for a new tool.
        changes: for `"changed"` and `"cosmetic"`, the field-level changes from the approved
            definition (see `PinStore.changes`); `()` otherwise.
    """

    name: str
    status: PinStatus
    fingerprint: str
    pinned: str | None
    changes: tuple[FieldChange, ...]


class PinOutcome(NamedTuple):
    """What `PinStore.check_and_pin` found and wrote for a page. Immutable.

    Attributes:
        checks: one `PinCheck` per tool, in page order, as read under the lock.
        pinned: names whose automatic pin (or accepted cosmetic variant) was written.
        revoked: names with no pin whose last pin was revoked (never pinned automatically).
    """

    checks: tuple[PinCheck, ...]
    pinned: frozenset[str]
    revoked: frozenset[str]


class PinStore:
    """Approved tool definitions per (`server_id`, tool name), in sqlite or PostgreSQL.

    Trust on first use, made explicit and reviewable. `approve` keeps the approved definition
    (RFC 8785 canonical JSON), its fingerprint, who approved it, when, and under which protocol
    version; `check` then says whether what a server lists now is that definition
    (`"approved"`), a tool never approved (`"new"`), a material change (`"changed"`) or a
    change of cosmetic fields only (`"cosmetic"`); `changes` says what changed, field by
    field. Pins are never silently overwritten: every approval and revocation, and every change
    of a tool's pending state (a check whose answer is not `"approved"` and differs from the
    tool's pending row), appends a row to an audit log whose approvals and revocations the
    database refuses to update or delete (check rows may be pruned: `prune_checks`). Tools
    awaiting approval are kept in a pending queue (`pending`). Pins stay when a tool disappears
    from a listing, so a tool cannot be hidden once and come back changed unnoticed. A revoked
    pin is remembered until a person approves the tool again, so automatic pins
    (`check_and_pin`) never put it back.

    Material vs cosmetic: by default only changes at or below `/title`, `/icons` and
    `/annotations/title` are cosmetic (display text a person reads, never the model's
    contract). That is stricter than the SEP-3140 proposal on purpose: `description`,
    `inputSchema`, `outputSchema`, `annotations` hints, `_meta`, `execution` and members this
    library does not know all reach the model or change what the client does.

    Backends, one schema (`conduit_mcp_pins`, `conduit_mcp_audit`, `conduit_mcp_migrations`;
    versioned migrations run on open, under a lock, and a file from an older conduit-mcp is
    upgraded in place): a sqlite file path, `":memory:"` (a private database that lives as
    long as this object), or a `postgresql://` URL (libpq syntax; needs the `postgresql`
    extra: psycopg 3). sqlite stays the embedded default.

    Concurrency: one `PinStore` may be shared by threads (calls are serialized over its one
    connection). Any number of processes and hosts may open the same database: each call is
    one transaction; a pin and its audit row commit together, so no reader sees half an
    approval; approvals of one server are serialized (sqlite: the database write lock,
    waiting up to `timeout` seconds; PostgreSQL: an advisory lock on the server id).

    Round trips: `check_page` looks a whole page up in one statement (see there), plus one
    write transaction (pending rows, audit rows) when some answer is not `"approved"`.

    Locations are parsed once; only their redacted form (`redacted_location`) is ever shown:
    in `repr`, in errors (the driver's are re-worded), in the CLI.

    Keys are the operator-assigned `server_id` (never `serverInfo.name`) and the tool name
    exactly as sent. Names, ids and approvers are stored with `\\` written `\\\\` and U+0000
    written `\\0` (PostgreSQL text cannot hold U+0000); read them back through this class.

    Spec: MCP 2026-07-28 server/tools "Tool Names" (names are unique only within a server;
    `serverInfo.name` SHOULD NOT be relied upon), "Capabilities" (the tool set MAY change over
    time), "User Interaction Model" (SHOULD make clear which tools are exposed to the model)
    and "Security Considerations"; proposed SEP-3140 (an approval binds to content).
    """

    def __init__(
        self,
        location: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 5.0,
        cosmetic: Iterable[str] = DEFAULT_COSMETIC,
        create: bool = True,
    ) -> None:
        """Open (creating and migrating if needed) the store at `location`.

        Args:
            location: a sqlite file path, `":memory:"`, a `postgresql://` (or
                `postgres://`) URL such as `"postgresql://pins@db.internal/gateway"`, or a
                libpq conninfo string (`"host=db.internal dbname=gateway user=pins"`).
            timeout: seconds to wait for another writer's lock (sqlite) or to connect
                (PostgreSQL).
            cosmetic: JSON Pointers (RFC 6901) under which a change is cosmetic; default
                `DEFAULT_COSMETIC`. Pass `()` to make every change material.
            create: with `False`, a store that does not exist is an error instead of a new,
                empty one (for readers: a mistyped path must not look like "every tool is
                new"). A sqlite file is first opened through sqlite's `mode=rw` URI, which
                never creates one (a file deleted between that open and the store's own, one
                system call apart, would still be created); a PostgreSQL database must already
                hold the store's tables (connecting never creates a database; without this
                check the first open creates the tables). `":memory:"` ignores it.

        Raises:
            FileNotFoundError: `create=False` and no sqlite file exists at the path, or the
                PostgreSQL database (on its search path) has no `conduit_mcp_migrations` table.
            sqlite3.Error: the file cannot be opened or is not a sqlite database.
            psycopg.Error: the PostgreSQL server cannot be reached or refuses the login.
            ImportError: a `postgresql://` URL without psycopg installed.
            ValueError: the database holds a newer schema than this library knows; a
                cosmetic pointer that is not `""` or does not start with `/`; a PostgreSQL
                location libpq cannot parse (worded without the location's password); a
                sqlite file that is not a pin store (no `application_id` marker and no store
                tables, with `create=False`; or another application's marker).
        """
        self._cosmetic = frozenset(cosmetic)
        for pointer in self._cosmetic:
            if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
                raise ValueError("cosmetic pointers must be RFC 6901 JSON Pointers")
        self._lock = threading.Lock()
        self._closed = False
        self._backend: Backend
        text = os.fspath(location)
        self._location: str
        if not isinstance(text, str):  # a bytes path: sqlite only
            self._location = repr(text)
            parsed = None
        else:
            parsed = StoreLocation(text)  # parsed once; only its display form is ever shown
            self._location = parsed.display
        if parsed is not None and parsed.kind == "postgresql":
            if parsed.error is not None:
                raise ValueError(
                    f"{parsed.display}: not a PostgreSQL location libpq accepts: {parsed.error}"
                )
            if not create:
                _require_postgres_store(parsed, timeout)
            self._backend = PostgresBackend(parsed, timeout)
        else:
            if not create:
                _require_sqlite_file(text)
            self._backend = SqliteBackend(text, timeout, create=create)

    # -- writing -----------------------------------------------------------------------------

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
        row = self._pin_row(server_id, tool, fingerprint, approver, protocol_version, time.time())
        self._open().approve(row.server_id, [row])
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
            row = self._pin_row(server_id, tool, None, approver, protocol_version, now)
            if row.name in rows:
                raise Error(
                    "protocol",
                    "duplicate_tool_name",
                    f"tool {index} repeats the name of an earlier tool",
                    path=(index, "name"),
                )
            rows[row.name] = row
        if rows:
            self._open().approve(_store_text(server_id), list(rows.values()))

    def revoke(self, server_id: str, name: str, *, approver: str | None = None) -> bool:
        """Remove the pin of one tool (it will check as `"new"` again), and audit it.

        Args:
            server_id: the operator-assigned id of the server.
            name: the tool name.
            approver: who revokes.

        Returns:
            `True` when a pin was removed, `False` when there was none (nothing is logged).

        Raises:
            TypeError, ValueError: `server_id`/`name`/`approver` of the wrong type, an empty
                `server_id`, a name with a lone surrogate, or the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_server_id(server_id)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        _check_unicode(name, "name")
        who = _approver(approver)
        revoked = self._open().revoke(_store_text(server_id), _store_text(name), time.time(), who)
        return revoked is not None

    # -- reading -----------------------------------------------------------------------------

    def check(
        self,
        server_id: str,
        tool: Tool | str,
        fingerprint: str | None = None,
        *,
        protocol_version: str | None = None,
        audit: bool = True,
    ) -> PinStatus:
        """Compare one tool with its pin.

        Call as `check(server_id, tool)` or `check(server_id, name, fingerprint)`; with a name
        the definition is unknown, so a difference is always `"changed"`.

        Args:
            server_id: the operator-assigned id of the server.
            tool: a `Tool` of that server, or a tool name.
            fingerprint: with a name, its current fingerprint.
            protocol_version: recorded with an audited outcome.
            audit: append an audit row when the answer is not `"approved"`.

        Returns:
            `"approved"` (pinned with this fingerprint), `"new"` (no pin under this server and
            name), `"changed"` (a material change, or a change that cannot be explained because
            the pin has no definition) or `"cosmetic"` (only cosmetic fields changed).

        Raises:
            TypeError, ValueError, Error: as `approve`.
            ValueError: the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read or written.
        """
        if isinstance(tool, Tool):
            if fingerprint is not None:
                raise TypeError("pass either a Tool, or a tool name and a fingerprint")
            return self.check_page(
                server_id, [tool], protocol_version=protocol_version, audit=audit
            )[0].status
        name, value = _pin_key(server_id, tool, fingerprint)
        stored_id, key = _store_text(server_id), _store_text(name)
        found = self._open().lookup(stored_id, [key], [value])
        out = _all_approved([name], [value])
        if found and audit:
            if protocol_version is not None:
                check_version(protocol_version)
            auto = _Auto(False, False, False, None, protocol_version)
            self._settle(stored_id, [name], [key], [value], [None], [0], found, out, auto, set())
        elif found:
            out[0] = self._verdict(name, value, found[0][1], None, None)
        return out[0].status

    def check_page(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        protocol_version: str | None = None,
        audit: bool = True,
    ) -> tuple[PinCheck, ...]:
        """Check every tool of a `tools/list` page against its pin, in one lookup.

        This is what a guard calls per page. One statement (one round trip, one snapshot)
        sends every tool's name and fingerprint; the database compares them with the pins and
        returns only the tools whose pin differs or is missing, with the pinned fingerprint
        and the approved definition (read for those tools only). A page where every tool is
        approved moves no rows back. Changes are worked out in this process; with `audit`, the
        outcomes that are not `"approved"` go to the pending queue in one more write
        transaction (only then): a new pending row and one audit row when a tool's state
        changed, else its counter and `last_seen`.

        Args:
            server_id: the operator-assigned id of the server.
            tools: the accepted `Tool`s of the page (e.g. `intake(...).tools`).
            protocol_version: recorded with audited outcomes.
            audit: append audit rows for outcomes that are not `"approved"`.

        Returns:
            One `PinCheck` per tool, in the order given.

        Raises:
            Error: kind `"protocol"`, reason `"duplicate_tool_name"`, path `(index, "name")`,
                when two tools share a name; as `approve` for a tool.
            TypeError, ValueError: as `approve`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read or written.

        Total: one indexed lookup per page (sqlite: one statement per 16,382 tools, in one
        read transaction), then linear in the size of the definitions that differ.
        """
        names, values, page = _page(server_id, tools)
        if not names:
            return ()
        # The database compares the fingerprints and returns only the tools whose pin
        # differs (with the approved definition): the steady state moves no rows.
        stored_id = _store_text(server_id)
        stored = _stored_names(names)
        found = self._open().lookup(stored_id, stored, values)
        out = _all_approved(names, values)
        if not found:
            return tuple(out)
        if not audit:
            for index, pinned, definition in found:
                out[index] = self._verdict(
                    names[index], values[index], pinned, definition, page[index].raw
                )
            return tuple(out)
        if protocol_version is not None:
            check_version(protocol_version)
        indexes = sorted(index for index, _, _ in found)
        position = {index: k for k, index in enumerate(indexes)}
        relative = [(position[index], pinned, definition) for index, pinned, definition in found]
        self._settle(
            stored_id,
            names,
            stored,
            values,
            [t.raw for t in page],
            indexes,
            relative,
            out,
            _Auto(False, False, False, None, protocol_version),
            set(),
        )
        return tuple(out)

    def check_and_pin(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str,
        pin_new: bool = False,
        accept_cosmetic: bool = False,
        pin_changed: bool = False,
        protocol_version: str | None = None,
        queue: bool = True,
    ) -> PinOutcome:
        """Check a page and write the automatic pins a policy asks for, in ONE transaction.

        What a guard calls per page. A first lookup without any lock answers a page whose every
        tool is approved (the steady state: one statement, no write). Otherwise one write
        transaction under the server's lock (sqlite: the database write lock; PostgreSQL: an
        advisory lock on the server id, the one `approve` and `revoke` take) reads the
        differing tools again, their revocations and pending rows, and writes:

        * `pin_new`: a tool with no pin is pinned (trust on first use) — unless its last pin
          was revoked (it is in `PinOutcome.revoked`, held in the pending queue);
        * `accept_cosmetic`: a variant that differs from the pin in cosmetic fields only is
          recorded beside the pin (`Pin.cosmetic_fingerprint`); the approved definition,
          fingerprint and approver are never replaced;
        * `pin_changed`: a material change replaces the pin (approver `approver`);
        * anything else not approved goes to the pending queue (`pending`): a new row (and
          one audit row) when its state changed, else its counter and `last_seen` move.

        Every pin write is also conditional in SQL (insert only when there is no pin and no
        revocation; update only while the pin is the one read), so a revocation or another
        approval is never undone, whatever commits around this call.

        Args:
            server_id: the operator-assigned id of the server.
            tools: the accepted `Tool`s of the page.
            approver: recorded with every write this call makes (e.g. `"conduit-mcp guard"`).
            pin_new, accept_cosmetic, pin_changed: which automatic writes are allowed.
            protocol_version: recorded with pins and audit rows.
            queue: `False` leaves unpinned tools out of the pending queue and the audit log
                (a guard's private in-memory store, where nobody reads them: a tool rewritten
                with a 20 MB description would otherwise be stored again with its changes).

        Returns:
            A `PinOutcome`: the checks (as read under the lock), the names pinned or accepted,
            and the names whose pin was revoked.

        Raises:
            As `check_page`; TypeError or ValueError for an `approver` that is not a
            non-empty `str`.
        """
        if not isinstance(approver, str) or not approver.strip():
            raise ValueError("approver must name who writes the automatic pins (non-empty)")
        stored_approver = _approver(approver)
        if protocol_version is not None:
            check_version(protocol_version)
        names, values, page = _page(server_id, tools)
        if not names:
            return PinOutcome((), frozenset(), frozenset())
        stored_id = _store_text(server_id)
        stored = _stored_names(names)
        found = self._open().lookup(stored_id, stored, values)
        out = _all_approved(names, values)
        if not found:
            return PinOutcome(tuple(out), frozenset(), frozenset())
        indexes = sorted(index for index, _, _ in found)
        revoked: set[str] = set()
        auto = _Auto(
            pin_new, accept_cosmetic, pin_changed, stored_approver, protocol_version, queue
        )
        applied = self._settle(
            stored_id,
            names,
            stored,
            values,
            [t.raw for t in page],
            indexes,
            None,
            out,
            auto,
            revoked,
        )
        pinned = frozenset(names[i] for i in indexes if stored[i] in applied)
        return PinOutcome(tuple(out), pinned, frozenset(revoked))

    def _verdict(
        self, name: str, value: str, pinned: str | None, definition: str | None, raw: Any
    ) -> PinCheck:
        if pinned is None:
            return PinCheck(name, "new", value, None, ())
        if raw is None:  # checked by name and fingerprint: nothing to explain
            return PinCheck(name, "changed", value, pinned, ())
        changes = self._explain(definition, raw)
        material = any(change.material for change in changes)
        return PinCheck(name, "changed" if material else "cosmetic", value, pinned, changes)

    def _settle(
        self,
        stored_id: str,
        names: list[str],
        stored: list[str],
        values: list[str],
        raws: list[Any],
        indexes: list[int],
        found: list[tuple[int, str | None, str | None]] | None,
        out: list[PinCheck],
        auto: _Auto,
        revoked: set[str],
    ) -> set[str]:
        """One check-and-pin transaction over the page entries `indexes`; fills `out`
        (and `revoked`) from what the transaction read; returns the stored names written."""

        def decide(seen: Seen) -> Writes:
            now = time.time()
            writes = Writes([], [], [], [], [], [], [])
            version = auto.protocol_version
            for k, pinned, definition in sorted(seen.found):
                i = indexes[k]
                name, key, value = names[i], stored[i], values[i]
                check = self._verdict(name, value, pinned, definition, raws[i])
                out[i] = check
                listed = _definition_or_none(raws[i])
                if check.status == "new" and key in seen.revoked:
                    revoked.add(name)
                elif check.status == "new" and auto.pin_new:
                    row = PinRow(stored_id, key, value, listed, auto.approver, now, version)
                    writes.new_pins.append(row)
                    writes.audit.append((approve_audit(row, None), key))
                    writes.unpend.append(key)
                    continue
                elif check.status == "cosmetic" and auto.accept_cosmetic and pinned is not None:
                    writes.cosmetic.append((key, pinned, value, listed, now))
                    audit = (now, stored_id, key, "check", "cosmetic", value, pinned, listed)
                    writes.audit.append(((*audit, auto.approver, version), key))
                    writes.unpend.append(key)
                    continue
                elif check.status == "changed" and auto.pin_changed and pinned is not None:
                    row = PinRow(stored_id, key, value, listed, auto.approver, now, version)
                    writes.replace.append((row, pinned))
                    writes.audit.append((approve_audit(row, pinned), key))
                    writes.unpend.append(key)
                    continue
                # Held: one pending row per tool; one audit row per change of its state.
                if not auto.queue:
                    continue
                if seen.pending.get(key) == (check.status, value):
                    writes.bump.append((key, value, now))
                    continue
                changes = _changes_json(check.changes)
                writes.pending.append(
                    PendingRow(
                        stored_id, key, check.status, value, pinned, listed, changes, now, version
                    )
                )
                held = (now, stored_id, key, "check", check.status, value, pinned, None, None)
                writes.audit.append(((*held, version), None))
            return writes

        sub_names = [stored[i] for i in indexes]
        sub_values = [values[i] for i in indexes]
        return self._open().settle(stored_id, sub_names, sub_values, found, decide)

    def changes(self, server_id: str, tool: Tool) -> tuple[FieldChange, ...]:
        """The field-level changes between the approved definition and `tool`.

        Args:
            server_id: the operator-assigned id of the server.
            tool: a `Tool` of that server, as listed now.

        Returns:
            The changes sorted by `path` (RFC 6901 JSON Pointer), each with `old`, `new` and
            `material`; `()` when `tool` is the approved definition. A tool never approved is
            one material `"add"` at `""` (the whole definition); a pin without a definition
            (approved by fingerprint) that differs is one material `"replace"` at `""` with
            `old=None`. Definitions nested deeper than 1,024 levels, or holding an integer beyond
            a double, are compared whole, the same way. Does not write the audit log.

        Raises:
            TypeError, ValueError, Error: as `approve`.
            ValueError: the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.

        Spec: MCP 2026-07-28 server/tools "User Interaction Model" (SHOULD make clear which
        tools are exposed: a person approving a change needs to see it).
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"tool must be a Tool, got {type(tool).__name__}")
        name, value = _pin_key(server_id, tool, None)
        found = self._open().lookup(_store_text(server_id), [_store_text(name)], [value])
        if not found:
            return ()
        _, pinned, definition = found[0]
        if pinned is None:
            whole = _normalized_or_none(tool.raw)
            return (FieldChange("", "add", None, tool.raw if whole is None else whole, True),)
        return self._explain(definition, tool.raw)

    def pin(self, server_id: str, name: str) -> Pin | None:
        """The pin of one tool, or `None`.

        Raises:
            TypeError, ValueError: bad `server_id` or `name`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        check_server_id(server_id)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        _check_unicode(name, "name")
        rows = self._open().pins(_store_text(server_id), _store_text(name))
        return _pin(rows[0]) if rows else None

    def pins(self, server_id: str | None = None) -> tuple[Pin, ...]:
        """Every pin of one server (or of all servers), ordered by server id and name.

        Raises:
            TypeError, ValueError: bad `server_id`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else _store_text(check_server_id(server_id))
        return tuple(_pin(row) for row in self._open().pins(stored, None))

    def pending(self, server_id: str | None = None, name: str | None = None) -> tuple[Pending, ...]:
        """The pending queue: tools awaiting a person's approval, by server id and name.

        Args:
            server_id: only this server's, or `None` for all.
            name: only this tool (with `server_id`), or `None`.

        Returns:
            `Pending` rows ordered by server id and name.

        Raises:
            TypeError, ValueError: bad `server_id` or `name`; the store is closed; a row the
                store holds is malformed (the message names its table and column).
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else _store_text(check_server_id(server_id))
        key = None
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"name must be a str, got {type(name).__name__}")
            _check_unicode(name, "name")
            key = _store_text(name)
        return tuple(_pending(row) for row in self._open().pending(stored, key))

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

    def audit_log(
        self, server_id: str | None = None, *, limit: int | None = None
    ) -> tuple[AuditEntry, ...]:
        """The audit log (of one server, or all), oldest first.

        Args:
            server_id: only this server's entries, or `None` for all.
            limit: only the newest `limit` entries (still oldest first), or `None` for all.

        Raises:
            TypeError, ValueError: bad `server_id` or `limit`; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        stored = None if server_id is None else _store_text(check_server_id(server_id))
        if limit is not None and (type(limit) is not int or limit < 0):
            raise ValueError("limit must be a non-negative int or None")
        return tuple(_entry(row) for row in self._open().audit(stored, limit))

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
        return tuple(_entry(row) for row in self._open().audit_after(cursor, limit))

    def changes_since(
        self, cursor: int = 0, *, limit: int = 1000
    ) -> tuple[tuple[AuditEntry, ...], int]:
        """The approvals and revocations committed after `cursor`: the change feed.

        What a running guard needs to learn from other processes and hosts: each entry is an
        `"approve"` or `"revoke"` (a check, a pending row or an accepted cosmetic variant
        changes nothing a guard decides on). Read through `audit_since`, so the cursor and its
        guarantee are the same.

        Returns:
            `(entries, cursor)`: the approve and revoke entries among the next `limit` audit
            entries, and the cursor to pass next time (the last id read, whatever its action).

        Raises:
            As `audit_since`.
        """
        batch = self.audit_since(cursor, limit=limit)
        changes = tuple(e for e in batch if e.action in ("approve", "revoke"))
        return changes, (batch[-1].id if batch else cursor)

    def watch(
        self,
        callback: Callable[[AuditEntry], object],
        *,
        cursor: int | None = None,
        interval: float = 0.05,
    ) -> PinWatcher:
        """Call `callback` with every approval and revocation committed to this store, by any
        process or host, from a daemon thread: the change feed.

        The thread waits for the database to signal a commit — PostgreSQL: `LISTEN` on the
        channel `"conduit_mcp_pins"`, which every pin write notifies at commit; sqlite: `PRAGMA
        data_version` on a read-only connection of its own, read every `interval` seconds —
        then reads `changes_since` from its cursor and calls `callback` with each entry, in
        commit order (and polls once a second in case a notification was lost). Measured on a
        loaded 2-core machine: a change reaches the callback well within a second on both
        backends (docs/pins.md). Exceptions from `callback` are logged (logger
        `conduit_mcp.pins`), never propagated; the thread ends when the watcher or the store
        is closed.

        Args:
            callback: called with each `AuditEntry` whose action is `"approve"` or `"revoke"`
                (from the watcher's thread: keep it short and thread-safe).
            cursor: deliver entries after this audit id; `None` (default): from now.
            interval: seconds between sqlite `data_version` reads, and the longest a PostgreSQL
                wait lasts before the watcher checks whether it was closed.

        Returns:
            The running `PinWatcher` (`close()` stops it).

        Raises:
            ValueError: the store is closed, is a private `":memory:"` database (nobody else
                can write it), or `interval` is not a positive number of seconds.
            sqlite3.Error, psycopg.Error: the watcher's own connection cannot be opened.
        """
        if isinstance(interval, bool) or not isinstance(interval, (int, float)):
            raise ValueError("interval must be a positive number of seconds")
        if not math.isfinite(interval) or interval <= 0:
            raise ValueError("interval must be a positive number of seconds")
        backend = self._open()
        if cursor is None:
            last = self.audit_log(limit=1)
            cursor = last[-1].id if last else 0
        wake: Any
        if isinstance(backend, PostgresBackend):
            wake = _PostgresWake(backend.location, backend.timeout)
        elif isinstance(backend, SqliteBackend) and backend.path != ":memory:":
            wake = _SqliteWake(backend.path)
        else:
            raise ValueError("a private in-memory store has no other writer to watch")
        return PinWatcher(self, wake, callback, cursor, float(interval))

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
        if isinstance(older_than, bool) or not isinstance(older_than, (int, float)):
            raise ValueError("older_than must be a number of seconds")
        if not math.isfinite(older_than) or older_than < 0:
            raise ValueError("older_than must be a finite, non-negative number of seconds")
        return self._open().prune_checks(time.time() - older_than)

    def diff(self, server_id: str, current: Mapping[str, str] | Iterable[Tool]) -> ToolDiff:
        """`diff_tools(self.pinned(server_id), current)`, with `changes` filled in.

        `added` are tools never approved, `changed` approved names whose definition differs
        (including tools that disappeared and came back different), `removed` pinned tools
        not listed now (their pins stay). When `current` holds `Tool`s, `ToolDiff.changes`
        explains each changed name from the approved definition (as `changes`).

        Raises:
            As `pinned`, `check_page` and `diff_tools`.
        """
        if isinstance(current, Mapping) or isinstance(current, (str, bytes, bytearray)):
            return diff_tools(self.pinned(server_id), current)
        tools = list(current)
        drift = diff_tools(self.pinned(server_id), tools)
        if not drift.changed:
            return drift
        wanted = set(drift.changed)
        page = [t for t in tools if isinstance(t, Tool) and t.name in wanted]
        checks = self.check_page(server_id, page, audit=False)
        return ToolDiff(
            drift.added,
            drift.removed,
            drift.changed,
            drift.unchanged,
            {c.name: c.changes for c in checks},
        )

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection. Idempotent; later calls other than `close` raise
        `ValueError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._backend.close()

    def __enter__(self) -> PinStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PinStore({self._location!r}, closed={self._closed})"

    # -- helpers -----------------------------------------------------------------------------

    def _open(self) -> Backend:
        if self._closed:
            raise ValueError("PinStore is closed")
        return self._backend

    def _pin_row(
        self,
        server_id: str,
        tool: Tool | str,
        fingerprint: str | None,
        approver: str | None,
        protocol_version: str | None,
        now: float,
    ) -> PinRow:
        name, value = _pin_key(server_id, tool, fingerprint)
        definition = None
        if isinstance(tool, Tool):
            definition = canonical_json(tool.raw).decode("utf-8")
        if protocol_version is not None:
            check_version(protocol_version)
        return PinRow(
            _store_text(server_id),
            _store_text(name),
            value,
            definition,
            _approver(approver),
            now,
            protocol_version,
        )

    def _explain(self, definition: str | None, raw: Any) -> tuple[FieldChange, ...]:
        new = _normalized_or_none(raw)
        old = None
        if definition is not None:
            try:
                old = parse_json(definition)
            except Error:  # deeper than parse_json reads, or an integer beyond a double
                old = None
        if old is None or new is None:
            return (FieldChange("", "replace", old, raw if new is None else new, True),)
        changes = field_changes(old, new, self._cosmetic)
        if not changes:  # equal after normalization but not byte-equal (huge integers)
            return (FieldChange("", "replace", old, new, True),)
        return changes


class AsyncPinStore:
    """The async form of a `PinStore`, for event loops (a guard on anyio/asyncio).

    Each method runs the same method of the wrapped `PinStore` in a worker thread
    (`asyncio.to_thread`), so a slow database never blocks the loop; the `PinStore`'s lock
    serializes the calls. Under anyio with the trio backend, call the sync methods through
    `anyio.to_thread.run_sync` instead.

    Args:
        store: the `PinStore` to use (not closed by this wrapper unless `aclose` is called).
    """

    def __init__(self, store: PinStore) -> None:
        if not isinstance(store, PinStore):
            raise TypeError(f"store must be a PinStore, got {type(store).__name__}")
        self.store = store

    async def check_page(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        protocol_version: str | None = None,
        audit: bool = True,
    ) -> tuple[PinCheck, ...]:
        """`PinStore.check_page` in a worker thread."""
        page = list(tools)
        return await asyncio.to_thread(
            self.store.check_page,
            server_id,
            page,
            protocol_version=protocol_version,
            audit=audit,
        )

    async def check(
        self, server_id: str, tool: Tool, *, protocol_version: str | None = None
    ) -> PinStatus:
        """`PinStore.check` in a worker thread."""
        return await asyncio.to_thread(
            self.store.check, server_id, tool, protocol_version=protocol_version
        )

    async def approve(
        self,
        server_id: str,
        tool: Tool,
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> str:
        """`PinStore.approve` in a worker thread."""
        return await asyncio.to_thread(
            self.store.approve,
            server_id,
            tool,
            approver=approver,
            protocol_version=protocol_version,
        )

    async def approve_all(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> None:
        """`PinStore.approve_all` in a worker thread."""
        page = list(tools)
        await asyncio.to_thread(
            self.store.approve_all,
            server_id,
            page,
            approver=approver,
            protocol_version=protocol_version,
        )

    async def changes(self, server_id: str, tool: Tool) -> tuple[FieldChange, ...]:
        """`PinStore.changes` in a worker thread."""
        return await asyncio.to_thread(self.store.changes, server_id, tool)

    async def revoke(self, server_id: str, name: str, *, approver: str | None = None) -> bool:
        """`PinStore.revoke` in a worker thread."""
        return await asyncio.to_thread(self.store.revoke, server_id, name, approver=approver)

    async def check_and_pin(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str,
        pin_new: bool = False,
        accept_cosmetic: bool = False,
        pin_changed: bool = False,
        protocol_version: str | None = None,
        queue: bool = True,
    ) -> PinOutcome:
        """`PinStore.check_and_pin` in a worker thread."""
        page = list(tools)
        return await asyncio.to_thread(
            self.store.check_and_pin,
            server_id,
            page,
            approver=approver,
            pin_new=pin_new,
            accept_cosmetic=accept_cosmetic,
            pin_changed=pin_changed,
            protocol_version=protocol_version,
            queue=queue,
        )

    async def pending(
        self, server_id: str | None = None, name: str | None = None
    ) -> tuple[Pending, ...]:
        """`PinStore.pending` in a worker thread."""
        return await asyncio.to_thread(self.store.pending, server_id, name)

    async def audit_since(self, cursor: int = 0, *, limit: int = 1000) -> tuple[AuditEntry, ...]:
        """`PinStore.audit_since` in a worker thread."""
        return await asyncio.to_thread(self.store.audit_since, cursor, limit=limit)

    async def changes_since(
        self, cursor: int = 0, *, limit: int = 1000
    ) -> tuple[tuple[AuditEntry, ...], int]:
        """`PinStore.changes_since` in a worker thread."""
        return await asyncio.to_thread(self.store.changes_since, cursor, limit=limit)

    async def aclose(self) -> None:
        """Close the wrapped store."""
        await asyncio.to_thread(self.store.close)


# -- module helpers ---------------------------------------------------------------------------


class _Auto(NamedTuple):
    """Which automatic writes a check-and-pin transaction may make, and in whose name."""

    pin_new: bool
    accept_cosmetic: bool
    pin_changed: bool
    approver: str | None
    protocol_version: str | None
    #: whether a tool left unpinned goes to the pending queue (with its audit row).
    queue: bool = True


def _definition_or_none(raw: Any) -> str | None:
    """The canonical JSON of a listed definition, or `None` when it has none or it cannot be
    written (deeper than the encoder goes)."""
    if raw is None:
        return None
    try:
        return canonical_json(raw).decode("utf-8")
    except (Error, RecursionError, ValueError):
        return None


def _changes_json(changes: Sequence[FieldChange]) -> str:
    """The field changes as a JSON array (`FieldChange.to_json`); values too deep to write are
    left out (path, op and material stay)."""
    try:
        return json.dumps([c.to_json() for c in changes], ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        brief = [{"path": c.path, "op": c.op, "material": c.material} for c in changes]
        return json.dumps(brief, ensure_ascii=False)


def _page(server_id: str, tools: Iterable[Tool]) -> tuple[list[str], list[str], list[Tool]]:
    """(names, fingerprints, tools) of a page, every tool checked as `approve` checks it."""
    check_server_id(server_id)
    _check_unicode(server_id, "server_id")
    names: list[str] = []
    values: list[str] = []
    page = tools if type(tools) is list else list(tools)
    for tool in page:
        # The checks of `_pin_key`, inlined: this loop is the guard's hot path.
        if type(tool) is not Tool and not isinstance(tool, Tool):
            raise TypeError(f"tools must hold Tool objects, got {type(tool).__name__}")
        if tool.server_id != server_id:
            raise ValueError("the Tool was listed by another server_id")
        name = tool.name
        value = tool.fingerprint
        if value is None:
            value = _fingerprint(tool.raw)
        if value not in _VALID_FINGERPRINTS:
            name, value = _pin_key(server_id, tool, None)
            _remember_valid(value)
        elif not name.isascii():
            _pin_key(server_id, tool, None)  # the lone-surrogate check
        names.append(name)
        values.append(value)
    if len(set(names)) != len(names):
        _raise_duplicate(names)
    return names, values, page


def _all_approved(names: list[str], values: list[str]) -> list[PinCheck]:
    """`PinCheck(name, "approved", value, value, ())` per tool, built by `tuple.__new__` in
    C (a third of the cost of calling `PinCheck` 1,000 times through its Python `__new__`)."""
    rows = zip(names, repeat("approved"), values, values, repeat(()))
    return list(map(tuple.__new__, repeat(PinCheck), rows))


def _stored_names(names: list[str]) -> list[str]:
    """`_store_text` of each name; one scan of the page when none needs escaping."""
    joined = "".join(names)
    if "\\" not in joined and "\x00" not in joined:
        return names
    return [_store_text(name) for name in names]


def _raise_duplicate(names: list[str]) -> None:
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            raise Error(
                "protocol",
                "duplicate_tool_name",
                f"tool {index} repeats the name of an earlier tool",
                path=(index, "name"),
            )
        seen.add(name)


def _remember_valid(fingerprint: str) -> None:
    if len(_VALID_FINGERPRINTS) >= _VALID_FINGERPRINTS_MAX:
        _VALID_FINGERPRINTS.clear()
    _VALID_FINGERPRINTS.add(fingerprint)


def _normalized_or_none(raw: Any) -> Any:
    """`normalized(raw)`, or `None` when it holds an integer beyond a double."""
    try:
        return normalized(raw)
    except (ValueError, OverflowError):
        return None


def _store_text(text: str) -> str:
    """`text` as stored: `\\` -> `\\\\`, U+0000 -> `\\0` (PostgreSQL text cannot hold U+0000)."""
    if "\\" in text or "\x00" in text:
        return text.replace("\\", "\\\\").replace("\x00", "\\0")
    return text


def _load_text(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r"\\(.)", lambda m: "\x00" if m.group(1) == "0" else m.group(1), text)


def _approver(approver: object) -> str | None:
    if approver is None:
        return None
    if not isinstance(approver, str):
        raise TypeError(f"approver must be a str, got {type(approver).__name__}")
    _check_unicode(approver, "approver")
    return _store_text(approver)


def _check_unicode(text: str, what: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{what} holds a lone surrogate") from None


class _Row:
    """Reads one stored row column by column, refusing a value of the wrong type (sqlite's
    dynamic typing lets any value into any column) with one `ValueError` line."""

    __slots__ = ("row", "table")

    def __init__(self, table: str, row: Sequence[Any]) -> None:
        self.table = table
        self.row = row

    def fail(self, column: str, value: Any, expected: str) -> ValueError:
        key = ", ".join(_brief(v) for v in self.row[:2])
        return ValueError(
            f"the pin store holds a malformed row in {self.table} ({key}): {column} is"
            f" {type(value).__name__} {_brief(value)}, not {expected}"
        )

    def text(self, index: int, column: str, *, optional: bool = False) -> Any:
        value = self.row[index]
        if isinstance(value, str) or (optional and value is None):
            return value
        raise self.fail(column, value, "text")

    def name(self, index: int, column: str, *, optional: bool = False) -> Any:
        value = self.text(index, column, optional=optional)
        return None if value is None else _load_text(value)

    def number(self, index: int, column: str) -> float:
        value = self.row[index]
        if type(value) in (int, float) and math.isfinite(value):
            return float(value)
        raise self.fail(column, value, "a finite number")

    def integer(self, index: int, column: str) -> int:
        value = self.row[index]
        if type(value) is int:
            return value
        raise self.fail(column, value, "an integer")


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _pending(row: tuple[Any, ...]) -> Pending:
    r = _Row("conduit_mcp_pending", row)
    changes = r.text(6, "changes")
    try:
        items = json.loads(changes)
        parsed = tuple(
            FieldChange(c["path"], c["op"], c.get("old"), c.get("new"), c["material"])
            for c in items
        )
    except (ValueError, TypeError, KeyError, RecursionError):
        raise r.fail("changes", changes, "a JSON array of field changes") from None
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


def _revocation(row: tuple[Any, ...]) -> tuple[float | None, str | None, str | None]:
    """The revocation columns of a pending row: (revoked_at, revoked_by, fingerprint), each
    `None` when the tool was never revoked."""
    r = _Row("conduit_mcp_revoked", row)
    if len(row) < 14 or row[11] is None:
        return None, None, None
    return (
        r.number(11, "revoked_at"),
        r.name(12, "approver", optional=True),
        r.text(13, "fingerprint", optional=True),
    )


def _pin(row: tuple[Any, ...]) -> Pin:
    r = _Row("conduit_mcp_pins", row)
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


def _entry(row: Sequence[Any]) -> AuditEntry:
    r = _Row("conduit_mcp_audit", (row[2], row[3], *row))
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
    )


def _require_sqlite_file(path: str) -> None:
    """Raise `FileNotFoundError` unless a sqlite database file exists at `path`.

    sqlite's `mode=rw` URI opens an existing file and never creates one, so this check creates
    nothing; other open failures (a directory, no permission) are left to the real open.
    """
    if path == ":memory:":
        return
    missing = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if not path:
        raise missing
    # Percent-encoded, so `?`, `#` and bytes that are not UTF-8 stay part of the file name.
    uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(path))) + "?mode=rw"
    try:
        sqlite3.connect(uri, uri=True).close()
    except sqlite3.Error:
        if not os.path.lexists(path):
            raise missing from None


def _require_postgres_store(location: StoreLocation, timeout: float) -> None:
    """Raise `FileNotFoundError` unless the database at `location` holds a pin store's tables.

    One short connection that only reads the catalog (`to_regclass` follows the URL's search
    path, as the store's unqualified table names do).
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return  # PostgresBackend raises the ImportError that says which extra to install
    with pg_connect(location, timeout) as conn:
        row = conn.execute("SELECT to_regclass('conduit_mcp_migrations')").fetchone()
    if row is None or row[0] is None:
        raise FileNotFoundError(errno.ENOENT, "no pin store in this database", location.display)


def redacted_location(location: str) -> str:
    """A pin store location fit to print: every form of a PostgreSQL password hidden.

    Args:
        location: a sqlite path, or a PostgreSQL location in any libpq form: a
            `postgresql://` (or `postgres://`) URL with `user:password@`, percent-escapes or
            raw `/` and `@` in the password, a `?password=` parameter, or a conninfo string
            (`host=... password=...`).

    Returns:
        The location with each password written `***` (e.g.
        `postgresql://pins:***@db/gateway`); a URL whose password libpq would read
        differently from its text is cut to `postgresql://***`. A sqlite path is unchanged.

    Total: never raises for a `str`; no connection is made.

    Spec: none (conduit-defined: the pin store is this library's); `PinStore`'s `repr`, its
    errors and the `conduit-mcp pins` commands show locations only in this form.
    """
    return StoreLocation(location).display


def _tool_fingerprint(tool: Tool) -> str:
    return tool.fingerprint if tool.fingerprint is not None else _fingerprint(tool.raw)


def _pin_key(server_id: Any, tool: Any, fingerprint: Any) -> tuple[str, str]:
    """(name, fingerprint) from either call form, with the argument checks of `approve`."""
    check_server_id(server_id)
    if isinstance(tool, Tool):
        if fingerprint is not None:
            raise TypeError("pass either a Tool, or a tool name and a fingerprint")
        if tool.server_id != server_id:
            raise ValueError("the Tool was listed by another server_id")
        name, value = tool.name, _tool_fingerprint(tool)
    elif isinstance(tool, str):
        if fingerprint is None:
            raise TypeError("a tool name needs a fingerprint")
        name, value = tool, fingerprint
    else:
        raise TypeError(f"tool must be a Tool or a str name, got {type(tool).__name__}")
    if not isinstance(value, str) or _FINGERPRINT.match(value) is None:
        raise ValueError("fingerprint must be 'jcs-sha256:' followed by 64 lowercase hex digits")
    _check_unicode(server_id, "server_id")
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
