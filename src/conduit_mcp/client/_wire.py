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

# InputRequiredResult (2026-07-28 basic/patterns/mrtr)
INPUT_REQUESTS: Final = "inputRequests"
REQUEST_STATE: Final = "requestState"

# ListToolsResult
TOOLS: Final = "tools"
NEXT_CURSOR: Final = "nextCursor"
TTL_MS: Final = "ttlMs"
CACHE_SCOPE: Final = "cacheScope"

#: Keys of a CallToolResult that `ToolResult` lifts; every other key lands in `extra`.
RESULT_LIFTED_KEYS: Final = frozenset({CONTENT, STRUCTURED_CONTENT, IS_ERROR, META, RESULT_TYPE})

# 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters"
X_MCP_HEADER: Final = "x-mcp-header"
MCP_PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
MCP_NAME_HEADER: Final = "Mcp-Name"
HEADER_B64_PREFIX: Final = "=?base64?"
HEADER_B64_SUFFIX: Final = "?="

# Content blocks (schema `ContentBlock`: TextContent, ImageContent, AudioContent, ResourceLink,
# EmbeddedResource with TextResourceContents / BlobResourceContents); `name` is NAME above.
BLOCK_TYPE: Final = "type"
BLOCK_TEXT: Final = "text"
BLOCK_DATA: Final = "data"
BLOCK_MIME_TYPE: Final = "mimeType"
BLOCK_URI: Final = "uri"
BLOCK_RESOURCE: Final = "resource"
BLOCK_BLOB: Final = "blob"
TYPE_TEXT: Final = "text"
TYPE_IMAGE: Final = "image"
TYPE_AUDIO: Final = "audio"
TYPE_RESOURCE_LINK: Final = "resource_link"
TYPE_RESOURCE: Final = "resource"
