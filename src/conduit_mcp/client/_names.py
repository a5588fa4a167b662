"""Tool-name checks (spec 2026-07-28 server/tools "Tool Names"): warnings, never rejections.

Not a public module: import `check_tool_name` from `conduit_mcp.client`.
"""

from __future__ import annotations

import re
from typing import Final

from . import _wire as w
from ._warnings import IntakeWarning

#: Bounds of the spec's SHOULD on name length, inclusive, in characters (Unicode code points).
NAME_MIN_LENGTH: Final = 1
NAME_MAX_LENGTH: Final = 128

# "uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-),
# and dot (.)" -- explicit ASCII ranges: `\w` and `\d` would admit non-ASCII letters and digits.
_NAME_OK: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_NAME_BAD_CHAR: Final = re.compile(r"[^A-Za-z0-9_.\-]")

_PATH: Final = (w.NAME,)
_NONE: Final[tuple[IntakeWarning, ...]] = ()


def check_tool_name(name: str) -> tuple[IntakeWarning, ...]:
    """Check a tool name against the spec's SHOULD rules; report, never reject, never rewrite.

    The name stays exactly as sent: normalizing it (case-folding, replacing characters) would
    make two distinct tools collide.

    Args:
        name: the tool's `name`, exactly as sent.

    Returns:
        A tuple of `IntakeWarning`s, path `("name",)`, in this order; empty for a conforming
        name:

        - `tool_name_length` when the name has fewer than 1 or more than 128 characters.
          Characters are Unicode code points (`len(name)`); for a name that passes the
          charset rule this equals its length in bytes and in UTF-16 units, so the choice
          only matters for names that already draw a `tool_name_charset` warning.
          `details`: `{"length", "min", "max"}`.
        - `tool_name_charset` when a character lies outside `A-Z a-z 0-9 _ - .`; reports the
          first one only. `details`: `{"index"` (code-point index), `"char"` (that
          character), `"codepoint"` (e.g. `"U+0020"`)`}`. The message names the code point,
          never the character itself (it may be invisible or a control character).

    Raises:
        TypeError: `name` is not a `str` (a caller bug: `Tool.name` is always a `str`).

    Total: one regular-expression pass, linear in `len(name)`; no size limit.

    Spec: 2026-07-28 server/tools "Tool Names": names SHOULD be between 1 and 128 characters
    in length (inclusive); A-Z, a-z, 0-9, `_`, `-` and `.` SHOULD be the only allowed
    characters; names SHOULD NOT contain spaces, commas, or other special characters.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if _NAME_OK.fullmatch(name):
        return _NONE
    found: list[IntakeWarning] = []
    length = len(name)
    if length < NAME_MIN_LENGTH or length > NAME_MAX_LENGTH:
        found.append(
            IntakeWarning(
                "tool_name_length",
                _PATH,
                f"tool name has {length} characters; the spec says it SHOULD have "
                f"{NAME_MIN_LENGTH} to {NAME_MAX_LENGTH}",
                {"length": length, "min": NAME_MIN_LENGTH, "max": NAME_MAX_LENGTH},
            )
        )
    bad = _NAME_BAD_CHAR.search(name)
    if bad is not None:
        index = bad.start()
        char = bad.group()
        codepoint = f"U+{ord(char):04X}"
        found.append(
            IntakeWarning(
                "tool_name_charset",
                _PATH,
                f"tool name has {codepoint} at index {index}, outside the characters the spec "
                "says it SHOULD use (A-Z a-z 0-9 _ - .)",
                {"index": index, "char": char, "codepoint": codepoint},
            )
        )
    return tuple(found)
