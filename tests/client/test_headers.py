"""x-mcp-header checks, header_map, and the Mcp-Param-{Name} / Mcp-Name header values.

Spec text: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters"
("Schema Extension", "Value Encoding", "Client Behavior") and server/tools "x-mcp-header".
Base64 literals not in the spec's table were computed with the standard library's `base64`.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.client.headers import (
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
    param_headers_apply,
)
from tests.corpus import all_tools, cases
from tests.property.profiles import bounded

X = "x-mcp-header"


def obj(**properties: Any) -> dict[str, Any]:
    """An object schema with these properties."""
    return {"type": "object", "properties": properties}


def tool(schema: dict[str, Any], name: str = "t") -> Tool:
    return Tool.from_wire("srv", {"name": name, "inputSchema": schema})


def reason_and_path(schema: Any) -> tuple[str, tuple[Any, ...]] | None:
    err = find_invalid_x_mcp_header(schema)
    return None if err is None else (err.reason, err.path)


SPEC_EXAMPLE = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "The region to execute the query in",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "The SQL query to execute"},
    },
    "required": ["region", "query"],
}


# -- valid annotations and header_map ---------------------------------------------------------


def test_header_map_of_the_spec_example_maps_region() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Schema Extension"
    example): `region` carries `x-mcp-header: Region`."""
    assert find_invalid_x_mcp_header(SPEC_EXAMPLE) is None
    assert header_map(tool(SPEC_EXAMPLE, "execute_sql")) == {"Region": ("region",)}


def test_header_map_follows_nested_properties_chains() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": "Nested object properties
    are permitted as long as every step in the chain is a `properties` key")."""
    schema = obj(
        region={"type": "string", X: "Region"},
        confirm={"type": "boolean", X: "Confirm"},
        options=obj(limit={"type": "integer", X: "Limit"}, deep=obj(z={"type": "string", X: "Z"})),
    )
    assert header_map(tool(schema)) == {
        "Region": ("region",),
        "Confirm": ("confirm",),
        "Limit": ("options", "limit"),
        "Z": ("options", "deep", "z"),
    }


@pytest.mark.parametrize("declared", ["integer", "string", "boolean"])
def test_each_primitive_type_may_carry_an_annotation(declared: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": MUST only be applied to
    parameters with primitive types (integer, string, boolean))."""
    assert header_map(tool(obj(p={"type": declared, X: "P"}))) == {"P": ("p",)}


def test_every_tchar_is_accepted_in_a_header_name() -> None:
    """Spec-mandated (RFC 9110 5.6.2 tchar, cited by 2026-07-28 streamable-http "Schema
    Extension")."""
    name = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    assert header_map(tool(obj(p={"type": "string", X: name}))) == {name: ("p",)}


def test_header_map_keeps_the_name_as_written() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": the value specifies the
    name portion of `Mcp-Param-{name}`)."""
    schema = obj(a={"type": "string", X: "tRaCe-Id"})
    assert list(header_map(tool(schema))) == ["tRaCe-Id"]


def test_a_property_named_x_mcp_header_is_a_property_not_an_annotation() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": the annotation sits in the
    property's schema; a key of `properties` is a property name)."""
    assert header_map(tool(obj(**{X: {"type": "object"}}))) == {}
    schema = obj(**{X: {"type": "string", X: "Named"}})
    assert header_map(tool(schema)) == {"Named": (X,)}


def test_properties_null_has_no_annotations_and_does_not_crash() -> None:
    """conduit-defined (case 05): a non-object `properties` holds no property schemas."""
    for value in (None, 5, "x", True, []):
        schema = {"type": "object", "properties": value}
        assert find_invalid_x_mcp_header(schema) is None
        assert header_map(tool(schema)) == {}


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(obj(a={"type": "string", "default": {X: "A"}}), id="default"),
        pytest.param(obj(a={"type": "object", "const": {X: "A", "b": [{X: 5}]}}), id="const"),
        pytest.param(obj(a={"type": "object", "enum": [{X: "A"}, {"p": {X: ""}}]}), id="enum"),
        pytest.param(obj(a={"type": "object", "examples": [{X: "A"}]}), id="examples"),
        pytest.param(obj(a={"type": "object", "example": {X: "A"}}), id="openapi-example"),
        pytest.param({"type": "object", "default": {X: "Root"}}, id="root-default"),
        pytest.param({**obj(), "required": [X]}, id="required-names"),
        pytest.param({**obj(), "dependentRequired": {X: ["a"]}}, id="dependentRequired"),
        pytest.param({**obj(), "$defs": {X: {"type": "string"}}}, id="def-named-x-mcp-header"),
        pytest.param({**obj(), "patternProperties": {X: {}}}, id="pattern-named-x-mcp-header"),
        pytest.param({**obj(), "dependentSchemas": {X: {}}}, id="dependency-named-x-mcp-header"),
    ],
)
def test_keys_inside_instance_data_or_names_are_not_annotations(schema: dict[str, Any]) -> None:
    """Spec-mandated (JSON Schema 2020-12: `default`, `const`, `enum`, `examples` hold instance
    values; `required`/`dependentRequired` and map keys are names, not schemas)."""
    assert find_invalid_x_mcp_header(schema) is None
    assert header_map(tool(schema)) == {}


