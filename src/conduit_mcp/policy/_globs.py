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
from typing import Final

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


def compile_globs(globs: Sequence[tuple[int, str]]) -> re.Pattern[str] | None:
    """One pattern over `(tag, glob)` pairs: a full match's `lastindex` is the position of the
    first glob that matched (1-based), so the caller maps it back to its tag. `None` for no
    globs."""
    if not globs:
        return None
    alternatives = "|".join(f"({glob_regex(glob)})" for _, glob in globs)
    return re.compile(f"(?:{alternatives})", re.DOTALL)


def key(server_id: str, tool: str) -> str:
    """What a compiled glob matches for `tool` of `server_id`."""
    return server_id + SEPARATOR + tool
