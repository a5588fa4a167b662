"""Characters a person cannot see: detection for intake warnings, removal for shaped results.

A tool-poisoning signature is text that a reviewer reads one way and a model another: zero-width
characters, bidi controls (Trojan Source, CVE-2021-42574), Unicode tag characters (ASCII
smuggling) and variation selectors used as a byte channel. This module decides which code
points count; intake reports them and shaping removes them, so both agree.
"""

from __future__ import annotations

import re
from typing import Final

# A literal table, not `unicodedata.category(...) == "Cf"`: the answer must not move with the
# Python's Unicode version. It holds every Cf character of Unicode 14 except the prepended
# concatenation marks (U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+110BD, U+110CD),
# which render visibly, plus invisible characters of other categories (fillers, variation
# selectors, the combining grapheme joiner).
_RANGES: Final = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels (invisible)
    (0x180B, 0x180F),  # Mongolian free variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, ZWNJ, ZWJ, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors 1-16
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation controls
    (0x13430, 0x13438),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol formatting controls
    (0xE0000, 0xE007F),  # Unicode tag characters
    (0xE0100, 0xE01EF),  # variation selectors 17-256
)


def _build_class() -> str:
    return "[" + "".join(_span(low, high) for low, high in _RANGES) + "]"


def _span(low: int, high: int) -> str:
    if low == high:
        return f"\\U{low:08x}"
    return f"\\U{low:08x}-\\U{high:08x}"


_INVISIBLE: Final = re.compile(_build_class())


def is_invisible(char: str) -> bool:
    """Whether one character is one this library treats as invisible.

    Args:
        char: a string of length 1.

    Returns:
        `True` for zero-width and bidi controls, Unicode tag characters (U+E0000–U+E007F),
        variation selectors, fillers and every other format (Cf) character.
    """
    return _INVISIBLE.match(char) is not None


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
    return _INVISIBLE.subn("", text)
