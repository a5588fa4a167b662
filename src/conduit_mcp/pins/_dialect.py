"""The dialect table: everything that differs between the store's sqlite and PostgreSQL SQL.

Not a public module. Every statement of the pin store is written once, in the room that owns
its table (`_pins.py`, `_pending.py`, `_audit.py`, `_migrations.py`), with `?` marks and a
`{word}` wherever the two databases spell the same thing differently; `Dialect.sql` renders
it for one database (the words of `WORDS`, then `?` -> `%s` for psycopg), once per text.
`WORDS` and the two page forms (how a page lookup sends its tools) are the only dialect code;
how each driver opens a connection, begins a transaction and takes its locks is
`_database.py`, and the few migration steps whose SQL differs whole are spelled per dialect
in `_migrations.py`.

Why a table and not SQLAlchemy Core: its import would more than double the cost of importing
this face. `farm-bench -n 20 --vs ".venv/bin/python -c 'import conduit_mcp.pins'" --
.venv/bin/python -c "import conduit_mcp.pins, sqlalchemy.sql"` (SQLAlchemy 2.1.9 on the path):
median CPU 0.402 s against 0.197 s (x1.97 paired), peak memory 40.2 MiB against 27.1 MiB
(a shared 2-core machine, load ~6). What SQLAlchemy would spell for us is the handful of
words below; the statement that matters for speed, the page lookup, is shaped by hand for
each database either way (`_pins._LOOKUP`, and the page forms here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

_WORD: Final = re.compile(r"\{([a-z_]+)\}")

#: The dialects, in the order of `WORDS`' columns.
NAMES: Final = ("sqlite", "postgresql")

#: Each word, as (sqlite, PostgreSQL) spell it.
WORDS: Final[dict[str, tuple[str, str]]] = {
    "real": ("REAL", "DOUBLE PRECISION"),
    "bigint": ("INTEGER", "BIGINT"),
    "audit_id": (
        "INTEGER PRIMARY KEY AUTOINCREMENT",
        "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    ),
    "without_rowid": (" WITHOUT ROWID", ""),
    # Covering indexes: a page check reads the index only, never the definitions.
    "cover_fingerprint": (
        "(server_id, name, fingerprint)",
        "(server_id, name) INCLUDE (fingerprint)",
    ),
    "cover_cosmetic": (
        "(server_id, name, fingerprint, cosmetic_fingerprint)",
        "(server_id, name) INCLUDE (fingerprint, cosmetic_fingerprint)",
    ),
    # sqlite: the lookup's plan, fixed (the covering index, joined to the page).
    "lookup_index": (" INDEXED BY conduit_mcp_pins_lookup3", ""),
    "is_not": ("IS NOT", "IS DISTINCT FROM"),
    # Membership in a JSON array of text (one `?`).
    "in_json": (
        "IN (SELECT value FROM json_each(?))",
        "IN (SELECT jsonb_array_elements_text(?::jsonb))",
    ),
    # Now, in seconds since the Unix epoch, read by the database.
    "epoch_now": (
        "(julianday('now') - 2440587.5) * 86400.0",
        "extract(epoch FROM clock_timestamp())",
    ),
}


class PageForm(NamedTuple):
    """How a page lookup sends its tools to one database.

    Attributes:
        sql: the page as a `WITH page(ord, name, fingerprint)` clause, for a page sent as the
            given number of rows (`ord` counts from 0).
        args: its parameters: (names, fingerprints, rows sent).
        padded: the number of rows a page of that many tools is sent as, given the most one
            statement carries.
    """

    sql: Callable[[int], str]
    args: Callable[[Sequence[str], Sequence[str], int], list[Any]]
    padded: Callable[[int, int], int]


class Dialect:
    """One database's spelling of the store's SQL. Immutable once built.

    Attributes:
        name: `"sqlite"` or `"postgresql"` (one of `NAMES`).
        words: `{word}` -> its text in this dialect (its column of `WORDS`).
        notifies: whether a write wakes watchers itself (PostgreSQL `NOTIFY`); sqlite's
            watchers read `PRAGMA data_version`, which every commit moves.
        page: how a page lookup sends its tools (`PageForm`).
    """

    __slots__ = ("_cache", "name", "notifies", "page", "words")

    def __init__(self, name: str, *, notifies: bool, page: PageForm) -> None:
        column = NAMES.index(name)
        self.name = name
        self.words = {word: spelled[column] for word, spelled in WORDS.items()}
        self.notifies = notifies
        self.page = page
        self._cache: dict[str, str] = {}

    def sql(self, text: str) -> str:
        """`text` in this dialect: each `{word}` replaced, then (PostgreSQL) `?` -> `%s`.

        Raises:
            KeyError: a `{word}` the table does not hold (a statement's bug).
            ValueError: a statement holding `%` (psycopg would read it as a mark).
        """
        rendered = self._cache.get(text)
        if rendered is None:
            rendered = _WORD.sub(lambda m: self.words[m.group(1)], text)
            if self.name == "postgresql":
                if "%" in rendered:
                    raise ValueError("a statement holds '%': write it without")
                rendered = rendered.replace("?", "%s")
            self._cache[text] = rendered
        return rendered

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"


# -- the page a lookup sends --------------------------------------------------------------------


def _values_page(rows: int) -> str:
    """sqlite: the page is a `VALUES` table of `rows` rows, two marks each (name,
    fingerprint); measured on a 1,000-tool page, 0.7 ms of CPU where an `IN` list returning
    every fingerprint took 1.9 ms. Padding rows (NULL, NULL) never match."""
    values = ",".join(f"({i},?,?)" for i in range(rows))
    return f"WITH page(ord, name, fingerprint) AS (VALUES {values})"


def _values_args(names: Sequence[str], fingerprints: Sequence[str], rows: int) -> list[Any]:
    args: list[Any] = [None] * (2 * rows)
    args[0 : 2 * len(names) : 2] = names
    args[1 : 2 * len(names) : 2] = fingerprints
    return args


def _padded(rows: int, most: int) -> int:
    """`rows` rounded up to one of a few sizes per power of two (at most 25 % more), so that
    pages of varying length reuse a few cached statements (preparing a 1,000-row lookup
    costs more than running it)."""
    step = 1 << max(0, rows.bit_length() - 3)
    return min(most, -(-rows // step) * step)


def _json_page(rows: int) -> str:
    """PostgreSQL: the page travels as two text parameters, the names as a JSON array (any
    text survives) and the fingerprints joined by "," (each is `jcs-sha256:` + 64 hex digits,
    checked before it gets here). Measured on a 1,000-tool page against one JSON array of
    [name, fingerprint] pairs: half the client CPU (JSON-encoding the fingerprints dominated)
    and two thirds of the server's. One text for every length; PostgreSQL (12 and later)
    plans the clause inline, as if written in the FROM clause (the same plan, node for node)."""
    del rows
    return (
        "WITH page(ord, name, fingerprint) AS (SELECT page.ord - 1, page.name, page.fingerprint"
        " FROM ROWS FROM (jsonb_array_elements_text(?::jsonb),"
        " unnest(string_to_array(?, ','))) WITH ORDINALITY AS page(name, fingerprint, ord))"
    )


def _json_args(names: Sequence[str], fingerprints: Sequence[str], rows: int) -> list[Any]:
    del rows  # names are escaped: no U+0000, which jsonb cannot hold
    return [json.dumps(list(names)), ",".join(fingerprints)]


def _any_length(rows: int, most: int) -> int:
    del most
    return rows


# -- the dialects -------------------------------------------------------------------------------

#: sqlite (the standard library's `sqlite3`).
SQLITE: Final = Dialect(
    "sqlite", notifies=False, page=PageForm(_values_page, _values_args, _padded)
)

#: PostgreSQL (psycopg 3).
POSTGRESQL: Final = Dialect(
    "postgresql", notifies=True, page=PageForm(_json_page, _json_args, _any_length)
)
