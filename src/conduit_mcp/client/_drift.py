"""Drift (rug-pull) detection: compare tool fingerprints, and pin approved ones in sqlite.

A server may change a tool's definition at any time (MCP 2026-07-28 server/tools
"Capabilities": the set of tools "MAY change over time"). A client that showed a person which
tools reach the model (server/tools "User Interaction Model", SHOULD) needs to notice when a
definition it approved is no longer the one being served.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Literal

from ._errors import Error
from ._fingerprint import fingerprint as _fingerprint
from ._tool import Tool, check_server_id

PinStatus = Literal["approved", "new", "changed"]
"""`PinStore.check`'s answer: the pinned fingerprint matches, no pin exists, or it differs."""

_FINGERPRINT: Final = re.compile(r"jcs-sha256:[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class ToolDiff:
    """How one server's tool set moved between a baseline and now. Immutable.

    Every field is a tuple of tool names sorted by code point (Python `str` order).

    Attributes:
        added: names present now and absent from the baseline.
        removed: names in the baseline and absent now.
        changed: names in both, with different fingerprints.
        unchanged: names in both, with equal fingerprints.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]

    @property
    def has_drift(self) -> bool:
        """`True` when anything was added, removed or changed."""
        return bool(self.added or self.removed or self.changed)


def diff_tools(
    baseline: Mapping[str, str] | Iterable[Tool], current: Mapping[str, str] | Iterable[Tool]
) -> ToolDiff:
    """Compare two fingerprinted tool sets of one server by tool name.

    Each side is either a mapping of tool name to fingerprint (e.g. `PinStore.pinned()` or a
    saved snapshot) or an iterable of `Tool`s. A `Tool`'s `fingerprint` is used when set, else
    it is computed from `raw` with `fingerprint()`. Names are compared exactly (never
    normalized). `server_id`s are not compared: pass the tools of one server on each side.

    Args:
        baseline: the tool set approved or seen before.
        current: the tool set now listed.

    Returns:
        A `ToolDiff` of sorted name tuples.

    Raises:
        Error: kind `"protocol"`, reason `"duplicate_tool_name"`, path `(index, "name")` into
            that iterable, when an iterable of `Tool`s names one tool twice (names SHOULD be
            unique within a server, and a duplicate makes "which definition?" ambiguous);
            or as `fingerprint()` for a `Tool` without a fingerprint whose `raw` is not JSON.
        TypeError: an argument is a `str`/`bytes`, a mapping with a non-`str` key or value,
            or an iterable with an element that is not a `Tool` (caller bugs).

    Total: O(n log n) in the number of tools; fingerprints are computed only where missing.

    Spec: MCP 2026-07-28 server/tools "Tool Names" (uniqueness is scoped to a single
    server: compare per server) and "Capabilities" (the tool set MAY change over time).
    """
    old = _by_name(baseline, "baseline")
    new = _by_name(current, "current")
    changed: list[str] = []
    unchanged: list[str] = []
    for name, value in new.items():
        before = old.get(name)
        if before is None:
            continue
        (unchanged if before == value else changed).append(name)
    return ToolDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(changed)),
        unchanged=tuple(sorted(unchanged)),
    )


def _by_name(tools: Mapping[str, str] | Iterable[Tool], argument: str) -> dict[str, str]:
    if isinstance(tools, (str, bytes, bytearray)):
        raise TypeError(f"{argument} must be a mapping or an iterable of Tool, not a string")
    if isinstance(tools, Mapping):
        for name, value in tools.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(f"{argument} must map str tool names to str fingerprints")
        return dict(tools)
    result: dict[str, str] = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise TypeError(f"{argument}[{index}] must be a Tool, got {type(tool).__name__}")
        name = tool.name
        if name in result:
            raise Error(
                "protocol",
                "duplicate_tool_name",
                f"tool {index} of {argument} repeats the name of an earlier tool",
                path=(index, "name"),
                details={"argument": argument},
            )
        result[name] = _tool_fingerprint(tool)
    return result


def _tool_fingerprint(tool: Tool) -> str:
    return tool.fingerprint if tool.fingerprint is not None else _fingerprint(tool.raw)


_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS conduit_mcp_pins (
    server_id   TEXT NOT NULL,
    name        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    approved_at REAL NOT NULL,
    PRIMARY KEY (server_id, name)
) WITHOUT ROWID
"""

_UPSERT: Final = """
INSERT INTO conduit_mcp_pins (server_id, name, fingerprint, approved_at) VALUES (?, ?, ?, ?)
ON CONFLICT (server_id, name) DO UPDATE
SET fingerprint = excluded.fingerprint, approved_at = excluded.approved_at
"""


class PinStore:
    """Approved tool fingerprints per (`server_id`, tool name), kept in a sqlite database.

    Trust on first use, made explicit: `approve` pins a tool's current fingerprint; `check`
    then says whether what a server lists now is that pinned definition (`"approved"`), a
    tool never approved (`"new"`) or a different definition under an approved name
    (`"changed"`). Pins are never deleted when a tool disappears from a listing, so a tool
    cannot be hidden once and come back changed without showing as `"changed"`.

    Keys are the operator-assigned `server_id` (never the server's self-reported
    `serverInfo.name`) and the tool name exactly as sent.

    Thread safety: one `PinStore` may be shared by threads; a lock serializes every call over
    its one connection. Several processes may open the same file: each call is one sqlite
    transaction, and a writer waits up to `timeout` seconds for another's lock.

    Total: each call runs one indexed query (`approve_all`, `pinned`, `diff`: one per tool);
    a fingerprint missing from a `Tool` is computed as `fingerprint()` does (any depth).
    Only parameterized SQL is used: names and ids are stored verbatim, whatever they hold.

    Spec: MCP 2026-07-28 server/tools "Tool Names" (names are unique only within a server;
    `serverInfo.name` SHOULD NOT be relied upon to tell servers apart), "Capabilities" (the
    tool set MAY change over time) and "User Interaction Model" (SHOULD make clear which tools
    are exposed to the model).
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, timeout: float = 5.0) -> None:
        """Open (creating if needed) the store at `path`.

        Args:
            path: a database file, or `":memory:"` for a store that lives as long as this
                object. The table `conduit_mcp_pins` is created if missing; other tables in
                the file are left alone.
            timeout: seconds to wait for another connection's write lock.

        Raises:
            sqlite3.Error: the file cannot be opened or is not a sqlite database.
        """
        self._lock = threading.Lock()
        self._closed = False
        self._conn = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._conn.execute(_SCHEMA)
        except BaseException:
            self._conn.close()
            raise

    # -- writing -----------------------------------------------------------------------------

    def approve(self, server_id: str, tool: Tool | str, fingerprint: str | None = None) -> str:
        """Pin a tool's fingerprint as approved, replacing any earlier pin for that name.

        Call as `approve(server_id, tool)` or `approve(server_id, name, fingerprint)`.

        Args:
            server_id: the operator-assigned id of the server (non-empty `str`).
            tool: a `Tool` of that server (its `fingerprint`, or `fingerprint(tool.raw)` when
                unset), or a tool name.
            fingerprint: with a name, the `"jcs-sha256:"` fingerprint to pin.

        Returns:
            The fingerprint now pinned.

        Raises:
            TypeError, ValueError: caller bugs: `server_id` is not a non-empty `str`; a name
                without a fingerprint or a `Tool` with one; a `Tool` of another server; a
                fingerprint not of the form `jcs-sha256:` + 64 lowercase hex digits.
            Error: as `fingerprint()`, for a `Tool` without a fingerprint whose `raw` is not
                JSON; kind `"protocol"`, reason `"invalid_json"`, path `("name",)`, when the
                tool name holds a lone surrogate (not Unicode text, cannot be stored).
            ValueError: the store is closed.
            sqlite3.Error: the database cannot be written.
        """
        name, value = _pin_key(server_id, tool, fingerprint)
        with self._lock:
            self._open().execute(_UPSERT, (server_id, name, value, time.time()))
        return value

    def approve_all(self, server_id: str, tools: Iterable[Tool]) -> None:
        """Pin every tool in `tools` (one transaction: all or none).

        Args:
            server_id: the operator-assigned id of the server.
            tools: `Tool`s of that server.

        Raises:
            Error: kind `"protocol"`, reason `"duplicate_tool_name"`, path `(index, "name")`,
                when two tools share a name (which definition was approved would be ambiguous).
            TypeError, ValueError, Error: as `approve`, for any element (nothing is pinned).
            sqlite3.Error: the database cannot be written (nothing is pinned).
        """
        rows: dict[str, tuple[str, str, str, float]] = {}
        now = time.time()
        for index, tool in enumerate(tools):
            if not isinstance(tool, Tool):
                raise TypeError(f"tools must hold Tool objects, got {type(tool).__name__}")
            name, value = _pin_key(server_id, tool, None)
            if name in rows:
                raise Error(
                    "protocol",
                    "duplicate_tool_name",
                    f"tool {index} repeats the name of an earlier tool",
                    path=(index, "name"),
                )
            rows[name] = (server_id, name, value, now)
        with self._lock:
            conn = self._open()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_UPSERT, rows.values())
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- reading -----------------------------------------------------------------------------

    def check(self, server_id: str, tool: Tool | str, fingerprint: str | None = None) -> PinStatus:
        """Compare a tool with its pin.

        Call as `check(server_id, tool)` or `check(server_id, name, fingerprint)`.

        Args:
            server_id: the operator-assigned id of the server.
            tool: a `Tool` of that server, or a tool name.
            fingerprint: with a name, its current fingerprint.

        Returns:
            `"approved"` (pinned with this fingerprint), `"new"` (never approved under this
            server and name) or `"changed"` (approved with a different fingerprint).

        Raises:
            TypeError, ValueError, Error: as `approve`.
            ValueError: the store is closed.
            sqlite3.Error: the database cannot be read.
        """
        name, value = _pin_key(server_id, tool, fingerprint)
        with self._lock:
            row = (
                self._open()
                .execute(
                    "SELECT fingerprint FROM conduit_mcp_pins WHERE server_id = ? AND name = ?",
                    (server_id, name),
                )
                .fetchone()
            )
        if row is None:
            return "new"
        return "approved" if row[0] == value else "changed"

    def pinned(self, server_id: str) -> dict[str, str]:
        """Every pin of one server, including tools it no longer lists.

        Args:
            server_id: the operator-assigned id of the server.

        Returns:
            Tool name -> pinned fingerprint; a baseline for `diff_tools`.

        Raises:
            TypeError, ValueError: `server_id` is not a non-empty `str`.
            ValueError: the store is closed.
            sqlite3.Error: the database cannot be read.
        """
        check_server_id(server_id)
        with self._lock:
            rows = (
                self._open()
                .execute(
                    "SELECT name, fingerprint FROM conduit_mcp_pins WHERE server_id = ?",
                    (server_id,),
                )
                .fetchall()
            )
        return {str(name): str(value) for name, value in rows}

    def diff(self, server_id: str, current: Mapping[str, str] | Iterable[Tool]) -> ToolDiff:
        """`diff_tools(self.pinned(server_id), current)`.

        `added` are tools never approved, `changed` approved names whose definition differs
        (including tools that disappeared and came back different), `removed` pinned tools
        not listed now (their pins stay).

        Raises:
            As `pinned` and `diff_tools`.
        """
        return diff_tools(self.pinned(server_id), current)

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection. Idempotent; later calls other than `close` raise
        `ValueError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> PinStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise ValueError("PinStore is closed")
        return self._conn

    def __repr__(self) -> str:
        return f"PinStore(closed={self._closed})"


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
    if not server_id.isascii():
        try:
            server_id.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("server_id holds a lone surrogate") from None
    if not name.isascii():
        try:
            name.encode("utf-8")  # sqlite stores UTF-8; a JSON parser may hand over "\ud800"
        except UnicodeEncodeError:
            raise Error(
                "protocol",
                "invalid_json",
                "$.name holds a lone surrogate, which is not Unicode text",
                path=("name",),
                details={"expected": "valid Unicode", "got": "lone surrogate"},
            ) from None
    return name, value