# -- invalid names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("My Region", "not_a_token", id="space"),
        pytest.param("Region:Primary", "not_a_token", id="colon"),
        pytest.param("Région", "not_a_token", id="non-ascii"),
        pytest.param("Region\t1", "control_character", id="tab"),
        pytest.param("a\r\nb", "control_character", id="crlf"),
        pytest.param("a\nb", "control_character", id="lf"),
        pytest.param("a\x00", "control_character", id="nul"),
        pytest.param("a\x7f", "control_character", id="del"),
        pytest.param('"a"', "not_a_token", id="dquote"),
        pytest.param("(a)", "not_a_token", id="parens"),
        pytest.param("a,b", "not_a_token", id="comma"),
        pytest.param("a/b", "not_a_token", id="slash"),
        pytest.param("a;b", "not_a_token", id="semicolon"),
        pytest.param("<a>", "not_a_token", id="angle"),
        pytest.param("a=b", "not_a_token", id="equals"),
        pytest.param("a?b", "not_a_token", id="question"),
        pytest.param("a@b", "not_a_token", id="at"),
        pytest.param("[a]", "not_a_token", id="brackets"),
        pytest.param("a\\b", "not_a_token", id="backslash"),
        pytest.param("{a}", "not_a_token", id="braces"),
        pytest.param("a\u200bb", "not_a_token", id="zero-width-space"),
        pytest.param(5, "not_a_string", id="integer"),
        pytest.param(None, "not_a_string", id="null"),
        pytest.param(True, "not_a_string", id="boolean"),
        pytest.param(["A"], "not_a_string", id="array"),
        pytest.param({"name": "A"}, "not_a_string", id="object"),
    ],
)
def test_invalid_header_names_are_rejected(value: object, problem: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": MUST NOT be empty; MUST
    match `1*tchar` (RFC 9110); MUST NOT contain control characters, including CR or LF)."""
    err = find_invalid_x_mcp_header(obj(v={"type": "string", X: value}))
    assert err is not None
    assert (err.kind, err.reason, err.path) == (
        "protocol",
        "x_mcp_header_invalid_name",
        ("properties", "v", X),
    )
    assert err.details["problem"] == problem


@pytest.mark.parametrize(
    ("value", "index", "codepoint"),
    [("My Region", 2, "U+0020"), ("Region\t1", 6, "U+0009"), ("Région", 1, "U+00E9")],
)
def test_invalid_name_details_locate_the_first_bad_character(
    value: str, index: int, codepoint: str
) -> None:
    """conduit-defined: the index and code point of the first character that is not a tchar."""
    err = find_invalid_x_mcp_header(obj(v={"type": "string", X: value}))
    assert err is not None
    assert (err.details["index"], err.details["codepoint"]) == (index, codepoint)
    assert value not in err.message  # the message names the place, not the payload


# -- property types ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "got"),
    [
        pytest.param({"type": "number"}, "number", id="number"),
        pytest.param({"type": "object"}, "object", id="object"),
        pytest.param({"type": "array", "items": {"type": "string"}}, "array", id="array"),
        pytest.param({"type": "null"}, "null", id="null"),
        pytest.param({}, "missing", id="missing"),
        pytest.param({"const": "x"}, "missing", id="const-only"),
        pytest.param({"enum": ["a", "b"]}, "missing", id="enum-only"),
        pytest.param({"type": ["string", "null"]}, "array", id="type-list-with-null"),
        pytest.param({"type": ["string"]}, "array", id="type-list-of-one"),
        pytest.param({"type": "String"}, "String", id="wrong-case"),
        pytest.param({"type": 5}, "integer", id="type-not-a-string"),
    ],
)
def test_annotation_on_a_non_primitive_type_is_rejected(prop: dict[str, Any], got: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": MUST only be applied to
    parameters with primitive types (integer, string, boolean); `number` is not permitted)."""
    err = find_invalid_x_mcp_header(obj(p={**prop, X: "P"}))
    assert err is not None
    assert (err.kind, err.reason) == ("protocol", "x_mcp_header_type")
    assert err.path == ("properties", "p", X)
    assert err.details["got"] == got


