"""Property tests: `fingerprint` / `canonical_json` on any value; equal iff the JSON is equal."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import rfc8785
from hypothesis import assume, given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool, canonical_json, fingerprint
from tests.property.checks import is_json_text_value, json_equal, reordered
from tests.property.profiles import bounded
from tests.property.strategies import json_values, mutated, real_or_mutated, real_tools

_FORM = re.compile(r"jcs-sha256:[0-9a-f]{64}\Z")


@bounded(70)
@given(st.one_of(json_values(wire=False), real_or_mutated(real_tools(), wire=False)))
def test_fingerprint_is_deterministic_and_raises_only_for_values_json_cannot_hold(
    value: Any,
) -> None:
    """conduit-defined (fingerprint Raises; RFC 8785 3.2.2): any value fingerprints to
    `jcs-sha256:` + 64 hex digits, the same on every call and whatever the member order, or
    raises `Error("protocol", "invalid_json")` exactly when it holds NaN, an infinity or a lone
    surrogate. Never mutated."""
    before = repr(value)
    try:
        digest = fingerprint(value)
    except Error as exc:
        assert (exc.kind, exc.reason) == ("protocol", "invalid_json")
        assert not is_json_text_value(value)
    else:
        assert is_json_text_value(value)
        assert _FORM.match(digest)
        assert fingerprint(value) == digest
        assert fingerprint(reordered(value)) == digest
        assert canonical_json(reordered(value)) == canonical_json(value)
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            if isinstance(value.get("inputSchema"), dict):
                assert fingerprint(Tool.from_wire("s", value)) == digest
    assert repr(value) == before


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    first = draw(st.one_of(json_values(wire=True), st.sampled_from(real_tools())))
    second = draw(st.one_of(mutated(st.just(first)), st.just(reordered(first))))
    return first, second


@bounded(60)
@given(_pairs())
def test_fingerprints_are_equal_exactly_when_the_json_is_equal(pair: tuple[Any, Any]) -> None:
    """conduit-defined (fingerprint: "Two definitions get the same fingerprint exactly when
    their `canonical_json` bytes are equal"; RFC 8785: member order, `1` vs `1.0` and `-0.0`
    vs `0` do not matter, anything else does): a value and a mutation of it get the same
    fingerprint iff they are equal in the JSON data model (oracle: `checks.json_equal`)."""
    first, second = pair
    assert (fingerprint(first) == fingerprint(second)) is json_equal(first, second)


@bounded(60)
@given(st.one_of(json_values(wire=True), real_or_mutated(real_tools())))
def test_canonical_json_matches_the_rfc8785_package(value: Any) -> None:
    """Spec-mandated (RFC 8785; oracle: the `rfc8785` package): byte-identical canonical form
    and hence fingerprint wherever the package accepts the value (it refuses integers beyond
    +-(2**53-1))."""
    try:
        expected = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        assume(False)
        return
    assert canonical_json(value) == expected
    assert fingerprint(value) == "jcs-sha256:" + hashlib.sha256(expected).hexdigest()
