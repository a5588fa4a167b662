"""Tests for `validate_structured` (`_validate.py`): structuredContent against outputSchema.

`jsonschema` is the reference implementation: where an expected outcome is not a literal worked
out from the spec text, it is what plain `jsonschema` (the dialect's class, no format checker)
says about the same schema and value.
"""

from __future__ import annotations

import copy
import glob
import json
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import (
    Error,
    OutputIssue,
    OutputValidation,
    Tool,
    ToolResult,
    validate_structured,
)
from conduit_mcp.client import _validate as v
from tests.corpus import CORPUS, all_tools, cases
from tests.property.profiles import bounded

SPEC_EXAMPLES = Path(__file__).resolve().parents[2] / "schema" / "2026-07-28" / "examples"
NEW = "2026-07-28"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D2020 = "https://json-schema.org/draft/2020-12/schema"
REFERENCE = {
    DRAFT_07: jsonschema.Draft7Validator,
    D2019: jsonschema.Draft201909Validator,
    D2020: jsonschema.Draft202012Validator,
}


def tool_with(schema: Any, **extra: Any) -> Tool:
    raw = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema, **extra}
    return Tool.from_wire("server", raw)


def result_with(*structured: Any, **extra: Any) -> ToolResult:
    """A result with `structuredContent` set to the one positional value (absent if none)."""
    raw: dict[str, Any] = {"content": [{"type": "text", "text": "x"}], **extra}
    if structured:
        (raw["structuredContent"],) = structured
    return ToolResult.from_wire(raw)


def check(schema: Any, *structured: Any, version: str = NEW, **extra: Any) -> OutputValidation:
    return validate_structured(
        result_with(*structured, **extra), tool_with(schema), protocol_version=version
    )


def reference_valid(schema: dict[str, Any], instance: Any, dialect: str = D2020) -> bool:
    cls = REFERENCE[v._DIALECT_BY_URI.get(schema.get("$schema", ""), dialect)]
    return bool(cls(schema).is_valid(instance))


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# -- the fixture cases ----------------------------------------------------------------------------

OUTPUT_CASES = [
    (stem, case) for stem, case in cases() if "output_validation" in case["expect"]["checks"]
]


@pytest.mark.parametrize(("stem", "case"), OUTPUT_CASES, ids=[s for s, _ in OUTPUT_CASES])
def test_fixture_case_output_validation(stem: str, case: dict[str, Any]) -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema" and "Structured Content"): each
    case's expected outcome, with structuredContent left exactly as sent."""
    checks = case["expect"]["checks"]
    raw = copy.deepcopy(case["input"])
    result = ToolResult.from_wire(raw)
    tool = tool_with(copy.deepcopy(checks["output_validation"]["schema"]))
    outcome = validate_structured(result, tool, protocol_version=NEW)
    assert outcome.outcome == checks["output_validation"]["outcome"]
    if "structured_content" in checks:
        assert result.structured == checks["structured_content"]
    assert raw == case["input"]


def test_fixture_cases_cover_every_outcome_but_invalid() -> None:
    """conduit-defined: the cases with output checks are the ones named in the task."""
    assert sorted(s for s, _ in OUTPUT_CASES) == [
        "29-result-structured-array",
        "31-result-error-skips-output-validation",
        "33-result-structured-extra-keys-kept",
    ]


# -- skip rules -----------------------------------------------------------------------------------


def test_error_result_is_skipped_even_when_it_would_not_conform() -> None:
    """Spec-mandated (2026-07-28 server/tools "Error Handling": a tool execution error is
    reported with `isError: true`; its content is the error, not the declared output)."""
    out = check({"type": "object", "required": ["x"]}, {"error": "boom"}, isError=True)
    assert (out.outcome, out.skip_reason, out.errors) == ("skipped", "is_error", ())


def test_error_result_without_structured_content_is_skipped() -> None:
    """Spec-mandated (2026-07-28 server/tools "Error Handling")."""
    out = check({"type": "object"}, isError=True)
    assert (out.outcome, out.skip_reason) == ("skipped", "is_error")


@pytest.mark.parametrize("extra", [{}, {"outputSchema": None}], ids=["absent", "null"])
def test_tool_without_output_schema_is_skipped(extra: dict[str, Any]) -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": validation applies "if an output
    schema is provided")."""
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": {"type": "object"}, **extra})
    out = validate_structured(result_with({"a": 1}), tool, protocol_version=NEW)
    assert (out.outcome, out.skip_reason, out.dialect) == ("skipped", "no_output_schema", None)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_revisions_before_output_schemas_existed_are_skipped(version: str) -> None:
    """Spec-mandated (2025-03-26 schema `Tool` has no `outputSchema`; it first appears in
    2025-06-18 server/tools "Output Schema")."""
    out = check({"type": "object", "required": ["x"]}, {}, version=version)
    assert (out.outcome, out.skip_reason) == ("skipped", "not_in_protocol_version")


@pytest.mark.parametrize("schema", ["object", 1, True, ["type"]], ids=repr)
def test_output_schema_that_is_not_an_object_is_an_invalid_tool(schema: object) -> None:
    """Spec-mandated (2026-07-28 schema `Tool.outputSchema`: type object)."""
    with pytest.raises(Error) as info:
        check(schema, {})
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "protocol",
        "invalid_tool",
        ("outputSchema",),
    )


# -- presence and what is validated -------------------------------------------------------------


