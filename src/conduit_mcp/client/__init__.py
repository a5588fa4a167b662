"""conduit_mcp.client: MCP tools and tool results as a client holds them, off the wire.

The core face: `Tool` and `ToolResult`, tools/list intake, validation of arguments and
structured content, strict conformance, Streamable HTTP headers, errors and versions. Shaping
for a model and the provider adapters live in `conduit_mcp.llm`; the pin store, drift and
change reports in `conduit_mcp.pins`. Importing this package loads neither of them (nor
`sqlite3`).

Everything a caller needs is exported here (the header helpers as one namespace,
`conduit_mcp.client.headers`); the `_x` modules beside this file are private to the package
family (`llm` and `pins` build on them). `__all__` is grouped by concept
(tests/test_public_api.py pins it).
"""

from . import headers
from ._cleaning import CleanedText, clean_result_text, clean_tool_text
from ._conformance import ConformanceKind, conformance_violations, is_conformant
from ._confusables import find_lookalikes, lookalike_key, lookalike_relation, skeleton
from ._dispatch import EXTENSION_RESULT_TYPES, ExtensionResult, InputRequired, parse_call_result
from ._errors import REASONS, Error, PathItem, render_path
from ._fingerprint import FINGERPRINT_PREFIX, fingerprint
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
from ._names import check_tool_name
from ._result import ToolResult
from ._tool import DEFAULT_HINTS, Hints, Tool, check_server_id
from ._unicode import find_invisible
from ._validate import (
    OutputIssue,
    OutputValidation,
    arguments_validator,
    validate_arguments,
    validate_structured,
)
from ._versions import KNOWN_VERSIONS, LATEST, SINCE, Rule, version_at_least, version_supports
from ._warnings import WARNING_CODES, IntakeWarning

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # Tools and results: the wire objects a client holds
    "Tool",
    "Hints",
    "DEFAULT_HINTS",
    "check_server_id",
    "check_tool_name",
    "ToolResult",
    "InputRequired",
    "parse_call_result",
    "ExtensionResult",
    "EXTENSION_RESULT_TYPES",
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
    # Model text: hidden characters removed from what a model reads of a tool or a result
    "clean_tool_text",
    "clean_result_text",
    "CleanedText",
    # Look-alike names: NFC/NFKC, trimming and the UTS #39 skeleton
    "lookalike_key",
    "find_lookalikes",
    "lookalike_relation",
    "skeleton",
    # Fingerprints: a tool's identity (RFC 8785 bytes, SHA-256), set by intake
    "fingerprint",
    "FINGERPRINT_PREFIX",
    # Validation: structuredContent and arguments against the tool's JSON Schemas
    "validate_structured",
    "validate_arguments",
    "arguments_validator",
    "OutputValidation",
    "OutputIssue",
    # Conformance: strict checks against each version's official schema.json
    "conformance_violations",
    "is_conformant",
    "ConformanceKind",
    # Headers: Mcp-Name and Mcp-Param-{Name} on Streamable HTTP (x-mcp-header), one namespace
    "headers",
    # JSON: reading JSON text, and RFC 8785 canonical bytes
    "parse_json",
    "canonical_json",
    # Errors: the one error type, its reason -> kind table and paths
    "Error",
    "REASONS",
    "PathItem",
    "render_path",
    # Versions: the protocol revisions this library knows, their order, and what changed when
    "KNOWN_VERSIONS",
    "LATEST",
    "version_at_least",
    "SINCE",
    "Rule",
    "version_supports",
]
