# Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).
# Source: schema/2025-11-25/schema.json
#   github.com/modelcontextprotocol/modelcontextprotocol schema/2025-11-25/schema.json @ b0f60ba5409db7a6582440a7b473cc0398890f15
#   sha256 268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7
# Models for the definitions reachable from Tool, CallToolResult, ListToolsResult, CreateTaskResult
# (19 of 145 definitions), with the patches in codegen/patches.py:
#   (none)
# and the tagged unions found from its shape (codegen/tagged_unions.py):
#   - /$defs/ContentBlock: by type (const)
#   - /$defs/EmbeddedResource/properties/resource: by text, blob (present)
# Generator: datamodel-code-generator 0.89.0, black 26.10.1, isort 8.0.1.

from __future__ import annotations

from typing import Annotated, Any, Literal

from conduit_mcp_wire._base import NOT_NULL, AsDict, JSONInteger, PresentTag, WireModel
from pydantic import ConfigDict, Discriminator, Field, Tag
from typing_extensions import TypeAliasType


class Annotations(WireModel):
    """
    Optional annotations for the client. The client can use annotations to inform how objects are used or displayed
    """

    model_config = ConfigDict(
        extra='allow',
    )
    audience: Annotated[list[Role] | None, NOT_NULL] = None
    """
    Describes who the intended audience of this object or data is.

    It can include multiple entries to indicate content useful for multiple audiences (e.g., `["user", "assistant"]`).
    """
    last_modified: Annotated[str | None, Field(alias='lastModified'), NOT_NULL] = None
    """
    The moment the resource was last modified, as an ISO 8601 formatted string.

    Should be an ISO 8601 formatted string (e.g., "2025-01-12T15:00:58Z").

    Examples: last activity timestamp in an open file, timestamp when the resource
    was attached, etc.
    """
    priority: Annotated[float | None, Field(ge=0.0, le=1.0), NOT_NULL] = None
    """
    Describes how important this data is for operating the server.

    A value of 1 means "most important," and indicates that the data is
    effectively required, while 0 means "least important," and indicates that
    the data is entirely optional.
    """


class AudioContent(WireModel):
    """
    Audio provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[Annotations | None, NOT_NULL] = None
    """
    Optional annotations for the client.
    """
    data: str
    """
    The base64-encoded audio data.
    """
    mime_type: Annotated[str, Field(alias='mimeType')]
    """
    The MIME type of the audio. Different providers may support different audio types.
    """
    type: Literal['audio']


class BlobResourceContents(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    blob: str
    """
    A base64-encoded string representing the binary data of the item.
    """
    mime_type: Annotated[str | None, Field(alias='mimeType'), NOT_NULL] = None
    """
    The MIME type of this resource, if known.
    """
    uri: str
    """
    The URI of this resource.
    """


class CallToolResult(WireModel):
    """
    The server's response to a tool call.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    content: list[ContentBlock]
    """
    A list of content objects that represent the unstructured result of the tool call.
    """
    is_error: Annotated[bool | None, Field(alias='isError'), NOT_NULL] = None
    """
    Whether the tool call ended in an error.

    If not set, this is assumed to be false (the call was successful).

    Any errors that originate from the tool SHOULD be reported inside the result
    object, with `isError` set to true, _not_ as an MCP protocol-level error
    response. Otherwise, the LLM would not be able to see that an error occurred
    and self-correct.

    However, any errors in _finding_ the tool, an error indicating that the
    server does not support tool calls, or any other exceptional conditions,
    should be reported as an MCP error response.
    """
    structured_content: Annotated[
        dict[str, Any] | None, Field(alias='structuredContent'), NOT_NULL
    ] = None
    """
    An optional JSON object that represents the structured result of the tool call.
    """


