"""Wire names, spelled as on the wire, in one place (spec 2026-07-28 schema.json)."""

from __future__ import annotations

from typing import Final

# Tool (schema `Tool`)
NAME: Final = "name"
TITLE: Final = "title"
DESCRIPTION: Final = "description"
INPUT_SCHEMA: Final = "inputSchema"
OUTPUT_SCHEMA: Final = "outputSchema"
ANNOTATIONS: Final = "annotations"
EXECUTION: Final = "execution"
ICONS: Final = "icons"
META: Final = "_meta"
TASK_SUPPORT: Final = "taskSupport"

# ToolAnnotations hints (server/tools "Tool Annotations")
READ_ONLY_HINT: Final = "readOnlyHint"
DESTRUCTIVE_HINT: Final = "destructiveHint"
IDEMPOTENT_HINT: Final = "idempotentHint"
OPEN_WORLD_HINT: Final = "openWorldHint"

# CallToolResult
CONTENT: Final = "content"
STRUCTURED_CONTENT: Final = "structuredContent"
IS_ERROR: Final = "isError"
RESULT_TYPE: Final = "resultType"

# ListToolsResult
TOOLS: Final = "tools"
NEXT_CURSOR: Final = "nextCursor"
TTL_MS: Final = "ttlMs"
CACHE_SCOPE: Final = "cacheScope"

#: Keys of a CallToolResult that `ToolResult` lifts; every other key lands in `extra`.
RESULT_LIFTED_KEYS: Final = frozenset({CONTENT, STRUCTURED_CONTENT, IS_ERROR, META, RESULT_TYPE})
