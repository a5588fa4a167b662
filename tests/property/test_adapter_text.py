"""Property test: no character of the UCD-derived tables reaches a model through an adapter's
descriptions and titles (issue 10, "Done when")."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from conduit_mcp.client import Tool
from conduit_mcp.llm import to_anthropic_tool, to_gemini_function, to_openai_tool
from tests.property.hidden import FORBIDDEN, hostile_texts
from tests.property.profiles import bounded

_TEXT = hostile_texts(max_pieces=6)


def _prose(value: Any) -> list[str]:
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, member in item.items():
                if key in ("description", "title") and isinstance(member, str):
                    out.append(member)
                else:
                    stack.append(member)
        elif isinstance(item, list):
            stack.extend(item)
    return out


@bounded(100)
@given(description=_TEXT, title=_TEXT, param=_TEXT)
def test_no_hidden_character_survives_an_adapter_description(
    description: str, title: str, param: str
) -> None:
    """conduit-defined: every description and title an adapter forwards is cleaned."""
    raw = {
        "name": "t",
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "title": title,
            "properties": {"a": {"type": "string", "description": param, "title": title}},
        },
    }
    tool = Tool.from_wire("s", raw)
    for adapted in (to_openai_tool(tool), to_anthropic_tool(tool), to_gemini_function(tool)):
        for text in _prose(adapted.declaration):
            assert not any(ord(c) in FORBIDDEN for c in text), (adapted.name, text)
