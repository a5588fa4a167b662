"""canonical_json (RFC 8785) and fingerprint: exact bytes, the fast path, errors, the corpus."""

from __future__ import annotations

import copy
import hashlib
import json
import struct
import sys
from collections import OrderedDict
from decimal import Decimal
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import FINGERPRINT_PREFIX, Error, Tool, canonical_json, fingerprint
from conduit_mcp.client._jcs import _canonical_fast, _canonical_slow
from tests.corpus import all_tools, cases
from tests.property.profiles import bounded

SAFE = 2**53 - 1


def sha(data: bytes) -> str:
    return "jcs-sha256:" + hashlib.sha256(data).hexdigest()


def from_bits(bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return value


# -- RFC 8785 literal vectors ---------------------------------------------------------------

# RFC 8785 Appendix B "Number Serialization Samples" (IEEE 754 bits -> JSON text), finite rows.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B, ids=[b for b, _ in APPENDIX_B])
def test_numbers_serialize_as_rfc8785_appendix_b(bits: str, expected: str) -> None:
    """Spec-mandated (RFC 8785 3.2.2.3 "Serialization of Numbers", Appendix B samples)."""
    number = from_bits(bits)
    assert canonical_json(number) == expected.encode()
    assert canonical_json([number]) == f"[{expected}]".encode()
    assert canonical_json({"n": number}) == f'{{"n":{expected}}}'.encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_nan_and_infinity_are_rejected_with_a_path(bits: str) -> None:
    """Spec-mandated (RFC 8785 3.2.2.3: NaN and Infinity have no JSON form, "MUST cause an
    error")."""
    number = from_bits(bits)
    for value, path in [
        (number, ()),
        ([1, number], (1,)),
        ({"a": {"b": [number]}}, ("a", "b", 0)),
    ]:
        with pytest.raises(Error) as info:
            canonical_json(value)
        assert (info.value.kind, info.value.reason, info.value.path) == (
            "protocol",
            "invalid_json",
            path,
        )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(1.0, "1", id="integral-float"),
        pytest.param(-0.0, "0", id="minus-zero"),
        pytest.param(1e16, "10000000000000000", id="1e16"),
        pytest.param(1e20, "100000000000000000000", id="1e20"),
        pytest.param(1e21, "1e+21", id="1e21"),
        pytest.param(1e-6, "0.000001", id="1e-6"),
        pytest.param(1e-7, "1e-7", id="1e-7"),
        pytest.param(1.5e-7, "1.5e-7", id="1.5e-7"),
        pytest.param(0.1, "0.1", id="0.1"),
        pytest.param(123.456, "123.456", id="plain-fraction"),
        pytest.param(-2.5e300, "-2.5e+300", id="big-negative"),
        pytest.param(4.5, "4.5", id="4.50"),
        pytest.param(2e-3, "0.002", id="2e-3"),
        pytest.param(1e30, "1e+30", id="1E30"),
    ],
)
def test_floats_take_the_ecmascript_form(value: float, expected: str) -> None:
    """Spec-mandated (RFC 8785 3.2.2.3: ECMAScript Number-to-String; values from the RFC's
    3.2.2.3 discussion and ECMA-262 6.1.6.1.20 worked by hand)."""
    assert canonical_json(value) == expected.encode()
    assert canonical_json({"v": [value]}) == f'{{"v":[{expected}]}}'.encode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('"', r'"\""', id="quote"),
        pytest.param("\\", r'"\\"', id="backslash"),
        pytest.param("\b\t\n\f\r", r'"\b\t\n\f\r"', id="short-escapes"),
        pytest.param("\x00\x01\x0b\x1f", r'"\u0000\u0001\u000b\u001f"', id="lowercase-hex"),
        pytest.param("/", '"/"', id="solidus-raw"),
        pytest.param("\x7f", '"\x7f"', id="del-raw"),
        pytest.param("\u2028\u2029", '"\u2028\u2029"', id="line-separators-raw"),
        pytest.param("\u20ac\U0001f600", '"\u20ac\U0001f600"', id="non-ascii-raw"),
        pytest.param("A\u030a", '"A\u030a"', id="not-normalized"),
        pytest.param("", '""', id="empty"),
    ],
)
def test_strings_escape_only_quote_backslash_and_controls(text: str, expected: str) -> None:
    """Spec-mandated (RFC 8785 3.2.2.2 "Serialization of Strings", 3.2.4 "UTF-8 Generation")."""
    assert canonical_json(text) == expected.encode()
    assert canonical_json([text]) == f"[{expected}]".encode()
    assert canonical_json({text: text}) == f"{{{expected}:{expected}}}".encode()


