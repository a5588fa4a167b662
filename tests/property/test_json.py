"""Property tests: `parse_json` (orjson and the exact parser agree; round trips; max_depth)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, parse_json
from conduit_mcp.client._json import _has_long_digits, _parse_exact
from tests.property.checks import same
from tests.property.profiles import bounded
from tests.property.strategies import corrupted, json_values

texts = st.one_of(corrupted(), st.binary(max_size=64))


def _outcome(parse: Any, data: Any) -> tuple[str, Any]:
    try:
        return "value", parse(data)
    except (Error, orjson.JSONDecodeError):
        return "error", None


@bounded(200)
@given(texts)
def test_the_exact_parser_agrees_with_orjson_on_any_bytes(data: bytes) -> None:
    """conduit-defined (parse_json: "both agree on every other input"): where orjson is exact
    (no run of 20 digits), the exact parser accepts the same texts with the same value, and
    refuses the same texts."""
    if _has_long_digits(data):
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(Error):
            parse_json(data)
        return
    expected = _outcome(orjson.loads, data)
    got = _outcome(lambda t: _parse_exact(t, 1024), text)
    assert got[0] == expected[0]
    assert same(got[1], expected[1])


@bounded(200)
@given(texts)
def test_parse_json_raises_only_invalid_json_or_limit_exceeded(data: bytes) -> None:
    """conduit-defined (parse_json Raises): any bytes parse or raise `Error` with reason
    `invalid_json` (kind protocol) or `limit_exceeded` (kind policy); bytes and str agree."""
    try:
        value = parse_json(data)
    except Error as exc:
        assert (exc.kind, exc.reason) in {
            ("protocol", "invalid_json"),
            ("policy", "limit_exceeded"),
        }
    else:
        assert same(parse_json(data.decode("utf-8")), value)


@bounded(200)
@given(json_values(wire=True))
def test_parse_json_round_trips_every_json_value_exactly(value: Any) -> None:
    """Spec-mandated (RFC 8259 section 6, numbers; parse_json: "`2**70` arrives exact"): the
    text of any JSON value parses back to the same value, integers of any size exact, `-0.0`
    with its sign, from bytes, str, bytearray and memoryview alike."""
    text = json.dumps(value)
    if any(abs(n) > 10**4000 for n in _ints(value)):
        return  # beyond the interpreter's digit limit: tested in tests/limits
    for data in (text, text.encode(), bytearray(text.encode()), memoryview(text.encode())):
        assert same(parse_json(data), value)


def _ints(value: Any) -> list[int]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if type(item) is int:
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


@bounded(100)
@given(
    depth=st.integers(1, 1100),
    limit=st.integers(1, 1024),
    opener=st.sampled_from(("[", '{"k":')),
    long_digits=st.booleans(),
)
def test_parse_json_refuses_nesting_beyond_max_depth_with_the_path(
    depth: int, limit: int, opener: str, long_digits: bool
) -> None:
    """conduit-defined (parse_json `max_depth`, RFC 8259 section 9 "may set limits on the
    maximum depth of nesting"): `depth` nested containers parse iff depth <= max_depth; else
    `limit_exceeded` whose path leads to the first container too deep, whichever parser runs."""
    closer = "]" if opener == "[" else "}"
    leaf = "12345678901234567890123" if long_digits else "1"
    text = opener * depth + leaf + closer * depth
    step: Any = 0 if opener == "[" else "k"
    if depth <= limit:
        value = parse_json(text, max_depth=limit)
        for _ in range(depth):
            value = value[step]
        assert value == int(leaf)
    else:
        with pytest.raises(Error) as info:
            parse_json(text, max_depth=limit)
        assert (info.value.kind, info.value.reason) == ("policy", "limit_exceeded")
        assert info.value.path == (step,) * limit
        assert info.value.details["limit"] == limit


def _depth(value: Any) -> int:
    # Containers count one level each; scalars none (`[[1]]` is 2 deep).
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            level += 1
            deepest = max(deepest, level)
            stack.extend(
                (child, level) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


@bounded(100)
@given(value=json_values(wire=True), limit=st.integers(1, 6))
def test_parse_json_accepts_a_value_exactly_when_it_nests_within_max_depth(
    value: Any, limit: int
) -> None:
    """conduit-defined (parse_json `max_depth`): any JSON value parses under `max_depth=d`
    iff its nesting depth is at most d; brackets inside strings do not count."""
    text = json.dumps(value)
    if _depth(value) <= limit:
        assert same(parse_json(text, max_depth=limit), value)
    else:
        with pytest.raises(Error) as info:
            parse_json(text, max_depth=limit)
        assert info.value.reason == "limit_exceeded" and len(info.value.path) == limit