def test_missing_structured_content_is_invalid() -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": if an output schema is provided,
    servers MUST provide structured results that conform to it)."""
    out = check({"type": "object"})
    assert out.outcome == "invalid"
    (issue,) = out.errors
    assert (issue.path, issue.keyword, issue.kind) == ((), "structuredContent", "protocol")


@pytest.mark.parametrize("value", [0, False, "", [], None], ids=repr)
def test_falsy_structured_content_is_present_and_validated(value: object) -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.structuredContent`: any JSON value, null
    included): presence is the key, not truthiness."""
    out = check({"type": "object"}, value)
    assert out.outcome == "invalid"
    assert [(e.path, e.keyword, e.kind) for e in out.errors] == [((), "type", "instance")]
    assert check({"const": value}, value).outcome == "valid"


def test_only_structured_content_is_validated_never_the_envelope() -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": the schema describes the
    structured result, not the CallToolResult)."""
    schema = {
        "type": "object",
        "properties": {"content": {"type": "integer"}},
        "required": ["content"],
        "additionalProperties": False,
    }
    out = check(schema, {"content": 1}, _meta={"x": 1}, extraKey=True)
    assert out.outcome == "valid"
    assert check(schema, {}).outcome == "invalid"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_structured_content_must_be_an_object_before_2026_07_28(version: str) -> None:
    """Spec-mandated (2025-11-25 schema `CallToolResult.structuredContent`: type object;
    server/tools "Structured Content": "returned as a JSON object")."""
    out = check({"type": "array"}, [1, 2], version=version)
    assert out.outcome == "invalid"
    assert [(e.path, e.keyword, e.kind) for e in out.errors] == [((), "type", "protocol")]


def test_array_structured_content_is_allowed_on_2026_07_28() -> None:
    """Spec-mandated (2026-07-28 server/tools "Structured Content": any JSON value)."""
    assert check({"type": "array"}, [1, 2]).outcome == "valid"


# -- nothing is changed ---------------------------------------------------------------------------


def test_undeclared_keys_are_neither_stripped_nor_reported() -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": JSON Schema semantics; without
    `additionalProperties: false` extra keys are allowed)."""
    value = {"id": 7, "label": "seven", "extra": True}
    result = result_with(value)
    out = validate_structured(
        result,
        tool_with({"type": "object", "properties": {"id": {"type": "integer"}}}),
        protocol_version=NEW,
    )
    assert out.outcome == "valid"
    assert result.structured == {"id": 7, "label": "seven", "extra": True}


def test_defaults_are_not_filled_in_and_values_not_coerced() -> None:
    """conduit-defined: validation never changes the value (no defaults, no coercion)."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "default": 5}, "s": {"type": "string"}},
    }
    result = result_with({"s": "1"})
    assert validate_structured(result, tool_with(schema), protocol_version=NEW).valid
    assert result.structured == {"s": "1"}
    assert check({"type": "integer"}, "1").outcome == "invalid"


@pytest.mark.parametrize(
    ("schema", "value", "outcome"),
    [
        ({"type": "integer"}, 2**70, "valid"),
        ({"const": 2**53 + 1}, 2**53 + 1, "valid"),
        ({"const": 2**53 + 1}, 2**53, "invalid"),
        ({"enum": [2**64 + 1]}, 2**64 + 1, "valid"),
        ({"maximum": 2**53}, 2**53 + 1, "invalid"),
        ({"maximum": 2**70}, 2**70, "valid"),
        ({"multipleOf": 3}, 3 * (2**60 + 1), "valid"),
        ({"type": "integer"}, 9007199254740993.0, "valid"),
    ],
    ids=repr,
)
def test_integers_beyond_2_53_are_compared_exactly(schema: Any, value: int, outcome: str) -> None:
    """conduit-defined (JSON Schema 2020-12 Validation 6.1/6.2 compare numbers by value):
    integers are never rounded through a double."""
    result = result_with(value)
    assert validate_structured(result, tool_with(schema), protocol_version=NEW).outcome == outcome
    assert result.structured == value and type(result.structured) is type(value)


CORPUS_SCHEMAS = [
    tool["outputSchema"] for _, _, tool in all_tools() if isinstance(tool.get("outputSchema"), dict)
]


def test_nothing_the_caller_passed_is_mutated() -> None:
    """conduit-defined: the result, the tool and the schema are left exactly as they were."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "default": "x"}, "b": {"$ref": "#/$defs/b"}},
        "$defs": {"b": {"type": "array", "items": {"type": "integer"}}},
        "required": ["a"],
    }
    for value in ({"a": "ok", "b": [1, 2]}, {"b": ["x"]}, [], None):
        raw = {"content": [], "structuredContent": copy.deepcopy(value)}
        tool_raw = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}
        before = copy.deepcopy((raw, tool_raw))
        validate_structured(
            ToolResult.from_wire(raw), Tool.from_wire("s", tool_raw), protocol_version=NEW
        )
        assert (raw, tool_raw) == before


# -- dialects --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "canonical"),
    [
        ("http://json-schema.org/draft-07/schema#", DRAFT_07),
        ("http://json-schema.org/draft-07/schema", DRAFT_07),
        ("https://json-schema.org/draft-07/schema#", DRAFT_07),
        ("https://json-schema.org/draft/2019-09/schema", D2019),
        ("https://json-schema.org/draft/2019-09/schema#", D2019),
        ("http://json-schema.org/draft/2019-09/schema", D2019),
        ("https://json-schema.org/draft/2020-12/schema", D2020),
        ("https://json-schema.org/draft/2020-12/schema#", D2020),
        ("http://json-schema.org/draft/2020-12/schema#", D2020),
    ],
)
def test_declared_dialect_is_used(declared: str, canonical: str) -> None:
    """Spec-mandated (2026-07-28 basic "JSON Schema Usage", "Schema Dialect": schemas MAY name a
    dialect in `$schema`; implementations MUST validate by the declared dialect)."""
    out = check({"$schema": declared, "type": "object"}, {})
    assert (out.outcome, out.dialect) == ("valid", canonical)


