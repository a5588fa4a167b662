"""Characters a person cannot see, and terminal controls: detection for intake, removal for models.

A tool-poisoning signature is text that a reviewer reads one way and a model another: zero-width
characters, bidi controls (Trojan Source, CVE-2021-42574), Unicode tag characters (ASCII
smuggling), variation selectors used as a byte channel, and terminal escape sequences that hide
or rewrite text on the reviewer's screen (ANSI "conceal", cursor moves, screen clears, OSC 8
hyperlinks). This module decides which code points count; intake reports them and shaping
removes them, so both agree.

The tables are data, not a hand list: `_unicode_tables` is generated from the pinned Unicode
Character Database extracts in `ucd/` (Unicode 15.0.0), so the answer does not move with the
Python's own `unicodedata` version.

- invisible: Default_Ignorable_Code_Point, plus every General_Category=Cf character except the
  Prepended_Concatenation_Marks (U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+110BD,
  U+110CD), which render visibly.
- control: General_Category=Cc except TAB, LF and CR: C0 (U+0000-001F), DEL (U+007F) and C1
  (U+0080-009F).
"""

from __future__ import annotations

import re
from typing import Final

from ._unicode_tables import CONTROL_RANGES, INVISIBLE_RANGES, UNICODE_VERSION

__all__ = [
    "UNICODE_VERSION",
    "clean_model_text",
    "find_hidden",
    "find_invisible",
    "has_hidden",
    "has_hidden_utf8",
    "has_invisible",
    "is_control",
    "is_invisible",
    "strip_controls",
    "strip_invisible",
]


def _span(low: int, high: int) -> str:
    if low == high:
        return f"\\U{low:08x}"
    return f"\\U{low:08x}-\\U{high:08x}"


def _class(*tables: tuple[tuple[int, int], ...]) -> str:
    return "[" + "".join(_span(low, high) for table in tables for low, high in table) + "]"


_INVISIBLE: Final = re.compile(_class(INVISIBLE_RANGES))
_CONTROL: Final = re.compile(_class(CONTROL_RANGES))
_HIDDEN: Final = re.compile(_class(INVISIBLE_RANGES, CONTROL_RANGES))

# Terminal escape sequences (ECMA-48 5th ed. section 5; ECMA-35 for SS2/SS3), removed whole. The
# pattern opens with the control class so `re` skips to candidates with a C-level scan; the
# look-behinds then say which control opened the match. Every sequence starts with a control,
# so after this pass no control of the table is left.
#
# - control strings: DCS (ESC P, U+0090), SOS (ESC X, U+0098), OSC (ESC ], U+009D), PM (ESC ^,
#   U+009E), APC (ESC _, U+009F): the body runs to BEL or ST (ESC \, U+009C), and stops before
#   another ESC, CAN or SUB (which cancel a sequence in a terminal) or at the end of the text.
#   OSC 8 hyperlinks and window-title sets are control strings.
# - CSI (ESC [, U+009B): parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, final byte
#   0x40-0x7E (`ESC[8m` conceal, `ESC[2J` clear, `ESC[2K` erase line, cursor moves).
# - SS2/SS3 (ESC N / ESC O, U+008E / U+008F): the shift and the one character it shifts.
# - any other escape: ESC, intermediates 0x20-0x2F, one final byte 0x30-0x7E (`ESC 7`, `ESC c`).
# - a lone ESC, and every other control of the table, alone.
#
# Each part is a greedy run of one class followed by an optional byte, so the scan is linear.
_STRING_BODY: Final = r"[^\x07\x18\x1a\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
_CSI_BODY: Final = r"[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
_ESCAPES: Final = re.compile(
    _class(CONTROL_RANGES)
    + "(?:"
    + r"(?<=\x1b)(?:[PX\]\^_]"
    + _STRING_BODY
    + r"|\["
    + _CSI_BODY
    + r"|[NO][\x20-\x7e]?|[\x20-\x2f]*[\x30-\x7e])"
    + r"|(?<=[\x90\x98\x9d\x9e\x9f])"
    + _STRING_BODY
    + r"|(?<=\x9b)"
    + _CSI_BODY
    + r"|(?<=[\x8e\x8f])[\x20-\x7e]?"
    + ")?"
)


def is_invisible(char: str) -> bool:
    """Whether one character is one this library treats as invisible.

    Args:
        char: a string of length 1.

    Returns:
        `True` for Default_Ignorable_Code_Point characters (zero-width and bidi controls,
        Unicode tag characters U+E0000-U+E0FFF, variation selectors, fillers, reserved
        ignorables) and every other format (Cf) character except the visible prepended
        concatenation marks (Unicode 15.0.0, `UNICODE_VERSION`).
    """
    return _INVISIBLE.match(char) is not None


def is_control(char: str) -> bool:
    """Whether one character is a control a model must not receive.

    Args:
        char: a string of length 1.

    Returns:
        `True` for General_Category=Cc except TAB, LF and CR: U+0000-0008, U+000B-000C,
        U+000E-001F (C0, ESC included), U+007F (DEL) and U+0080-009F (C1).
    """
    return _CONTROL.match(char) is not None


