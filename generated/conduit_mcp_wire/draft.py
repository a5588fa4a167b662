# Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).
# Source: schema/draft/schema.json
#   github.com/modelcontextprotocol/modelcontextprotocol schema/draft/schema.json @ b0f60ba5409db7a6582440a7b473cc0398890f15
#   sha256 ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203
# Models for the definitions reachable from Tool, CallToolResult, ListToolsResult, CallToolResultResponse, ListToolsResultResponse, InputRequiredResult
# (48 of 155 definitions), with the patches in codegen/patches.py:
#   - /$defs/MetaObject/additionalProperties
#   - /$defs/ResultMetaObject/properties/io.modelcontextprotocol~1serverInfo/$ref
# and the tagged unions found from its shape (codegen/tagged_unions.py):
#   - /$defs/ContentBlock: by type (const)
#   - /$defs/ElicitRequestParams: by mode (member)
#   - /$defs/EmbeddedResource/properties/resource: by text, blob (present)
#   - /$defs/InputRequest: by method (const)
#   - /$defs/PrimitiveSchemaDefinition: by type (member)
#   - /$defs/SamplingMessageContentBlock: by type (const)
# Generator: datamodel-code-generator 0.89.0, black 26.10.1, isort 8.0.1.

from __future__ import annotations

from typing import Annotated, Any, Dict, Literal, Union

from conduit_mcp_wire._base import (
    NOT_NULL,
    AsDict,
    JSONInteger,
    MemberTag,
    PresentTag,
    WireModel,
    result_type_tag,
)
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
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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


