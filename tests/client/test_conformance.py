"""conformance_violations: strict checks against one version's generated models."""

from __future__ import annotations

import copy

import pytest
from conduit_mcp_wire import VERSIONS

from conduit_mcp.client import Error, conformance_violations, is_conformant
from tests.conformance.examples import SCHEMA_DIR, jsonschema_errors
from tests.spec_facts import requires_result_type, tools_call_answers

OK_TOOL = {"name": "a", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize("version", VERSIONS)
def test_a_minimal_tool_conforms_on_every_version(version: str) -> None:
    """Spec-mandated (every version's schema `Tool`: name + inputSchema of type object)."""
    assert conformance_violations(OK_TOOL, kind="tool", protocol_version=version) == ()
    assert is_conformant(OK_TOOL, kind="tool", protocol_version=version)


def test_violations_map_onto_paths_into_the_input() -> None:
    """Spec-mandated (2025-11-25 schema: TextContent.text string, Annotations.priority number,
    isError boolean); paths address the input, not pydantic's union arms."""
    raw = {
        "content": [{"type": "text", "text": 5, "annotations": {"priority": "high"}}],
        "isError": "false",
    }
    found = conformance_violations(raw, kind="result", protocol_version="2025-11-25")
    assert {e.path for e in found} == {
        ("content", 0, "text"),
        ("content", 0, "annotations", "priority"),
        ("isError",),
    }
    assert all((e.kind, e.reason) == ("protocol", "schema_violation") for e in found)


def test_strict_mode_coerces_nothing() -> None:
    """conduit-defined: lax pydantic would read "false" as a boolean; the schema does not."""
    raw = {"content": [], "isError": "false"}
    assert not is_conformant(raw, kind="result", protocol_version="2025-06-18")


def test_an_unknown_block_type_is_one_violation_at_the_block() -> None:
    """Spec-mandated (ContentBlock is a closed union of five types from 2025-06-18)."""
    found = conformance_violations(
        {"content": [{"type": "json", "json": {}}]}, kind="result", protocol_version="2025-06-18"
    )
    assert [e.path for e in found] == [("content", 0)]


def test_result_type_is_required_only_from_2026_07_28() -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.required` adds `resultType`)."""
    raw = {"content": []}
    assert is_conformant(raw, kind="result", protocol_version="2025-11-25")
    assert [
        e.path for e in conformance_violations(raw, kind="result", protocol_version="2026-07-28")
    ] == [("resultType",)]


def test_input_schema_root_must_be_type_object() -> None:
    """Spec-mandated (schema `Tool.inputSchema.type` const "object")."""
    found = conformance_violations(
        {"name": "a", "inputSchema": {"type": "array"}}, kind="tool", protocol_version="2026-07-28"
    )
    assert [e.path for e in found] == [("inputSchema", "type")]


def test_a_non_object_is_one_violation_at_the_root() -> None:
    """Spec-mandated."""
    assert [e.path for e in conformance_violations([], kind="tool", protocol_version="draft")] == [
        ()
    ]


def test_unknown_keys_conform_and_raw_is_untouched() -> None:
    """Spec-mandated (schemas allow additional properties)."""
    raw = {**OK_TOOL, "x-vendor": {"a": [1, 2]}, "_meta": {"k": None}}
    before = copy.deepcopy(raw)
    assert is_conformant(raw, kind="tool", protocol_version="2026-07-28")
    assert raw == before


def test_a_malformed_server_info_stamp_is_a_violation() -> None:
    """Spec-mandated (2026-07-28 schema.json: the `_meta` serverInfo stamp is an
    `Implementation`). Before issue 13 the generated models let it pass; the check is now the
    official schema itself."""
    raw = {
        "content": [],
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": "not an Implementation"},
    }
    assert not is_conformant(raw, kind="result", protocol_version="2026-07-28")


def test_an_unknown_version_is_a_policy_error() -> None:
    """conduit-defined."""
    with pytest.raises(Error) as info:
        conformance_violations(OK_TOOL, kind="tool", protocol_version="1999-01-01")
    assert (info.value.kind, info.value.reason) == ("policy", "unknown_protocol_version")


def test_an_unknown_kind_is_a_caller_bug() -> None:
    """conduit-defined."""
    with pytest.raises(ValueError):
        conformance_violations(OK_TOOL, kind="prompt", protocol_version="draft")  # type: ignore[arg-type]


# -- kind="call_result": the tools/call result union (issue 14, item 2) ---------------------------

INPUT_REQUIRED = {
    "resultType": "input_required",
    "inputRequests": {
        "r1": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Which city?",
                "requestedSchema": {"type": "object", "properties": {"c": {"type": "string"}}},
            },
        }
    },
    "requestState": "opaque",
}
TASK = {
    "task": {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": 60000,
    }
}


def test_an_input_required_result_conforms_to_the_2026_07_28_call_result_union() -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResultResponse.result`: anyOf
    InputRequiredResult, CallToolResult): valid as the union, not as a CallToolResult."""
    assert is_conformant(INPUT_REQUIRED, kind="call_result", protocol_version="2026-07-28")
    found = conformance_violations(INPUT_REQUIRED, kind="result", protocol_version="2026-07-28")
    assert [e.path for e in found] == [("content",)]


def _spec_examples(definition: str) -> list[tuple[str, object]]:
    import json

    return [
        (str(path.relative_to(SCHEMA_DIR)), json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(SCHEMA_DIR.glob(f"*/examples/{definition}/*.json"))
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_answer_the_schema_allows_conforms_as_a_call_result(version: str) -> None:
    """Spec-mandated (each version's answers to tools/call, tests/spec_facts.py, and `jsonschema`
    as the oracle): every vendored spec example of an answer definition that the version's
    schema accepts as that definition conforms as `call_result` there (issue 31: a version
    missing from a hand table made the spec's own InputRequiredResult example a violation)."""
    checked = 0
    for definition in tools_call_answers(version):
        for name, example in _spec_examples(definition):
            if not jsonschema_errors(version, definition, example):
                checked += 1
                found = conformance_violations(
                    example, kind="call_result", protocol_version=version
                )
                assert found == (), (name, [e.message for e in found])
    assert checked or "InputRequiredResult" not in tools_call_answers(version)


def test_a_task_result_conforms_to_the_2025_11_25_call_result_union_only() -> None:
    """Spec-mandated (2025-11-25 server/tools "Task-Augmented Tool Calls": a tools/call with a
    task answers CreateTaskResult; 2026-07-28 and 2025-06-18 define no task result)."""
    assert is_conformant(TASK, kind="call_result", protocol_version="2025-11-25")
    for version in ("2025-06-18", "2026-07-28"):
        assert not is_conformant(TASK, kind="call_result", protocol_version=version)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_complete_result_conforms_to_every_call_result_union(version: str) -> None:
    """Spec-mandated (each version's CallToolResult; `resultType` required from 2026-07-28)."""
    raw: dict[str, object] = {"content": [{"type": "text", "text": "ok"}]}
    if requires_result_type(version):
        raw["resultType"] = "complete"
    assert is_conformant(raw, kind="call_result", protocol_version=version)


def test_a_union_failure_reports_the_closest_arm_with_its_name() -> None:
    """conduit-defined: when no arm accepts, the violations are those of the arm with strictly
    fewest (worked out by hand from 2025-11-25 schema.json: CallToolResult fails only on
    `isError`; CreateTaskResult on five missing Task members), named in details; on a tie, the
    union's own failure at the root, naming both arms."""
    raw = {"content": [], "isError": "yes", "task": {}}
    found = conformance_violations(raw, kind="call_result", protocol_version="2025-11-25")
    assert [(e.path, e.details["definition"], e.details["keyword"]) for e in found] == [
        (("isError",), "CallToolResult", "type")
    ]
    assert found[0].details["schema_path"] == ["properties", "isError", "type"]
    # 2026-07-28: without resultType both arms fail once (`required`): a tie.
    found = conformance_violations(
        {"content": []}, kind="call_result", protocol_version="2026-07-28"
    )
    assert [(e.path, e.details["definition"], e.details["keyword"]) for e in found] == [
        ((), "InputRequiredResult | CallToolResult", "anyOf")
    ]


def test_integral_floats_are_integers_and_null_members_are_violations() -> None:
    """Spec-mandated (JSON Schema 2020-12 validation "type": 1.0 is an integer; a `null`
    optional string member is not a string)."""
    link = {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 1.0}
    assert is_conformant(
        {"resultType": "complete", "content": [link]}, kind="result", protocol_version="2026-07-28"
    )
    found = conformance_violations(
        {"name": "t", "inputSchema": {"type": "object"}, "title": None},
        kind="tool",
        protocol_version="2025-11-25",
    )
    assert [(e.path, e.message) for e in found] == [(("title",), "expected string, got null")]
