"""validate_arguments: a tools/call request's `arguments` against the tool's `inputSchema`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conduit_mcp.client import (
    Error,
    OutputValidation,
    Tool,
    intake,
    validate_arguments,
)

NEW = "2026-07-28"
WEATHER = {
    "name": "get_weather",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
}


def tool(schema: Any = None) -> Tool:
    raw = WEATHER if schema is None else {"name": "t", "inputSchema": schema}
    return Tool.from_wire("s", raw)


def test_conforming_arguments_are_valid() -> None:
    """Spec-mandated (JSON Schema 2020-12, the default dialect from 2025-11-25)."""
    out = validate_arguments(tool(), {"city": "Paris", "days": 3}, protocol_version=NEW)
    assert isinstance(out, OutputValidation)
    assert (out.outcome, out.errors, out.skip_reason) == ("valid", (), None)
    assert out.dialect == "https://json-schema.org/draft/2020-12/schema"


def test_each_broken_rule_is_an_issue_with_its_path() -> None:
    """Spec-mandated (JSON Schema 2020-12 validation: type, maximum, additionalProperties;
    worked out by hand from WEATHER)."""
    out = validate_arguments(
        tool(), {"city": 5, "days": 9, "units": "metric"}, protocol_version=NEW
    )
    assert out.outcome == "invalid"
    assert [(e.path, e.keyword, e.kind) for e in out.errors] == [
        ((), "additionalProperties", "instance"),
        (("city",), "type", "instance"),
        (("days",), "maximum", "instance"),
    ]
    assert out.errors[1].message == "expected string, got integer"
    assert out.errors[1].json_path == "$.city"


def test_a_missing_required_argument_is_reported_at_the_root() -> None:
    """Spec-mandated (JSON Schema 2020-12 validation 6.5.3 `required`)."""
    out = validate_arguments(tool(), {}, protocol_version=NEW)
    assert [(e.path, e.keyword, e.message) for e in out.errors] == [
        ((), "required", 'required property "city" is missing')
    ]


def test_absent_arguments_are_validated_as_an_empty_object() -> None:
    """Spec-mandated (schema `CallToolRequestParams.arguments` is optional): `None` is read as
    `{}`, so a required argument is still missing."""
    assert validate_arguments(tool(), None, protocol_version=NEW).errors[0].keyword == "required"
    assert validate_arguments(tool({"type": "object"}), None, protocol_version=NEW).valid


@pytest.mark.parametrize("arguments", [[], "x", 3, True], ids=repr)
def test_arguments_that_are_not_an_object_are_a_protocol_issue(arguments: Any) -> None:
    """Spec-mandated (schema `CallToolRequestParams.arguments`: an object)."""
    out = validate_arguments(tool(), arguments, protocol_version=NEW)
    assert [(e.path, e.keyword, e.kind) for e in out.errors] == [((), "type", "protocol")]


def test_messages_never_echo_the_value() -> None:
    """conduit-defined: messages name types and rules, never the argument's value."""
    secret = "sk-live-0123456789abcdef"
    out = validate_arguments(
        tool(), {"city": [secret], "days": secret, secret: secret}, protocol_version=NEW
    )
    assert out.outcome == "invalid"
    assert all(secret not in e.message for e in out.errors if e.keyword != "additionalProperties")
    # Property names may appear (they are keys, not values); the values never do.
    assert all(
        f'"{secret}"' not in e.message or e.keyword == "additionalProperties" for e in out.errors
    )


def test_draft_07_is_the_default_before_2025_11_25() -> None:
    """Spec-mandated (2025-06-18 schema.json is draft-07; 2025-11-25 basic "JSON Schema Usage"
    makes 2020-12 the default): array-form `items` is a tuple in draft-07 only."""
    schema = {"type": "object", "properties": {"p": {"items": [{"type": "string"}]}}}
    assert validate_arguments(tool(schema), {"p": [1]}, protocol_version="2025-06-18").outcome == (
        "invalid"
    )
    with_2020 = validate_arguments(tool(schema), {"p": [1]}, protocol_version=NEW)
    assert with_2020.outcome == "invalid" and with_2020.errors[0].kind == "schema"


def test_an_invalid_input_schema_is_a_schema_issue() -> None:
    """Spec-mandated (basic "JSON Schema Usage": an invalid schema SHOULD be rejected)."""
    out = validate_arguments(tool({"type": "objekt"}), {}, protocol_version=NEW)
    assert [(e.keyword, e.kind, e.schema_path) for e in out.errors] == [
        ("type", "schema", ("type",))
    ]


