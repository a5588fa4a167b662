"""Property tests: the JSON reader of `conduit-mcp wrap` (wrap/_jsonspan.py), against the
standard library's `json` as the oracle.

The reader takes JSONC (comments, trailing commas) and says where the first of each is; a file
for a client that reads strict JSON is refused when it has either. So on any text: the reader
accepts it with neither exactly when `json.loads` accepts it (NaN and Infinity aside: not
RFC 8259), with the same value; it never raises anything but its syntax error; and the span
of each member is that member's own text.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from conduit_mcp.wrap._jsonspan import JsonSyntaxError, parse
from tests.property.checks import same
from tests.property.profiles import bounded
from tests.property.strategies import corrupted, json_values


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _dumped(value: Any) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


texts = st.one_of(
    corrupted(),
    st.binary(max_size=64),
    json_values().map(_dumped),
    st.text(alphabet='{}[],:"/*\n 0123456789-.eEtruefalsn\u0663\ufeff', max_size=40).map(
        str.encode
    ),
)


def _stdlib(text: str) -> tuple[str, Any]:
    try:
        return "value", json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return "error", None


def _reader(text: str) -> tuple[str, Any]:
    try:
        document = parse(text)
    except JsonSyntaxError:
        return "error", None
    if document.comment is not None or document.trailing_comma is not None:
        return "jsonc", document
    return "value", document.root.value


@bounded(200)
@given(texts)
@example("1\u0663".encode())  # an Arabic-Indic digit: `\d` in a regex takes it, JSON does not
@example(b"[1,]")
@example(b'{"a": 1 /* c */}')
@example(b"9" * 5000)  # more digits than Python converts to an int
@example(b"[" * 100_000 + b"]" * 100_000)
@example("\ufeff{}".encode())  # a byte order mark: JSON.parse refuses it too
def test_the_strict_verdict_is_the_standard_librarys(data: bytes) -> None:
    """Spec-mandated (RFC 8259): accepted as JSON (no comment, no trailing comma) exactly when
    `json.loads` accepts the text, with an equal value; JSONC's extensions are found only in
    text the standard library refuses."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    expected, got = _stdlib(text), _reader(text)
    if got[0] == "jsonc":
        assert expected[0] == "error"
        return
    assert got[0] == expected[0]
    assert same(got[1], expected[1])


@bounded(100)
@given(json_values().filter(lambda v: isinstance(v, dict)).map(_dumped))
def test_each_members_span_is_its_own_text(data: bytes) -> None:
    """conduit-defined (the edit in place replaces a member's span): every member's span,
    read alone, is the member's value."""
    text = data.decode("utf-8", "surrogatepass")
    root = parse(text).root
    for key, node in root.members.items():
        assert same(json.loads(text[node.start : node.end]), root.value[key])
