"""A new user's script against the generated models, as written from the docs.

tests/codegen/test_user_script.py type-checks it with mypy --strict and pyright (strict) and
runs it: both checkers must find nothing, and every assertion must hold.
"""

# pyright: strict

from __future__ import annotations

import json
from typing import Any, Literal

from conduit_mcp_wire import parse_result
from conduit_mcp_wire import v2026_07_28 as mcp
from pydantic import TypeAdapter

# A tool built by hand: JSON objects are plain dicts, in the checker and at run time.
schema: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}}
tool = mcp.Tool(name="get_weather", input_schema=schema, meta={"com.example/k": 1})
literal = mcp.Tool(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    meta={"com.example/k": 1},
)
assert tool == literal
parameters: dict[str, Any] = tool.input_schema  # what an LLM API takes, as it is
assert parameters["properties"]["city"] == {"type": "string"}
wire = tool.model_dump(by_alias=True, exclude_unset=True)
assert wire == {
    "name": "get_weather",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "_meta": {"com.example/k": 1},
}

# A tools/call result off the wire: the block is the concrete model, narrowed by isinstance.
raw = json.dumps(
    {
        "content": [{"type": "text", "text": "18°C", "annotations": {"audience": ["user"]}}],
        "structuredContent": {"celsius": 18},
        "resultType": "complete",
    }
)
result = mcp.CallToolResult.model_validate_json(raw)
block = result.content[0]
assert isinstance(block, mcp.TextContent)
text: str = block.text
assert text == "18°C"
assert block.annotations is not None and block.annotations.audience is not None
audience: Literal["assistant", "user"] = block.annotations.audience[0]
assert audience == "user"
texts = [b.text for b in result.content if isinstance(b, mcp.TextContent)]
assert texts == ["18°C"]
assert result.is_error is None  # absent on the wire

# The answer to tools/call at 2026-07-28: one type, narrowed by isinstance.
answers = TypeAdapter(mcp.ToolsCallResult)
asked = answers.validate_json(
    '{"resultType": "input_required", "inputRequests": {"roots": {"method": "roots/list"}},'
    ' "requestState": "s1"}'
)
if isinstance(asked, mcp.InputRequiredResult):
    assert asked.request_state == "s1"
else:
    raise AssertionError(asked.content)
done = parse_result("2026-07-28", "tools/call", raw)
assert isinstance(done, mcp.CallToolResult) and done == result
