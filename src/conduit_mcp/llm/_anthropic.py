"""Anthropic (Messages API): MCP tools as client tools, and tool results as `tool_result` blocks.

Rules are data (`RULES`, each with its source); keywords go through the shared 2020-12
handler table (`_keywords.JSON_SCHEMA_HANDLERS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ..client._result import ToolResult
from ..client._tool import Tool
from . import _keywords as k
from . import _translate as t
from ._messages import EMPTY_RESULT, AdaptedResult, blocks, check_shaped, placeholder
from ._provider_names import ToolNameMap
from ._translate import JSONObject, SchemaWalk

#: "input_schema does not support oneOf, allOf, or anyOf at the top level" (API 400 message).
ROOT_FORBIDDEN: Final = ("allOf", "anyOf", "oneOf")

#: "Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'" (Messages API 400 message).
PARAMETER_NAME: Final = re.compile(r"[a-zA-Z0-9_.-]{1,64}")

#: Image media types a `tool_result` takes (anthropic `Base64ImageSourceParam.media_type`).
IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

RULES: Final = (
    t.Rule(
        "(root)",
        "type object; no oneOf/allOf/anyOf at the top level",
        "Messages API invalid_request_error ('input_schema does not support oneOf, allOf, or "
        "anyOf at the top level')",
    ),
    t.Rule(
        "*",
        "input_schema must be valid JSON Schema draft 2020-12",
        "Messages API invalid_request_error ('tools.0.custom.input_schema: JSON schema is "
        "invalid. It must match JSON Schema draft 2020-12')",
    ),
    t.Rule(
        "properties",
        "property keys match ^[a-zA-Z0-9_.-]{1,64}$ (flagged, not renamed)",
        "Messages API invalid_request_error ('Property keys should match pattern')",
    ),
    t.Rule(
        "content",
        "tool_result content: text blocks and base64 images (jpeg, png, gif, webp); is_error",
        "Claude docs, tool use 'Handling tool use and tool result content blocks'; anthropic "
        "ToolResultBlockParam, Base64ImageSourceParam",
    ),
    *k.JSON_SCHEMA_RULES,
)

HANDLERS: Final[Mapping[str, t.Handler]] = k.JSON_SCHEMA_HANDLERS
FIXERS: Final[tuple[t.Fixer, ...]] = ()


def to_anthropic_tool(tool: Tool, names: ToolNameMap | None = None) -> t.AdaptedTool:
    """Build an Anthropic (Messages API) client tool from an MCP tool.

    The whole schema is walked (explicit stack) and copied into valid JSON Schema 2020-12,
    each change a `SchemaNote`: root adjustments (a missing `type` becomes `"object"`, a
    non-object `properties` becomes `{}`, a malformed `required` is cleaned, root
    `allOf`/`anyOf`/`oneOf` removed with their inline branches' properties merged into the
    root); draft-04/06/07 idioms translated (tuple `items` -> `prefixItems`, with
    `additionalItems` as `items`; boolean `exclusiveMinimum`/`exclusiveMaximum` -> the bound
    itself; `definitions` -> `$defs` with local `$ref`s rewritten; `id` -> `$id` or
    `$anchor`; `dependencies` -> `dependentRequired` + `dependentSchemas`; `$schema` set to
    2020-12); keyword values of a shape the 2020-12 meta-schema refuses dropped; descriptions
    and titles cleaned of invisible characters. Parameter names outside
    `^[a-zA-Z0-9_.-]{1,64}$` are flagged, not renamed (the tool needs them as they are).

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"anthropic"` (the tool is added to it), or `None` for the
            tool's own name, mapped into the charset only when it has to be.

    Returns:
        `AdaptedTool` whose declaration is `{"name", "description", "input_schema"}` (anthropic
        `ToolParam`); `description` is omitted when the tool has none.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`) when a hand-built
            `inputSchema` contains itself, path from `("inputSchema",)` to the container met
            again (checked before the walk, which would never end).
        TypeError, ValueError: `tool` is not a `Tool` or `names` is not a map for
            `"anthropic"` (caller bugs).

    Total: explicit stack, linear in the schema's size; at most 1,000 notes listed.

    Spec: 2026-07-28 schema `Tool.inputSchema`. Provider rules: `RULES` in this module.
    """
    tool = t.check_tool(tool)
    notes = t.Notes()
    root, declaration = t.declaration_start(
        tool, "anthropic", names, ROOT_FORBIDDEN, PARAMETER_NAME, notes
    )
    declaration["input_schema"] = SchemaWalk(HANDLERS, FIXERS, notes).run(root)
    return t.AdaptedTool(declaration["name"], declaration, notes.finish())


def to_anthropic_tool_result(result: ToolResult, *, tool_use_id: str) -> AdaptedResult:
    """A shaped tool result as an Anthropic `tool_result` content block.

    `{"type": "tool_result", "tool_use_id": ..., "content": [blocks], "is_error": bool}`
    (anthropic `ToolResultBlockParam`): text blocks as `{"type": "text", "text"}` (empty ones
    left out: the API refuses empty text), images of a type the API takes (JPEG, PNG, GIF,
    WebP) as `{"type": "image", "source": {"type": "base64", "media_type", "data"}}`, other
    media as a text placeholder (noted). Send it in a `user` message.

    Args:
        result: a shaped `ToolResult` (from `shape_for_llm`).
        tool_use_id: the `id` of the model's `tool_use` block.

    Returns:
        `AdaptedResult(message, notes, provenance)`; `message` is the content block.

    Raises:
        TypeError: `result` is not a `ToolResult` or `tool_use_id` is not a `str`.
        ValueError: `result` is not shaped, or `tool_use_id` is empty.

    Spec: 2026-07-28 server/tools "Tool Result" and "Error Handling" (`isError` results go to
    the model).
    """
    result, provenance = check_shaped(result, "tool_use_id", tool_use_id)
    notes: list[str] = []
    content: list[JSONObject] = []
    for index, block in enumerate(blocks(result)):
        if block.kind == "text":
            if block.text:
                content.append({"type": "text", "text": block.text})
        elif block.kind == "image" and block.mime_type in IMAGE_TYPES:
            source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
            content.append({"type": "image", "source": source})
        else:
            notes.append(f"content[{index}]: {block.kind} replaced by a placeholder")
            content.append({"type": "text", "text": placeholder(block, "Anthropic")})
    if not content:
        content.append({"type": "text", "text": EMPTY_RESULT})
    message: JSONObject = {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": result.is_error is True,
    }
    return AdaptedResult(message, tuple(notes), provenance)
