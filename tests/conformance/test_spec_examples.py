"""Every vendored spec example: jsonschema and the generated model agree, and it round-trips."""

from __future__ import annotations

import collections

import pytest
from conduit_mcp_wire import VERSIONS

from tests.conformance.examples import (
    REQUIRED,
    Example,
    all_examples,
    by_name_check,
    jsonschema_errors,
    model_check,
)

EXAMPLES = all_examples()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_spec_example_validates_with_jsonschema_and_the_model_and_round_trips(
    example: Example,
) -> None:
    """Spec-mandated: the spec's own examples are valid instances of their definition."""
    schema_errors = jsonschema_errors(example.version, example.definition, example.instance)
    model_errors, dumped = model_check(example.version, example.definition, example.instance)
    assert schema_errors == []
    assert model_errors == []
    assert dumped == example.instance


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_spec_example_rebuilt_from_attribute_names_dumps_the_same_wire_object(
    example: Example,
) -> None:
    """conduit-defined (item 11): snake_case attributes and wire-name aliases agree everywhere."""
    assert by_name_check(example.version, example.definition, example.instance) == example.instance


def test_every_required_definition_has_examples_on_2026_07_28() -> None:
    """The foundation issue lists the definitions whose examples must pass."""
    seen = {e.definition for e in EXAMPLES if e.version == "2026-07-28"}
    assert set(REQUIRED) <= seen


def test_every_version_has_examples() -> None:
    """Older versions are covered by the examples on their server/tools page (spec-docs)."""
    counts = collections.Counter(e.version for e in EXAMPLES)
    assert set(counts) == set(VERSIONS)
    assert counts["2026-07-28"] >= 49 and counts["draft"] >= 44


@pytest.mark.parametrize(
    ("version", "definition", "instance"),
    [
        pytest.param("2025-06-18", "CallToolResult", {"content": [{"type": "text"}]}, id="no-text"),
        pytest.param(
            "2024-11-05", "Tool", {"name": "a", "inputSchema": {"type": "array"}}, id="root"
        ),
        pytest.param("2026-07-28", "CallToolResult", {"content": []}, id="no-resultType"),
        pytest.param(
            "2025-11-25",
            "CallToolResult",
            {"content": [], "structuredContent": [1]},
            id="array-structured-before-2026",
        ),
        pytest.param(
            "2026-07-28",
            "ImageContent",
            {"type": "image", "data": "x", "mimeType": 5},
            id="mime-int",
        ),
    ],
)
def test_invalid_instances_are_rejected_by_both(
    version: str, definition: str, instance: object
) -> None:
    """Spec-mandated (each version's schema): both checks reject the same bad input."""
    assert jsonschema_errors(version, definition, instance) != []
    assert model_check(version, definition, instance)[0] != []
