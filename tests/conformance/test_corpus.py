"""Real servers, recorded: every captured tool and result through the foundation layer."""

from __future__ import annotations

from typing import Any

import pytest

from conduit_mcp.client import Tool, ToolResult, conformance_violations
from tests.corpus import Capture, all_tools, results

TOOLS = all_tools()
RESULTS = results()


def expected_display_name(raw: dict[str, Any]) -> str:
    """The spec's precedence, restated independently: title, annotations.title, name."""
    title = raw.get("title")
    if isinstance(title, str) and title:
        return title
    annotations = raw.get("annotations")
    if isinstance(annotations, dict):
        title = annotations.get("title")
        if isinstance(title, str) and title:
            return title
    name: str = raw["name"]
    return name


def test_the_corpus_is_the_size_its_sources_file_says() -> None:
    """tests/fixtures/corpus/SOURCES.md: 1,042 tool definitions and 178 tools/call results."""
    assert (len(TOOLS), len(RESULTS)) == (1042, 178)


def test_every_captured_tool_passes_from_wire_and_lifts_exactly_what_raw_holds() -> None:
    """Real input: each of the 1,042 tools; lifted fields equal raw's values when typed right."""
    for capture, i, raw in TOOLS:
        where = f"{capture.file} tools[{i}]"
        tool = Tool.from_wire(capture.source, raw)
        assert tool.raw is raw, where
        assert tool.name == raw["name"], where
        assert tool.input_schema is raw["inputSchema"], where
        for attr, key, json_type in (
            ("title", "title", str),
            ("description", "description", str),
            ("output_schema", "outputSchema", dict),
            ("annotations", "annotations", dict),
            ("execution", "execution", dict),
        ):
            value = raw.get(key)
            assert getattr(tool, attr) == (value if isinstance(value, json_type) else None), where
        assert tool.meta == (raw["_meta"] if isinstance(raw.get("_meta"), dict) else {}), where
        assert tool.display_name == expected_display_name(raw), where


def test_every_captured_result_passes_from_wire_with_the_right_is_error_and_content() -> None:
    """Real input: each of the 178 results."""
    for capture in RESULTS:
        raw = capture.data
        result = ToolResult.from_wire(raw)
        assert result.is_error is (raw.get("isError") is True), capture.file
        assert result.content == raw.get("content", []), capture.file
        assert result.has_structured is ("structuredContent" in raw), capture.file
        assert result.extra == {
            k: v
            for k, v in raw.items()
            if k not in {"content", "structuredContent", "isError", "_meta", "resultType"}
        }, capture.file


def test_some_captured_results_are_tool_errors_and_none_is_an_exception() -> None:
    """Real input: servers report tool failures in-band (isError), which is not an Error."""
    errors = [c.file for c in RESULTS if ToolResult.from_wire(c.data).is_error]
    assert len(errors) >= 10


def input_required(capture: Capture) -> bool:
    return capture.data.get("resultType") == "input_required"


def test_every_captured_tool_conforms_strictly_to_its_protocol_version() -> None:
    """Real input against each capture's negotiated (else requested) protocol version."""
    for capture, i, raw in TOOLS:
        found = conformance_violations(raw, kind="tool", protocol_version=capture.protocol_version)
        assert found == (), (capture.file, i, [(e.path, e.message) for e in found])


def test_every_captured_complete_result_conforms_strictly_to_its_protocol_version() -> None:
    """Real input; 2026-07-28 InputRequiredResults are not CallToolResults (basic "Result
    types") and are checked to be exactly the three captures that say so."""
    skipped = [c.id for c in RESULTS if input_required(c)]
    assert skipped == [
        "spec-examples/InputRequiredResult--input-required-result-with-elicitation-and-sampling-and-request-state",
        "spec-examples/InputRequiredResult--input-required-result-with-request-state-only",
        "spec-docs/2026-07-28--tools-mdx-L182",
    ]
    for capture in RESULTS:
        if input_required(capture):
            continue
        found = conformance_violations(
            capture.data, kind="result", protocol_version=capture.protocol_version
        )
        assert found == (), (capture.file, [(e.path, e.message) for e in found])


@pytest.mark.parametrize("capture", [c for c in RESULTS if not input_required(c)][:1], ids=str)
def test_a_complete_result_is_rejected_strictly_on_a_version_it_predates(capture: Capture) -> None:
    """Spec-mandated (2026-07-28 requires resultType): a 2025-11-25 capture lacks it."""
    if "resultType" in capture.data:
        pytest.fail("first capture unexpectedly carries resultType")
    found = conformance_violations(capture.data, kind="result", protocol_version="2026-07-28")
    assert ("resultType",) in [e.path for e in found]
