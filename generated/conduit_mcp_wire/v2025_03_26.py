# Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).
# Source: schema/2025-03-26/schema.json
#   github.com/modelcontextprotocol/modelcontextprotocol schema/2025-03-26/schema.json @ b0f60ba5409db7a6582440a7b473cc0398890f15
#   sha256 e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131
# Models for the definitions reachable from Tool, CallToolResult, ListToolsResult
# (12 of 83 definitions), with the patches in codegen/patches.py:
#   (none)
# and the tagged unions found from its shape (codegen/tagged_unions.py):
#   - /definitions/CallToolResult/properties/content/items: by type (const)
#   - /definitions/EmbeddedResource/properties/resource: by text, blob (present)
# Generator: datamodel-code-generator 0.89.0, black 26.10.1, isort 8.0.1.

from __future__ import annotations

from typing import Annotated, Any, Literal

from conduit_mcp_wire._base import NOT_NULL, AsDict, PresentTag, WireModel
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
    Describes who the intended customer of this object or data is.

    It can include multiple entries to indicate content useful for multiple audiences (e.g., `["user", "assistant"]`).
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

    Any errors that originate from the tool SHOULD be reported inside the result
    object, with `isError` set to true, _not_ as an MCP protocol-level error
    response. Otherwise, the LLM would not be able to see that an error occurred
    and self-correct.

    However, any errors in _finding_ the tool, an error indicating that the
    server does not support tool calls, or any other exceptional conditions,
    should be reported as an MCP error response.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta'), NOT_NULL] = None
    """
    This result property is reserved by the protocol to allow clients and servers to attach additional metadata to their responses.
    """
    content: list[ContentBlock]
    is_error: Annotated[bool | None, Field(alias='isError'), NOT_NULL] = None
    """
    Whether the tool call ended in an error.

    If not set, this is assumed to be false (the call was successful).
    """


class EmbeddedResource(WireModel):
    """
    The contents of a resource, embedded into a prompt or tool call result.

    It is up to the client how best to render embedded resources for the benefit
    of the LLM and/or the user.
    """

    model_config = ConfigDict(
        extra='allow',
    )
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


class ImageContent(WireModel):
    """
    An image provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
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
    This result property is reserved by the protocol to allow clients and servers to attach additional metadata to their responses.
    """
    next_cursor: Annotated[str | None, Field(alias='nextCursor'), NOT_NULL] = None
    """
    An opaque token representing the pagination position after the last returned result.
    If present, there may be more results available.
    """
    tools: list[Tool]


Role = TypeAliasType("Role", Literal['assistant', 'user'])
"""
The sender or recipient of messages and data in a conversation.
"""


class TextContent(WireModel):
    """
    Text provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
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
        TextContent | ImageContent | AudioContent | EmbeddedResource,
        Field(discriminator='type'),
    ],
)


class TextResourceContents(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
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
    annotations: Annotated[ToolAnnotations | None, NOT_NULL] = None
    """
    Optional additional tool information.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    A human-readable description of the tool.

    This can be used by clients to improve the LLM's understanding of available tools. It can be thought of like a "hint" to the model.
    """
    input_schema: Annotated[
        dict[str, Any], Field(alias='inputSchema'), AsDict(InputSchema)
    ]
    """
    A JSON Schema object defining the expected parameters for the tool.
    """
    name: str
    """
    The name of the tool.
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
    will have no additional effect on the its environment.

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


ToolsCallResult = TypeAliasType("ToolsCallResult", CallToolResult)
"""
The answer to `tools/call` at 2025-03-26: `CallToolResult`.
Read it with `parse_result("2025-03-26", "tools/call", raw)` or `TypeAdapter(ToolsCallResult)`.
"""
