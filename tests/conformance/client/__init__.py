"""A small MCP client over Streamable HTTP, built on conduit-mcp, for the official conformance
suite.

`python -m tests.conformance.client <server-url>` is the command the suite's `client` runner drives
(`@modelcontextprotocol/conformance`, pinned in `npm/package-lock.json`); `runner.py` installs the
suite and Node.js 22 under `.cache/` and runs the scenarios `make conformance` and
`tests/conformance/test_official_suite.py` check.

Modules: `sse` (Server-Sent Events parsing), `http_session` (one MCP client over Streamable HTTP),
`scenarios` (what the client does per scenario), `install` (pinned npm installs), `runner` (runs
the suite and judges its checks).
"""