def test_properties_sort_by_utf16_code_units_as_in_rfc8785() -> None:
    """Spec-mandated (RFC 8785 3.2.3 "Sorting of Object Properties", the section's example):
    U+1F600 (surrogates D83D DE00) sorts before U+FB33, unlike code-point order."""
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    order = [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]
    assert list(json.loads(canonical_json(value)).values()) == order
    assert list(json.loads(canonical_json([value]))[0].values()) == order


# RFC 8785 Appendix I test data (cyberphone/json-canonicalization testdata input -> output).
OFFICIAL = [
    (
        "arrays",
        '[56,{"d":true,"10":null,"1":[ ]}]',
        '[56,{"1":[],"10":null,"d":true}]',
    ),
    (
        "french",
        '{"peach":"This sorting order","péché":"is wrong according to French",'
        '"pêche":"but canonicalization MUST","sin":"ignore locale"}',
        '{"peach":"This sorting order","péché":"is wrong according to French",'
        '"pêche":"but canonicalization MUST","sin":"ignore locale"}',
    ),
    (
        "structures",
        r'{"1":{"f":{"f":"hi","F":5},"\n":56.0},"10":{},"":"empty","a":{},'
        r'"111":[{"e":"yes","E":"no"}],"A":{}}',
        r'{"":"empty","1":{"\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{"E":"no","e":"yes"}],'
        r'"A":{},"a":{}}',
    ),
    (
        "unicode",
        r'{"Unnormalized Unicode":"A\u030a"}',
        '{"Unnormalized Unicode":"A\u030a"}',
    ),
    (
        "values",
        r"""{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"""
        r""""string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}""",
        r"""{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"""
        r""""string":"€$\u000f\nA'B\"\\\\\"/"}""",
    ),
    (
        "weird",
        r'{"\u20ac":"Euro Sign","\r":"Carriage Return","\n":"Newline","1":"One",'
        r'"\u0080":"Control\u007f","\ud83d\ude02":"Smiley","\u00f6":"Latin Small Letter O With '
        r'Diaeresis","\ufb33":"Hebrew Letter Dalet With Dagesh","</script>":"Browser Challenge"}',
        r'{"\n":"Newline","\r":"Carriage Return","1":"One","</script>":"Browser Challenge",'
        '"\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis",'
        '"\u20ac":"Euro Sign","\U0001f602":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), OFFICIAL, ids=[n for n, _, _ in OFFICIAL])
def test_official_test_files_canonicalize_to_their_expected_output(
    name: str, text: str, expected: str
) -> None:
    """Spec-mandated (RFC 8785 Appendix I: the published input/output test files)."""
    assert canonical_json(json.loads(text)) == expected.encode("utf-8")


# -- integers RFC 8785 cannot hold ----------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        pytest.param(SAFE, "9007199254740991", id="max-safe"),
        pytest.param(-SAFE, "-9007199254740991", id="min-safe"),
        pytest.param(SAFE + 1, "9007199254740992.0", id="2**53"),
        pytest.param(-SAFE - 1, "-9007199254740992.0", id="-2**53"),
        pytest.param(2**64, "18446744073709551616.0", id="2**64"),
        pytest.param(10**30, "1000000000000000000000000000000.0", id="1e30-int"),
    ],
)
def test_integers_outside_the_safe_range_get_exact_digits_and_a_dot_zero(
    number: int, expected: str
) -> None:
    """conduit-defined: RFC 8785 3.2.2.3 / I-JSON cannot hold integers outside +-(2**53-1);
    we write their exact digits + `.0`, a form ECMAScript never produces."""
    assert canonical_json(number) == expected.encode()
    assert canonical_json({"n": [number]}) == f'{{"n":[{expected}]}}'.encode()


