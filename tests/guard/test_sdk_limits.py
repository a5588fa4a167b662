"""What the official SDK's JSON parser refuses before the guard can see a message (mcp 2.3.0:
`jsonrpc_message_adapter.validate_json`, the call its stdio and Streamable HTTP transports
make on every line/body). Measured here, so README's figure is a test."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

types = pytest.importorskip("mcp.types")

#: Arrays/objects nested in one message, the JSON-RPC envelope and `result` included.
SDK_MAX_NESTING = 200


def _message(containers: int) -> str:
    inner = "1"
    for _ in range(containers - 2):  # the envelope and `result` are two of them
        inner = f"[{inner}]"
    return '{"jsonrpc":"2.0","id":1,"result":{"x":' + inner + "}}"


def test_the_sdk_parses_200_nested_containers_and_refuses_201() -> None:
    adapter = types.jsonrpc_message_adapter
    adapter.validate_json(_message(SDK_MAX_NESTING), by_name=False)
    with pytest.raises(ValidationError, match="recursion"):
        adapter.validate_json(_message(SDK_MAX_NESTING + 1), by_name=False)