@pytest.mark.parametrize(
    "declared",
    [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "https://json-schema.org/draft/2021-01/schema",
        "https://example.com/my-dialect",
        "",
        "HTTPS://JSON-SCHEMA.ORG/DRAFT/2020-12/SCHEMA",
        7,
        None,
        {"$id": D2020},
    ],
    ids=repr,
)
def test_unsupported_dialect_is_an_error_not_a_crash(declared: object) -> None:
    """Spec-mandated (2026-07-28 basic "JSON Schema Usage", "Implementation Requirements":
    implementations MUST handle unsupported dialects gracefully by returning an appropriate
    error indicating the dialect is not supported)."""
    with pytest.raises(Error) as info:
        check({"$schema": declared, "type": "object"}, {})
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "protocol",
        "unsupported_schema_dialect",
        ("outputSchema", "$schema"),
    )


@pytest.mark.parametrize(
    ("version", "dialect", "outcome"),
    [
        ("2025-06-18", DRAFT_07, "valid"),
        ("2025-11-25", D2020, "invalid"),
        ("2026-07-28", D2020, "invalid"),
        ("draft", D2020, "invalid"),
    ],
)
def test_default_dialect_depends_on_protocol_version(
    version: str, dialect: str, outcome: str
) -> None:
    """Spec-mandated (2025-11-25 and 2026-07-28 basic "JSON Schema Usage": without `$schema` the
    dialect is 2020-12). conduit-defined for 2025-06-18, whose spec names no default: draft-07,
    the dialect of that revision's own schema.json. Told apart by a `$ref` sibling: draft-07
    ignores it (draft-07 Core 8.3), 2020-12 applies it (2020-12 Core 8.2.3.1)."""
    # structuredContent is an object on every revision; the sibling sits one level down.
    schema = {
        "type": "object",
        "properties": {"v": {"$ref": "#/definitions/s", "maxLength": 1}},
        "definitions": {"s": {"type": "string"}},
    }
    out = validate_structured(
        result_with({"v": "abc"}), tool_with(schema), protocol_version=version
    )
    assert (out.dialect, out.outcome) == (dialect, outcome)


@pytest.mark.parametrize(
    ("dialect", "outcome"), [(DRAFT_07, "valid"), (D2019, "valid"), (D2020, "invalid")]
)
def test_prefix_items_is_a_2020_12_keyword_only(dialect: str, outcome: str) -> None:
    """Spec-mandated (JSON Schema 2020-12 Core 10.3.1.1 `prefixItems`; unknown keywords are
    ignored in draft-07 and 2019-09)."""
    assert check({"$schema": dialect, "prefixItems": [{"type": "string"}]}, [1]).outcome == outcome


@pytest.mark.parametrize("dialect", [DRAFT_07, D2019, D2020])
def test_format_is_an_annotation_not_an_assertion(dialect: str) -> None:
    """conduit-defined (JSON Schema 2020-12 Validation 7.2: format assertion is off by default;
    draft-07 7.2 makes it optional): `format` never fails a value."""
    schema = {"$schema": dialect, "type": "string", "format": "email"}
    assert check(schema, "not an e-mail").outcome == "valid"
    assert check({"$schema": dialect, "format": "date-time"}, "yesterday").outcome == "valid"


# -- $ref resolution -------------------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail the test if anything opens a connection or a URL."""
    attempts: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args)[:80])
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return attempts


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"$ref": "https://example.com/schemas/a.json"}}},
        {"properties": {"a": {"$ref": "http://127.0.0.1:8080/a.json#/x"}}},
        {"$id": "https://example.com/root.json", "properties": {"a": {"$ref": "other.json"}}},
        {"properties": {"a": {"$ref": "file:///etc/passwd"}}},
    ],
    ids=["https", "loopback", "relative-to-id", "file"],
)
def test_remote_ref_is_a_validation_error_and_never_fetched(
    schema: dict[str, Any], no_network: list[str]
) -> None:
    """Spec-mandated (2026-07-28 basic "JSON Schema Usage", "$ref Resolution": implementations
    MUST NOT automatically dereference network `$ref`s; schemas that fail to validate due to an
    unresolved external `$ref` SHOULD be rejected rather than treated as permissive)."""
    out = check(schema, {"a": 1})
    assert out.outcome == "invalid"
    (issue,) = out.errors
    assert (issue.keyword, issue.kind, issue.path) == ("$ref", "schema", ())
    assert issue.message.startswith("remote $ref not resolved")
    assert no_network == []


