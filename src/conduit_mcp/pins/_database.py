"""The two drivers behind `PinStore`: a connection, its transactions and its locks.

Not a public module. A `Database` runs the rooms' statements (`run`, `many`: written once,
rendered by its `Dialect`) inside the transactions the rooms open: `reading` (the lock of
this connection; sqlite: one read transaction when a lookup takes several statements),
`writing` (one write transaction, serialized per server id across processes and hosts:
sqlite's database write lock; PostgreSQL: an advisory lock on the id) and `migrating`. Every
value arrives already checked and escaped (`_rows.py`) and is a bound parameter.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import threading
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final

from ._dialect import POSTGRESQL, SQLITE, Dialect
from ._location import StoreLocation

#: `PRAGMA application_id` of a sqlite pin store ("CMCP", written by migration 3): a file
#: without it (and without the store's tables) is not a pin store.
APPLICATION_ID: Final = 0x434D4350

# Any constant will do: it names the lock that serializes migrations across processes.
_PG_MIGRATION_LOCK: Final = 0x636F6E64756974  # "conduit"
# The lock that orders audit ids (see `PostgresDatabase.lock_audit`).
_PG_AUDIT_LOCK: Final = 0x636F6E6461756474  # "condaudt"


class Database(ABC):
    """One connection to a pin store, shared by threads: each call holds `_lock`, and every
    statement of a call runs on the same connection."""

    dialect: Dialect
    _conn: Any
    _lock: threading.Lock
    #: the most page rows one lookup statement carries.
    _chunk: int

    @abstractmethod
    def run(
        self, sql: str, args: Sequence[Any] | None = None, *, prepare: bool | None = None
    ) -> Any:
        """Run one statement (written with `?` marks); its cursor. `prepare=False`:
        PostgreSQL plans it for these arguments, never from a prepared generic plan."""

    @abstractmethod
    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per row, as one batch (nothing for no rows)."""

    @abstractmethod
    def reading(self, *, snapshot: bool = False) -> AbstractContextManager[None]:
        """The connection for one call's reads; `snapshot`: its statements share one read
        transaction."""

    @abstractmethod
    def writing(self, server_id: str | None) -> AbstractContextManager[None]:
        """One write transaction (all or nothing), serialized with every other writer of
        `server_id` (`None`: of no one server) in any process or host."""

    @abstractmethod
    def migrating(self) -> AbstractContextManager[None]:
        """One transaction under the lock that serializes migrations."""

    def fetch(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Every row of one read statement."""
        with self.reading():
            return list(self.run(sql, args).fetchall())

    @abstractmethod
    def lock_audit(self) -> None:
        """Called in a write transaction before its first audit row, so that audit ids
        ascend in commit order."""

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


class Room:
    """A part of `PinStore` that keeps one concern (`_pins.py`, `_checks.py`, `_pending.py`,
    `_audit.py`, `_feed.py`); it reaches the database through `_open`, which `PinStore`
    defines."""

    def _open(self) -> Database:
        raise NotImplementedError


class SqliteDatabase(Database):
    """A sqlite file or `":memory:"`; writers take the database lock (`BEGIN IMMEDIATE`)."""

    dialect = SQLITE

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
        # Bound parameters per lookup: two per tool, then the server id twice.
        getlimit = getattr(self._conn, "getlimit", None)  # Python 3.11+
        # SQLITE_LIMIT_VARIABLE_NUMBER is 9 (the constant is exported from Python 3.11 on).
        limit = getlimit(9) if getlimit else 999
        self._chunk = max(1, (min(limit, 32766) - 2) // 2)
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
        except BaseException:
            self._conn.close()
            raise

    def run(
        self, sql: str, args: Sequence[Any] | None = None, *, prepare: bool | None = None
    ) -> Any:
        del prepare  # sqlite3 caches its statements itself
        return self._conn.execute(self.dialect.sql(sql), () if args is None else args)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._conn.executemany(self.dialect.sql(sql), rows)

    @contextmanager
    def reading(self, *, snapshot: bool = False) -> Iterator[None]:
        with self._lock:
            if not snapshot:
                yield
                return
            self._conn.execute("BEGIN")
            try:
                yield
            finally:
                self._conn.execute("COMMIT")

    @contextmanager
    def writing(self, server_id: str | None) -> Iterator[None]:
        del server_id  # one writer at a time, whatever its server: the database write lock
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def migrating(self) -> Iterator[None]:
        with self.writing(None):
            yield

    def lock_audit(self) -> None:
        pass  # one writer at a time: ids are drawn in commit order already


class PostgresDatabase(Database):
    """A PostgreSQL database reached by URL (psycopg 3, one connection, autocommit).

    Writers of one server take a transaction-scoped advisory lock on its id, so the previous
    fingerprint an approval audits is exact even when two hosts approve at once; readers
    never wait (MVCC) and never see half an approval (both rows commit together). A call
    that finds the connection broken (server restart, network cut) opens a new one first; the
    call that met the break raises and is not retried (it may or may not have committed).
    """

    dialect = POSTGRESQL

    def __init__(self, location: StoreLocation, timeout: float) -> None:
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            from .._program import install_command

            raise ImportError(
                f"a postgresql:// PinStore needs psycopg 3: {install_command('postgresql')}"
            ) from exc
        self.location = location
        self.timeout = timeout
        self._conn = pg_connect(location, timeout)
        self._lock = threading.Lock()
        self._closed = False
        self._chunk = sys.maxsize  # a page is two text parameters, whatever its length

    def _live(self) -> Any:
        """The connection, reopened when the last one broke. Call with the lock held, once
        per call: every statement of a call then runs on the same connection.

        Raises:
            ValueError: the store was closed (a call that passed `PinStore`'s own check just
                before `close` took the lock: reopening then would leave a connection open
                that nothing closes).
        """
        if self._closed:
            raise ValueError("PinStore is closed")
        if self._conn.broken or self._conn.closed:
            self._conn.close()
            self._conn = pg_connect(self.location, self.timeout)
        return self._conn

    def close(self) -> None:
        """Close the connection; no call reopens it afterwards."""
        with self._lock:
            self._closed = True
            self._conn.close()

    def run(
        self, sql: str, args: Sequence[Any] | None = None, *, prepare: bool | None = None
    ) -> Any:
        return self._conn.execute(self.dialect.sql(sql), args, prepare=prepare)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:  # one pipelined batch (psycopg's executemany)
            with self._conn.cursor() as cursor:
                cursor.executemany(self.dialect.sql(sql), rows)

    @contextmanager
    def reading(self, *, snapshot: bool = False) -> Iterator[None]:
        del snapshot  # every read of a call is one statement: one snapshot
        with self._lock:
            self._live()
            yield

    @contextmanager
    def writing(self, server_id: str | None) -> Iterator[None]:
        with self._lock:
            conn = self._live()
            with conn.transaction():
                if server_id is not None:
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (server_id,)
                    )
                yield

    @contextmanager
    def migrating(self) -> Iterator[None]:
        with self._lock:
            conn = self._live()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_MIGRATION_LOCK,))
                yield

    def lock_audit(self) -> None:
        """Audit ids in commit order: every writer takes this lock right before its first
        audit row and keeps it to its commit, so an id is drawn only after every smaller one
        has committed (an identity column alone draws at INSERT time, in any order)."""
        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_AUDIT_LOCK,))


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


def require_sqlite_file(path: str) -> None:
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


def require_postgres_store(location: StoreLocation, timeout: float) -> None:
    """Raise `FileNotFoundError` unless the database at `location` holds a pin store's tables.

    One short connection that only reads the catalog (`to_regclass` follows the URL's search
    path, as the store's unqualified table names do).
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return  # PostgresDatabase raises the ImportError that says which extra to install
    with pg_connect(location, timeout) as conn:
        row = conn.execute("SELECT to_regclass('conduit_mcp_migrations')").fetchone()
    if row is None or row[0] is None:
        raise FileNotFoundError(errno.ENOENT, "no pin store in this database", location.display)