# -- duplicates -------------------------------------------------------------------------------


@pytest.mark.parametrize(("first", "second"), [("Region", "Region"), ("MyField", "myfield")])
def test_duplicate_header_names_are_rejected_case_insensitively(first: str, second: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": MUST be case-insensitively
    unique among all `x-mcp-header` values in the `inputSchema`)."""
    schema = obj(f1={"type": "string", X: first}, f2={"type": "string", X: second})
    err = find_invalid_x_mcp_header(schema)
    assert err is not None
    assert (err.reason, err.path) == ("x_mcp_header_duplicate", ("properties", "f2", X))
    assert err.details["first_path"] == ("properties", "f1", X)


def test_duplicates_are_found_across_nesting_levels() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": unique among *all* values in
    the `inputSchema`)."""
    schema = obj(a={"type": "string", X: "Tenant"}, b=obj(c={"type": "integer", X: "TENANT"}))
    assert reason_and_path(schema) == (
        "x_mcp_header_duplicate",
        ("properties", "b", "properties", "c", X),
    )


# -- reachability -----------------------------------------------------------------------------

ANN = {"type": "string", X: "H"}


SCHEMA_KEYWORDS = [
    "items",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
]
ARRAY_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]
MAP_KEYWORDS = ["patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"]

UNREACHABLE = [
    *[pytest.param({**obj(), k: ANN}, (k, X), k, id=k) for k in SCHEMA_KEYWORDS],
    *[pytest.param({**obj(), k: [{}, ANN]}, (k, 1, X), k, id=f"{k}[]") for k in ARRAY_KEYWORDS],
    *[pytest.param({**obj(), k: {"n": ANN}}, (k, "n", X), k, id=f"{k}{{}}") for k in MAP_KEYWORDS],
    pytest.param({"type": "string", X: "H"}, (X,), None, id="root"),
    pytest.param(
        obj(a={"type": "array", "items": ANN}),
        ("properties", "a", "items", X),
        "items",
        id="items-below-a-property",
    ),
    pytest.param(
        {**obj(), "x-vendor": {"nested": ANN}},
        ("x-vendor", "nested", X),
        "x-vendor",
        id="unknown-keyword",
    ),
    pytest.param(
        obj(a={"anyOf": [obj(b=ANN)]}),
        ("properties", "a", "anyOf", 0, "properties", "b", X),
        "anyOf",
        id="chain-broken-then-resumed",
    ),
]


@pytest.mark.parametrize(("schema", "path", "via"), UNREACHABLE)
def test_annotations_off_the_properties_chain_are_unreachable(
    schema: dict[str, Any], path: tuple[Any, ...], via: str | None
) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": MUST only be applied to
    properties statically reachable via a chain consisting solely of `properties` keys; not
    through `items`, composition, conditional keywords or `$ref`; "An `x-mcp-header` annotation
    anywhere else makes the annotation -- and thus the tool definition -- invalid")."""
    err = find_invalid_x_mcp_header(schema)
    assert err is not None
    assert (err.kind, err.reason, err.path) == ("protocol", "x_mcp_header_unreachable", path)
    assert err.details["via"] == via


