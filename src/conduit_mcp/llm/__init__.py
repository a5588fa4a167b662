"""conduit_mcp.llm: MCP tools and tool results in the shapes a model and its provider take.

`shape_for_llm` decides what of a `ToolResult` reaches a model (hidden characters removed,
binary data checked against its declared media type, size bounded) and records the result's
provenance; the adapters translate a `Tool` and a result into the tool declarations and tool
messages of OpenAI, Anthropic and Gemini, with a note for every schema keyword a provider
cannot take. Builds on `conduit_mcp.client`; loads no pin store.

`__all__` is grouped by concept (tests/test_public_api.py pins it).
"""

from ..client._provenance import PROVENANCE_FLAGS, Provenance
from ._anthropic import to_anthropic_tool, to_anthropic_tool_result
from ._gemini import to_gemini_function, to_gemini_function_response
from ._messages import AdaptedResult
from ._openai import from_openai_strict_arguments, to_openai_tool, to_openai_tool_message
from ._provider_names import (
    ANTHROPIC_NAME_RULE,
    GEMINI_NAME_RULE,
    OPENAI_NAME_RULE,
    NameRule,
    ToolNameMap,
    ToolRef,
    provider_accepts_name,
)
from ._shape import (
    DEFAULT_ACCEPTED_MIME_TYPES,
    DEFAULT_MAX_CHARS,
    MIN_MAX_CHARS,
    IncludeStructured,
    is_strict_base64,
    shape_for_llm,
    shaped_text,
)
from ._translate import AdaptedTool, SchemaNote, SchemaPath

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # Shaping: what of a result reaches the model, and its provenance
    "shape_for_llm",
    "shaped_text",
    "Provenance",
    "PROVENANCE_FLAGS",
    "IncludeStructured",
    "DEFAULT_ACCEPTED_MIME_TYPES",
    "DEFAULT_MAX_CHARS",
    "MIN_MAX_CHARS",
    "is_strict_base64",
    # Adapters: tools and results in the shapes of OpenAI, Anthropic and Gemini
    "to_openai_tool",
    "to_openai_tool_message",
    "from_openai_strict_arguments",
    "to_anthropic_tool",
    "to_anthropic_tool_result",
    "to_gemini_function",
    "to_gemini_function_response",
    "AdaptedTool",
    "AdaptedResult",
    "SchemaNote",
    "SchemaPath",
    "ToolNameMap",
    "ToolRef",
    "NameRule",
    "provider_accepts_name",
    "OPENAI_NAME_RULE",
    "ANTHROPIC_NAME_RULE",
    "GEMINI_NAME_RULE",
]