def test_an_out_of_range_integer_never_collides_with_a_float_of_the_same_digits() -> None:
    """conduit-defined: 2.0**60 prints (ECMAScript) as 1152921504606847000, a different number
    from the integer 1152921504606847000; their fingerprints must differ."""
    assert canonical_json(2.0**60) == b"1152921504606847000"
    assert fingerprint({"m": 1152921504606847000}) != fingerprint({"m": 2.0**60})
    assert fingerprint({"m": 2**53 + 1}) != fingerprint({"m": 2**53 + 2})


def test_an_integer_too_long_to_print_is_a_limit_error() -> None:
    """conduit-defined: more digits than `sys.get_int_max_str_digits()` -> limit_exceeded."""
    with pytest.raises(Error) as info:
        canonical_json({"a": [10**5000]})
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "policy",
        "limit_exceeded",
        ("a", 0),
    )
    assert info.value.details == {"limit": sys.get_int_max_str_digits()}


# -- errors for values that are not JSON ----------------------------------------------------


class Weird:
    pass


@pytest.mark.parametrize(
    ("value", "path", "got"),
    [
        pytest.param({1: "x"}, (), "integer", id="int-key"),
        pytest.param({"a": {None: 1}}, ("a",), "null", id="none-key"),
        pytest.param({"a": ["ok", "\ud800"]}, ("a", 1), "lone surrogate", id="lone-surrogate"),
        pytest.param({"a": {"k\udfff": 1}}, ("a", "k\udfff"), "lone surrogate", id="bad-key"),
        pytest.param({"a": {1, 2}}, ("a",), "set", id="set"),
        pytest.param([b"bytes"], (0,), "bytes", id="bytes"),
        pytest.param({"d": Decimal("1.5")}, ("d",), "Decimal", id="decimal"),
        pytest.param([[Weird()]], (0, 0), "Weird", id="object"),
        pytest.param("\udbff", (), "lone surrogate", id="root-surrogate"),
    ],
)
def test_values_that_are_not_json_raise_error_with_a_path(
    value: object, path: tuple, got: str
) -> None:
    """conduit-defined: only `Error` escapes, kind protocol, reason invalid_json, with the
    path to the offending value (RFC 8785 3.2.2.2 needs valid Unicode for UTF-8 output)."""
    with pytest.raises(Error) as info:
        canonical_json(value)
    err = info.value
    assert (err.kind, err.reason, err.path, err.details["got"]) == (
        "protocol",
        "invalid_json",
        path,
        got,
    )
    with pytest.raises(Error):
        fingerprint(value)


def test_a_container_that_contains_itself_is_rejected() -> None:
    """conduit-defined: a reference cycle is not JSON; no hang, no RecursionError."""
    cycle: list[Any] = [1]
    cycle.append({"x": cycle})
    with pytest.raises(Error) as info:
        canonical_json(cycle)
    assert (info.value.reason, info.value.path) == ("invalid_json", (1, "x"))


def test_subclasses_and_tuples_serialize_as_their_json_type() -> None:
    """conduit-defined: dict/list/str/int/float subclasses (e.g. OrderedDict) and tuples are
    read as the JSON type they extend."""

    class Text(str):
        pass

    class Number(float):
        pass

    value = OrderedDict([("b", (1, 2)), (Text("a"), [Text("x"), Number(2.0), True])])
    assert canonical_json(value) == b'{"a":["x",2,true],"b":[1,2]}'


# -- depth and size -------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 253, 254, 255, 300, 10_000])
def test_deep_nesting_serializes_without_recursion_error(depth: int) -> None:
    """conduit-defined: total on deep input (orjson stops near 255 levels; the reference
    path has an explicit stack)."""
    nested_list: list[Any] = []
    nested_dict: dict[str, Any] = {}
    inner = nested_dict
    for _ in range(depth - 1):
        nested_list = [nested_list]
        inner["a"] = {}
        inner = inner["a"]
    assert canonical_json(nested_list) == b"[" * depth + b"]" * depth
    assert canonical_json(nested_dict) == b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    assert fingerprint(nested_dict).startswith(FINGERPRINT_PREFIX)


def test_deep_nesting_with_a_bad_value_at_the_bottom_reports_its_full_path() -> None:
    """conduit-defined: the path is exact at any depth."""
    value: Any = float("nan")
    for _ in range(5000):
        value = {"k": [value]}
    with pytest.raises(Error) as info:
        canonical_json(value)
    assert info.value.path == ("k", 0) * 5000