def test_an_annotation_reached_only_through_ref_is_unreachable() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": the chain MUST NOT pass
    through `$ref`); the `$defs` target is where the annotation sits."""
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string", X: "A"}},
    }
    assert reason_and_path(schema) == ("x_mcp_header_unreachable", ("$defs", "A", X))


def test_the_first_invalid_annotation_in_document_order_is_reported() -> None:
    """conduit-defined: one deterministic answer, the first in document order."""
    schema = obj(
        a={"type": "array", "items": {"type": "string", X: "Bad Name"}},
        b={"type": "number", X: "B"},
    )
    assert reason_and_path(schema) == ("x_mcp_header_unreachable", ("properties", "a", "items", X))
    schema = obj(b={"type": "number", X: "B"}, a={"type": "string", X: ""})
    assert reason_and_path(schema) == ("x_mcp_header_type", ("properties", "b", X))


@pytest.mark.parametrize("root", [None, 5, "s", True, [], {}, [{"a": 1}]])
def test_a_schema_without_annotations_has_no_findings(root: object) -> None:
    """conduit-defined: any JSON value is accepted as input; no annotation, no finding."""
    assert find_invalid_x_mcp_header(root) is None


def test_a_non_object_root_still_has_its_annotations_found() -> None:
    """conduit-defined: an array root is no property, so an annotation in it is unreachable."""
    assert reason_and_path([ANN]) == ("x_mcp_header_unreachable", (0, X))


# -- deep and wide input ----------------------------------------------------------------------


def nest(keyword: str, depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    node = leaf
    for _ in range(depth):
        if keyword == "properties":
            node = {"type": "object", "properties": {"a": node}}
        elif keyword == "items":
            node = {"type": "array", "items": node}
        elif keyword == "anyOf":
            node = {"anyOf": [{"type": "null"}, node]}
        else:
            node = {keyword: node}
    return node


@pytest.mark.parametrize("depth", [40, 10_000])
def test_a_valid_annotation_deep_in_a_properties_chain_is_mapped(depth: int) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": nested properties are
    permitted at any depth); conduit-defined: no recursion limit."""
    schema = nest("properties", depth, {"type": "integer", X: "Deep"})
    assert find_invalid_x_mcp_header(schema) is None
    assert header_map(tool(schema)) == {"Deep": ("a",) * depth}


@pytest.mark.parametrize("depth", [40, 10_000])
@pytest.mark.parametrize("keyword", ["items", "anyOf", "not", "x-unknown"])
def test_an_invalid_annotation_deep_off_the_chain_still_rejects(depth: int, keyword: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": an annotation anywhere
    else is invalid); conduit-defined: found at any depth without RecursionError."""
    err = find_invalid_x_mcp_header(nest(keyword, depth, dict(ANN)))
    assert err is not None
    assert err.reason == "x_mcp_header_unreachable"
    assert err.path[-1] == X
    assert err.path[0] == keyword


@pytest.mark.parametrize("depth", [40, 10_000])
def test_a_bad_type_deep_in_the_chain_rejects_with_the_full_path(depth: int) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": `number` not permitted)."""
    err = find_invalid_x_mcp_header(nest("properties", depth, {"type": "number", X: "N"}))
    assert err is not None
    assert err.reason == "x_mcp_header_type"
    assert err.path == ("properties", "a") * depth + (X,)


def test_deeply_nested_instance_data_is_skipped() -> None:
    """conduit-defined: values of `default` are never walked, however deep."""
    data: Any = {X: "A"}
    for _ in range(10_000):
        data = {"k": [data]}
    assert find_invalid_x_mcp_header(obj(a={"type": "object", "default": data})) is None


def test_a_hundred_thousand_properties_are_walked_to_the_end() -> None:
    """conduit-defined: every property is visited, the middle one and the last one. That the
    walk is linear is measured by operation counts in tests/limits (no clock in unit tests)."""
    props = {f"p{i}": {"type": "string", "description": "d"} for i in range(100_000)}
    props["p50000"] = {"type": "integer", X: "Middle"}
    schema = {"type": "object", "properties": props}
    assert header_map(tool(schema)) == {"Middle": ("p50000",)}
    props["p99999"] = {"type": "boolean", X: "middle"}
    assert reason_and_path(schema) == ("x_mcp_header_duplicate", ("properties", "p99999", X))


def test_json_parsed_deep_input_is_walked() -> None:
    """conduit-defined: as deep as orjson (the library's fast JSON reader) accepts: 1,023
    nested objects here."""
    depth = 511
    text = '{"type":"object","properties":{"a":' * depth + '{"type":"string","x-mcp-header":"D"}'
    text += "}}" * depth
    schema = orjson.loads(text)
    assert header_map(tool(schema)) == {"D": ("a",) * depth}
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads('{"properties":{"a":' + text + "}}")


# -- Python-level oddities --------------------------------------------------------------------


