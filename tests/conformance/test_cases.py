"""The handed cases (tests/fixtures/cases, README there): inputs that broke other MCP clients.

Each check key of the README maps to one checker below; a key without a checker fails the
accounting test, so a new case cannot be silently half-checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conduit_mcp.client import Error, Tool, ToolResult
from tests.corpus import cases

CASES = cases()
SERVER = "case-server"

Checker = Callable[[Any, Any, Any], None]
"""(case input, parsed Tool or ToolResult, expected value) -> asserts."""


def check_error_kind(raw: Any, error: Any, expected: Any) -> None:
    assert error.kind == expected


def attr(name: str) -> Checker:
    def check(raw: Any, obj: Any, expected: Any) -> None:
        assert getattr(obj, name) == expected

    return check


def check_extra(raw: Any, obj: Any, expected: Any) -> None:
    source = obj.raw if isinstance(obj, Tool) else obj.extra
    for key, value in expected.items():
        assert source[key] == value


def check_raw_roundtrip(raw: Any, tool: Tool, expected: Any) -> None:
    assert (tool.raw == raw) is expected


def check_content_len(raw: Any, result: ToolResult, expected: Any) -> None:
    assert len(result.content) == expected


def check_content_types(raw: Any, result: ToolResult, expected: Any) -> None:
    assert [block.get("type") for block in result.content] == expected


def check_content0_text_len(raw: Any, result: ToolResult, expected: Any) -> None:
    assert len(result.content[0]["text"]) == expected


TOOL_CHECKERS: dict[str, Checker] = {
    "name": attr("name"),
    "description": attr("description"),
    "display_name": attr("display_name"),
    "input_schema": attr("input_schema"),
    "meta": attr("meta"),
    "extra": check_extra,
    "raw_roundtrip": check_raw_roundtrip,
}

RESULT_CHECKERS: dict[str, Checker] = {
    "is_error": attr("is_error"),
    "content": attr("content"),
    "content_len": check_content_len,
    "content_types": check_content_types,
    "content0_text_len": check_content0_text_len,
    "structured_content": attr("structured"),
    "has_structured_content": attr("has_structured"),
    "extra": check_extra,
}


def parse(case: dict[str, Any]) -> Tool | ToolResult:
    if case["kind"] == "tool":
        return Tool.from_wire(SERVER, case["input"])
    return ToolResult.from_wire(case["input"])


@pytest.mark.parametrize(("name", "case"), CASES, ids=[name for name, _ in CASES])
def test_case_gives_the_documented_answer(name: str, case: dict[str, Any]) -> None:
    """Each case's `expect` (README: ok, reason, checks), on the foundation layer."""
    expect = case["expect"]
    checks = expect["checks"]
    if not expect["ok"]:
        with pytest.raises(Error) as info:
            parse(case)
        assert info.value.reason == expect["reason"]
        if "error_kind" in checks:
            check_error_kind(case["input"], info.value, checks["error_kind"])
        return
    obj = parse(case)
    checkers = TOOL_CHECKERS if case["kind"] == "tool" else RESULT_CHECKERS
    for key, expected in checks.items():
        if key in checkers:
            checkers[key](case["input"], obj, expected)