# -- the fast path --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "taken"),
    [
        pytest.param({"a": 1, "b": ["x", True, None]}, True, id="plain"),
        pytest.param({"a": "x:e, [n .5 :1.5"}, True, id="float-like-text"),
        pytest.param({"a": "\U0001f600"}, True, id="astral-in-a-value"),
        pytest.param({"\uff0c": 1, "b": 2}, True, id="bmp-private-and-cjk-keys"),
        pytest.param({"a": 1.5}, True, id="float-patched"),
        pytest.param({"a": [2.0, (-0.0, 1e21)]}, True, id="floats-in-list-and-tuple"),
        pytest.param([{"b": {"c": 1e16}}, {"d": 0.1}], True, id="floats-at-two-depths"),
        pytest.param({"a": {"\U0001f600": 1, "\ufb33": [0.5]}}, True, id="nested-astral-key"),
        pytest.param({"a": float("nan")}, False, id="nan"),
        pytest.param({"a": {"\U0001f600": float("inf")}}, False, id="nan-under-astral-key"),
        pytest.param({"\U0001f600": 1, "\ufb33": 2}, False, id="astral-key-at-root"),
        pytest.param({"a": 2**53}, False, id="big-int"),
        pytest.param({1: 2}, False, id="int-key"),
        pytest.param({"a": "\ud800"}, False, id="lone-surrogate"),
    ],
)
def test_fast_path_is_taken_only_where_orjson_matches_rfc8785(value: Any, taken: bool) -> None:
    """conduit-defined: the orjson path answers only where its bytes are provably RFC 8785
    (floats and nested astral keys patched in as orjson Fragments)."""
    before = copy.deepcopy(value)
    fast = _canonical_fast(value)
    assert (fast is not None) is taken
    if fast is not None:
        assert fast == _canonical_slow(value) == rfc8785.dumps(value)
    assert repr(value) == repr(before)  # unchanged, and tuples are still tuples


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"a": "x:1.5,", "b": 2.5}, id="float-text-in-a-string"),
        pytest.param({"a": 'say "x" :1.5,', "b": [2.5]}, id="escaped-quotes-before"),
        pytest.param({"a": 'q"[1e+5]', "b": -0.0}, id="quote-then-float-text"),
        pytest.param({"a": "back\\slash,1.5]", "b": 2.5}, id="escaped-backslash"),
        pytest.param({"k:1.5,": 1.0, "[2.5]": [3.0]}, id="float-text-in-keys"),
        pytest.param({"a": None, "b": 1.5}, id="null-and-float"),
        pytest.param({"a": "2nd :null]", "b": 0.5}, id="null-text-in-a-string"),
        pytest.param([1.5, [2.0, [1e-7, {"x": 12.5e10}]], -3.25, 1e300], id="nested-arrays"),
        pytest.param({"a": [1, 2.0, 3, 4.5]}, id="ints-between-floats"),
    ],
)
def test_float_rewriting_ignores_number_like_text_inside_strings(value: Any) -> None:
    """Spec-mandated (RFC 8785 3.2.2.3): only number tokens are rewritten, never string text
    that looks like one."""
    expected = rfc8785.dumps(value)
    assert _canonical_fast(value) == expected
    assert canonical_json(value) == expected


def test_every_corpus_tool_takes_the_fast_path() -> None:
    """conduit-defined: real tool definitions (no floats, BMP keys) never pay for the
    reference path."""
    slow = [(c.file, i) for c, i, tool in all_tools() if _canonical_fast(tool) is None]
    assert slow == []


# -- fingerprint ----------------------------------------------------------------------------


def test_fingerprint_is_prefix_and_sha256_hex_of_the_canonical_bytes() -> None:
    """conduit-defined: "jcs-sha256:" + 64 lowercase hex digits of SHA-256(canonical)."""
    raw = {"name": "get_weather", "inputSchema": {"type": "object"}}
    canonical = b'{"inputSchema":{"type":"object"},"name":"get_weather"}'
    assert canonical_json(raw) == canonical
    assert fingerprint(raw) == "jcs-sha256:" + hashlib.sha256(canonical).hexdigest()
    assert len(fingerprint(raw)) == len("jcs-sha256:") + 64


