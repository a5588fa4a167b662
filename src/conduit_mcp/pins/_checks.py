"""Checks: a listed page compared with its pins, the verdicts, and what a check writes.

Not a public module. `Checks` holds `PinStore.check`, `check_page` (one lookup per page),
`check_and_pin` (one write transaction: the automatic pins a policy allows, the pending
rows, the audit rows), `changes` and `diff`. It writes no SQL of its own: the statements are
those of the tables it touches (`_pins.py`, `_pending.py`, `_audit.py`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any, Final, Literal, NamedTuple

from ..client._errors import Error
from ..client._fingerprint import fingerprint as _fingerprint
from ..client._jcs import canonical_json
from ..client._json import parse_json
from ..client._tool import Tool, check_server_id
from ..client._versions import check_version
from . import _audit, _feed, _pending, _pins, _rejected
from ._audit import audit_row
from ._changes import FieldChange, field_changes, normalized
from ._database import Database
from ._drift import ToolDiff, diff_tools
from ._pending import PendingRow
from ._pins import Found, PinRow, Pins, approval, pin_key
from ._rows import check_unicode, store_text, stored_approver, stored_names
from ._servers import ServerFacts

PinStatus = Literal["approved", "new", "changed", "cosmetic"]
"""`PinStore.check`'s answer: the pinned definition; no pin; a material change; or a change
of cosmetic fields only (`title`, `icons`, `annotations.title` by default)."""

# Fingerprints already checked by `pin_key` (bounded; a pure function of the text).
_VALID_FINGERPRINTS: Final[set[str]] = set()
_VALID_FINGERPRINTS_MAX: Final = 100_000


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
        rejected: names whose listed definition a person rejected (`PinStore.reject`):
            never pinned automatically, never queued again; a guard blocks them.
    """

    checks: tuple[PinCheck, ...]
    pinned: frozenset[str]
    revoked: frozenset[str]
    rejected: frozenset[str] = frozenset()


class _Auto(NamedTuple):
    """Which automatic writes a check-and-pin transaction may make, and in whose name."""

    pin_new: bool
    accept_cosmetic: bool
    pin_changed: bool
    approver: str | None
    protocol_version: str | None
    #: whether a tool left unpinned goes to the pending queue (with its audit row).
    queue: bool = True


class _Page(NamedTuple):
    """A page as checked, per tool: its name, its name as stored, its fingerprint, and the
    `Tool` (`tools` is `None` when checked by name and fingerprint: no definition)."""

    names: list[str]
    stored: list[str]
    values: list[str]
    tools: list[Tool] | None

    def raw(self, index: int) -> Any:
        """The listed definition of tool `index`, or `None` when checked by name."""
        return None if self.tools is None else self.tools[index].raw


class _Writes(NamedTuple):
    """What one check-and-pin transaction writes, decided from what it read under the lock.
    Every pin write is conditional: it does nothing when the row is not as read."""

    new_pins: list[PinRow]  # inserted only when no pin and no revocation exists
    replace: list[tuple[PinRow, str]]  # (pin, the fingerprint it must still replace)
    cosmetic: list[tuple[str, str, str, str | None, float]]  # name, pinned, fp, definition, at
    pending: list[PendingRow]
    bump: list[tuple[str, str, float]]  # (name, fingerprint, at): the same pending state seen again
    unpend: list[str]  # names whose pending row is settled
    stale: list[str]  # names listed as approved (or rejected) whose pending row leaves the queue
    audit: list[tuple[tuple[Any, ...], str | None]]  # (audit row, name of the write it needs)


