"""Property tests: x-mcp-header checks, `header_map`, `mcp_param_headers`, `mcp_name_header`."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.client.headers import (
    decode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
)
from tests.property.profiles import bounded
from tests.property.strategies import json_values, mutated, real_or_mutated, real_tools, texts

X = "x-mcp-header"
HEADER_REASONS = {
    "x_mcp_header_unreachable",
    "x_mcp_header_invalid_name",
    "x_mcp_header_type",
    "x_mcp_header_duplicate",
}
_NAMES = st.one_of(
    st.sampled_from(["Region", "region", "X-Id", "a.b", "", "a b", "é", "Tab\t", "Ok:", 5, None]),
    st.text(max_size=5),
)
_TYPES = st.sampled_from(["string", "integer", "boolean", "number", "array", ["string", "null"]])
_PROPERTY = st.sampled_from(["a", "b", "region", X, "n", ""])


@st.composite
def annotated_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """An object schema whose properties (up to 3 deep) carry x-mcp-header annotations, some
    valid, some not, some off the `properties` chain; mutated a third of the time."""

    def level(depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for name in draw(st.lists(_PROPERTY, max_size=3, unique=True)):
            if depth < 2 and draw(st.booleans()):
                properties[name] = {"type": "object", "properties": level(depth + 1)}
            else:
                prop: dict[str, Any] = {"type": draw(_TYPES)}
                if draw(st.booleans()):
                    prop[X] = draw(_NAMES)
                properties[name] = prop
        return properties

    schema: dict[str, Any] = {"type": "object", "properties": level(0)}
    if draw(st.integers(0, 4)) == 0:
        where = draw(st.sampled_from(["items", "anyOf", "$defs", "additionalProperties"]))
        inner = {"type": "string", X: draw(_NAMES)}
        schema[where] = [inner] if where == "anyOf" else {"d": inner} if where == "$defs" else inner
    if draw(st.integers(0, 2)) == 0:
        schema = draw(mutated(st.just(schema)))
    return schema


def _at(schema: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        schema = schema[step]
    return schema


def _expected_value(value: Any) -> str | None:
    """The header value the spec's "Value Encoding" rules give, computed independently."""
    if value is None:
        return None
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int) and abs(value) <= 2**53 - 1:
        text = str(value)
    elif isinstance(value, float) and value.is_integer() and abs(value) <= 2**53 - 1:
        text = str(int(value))
    elif isinstance(value, str):
        text = value
    else:
        return "unencodable"
    plain = all(" " <= c <= "~" for c in text) and not text.startswith(" ")
    plain = plain and not text.endswith(" ")
    plain = plain and not (text.startswith("=?base64?") and text.endswith("?="))
    if plain:
        return text
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return "unencodable"
    return "=?base64?" + base64.b64encode(raw).decode("ascii") + "?="


@bounded(90)
@given(st.one_of(annotated_schemas(), json_values(wire=False)))
def test_header_checks_agree_and_raise_only_header_errors(schema: Any) -> None:
    """Spec-mandated (2026-07-28 basic/transports "Schema Extension"): `find_invalid_x_mcp_header`
    returns `None` or an `x_mcp_header_*` error whose path ends at an annotation;
    `header_map` raises exactly that error (under `inputSchema`) or maps each header name to a
    chain of `properties` keys whose property carries it; names are unique ignoring case."""
    before = repr(schema)
    problem = find_invalid_x_mcp_header(schema)
    if problem is not None:
        assert problem.reason in HEADER_REASONS and problem.kind == "protocol"
        assert problem.path[-1] == X
        assert X in _at(schema, problem.path[:-1])
    if isinstance(schema, dict):
        tool = Tool.from_wire("s", {"name": "t", "inputSchema": schema})
        try:
            mapping = header_map(tool)
        except Error as exc:
            assert problem is not None
            assert (exc.reason, exc.path) == (problem.reason, ("inputSchema", *problem.path))
        else:
            assert problem is None
            assert len({name.lower() for name in mapping}) == len(mapping)
            for name, keys in mapping.items():
                path = tuple(step for key in keys for step in ("properties", key))
                assert _at(schema, path)[X] == name
    assert repr(schema) == before


@st.composite
def _calls(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = draw(annotated_schemas())
    arguments = draw(st.dictionaries(_PROPERTY, json_values(wire=False, max_leaves=4)))
    for key in list(arguments)[:2]:  # nested values under the chain, now and then
        if draw(st.booleans()):
            arguments[key] = {k: draw(json_values(wire=False, max_leaves=2)) for k in ("a", "b")}
    return schema, arguments


@bounded(50)
@given(_calls())
def test_mcp_param_headers_follow_the_value_encoding_rules(
    call: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Spec-mandated (2026-07-28 basic/transports "Client Behavior" and "Value Encoding"):
    one `Mcp-Param-{Name}` per annotation whose value is present (not missing, not null),
    plain when visible ASCII without edge spaces, else `=?base64?...?=`; an unencodable value
    raises `header_value_unencodable` with its path; arguments are never mutated."""
    schema, arguments = call
    if not isinstance(schema, dict):
        return
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": schema})
    try:
        mapping = header_map(tool)
    except Error:
        return
    before = repr(arguments)
    expected: dict[str, str] = {}
    failing = None
    for name, keys in mapping.items():
        node: Any = arguments
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        encoded = _expected_value(node)
        if encoded == "unencodable":
            failing = failing or keys
        elif encoded is not None:
            expected["Mcp-Param-" + name] = encoded
    try:
        headers = mcp_param_headers(mapping, arguments)
    except Error as exc:
        assert (exc.kind, exc.reason) == ("policy", "header_value_unencodable")
        assert failing is not None and exc.path == failing
    else:
        assert failing is None
        assert headers == expected
        assert mcp_param_headers(tool, arguments) == headers
    assert repr(arguments) == before


@bounded(90)
@given(st.one_of(texts(wire=False, max_size=40), st.text(max_size=40)))
def test_mcp_name_header_encodes_any_name_reversibly(name: str) -> None:
    """Spec-mandated (2026-07-28 basic/transports "Standard Request Headers", "Value
    Encoding"): the `Mcp-Name` value is ASCII and decodes back to the name; a name with a lone
    surrogate (no UTF-8 form) raises `header_value_unencodable`."""
    expected = _expected_value(name)
    try:
        value = mcp_name_header(name)
    except Error as exc:
        assert (exc.reason, expected) == ("header_value_unencodable", "unencodable")
    else:
        assert value == expected and value.isascii()
        assert decode_header_value(value) == name


@bounded(30)
@given(real_or_mutated(real_tools(), wire=False))
def test_header_functions_never_crash_on_mutated_real_tools(raw: Any) -> None:
    """conduit-defined: on any captured tool, mutated, the header functions raise nothing but
    their documented `Error`."""
    try:
        tool = Tool.from_wire("s", raw)
    except Error:
        return
    try:
        mapping = header_map(tool)
    except Error as exc:
        assert exc.reason in HEADER_REASONS
        return
    try:
        mcp_param_headers(mapping, {key[0]: "v" for key in mapping.values() if key})
    except Error as exc:
        assert exc.reason == "header_value_unencodable"