def find_invisible(text: str) -> list[tuple[int, int]]:
    """Find every invisible character in `text`.

    Args:
        text: any `str` (lone surrogates are fine: they are not invisible, just invalid).

    Returns:
        `(index, code_point)` pairs in order; `index` counts Python `str` characters
        (Unicode code points). Empty when there are none.

    Total: one linear regex scan; no recursion.
    """
    if text.isascii():  # O(1) for CPython's compact strings; no invisible character is ASCII
        return []
    return [(m.start(), ord(m.group())) for m in _INVISIBLE.finditer(text)]


def find_hidden(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Find every invisible character and every control character in `text`, in one scan.

    Args:
        text: any `str`.

    Returns:
        `(invisible, controls)`: two lists of `(index, code_point)` pairs in order (`index` in
        Python `str` characters). An escape sequence shows up as its ESC (or C1 introducer);
        its printable bytes are not listed.

    Total: one linear regex scan.
    """
    invisible: list[tuple[int, int]] = []
    controls: list[tuple[int, int]] = []
    if not has_hidden(text):  # the common case: nothing to find, at C speed
        return invisible, controls
    for match in _HIDDEN.finditer(text):
        point = ord(match.group())
        # Every control of the table is below U+00A0; no invisible character is.
        (controls if point < 0xA0 else invisible).append((match.start(), point))
    return invisible, controls


# Printable ASCII and the three layout controls: deleting these bytes from UTF-8 leaves only
# the ASCII controls and the bytes of non-ASCII characters (which never contain an ASCII byte),
# so the rest decodes to exactly the characters worth a regex scan. `bytes.translate` runs at
# memory speed; `re` needs tens of nanoseconds per character for a class this size.
_SAFE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def has_hidden(text: str) -> bool:
    """Whether `text` holds any invisible or control character.

    Args:
        text: any `str` (lone surrogates included).

    Returns:
        `True` when some character of `text` is `is_invisible` or `is_control`.

    Total: a few linear C passes; the regex runs only over the characters that are not
    printable ASCII, tab, LF or CR.
    """
    if text.isascii():
        if text.isprintable():  # short labels: cheaper than encoding
            return False
        return bool(text.encode("ascii").translate(None, _SAFE_ASCII))
    return has_hidden_utf8(text.encode("utf-8", "surrogatepass"))


def has_hidden_utf8(data: bytes) -> bool:
    """`has_hidden` on UTF-8 bytes (surrogates as `surrogatepass` writes them)."""
    rest = data.translate(None, _SAFE_ASCII)
    if not rest:
        return False
    if rest.isascii():  # only ASCII controls are left
        return True
    return _HIDDEN.search(rest.decode("utf-8", "surrogatepass")) is not None


def has_invisible(text: str) -> bool:
    """Whether `text` holds any invisible character (a single scan that stops at the first)."""
    return not text.isascii() and _INVISIBLE.search(text) is not None


def strip_invisible(text: str) -> tuple[str, int]:
    """Remove every invisible character.

    Args:
        text: any `str`.

    Returns:
        `(cleaned, removed)`: the text without them and how many were removed.
    """
    if text.isascii() or not has_hidden(text):
        return text, 0
    cleaned = _INVISIBLE.sub("", text)
    return cleaned, len(text) - len(cleaned)


def strip_controls(text: str) -> tuple[str, int]:
    """Remove terminal escape sequences whole, then every other control character.

    Args:
        text: any `str`.

    Returns:
        `(cleaned, removed)`: the text without escape sequences (CSI, OSC and the other
        control strings, SS2/SS3, any other ESC sequence, a lone ESC, in 7-bit and C1 form) and
        without C0/C1 controls and DEL; TAB, LF and CR stay. `removed` counts the characters
        removed (the printable bytes of a sequence included).

    Total: one linear regex pass.
    """
    if not has_hidden(text):
        return text, 0
    cleaned = _ESCAPES.sub("", text)
    return cleaned, len(text) - len(cleaned)


def clean_model_text(text: str) -> tuple[str, int]:
    """The text as a model may read it: no escape sequences, no controls, no invisible characters.

    Removes whole terminal escape sequences (CSI, OSC incl. OSC 8 hyperlinks, DCS, SOS, PM,
    APC, SS2/SS3, other ESC sequences, a lone ESC; 7-bit and C1 forms), then every C0/C1
    control and DEL except TAB, LF and CR, then every invisible character (`is_invisible`).
    A concealed word (`ESC[8m`) stays as plain text, so the person and the model read the same
    thing. Lone surrogates are left alone (they are not hidden, only unencodable).

    Args:
        text: any `str`.

    Returns:
        `(cleaned, removed)`: the cleaned text and how many characters were removed. The result
        holds no character for which `is_control` or `is_invisible` is true, and
        `clean_model_text(cleaned) == (cleaned, 0)`.

    Total: two linear regex passes; no recursion.

    Example:
        >>> clean_model_text("ok\\x1b[8m hidden\\x1b[0m\\u200b")
        ('ok hidden', 9)

    Spec: 2026-07-28 server/tools "Security Considerations" (clients SHOULD validate tool
    results before passing them to the LLM); conduit-defined where the spec is silent.
    """
    cleaned, controls = strip_controls(text)
    cleaned, invisible = strip_invisible(cleaned)
    return cleaned, controls + invisible