class CreateTaskResult(WireModel):
    """
    A response to a task-augmented request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    task: Task


class EmbeddedResource(WireModel):
    """
    The contents of a resource, embedded into a prompt or tool call result.

    It is up to the client how best to render embedded resources for the benefit
    of the LLM and/or the user.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[Annotations | None, NOT_NULL] = None
    """
    Optional annotations for the client.
    """
    resource: Annotated[
        Annotated[TextResourceContents, Tag("text")]
        | Annotated[BlobResourceContents, Tag("blob")]
        | Annotated[TextResourceContents | BlobResourceContents, Tag("other")],
        Discriminator(PresentTag("text", "blob")),
    ]
    type: Literal['resource']


class Icon(WireModel):
    """
    An optionally-sized icon that can be displayed in a user interface.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    mime_type: Annotated[str | None, Field(alias='mimeType'), NOT_NULL] = None
    """
    Optional MIME type override if the source MIME type is missing or generic.
    For example: `"image/png"`, `"image/jpeg"`, or `"image/svg+xml"`.
    """
    sizes: Annotated[list[str] | None, NOT_NULL] = None
    """
    Optional array of strings that specify sizes at which the icon can be used.
    Each string should be in WxH format (e.g., `"48x48"`, `"96x96"`) or `"any"` for scalable formats like SVG.

    If not provided, the client should assume that the icon can be used at any size.
    """
    src: str
    """
    A standard URI pointing to an icon resource. May be an HTTP/HTTPS URL or a
    `data:` URI with Base64-encoded image data.

    Consumers SHOULD takes steps to ensure URLs serving icons are from the
    same domain as the client/server or a trusted domain.

    Consumers SHOULD take appropriate precautions when consuming SVGs as they can contain
    executable JavaScript.
    """
    theme: Annotated[Literal['dark', 'light'] | None, NOT_NULL] = None
    """
    Optional specifier for the theme this icon is designed for. `light` indicates
    the icon is designed to be used with a light background, and `dark` indicates
    the icon is designed to be used with a dark background.

    If not provided, the client should assume the icon can be used with any theme.
    """


class ImageContent(WireModel):
    """
    An image provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[Annotations | None, NOT_NULL] = None
    """
    Optional annotations for the client.
    """
    data: str
    """
    The base64-encoded image data.
    """
    mime_type: Annotated[str, Field(alias='mimeType')]
    """
    The MIME type of the image. Different providers may support different image types.
    """
    type: Literal['image']


class InputSchema(WireModel):
    """
    A JSON Schema object defining the expected parameters for the tool.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    schema_: Annotated[str | None, Field(alias='$schema'), NOT_NULL] = None
    properties: Annotated[dict[str, dict[str, Any]] | None, NOT_NULL] = None
    required: Annotated[list[str] | None, NOT_NULL] = None
    type: Literal['object']


class ListToolsResult(WireModel):
    """
    The server's response to a tools/list request from the client.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    next_cursor: Annotated[str | None, Field(alias='nextCursor'), NOT_NULL] = None
    """
    An opaque token representing the pagination position after the last returned result.
    If present, there may be more results available.
    """
    tools: list[Tool]