def test_a_cyclic_schema_is_the_one_cycle_error_not_a_hang() -> None:
    """conduit-defined (issue 15 item 1): no JSON parser builds a cycle; a Python caller who
    does gets the one cycle treatment: Error protocol/invalid_json, path to the container met
    again inside itself."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema
    with pytest.raises(Error) as info:
        find_invalid_x_mcp_header(schema)
    got = (info.value.kind, info.value.reason, info.value.path, dict(info.value.details))
    assert got == (
        "protocol",
        "invalid_json",
        ("properties", "self"),
        {"expected": "a JSON value", "got": "cycle"},
    )
    with pytest.raises(Error) as info:
        header_map(Tool.from_wire("s", {"name": "t", "inputSchema": schema}))
    assert (info.value.reason, info.value.path) == (
        "invalid_json",
        ("inputSchema", "properties", "self"),
    )
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(Error) as info:
        find_invalid_x_mcp_header({"allOf": looped})
    assert (info.value.reason, info.value.path) == ("invalid_json", ("allOf", 0))


def test_a_shared_sub_schema_counts_once_per_place_it_appears() -> None:
    """conduit-defined: judged as its JSON text would be, so a shared annotated schema is a
    duplicate; a shared plain schema is fine."""
    plain = {"type": "string"}
    assert find_invalid_x_mcp_header(obj(a=plain, b=plain, c={"anyOf": [plain]})) is None
    annotated = {"type": "string", X: "Shared"}
    assert reason_and_path(obj(a=annotated, b=annotated)) == (
        "x_mcp_header_duplicate",
        ("properties", "b", X),
    )


# -- header_map errors ------------------------------------------------------------------------


def test_header_map_raises_the_finding_rooted_at_the_tool() -> None:
    """conduit-defined: the same reason and details, with the path prefixed by inputSchema."""
    schema = obj(tags={"type": "array", "items": {"type": "string", X: "Tag"}})
    finding = find_invalid_x_mcp_header(schema)
    assert finding is not None
    with pytest.raises(Error) as caught:
        header_map(tool(schema))
    assert caught.value.reason == finding.reason == "x_mcp_header_unreachable"
    assert caught.value.path == ("inputSchema", *finding.path)
    assert caught.value.details == finding.details


def test_header_map_rejects_a_non_tool_argument() -> None:
    """conduit-defined: passing a raw dict is a caller bug."""
    with pytest.raises(TypeError):
        header_map(SPEC_EXAMPLE)  # type: ignore[arg-type]


def test_findings_pickle_and_name_no_payload() -> None:
    """conduit-defined: errors travel between processes; messages avoid echoing values."""
    err = find_invalid_x_mcp_header(obj(p={"type": "number", X: "SecretName"}))
    assert err is not None
    again = pickle.loads(pickle.dumps(err))
    assert (again.reason, again.path, again.details) == (err.reason, err.path, err.details)
    assert "SecretName" not in err.message


# -- nothing is mutated -----------------------------------------------------------------------


def test_nothing_the_caller_passed_is_mutated() -> None:
    """conduit-defined: the walk and the encoders only read."""
    schema = obj(
        a={"type": "string", X: "A", "default": {X: 1}},
        b=obj(c={"type": "integer", X: "C"}),
        d={"type": "array", "items": {"type": "string"}},
    )
    arguments = {"a": "é", "b": {"c": 7}, "d": ["x"]}
    raw = {"name": "t", "inputSchema": schema}
    before = copy.deepcopy((raw, arguments))
    t = Tool.from_wire("s", raw)
    assert find_invalid_x_mcp_header(schema) is None
    hm = header_map(t)
    assert mcp_param_headers(t, arguments) == mcp_param_headers(hm, arguments)
    assert (raw, arguments) == before
    bad = obj(a={"type": "number", X: "A"})
    before_bad = copy.deepcopy(bad)
    assert find_invalid_x_mcp_header(bad) is not None
    assert bad == before_bad


# -- fixtures: cases and corpus ---------------------------------------------------------------

HEADER_CASES = [
    (stem, case)
    for stem, case in cases()
    if case["kind"] == "tool" and "header_check" in case["expect"]["checks"]
]


@pytest.mark.parametrize(("stem", "case"), HEADER_CASES, ids=[s for s, _ in HEADER_CASES])
def test_header_cases_behave_as_expected(stem: str, case: dict[str, Any]) -> None:
    """Spec-mandated (tests/fixtures/cases, expectations from 2026-07-28 streamable-http
    "Custom Headers from Tool Parameters")."""
    checks = case["expect"]["checks"]
    t = Tool.from_wire("srv", copy.deepcopy(case["input"]))
    finding = find_invalid_x_mcp_header(t.input_schema)
    if checks["header_check"] == "reject":
        assert finding is not None
        assert finding.kind == "protocol"
        if "header_reason" in checks:
            assert finding.reason == checks["header_reason"]
        with pytest.raises(Error):
            header_map(t)
    else:
        assert finding is None
        if "header_paths" in checks:
            expected = {k: tuple(v) for k, v in checks["header_paths"].items()}
            assert header_map(t) == expected
    assert t.raw == case["input"]


def test_every_corpus_tool_passes_the_header_check() -> None:
    """conduit-defined: real tools (tests/fixtures/corpus). None of them carries the text
    `x-mcp-header` at all (checked here independently), so none may be rejected or mapped."""
    tools = all_tools()
    assert len(tools) > 1000
    rejected = 0
    for _capture, _index, raw in tools:
        t = Tool.from_wire("srv", raw)
        assert X not in json.dumps(raw)
        if find_invalid_x_mcp_header(t.input_schema) is not None:
            rejected += 1
        assert header_map(t) == {}
    assert rejected == 0


# -- value encoding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        # The spec's own table (2026-07-28 streamable-http "Value Encoding").
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        # Same rules, other values.
        ("", ""),
        ("us west 1", "us west 1"),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
        ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
        (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
        ("a\x7f", "=?base64?YX8=?="),
        ("=?base64?=", "=?base64?PT9iYXNlNjQ/PQ==?="),
        ("=?BASE64?x?=", "=?BASE64?x?="),
        ("=?base64?abc", "=?base64?abc"),
        ("abc?=", "abc?="),
        ("!~", "!~"),
    ],
)
def test_string_values_are_encoded_per_the_spec(value: str, encoded: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Value Encoding": plain when visible ASCII or
    inner space; Base64 of UTF-8 for non-ASCII, control characters, leading/trailing whitespace,
    and values matching the sentinel pattern; markers are case-sensitive)."""
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
        (True, "true"),
        (False, "false"),
        (42.0, "42"),
        (-0.0, "0"),
        (9007199254740991.0, "9007199254740991"),
    ],
)
def test_integers_and_booleans_are_converted_then_encoded(value: object, encoded: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Value Encoding": integer in decimal, boolean
    as lowercase `true`/`false`); conduit-defined: an integral JSON number counts as an integer
    (JSON Schema 2020-12 "integer")."""
    assert encode_header_value(value) == encoded


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(2**53, "integer_out_of_range", id="2^53"),
        pytest.param(-(2**53), "integer_out_of_range", id="-2^53"),
        pytest.param(10**5000, "integer_out_of_range", id="huge"),
        pytest.param(2.0**53, "integer_out_of_range", id="float-2^53"),
        pytest.param(3.14159, "not_an_integer", id="fraction"),
        pytest.param(float("inf"), "not_an_integer", id="inf"),
        pytest.param(float("nan"), "not_an_integer", id="nan"),
        pytest.param(None, "unsupported_type", id="null"),
        pytest.param([1], "unsupported_type", id="array"),
        pytest.param({"a": 1}, "unsupported_type", id="object"),
        pytest.param("\ud800", "not_unicode", id="lone-surrogate"),
    ],
)
def test_unencodable_values_raise_a_policy_error(value: object, problem: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": integer values MUST be
    within -2^53+1 .. 2^53-1; "Value Encoding" defines only string, integer and boolean);
    conduit-defined: kind "policy" (the values are the caller's, not the peer's)."""
    with pytest.raises(Error) as caught:
        encode_header_value(value)
    assert (caught.value.kind, caught.value.reason) == ("policy", "header_value_unencodable")
    assert caught.value.details["problem"] == problem


