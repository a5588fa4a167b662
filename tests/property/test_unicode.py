"""Property tests: `clean_model_text` on any text."""

from __future__ import annotations

from hypothesis import given

from conduit_mcp.client._unicode import clean_model_text
from tests.property.hidden import FORBIDDEN, hostile_texts
from tests.property.profiles import bounded


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(char in it for char in short)


@bounded(200)
@given(text=hostile_texts())
def test_clean_model_text_leaves_nothing_of_the_tables_and_only_removes(text: str) -> None:
    """conduit-defined (issue 10): no character of the UCD-derived tables survives; the result
    is the input with characters removed (never added or changed), the count is exact, and
    cleaning is idempotent."""
    cleaned, removed = clean_model_text(text)
    assert not any(ord(char) in FORBIDDEN for char in cleaned)
    assert removed == len(text) - len(cleaned) >= 0
    assert _is_subsequence(cleaned, text)
    assert clean_model_text(cleaned) == (cleaned, 0)
