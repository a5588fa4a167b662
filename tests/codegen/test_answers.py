"""`ToolsCallResult` per version and `parse_result`: the answer to tools/call in one type."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for, parse_result

from tests.conformance.examples import jsonschema_errors
from tests.corpus import results
from tests.spec_facts import requires_result_type, tools_call_answers

#: The arms of the answer, read from each version's schema (tests/spec_facts.py):
#: CallToolResultResponse's `result` (2026-07-28 on), the task-augmented CallToolRequest
#: (2025-11-25), CallToolResult alone before.
ARMS = {version: set(tools_call_answers(version)) for version in VERSIONS}
#: The versions whose answers are told apart by `resultType` (basic "Result types").
TAGGED = tuple(v for v in VERSIONS if requires_result_type(v))


def _arms(annotation: Any) -> set[str]:
    value = getattr(annotation, "__value__", annotation)
    if isinstance(value, type):
        return {value.__name__}
    found: set[str] = set()
    for arg in getattr(value, "__args__", ()):
        found |= _arms(arg)
    if hasattr(value, "__origin__") and isinstance(value.__origin__, type):
        found |= _arms(value.__origin__)
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_tools_call_result_has_the_arms_of_the_version(version: str) -> None:
    """`CallToolResult | InputRequiredResult` at 2026-07-28 and draft, `| CreateTaskResult` at
    2025-11-25, `CallToolResult` before."""
    assert _arms(module_for(version).ToolsCallResult) == ARMS[version]


@pytest.mark.parametrize("capture", results(), ids=lambda c: c.id)
def test_every_captured_answer_is_read_as_its_result_type_says(capture: Any) -> None:
    """The spec's rule (basic "Result types"): `input_required` is an InputRequiredResult,
    anything else a CallToolResult; read on each version where jsonschema accepts the answer
    as a CallToolResult or an InputRequiredResult."""
    raw = capture.data
    for version in VERSIONS:
        fits = [
            d
            for d in sorted(ARMS[version] - {"CreateTaskResult"})
            if not jsonschema_errors(version, d, raw)
        ]
        if not fits:
            with pytest.raises(pydantic.ValidationError):
                parse_result(version, "tools/call", raw)
            continue
        answer = parse_result(version, "tools/call", json.dumps(raw))
        expected = (
            "InputRequiredResult"
            if version in TAGGED and raw.get("resultType") == "input_required"
            else "CallToolResult"
        )
        assert type(answer).__name__ == expected, (version, fits)
        assert answer.model_dump(mode="json", by_alias=True, exclude_unset=True) == raw


def test_a_task_augmented_answer_is_a_create_task_result_at_2025_11_25() -> None:
    """2025-11-25 (utilities/tasks): a task-augmented tools/call answers CreateTaskResult."""
    raw = {
        "task": {
            "taskId": "t-1",
            "status": "working",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z",
            "ttl": 60000,
        }
    }
    assert jsonschema_errors("2025-11-25", "CreateTaskResult", raw) == []
    answer = parse_result("2025-11-25", "tools/call", raw)
    assert isinstance(answer, module_for("2025-11-25").CreateTaskResult)
    assert answer.task.task_id == "t-1"


def test_an_unknown_result_type_is_read_as_the_arm_it_fits() -> None:
    """Neither tag: as the schema's anyOf would (a content list makes it a CallToolResult)."""
    module = module_for("2026-07-28")
    answer = parse_result("2026-07-28", "tools/call", {"resultType": "later", "content": []})
    assert isinstance(answer, module.CallToolResult)


def test_tools_list_answers_and_unknown_names() -> None:
    """`tools/list` reads a ListToolsResult; an unknown method or version is a KeyError."""
    page = parse_result("2025-06-18", "tools/list", {"tools": []})
    assert isinstance(page, module_for("2025-06-18").ListToolsResult)
    with pytest.raises(KeyError, match="prompts/get"):
        parse_result("2025-06-18", "prompts/get", {})
    with pytest.raises(KeyError, match="2030-01-01"):
        parse_result("2030-01-01", "tools/call", {})