class Checks(Pins, ServerFacts):
    """`PinStore`'s checks of listed tools against their pins."""

    _cosmetic: frozenset[str]

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
        name, value = pin_key(server_id, tool, fingerprint)
        stored_id, page = store_text(server_id), _Page([name], [store_text(name)], [value], None)
        found = self._lookup(stored_id, page.stored, page.values)
        out = _all_approved(page.names, page.values)
        if found and audit:
            if protocol_version is not None:
                check_version(protocol_version)
            auto = _Auto(False, False, False, None, protocol_version)
            self._settle(stored_id, page, [0], found, out, auto, set(), set())
        elif found and not found[0][3]:
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
        page = _page(server_id, tools)
        if not page.names:
            return ()
        # The database compares the fingerprints and returns only the tools whose pin
        # differs (with the approved definition): the steady state moves no rows.
        stored_id = store_text(server_id)
        found = self._lookup(stored_id, page.stored, page.values)
        out = _all_approved(page.names, page.values)
        if not found:
            return tuple(out)
        if not audit:
            for i, pinned, definition, approved in found:
                if not approved:
                    out[i] = self._verdict(
                        page.names[i], page.values[i], pinned, definition, page.raw(i)
                    )
            return tuple(out)
        if protocol_version is not None:
            check_version(protocol_version)
        indexes = sorted(index for index, _, _, _ in found)
        position = {index: k for k, index in enumerate(indexes)}
        relative = [(position[i], pinned, text, approved) for i, pinned, text, approved in found]
        auto = _Auto(False, False, False, None, protocol_version)
        self._settle(stored_id, page, indexes, relative, out, auto, set(), set())
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
        auto_approver = stored_approver(approver)
        if protocol_version is not None:
            check_version(protocol_version)
        page = _page(server_id, tools)
        if not page.names:
            return PinOutcome((), frozenset(), frozenset())
        stored_id = store_text(server_id)
        found = self._lookup(stored_id, page.stored, page.values)
        self._note_listed(stored_id)
        out = _all_approved(page.names, page.values)
        if not found:
            return PinOutcome(tuple(out), frozenset(), frozenset())
        indexes = sorted(index for index, _, _, _ in found)
        revoked: set[str] = set()
        rejected: set[str] = set()
        auto = _Auto(pin_new, accept_cosmetic, pin_changed, auto_approver, protocol_version, queue)
        applied = self._settle(stored_id, page, indexes, None, out, auto, revoked, rejected)
        pinned = frozenset(page.names[i] for i in indexes if page.stored[i] in applied)
        return PinOutcome(tuple(out), pinned, frozenset(revoked), frozenset(rejected))

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
        name, value = pin_key(server_id, tool, None)
        found = self._lookup(store_text(server_id), [store_text(name)], [value])
        if not found or found[0][3]:
            return ()
        _, pinned, definition, _ = found[0]
        if pinned is None:
            whole = _normalized_or_none(tool.raw)
            return (FieldChange("", "add", None, tool.raw if whole is None else whole, True),)
        return self._explain(definition, tool.raw)

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

    # -- helpers -----------------------------------------------------------------------------

    def _lookup(self, stored_id: str, names: list[str], values: list[str]) -> list[Found]:
        """The page lookup without any lock (`_pins.lookup`): the one seam every check's
        first read goes through."""
        return _pins.lookup(self._open(), stored_id, names, values)

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
        page: _Page,
        indexes: list[int],
        found: list[Found] | None,
        out: list[PinCheck],
        auto: _Auto,
        revoked: set[str],
        rejected: set[str],
    ) -> set[str]:
        """One check-and-pin transaction over the page entries `indexes`, under the server's
        lock: look them up again (unless `found`, relative to `indexes`, is given), read their
        revocations, rejections and pending rows, decide, and write (each pin write
        conditional). Fills `out` (and `revoked`, `rejected`) from what the transaction read;
        returns the stored names whose conditional pin writes took effect.

        A tool listed with its approved definition while the queue holds a row for it (the
        server went back after a change) leaves the queue here; so does the row of a tool
        whose listed definition a person rejected (it is not queued again)."""
        db = self._open()
        sub_names = [page.stored[i] for i in indexes]
        sub_values = [page.values[i] for i in indexes]
        with db.writing(stored_id):
            if found is None:
                found = _pins.lookup_in(db, stored_id, sub_names, sub_values)
            wanted = [sub_names[k] for k, _, _, _ in found]
            was_revoked = _pins.revoked_among(db, stored_id, wanted)
            was_pending = _pending.states(db, stored_id, wanted)
            was_rejected = _rejected.rejected_among(
                db, stored_id, [(sub_names[k], sub_values[k]) for k, _, _, _ in found]
            )
            now = time.time()
            writes = _Writes([], [], [], [], [], [], [], [])
            version = auto.protocol_version
            for k, pinned, definition, approved in sorted(found):
                i = indexes[k]
                name, key, value, raw = page.names[i], page.stored[i], page.values[i], page.raw(i)
                if approved:  # the approved definition again: a pending row is stale
                    if key in was_pending:
                        _leave_queue(
                            writes, stored_id, key, value, was_pending[key], now, "approved"
                        )
                    continue
                check = self._verdict(name, value, pinned, definition, raw)
                out[i] = check
                if key in was_rejected:  # a person rejected this definition: blocked, not queued
                    rejected.add(name)
                    if key in was_pending:
                        _leave_queue(
                            writes, stored_id, key, value, was_pending[key], now, "rejected"
                        )
                    continue
                listed = _definition_or_none(raw)
                if check.status == "new" and key in was_revoked:
                    revoked.add(name)
                elif check.status == "new" and auto.pin_new:
                    row = PinRow(stored_id, key, value, listed, auto.approver, now, version)
                    writes.new_pins.append(row)
                    writes.audit.append((approval(row, None), key))
                    writes.unpend.append(key)
                    continue
                elif check.status == "cosmetic" and auto.accept_cosmetic and pinned is not None:
                    writes.cosmetic.append((key, pinned, value, listed, now))
                    accepted = audit_row(
                        now,
                        stored_id,
                        key,
                        "check",
                        outcome="cosmetic",
                        fingerprint=value,
                        previous=pinned,
                        definition=listed,
                        approver=auto.approver,
                        protocol_version=version,
                    )
                    writes.audit.append((accepted, key))
                    writes.unpend.append(key)
                    continue
                elif check.status == "changed" and auto.pin_changed and pinned is not None:
                    row = PinRow(stored_id, key, value, listed, auto.approver, now, version)
                    writes.replace.append((row, pinned))
                    writes.audit.append((approval(row, pinned), key))
                    writes.unpend.append(key)
                    continue
                # Held: one pending row per tool; one audit row per change of its state.
                if not auto.queue:
                    continue
                if was_pending.get(key) == (check.status, value):
                    writes.bump.append((key, value, now))
                    continue
                changes = _changes_json(check.changes)
                writes.pending.append(
                    PendingRow(
                        stored_id, key, check.status, value, pinned, listed, changes, now, version
                    )
                )
                held = audit_row(
                    now,
                    stored_id,
                    key,
                    "check",
                    outcome=check.status,
                    fingerprint=value,
                    previous=pinned,
                    protocol_version=version,
                )
                writes.audit.append((held, None))
            applied = _apply(db, stored_id, writes)
            if applied or writes.audit:
                _feed.notify(db)
        return applied

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


