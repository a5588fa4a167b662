"""SERVER_ID/TOOL globs of a policy, compiled to one regular expression per set of globs.

Not a public module. A glob is `SERVER/TOOL`: the first `/` separates the server id part from
the tool name part; in each part `*` matches any run of characters and `?` one character,
everything else matches itself (no character classes: a `[` is a `[`). The server part never
matches across the separator, so `files/*` is every tool of server `files` and of no other
(not of a server `files/x`). Matching is case-sensitive, as tool names and server ids are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Generic, TypeVar

T = TypeVar("T")

#: The separator between a server id and a tool name in the key a compiled glob matches: a
#: character no server id holds (`Policy.decide` refuses one that does), so the split is exact.
SEPARATOR: Final = "\x00"


def check_glob(glob: str) -> str | None:
    """Why `glob` is not a SERVER_ID/TOOL glob, or `None` when it is one."""
    if "/" not in glob:
        return f"{glob!r} is not SERVER_ID/TOOL (no '/')"
    server, tool = glob.split("/", 1)
    if not server or not tool:
        return f"{glob!r} has an empty server id or tool part (write '*' for any)"
    if SEPARATOR in glob:
        return f"{glob!r} holds U+0000"
    return None


def _part(text: str, any_run: str) -> str:
    out = []
    for char in text:
        if char == "*":
            out.append(any_run)
        elif char == "?":
            out.append("." if any_run == ".*" else "[^\\x00]")
        else:
            out.append(re.escape(char))
    return "".join(out)


def glob_regex(glob: str) -> str:
    """The regular expression (no anchors, no groups) of one checked glob, matched against
    `server_id + SEPARATOR + tool` with `re.DOTALL`."""
    server, tool = glob.split("/", 1)
    return _part(server, "[^\\x00]*") + "\\x00" + _part(tool, ".*")


class GlobSet(Generic[T]):
    """Globs, each with a tag, found by server id and tool name in few steps whatever their
    number: a glob without `*` or `?` is a dict entry; one whose server part is literal is in
    one regular expression per server id (over the tool name); one whose server part is `*`
    in one over the tool name; the rest (another wildcard in the server part) in one over
    `key(server_id, tool)`.

    `find` gives the tag of a glob that matches (exact ones first, then the server's, then
    every server's, then the rest; within one expression the first listed), or `None`.
    """

    __slots__ = ("_any_server", "_by_server", "_exact", "_wild")

    def __init__(self, globs: Sequence[tuple[T, str]]) -> None:
        self._exact: dict[tuple[str, str], T] = {}
        servers: dict[str, list[tuple[T, str]]] = {}
        wild: list[tuple[T, str]] = []
        any_server: list[tuple[T, str]] = []
        for tag, glob in globs:
            server, tool = glob.split("/", 1)
            if server.strip("*") == "":  # every server: matched on the tool name alone
                any_server.append((tag, _part(tool, ".*")))
            elif any(c in server for c in "*?"):
                wild.append((tag, glob))
            elif any(c in tool for c in "*?"):
                servers.setdefault(server, []).append((tag, tool))
            else:
                self._exact.setdefault((server, tool), tag)
        self._by_server = {
            server: _Alternation([(tag, _part(tool, ".*")) for tag, tool in tools])
            for server, tools in servers.items()
        }
        self._wild = _Alternation([(tag, glob_regex(glob)) for tag, glob in wild]) if wild else None
        self._any_server = _Alternation(any_server) if any_server else None

    def find(self, server_id: str, tool: str) -> T | None:
        """The tag of a glob matching `tool` of `server_id`, or `None`."""
        found = self._exact.get((server_id, tool))
        if found is not None:
            return found
        alternation = self._by_server.get(server_id)
        if alternation is not None:
            found = alternation.find(tool)
            if found is not None:
                return found
        if self._any_server is not None:
            found = self._any_server.find(tool)
            if found is not None:
                return found
        if self._wild is not None:
            return self._wild.find(key(server_id, tool))
        return None


class _Alternation(Generic[T]):
    """Regular expressions (no groups of their own) as one, full matches told apart by
    `lastindex`."""

    __slots__ = ("_pattern", "_tags")

    def __init__(self, parts: Sequence[tuple[T, str]]) -> None:
        self._tags = [tag for tag, _ in parts]
        alternatives = "|".join(f"({regex})" for _, regex in parts)
        self._pattern = re.compile(f"(?:{alternatives})", re.DOTALL)

    def find(self, text: str) -> T | None:
        found = self._pattern.fullmatch(text)
        if found is None:
            return None
        return self._tags[found.lastindex - 1]  # type: ignore[operator]


def key(server_id: str, tool: str) -> str:
    """What a glob with a wildcard in its server part is matched against."""
    return server_id + SEPARATOR + tool
