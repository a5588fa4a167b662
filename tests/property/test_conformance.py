"""Property tests: `conformance_violations` never raises and agrees with `jsonschema`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import conformance_violations
from tests.conformance.examples import jsonschema_errors
from tests.property.profiles import bounded
from tests.property.strategies import (
    VERSIONS,
    json_values,
    mutated,
    real_or_mutated,
    real_results,
    real_tools,
    schema_instances,
    versioned_instances,
)

KINDS = {"Tool": "tool", "CallToolResult": "result", "ListToolsResult": "tools_list"}


@bounded(30)
@given(
    raw=st.one_of(
        json_values(wire=False), real_or_mutated(real_tools() + real_results(), wire=False)
    ),
    kind=st.sampled_from(sorted(KINDS.values())),
    version=st.sampled_from(VERSIONS),
)
def test_conformance_violations_never_raises_for_any_value(
    raw: Any, kind: Any, version: str
) -> None:
    """conduit-defined (conformance_violations: "Violations are returned, not raised"): any
    value, NaN and lone surrogates included, gives a tuple of `schema_violation` errors."""
    before = repr(raw)
    found = conformance_violations(raw, kind=kind, protocol_version=version)
    assert all((e.kind, e.reason) == ("protocol", "schema_violation") for e in found)
    assert repr(raw) == before


@pytest.mark.parametrize("definition", sorted(KINDS))
@bounded(20)
@given(data=st.data())
def test_schema_valid_instances_conform_for_both_checkers(definition: str, data: Any) -> None:
    """Spec-mandated (each version's schema.json): an instance generated from the official
    definition is valid for `jsonschema` and for the strict check alike."""
    version, raw = data.draw(versioned_instances(definition))
    assert jsonschema_errors(version, definition, raw) == []
    assert conformance_violations(raw, kind=KINDS[definition], protocol_version=version) == ()


@pytest.mark.parametrize("definition", sorted(KINDS))
@bounded(20)
@given(data=st.data())
def test_the_strict_check_rejects_nothing_jsonschema_accepts(definition: str, data: Any) -> None:
    """Spec-mandated (each version's schema.json; oracle `jsonschema`): on mutated
    schema-valid instances, a violation found by the strict check is also a jsonschema error
    (no false rejection)."""
    version = data.draw(st.sampled_from(VERSIONS))
    raw = data.draw(mutated(schema_instances(version, definition)))
    if conformance_violations(raw, kind=KINDS[definition], protocol_version=version):
        assert jsonschema_errors(version, definition, raw) != []


@pytest.mark.parametrize(
    ("version", "definition", "raw"),
    [
        (
            "2026-07-28",
            "CallToolResult",
            {
                "resultType": "complete",
                "content": [
                    {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 1.0}
                ],
            },
        ),
        (
            "2025-06-18",
            "CallToolResult",
            {"content": [{"type": "resource_link", "uri": "file:///a", "name": "a", "size": -0.0}]},
        ),
    ],
)
def test_the_strict_check_accepts_integral_floats_for_integers(
    version: str, definition: str, raw: Any
) -> None:
    """Spec-mandated (JSON Schema 2020-12 validation "type": "integer" matches any number with
    a zero fractional part; oracle `jsonschema`): these instances are valid, so the strict check
    should find no violation."""
    assert jsonschema_errors(version, definition, raw) == []
    assert conformance_violations(raw, kind=KINDS[definition], protocol_version=version) == ()


@bounded(30)
@given(data=st.data())
def test_the_strict_check_rejects_everything_jsonschema_rejects(data: Any) -> None:
    """Spec-mandated (each version's schema.json; oracle `jsonschema`): on mutated
    schema-valid instances, jsonschema errors imply strict-check violations (with no
    exclusions since issue 13: `null` members and the serverInfo stamp included)."""
    definition = data.draw(st.sampled_from(sorted(KINDS)))
    version = data.draw(st.sampled_from(VERSIONS))
    raw = data.draw(mutated(schema_instances(version, definition)))
    if jsonschema_errors(version, definition, raw):
        assert conformance_violations(raw, kind=KINDS[definition], protocol_version=version)


TOOL = {"name": "t", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    ("version", "definition", "raw"),
    [
        ("2025-11-25", "Tool", {**TOOL, "title": None}),
        ("2026-07-28", "Tool", {**TOOL, "outputSchema": None}),
        ("2025-03-26", "ListToolsResult", {"tools": [], "nextCursor": None}),
        (
            "2025-06-18",
            "CallToolResult",
            {"content": [{"type": "text", "text": "a", "_meta": None}]},
        ),
        (
            "2026-07-28",
            "CallToolResult",
            {
                "content": [],
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "a"}},
            },
        ),
    ],
)
def test_the_strict_check_refuses_null_members_and_a_malformed_server_info(
    version: str, definition: str, raw: Any
) -> None:
    """Spec-mandated (each version's schema.json; oracle `jsonschema`): these instances are
    invalid (jsonschema finds an error), so the strict check should report a violation."""
    assert jsonschema_errors(version, definition, raw) != []
    assert conformance_violations(raw, kind=KINDS[definition], protocol_version=version) != ()
