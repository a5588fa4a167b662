"""The HTTP server side: `conduit-mcp proxy --listen HOST:PORT` serves clients over Streamable
HTTP, one guard for all.

Not a public package. `_server.py`: the listener, its sessions (2025-11-25 and before, through
the SDK's transport), `/metrics`. `_stateless.py`: the 2026-07-28 stateless router (each POST
stands alone; a server process without 2026-07-28 gets none). `_budget.py`: each client's
share: stateless requests in flight, sessions open. `_limits.py`: the bounds on what a
connection sends before it is read, and their answers. `_protocol.py`: uvicorn's HTTP
protocol, bounded before it reads, a response's head and body in one socket write. Each
session's upstream is a child process (`stdio/_child.py`) or an HTTP server (`upstream/`).
"""
