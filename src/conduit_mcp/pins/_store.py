"""`PinStore`: approved tool definitions a team can act on, in sqlite or PostgreSQL.

Not a public module: import from `conduit_mcp.pins`. This is the front door: opening a
location (parsing it, the driver of `_database.py`, the migrations of `_migrations.py`),
closing, and the class that gathers the store's rooms, one concern each:

* `_pins.py` — the pins: `approve`, `approve_all`, `revoke`, `pin`, `pins`, `pinned`;
* `_checks.py` — listed tools against their pins: `check`, `check_page`, `check_and_pin`,
  `changes`, `diff`;
* `_pending.py` — the pending queue: `pending`;
* `_audit.py` — the audit log: `audit_log`, `audit_since`, `prune_checks`;
* `_feed.py` — the change feed: `changes_since`, `watch`;
* `_instructions.py` — servers' instructions: `check_instructions`, `approve_instructions`,
  `pending_instructions`;
* `_rejected.py` — rejected definitions: `reject`, `rejections`;
* `_servers.py` — the servers the store knows: `servers`;
* `_accounts.py` — the review console's accounts: `add_account`, `login`, `add_token`, ;
* `_policy.py` — the stored policy: `set_policy`, `policy`, `policy_history`,
  `policies_since`, `watch_policy`;
* `_calls.py` — the call audit: `record_calls`, `calls_since`, `prune_calls`.

Each room's module holds the SQL of the tables it keeps, written once for both databases.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from types import TracebackType

from ._accounts import Accounts
from ._audit import AuditLog
from ._calls import CallAudit
from ._changes import DEFAULT_COSMETIC
from ._checks import Checks
from ._database import (
    Database,
    PostgresDatabase,
    SqliteDatabase,
    require_postgres_store,
    require_sqlite_file,
)
from ._feed import ChangeFeed
from ._instructions import Instructions
from ._location import StoreLocation
from ._migrations import migrate
from ._pending import PendingQueue
from ._pins import Pins
from ._policy import PolicyRoom
from ._rejected import Rejections
from ._servers import ServerFacts


class PinStore(
    Checks,
    Pins,
    PendingQueue,
    Rejections,
    ServerFacts,
    Accounts,
    ChangeFeed,
    AuditLog,
    Instructions,
    PolicyRoom,
    CallAudit,
):
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
        self._noted: dict[str, float] = {}
        self._backend: Database
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
                require_postgres_store(parsed, timeout)
            backend: Database = PostgresDatabase(parsed, timeout)
        else:
            if not create:
                require_sqlite_file(text)
            backend = SqliteDatabase(text, timeout, create=create)
        try:
            migrate(backend)
        except BaseException:
            backend.close()
            raise
        self._backend = backend

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

    def _open(self) -> Database:
        if self._closed:
            raise ValueError("PinStore is closed")
        return self._backend


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
