"""conduit_mcp.client.headers: the Streamable HTTP headers a `tools/call` carries from its tool's
`x-mcp-header` annotations, `Mcp-Param-{Name}` and `Mcp-Name`.

A namespace of the core (`from conduit_mcp.client import headers`, then `headers.header_map(tool)`):
which arguments a tool mirrors as headers (`header_map`), the headers of one call
(`mcp_param_headers`, `mcp_name_header`), the value encoding both ways (`encode_header_value`,
`decode_header_value`), the check of a tool's annotations (`find_invalid_x_mcp_header`), and
whether a transport at a protocol version carries them at all (`param_headers_apply`).

Spec: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters"
("Schema Extension", "Value Encoding", "Client Behavior") and server/tools "x-mcp-header".
"""

from __future__ import annotations

from ._headers import (
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
    param_headers_apply,
)

__all__ = [  # noqa: RUF022 (the order of the docstring: what a tool mirrors, then a call)
    "header_map",
    "mcp_param_headers",
    "mcp_name_header",
    "encode_header_value",
    "decode_header_value",
    "find_invalid_x_mcp_header",
    "param_headers_apply",
]
