"""Property tests: `ToolResult.from_wire` and `parse_call_result` on any value."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, InputRequired, ToolResult, parse_call_result
from tests.property.profiles import bounded
from tests.property.strategies import (
    json_values,
    real_or_mutated,
    real_results,
    versioned_instances,
)
from tests.spec_facts import requires_result_type

LIFTED = {"content", "structuredContent", "isError", "_meta", "resultType"}
FOREIGN = {"task", "inputRequests", "requestState"}


def _well_formed(raw: Any) -> bool:
    # Spec 2026-07-28 schema `CallToolResult`: `content` an array when present; `isError` a
    # boolean when present (null reads as false: "If not set, this is assumed to be false").
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("content", []), list)
        and raw.get("isError") in (None, True, False)
        and type(raw.get("isError", False)) in (bool, type(None))
    )


def _check_result(result: ToolResult, raw: dict[str, Any]) -> None:
    assert result.raw is raw
    assert result.content is raw["content"] if "content" in raw else result.content == []
    assert result.is_error is (raw.get("isError") is True)
    assert result.has_structured is ("structuredContent" in raw)
    assert result.structured is raw.get("structuredContent")
    meta = raw.get("_meta")
    assert result.meta is meta if isinstance(meta, dict) else result.meta == {}
    assert result.extra == {k: v for k, v in raw.items() if k not in LIFTED}
    assert all(result.extra[k] is raw[k] for k in result.extra)


def _from_wire(raw: Any) -> None:
    before = repr(raw)
    try:
        result = ToolResult.from_wire(raw)
    except Error as exc:
        assert (exc.kind, exc.reason) == ("protocol", "invalid_tool_result")
        assert exc.path in ((), ("content",), ("isError",))
        assert not _well_formed(raw)
    else:
        assert _well_formed(raw)
        _check_result(result, raw)
    assert repr(raw) == before


@bounded(130)
@given(json_values(wire=False))
def test_tool_result_from_wire_raises_only_invalid_tool_result_for_any_json_value(
    raw: Any,
) -> None:
    """Spec-mandated (2026-07-28 schema "CallToolResult"): any value is a `ToolResult` exactly
    when it is an object whose `content` (if present) is an array and whose `isError` is a
    boolean or null; `extra`, `meta` and `structured` equal the input; never mutated."""
    _from_wire(raw)


@bounded(60)
@given(real_or_mutated(real_results(), wire=False))
def test_tool_result_from_wire_raises_only_invalid_tool_result_for_mutated_results(
    raw: Any,
) -> None:
    """Spec-mandated (2026-07-28 schema "CallToolResult"): as above, on captured results."""
    _from_wire(raw)


@bounded(30)
@given(versioned_instances("CallToolResult"))
def test_every_schema_valid_call_tool_result_is_accepted(case: tuple[str, Any]) -> None:
    """Spec-mandated (each version's schema.json "CallToolResult"; 2026-07-28 basic
    "ResultType"; schema-valid 2026-07-28 results carry `resultType`): a schema-valid result is
    accepted by `ToolResult.from_wire`, and by `parse_call_result` unless its `resultType` is a
    value the client does not recognise ("MUST be considered invalid")."""
    version, raw = case
    _check_result(ToolResult.from_wire(raw), raw)
    result_type = raw.get("resultType", "complete")
    if requires_result_type(version) and result_type != "complete":
        with pytest.raises(Error) as info:
            parse_call_result(raw, protocol_version=version)
        assert info.value.reason in ("invalid_result_type", "invalid_tool_result")
    else:
        parsed = parse_call_result(raw, protocol_version=version)
        assert isinstance(parsed, ToolResult)
        _check_result(parsed, raw)


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
@bounded(60)
@given(raw=st.one_of(json_values(wire=False), real_or_mutated(real_results(), wire=False)))
def test_parse_call_result_raises_only_documented_errors(version: str, raw: Any) -> None:
    """Spec-mandated (2026-07-28 basic "ResultType": unrecognised values MUST be invalid; at
    2026-07-28 an absent one too (schema `Result.resultType`: servers on this revision MUST
    include it); before 2026-07-28 `resultType` is not looked at): only
    `invalid_tool_result` / `invalid_result_type` escape, and the dispatch follows the rule."""
    before = repr(raw)
    try:
        parsed = parse_call_result(raw, protocol_version=version)
    except Error as exc:
        assert exc.kind == "protocol"
        assert exc.reason in ("invalid_tool_result", "invalid_result_type")
    else:
        assert isinstance(raw, dict)
        result_type = raw.get("resultType")
        if version == "2026-07-28" and result_type == "input_required":
            assert isinstance(parsed, InputRequired) and parsed.raw is raw
        else:
            # At 2026-07-28 resultType is required; on every version a body without content
            # that carries another result type's members is never a success.
            assert version != "2026-07-28" or result_type == "complete"
            assert "content" in raw or not FOREIGN & raw.keys()
            assert isinstance(parsed, ToolResult)
            _check_result(parsed, raw)
    assert repr(raw) == before