class OutputSchema(WireModel):
    """
    An optional JSON Schema object defining the structure of the tool's output returned in
    the structuredContent field of a CallToolResult.

    Defaults to JSON Schema 2020-12 when no explicit $schema is provided.
    Currently restricted to type: "object" at the root level.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    schema_: Annotated[str | None, Field(alias='$schema'), NOT_NULL] = None
    properties: Annotated[dict[str, dict[str, Any]] | None, NOT_NULL] = None
    required: Annotated[list[str] | None, NOT_NULL] = None
    type: Literal['object']


class ResourceLink(WireModel):
    """
    A resource that the server is capable of reading, included in a prompt or tool call result.

    Note: resource links returned by tools are not guaranteed to appear in the results of `resources/list` requests.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[Annotations | None, NOT_NULL] = None
    """
    Optional annotations for the client.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    A description of what this resource represents.

    This can be used by clients to improve the LLM's understanding of available resources. It can be thought of like a "hint" to the model.
    """
    icons: Annotated[list[Icon] | None, NOT_NULL] = None
    """
    Optional set of sized icons that the client can display in a user interface.

    Clients that support rendering icons MUST support at least the following MIME types:
    - `image/png` - PNG images (safe, universal compatibility)
    - `image/jpeg` (and `image/jpg`) - JPEG images (safe, universal compatibility)

    Clients that support rendering icons SHOULD also support:
    - `image/svg+xml` - SVG images (scalable but requires security precautions)
    - `image/webp` - WebP images (modern, efficient format)
    """
    mime_type: Annotated[str | None, Field(alias='mimeType'), NOT_NULL] = None
    """
    The MIME type of this resource, if known.
    """
    name: str
    """
    Intended for programmatic or logical use, but used as a display name in past specs or fallback (if title isn't present).
    """
    size: Annotated[JSONInteger | None, NOT_NULL] = None
    """
    The size of the raw resource content, in bytes (i.e., before base64 encoding or any tokenization), if known.

    This can be used by Hosts to display file sizes and estimate context window usage.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Intended for UI and end-user contexts — optimized to be human-readable and easily understood,
    even by those unfamiliar with domain-specific terminology.

    If not provided, the name should be used for display (except for Tool,
    where `annotations.title` should be given precedence over using `name`,
    if present).
    """
    type: Literal['resource_link']
    uri: str
    """
    The URI of this resource.
    """


Role = TypeAliasType("Role", Literal['assistant', 'user'])
"""
The sender or recipient of messages and data in a conversation.
"""


class Task(WireModel):
    """
    Data associated with a task.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    created_at: Annotated[str, Field(alias='createdAt')]
    """
    ISO 8601 timestamp when the task was created.
    """
    last_updated_at: Annotated[str, Field(alias='lastUpdatedAt')]
    """
    ISO 8601 timestamp when the task was last updated.
    """
    poll_interval: Annotated[
        JSONInteger | None, Field(alias='pollInterval'), NOT_NULL
    ] = None
    """
    Suggested polling interval in milliseconds.
    """
    status: TaskStatus
    """
    Current task state.
    """
    status_message: Annotated[str | None, Field(alias='statusMessage'), NOT_NULL] = None
    """
    Optional human-readable message describing the current task state.
    This can provide context for any status, including:
    - Reasons for "cancelled" status
    - Summaries for "completed" status
    - Diagnostic information for "failed" status (e.g., error details, what went wrong)
    """
    task_id: Annotated[str, Field(alias='taskId')]
    """
    The task identifier.
    """
    ttl: JSONInteger | None
    """
    Actual retention duration from creation in milliseconds, null for unlimited.
    """


TaskStatus = TypeAliasType(
    "TaskStatus",
    Literal['cancelled', 'completed', 'failed', 'input_required', 'working'],
)
"""
The status of a task.
"""


class TextContent(WireModel):
    """
    Text provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[Annotations | None, NOT_NULL] = None
    """
    Optional annotations for the client.
    """
    text: str
    """
    The text content of the message.
    """
    type: Literal['text']


ContentBlock = TypeAliasType(
    "ContentBlock",
    Annotated[
        TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
        Field(discriminator='type'),
    ],
)


