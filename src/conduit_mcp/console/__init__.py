"""conduit_mcp.console: the review console, a web page over a pin store.

A person who has never used a terminal reviews what the store's pending queue holds (new,
changed, revoked and listed again), sees the approved and pending definitions side by side,
and approves (exactly the definition shown), rejects or revokes, with a reason; the audit log
and the servers the store knows are a click away, and every open page follows the store's
change feed live. The same JSON API (`/api/...`) serves scripts and chat-ops bots. The console
is a separate process beside the store (`conduit-mcp console --pins STORE`), never reachable
from the MCP path. Builds on `conduit_mcp.client` and `conduit_mcp.pins`; needs the `console`
extra (Starlette, Jinja2, uvicorn). docs/console.md.
"""

from ._server import create_app, serve

__all__ = ["create_app", "serve"]
