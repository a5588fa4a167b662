"""Every content block type of every registered spec version is shaped for the model, or listed
as omitted on purpose: a new block type never becomes "[content block omitted]" unnoticed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conduit_mcp_wire import VERSIONS

from conduit_mcp.client import ToolResult
from conduit_mcp.llm import shape_for_llm
from conduit_mcp.llm._shape import OMITTED_BLOCK_TYPES, SHAPED_BLOCK_TYPES
from tests.spec_facts import content_block_types

#: One well-formed block of each shaped type (conduit-defined from the 2026-07-28 schema's
#: TextContent, ImageContent, AudioContent, ResourceLink and EmbeddedResource).
BLOCKS = {
    "text": {"type": "text", "text": "hello"},
    "image": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    "audio": {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    "resource_link": {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
    "resource": {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "a"}},
}


def _shaped(block: dict[str, Any]) -> tuple[Any, ...]:
    shaped = shape_for_llm(
        ToolResult.from_wire({"content": [block]}),
        server_id="s",
        accepted_mime_types=frozenset({"image/png", "audio/wav"}),
    )
    return shaped.content[0], shaped.provenance.flags


@pytest.mark.parametrize("version", VERSIONS)
def test_every_block_type_of_the_version_is_shaped_or_omitted_on_purpose(version: str) -> None:
    """Spec-mandated block types (each version's ContentBlock): none unaccounted for."""
    missing = {
        kind: name
        for kind, name in content_block_types(version).items()
        if kind not in SHAPED_BLOCK_TYPES | OMITTED_BLOCK_TYPES
    }
    assert missing == {}, (
        f"{version}: content block types neither shaped nor listed in OMITTED_BLOCK_TYPES"
        " (src/conduit_mcp/llm/_shape.py); `make bump` named them in its checklist"
    )


@pytest.mark.parametrize("kind", sorted(SHAPED_BLOCK_TYPES))
def test_a_shaped_type_reaches_the_model(kind: str) -> None:
    """conduit-defined: a well-formed block of a shaped type is shown, not a placeholder."""
    content, flags = _shaped(BLOCKS[kind])
    assert "unknown_content_type" not in flags
    assert "content block omitted" not in json.dumps(content)


def test_an_omitted_type_is_a_placeholder_and_no_type_is_in_both_sets() -> None:
    """conduit-defined: a type omitted on purpose reads as the unsupported-type placeholder."""
    assert not SHAPED_BLOCK_TYPES & OMITTED_BLOCK_TYPES
    for kind in sorted(OMITTED_BLOCK_TYPES) or ["video"]:  # an unknown type reads the same
        content, flags = _shaped({"type": kind, "data": "AAAA"})
        assert content == {
            "type": "text",
            "text": f'[content block omitted: unsupported type "{kind}"]',
        }
        assert "unknown_content_type" in flags