def test_local_refs_resolve(no_network: list[str]) -> None:
    """Spec-mandated (JSON Schema 2020-12 Core 8.2.3.1 `$ref`, 8.2.4 `$defs`; draft-07
    `definitions`): local references resolve without the network."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a"},
            "b": {"$ref": "#/definitions/b"},
            "c": {"$ref": "#/properties/a"},
            "child": {"$ref": "#"},
            "weird": {"$ref": "#/$defs/with~1slash~0tilde"},
        },
        "$defs": {"a": {"type": "string"}, "with/slash~tilde": {"type": "boolean"}},
        "definitions": {"b": {"type": "integer"}},
    }
    good = {"a": "x", "b": 1, "c": "y", "weird": True, "child": {"a": "z", "child": {}}}
    assert check(schema, good).outcome == "valid"
    out = check(schema, {"a": 1, "child": {"b": "no"}, "weird": 0})
    assert [(e.path, e.keyword) for e in out.errors] == [
        (("a",), "type"),
        (("child", "b"), "type"),
        (("weird",), "type"),
    ]
    assert no_network == []


def test_dangling_local_ref_is_a_schema_issue() -> None:
    """Spec-mandated (2026-07-28 basic "JSON Schema Usage", "$ref Resolution": a schema that
    cannot be applied because a reference does not resolve SHOULD be rejected)."""
    out = check({"properties": {"a": {"$ref": "#/$defs/missing"}}}, {"a": 1})
    assert out.outcome == "invalid"
    (issue,) = out.errors
    assert (issue.keyword, issue.kind) == ("$ref", "schema")
    assert issue.message == "$ref not resolved: nothing at #/$defs/missing in the schema"


@pytest.mark.parametrize(
    ("schema", "value", "outcome"),
    [
        ({"uniqueItems": True}, [1, 1.0], "invalid"),
        ({"uniqueItems": True}, [1, True], "valid"),
        ({"uniqueItems": True}, [{"a": [0]}, {"a": [False]}], "valid"),
        ({"uniqueItems": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], "invalid"),
        ({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 2}, "invalid"),
        ({"allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": False}, {"b": 1}, "valid"),
        ({"enum": [1]}, 1.0, "valid"),
        ({"enum": [1]}, True, "invalid"),
        ({"const": {"a": [1, "x"]}}, {"a": [1.0, "x"]}, "valid"),
        ({"type": "integer"}, 1.0, "valid"),
        ({"type": "number"}, False, "invalid"),
        ({"multipleOf": 0.5}, 1.5, "valid"),
        ({"multipleOf": 0.5}, 1.25, "invalid"),
        ({"multipleOf": 0.01}, 10**300, "valid"),
    ],
    ids=repr,
)
def test_json_value_semantics(schema: dict[str, Any], value: Any, outcome: str) -> None:
    """Spec-mandated (JSON Schema 2020-12 Core 4.2.2 instance equality: 1 and 1.0 are equal,
    booleans are not numbers; Validation 6.4.3 `uniqueItems`, 6.2.1 `multipleOf`; Core 11.3
    `unevaluatedProperties`)."""
    assert check(schema, value).outcome == outcome
    assert reference_valid(schema, value) is (outcome == "valid")


def test_ref_to_the_schemas_own_id_resolves_locally(no_network: list[str]) -> None:
    """Spec-mandated (JSON Schema 2020-12 Core 8.2.1 `$id` sets the base URI; a reference to it
    is local)."""
    schema = {
        "$id": "https://example.com/root.json",
        "properties": {"a": {"$ref": "https://example.com/root.json#/$defs/a"}},
        "$defs": {"a": {"type": "string"}},
    }
    assert check(schema, {"a": "x"}).outcome == "valid"
    assert check(schema, {"a": 1}).outcome == "invalid"
    assert no_network == []


def test_ref_to_a_meta_schema_resolves_from_the_bundled_copy(no_network: list[str]) -> None:
    """conduit-defined: the JSON Schema meta-schemas ship with `jsonschema`; no fetch."""
    assert check({"$ref": D2020}, {"type": "object"}).outcome == "valid"
    assert check({"$ref": D2020}, {"type": 12}).outcome == "invalid"
    assert no_network == []


# -- invalid schemas and hostile input ------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "keyword", "where"),
    [
        ({"type": 12}, "type", ("type",)),
        ({"type": "objekt"}, "type", ("type",)),
        ({"properties": {"a": {"minLength": -1}}}, "minLength", ("properties", "a", "minLength")),
        ({"required": "a"}, "required", ("required",)),
        ({"pattern": "(unclosed"}, "pattern", ("pattern",)),
    ],
    ids=repr,
)
def test_invalid_schema_is_an_invalid_outcome_with_a_schema_issue(
    schema: dict[str, Any], keyword: str, where: tuple[Any, ...]
) -> None:
    """Spec-mandated (2026-07-28 basic "JSON Schema Usage", "Schema Validation": schemas MUST be
    valid according to their dialect). conduit-defined: a schema that is not is reported as an
    `invalid` outcome with a `schema` issue pointing into the schema, never a crash."""
    out = check(schema, {"a": "x"})
    assert out.outcome == "invalid"
    (issue,) = out.errors
    assert (issue.kind, issue.keyword, issue.schema_path, issue.path) == (
        "schema",
        keyword,
        where,
        (),
    )


def _nested_list(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _nested_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_deep_structured_content_with_a_flat_schema_validates() -> None:
    """conduit-defined: 10,000 levels of nesting do not reach the validator's recursion when the
    schema does not recurse."""
    assert check({"type": "object"}, _nested_dict(10_000)).outcome == "valid"
    assert check({"type": "array"}, _nested_list(10_000)).outcome == "valid"


def test_deep_structured_content_of_the_wrong_type_is_reported_without_recursion() -> None:
    """conduit-defined: issue messages name the JSON type, so a deep value is never printed.
    Within `DESCRIBABLE_DEPTH` levels each issue has its path; deeper, the engine gives the
    verdict but cannot say where, and one root issue says so (jsonschema-rs 0.61.2 describes
    values up to 254 levels)."""
    out = check({"type": "string"}, _nested_list(200))
    assert [(e.path, e.keyword, e.message) for e in out.errors] == [
        ((), "type", "expected string, got array")
    ]
    out = check({"properties": {"a": {"type": "string"}}}, _nested_dict(200))
    assert [(e.path, e.keyword) for e in out.errors] == [(("a",), "type")]
    out = check({"type": "string"}, _nested_list(10_000))
    assert out.outcome == "invalid"
    assert [(e.path, e.keyword, e.kind) for e in out.errors] == [
        ((), "structuredContent", "instance")
    ]
    assert "10001 levels" in out.errors[0].message


def test_deep_structured_content_against_a_recursive_schema_is_limit_exceeded() -> None:
    """conduit-defined: when the interpreter stack runs out, the result is refused with
    `limit_exceeded` (a local limit, kind policy), never a RecursionError."""
    with pytest.raises(Error) as info:
        check({"items": {"$ref": "#"}}, _nested_list(10_000))
    err = info.value
    assert (err.kind, err.reason, err.path) == ("policy", "limit_exceeded", ("structuredContent",))
    assert err.details["depth"] == 10_001


def test_schema_that_recurses_without_consuming_input_is_answered() -> None:
    """conduit-defined: `{"allOf": [{"$ref": "#"}]}` loops without consuming input; the engine
    cuts the loop and answers (before issue 13 this was `limit_exceeded`). Hand check: the
    loop adds no constraint, so `{"a": 1}` is valid; with `"type": "string"` beside it, only
    `type` issues, one per distinct evaluation path the engine took (never a duplicate)."""
    for _ in range(3):
        assert check({"allOf": [{"$ref": "#"}]}, {"a": 1}).outcome == "valid"
    out = check({"allOf": [{"$ref": "#"}], "type": "string"}, {"a": 1})
    assert {(e.path, e.keyword) for e in out.errors} == {((), "type")}
    assert ("type",) in {e.schema_path for e in out.errors}
    assert len({e.schema_path for e in out.errors}) == len(out.errors)


def test_deeply_nested_schema_is_limit_exceeded() -> None:
    """conduit-defined: a 10,000-level outputSchema cannot be compiled; that is our Error."""
    schema: Any = {"type": "object"}
    for _ in range(10_000):
        schema = {"properties": {"a": schema}}
    with pytest.raises(Error) as info:
        check(schema, {})
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "policy",
        "limit_exceeded",
        ("outputSchema",),
    )


def test_oversized_schema_is_limit_exceeded() -> None:
    """conduit-defined (2026-07-28 basic "Composition-Keyword Resource Use": implementations
    SHOULD bound schema size): an outputSchema over `MAX_SCHEMA_BYTES` is refused."""
    schema = {"type": "object", "description": "x" * v.MAX_SCHEMA_BYTES}
    with pytest.raises(Error) as info:
        check(schema, {})
    assert (info.value.kind, info.value.reason) == ("policy", "limit_exceeded")


def test_issue_messages_never_echo_the_value() -> None:
    """conduit-defined: a message names the place, the rule and the JSON type only."""
    secret = "sk-live-0123456789abcdef"
    schemas: list[dict[str, Any]] = [
        {"type": "integer"},
        {"enum": ["a", "b"]},
        {"maxLength": 3},
        {"pattern": "^a"},
        {"not": {"type": "string"}},
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        {"oneOf": [{"type": "string"}, {"minLength": 1}]},
        {"const": "x"},
        {"format": "email", "type": "number"},
    ]
    for schema in schemas:
        for value in (secret, [secret], {"k": secret}):
            out = check(schema, value)
            assert all(secret not in e.message for e in out.errors), schema


def test_issues_are_capped_and_marked_truncated() -> None:
    """conduit-defined: at most `MAX_ISSUES` issues; `truncated` says more were found."""
    out = check({"items": {"type": "string"}}, list(range(150)))
    assert len(out.errors) == v.MAX_ISSUES
    assert out.truncated is True
    assert check({"items": {"type": "string"}}, list(range(3))).truncated is False


# -- issue paths and order ---------------------------------------------------------------------


def test_issues_have_paths_into_structured_content_sorted_by_path_then_keyword() -> None:
    """conduit-defined: each issue names its place in structuredContent (and in the schema);
    the list is sorted by path, then keyword."""
    schema = {
        "type": "object",
        "required": ["id", "zz"],
        "properties": {
            "id": {"type": "string", "minLength": 2},
            "tags": {"type": "array", "items": {"type": "string"}},
            "x-y": {"enum": ["a"]},
        },
        "additionalProperties": {"type": "integer"},
    }
    value = {"tags": ["ok", 3, None], "x-y": "b", "b": "not-int", "id": 5}
    out = check(schema, value)
    assert [(e.path, e.keyword) for e in out.errors] == [
        ((), "required"),
        (("b",), "type"),
        (("id",), "type"),
        (("tags", 1), "type"),
        (("tags", 2), "type"),
        (("x-y",), "enum"),
    ]
    by_path = {e.path: e for e in out.errors}
    assert by_path[("tags", 1)].json_path == "$.tags[1]"
    assert by_path[("x-y",)].json_path == '$["x-y"]'
    assert by_path[("tags", 1)].schema_path == ("properties", "tags", "items", "type")
    assert by_path[("b",)].schema_path == ("additionalProperties", "type")
    assert [e.message for e in out.errors if e.keyword == "required"] == [
        'required property "zz" is missing'
    ]


def test_output_validation_and_issues_are_frozen_and_hashable() -> None:
    """conduit-defined: reports are immutable values."""
    out = check({"type": "string"}, 1)
    assert hash(out) == hash(check({"type": "string"}, 1))
    with pytest.raises(AttributeError):
        out.outcome = "valid"  # type: ignore[misc]
    issue = out.errors[0]
    assert isinstance(issue, OutputIssue)
    assert str(issue) == "$: expected string, got integer"


# -- the validator cache ------------------------------------------------------------------------


def test_equal_schemas_share_one_compiled_validator() -> None:
    """conduit-defined: the cache key is the schema's content, not the tool or the dict."""
    v.clear_validator_cache()
    one = {"type": "object", "properties": {"a": {"type": "string"}}}
    two = json.loads(json.dumps(one))
    validate_structured(result_with({"a": "x"}), tool_with(one), protocol_version=NEW)
    validate_structured(result_with({"a": "y"}), tool_with(two), protocol_version=NEW)
    assert v.validator_cache_size() == 1