def test_fingerprint_of_a_tool_is_the_fingerprint_of_its_raw() -> None:
    """conduit-defined: a `Tool` is fingerprinted by `raw`."""
    raw = {"name": "t", "inputSchema": {"type": "object"}, "x-extra": [1]}
    assert fingerprint(Tool.from_wire("srv", raw)) == fingerprint(raw)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"title": "T"}, id="title"),
        pytest.param({"description": "Add two numbers. "}, id="description-trailing-space"),
        pytest.param({"annotations": {"readOnlyHint": True}}, id="annotations"),
        pytest.param({"icons": [{"src": "https://example.com/i.png"}]}, id="icons"),
        pytest.param({"_meta": {"k": 1}}, id="meta"),
        pytest.param({"execution": {"taskSupport": "optional"}}, id="execution"),
        pytest.param({"outputSchema": {"type": "object"}}, id="output-schema"),
        pytest.param({"x-unknown": None}, id="unknown-null"),
        pytest.param({"inputSchema": {"type": "object", "required": []}}, id="input-schema"),
    ],
)
def test_fingerprint_changes_with_any_field(change: dict[str, Any]) -> None:
    """Spec-mandated (MCP 2026-07-28 server/tools "Data Types > Tool": every field of the
    definition may reach the model or a policy, unknown keys included)."""
    raw = {"name": "add", "description": "Add two numbers.", "inputSchema": {"type": "object"}}
    assert fingerprint({**raw, **change}) != fingerprint(raw)


def test_fingerprint_does_not_mutate_its_input() -> None:
    """conduit-defined: nothing the caller passed is changed."""
    for _, _, tool in all_tools()[:200]:
        before = copy.deepcopy(tool)
        fingerprint(tool)
        assert tool == before
    value = {"b": [1.5, {"\U0001f600": 1, "\ufb33": 2}], "a": 2**60}
    before = copy.deepcopy(value)
    canonical_json(value)
    assert value == before
    assert list(value) == ["b", "a"]


CAPTURES = sorted({c.file for c, _, _ in all_tools()})


@pytest.mark.parametrize("file", CAPTURES)
def test_corpus_tools_fingerprint_as_rfc8785_plus_sha256(file: str) -> None:
    """Spec-mandated (RFC 8785): every real tool definition gives the bytes of the `rfc8785`
    package (the oracle), and so the same fingerprint."""
    for capture, index, tool in all_tools():
        if capture.file == file:
            expected = rfc8785.dumps(tool)
            assert canonical_json(tool) == expected, index
            assert _canonical_slow(tool) == expected, index
            assert fingerprint(tool) == sha(expected), index


TOOL_CASES = [(n, c) for n, c in cases() if c["kind"] == "tool"]


@pytest.mark.parametrize(("name", "case"), cases(), ids=[n for n, _ in cases()])
def test_cases_fingerprint_as_documented(name: str, case: dict[str, Any]) -> None:
    """Spec-mandated (tests/fixtures/cases README: `fingerprint_present`,
    `fingerprint_equal_to`, `fingerprint_differs_from`; nothing but `Error` may escape)."""
    checks = case["expect"]["checks"]
    try:
        value = fingerprint(case["input"])
    except Error:
        assert "fingerprint_present" not in checks
        return
    assert value.startswith(FINGERPRINT_PREFIX)
    if "fingerprint_equal_to" in checks:
        assert value == fingerprint(checks["fingerprint_equal_to"])
    if "fingerprint_differs_from" in checks:
        assert value != fingerprint(checks["fingerprint_differs_from"])


def test_the_cases_with_fingerprint_checks_are_present() -> None:
    """conduit-defined: the case files this module answers for exist (so the test above is
    not vacuous)."""
    keys = {k for _, c in TOOL_CASES for k in c["expect"]["checks"] if k.startswith("finger")}
    assert {"fingerprint_equal_to", "fingerprint_differs_from"} <= keys


# -- property tests: fast path vs reference vs rfc8785 --------------------------------------

