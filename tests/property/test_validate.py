"""Property tests: `validate_structured` raises only documented errors and agrees with
`jsonschema` (its fast path included) on the verdict."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import assume, given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool, ToolResult, validate_structured
from tests.property.profiles import bounded
from tests.property.strategies import (
    VERSIONS,
    json_objects,
    json_values,
    mutated,
    real_results,
    real_tools,
)

_REAL_SCHEMAS = tuple(
    t["outputSchema"] for t in real_tools() if isinstance(t.get("outputSchema"), dict)
)
_REAL_STRUCTURED = tuple(
    r["structuredContent"]
    for r in real_results()
    if isinstance(r, dict) and "structuredContent" in r
)
_KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["object", "array", "string", "integer", "number", ["null", "string"]]
        ),
        "required": st.lists(st.sampled_from(["a", "b", "n"]), max_size=2, unique=True),
        "properties": st.dictionaries(
            st.sampled_from(["a", "b", "n"]),
            st.sampled_from([{"type": "string"}, {"type": "integer"}, {"minimum": 0}, {}]),
        ),
        "additionalProperties": st.booleans(),
        "items": st.sampled_from([{"type": "integer"}, {}, False]),
        "enum": st.lists(json_values(wire=True, max_leaves=2), min_size=1, max_size=3),
        "const": json_values(wire=True, max_leaves=2),
        "maxLength": st.integers(0, 4),
        "minItems": st.integers(0, 2),
        "multipleOf": st.sampled_from([2, 0.5, 3]),
        "anyOf": st.just([{"type": "string"}, {"type": "integer"}]),
        "not": st.just({"type": "null"}),
        "pattern": st.sampled_from(["^a", "[0-9]+", "(unclosed"]),
        "format": st.sampled_from(["uri", "date-time", "email"]),
    },
)
schemas = st.one_of(
    st.sampled_from(_REAL_SCHEMAS),
    mutated(st.sampled_from(_REAL_SCHEMAS)),
    _KEYWORDS,
    json_objects(wire=True),
)
instances = st.one_of(
    json_values(wire=True),
    st.sampled_from(_REAL_STRUCTURED),
    mutated(st.sampled_from(_REAL_STRUCTURED)),
)
DOCUMENTED = {"invalid_tool", "unsupported_schema_dialect", "limit_exceeded"}


@bounded(50)
@given(schema=schemas, structured=instances, version=st.sampled_from(VERSIONS))
def test_validate_structured_raises_only_documented_errors(
    schema: Any, structured: Any, version: str
) -> None:
    """conduit-defined (validate_structured Raises): any outputSchema and structuredContent
    give an `OutputValidation` or one of the documented `Error` reasons; nothing mutated."""
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": schema})
    result = ToolResult.from_wire({"content": [], "structuredContent": structured})
    before = repr((schema, structured))
    try:
        outcome = validate_structured(result, tool, protocol_version=version)
    except Error as exc:
        assert exc.reason in DOCUMENTED
    else:
        assert outcome.outcome in ("valid", "invalid", "skipped")
        assert (outcome.outcome == "invalid") is bool(outcome.errors)
    assert repr((schema, structured)) == before


@bounded(60)
@given(schema=schemas, structured=instances)
def test_validate_structured_agrees_with_jsonschema_on_the_verdict(
    schema: Any, structured: Any
) -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": clients SHOULD validate; basic
    "JSON Schema Usage": 2020-12 by default), oracle `jsonschema.Draft202012Validator`: for a
    valid schema without `$ref`, the outcome is `valid` exactly when jsonschema finds no error."""
    assume(isinstance(schema, dict) and "$ref" not in json.dumps(schema))
    assume("$schema" not in schema)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        expected = jsonschema.Draft202012Validator(schema).is_valid(structured)
    except (jsonschema.SchemaError, Exception):  # an invalid schema or pattern: no oracle
        assume(False)
        return
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": schema})
    result = ToolResult.from_wire({"content": [], "structuredContent": structured})
    try:
        outcome = validate_structured(result, tool, protocol_version="2026-07-28")
    except Error as exc:
        assert exc.reason == "limit_exceeded"
        return
    assert outcome.valid is expected, outcome.errors
