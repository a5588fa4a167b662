"""The HTTP server side: `conduit-mcp proxy --listen HOST:PORT` serves clients over Streamable
HTTP, one guard for all.

Not a public package. `_server.py`: the listener, its sessions (2025-11-25 and before, through
the SDK's transport), `/metrics`. `_stateless.py`: the 2026-07-28 stateless router (each POST
stands alone). `_budget.py`: each stateless client's share of the requests in flight.
`_protocol.py`: uvicorn's HTTP protocol, a response's head and body in one socket write. Each
session's upstream is a child process (`stdio/_child.py`) or an HTTP server (`upstream/`).
"""