def test_errors_of_the_caller_and_of_the_schema_dialect() -> None:
    """conduit-defined: wrong argument types are caller bugs; an unknown dialect is our Error."""
    with pytest.raises(TypeError):
        validate_arguments(WEATHER, {}, protocol_version=NEW)  # type: ignore[arg-type]
    with pytest.raises(Error) as info:
        validate_arguments(tool(), {}, protocol_version="1999-01-01")
    assert info.value.reason == "unknown_protocol_version"
    with pytest.raises(Error) as info:
        validate_arguments(tool({"$schema": "urn:x"}), {}, protocol_version=NEW)
    assert (info.value.reason, info.value.path) == (
        "unsupported_schema_dialect",
        ("inputSchema", "$schema"),
    )


def test_too_deep_arguments_for_a_recursive_schema_are_limit_exceeded() -> None:
    """conduit-defined (issue 13 "Limits"): a looping schema bounds the value's depth."""
    schema = {"type": "object", "properties": {"n": {"$ref": "#"}}}
    value: Any = {}
    for _ in range(5_000):
        value = {"n": value}
    with pytest.raises(Error) as info:
        validate_arguments(tool(schema), value, protocol_version=NEW)
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "policy",
        "limit_exceeded",
        ("arguments",),
    )
    assert info.value.details["depth"] == 5_001


def test_nothing_the_caller_passed_is_mutated() -> None:
    """conduit-defined: the tool and the arguments are left as they were."""
    raw = copy.deepcopy(WEATHER)
    arguments = {"city": "Paris", "extra": [1, {"x": None}]}
    before = copy.deepcopy(arguments)
    validate_arguments(Tool.from_wire("s", raw), arguments, protocol_version=NEW)
    assert raw == WEATHER and arguments == before


def test_intake_warns_about_an_invalid_schema_and_keeps_the_tool() -> None:
    """Spec-mandated (basic "JSON Schema Usage": schemas conform to their dialect; a SHOULD, so
    a warning): the warning names the place in the schema and the meta-schema rule."""
    page = {
        "tools": [
            {"name": "ok", "inputSchema": {"type": "object"}},
            {
                "name": "bad",
                "inputSchema": {"type": "object", "properties": {"a": {"minLength": -1}}},
                "outputSchema": {"type": "object", "required": "a"},
            },
        ]
    }
    got = intake("s", page, transport="stdio", protocol_version="2026-07-28")
    assert [t.name for t in got.tools] == ["ok", "bad"]
    found = [(w.code, w.path) for w in got.warnings]
    assert found == [
        ("input_schema_invalid", ("tools", 1, "inputSchema", "properties", "a", "minLength")),
        ("output_schema_invalid", ("tools", 1, "outputSchema", "required")),
    ]
    details = got.warnings[0].details
    assert details["keyword"] == "minLength"
    assert details["meta_schema_path"][-1] == "minimum"  # 2020-12 nonNegativeInteger


@pytest.mark.slow  # schemas thousands of levels deep
def test_intake_checks_a_schema_of_any_depth_without_crashing() -> None:
    """conduit-defined (issue 13 "Limits"): the engine's meta-schema check would crash on a
    schema ~100,000 levels deep; intake compiles such a schema instead, which stops at its
    recursion limit: a warning (reason `limit_exceeded`), and the tool is still accepted."""
    schema: Any = {}
    for _ in range(100_000):
        schema = {"items": schema}
    page = {
        "tools": [{"name": "deep", "inputSchema": {"type": "object", "properties": {"a": schema}}}]
    }
    got = intake("s", page, transport="stdio", protocol_version="2026-07-28")
    assert [t.name for t in got.tools] == ["deep"]
    assert [(w.code, w.path, w.details.get("reason")) for w in got.warnings] == [
        ("input_schema_invalid", ("tools", 0, "inputSchema"), "limit_exceeded")
    ]


def test_a_cyclic_input_schema_is_the_one_cycle_error() -> None:
    """conduit-defined (issue 15 item 1): a hand-built schema that contains itself is not
    JSON: Error protocol/invalid_json (as canonical_json), never a TypeError or a hang."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["a"] = schema
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": schema})
    with pytest.raises(Error) as info:
        validate_arguments(tool, {"a": {}}, protocol_version="2026-07-28")
    got = (info.value.kind, info.value.reason, info.value.path, dict(info.value.details))
    assert got == (
        "protocol",
        "invalid_json",
        ("inputSchema",),
        {"expected": "a JSON value", "got": "cycle"},
    )
