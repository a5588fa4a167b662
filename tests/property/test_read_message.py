"""Property tests: the stdio relay's `read_message` passes a line as written exactly when no
object in it names a member twice, whatever the line's spacing, escapes and numbers.

RFC 8259 section 4 (names SHOULD be unique; parsers differ on which one counts) and section 7
(a string's escapes, `\\u003a` among them). The oracle is the standard library's parser with
every member pair kept (`object_pairs_hook`), not the relay's own reading.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from conduit_mcp.proxy._message import read_message
from tests.property.profiles import bounded

#: Few names, so that objects often repeat one; strings rich in what a colon count could miss.
NAMES = ("a", "b", ":", "a:b")
STRINGS = st.one_of(
    st.sampled_from(["", ":", "a:b", '": "', '\\":', "\\", 'k": 1, "a', "é:", "\u2028"]),
    st.text(st.sampled_from(':"\\ab é{}[],'), max_size=8),
)
NUMBERS = st.one_of(
    st.sampled_from([2**64, 2**64 - 1, -(2**63), -(2**63) - 1, 10**19 + 1, 10**18]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _pairs_trees() -> st.SearchStrategy[Any]:
    """JSON values whose objects are lists of `(name, value)` pairs (names may repeat)."""
    leaves = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=3).map(tuple),
            st.lists(st.tuples(st.sampled_from(NAMES), children), max_size=4).map(_Object),
        ),
        max_leaves=12,
    )


class _Object(list):  # type: ignore[type-arg]
    """An object as its member pairs, in order, repeats kept."""


def _string(text: str, colon_escaped: bool, ascii_only: bool) -> str:
    written = json.dumps(text, ensure_ascii=ascii_only)
    return written.replace(":", "\\u003a") if colon_escaped else written


def _dump(value: Any, *, spaced: bool, colon_escaped: bool, ascii_only: bool) -> str:
    """`value` as JSON text, objects written with every pair (a repeated name written twice)."""
    comma, colon = (", ", ": ") if spaced else (",", ":")

    def write(item: Any) -> str:
        if isinstance(item, _Object):
            members = (
                f"{_string(name, colon_escaped, ascii_only)}{colon}{write(child)}"
                for name, child in item
            )
            return "{" + comma.join(members) + "}"
        if isinstance(item, tuple):
            return "[" + comma.join(write(child) for child in item) + "]"
        if isinstance(item, str):
            return _string(item, colon_escaped, ascii_only)
        return json.dumps(item)

    return write(value)


def _repeats(text: str) -> bool:
    """The oracle: whether any object in `text` names a member twice."""
    found = False

    def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        found = found or len({name for name, _ in members}) != len(members)
        return dict(members)

    json.loads(text, object_pairs_hook=pairs)
    return found


@bounded(200)
@example(
    result=_Object([("a", 2**64), ("b", ":")]), spaced=True, colon_escaped=False, ascii_only=True
)
@example(
    result=_Object([("a", ":"), ("b", 1), ("b", 2)]),
    spaced=True,
    colon_escaped=True,
    ascii_only=True,
)
@given(
    result=st.lists(st.tuples(st.sampled_from(NAMES), _pairs_trees()), max_size=4).map(_Object),
    spaced=st.booleans(),
    colon_escaped=st.booleans(),
    ascii_only=st.booleans(),
)
def test_a_line_passes_as_written_exactly_when_no_member_is_named_twice(
    result: _Object, spaced: bool, colon_escaped: bool, ascii_only: bool
) -> None:
    """RFC 8259 section 4: a response line passes as written (and as the standard library reads
    it) when no object names a member twice; otherwise the bytes sent name each member once,
    and the message the guard reads is the one those bytes hold."""
    body = _dump(result, spaced=spaced, colon_escaped=colon_escaped, ascii_only=ascii_only)
    comma, colon = (", ", ": ") if spaced else (",", ":")
    text = f'{{"jsonrpc"{colon}"2.0"{comma}"id"{colon}7{comma}"result"{colon}{body}}}'
    line = text.encode("utf-8") + b"\n"
    found = read_message(line)
    assert found is not None
    message, data = found
    if _repeats(text):
        assert data != line
        assert not _repeats(data.decode("utf-8"))
    elif "\u2028" not in text:  # a raw LS is sent escaped (one line to every client)
        assert data == line
        assert _exactly(message) == _exactly(json.loads(text))
    assert _exactly(message) == _exactly(json.loads(data))


def _exactly(value: Any) -> str:
    """`value` as text that tells an integer from the float nearest it."""
    return json.dumps(value, sort_keys=True)
