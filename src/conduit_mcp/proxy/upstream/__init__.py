"""The HTTP client side: `conduit-mcp proxy --upstream URL` reaches a Streamable HTTP server.

Not a public package. `_session.py`: a session through the SDK's client (the stdio proxy's, and
each session of the HTTP listener). `_direct.py`: stateless 2026-07-28 requests, one pooled
POST each, without the SDK's client. `_pool.py`: the HTTP/1.1 keep-alive pool those POSTs use.
`_headers.py`: the per-request headers the SDK's client would stamp.
"""
