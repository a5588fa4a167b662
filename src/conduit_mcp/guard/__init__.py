"""conduit_mcp.guard: conduit-mcp inside the MCP clients people already use.

A `Guard` sits between an MCP client and its transport at the JSON-RPC message level: it sees
exactly the JSON the server sent, before any SDK model is built, and decides before the SDK
does (tool intake, pins, call gating, output checks). Use it with the official SDK's
`ClientSession` (`Guard.wrap_streams`), the SDK's `Client` (`stdio_client`,
`streamable_http_client`, `guarded_transport`) or FastMCP's `Client` (`fastmcp_transport`);
openai-agents' MCP servers (`guard_openai_agents_server`) and Microsoft Agent Framework's MCP
tools (`guard_agent_framework_tool`).

Needs the `mcp` extra (`pip install 'conduit-mcp-client[mcp]'`), and `fastmcp` for FastMCP's
`Client`. Under mcp 1.x (>= 1.24, installed without the extra) `Guard.wrap_streams` works with
mcp 1.x's `ClientSession`.
"""

try:  # the one module the guard needs beyond the core's dependencies: the mcp extra's
    import anyio as _anyio  # noqa: F401
except ModuleNotFoundError as _missing:  # one line naming the extra, as the other faces say
    from .._program import install_command as _install_command

    raise ModuleNotFoundError(
        f"conduit_mcp.guard needs the mcp extra ({_missing.name} is not installed): "
        f"{_install_command('mcp')}",
        name=_missing.name,
    ) from None

from ._events import EVENT_KINDS, GUARD_REASONS, MAX_EVENTS, GuardEvent
from ._frameworks import guard_agent_framework_tool, guard_openai_agents_server
from ._guard import Guard
from ._jsonrpc import INVALID_RESULT_CODE, REFUSED_CALL_CODE
from ._modeltext import RESULT_META_KEY
from ._policy import Policy

__all__ = [
    "EVENT_KINDS",
    "GUARD_REASONS",
    "INVALID_RESULT_CODE",
    "MAX_EVENTS",
    "REFUSED_CALL_CODE",
    "RESULT_META_KEY",
    "Guard",
    "GuardEvent",
    "Policy",
    "guard_agent_framework_tool",
    "guard_openai_agents_server",
]