class TextResourceContents(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    mime_type: Annotated[str | None, Field(alias='mimeType'), NOT_NULL] = None
    """
    The MIME type of this resource, if known.
    """
    text: str
    """
    The text of the item. This must only be set if the item can actually be represented as text (not binary data).
    """
    uri: str
    """
    The URI of this resource.
    """


class Tool(WireModel):
    """
    Definition for a tool the client can call.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on `_meta` usage.
    """
    annotations: Annotated[ToolAnnotations | None, NOT_NULL] = None
    """
    Optional additional tool information.

    Display name precedence order is: title, annotations.title, then name.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    A human-readable description of the tool.

    This can be used by clients to improve the LLM's understanding of available tools. It can be thought of like a "hint" to the model.
    """
    execution: Annotated[ToolExecution | None, NOT_NULL] = None
    """
    Execution-related properties for this tool.
    """
    icons: Annotated[list[Icon] | None, NOT_NULL] = None
    """
    Optional set of sized icons that the client can display in a user interface.

    Clients that support rendering icons MUST support at least the following MIME types:
    - `image/png` - PNG images (safe, universal compatibility)
    - `image/jpeg` (and `image/jpg`) - JPEG images (safe, universal compatibility)

    Clients that support rendering icons SHOULD also support:
    - `image/svg+xml` - SVG images (scalable but requires security precautions)
    - `image/webp` - WebP images (modern, efficient format)
    """
    input_schema: Annotated[
        dict[str, Any], Field(alias='inputSchema'), AsDict(InputSchema)
    ]
    """
    A JSON Schema object defining the expected parameters for the tool.
    """
    name: str
    """
    Intended for programmatic or logical use, but used as a display name in past specs or fallback (if title isn't present).
    """
    output_schema: Annotated[
        dict[str, Any] | None,
        Field(alias='outputSchema'),
        AsDict(OutputSchema),
        NOT_NULL,
    ] = None
    """
    An optional JSON Schema object defining the structure of the tool's output returned in
    the structuredContent field of a CallToolResult.

    Defaults to JSON Schema 2020-12 when no explicit $schema is provided.
    Currently restricted to type: "object" at the root level.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Intended for UI and end-user contexts — optimized to be human-readable and easily understood,
    even by those unfamiliar with domain-specific terminology.

    If not provided, the name should be used for display (except for Tool,
    where `annotations.title` should be given precedence over using `name`,
    if present).
    """


class ToolAnnotations(WireModel):
    """
    Additional properties describing a Tool to clients.

    NOTE: all properties in ToolAnnotations are **hints**.
    They are not guaranteed to provide a faithful description of
    tool behavior (including descriptive properties like `title`).

    Clients should never make tool use decisions based on ToolAnnotations
    received from untrusted servers.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    destructive_hint: Annotated[
        bool | None, Field(alias='destructiveHint'), NOT_NULL
    ] = None
    """
    If true, the tool may perform destructive updates to its environment.
    If false, the tool performs only additive updates.

    (This property is meaningful only when `readOnlyHint == false`)

    Default: true
    """
    idempotent_hint: Annotated[bool | None, Field(alias='idempotentHint'), NOT_NULL] = (
        None
    )
    """
    If true, calling the tool repeatedly with the same arguments
    will have no additional effect on its environment.

    (This property is meaningful only when `readOnlyHint == false`)

    Default: false
    """
    open_world_hint: Annotated[bool | None, Field(alias='openWorldHint'), NOT_NULL] = (
        None
    )
    """
    If true, this tool may interact with an "open world" of external
    entities. If false, the tool's domain of interaction is closed.
    For example, the world of a web search tool is open, whereas that
    of a memory tool is not.

    Default: true
    """
    read_only_hint: Annotated[bool | None, Field(alias='readOnlyHint'), NOT_NULL] = None
    """
    If true, the tool does not modify its environment.

    Default: false
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    A human-readable title for the tool.
    """


class ToolExecution(WireModel):
    """
    Execution-related properties for a tool.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    task_support: Annotated[
        Literal['forbidden', 'optional', 'required'] | None,
        Field(alias='taskSupport'),
        NOT_NULL,
    ] = None
    """
    Indicates whether this tool supports task-augmented execution.
    This allows clients to handle long-running operations through polling
    the task system.

    - "forbidden": Tool does not support task-augmented execution (default when absent)
    - "optional": Tool may support task-augmented execution
    - "required": Tool requires task-augmented execution

    Default: "forbidden"
    """


ToolsCallResult = TypeAliasType("ToolsCallResult", CallToolResult | CreateTaskResult)
"""
The answer to `tools/call` at 2025-11-25: `CallToolResult` or `CreateTaskResult`.

The arms have no tag at this version; the one the answer fits is read (a task-augmented call
answers `CreateTaskResult`, holding `task`; a plain call `CallToolResult`, holding `content`).
Read it with `parse_result("2025-11-25", "tools/call", raw)` or `TypeAdapter(ToolsCallResult)`.
"""
