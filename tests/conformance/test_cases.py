"""The handed cases (tests/fixtures/cases, README there): inputs that broke other MCP clients.

Each check key of the README maps to one checker below; a key without a checker fails the
accounting test, so a new case cannot be silently half-checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conduit_mcp.client import (
    Error,
    Tool,
    ToolResult,
    check_tool_name,
    fingerprint,
    intake,
    validate_structured,
)
from conduit_mcp.client.headers import find_invalid_x_mcp_header, header_map
from conduit_mcp.llm import shape_for_llm, shaped_text
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


# -- tool intake (README: `intake` over {"tools": [input]} on streamable-http, 2026-07-28) --------


def case_intake(raw: Any) -> Any:
    return intake(
        SERVER, {"tools": [raw]}, transport="streamable-http", protocol_version="2026-07-28"
    )


def check_header_check(raw: Any, tool: Tool, expected: Any) -> None:
    got = case_intake(raw)
    assert ("reject" if got.rejected else "ok") == expected
    assert (find_invalid_x_mcp_header(raw["inputSchema"]) is None) is (expected == "ok")


def check_header_reason(raw: Any, tool: Tool, expected: Any) -> None:
    (rejection,) = case_intake(raw).rejected
    assert rejection.reason == expected


def check_header_paths(raw: Any, tool: Tool, expected: Any) -> None:
    assert {k: list(v) for k, v in header_map(tool).items()} == expected


def check_name_check(raw: Any, tool: Tool, expected: Any) -> None:
    name_warnings = [x for x in case_intake(raw).warnings if x.code.startswith("tool_name_")]
    assert ("warn" if name_warnings else "ok") == expected
    assert bool(check_tool_name(tool.name)) is (expected == "warn")
    assert case_intake(raw).tools[0].name == raw["name"]  # never a rejection, never renamed


def check_fingerprint_present(raw: Any, tool: Tool, expected: Any) -> None:
    assert fingerprint(raw).startswith("jcs-sha256:") is expected


def check_fingerprint_equal_to(raw: Any, tool: Tool, expected: Any) -> None:
    assert fingerprint(raw) == fingerprint(expected)


def check_fingerprint_differs_from(raw: Any, tool: Tool, expected: Any) -> None:
    assert fingerprint(raw) != fingerprint(expected)


def check_tool_warnings_include(raw: Any, tool: Tool, expected: Any) -> None:
    codes = {x.code for x in case_intake(raw).warnings}
    assert set(expected) <= codes


# -- results: validation and shaping ------------------------------------------------------------

#: README: result warning codes map onto provenance flags; shaping removes invisible characters,
#: so `invisible_unicode_removed` satisfies `invisible_unicode`.
FLAG_FOR_WARNING = {"invisible_unicode": "invisible_unicode_removed"}


def check_output_validation(raw: Any, result: ToolResult, expected: Any) -> None:
    tool = Tool.from_wire(
        SERVER, {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": expected["schema"]}
    )
    assert (
        validate_structured(result, tool, protocol_version="2026-07-28").outcome
        == expected["outcome"]
    )


def shaped(raw: Any, result: ToolResult, checks: dict[str, Any]) -> ToolResult:
    limit = checks.get("llm_limit_chars")
    if limit is None:
        return shape_for_llm(result, server_id=SERVER)
    return shape_for_llm(result, server_id=SERVER, max_chars=limit)


def check_llm(raw: Any, result: ToolResult, checks: dict[str, Any]) -> None:
    view = shaped(raw, result, checks)
    assert view.provenance is not None
    text = shaped_text(view)
    for fragment in checks.get("llm_contains", []):
        assert fragment in text
    for low, high in checks.get("llm_forbidden_codepoint_ranges", []):
        low_cp = int(low, 16) if isinstance(low, str) else low
        high_cp = int(high, 16) if isinstance(high, str) else high
        assert not any(low_cp <= ord(ch) <= high_cp for ch in text)
    if "llm_truncated" in checks:
        assert view.provenance.truncated is checks["llm_truncated"]
    if "llm_max_chars" in checks:
        assert len(text) <= checks["llm_max_chars"]
    if "llm_images" in checks:
        assert sum(1 for b in view.content if b.get("type") == "image") == checks["llm_images"]
    if "warnings_include" in checks:
        flags = set(view.provenance.flags)
        for code in checks["warnings_include"]:
            assert code in flags or FLAG_FOR_WARNING.get(code) in flags, (code, flags)


#: Result keys checked together on the shaped view by `check_llm`.
LLM_KEYS = frozenset(
    {
        "llm_contains",
        "llm_forbidden_codepoint_ranges",
        "llm_limit_chars",
        "llm_truncated",
        "llm_max_chars",
        "llm_images",
        "warnings_include",
    }
)


TOOL_CHECKERS: dict[str, Checker] = {
    "name": attr("name"),
    "description": attr("description"),
    "display_name": attr("display_name"),
    "input_schema": attr("input_schema"),
    "meta": attr("meta"),
    "extra": check_extra,
    "raw_roundtrip": check_raw_roundtrip,
    "header_check": check_header_check,
    "header_reason": check_header_reason,
    "header_paths": check_header_paths,
    "name_check": check_name_check,
    "fingerprint_present": check_fingerprint_present,
    "fingerprint_equal_to": check_fingerprint_equal_to,
    "fingerprint_differs_from": check_fingerprint_differs_from,
    "warnings_include": check_tool_warnings_include,
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
    "output_validation": check_output_validation,
}


def parse(case: dict[str, Any]) -> Tool | ToolResult:
    if case["kind"] == "tool":
        return Tool.from_wire(SERVER, case["input"])
    return ToolResult.from_wire(case["input"])


@pytest.mark.parametrize(("name", "case"), CASES, ids=[name for name, _ in CASES])
def test_case_gives_the_documented_answer(name: str, case: dict[str, Any]) -> None:
    """Each case's `expect` (README: ok, reason, checks): every check key of the README."""
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
        if case["kind"] == "result" and key in LLM_KEYS:
            continue
        checkers[key](case["input"], obj, expected)
    if case["kind"] == "result" and LLM_KEYS & set(checks):
        check_llm(case["input"], obj, checks)


def test_every_check_key_in_the_cases_has_a_checker() -> None:
    """Accounting: a case key without a checker would be silently unchecked."""
    for name, case in CASES:
        checkers = TOOL_CHECKERS if case["kind"] == "tool" else RESULT_CHECKERS
        known = set(checkers) | {"error_kind"} | (LLM_KEYS if case["kind"] == "result" else set())
        assert set(case["expect"]["checks"]) <= known, name
