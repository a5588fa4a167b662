"""conduit_mcp.client: the public API for MCP tools and tool results, as a client holds them.

Everything a caller needs is exported here; the modules beside this file are private.
"""

from ._errors import REASONS, Error
from ._result import ToolResult
from ._tool import DEFAULT_HINTS, Hints, Tool

# -- section: conformance --
from ._conformance import ConformanceKind, conformance_violations, is_conformant
# -- section: fingerprints and drift --
from ._drift import PinStatus, PinStore, ToolDiff, diff_tools
from ._fingerprint import FINGERPRINT_PREFIX, canonical_json, fingerprint
# -- section: names, unicode and headers --
from ._headers import (
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
)
from ._names import check_tool_name
from ._warnings import WARNING_CODES, IntakeWarning
# -- section: intake --
# -- section: results (dispatch, validation) --
# -- section: shaping --
# -- section: adapters --
from ._adapters import (
    AdaptedTool,
    SchemaNote,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from ._provider_names import (
    ANTHROPIC_NAME_RULE,
    GEMINI_NAME_RULE,
    OPENAI_NAME_RULE,
    NameRule,
    ToolNameMap,
    ToolRef,
    provider_accepts_name,
)

__all__ = [
    "ANTHROPIC_NAME_RULE",
    "DEFAULT_HINTS",
    "FINGERPRINT_PREFIX",
    "GEMINI_NAME_RULE",
    "OPENAI_NAME_RULE",
    "REASONS",
    "WARNING_CODES",
    "AdaptedTool",
    "ConformanceKind",
    "Error",
    "Hints",
    "IntakeWarning",
    "NameRule",
    "PinStatus",
    "PinStore",
    "SchemaNote",
    "Tool",
    "ToolDiff",
    "ToolNameMap",
    "ToolRef",
    "ToolResult",
    "canonical_json",
    "check_tool_name",
    "conformance_violations",
    "decode_header_value",
    "diff_tools",
    "encode_header_value",
    "find_invalid_x_mcp_header",
    "fingerprint",
    "header_map",
    "is_conformant",
    "mcp_name_header",
    "mcp_param_headers",
    "provider_accepts_name",
    "to_anthropic_tool",
    "to_gemini_function",
    "to_openai_tool",
]
