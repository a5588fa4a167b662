"""Hostile text for the property tests: escape sequences, controls and invisible characters.

`FORBIDDEN` is derived here from the UCD extracts in ucd/ (UAX #44 file format), not from the
library's tables: Default_Ignorable_Code_Point | Cf - Prepended_Concatenation_Mark, and Cc
except TAB, LF and CR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from hypothesis import strategies as st

from tests.property.strategies import texts

UCD = Path(__file__).resolve().parents[2] / "ucd"


def _points(file: str, value: str) -> frozenset[int]:
    points: set[int] = set()
    for line in (UCD / file).read_text(encoding="utf-8").splitlines():
        fields = [part.strip() for part in line.partition("#")[0].split(";")]
        if len(fields) == 2 and fields[1] == value:
            first, _, last = fields[0].partition("..")
            points.update(range(int(first, 16), int(last or first, 16) + 1))
    return frozenset(points)


_IGNORABLE = _points(
    "DerivedCoreProperties-Default_Ignorable_Code_Point.txt", "Default_Ignorable_Code_Point"
)
_FORMAT = _points("DerivedGeneralCategory-Cc-Cf.txt", "Cf")
_CONTROL = _points("DerivedGeneralCategory-Cc-Cf.txt", "Cc")
_MARKS = _points("PropList-Prepended_Concatenation_Mark.txt", "Prepended_Concatenation_Mark")

#: Invisible: Default_Ignorable_Code_Point | Cf - Prepended_Concatenation_Mark.
INVISIBLE: Final = (_IGNORABLE | _FORMAT) - _MARKS
#: Controls: Cc except TAB, LF, CR.
CONTROLS: Final = _CONTROL - {0x09, 0x0A, 0x0D}
#: Code points a model must never receive from shaping.
FORBIDDEN: Final = INVISIBLE | CONTROLS

#: Whole and broken terminal sequences (ECMA-48), 7-bit and C1 forms.
SEQUENCES: Final = (
    "\x1b[8m",
    "\x1b[0m",
    "\x1b[2J",
    "\x1b[38;2;1;2;3m",
    "\x1b[?25l",
    "\x1b[",
    "\x1b]8;;https://attacker.invalid/x\x07",
    "\x1b]8;;\x1b\\",
    "\x1b]0;title",
    "\x1bP+q\x1b\\",
    "\x1b_apc\x9c",
    "\x1bNx",
    "\x1bO",
    "\x1b(B",
    "\x1b7",
    "\x1b",
    "\x9b1m",
    "\x9d0;t\x07",
    "\x90q\x9c",
    "\x8e",
    "\x18",
    "\x07",
    "\x7f",
    "\x00",
    "\r",
    "\t",
    "\n",
)

_SORTED = sorted(FORBIDDEN)


def hidden_characters() -> st.SearchStrategy[str]:
    """One character of the forbidden tables (uniform over the tables)."""
    return st.sampled_from(_SORTED).map(chr)


def hostile_texts(*, max_pieces: int = 8) -> st.SearchStrategy[str]:
    """Text mixing ordinary strings, terminal sequences and forbidden characters."""
    piece = st.one_of(
        texts(wire=False, max_size=6),
        st.sampled_from(SEQUENCES),
        hidden_characters(),
        st.text(st.characters(codec="ascii"), max_size=6),
    )
    return st.lists(piece, max_size=max_pieces).map("".join)
