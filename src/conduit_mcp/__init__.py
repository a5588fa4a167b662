"""conduit-mcp: client-side MCP tool and tool-result handling.

The API lives in `conduit_mcp.client`; the generated wire models in `conduit_mcp_wire`.
"""

__version__ = "0.1.0"
