"""ToolResult.from_wire."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from conduit_mcp.client import Error, ToolResult

TEXT = {"type": "text", "text": "ok"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"content": [TEXT]}, False, id="absent"),
        pytest.param({"content": [TEXT], "isError": None}, False, id="null"),
        pytest.param({"content": [TEXT], "isError": False}, False, id="false"),
        pytest.param({"content": [TEXT], "isError": True}, True, id="true"),
    ],
)
def test_is_error_is_true_only_for_json_true(raw: dict[str, object], expected: bool) -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.isError`: "If not set, this is assumed
    to be false"); `null` reads as false (conduit-defined, liberal)."""
    assert ToolResult.from_wire(raw).is_error is expected


@pytest.mark.parametrize("value", ["false", "true", 0, 1, [], {}], ids=repr)
def test_is_error_of_another_type_is_invalid_with_path(value: object) -> None:
    """Spec-mandated (schema: `isError` is a boolean)."""
    with pytest.raises(Error) as info:
        ToolResult.from_wire({"content": [], "isError": value})
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "protocol",
        "invalid_tool_result",
        ("isError",),
    )


@pytest.mark.parametrize("value", [{"type": "text", "text": "x"}, "text", None, 3], ids=repr)
def test_content_that_is_not_an_array_is_invalid_with_path(value: object) -> None:
    """Spec-mandated (schema: `content` is an array of content blocks)."""
    with pytest.raises(Error) as info:
        ToolResult.from_wire({"content": value})
    assert (info.value.reason, info.value.path) == ("invalid_tool_result", ("content",))


@pytest.mark.parametrize("raw", [None, [], "x", 1, True], ids=repr)
def test_a_non_object_result_is_invalid_at_the_root(raw: object) -> None:
    """Spec-mandated (schema `CallToolResult` is an object)."""
    with pytest.raises(Error) as info:
        ToolResult.from_wire(raw)
    assert (info.value.reason, info.value.path) == ("invalid_tool_result", ())


def test_missing_content_reads_as_empty() -> None:
    """conduit-defined (liberal: 2026-07-28 requires content, older servers omit it)."""
    result = ToolResult.from_wire({"structuredContent": {"a": 1}})
    assert result.content == []


@pytest.mark.parametrize("value", [0, False, "", [], None, {}], ids=repr)
def test_structured_content_presence_is_the_key_not_truthiness(value: object) -> None:
    """Spec-mandated (schema: structuredContent may be any JSON value, null included)."""
    result = ToolResult.from_wire({"content": [], "structuredContent": value})
    assert result.has_structured is True
    assert result.structured == value
    assert type(result.structured) is type(value)


def test_absent_structured_content() -> None:
    """Spec-mandated (structuredContent is optional)."""
    result = ToolResult.from_wire({"content": []})
    assert (result.has_structured, result.structured) == (False, None)


def test_meta_extra_and_result_type() -> None:
    """Spec-mandated (2026-07-28: `_meta`, `resultType`); extra keys are kept as sent."""
    meta = {"io.modelcontextprotocol/serverInfo": "not an object"}
    raw = {
        "content": [TEXT],
        "_meta": meta,
        "resultType": "complete",
        "x-trace": {"id": 1},
        "camelCaseKey": [1],
    }
    result = ToolResult.from_wire(raw)
    assert result.meta is meta
    assert result.extra == {"x-trace": {"id": 1}, "camelCaseKey": [1]}
    assert result.provenance is None
    assert result.raw is raw


def test_meta_that_is_not_an_object_reads_as_empty() -> None:
    """conduit-defined."""
    assert ToolResult.from_wire({"content": [], "_meta": "x"}).meta == {}


def test_content_is_the_list_as_sent_with_unknown_blocks() -> None:
    """Spec-mandated (a failed tool reports in-band) and conduit-defined (blocks not checked)."""
    blocks = [{"type": "json", "json": {"a": 1}}, "bare", {"type": "text", "text": 5}]
    result = ToolResult.from_wire({"content": blocks, "isError": True})
    assert result.content is blocks
    assert result.is_error is True


def test_from_wire_never_mutates_and_copies_only_on_request() -> None:
    """conduit-defined."""
    raw = {"content": [TEXT], "isError": None, "structuredContent": None, "_meta": None}
    before = copy.deepcopy(raw)
    ToolResult.from_wire(raw)
    assert raw == before
    copied = ToolResult.from_wire(raw, copy=True)
    assert copied.raw == raw and copied.raw is not raw and copied.content is not raw["content"]


def test_tool_result_is_immutable() -> None:
    """conduit-defined."""
    result = ToolResult.from_wire({"content": []})
    with pytest.raises(AttributeError):
        result.is_error = True  # type: ignore[misc]
    assert result.replace(is_error=True).is_error is True
    assert result.is_error is False


def test_result_and_shape_do_not_import_each_other() -> None:
    """conduit-defined (issue 15 item 6): `_shape` builds `ToolResult`s, so `_result` (and
    `_provenance`, which both use) must not import `_shape`, not even lazily."""
    client = Path(__file__).resolve().parents[2] / "src" / "conduit_mcp" / "client"
    for name in ("_result", "_provenance"):
        tree = ast.parse((client / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
        assert "_shape" not in imported, name
        assert name != "_provenance" or "_result" not in imported
