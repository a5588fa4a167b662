"""The dialect table: everything that differs between the store's sqlite and PostgreSQL SQL.

Not a public module. Every statement of the pin store is written once, in the room that owns
its table (`_pins.py`, `_pending.py`, `_audit.py`, `_migrations.py`), with `?` marks and a
`{word}` wherever the two databases spell the same thing differently; `Dialect.sql` renders
it for one database (words first, then `?` -> `%s` for psycopg), once per text. The words,
and the page a lookup sends, are the only dialect code; how each driver opens a connection,
begins a transaction and takes its locks is `_database.py`.

Why a table and not SQLAlchemy Core: `import sqlalchemy.sql` alone costs 0.37 s of CPU, where
`import conduit_mcp.pins` costs 0.20 s (farm-bench, 20 runs each, median); importing both
takes 1.97 times the CPU of pins alone (0.40 s vs 0.20 s, paired runs) and 13 MiB more peak
memory (measured on a shared 2-core machine, load ~6: docs in the issue-28 report). The
statements SQLAlchemy would spell for us are a handful of words; the ones that matter for
speed (the page lookup: a `VALUES` table on sqlite, two text parameters on PostgreSQL; see
`_pins.LOOKUP`) are written by hand for each database either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

_WORD: Final = re.compile(r"\{([a-z_]+)\}")


class Dialect:
    """One database's spelling of the store's SQL. Immutable once built.

    Attributes:
        name: `"sqlite"` or `"postgresql"`.
        words: `{word}` -> its text in this dialect (see `SQLITE` and `POSTGRESQL`).
        notifies: whether a write wakes watchers itself (PostgreSQL `NOTIFY`); sqlite's
            watchers read `PRAGMA data_version`, which every commit moves.
        page: the rows of a page lookup as a `WITH page(ord, name, fingerprint)` clause, for
            a page of the given number of rows (sqlite: one `VALUES` row of marks each;
            PostgreSQL: the same text for any length).
        page_args: the page's parameters (names, fingerprints, rows to fill).
        padded: the number of rows a page of that many tools is sent as (sqlite: a few
            statement sizes per power of two; PostgreSQL: any).
    """

    __slots__ = ("_cache", "name", "notifies", "padded", "page", "page_args", "words")

    def __init__(
        self,
        name: str,
        words: Mapping[str, str],
        *,
        notifies: bool,
        page: Callable[[int], str],
        page_args: Callable[[Sequence[str], Sequence[str], int], list[Any]],
        padded: Callable[[int, int], int],
    ) -> None:
        self.name = name
        self.words = dict(words)
        self.notifies = notifies
        self.page = page
        self.page_args = page_args
        self.padded = padded
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
    and two thirds of the server's. One text for every length (a CTE that PostgreSQL 12 and
    later plans inline, as if written in the FROM clause)."""
    del rows
    return (
        "WITH page(ord, name, fingerprint) AS (SELECT p.ord - 1, p.name, p.fingerprint"
        " FROM ROWS FROM (jsonb_array_elements_text(?::jsonb),"
        " unnest(string_to_array(?, ','))) WITH ORDINALITY AS p(name, fingerprint, ord))"
    )


def _json_args(names: Sequence[str], fingerprints: Sequence[str], rows: int) -> list[Any]:
    del rows  # names are escaped: no U+0000, which jsonb cannot hold
    return [json.dumps(list(names)), ",".join(fingerprints)]


def _any_length(rows: int, most: int) -> int:
    del most
    return rows


# -- the table ----------------------------------------------------------------------------------

#: sqlite (the standard library's `sqlite3`).
SQLITE: Final = Dialect(
    "sqlite",
    {
        "real": "REAL",
        "bigint": "INTEGER",
        "audit_id": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "without_rowid": " WITHOUT ROWID",
        # Covering indexes: a page check reads the index only, never the definitions.
        "cover_fingerprint": "(server_id, name, fingerprint)",
        "cover_cosmetic": "(server_id, name, fingerprint, cosmetic_fingerprint)",
        # The lookup's plan, fixed: the covering index, joined to the page.
        "lookup_index": " INDEXED BY conduit_mcp_pins_lookup3",
        "is_not": "IS NOT",
        # `?` is a JSON array of text.
        "in_json": "IN (SELECT value FROM json_each(?))",
        "epoch_now": "(julianday('now') - 2440587.5) * 86400.0",
    },
    notifies=False,
    page=_values_page,
    page_args=_values_args,
    padded=_padded,
)

#: PostgreSQL (psycopg 3).
POSTGRESQL: Final = Dialect(
    "postgresql",
    {
        "real": "DOUBLE PRECISION",
        "bigint": "BIGINT",
        "audit_id": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "without_rowid": "",
        "cover_fingerprint": "(server_id, name) INCLUDE (fingerprint)",
        "cover_cosmetic": "(server_id, name) INCLUDE (fingerprint, cosmetic_fingerprint)",
        "lookup_index": "",
        "is_not": "IS DISTINCT FROM",
        "in_json": "IN (SELECT jsonb_array_elements_text(?::jsonb))",
        "epoch_now": "extract(epoch FROM clock_timestamp())",
    },
    notifies=True,
    page=_json_page,
    page_args=_json_args,
    padded=_any_length,
)