@pytest.mark.parametrize("bad", ["=?base64?!!!?=", "=?base64?/w==?=", "=?base64?abc?="])
def test_decoding_a_malformed_sentinel_is_a_value_error(bad: str) -> None:
    """conduit-defined: bad Base64 or non-UTF-8 bytes never decode to a wrong value."""
    with pytest.raises(ValueError):
        decode_header_value(bad)


def test_decoding_a_non_string_is_a_type_error() -> None:
    """conduit-defined."""
    with pytest.raises(TypeError):
        decode_header_value(b"x")  # type: ignore[arg-type]


@bounded(200)
@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_every_string_round_trips_through_a_header_safe_value(value: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Value Encoding": header values are visible
    ASCII and space; the Base64 form lets the receiver recover the exact value)."""
    encoded = encode_header_value(value)
    assert all(0x20 <= ord(c) <= 0x7E for c in encoded)
    assert encoded == encoded.strip(" ")
    assert decode_header_value(encoded) == value
    plain_safe = (
        all(0x20 <= ord(c) <= 0x7E for c in value)
        and value == value.strip(" ")
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    assert (encoded == value) == plain_safe


@pytest.mark.parametrize(
    ("name", "encoded"),
    [
        ("get_weather", "get_weather"),
        ("file:///projects/myapp/config.json", "file:///projects/myapp/config.json"),
        ("Create File Share", "Create File Share"),
        ("天气", "=?base64?5aSp5rCU?="),
        (" spaced", "=?base64?IHNwYWNlZA==?="),
    ],
)
def test_mcp_name_uses_the_same_encoding(name: str, encoded: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Standard Request Headers" and "Value
    Encoding": "The same encoding rule applies to the `Mcp-Name` header value")."""
    assert mcp_name_header(name) == encoded


