"""conduit_mcp.client: the public API for MCP tools and tool results, as a client holds them.

Everything a caller needs is exported here; the modules beside this file are private. `__all__`
is grouped by concept (tests/test_public_api.py pins it; CHANGELOG.md lists it with the reason,
warning and provenance codes).
"""

from ._anthropic import to_anthropic_tool, to_anthropic_tool_result
from ._changes import DEFAULT_COSMETIC, ChangeOp, FieldChange
from ._conformance import ConformanceKind, conformance_violations, is_conformant
from ._contenthash import CONTENT_HASH_PREFIX, content_hash
from ._dispatch import InputRequired, parse_call_result
from ._drift import ToolDiff, diff_tools
from ._errors import REASONS, Error, PathItem, render_path
from ._fingerprint import FINGERPRINT_PREFIX, fingerprint
from ._gemini import to_gemini_function, to_gemini_function_response
from ._headers import (
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
    param_headers_apply,
)
from ._intake import (
    TRANSPORTS,
    Intake,
    Rejection,
    Transport,
    intake,
    intake_json,
    unwrap_response,
)
from ._jcs import canonical_json
from ._json import parse_json
from ._messages import AdaptedResult
from ._names import check_tool_name
from ._openai import from_openai_strict_arguments, to_openai_tool, to_openai_tool_message
from ._pins import (
    AsyncPinStore,
    AuditEntry,
    Pin,
    PinCheck,
    PinStatus,
    PinStore,
    redacted_location,
)
from ._provenance import PROVENANCE_FLAGS, Provenance
from ._provider_names import (
    ANTHROPIC_NAME_RULE,
    GEMINI_NAME_RULE,
    OPENAI_NAME_RULE,
    NameRule,
    ToolNameMap,
    ToolRef,
    provider_accepts_name,
)
from ._result import ToolResult
from ._shape import (
    DEFAULT_ACCEPTED_MIME_TYPES,
    DEFAULT_MAX_CHARS,
    MIN_MAX_CHARS,
    IncludeStructured,
    is_strict_base64,
    shape_for_llm,
    shaped_text,
)
from ._tool import DEFAULT_HINTS, Hints, Tool, check_server_id
from ._translate import AdaptedTool, SchemaNote, SchemaPath
from ._unicode import find_invisible
from ._validate import OutputIssue, OutputValidation, validate_arguments, validate_structured
from ._versions import KNOWN_VERSIONS, LATEST, version_at_least
from ._warnings import WARNING_CODES, IntakeWarning

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # Tools and results: the wire objects a client holds, and what changed between two lists
    "Tool",
    "Hints",
    "DEFAULT_HINTS",
    "check_server_id",
    "check_tool_name",
    "ToolResult",
    "InputRequired",
    "parse_call_result",
    "ToolDiff",
    "diff_tools",
    # Intake: a tools/list page in, accepted tools, rejections and warnings out
    "intake",
    "intake_json",
    "unwrap_response",
    "Intake",
    "Rejection",
    "Transport",
    "TRANSPORTS",
    "IntakeWarning",
    "WARNING_CODES",
    "find_invisible",
    # Pins: fingerprints, content hashes, the pin store and its change reports
    "fingerprint",
    "FINGERPRINT_PREFIX",
    "content_hash",
    "CONTENT_HASH_PREFIX",
    "PinStore",
    "AsyncPinStore",
    "Pin",
    "PinCheck",
    "PinStatus",
    "AuditEntry",
    "redacted_location",
    "ChangeOp",
    "FieldChange",
    "DEFAULT_COSMETIC",
    # Validation: structuredContent and arguments against the tool's JSON Schemas
    "validate_structured",
    "validate_arguments",
    "OutputValidation",
    "OutputIssue",
    # Conformance: strict checks against each version's official schema.json
    "conformance_violations",
    "is_conformant",
    "ConformanceKind",
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
    # Headers: Mcp-Name and Mcp-Param-{Name} on Streamable HTTP (x-mcp-header)
    "header_map",
    "mcp_param_headers",
    "mcp_name_header",
    "encode_header_value",
    "decode_header_value",
    "find_invalid_x_mcp_header",
    "param_headers_apply",
    # JSON: reading JSON text, and RFC 8785 canonical bytes
    "parse_json",
    "canonical_json",
    # Errors: the one error type, its reason -> kind table and paths
    "Error",
    "REASONS",
    "PathItem",
    "render_path",
    # Versions: the protocol revisions this library knows, oldest first, and their order
    "KNOWN_VERSIONS",
    "LATEST",
    "version_at_least",
]