SPECIAL_CHARS = st.sampled_from(
    [
        "\x00",
        "\x1f",
        "\x7f",
        '"',
        "\\",
        "/",
        "\u2028",
        "\ud7ff",
        "\ue000",
        "\uf8ff",
        "\uffff",
        "\U00010000",
        "\U0001f600",
        "\U0010ffff",
        ":",
        ",",
        "[",
        ".",
        "e",
        "n",
        "1",
        "-",
        "+",
    ]
)
TEXT = st.lists(st.one_of(st.characters(codec="utf-8"), SPECIAL_CHARS), max_size=10).map("".join)
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**60), 2**60).map(float),
    st.sampled_from([1e21, 1e-7, 1e-6, 1e20, 5e-324, -0.0, 0.1, 1e16, 9007199254740993.0]),
)
SAFE_INTS = st.integers(-SAFE, SAFE)
ANY_INTS = st.one_of(
    SAFE_INTS,
    st.integers(),
    st.integers(SAFE - 3, SAFE + 3),
    st.integers(-SAFE - 3, -SAFE + 3),
    st.integers(2**63 - 3, 2**64 + 3),
)


def json_values(ints: st.SearchStrategy[int], floats: bool) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | ints | TEXT
    if floats:
        scalars = scalars | FLOATS
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
        max_leaves=12,
    )


def containers(ints: st.SearchStrategy[int], floats: bool) -> st.SearchStrategy[Any]:
    inner = json_values(ints, floats)
    return st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=6)


@bounded(200)
@given(json_values(SAFE_INTS, floats=True))
def test_canonical_json_equals_rfc8785_wherever_it_accepts_the_input(value: Any) -> None:
    """Spec-mandated (RFC 8785 section 3): byte-identical to the `rfc8785` package."""
    expected = rfc8785.dumps(value)
    assert canonical_json(value) == expected
    assert _canonical_slow(value) == expected


@bounded(200)
@given(st.one_of(containers(ANY_INTS, floats=True), containers(ANY_INTS, floats=False)))
def test_fast_path_equals_the_reference_whenever_it_answers(value: Any) -> None:
    """conduit-defined: the orjson path is checked against its slow oracle, including big
    integers, floats, astral and private-use keys, and float-like text."""
    fast = _canonical_fast(value)
    slow = _canonical_slow(value)
    assert fast is None or fast == slow
    assert canonical_json(value) == slow


@bounded(200)
@given(containers(SAFE_INTS, floats=False))
def test_fast_path_without_floats_matches_rfc8785(value: Any) -> None:
    """Spec-mandated (RFC 8785 3.2.2.2, 3.2.3): float-free values (the fast path's domain)
    against the `rfc8785` package."""
    assert canonical_json(value) == rfc8785.dumps(value)


@bounded(200)
@given(st.integers(0, 2**64 - 1))
def test_any_finite_bit_pattern_serializes_as_rfc8785(bits: int) -> None:
    """Spec-mandated (RFC 8785 3.2.2.3): every finite double, exponent forms and subnormals
    included."""
    number = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    if number != number or number in (float("inf"), float("-inf")):
        return
    assert canonical_json(number) == rfc8785.dumps(number)
    assert canonical_json([number]) == rfc8785.dumps([number])


@bounded(100)
@given(st.dictionaries(TEXT, json_values(ANY_INTS, floats=True), min_size=2, max_size=6))
def test_member_order_does_not_change_the_fingerprint(value: dict[str, Any]) -> None:
    """Spec-mandated (RFC 8785 3.2.3): members are sorted, so wire order does not matter."""
    reordered = dict(reversed(list(value.items())))
    assert fingerprint(reordered) == fingerprint(value)


@bounded(200)
@given(ANY_INTS, ANY_INTS)
def test_distinct_integers_give_distinct_fingerprints(a: int, b: int) -> None:
    """conduit-defined: integers of any size stay distinct (RFC 8785 covers only
    +-(2**53-1))."""
    assert (fingerprint([a]) == fingerprint([b])) is (a == b)


@bounded(200)
@given(st.one_of(st.integers(SAFE + 1), st.integers(max_value=-SAFE - 1)), FLOATS)
def test_an_out_of_range_integer_never_serializes_like_a_float(number: int, other: float) -> None:
    """conduit-defined: the `.0` form cannot be produced by any float."""
    assert canonical_json(number) != canonical_json(other)


@bounded(100)
@given(json_values(ANY_INTS, floats=True))
def test_canonical_json_leaves_its_input_unchanged(value: Any) -> None:
    """conduit-defined: nothing the caller passed is mutated."""
    before = copy.deepcopy(value)
    canonical_json(value)
    assert value == before