def test_a_schema_changed_in_place_never_reuses_the_old_validator() -> None:
    """conduit-defined: a schema dict whose top-level members change in place gets a validator
    for its new content. (Since issue 13 the warm path trusts the dict it saw: `Tool.from_wire`
    hands `raw` over; a deeper in-place edit needs `clear_validator_cache()`, pinned below.)"""
    schema: dict[str, Any] = {"type": "object"}
    tool = tool_with(schema)
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).valid
    schema["required"] = ["b"]
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).outcome == (
        "invalid"
    )
    del schema["required"]
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).valid


def test_a_deep_in_place_edit_is_picked_up_after_clearing_the_cache() -> None:
    """conduit-defined (the contract above, pinned): the same dict edited below the top level
    keeps its compiled validator until `clear_validator_cache()`."""
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = tool_with(schema)
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).valid
    schema["properties"]["a"]["type"] = "string"
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).valid
    v.clear_validator_cache()
    assert validate_structured(result_with({"a": 1}), tool, protocol_version=NEW).outcome == (
        "invalid"
    )


def test_schemas_whose_digests_collide_do_not_share_a_validator() -> None:
    """conduit-defined: the digest serialiser writes NaN as null; the cache also compares the
    schemas, so `{"enum": [NaN]}` and `{"enum": [null]}` stay apart."""
    with_null = {"enum": [None]}
    with_nan = {"enum": [float("nan")]}
    assert check(with_null, None).outcome == "valid"
    assert check(with_nan, None).outcome == "invalid"
    assert check(with_null, None).outcome == "valid"