def _apply(db: Database, server_id: str, writes: _Writes) -> set[str]:
    """Write what a check-and-pin transaction decided, in the caller's transaction: the
    conditional pin writes first (their row counts say which took effect), then the pending
    rows, then the audit rows of the writes that took effect."""
    applied: set[str] = set()
    for row in writes.new_pins:
        if _pins.pin_first(db, server_id, row):
            applied.add(row.name)
    for row, expected in writes.replace:
        if _pins.replace(db, server_id, row, expected):
            applied.add(row.name)
    for name, expected, value, definition, at in writes.cosmetic:
        if _pins.accept_cosmetic(db, server_id, name, expected, value, definition, at):
            applied.add(name)
    _pending.settle(db, server_id, writes.unpend)
    _pending.settle(db, server_id, writes.stale)
    _pending.hold(db, writes.pending)
    _pending.bump(db, server_id, writes.bump)
    _audit.append(db, [row for row, needs in writes.audit if needs is None or needs in applied])
    return applied


#: Why a check takes a pending entry out of the queue (the audit row's reason).
_LEFT_QUEUE: Final = {
    "approved": "listed with its approved definition again: the pending entry left the queue",
    "rejected": "listed with a definition a person rejected: the pending entry left the queue",
}


def _leave_queue(
    writes: _Writes,
    server_id: str,
    key: str,
    listed: str,
    pending: tuple[str, str],
    at: float,
    outcome: str,
) -> None:
    """A stale pending row (`pending`: its status and fingerprint) leaves the queue: the tool
    is listed with its approved definition, or with a rejected one. One audit row says so."""
    writes.stale.append(key)
    row = audit_row(
        at,
        server_id,
        key,
        "check",
        outcome=outcome,
        fingerprint=listed,
        previous=pending[1],
        reason=_LEFT_QUEUE[outcome],
    )
    writes.audit.append((row, None))


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


def _page(server_id: str, tools: Iterable[Tool]) -> _Page:
    """The page, every tool checked as `approve` checks it."""
    check_server_id(server_id)
    check_unicode(server_id, "server_id")
    names: list[str] = []
    values: list[str] = []
    page = tools if type(tools) is list else list(tools)
    for tool in page:
        # The checks of `pin_key`, inlined: this loop is the guard's hot path.
        if type(tool) is not Tool and not isinstance(tool, Tool):
            raise TypeError(f"tools must hold Tool objects, got {type(tool).__name__}")
        if tool.server_id != server_id:
            raise ValueError("the Tool was listed by another server_id")
        name = tool.name
        value = tool.fingerprint
        if value is None:
            value = _fingerprint(tool.raw)
        if value not in _VALID_FINGERPRINTS:
            name, value = pin_key(server_id, tool, None)
            _remember_valid(value)
        elif not name.isascii():
            pin_key(server_id, tool, None)  # the lone-surrogate check
        names.append(name)
        values.append(value)
    if len(set(names)) != len(names):
        _raise_duplicate(names)
    return _Page(names, stored_names(names), values, page)


def _all_approved(names: list[str], values: list[str]) -> list[PinCheck]:
    """`PinCheck(name, "approved", value, value, ())` per tool, built by `tuple.__new__` in
    C (a third of the cost of calling `PinCheck` 1,000 times through its Python `__new__`)."""
    rows = zip(names, repeat("approved"), values, values, repeat(()))
    return list(map(tuple.__new__, repeat(PinCheck), rows))


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
