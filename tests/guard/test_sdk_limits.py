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


def test_the_docs_quote_the_measured_nesting_limit() -> None:
    """Measured (tests/guard/sdk_nesting.py, the installed mcp): every sentence of
    docs/guard.md and docs/errors.md about the SDK's own JSON parser quotes the depth that
    parses and the depth that fails, never another figure (they said "about 900"; it is
    200/201 under mcp 2.3.0)."""
    import re
    from pathlib import Path

    from tests.guard.sdk_nesting import deepest

    depth = deepest()
    docs = Path(__file__).resolve().parents[2] / "docs"
    found = 0
    for name in ("guard.md", "errors.md"):
        text = " ".join((docs / name).read_text(encoding="utf-8").split())
        for sentence in re.split(r"(?<=[.:;])\s", text):
            if "JSON parser" not in sentence or "SDK" not in sentence:
                continue
            found += 1
            figures = {int(f.replace(",", "")) for f in re.findall(r"\b\d[\d,]*\b", sentence)}
            figures -= {1, 2, 3, 0} | set(range(2024, 2027))  # versions, not depths
            assert figures & {depth, depth + 1}, (name, sentence)
            assert not figures - {depth, depth + 1}, (name, sentence)
    assert found >= 3
