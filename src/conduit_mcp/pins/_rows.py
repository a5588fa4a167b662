"""Values in and out of the store's rows: text as stored, and typed reads of stored columns.

Not a public module. Names, server ids and approvers are stored with `\\` written `\\\\` and
U+0000 written `\\0` (PostgreSQL text cannot hold U+0000): `store_text` on the way in,
`Row.name` on the way out. `Row` reads a row column by column and refuses a value of the
wrong type (sqlite's dynamic typing lets any value into any column) with one `ValueError`
line naming the table and the column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

_FINGERPRINT = re.compile(r"jcs-sha256:[0-9a-f]{64}\Z")


def check_fingerprint(value: object) -> str:
    """`value` when it is a fingerprint: `jcs-sha256:` + 64 lowercase hex digits.

    Raises:
        ValueError: anything else.
    """
    if not isinstance(value, str) or _FINGERPRINT.match(value) is None:
        raise ValueError("fingerprint must be 'jcs-sha256:' followed by 64 lowercase hex digits")
    return value


def store_text(text: str) -> str:
    """`text` as stored: `\\` -> `\\\\`, U+0000 -> `\\0` (PostgreSQL text cannot hold U+0000)."""
    if "\\" in text or "\x00" in text:
        return text.replace("\\", "\\\\").replace("\x00", "\\0")
    return text


def load_text(text: str) -> str:
    """The text `store_text` stored as `text`."""
    if "\\" not in text:
        return text
    return re.sub(r"\\(.)", lambda m: "\x00" if m.group(1) == "0" else m.group(1), text)


def stored_names(names: list[str]) -> list[str]:
    """`store_text` of each name; one scan of the page when none needs escaping."""
    joined = "".join(names)
    if "\\" not in joined and "\x00" not in joined:
        return names
    return [store_text(name) for name in names]


def check_unicode(text: str, what: str) -> None:
    """Raise `ValueError` when `text` holds a lone surrogate (not storable as UTF-8)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{what} holds a lone surrogate") from None


def stored_approver(approver: object) -> str | None:
    """An `approver` argument as stored, or `None`.

    Raises:
        TypeError: not a `str` (nor `None`).
        ValueError: a lone surrogate.
    """
    if approver is None:
        return None
    if not isinstance(approver, str):
        raise TypeError(f"approver must be a str, got {type(approver).__name__}")
    check_unicode(approver, "approver")
    return store_text(approver)


def stored_name(name: object) -> str:
    """A tool `name` argument as stored.

    Raises:
        TypeError: not a `str`.
        ValueError: a lone surrogate.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    check_unicode(name, "name")
    return store_text(name)


def check_age(older_than: object) -> float:
    """A retention age given to a prune: a finite, non-negative number of seconds.

    Raises:
        ValueError: not a number (a bool is none), negative, NaN or infinite.
    """
    if isinstance(older_than, bool) or not isinstance(older_than, (int, float)):
        raise ValueError("older_than must be a number of seconds")
    if not math.isfinite(older_than) or older_than < 0:
        raise ValueError("older_than must be a finite, non-negative number of seconds")
    return float(older_than)


class Row:
    """Reads one stored row of `table` column by column (see the module docstring)."""

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
        return None if value is None else load_text(value)

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


def filters(server_id: str | None, name: str | None, table: str = "") -> tuple[str, list[Any]]:
    """A `WHERE` clause (or `""`) on the server id and the name, when given, and its
    arguments; `table`: the columns' prefix (`"p."`)."""
    clauses, args = [], []
    if server_id is not None:
        clauses.append(f"{table}server_id = ?")
        args.append(server_id)
    if name is not None:
        clauses.append(f"{table}name = ?")
        args.append(name)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args
