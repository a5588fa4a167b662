"""Property tests: `Tool.from_wire` on any value, on mutated real tools, on schema-valid tools."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from conduit_mcp.client import DEFAULT_HINTS, Error, Tool
from tests.property.profiles import bounded
from tests.property.strategies import (
    json_values,
    real_or_mutated,
    real_tools,
    versioned_instances,
)

SERVER = "prop-server"


def _well_formed(raw: Any) -> bool:
    # Spec 2026-07-28 schema `Tool`: `name` (string) and `inputSchema` (object) are required.
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("name"), str)
        and isinstance(raw.get("inputSchema"), dict)
    )


def _check(raw: Any) -> None:
    before = repr(raw)
    try:
        tool = Tool.from_wire(SERVER, raw)
    except Error as exc:
        assert (exc.kind, exc.reason) == ("protocol", "invalid_tool")
        assert exc.path in ((), ("name",), ("inputSchema",))
        assert not _well_formed(raw)
    else:
        assert _well_formed(raw)
        assert tool.raw is raw
        assert tool.name is raw["name"]
        assert tool.input_schema is raw["inputSchema"]
        meta = raw.get("_meta")
        assert tool.meta == (meta if isinstance(meta, dict) else {})
        assert isinstance(tool.display_name, str)
        assert tool.hints(trusted=False) == DEFAULT_HINTS
        assert all(type(hint) is bool for hint in tool.hints(trusted=True))
        assert Tool.from_wire(SERVER, raw) == tool
    assert repr(raw) == before  # nothing the caller passed is mutated


@bounded(130)
@given(json_values(wire=False))
def test_tool_from_wire_raises_only_invalid_tool_for_any_json_value(raw: Any) -> None:
    """Spec-mandated (2026-07-28 schema "Tool": `name` and `inputSchema` required): any value,
    incl. NaN, lone surrogates and huge ints, is a `Tool` exactly when it is an object with a
    string `name` and an object `inputSchema`; otherwise `Error("protocol", "invalid_tool")`
    with a path at the root, `name` or `inputSchema`. Never mutated."""
    _check(raw)


@bounded(60)
@given(real_or_mutated(real_tools(), wire=False))
def test_tool_from_wire_raises_only_invalid_tool_for_mutated_real_tools(raw: Any) -> None:
    """Spec-mandated (2026-07-28 schema "Tool"): as above, on captured and spec-example tools
    with random edits."""
    _check(raw)


@bounded(30)
@given(versioned_instances("Tool"))
def test_tool_from_wire_accepts_every_schema_valid_tool(case: tuple[str, Any]) -> None:
    """Spec-mandated (each version's schema.json "Tool"): an instance valid against the
    official schema is always accepted, with `raw` the very object passed."""
    _, raw = case
    tool = Tool.from_wire(SERVER, raw)
    assert tool.raw is raw and tool.name == raw["name"]
