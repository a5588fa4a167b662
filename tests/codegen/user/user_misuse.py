"""Misuses a type checker must flag in a user's script (each marked on its line).

tests/codegen/test_user_script.py checks that mypy --strict and pyright report an error on
exactly the marked lines. Never run.
"""

# pyright: strict

from __future__ import annotations

from conduit_mcp_wire import v2026_07_28 as mcp
from pydantic import TypeAdapter

result = mcp.CallToolResult.model_validate({"content": [], "resultType": "complete"})
print(result.content[0].text)  # misuse: a block may be an image: narrow with isinstance first
mcp.Tool(name="t", input_schema="{}")  # misuse: an inputSchema is a JSON object, not a string
mcp.Tool(name=5, input_schema={"type": "object"})  # misuse: a tool's name is a string
answer = TypeAdapter(mcp.ToolsCallResult).validate_python({})
print(answer.content)  # misuse: an InputRequiredResult has no content: narrow first
