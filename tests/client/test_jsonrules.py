"""The shared JSON rules: RFC 6901 pointers, the linked-list path, the compact serializer.

Spec-mandated: the pointer cases are RFC 6901 section 5's example document and table (the
string representations, evaluated against the document), and section 4's unescaping order.
The serializer's expected text is the standard library's `json.dumps` (another implementation).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conduit_mcp.client._jsonrules import (
    MAX_SAFE_INTEGER,
    MISSING,
    TWO_53,
    compact_json,
    escape_token,
    fragment_tokens,
    is_index_token,
    link_depth,
    link_keys,
    resolve_tokens,
    unescape_token,
)

# RFC 6901 section 5.
RFC_6901_DOC: dict[str, Any] = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        pytest.param("", RFC_6901_DOC, id="whole-document"),
        pytest.param("/foo", ["bar", "baz"], id="foo"),
        pytest.param("/foo/0", "bar", id="foo-0"),
        pytest.param("/", 0, id="empty-key"),
        pytest.param("/a~1b", 1, id="slash"),
        pytest.param("/c%d", 2, id="percent"),
        pytest.param("/e^f", 3, id="caret"),
        pytest.param("/g|h", 4, id="bar"),
        pytest.param("/i\\j", 5, id="backslash"),
        pytest.param('/k"l', 6, id="quote"),
        pytest.param("/ ", 7, id="space"),
        pytest.param("/m~0n", 8, id="tilde"),
    ],
)
def test_the_rfc_6901_examples_resolve_to_the_rfc_values(pointer: str, expected: Any) -> None:
    """Spec-mandated: RFC 6901 section 5, in the fragment form `#` + pointer (section 6)."""
    tokens = fragment_tokens("#" + pointer)
    assert tokens is not None
    assert resolve_tokens(RFC_6901_DOC, tokens) == expected


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param("#/foo/2", id="index-past-the-end"),
        pytest.param("#/foo/-", id="dash"),
        pytest.param("#/foo/¹", id="superscript-digit"),
        pytest.param("#/nope", id="absent-key"),
        pytest.param("#/foo/0/x", id="below-a-string"),
    ],
)
def test_a_pointer_to_nothing_resolves_to_missing(ref: str) -> None:
    """Spec-mandated: RFC 6901 section 4 (array-index is ASCII digits; `-` names no element)."""
    tokens = fragment_tokens(ref)
    assert tokens is not None
    assert resolve_tokens(RFC_6901_DOC, tokens) is MISSING


def test_a_present_null_is_found_and_is_not_missing() -> None:
    assert resolve_tokens({"a": None}, ("a",)) is None


def test_only_same_document_references_have_tokens() -> None:
    """conduit-defined: other documents and plain-name anchors are not resolved here."""
    assert fragment_tokens("#") == ()
    assert fragment_tokens("other.json#/a") is None
    assert fragment_tokens("#anchor") is None


def test_unescaping_replaces_tilde_one_before_tilde_zero() -> None:
    """Spec-mandated: RFC 6901 section 4: `~01` is `~1`, not `/`."""
    assert unescape_token("~01") == "~1"
    assert escape_token("~1") == "~01"
    assert escape_token("a/b~c") == "a~1b~0c"


def test_an_alias_is_tried_only_when_the_key_itself_is_absent() -> None:
    doc = {"$defs": {"x": 1}, "other": {"definitions": {"x": 2}}}
    aliases = {"definitions": "$defs"}
    assert resolve_tokens(doc, ("definitions", "x"), aliases) == 1
    assert resolve_tokens(doc, ("other", "definitions", "x"), aliases) == 2


def test_index_tokens_are_ascii_digits_only() -> None:
    assert [is_index_token(t) for t in ("0", "12", "¹", "٣", "-1", "")] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]


def test_a_link_reads_back_as_its_keys_and_counts_depth_up_to_the_limit() -> None:
    link = ((((None, "properties"), "a"), 0), "b")
    assert link_keys(link) == ("properties", "a", 0, "b")
    assert link_keys(None) == ()
    assert [link_depth(link, limit) for limit in (0, 2, 4, 10)] == [1, 3, 4, 4]


def test_the_safe_integer_bounds_are_the_ieee_754_ones() -> None:
    """Spec-mandated: RFC 7493 section 2.2: [-(2**53)+1, (2**53)-1]."""
    assert MAX_SAFE_INTEGER == 9007199254740991
    assert TWO_53 == float(2**53) and float(MAX_SAFE_INTEGER) != TWO_53


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"b": [1, 2.5, None], "a": "é\u2028"}, id="orjson"),
        pytest.param({"b": 2**70, "a": [True]}, id="big-int-fallback"),
        pytest.param({"b": "\ud800", "a": 1}, id="lone-surrogate-fallback"),
    ],
)
@pytest.mark.parametrize("sort_keys", [False, True])
def test_compact_json_is_the_standard_librarys_compact_text(value: Any, sort_keys: bool) -> None:
    expected = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    assert compact_json(value, sort_keys=sort_keys) == expected.encode("utf-8", "surrogatepass")


def test_compact_json_raises_in_the_fallback_for_nan_when_asked() -> None:
    with pytest.raises(ValueError):
        compact_json([2**70, float("nan")], allow_nan=False)
    assert compact_json([2**70, float("nan")]) == b"[1180591620717411303424,NaN]"