def test_cache_is_bounded() -> None:
    """conduit-defined: at most `CACHE_SIZE` compiled validators are kept."""
    v.clear_validator_cache()
    for n in range(v.CACHE_SIZE + 20):
        check({"type": "integer", "minimum": -n}, 1)
    assert v.validator_cache_size() == v.CACHE_SIZE


def test_concurrent_validation_is_safe() -> None:
    """conduit-defined: the cache is shared between threads."""
    v.clear_validator_cache()
    failures: list[str] = []

    def work(k: int) -> None:
        for n in range(60):
            schema = {"type": "object", "properties": {"n": {"maximum": n % 7}}}
            out = check(schema, {"n": k % 9})
            if out.valid is not (k % 9 <= n % 7):
                failures.append(f"{k}/{n}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# -- argument checks ----------------------------------------------------------------------------


def test_arguments_of_the_wrong_type_are_caller_bugs() -> None:
    """conduit-defined: TypeError for caller bugs."""
    tool = tool_with({"type": "object"})
    with pytest.raises(TypeError):
        validate_structured({"structuredContent": {}}, tool, protocol_version=NEW)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        validate_structured(result_with({}), tool.raw, protocol_version=NEW)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        validate_structured(result_with({}), tool, protocol_version=None)  # type: ignore[arg-type]


def test_unknown_protocol_version_is_refused() -> None:
    """conduit-defined: the negotiated revision must be one this library knows."""
    with pytest.raises(Error) as info:
        check({"type": "object"}, {}, version="2030-01-01")
    assert info.value.reason == "unknown_protocol_version"


# -- spec examples ---------------------------------------------------------------------------------


def _spec_tool(name: str) -> Tool:
    return Tool.from_wire("spec", _load(SPEC_EXAMPLES / "Tool" / f"{name}.json"))


def _spec_result(name: str) -> ToolResult:
    return ToolResult.from_wire(_load(SPEC_EXAMPLES / "CallToolResult" / f"{name}.json"))


@pytest.mark.parametrize(
    ("tool", "result", "version", "outcome"),
    [
        (
            "with-output-schema-for-structured-content",
            "result-with-structured-content",
            NEW,
            "valid",
        ),
        ("tool-with-array-output-schema", "result-with-array-structured-content", NEW, "valid"),
        (
            "tool-with-array-output-schema",
            "result-with-array-structured-content",
            "2025-11-25",
            "invalid",
        ),
        ("with-output-schema-for-structured-content", "invalid-tool-input-error", NEW, "skipped"),
        (
            "with-output-schema-for-structured-content",
            "result-with-unstructured-text",
            NEW,
            "invalid",
        ),
        (
            "with-output-schema-for-structured-content",
            "result-with-array-structured-content",
            NEW,
            "invalid",
        ),
        ("tool-with-array-output-schema", "result-with-structured-content", NEW, "invalid"),
        ("with-default-2020-12-input-schema", "result-with-structured-content", NEW, "skipped"),
    ],
)
def test_spec_examples_pair_as_the_spec_says(
    tool: str, result: str, version: str, outcome: str
) -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": "Example valid response for this
    tool" for both example tools; an array is not an object before 2026-07-28; an error result
    and a tool without outputSchema are not validated)."""
    out = validate_structured(_spec_result(result), _spec_tool(tool), protocol_version=version)
    assert out.outcome == outcome


# -- real servers ----------------------------------------------------------------------------------


def _corpus_pairs() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(result file, tool, result) for every captured result of a tool with an outputSchema."""
    pairs = []
    for server_dir in sorted((CORPUS / "results").iterdir()):
        server = server_dir.name
        tools: dict[str, dict[str, Any]] = {}
        for path in sorted(glob.glob(str(CORPUS / "tools" / server / "*.json"))):
            for tool in _load(Path(path)).get("tools", []):
                if isinstance(tool.get("outputSchema"), dict):
                    tools.setdefault(tool["name"], tool)
        for path in sorted(server_dir.glob("*.json")):
            name = path.stem.split("--", 1)[0]
            if name in tools:
                pairs.append((f"{server}/{path.stem}", tools[name], _load(path)))
    return pairs