def test_mcp_name_of_a_non_string_is_a_type_error() -> None:
    """conduit-defined: `params.name` is always a string; anything else is a caller bug."""
    with pytest.raises(TypeError):
        mcp_name_header(5)  # type: ignore[arg-type]


# -- Mcp-Param headers ------------------------------------------------------------------------

CONFORMANCE_SCHEMA = obj(
    region={"type": "string", X: "Region"},
    priority={"type": "integer", X: "Priority"},
    verbose={"type": "boolean", X: "Verbose"},
    debug={"type": "boolean", X: "Debug"},
    empty_val={"type": "string", X: "EmptyVal"},
    method_val={"type": "string", X: "Method"},
    float_val={"type": "number"},
    non_ascii_val={"type": "string", X: "NonAscii"},
    whitespace_val={"type": "string", X: "Whitespace"},
    internal_space_val={"type": "string", X: "InternalSpace"},
    control_char_val={"type": "string", X: "ControlChar"},
    tab_val={"type": "string", X: "Tab"},
    query={"type": "string"},
)


def test_param_headers_follow_the_spec_example() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension" example: `region` =
    "us-west1" gives `Mcp-Param-Region: us-west1`; `query` is not mirrored)."""
    arguments = {"region": "us-west1", "query": "SELECT * FROM users"}
    assert mcp_param_headers(tool(SPEC_EXAMPLE), arguments) == {"Mcp-Param-Region": "us-west1"}


def test_param_headers_encode_each_annotated_value() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Client Behavior" and "Value Encoding"; the
    argument values are those of the official conformance scenario http-custom-headers)."""
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": False,
        "debug": True,
        "empty_val": "",
        "method_val": "test-method",
        "float_val": 3.14159,
        "non_ascii_val": "Hello, 世界",
        "whitespace_val": " padded ",
        "internal_space_val": "us west 1",
        "control_char_val": "line1\nline2",
        "tab_val": "\tindented",
        "query": "SELECT * FROM users",
    }
    assert mcp_param_headers(tool(CONFORMANCE_SCHEMA), arguments) == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Debug": "true",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-Method": "test-method",
        "Mcp-Param-NonAscii": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        "Mcp-Param-Whitespace": "=?base64?IHBhZGRlZCA=?=",
        "Mcp-Param-InternalSpace": "us west 1",
        "Mcp-Param-ControlChar": "=?base64?bGluZTEKbGluZTI=?=",
        "Mcp-Param-Tab": "=?base64?CWluZGVudGVk?=",
    }


