"""conduit_mcp.client: the public API for MCP tools and tool results, as a client holds them.

Everything a caller needs is exported here; the modules beside this file are private.
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
from ._versions import version_at_least
from ._warnings import WARNING_CODES, IntakeWarning

__all__ = [
    "ANTHROPIC_NAME_RULE",
    "CONTENT_HASH_PREFIX",
    "DEFAULT_ACCEPTED_MIME_TYPES",
    "DEFAULT_COSMETIC",
    "DEFAULT_HINTS",
    "DEFAULT_MAX_CHARS",
    "FINGERPRINT_PREFIX",
    "GEMINI_NAME_RULE",
    "MIN_MAX_CHARS",
    "OPENAI_NAME_RULE",
    "PROVENANCE_FLAGS",
    "REASONS",
    "TRANSPORTS",
    "WARNING_CODES",
    "AdaptedResult",
    "AdaptedTool",
    "AsyncPinStore",
    "AuditEntry",
    "ChangeOp",
    "ConformanceKind",
    "Error",
    "FieldChange",
    "Hints",
    "IncludeStructured",
    "InputRequired",
    "Intake",
    "IntakeWarning",
    "NameRule",
    "OutputIssue",
    "OutputValidation",
    "PathItem",
    "Pin",
    "PinCheck",
    "PinStatus",
    "PinStore",
    "Provenance",
    "Rejection",
    "SchemaNote",
    "SchemaPath",
    "Tool",
    "ToolDiff",
    "ToolNameMap",
    "ToolRef",
    "ToolResult",
    "Transport",
    "canonical_json",
    "check_server_id",
    "check_tool_name",
    "conformance_violations",
    "content_hash",
    "decode_header_value",
    "diff_tools",
    "encode_header_value",
    "find_invalid_x_mcp_header",
    "find_invisible",
    "fingerprint",
    "from_openai_strict_arguments",
    "header_map",
    "intake",
    "intake_json",
    "is_conformant",
    "is_strict_base64",
    "mcp_name_header",
    "mcp_param_headers",
    "param_headers_apply",
    "parse_call_result",
    "parse_json",
    "provider_accepts_name",
    "redacted_location",
    "render_path",
    "shape_for_llm",
    "shaped_text",
    "to_anthropic_tool",
    "to_anthropic_tool_result",
    "to_gemini_function",
    "to_gemini_function_response",
    "to_openai_tool",
    "to_openai_tool_message",
    "unwrap_response",
    "validate_arguments",
    "validate_structured",
    "version_at_least",
]
