"""Measure how deep a message may nest before the installed SDK's JSON parser refuses it.

    python tests/guard/sdk_nesting.py

prints one JSON line: the installed `mcp` version, the most arrays/objects (the JSON-RPC
envelope and `result` included) one message may nest and still parse, and the first depth
that fails. The parser is the one mcp's stdio and Streamable HTTP transports run on every
line/body, before the guard sees the message (`mcp.types.jsonrpc_message_adapter
.validate_json`). docs/guard.md and docs/errors.md quote the figure; test_sdk_limits.py
checks that they quote this one.
"""

from __future__ import annotations

import json
from importlib import metadata

from pydantic import ValidationError


def message(containers: int) -> str:
    """A response whose arrays/objects nest `containers` deep (envelope and `result` are two)."""
    inner = "1"
    for _ in range(containers - 2):
        inner = f"[{inner}]"
    return '{"jsonrpc":"2.0","id":1,"result":{"x":' + inner + "}}"


def parses(containers: int) -> bool:
    """Whether the SDK's transport parser accepts a message nested `containers` deep."""
    from mcp.types import jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(message(containers), by_name=False)
    except ValidationError:
        return False
    return True


def deepest() -> int:
    """The most containers a message may nest and still parse (bisection over 2..100,000)."""
    low, high = 2, 100_000  # low parses; high does not (checked below)
    if not parses(low) or parses(high):
        raise RuntimeError("the SDK's parser is outside the measured range")
    while high - low > 1:
        middle = (low + high) // 2
        if parses(middle):
            low = middle
        else:
            high = middle
    return low


def main() -> None:
    depth = deepest()
    print(
        json.dumps(
            {"mcp": metadata.version("mcp"), "parses": depth, "fails": depth + 1},
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
