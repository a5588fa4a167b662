"""The long-digit scan of `parse_json` (translate + substring) against its regex oracle."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import parse_json
from conduit_mcp.client._json import _has_long_digits
from tests.property.profiles import bounded

# The oracle: a regular expression (ASCII digits only in str mode). 20 digits may exceed u64;
# '-' and 19 digits may be below i64's minimum, -9223372036854775808.
_ORACLE = re.compile(r"[0-9]{20}|-[0-9]{19}")

# Digits dominate so that runs of 19, 20 and 21 are common; the rest are look-alikes (full-width
# and Arabic-Indic digits are not ASCII digits), multi-byte characters and a lone surrogate.
_ALPHABET = st.sampled_from(
    list("0123456789") * 6 + list('--- .e"\uff10\u0660\u00e9\U0001f600\ud800')
)


@bounded(200)
@given(st.lists(_ALPHABET, max_size=80).map("".join))
def test_long_digit_scan_agrees_with_the_regex_on_every_input_type(text: str) -> None:
    """conduit-defined: the fast path answers as the regex `[0-9]{20}|-[0-9]{19}`, for str,
    bytes, bytearray and memoryview alike (in UTF-8, bytes 0x2D and 0x30-0x39 are only ever
    '-' and ASCII digits)."""
    expected = _ORACLE.search(text) is not None
    encoded = text.encode("utf-8", "surrogatepass")
    assert _has_long_digits(text) is expected
    assert _has_long_digits(encoded) is expected
    assert _has_long_digits(bytearray(encoded)) is expected
    assert _has_long_digits(memoryview(encoded)) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", False),
        ("1" * 19, False),
        ("1" * 20, True),
        ("x" + "9" * 21 + "x", True),
        ("1234567890 1234567890", False),
        ("-" + "1" * 18, False),
        ("-" + "1" * 19, True),
        ("-" + "1" * 18 + "-1", False),
        ("\uff11" * 25, False),  # full-width digits are not ASCII digits
    ],
)
def test_long_digit_scan_literal_table(text: str, expected: bool) -> None:
    """conduit-defined: a run of 20 ASCII digits or a '-' and 19, and nothing else, sends the
    text to the standard library."""
    assert _has_long_digits(text) is expected
    assert _has_long_digits(text.encode()) is expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"[18446744073709551616]", [2**64]),  # beyond u64: orjson would give a float
        (b"[-9223372036854775809]", [-(2**63) - 1]),  # below i64: 19 digits, still exact
        (b"[-9223372036854775808]", [-(2**63)]),
        (b"[-9999999999999999999]", [-9999999999999999999]),
        (b"[9223372036854775807]", [2**63 - 1]),  # 19 digits: orjson, exact
        (b'{"id": "12345678901234567890", "n": 1.5}', {"id": "12345678901234567890", "n": 1.5}),
        ("[123456789012345678901234567890]", [123456789012345678901234567890]),
    ],
)
def test_integers_beyond_64_bits_arrive_exact(data: bytes | str, expected: object) -> None:
    """Spec-mandated (RFC 8259 section 6: numbers are digit strings; an implementation that
    reads them must not silently change an integer's value): values worked out by hand."""
    got = parse_json(data)
    assert repr(got) == repr(expected)  # repr tells an exact int from a float of its value
