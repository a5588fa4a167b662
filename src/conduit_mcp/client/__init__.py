"""conduit_mcp.client: the public API for MCP tools and tool results, as a client holds them.

Everything a caller needs is exported here; the modules beside this file are private.
"""

from ._errors import REASONS, Error
from ._result import ToolResult
from ._tool import DEFAULT_HINTS, Hints, Tool

# -- section: conformance --
from ._conformance import ConformanceKind, conformance_violations, is_conformant
# -- section: fingerprints and drift --
# -- section: names, unicode and headers --
# -- section: intake --
# -- section: results (dispatch, validation) --
# -- section: shaping --
# -- section: adapters --

__all__ = [
    "DEFAULT_HINTS",
    "REASONS",
    "ConformanceKind",
    "Error",
    "Hints",
    "Tool",
    "ToolResult",
    "conformance_violations",
    "is_conformant",
]