CORPUS_PAIRS = _corpus_pairs()


def test_corpus_pairs_include_the_get_structured_content_results() -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema"), literal expectations for the
    reference server's structured tool: both cities conform; the `--invalid-enum` call is an
    `isError` result and is skipped."""
    by_name = {name: (tool, raw) for name, tool, raw in CORPUS_PAIRS}
    expected = {
        "server-everything/get-structured-content--new-york": "valid",
        "server-everything/get-structured-content--los-angeles": "valid",
        "server-everything/get-structured-content--invalid-enum": "skipped",
    }
    for name, outcome in expected.items():
        tool, raw = by_name[name]
        out = validate_structured(
            ToolResult.from_wire(raw), Tool.from_wire("s", tool), protocol_version=NEW
        )
        assert (name, out.outcome) == (name, outcome)
    assert len(CORPUS_PAIRS) >= 70


@pytest.mark.parametrize("version", ["2025-11-25", NEW])
@pytest.mark.parametrize(("name", "tool", "raw"), CORPUS_PAIRS, ids=[p[0] for p in CORPUS_PAIRS])
def test_every_corpus_result_validates_as_jsonschema_says(
    name: str, tool: dict[str, Any], raw: dict[str, Any], version: str
) -> None:
    """Spec-mandated (2025-11-25 and 2026-07-28 server/tools "Output Schema"): a captured result
    of a tool with an outputSchema is skipped when `isError`, else valid exactly when the
    reference validator accepts its structuredContent; issues match the reference's."""
    before = copy.deepcopy(raw)
    out = validate_structured(
        ToolResult.from_wire(raw), Tool.from_wire("s", tool), protocol_version=version
    )
    schema = tool["outputSchema"]
    if raw.get("isError") is True:
        assert out.outcome == "skipped"
    elif "structuredContent" not in raw:
        assert out.outcome == "invalid"
    else:
        cls = (
            REFERENCE[v._DIALECT_BY_URI[schema["$schema"]]]
            if "$schema" in schema
            else (jsonschema.Draft202012Validator)
        )
        reference = cls(schema)
        assert out.valid is reference.is_valid(raw["structuredContent"])
        theirs = sorted(
            (tuple(e.absolute_path), e.validator)
            for e in reference.iter_errors(raw["structuredContent"])
        )
        assert sorted((e.path, e.keyword) for e in out.errors) == theirs
    assert raw == before


# Values that exercise the usual failure modes of real schemas.
PROBES: list[Any] = [
    {},
    [],
    None,
    0,
    "",
    True,
    1.5,
    {"a": 1},
    [{"x": "y"}],
    {"name": "n", "id": 1, "content": []},
    {"url": "https://example.com", "max_length": 5},
    {"path": "/a", "content": "x", "paths": ["/a"]},
]


def _all_corpus_schemas() -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for _, _, tool in all_tools():
        if not isinstance(tool, dict):
            continue
        for key in ("outputSchema", "inputSchema"):
            schema = tool.get(key)
            if isinstance(schema, dict):
                text = json.dumps(schema, sort_keys=True)
                if text not in seen:
                    seen.add(text)
                    out.append(schema)
    return out


def test_every_corpus_schema_agrees_with_jsonschema_on_probe_values() -> None:
    """conduit-defined: every real schema in the corpus (input and output schemas, used as
    output schemas) gives the reference validator's verdict and issues on a set of probe
    values through `validate_structured` (jsonschema is the oracle; the engine is jsonschema-rs)."""
    schemas = _all_corpus_schemas()
    assert len(schemas) > 500
    disagreements = []
    for schema in schemas:
        tool = tool_with(schema)
        cls = REFERENCE[v._DIALECT_BY_URI.get(schema.get("$schema", ""), D2020)]
        reference = cls(schema)
        for value in PROBES:
            expected = reference.is_valid(value)
            out = validate_structured(result_with(value), tool, protocol_version=NEW)
            if out.valid is not expected:
                disagreements.append(("validate", schema, value))
            theirs = sorted(
                (tuple(e.absolute_path), e.validator) for e in reference.iter_errors(value)
            )
            if sorted((e.path, e.keyword) for e in out.errors) != theirs:
                disagreements.append(("issues", schema, value))
    assert disagreements == []


# -- properties ------------------------------------------------------------------------------------

KEYS = ["a", "b", "c"]
keys = st.sampled_from(KEYS)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, 1.0, 2.5, -1.0, 2**53 + 1, 10**20])
    | st.sampled_from(["", "a", "ab", "abc", "x1", "b"])
)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(keys, c, max_size=3), max_leaves=8
)
TYPES = ["object", "array", "string", "null", "boolean", "number", "integer"]
small = st.integers(0, 3)


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


