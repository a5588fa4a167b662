"""`coerce_id` reads a request id as the SDK correlates it: `int()` of a string when it
parses, else the string. Oracle: CPython's `int()` itself, on the spellings the SDK accepts
and on every code point as an id's first character (the letter shortcut never decides
differently from `int()`)."""

from __future__ import annotations

import sys

import pytest

from conduit_mcp.guard._state import coerce_id


def _oracle(value: str) -> object:
    try:
        return int(value)
    except ValueError:
        return value


@pytest.mark.parametrize(
    "value", ["conduit-7", " 5", "+5", "-5", "\u0665", "0005", "1_0", "", "x1", "\u4e94", "1e3"]
)
def test_a_string_id_is_what_int_makes_of_it(value: str) -> None:
    assert coerce_id(value) == _oracle(value)


def test_every_first_character_decides_as_int_does() -> None:
    differ = [
        cp for cp in range(sys.maxunicode + 1) if coerce_id(chr(cp) + "1") != _oracle(chr(cp) + "1")
    ]
    assert differ == []


def test_other_ids_are_kept() -> None:
    assert coerce_id(5) == 5 and coerce_id(None) is None