def test_null_and_missing_values_omit_their_headers() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Client Behavior" table: a `null` value or a
    parameter not in arguments: the client MUST omit the header)."""
    arguments = {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"}
    assert mcp_param_headers(tool(CONFORMANCE_SCHEMA), arguments) == {
        "Mcp-Param-Region": "us-east1",
        "Mcp-Param-Priority": "1",
    }
    assert mcp_param_headers(tool(CONFORMANCE_SCHEMA), {}) == {}
    assert mcp_param_headers(tool(CONFORMANCE_SCHEMA), None) == {}


def test_nested_values_are_read_at_their_exact_property_path() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": extraction reads the
    instance value at the exact property path; no value there omits the header)."""
    t = tool(obj(options=obj(limit={"type": "integer", X: "Limit"})))
    assert mcp_param_headers(t, {"options": {"limit": 10}}) == {"Mcp-Param-Limit": "10"}
    for arguments in ({"options": None}, {"options": "x"}, {"options": [10]}, {"limit": 10}):
        assert mcp_param_headers(t, arguments) == {}


def test_a_precomputed_header_map_gives_the_same_headers() -> None:
    """conduit-defined: the fast path skips the schema walk."""
    t = tool(CONFORMANCE_SCHEMA)
    arguments = {"region": "r", "priority": -3, "debug": True}
    assert mcp_param_headers(header_map(t), arguments) == mcp_param_headers(t, arguments)


@pytest.mark.parametrize(
    ("value", "problem"),
    [(2**53, "integer_out_of_range"), (1.5, "not_an_integer"), ([1], "unsupported_type")],
)
def test_an_unencodable_argument_is_an_error_at_its_path(value: object, problem: str) -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": integer values MUST be in
    the safe range); conduit-defined: the path points into `arguments`."""
    t = tool(obj(o=obj(n={"type": "integer", X: "N"})))
    with pytest.raises(Error) as caught:
        mcp_param_headers(t, {"o": {"n": value}})
    err = caught.value
    assert (err.kind, err.reason, err.path) == ("policy", "header_value_unencodable", ("o", "n"))
    assert err.details["problem"] == problem


def test_values_are_converted_by_their_own_json_type() -> None:
    """conduit-defined: the server compares the header with the body value; checking that the
    value matches the declared `type` is argument validation's job."""
    t = tool(obj(s={"type": "string", X: "S"}))
    assert mcp_param_headers(t, {"s": 7}) == {"Mcp-Param-S": "7"}
    assert mcp_param_headers(t, {"s": True}) == {"Mcp-Param-S": "true"}


def test_param_headers_of_an_invalid_tool_raise_the_finding() -> None:
    """Spec-mandated (2026-07-28 streamable-http "Schema Extension": such a tool MUST be
    excluded, so it has no headers to build)."""
    t = tool(obj(a={"type": "number", X: "A"}))
    with pytest.raises(Error) as caught:
        mcp_param_headers(t, {"a": 1})
    assert caught.value.reason == "x_mcp_header_type"


def test_param_headers_reject_caller_bugs_with_type_errors() -> None:
    """conduit-defined."""
    with pytest.raises(TypeError):
        mcp_param_headers(tool(SPEC_EXAMPLE), ["region"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mcp_param_headers("t", {})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "problem", "message"),
    [
        pytest.param(1e300, "integer_out_of_range", "a number outside", id="1e300"),
        pytest.param(-(2.0**60), "integer_out_of_range", "a number outside", id="float--2^60"),
        pytest.param(float("inf"), "not_an_integer", "a non-finite number", id="inf"),
        pytest.param(2**60, "integer_out_of_range", "an integer outside", id="int-2^60"),
    ],
)
def test_an_unencodable_number_is_reported_as_the_type_it_was_sent_as(
    value: object, problem: str, message: str
) -> None:
    """conduit-defined (issue 15 item 10): `1e300` is a JSON number the caller sent as a float;
    the error names a number, not the 301-digit integer `int(1e300)` would make of it."""
    with pytest.raises(Error) as caught:
        encode_header_value(value)
    expected_type = "integer" if isinstance(value, int) else "number"
    assert caught.value.details == {"problem": problem, "got": expected_type}
    assert caught.value.message.startswith(message)


@pytest.mark.parametrize(
    ("transport", "version", "expected"),
    [
        ("streamable-http", "2026-07-28", True),
        ("streamable-http", "draft", True),
        ("streamable-http", "2025-11-25", False),
        ("stdio", "2026-07-28", False),
    ],
)
def test_param_headers_apply_on_streamable_http_from_2026_07_28(
    transport: str, version: str, expected: bool
) -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Custom Headers from Tool
    Parameters": a Streamable HTTP extension of that revision; stdio clients MAY ignore it)."""
    assert param_headers_apply(transport, version) is expected