def _keyword(
    sub: st.SearchStrategy[Any], dialect: str, refs: bool
) -> st.SearchStrategy[dict[str, Any]]:
    types = st.sampled_from(TYPES) | st.lists(
        st.sampled_from(TYPES), min_size=1, max_size=3, unique=True
    )
    options: list[st.SearchStrategy[dict[str, Any]]] = [
        types.map(lambda t: {"type": t}),
        st.lists(json_values, min_size=1, max_size=3).map(lambda e: {"enum": e}),
        json_values.map(lambda c: {"const": c}),
        st.tuples(
            st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
            st.integers(-2, 2) | st.sampled_from([0.5, 1.5]),
        ).map(lambda kv: {kv[0]: kv[1]}),
        st.sampled_from([2, 3, 0.5, 0.1, 1.5]).map(lambda n: {"multipleOf": n}),
        st.tuples(
            st.sampled_from(
                ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
            ),
            small,
        ).map(lambda kv: {kv[0]: kv[1]}),
        st.sampled_from(["^a", "b$", "[0-9]", "^$"]).map(lambda p: {"pattern": p}),
        st.lists(keys, unique=True, max_size=3).map(lambda r: {"required": r}),
        st.booleans().map(lambda u: {"uniqueItems": u}),
        st.dictionaries(keys, sub, max_size=3).map(lambda p: {"properties": p}),
        sub.map(lambda a: {"additionalProperties": a}),
        st.tuples(st.dictionaries(keys, sub, max_size=2), sub).map(
            lambda pa: {"properties": pa[0], "additionalProperties": pa[1]}
        ),
        st.dictionaries(st.sampled_from(["^a", "b", "^c$"]), sub, max_size=2).map(
            lambda p: {"patternProperties": p}
        ),
        sub.map(lambda s: {"propertyNames": s}),
        sub.map(lambda s: {"items": s}),
        st.tuples(
            sub, st.fixed_dictionaries({}, optional={"minContains": small, "maxContains": small})
        ).map(lambda sc: {"contains": sc[0], **sc[1]}),
        st.tuples(
            st.sampled_from(["allOf", "anyOf", "oneOf"]), st.lists(sub, min_size=1, max_size=3)
        ).map(lambda kv: {kv[0]: kv[1]}),
        sub.map(lambda s: {"not": s}),
        st.tuples(sub, st.fixed_dictionaries({}, optional={"then": sub, "else": sub})).map(
            lambda it: {"if": it[0], **it[1]}
        ),
    ]
    if refs:
        options += [
            st.just({"$ref": "#/$defs/d"}),
            st.just({"$ref": "#/$defs/d", "required": ["a"]}),
            st.just({"properties": {"a": {"$ref": "#"}}}),
        ]
    if dialect == DRAFT_07:
        options += [
            st.tuples(st.lists(sub, max_size=2), sub).map(
                lambda ia: {"items": ia[0], "additionalItems": ia[1]}
            ),
            st.dictionaries(keys, st.lists(keys, unique=True, max_size=2) | sub, max_size=2).map(
                lambda d: {"dependencies": d}
            ),
        ]
    else:
        options += [
            st.dictionaries(keys, st.lists(keys, unique=True, max_size=2), max_size=2).map(
                lambda d: {"dependentRequired": d}
            ),
            st.dictionaries(keys, sub, max_size=2).map(lambda d: {"dependentSchemas": d}),
            sub.map(lambda s: {"unevaluatedProperties": s}),
        ]
    if dialect == D2020:
        options.append(
            st.tuples(
                st.lists(sub, max_size=2), st.fixed_dictionaries({}, optional={"items": sub})
            ).map(lambda pi: {"prefixItems": pi[0], **pi[1]})
        )
    return st.one_of(options)


def _schemas(dialect: str) -> st.SearchStrategy[dict[str, Any]]:
    # `$defs/d` holds no `$ref`, so every reference cycle goes through `properties` and
    # consumes the value: generated schemas always terminate (cycles are tested above).
    def extend(sub: st.SearchStrategy[Any], refs: bool = True) -> st.SearchStrategy[Any]:
        return st.lists(_keyword(sub, dialect, refs), min_size=1, max_size=3).map(_merge)

    leaf = st.booleans() | st.just({}) | st.sampled_from(TYPES).map(lambda t: {"type": t})
    sub = st.recursive(leaf, extend, max_leaves=6)
    plain = st.recursive(leaf, lambda s: extend(s, refs=False), max_leaves=6)
    return st.tuples(extend(sub), plain).map(
        lambda nd: {"$schema": dialect, **nd[0], "$defs": {"d": nd[1]}}
    )


# Built once: a flatmap would rebuild (and re-validate) the strategies on every draw.
schemas = st.one_of([_schemas(dialect) for dialect in (DRAFT_07, D2019, D2020)])


@bounded(200)
@given(schemas, st.lists(json_values, min_size=1, max_size=4))
def test_outcome_matches_jsonschema_on_generated_schemas(
    schema: dict[str, Any], values: list[Any]
) -> None:
    """conduit-defined: on generated schemas of every supported dialect, the outcome is valid
    exactly when the reference validator says so; only our Error escapes; nothing is mutated."""
    cls = REFERENCE[schema["$schema"]]
    try:
        cls.check_schema(schema)
        schema_ok = True
    except jsonschema.SchemaError:
        schema_ok = False
    tool = tool_with(schema)
    before = copy.deepcopy(schema)
    for value in values:
        out = validate_structured(result_with(value), tool, protocol_version=NEW)
        if not schema_ok:
            assert out.outcome == "invalid"
            continue
        assert out.valid is cls(schema).is_valid(value), (schema, value)
    assert schema == before


@bounded(200)
@given(st.sampled_from(CORPUS_SCHEMAS), json_values)
def test_real_schemas_agree_with_jsonschema_on_generated_values(schema: Any, value: Any) -> None:
    """conduit-defined: real output schemas against arbitrary JSON values."""
    out = validate_structured(result_with(value), tool_with(schema), protocol_version=NEW)
    assert out.valid is reference_valid(schema, value)