class BooleanSchema(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[bool | None, NOT_NULL] = None
    description: Annotated[str | None, NOT_NULL] = None
    title: Annotated[str | None, NOT_NULL] = None
    type: Literal['boolean']


class CallToolResult(WireModel):
    """
    The result returned by the server for a {@link CallToolRequesttools/call} request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[
        dict[str, Any] | None, Field(alias='_meta'), AsDict(ResultMetaObject), NOT_NULL
    ] = None
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
    result_type: Annotated[str, Field(alias='resultType')]
    """
    Indicates the type of the result, which allows the client to determine
    how to parse the result object.

    Servers implementing this protocol version MUST include this field.
    For backward compatibility, when a client receives a result from a
    server implementing an earlier protocol version (which does not include
    `resultType`), the client MUST treat the absent field as `"complete"`.
    """
    structured_content: Annotated[Any | None, Field(alias='structuredContent')] = None
    """
    An optional JSON value that represents the structured result of the tool call.

    This can be any JSON value (object, array, string, number, boolean, or null)
    that conforms to the tool's outputSchema if one is defined.
    """


class CallToolResultResponse(WireModel):
    """
    A successful response from the server for a {@link CallToolRequesttools/call} request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    id: RequestId
    jsonrpc: Literal['2.0']
    result: InputRequiredResult | CallToolResult


class CreateMessageRequest(WireModel):
    """
    A request from the server to sample an LLM via the client. The client has full discretion over which model to select. The client should also inform the user before beginning sampling, to allow them to inspect the request (human in the loop) and decide whether to approve it.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    method: Literal['sampling/createMessage']
    params: CreateMessageRequestParams


class CreateMessageRequestParams(WireModel):
    """
    Parameters for a `sampling/createMessage` request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    include_context: Annotated[
        Literal['allServers', 'none', 'thisServer'] | None,
        Field(alias='includeContext'),
        NOT_NULL,
    ] = None
    """
    A request to include context from one or more MCP servers (including the caller), to be attached to the prompt.
    The client MAY ignore this request.

    Default is `"none"`. The values `"thisServer"` and `"allServers"` are deprecated (SEP-2596): servers SHOULD
    omit this field or use `"none"`, and SHOULD only use the deprecated values if the client declares
    {@link ClientCapabilities.sampling.context}.
    """
    max_tokens: Annotated[JSONInteger, Field(alias='maxTokens')]
    """
    The requested maximum number of tokens to sample (to prevent runaway completions).

    The client MAY choose to sample fewer tokens than the requested maximum.
    """
    messages: list[SamplingMessage]
    metadata: Annotated[JSONObject | None, NOT_NULL] = None
    """
    Optional metadata to pass through to the LLM provider. The format of this metadata is provider-specific.
    """
    model_preferences: Annotated[
        ModelPreferences | None, Field(alias='modelPreferences'), NOT_NULL
    ] = None
    """
    The server's preferences for which model to select. The client MAY ignore these preferences.
    """
    stop_sequences: Annotated[
        list[str] | None, Field(alias='stopSequences'), NOT_NULL
    ] = None
    system_prompt: Annotated[str | None, Field(alias='systemPrompt'), NOT_NULL] = None
    """
    An optional system prompt the server wants to use for sampling. The client MAY modify or omit this prompt.
    """
    temperature: Annotated[float | None, NOT_NULL] = None
    tool_choice: Annotated[ToolChoice | None, Field(alias='toolChoice'), NOT_NULL] = (
        None
    )
    """
    Controls how the model uses tools.
    The client MUST return an error if this field is provided but {@link ClientCapabilities.sampling.tools} is not declared.
    Default is `{ mode: "auto" }`.
    """
    tools: Annotated[list[Tool] | None, NOT_NULL] = None
    """
    Tools that the model may use during generation.
    The client MUST return an error if this field is provided but {@link ClientCapabilities.sampling.tools} is not declared.
    """


class ElicitRequest(WireModel):
    """
    A request from the server to elicit additional information from the user via the client.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    method: Literal['elicitation/create']
    params: ElicitRequestParams


class ElicitRequestFormParams(WireModel):
    """
    The parameters for a request to elicit non-sensitive information from the user via a form in the client.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    message: str
    """
    The message to present to the user describing what information is being requested.
    """
    mode: Annotated[Literal['form'] | None, NOT_NULL] = None
    """
    The elicitation mode.
    """
    requested_schema: Annotated[RequestedSchema, Field(alias='requestedSchema')]
    """
    A restricted subset of JSON Schema.
    Only top-level properties are allowed, without nesting.
    """


class ElicitRequestURLParams(WireModel):
    """
    The parameters for a request to elicit information from the user via a URL in the client.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    message: str
    """
    The message to present to the user explaining why the interaction is needed.
    """
    mode: Literal['url']
    """
    The elicitation mode.
    """
    url: str
    """
    The URL that the user should navigate to.
    """


ElicitRequestParams = TypeAliasType(
    "ElicitRequestParams",
    Annotated[
        Annotated[ElicitRequestFormParams, Tag("form")]
        | Annotated[ElicitRequestURLParams, Tag("url")]
        | Annotated[ElicitRequestFormParams | ElicitRequestURLParams, Tag("other")],
        Discriminator(MemberTag("mode", {"form": "form", "url": "url"}, absent="form")),
    ],
)
"""
The parameters for a request to elicit additional information from the user via the client.
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
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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

    Consumers SHOULD take steps to ensure URLs serving icons are from the
    same domain as the client/server or a trusted domain.

    Consumers SHOULD take appropriate precautions when consuming SVGs as they can contain
    executable JavaScript.
    """
    theme: Annotated[Literal['dark', 'light'] | None, NOT_NULL] = None
    """
    Optional specifier for the theme this icon is designed for. `"light"` indicates
    the icon is designed to be used with a light background, and `"dark"` indicates
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
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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


class InputRequiredResult(WireModel):
    """
    An InputRequiredResult sent by the server to indicate that additional input is needed
    before the request can be completed.

    At least one of `inputRequests` or `requestState` MUST be present.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[
        dict[str, Any] | None, Field(alias='_meta'), AsDict(ResultMetaObject), NOT_NULL
    ] = None
    input_requests: Annotated[
        InputRequests | None, Field(alias='inputRequests'), NOT_NULL
    ] = None
    request_state: Annotated[str | None, Field(alias='requestState'), NOT_NULL] = None
    result_type: Annotated[str, Field(alias='resultType')]
    """
    Indicates the type of the result, which allows the client to determine
    how to parse the result object.

    Servers implementing this protocol version MUST include this field.
    For backward compatibility, when a client receives a result from a
    server implementing an earlier protocol version (which does not include
    `resultType`), the client MUST treat the absent field as `"complete"`.
    """


class InputSchema(WireModel):
    """
    A JSON Schema object defining the expected parameters for the tool.

    Tool arguments are always JSON objects, so `type: "object"` is required at the root.
    Beyond that, any JSON Schema 2020-12 keyword may appear alongside `type` — including
    composition keywords (`oneOf`, `anyOf`, `allOf`, `not`), conditional keywords
    (`if`/`then`/`else`), reference keywords (`$ref`, `$defs`, `$anchor`), and any other
    standard validation or annotation keywords.

    Property schemas may carry an `x-mcp-header` annotation to mirror the
    argument value into an HTTP header on the Streamable HTTP transport. See
    the Streamable HTTP transport specification for the validity and
    extraction rules.

    Defaults to JSON Schema 2020-12 when no explicit `$schema` is provided.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    __annotations__ = {
        '__pydantic_extra__': Dict[str, Any],
    }
    schema_: Annotated[str | None, Field(alias='$schema'), NOT_NULL] = None
    type: Literal['object']


JSONObject = TypeAliasType("JSONObject", dict[str, "JSONValue"])


JSONValue = TypeAliasType(
    "JSONValue", Union[JSONObject, "list[JSONValue]", str, JSONInteger, bool]
)


class LegacyTitledEnumSchema(WireModel):
    """
    Use {@link TitledSingleSelectEnumSchema} instead.
    This interface will be removed in a future version.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[str | None, NOT_NULL] = None
    description: Annotated[str | None, NOT_NULL] = None
    enum: list[str]
    enum_names: Annotated[list[str] | None, Field(alias='enumNames'), NOT_NULL] = None
    """
    (Legacy) Display names for enum values.
    Non-standard according to JSON schema 2020-12.
    """
    title: Annotated[str | None, NOT_NULL] = None
    type: Literal['string']


class ListRootsRequest(WireModel):
    """
    Sent from the server to request a list of root URIs from the client. Roots allow
    servers to ask for specific directories or files to operate on. A common example
    for roots is providing a set of repositories or directories a server should operate
    on.

    This request is typically used when the server needs to understand the file system
    structure or access specific locations that the client has permission to read from.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    method: Literal['roots/list']
    params: Annotated[ListRootsRequestParams | None, NOT_NULL] = None


InputRequest = TypeAliasType(
    "InputRequest",
    Annotated[
        CreateMessageRequest | ListRootsRequest | ElicitRequest,
        Field(discriminator='method'),
    ],
)


InputRequests = TypeAliasType("InputRequests", dict[str, InputRequest])
"""
A map of server-initiated requests that the client must fulfill.
Keys are server-assigned identifiers; values are the request objects.
"""


class ListRootsRequestParams(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None


class ListToolsResult(WireModel):
    """
    The result returned by the server for a {@link ListToolsRequesttools/list} request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[
        dict[str, Any] | None, Field(alias='_meta'), AsDict(ResultMetaObject), NOT_NULL
    ] = None
    cache_scope: Annotated[Literal['private', 'public'], Field(alias='cacheScope')]
    """
    Indicates the intended scope of the cached response, analogous to HTTP
    `Cache-Control: public` vs `Cache-Control: private`.

    - `"public"`: The response does not contain user-specific data. Any
      client or intermediary (e.g., shared gateway, caching proxy) MAY cache
      the response and serve it across authorization contexts.
    - `"private"`: The response MAY be cached and reused only within the
      same authorization context. Caches MUST NOT be shared across
      authorization contexts (e.g., a different access token requires a
      different cache).
    """
    next_cursor: Annotated[str | None, Field(alias='nextCursor'), NOT_NULL] = None
    """
    An opaque token representing the pagination position after the last returned result.
    If present, there may be more results available.
    """
    result_type: Annotated[str, Field(alias='resultType')]
    """
    Indicates the type of the result, which allows the client to determine
    how to parse the result object.

    Servers implementing this protocol version MUST include this field.
    For backward compatibility, when a client receives a result from a
    server implementing an earlier protocol version (which does not include
    `resultType`), the client MUST treat the absent field as `"complete"`.
    """
    tools: list[Tool]
    ttl_ms: Annotated[JSONInteger, Field(alias='ttlMs', ge=0)]
    """
    A hint from the server indicating how long (in milliseconds) the
    client MAY cache this response before re-fetching. Semantics are
    analogous to HTTP Cache-Control max-age.

    - If 0, The response SHOULD be considered immediately stale,
      The client MAY re-fetch every time the result is needed.
    - If positive, the client SHOULD consider the result fresh for this many
      milliseconds after receiving the response.
    """


class ListToolsResultResponse(WireModel):
    """
    A successful response from the server for a {@link ListToolsRequesttools/list} request.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    id: RequestId
    jsonrpc: Literal['2.0']
    result: ListToolsResult


MetaObject = TypeAliasType("MetaObject", dict[str, Any])
"""
Represents the contents of a `_meta` field, which clients and servers use to attach additional metadata to their interactions.

Certain key names are reserved by MCP for protocol-level metadata; implementations MUST NOT make assumptions about values at these keys. Additionally, specific schema definitions may reserve particular names for purpose-specific metadata, as declared in those definitions.

Valid keys have two segments:

**Prefix:**
- Optional — if specified, MUST be a series of _labels_ separated by dots (`.`), followed by a slash (`/`).
- Labels MUST start with a letter and end with a letter or digit. Interior characters may be letters, digits, or hyphens (`-`).
- Implementations SHOULD use reverse DNS notation (e.g., `com.example/` rather than `example.com/`).
- Any prefix where the second label is `modelcontextprotocol` or `mcp` is **reserved** for MCP use. For example: `io.modelcontextprotocol/`, `dev.mcp/`, `org.modelcontextprotocol.api/`, and `com.mcp.tools/` are all reserved. However, `com.example.mcp/` is NOT reserved, as the second label is `example`.

**Name:**
- Unless empty, MUST start and end with an alphanumeric character (`[a-z0-9A-Z]`).
- Interior characters may be alphanumeric, hyphens (`-`), underscores (`_`), or dots (`.`).
"""


class ModelHint(WireModel):
    """
    Hints to use for model selection.

    Keys not declared here are currently left unspecified by the spec and are up
    to the client to interpret.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    name: Annotated[str | None, NOT_NULL] = None
    """
    A hint for a model name.

    The client SHOULD treat this as a substring of a model name; for example:
     - `claude-3-5-sonnet` should match `claude-3-5-sonnet-20241022`
     - `sonnet` should match `claude-3-5-sonnet-20241022`, `claude-3-sonnet-20240229`, etc.
     - `claude` should match any Claude model

    The client MAY also map the string to a different provider's model name or a different model family, as long as it fills a similar niche; for example:
     - `gemini-1.5-flash` could match `claude-3-haiku-20240307`
    """


class ModelPreferences(WireModel):
    """
    The server's preferences for model selection, requested of the client during sampling.

    Because LLMs can vary along multiple dimensions, choosing the "best" model is
    rarely straightforward.  Different models excel in different areas—some are
    faster but less capable, others are more capable but more expensive, and so
    on. This interface allows servers to express their priorities across multiple
    dimensions to help clients make an appropriate selection for their use case.

    These preferences are always advisory. The client MAY ignore them. It is also
    up to the client to decide how to interpret these preferences and how to
    balance them against other considerations.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    cost_priority: Annotated[
        float | None, Field(alias='costPriority', ge=0.0, le=1.0), NOT_NULL
    ] = None
    """
    How much to prioritize cost when selecting a model. A value of 0 means cost
    is not important, while a value of 1 means cost is the most important
    factor.
    """
    hints: Annotated[list[ModelHint] | None, NOT_NULL] = None
    """
    Optional hints to use for model selection.

    If multiple hints are specified, the client MUST evaluate them in order
    (such that the first match is taken).

    The client SHOULD prioritize these hints over the numeric priorities, but
    MAY still use the priorities to select from ambiguous matches.
    """
    intelligence_priority: Annotated[
        float | None, Field(alias='intelligencePriority', ge=0.0, le=1.0), NOT_NULL
    ] = None
    """
    How much to prioritize intelligence and capabilities when selecting a
    model. A value of 0 means intelligence is not important, while a value of 1
    means intelligence is the most important factor.
    """
    speed_priority: Annotated[
        float | None, Field(alias='speedPriority', ge=0.0, le=1.0), NOT_NULL
    ] = None
    """
    How much to prioritize sampling speed (latency) when selecting a model. A
    value of 0 means speed is not important, while a value of 1 means speed is
    the most important factor.
    """


class NumberSchema(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[float | None, NOT_NULL] = None
    description: Annotated[str | None, NOT_NULL] = None
    maximum: Annotated[float | None, NOT_NULL] = None
    minimum: Annotated[float | None, NOT_NULL] = None
    title: Annotated[str | None, NOT_NULL] = None
    type: Literal['integer', 'number']


class OutputSchema(WireModel):
    """
    An optional JSON Schema object defining the structure of the tool's output returned in
    the structuredContent field of a {@link CallToolResult}. This can be any valid JSON Schema 2020-12.

    Defaults to JSON Schema 2020-12 when no explicit `$schema` is provided.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    __annotations__ = {
        '__pydantic_extra__': Dict[str, Any],
    }
    schema_: Annotated[str | None, Field(alias='$schema'), NOT_NULL] = None


RequestId = TypeAliasType("RequestId", str | JSONInteger)
"""
A uniquely identifying ID for a request in JSON-RPC.
"""


class RequestedSchema(WireModel):
    """
    A restricted subset of JSON Schema.
    Only top-level properties are allowed, without nesting.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    schema_: Annotated[str | None, Field(alias='$schema'), NOT_NULL] = None
    properties: dict[str, PrimitiveSchemaDefinition]
    required: Annotated[list[str] | None, NOT_NULL] = None
    type: Literal['object']


class ResourceLink(WireModel):
    """
    A resource that the server is capable of reading, included in a prompt or tool call result.

    Note: resource links returned by tools are not guaranteed to appear in the results of {@link ListResourcesRequestresources/list} requests.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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

    If not provided, the name should be used for display (except for {@link Tool},
    where `annotations.title` should be given precedence over using `name`,
    if present).
    """
    type: Literal['resource_link']
    uri: str
    """
    The URI of this resource.
    """


class ResultMetaObject(WireModel):
    """
    Extends {@link MetaObject} with additional result-specific fields. All key naming rules from `MetaObject` apply.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    server_info: Annotated[
        Any | None, Field(alias='io.modelcontextprotocol/serverInfo')
    ] = None
    """
    Identifies the server software producing the response. Servers SHOULD
    include this field on every response unless specifically configured not
    to do so.

    The {@link Implementation} schema requires `name` and `version`; other
    fields are optional.

    The value is self-reported by the server and is not verified by the
    protocol. It is intended for display, logging, and debugging. Clients
    SHOULD NOT use it to change their behavior, and SHOULD NOT rely on it for
    security decisions.
    """


Role = TypeAliasType("Role", Literal['assistant', 'user'])
"""
The sender or recipient of messages and data in a conversation.
"""


class SamplingMessage(WireModel):
    """
    Describes a message issued to or received from an LLM API.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
    content: (
        TextContent
        | ImageContent
        | AudioContent
        | ToolUseContent
        | ToolResultContent
        | list[SamplingMessageContentBlock]
    )
    role: Role


class StringSchema(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[str | None, NOT_NULL] = None
    description: Annotated[str | None, NOT_NULL] = None
    format: Annotated[Literal['date', 'date-time', 'email', 'uri'] | None, NOT_NULL] = (
        None
    )
    max_length: Annotated[JSONInteger | None, Field(alias='maxLength'), NOT_NULL] = None
    min_length: Annotated[JSONInteger | None, Field(alias='minLength'), NOT_NULL] = None
    title: Annotated[str | None, NOT_NULL] = None
    type: Literal['string']


class TextContent(WireModel):
    """
    Text provided to or from an LLM.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
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


class TitledMultiSelectEnumSchema(WireModel):
    """
    Schema for multiple-selection enumeration with display titles for each option.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[list[str] | None, NOT_NULL] = None
    """
    Optional default value.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    Optional description for the enum field.
    """
    items: TitledMultiSelectItems
    """
    Schema for array items with enum options and display labels.
    """
    max_items: Annotated[JSONInteger | None, Field(alias='maxItems'), NOT_NULL] = None
    """
    Maximum number of items to select.
    """
    min_items: Annotated[JSONInteger | None, Field(alias='minItems'), NOT_NULL] = None
    """
    Minimum number of items to select.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Optional title for the enum field.
    """
    type: Literal['array']


class TitledMultiSelectItems(WireModel):
    """
    Schema for array items with enum options and display labels.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    any_of: Annotated[list[TitledMultiSelectOption], Field(alias='anyOf')]
    """
    Array of enum options with values and display labels.
    """


class TitledMultiSelectOption(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    const: str
    """
    The constant enum value.
    """
    title: str
    """
    Display title for this option.
    """


class TitledSingleSelectEnumSchema(WireModel):
    """
    Schema for single-selection enumeration with display titles for each option.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[str | None, NOT_NULL] = None
    """
    Optional default value.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    Optional description for the enum field.
    """
    one_of: Annotated[list[TitledSingleSelectOption], Field(alias='oneOf')]
    """
    Array of enum options with values and display labels.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Optional title for the enum field.
    """
    type: Literal['string']


class TitledSingleSelectOption(WireModel):
    model_config = ConfigDict(
        extra='allow',
    )
    const: str
    """
    The enum value.
    """
    title: str
    """
    Display label for this option.
    """


class Tool(WireModel):
    """
    Definition for a tool the client can call.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
    annotations: Annotated[ToolAnnotations | None, NOT_NULL] = None
    """
    Optional additional tool information.

    Display name precedence order is: `title`, `annotations.title`, then `name`.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    A human-readable description of the tool.

    This can be used by clients to improve the LLM's understanding of available tools. It can be thought of like a "hint" to the model.
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

    Tool arguments are always JSON objects, so `type: "object"` is required at the root.
    Beyond that, any JSON Schema 2020-12 keyword may appear alongside `type` — including
    composition keywords (`oneOf`, `anyOf`, `allOf`, `not`), conditional keywords
    (`if`/`then`/`else`), reference keywords (`$ref`, `$defs`, `$anchor`), and any other
    standard validation or annotation keywords.

    Property schemas may carry an `x-mcp-header` annotation to mirror the
    argument value into an HTTP header on the Streamable HTTP transport. See
    the Streamable HTTP transport specification for the validity and
    extraction rules.

    Defaults to JSON Schema 2020-12 when no explicit `$schema` is provided.
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
    the structuredContent field of a {@link CallToolResult}. This can be any valid JSON Schema 2020-12.

    Defaults to JSON Schema 2020-12 when no explicit `$schema` is provided.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Intended for UI and end-user contexts — optimized to be human-readable and easily understood,
    even by those unfamiliar with domain-specific terminology.

    If not provided, the name should be used for display (except for {@link Tool},
    where `annotations.title` should be given precedence over using `name`,
    if present).
    """


class ToolAnnotations(WireModel):
    """
    Additional properties describing a {@link Tool} to clients.

    NOTE: all properties in `ToolAnnotations` are **hints**.
    They are not guaranteed to provide a faithful description of
    tool behavior (including descriptive properties like `title`).

    Clients should never make tool use decisions based on `ToolAnnotations`
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


class ToolChoice(WireModel):
    """
    Controls tool selection behavior for sampling requests.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    mode: Annotated[Literal['auto', 'none', 'required'] | None, NOT_NULL] = None
    """
    Controls the tool use ability of the model:
    - `"auto"`: Model decides whether to use tools (default)
    - `"required"`: Model MUST use at least one tool before completing
    - `"none"`: Model MUST NOT use any tools
    """


class ToolResultContent(WireModel):
    """
    The result of a tool use, provided by the user back to the assistant.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
    """
    Optional metadata about the tool result. Clients SHOULD preserve this field when
    including tool results in subsequent sampling requests to enable caching optimizations.
    """
    content: list[ContentBlock]
    """
    The unstructured result content of the tool use.

    This has the same format as {@link CallToolResult.content} and can include text, images,
    audio, resource links, and embedded resources.
    """
    is_error: Annotated[bool | None, Field(alias='isError'), NOT_NULL] = None
    """
    Whether the tool use resulted in an error.

    If true, the content typically describes the error that occurred.
    Default: false
    """
    structured_content: Annotated[Any | None, Field(alias='structuredContent')] = None
    """
    An optional structured result value.

    This can be any JSON value (object, array, string, number, boolean, or null).
    If the tool defined an {@link Tool.outputSchema}, this SHOULD conform to that schema.
    """
    tool_use_id: Annotated[str, Field(alias='toolUseId')]
    """
    The ID of the tool use this result corresponds to.

    This MUST match the ID from a previous {@link ToolUseContent}.
    """
    type: Literal['tool_result']


class ToolUseContent(WireModel):
    """
    A request from the assistant to call a tool.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    meta: Annotated[MetaObject | None, Field(alias='_meta'), NOT_NULL] = None
    """
    Optional metadata about the tool use. Clients SHOULD preserve this field when
    including tool uses in subsequent sampling requests to enable caching optimizations.
    """
    id: str
    """
    A unique identifier for this tool use.

    This ID is used to match tool results to their corresponding tool uses.
    """
    input: dict[str, Any]
    """
    The arguments to pass to the tool, conforming to the tool's input schema.
    """
    name: str
    """
    The name of the tool to call.
    """
    type: Literal['tool_use']


SamplingMessageContentBlock = TypeAliasType(
    "SamplingMessageContentBlock",
    Annotated[
        TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
        Field(discriminator='type'),
    ],
)


class UntitledMultiSelectEnumSchema(WireModel):
    """
    Schema for multiple-selection enumeration without display titles for options.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[list[str] | None, NOT_NULL] = None
    """
    Optional default value.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    Optional description for the enum field.
    """
    items: UntitledMultiSelectItems
    """
    Schema for the array items.
    """
    max_items: Annotated[JSONInteger | None, Field(alias='maxItems'), NOT_NULL] = None
    """
    Maximum number of items to select.
    """
    min_items: Annotated[JSONInteger | None, Field(alias='minItems'), NOT_NULL] = None
    """
    Minimum number of items to select.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Optional title for the enum field.
    """
    type: Literal['array']


class UntitledMultiSelectItems(WireModel):
    """
    Schema for the array items.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    enum: list[str]
    """
    Array of enum values to choose from.
    """
    type: Literal['string']


class UntitledSingleSelectEnumSchema(WireModel):
    """
    Schema for single-selection enumeration without display titles for options.
    """

    model_config = ConfigDict(
        extra='allow',
    )
    default: Annotated[str | None, NOT_NULL] = None
    """
    Optional default value.
    """
    description: Annotated[str | None, NOT_NULL] = None
    """
    Optional description for the enum field.
    """
    enum: list[str]
    """
    Array of enum values to choose from.
    """
    title: Annotated[str | None, NOT_NULL] = None
    """
    Optional title for the enum field.
    """
    type: Literal['string']


PrimitiveSchemaDefinition = TypeAliasType(
    "PrimitiveSchemaDefinition",
    Annotated[
        Annotated[
            StringSchema
            | UntitledSingleSelectEnumSchema
            | TitledSingleSelectEnumSchema
            | LegacyTitledEnumSchema,
            Tag("string"),
        ]
        | Annotated[NumberSchema, Tag("integer")]
        | Annotated[BooleanSchema, Tag("boolean")]
        | Annotated[
            UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema, Tag("array")
        ]
        | Annotated[
            StringSchema
            | NumberSchema
            | BooleanSchema
            | UntitledSingleSelectEnumSchema
            | TitledSingleSelectEnumSchema
            | UntitledMultiSelectEnumSchema
            | TitledMultiSelectEnumSchema
            | LegacyTitledEnumSchema,
            Tag("other"),
        ],
        Discriminator(
            MemberTag(
                "type",
                {
                    "string": "string",
                    "integer": "integer",
                    "number": "integer",
                    "boolean": "boolean",
                    "array": "array",
                },
                absent=None,
            )
        ),
    ],
)
"""
Restricted schema definitions that only allow primitive types
without nested objects or arrays.
"""


CallToolResultResponse.model_rebuild()
CreateMessageRequest.model_rebuild()
CreateMessageRequestParams.model_rebuild()


ToolsCallResult = TypeAliasType(
    "ToolsCallResult",
    Annotated[
        Annotated[CallToolResult, Tag("complete")]
        | Annotated[InputRequiredResult, Tag("input_required")]
        | Annotated[CallToolResult | InputRequiredResult, Tag("other")],
        Discriminator(result_type_tag),
    ],
)
"""
The answer to `tools/call` at draft: a `CallToolResult` or an `InputRequiredResult`.

Chosen by `resultType` (basic "Result types"): `"complete"` reads a `CallToolResult`,
`"input_required"` an `InputRequiredResult`; any other value is read as whichever of the two it
fits, as the schema's `anyOf` would. Read it with `parse_result("draft", "tools/call", raw)`
or `TypeAdapter(ToolsCallResult)`, then narrow with `isinstance`.
"""
