"""The fast paths for plain `tools/call` results decide exactly as the full paths.

For a result `surely_accepted` takes (text blocks only), the engine skips `parse_call_result`
and the SDK-model check; for a result of text blocks only, `clean_result_text` skips its scan of
the members besides the texts and `structuredContent`. The oracle is the same code with the
fast path switched off (every result through the full checks): on every corpus result and on
hypothesis-made results around the plain shape (hidden characters, lone surrogates, structured
content valid and invalid against the tool's outputSchema, every version), the message the SDK
receives and the events are the same, and so is the cleaned result.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conduit_mcp_wire import VERSIONS
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import _cleaning, clean_result_text
from conduit_mcp.guard import Guard, _calls
from conduit_mcp.guard._engine import Engine
from conduit_mcp.guard._sdkfast import surely_accepted
from conduit_mcp.guard._state import Pending
from tests.corpus import results
from tests.property.profiles import bounded
from tests.spec_facts import requires_result_type

ECHO = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
}
WEATHER = {
    "name": "weather",
    "inputSchema": {"type": "object"},
    "outputSchema": {
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
        "required": ["temperature"],
    },
}


class _Session:
    """One engine at one version that has listed ECHO and WEATHER (cheap to reuse: each call
    is answered before the next is made, and its events are collected per call)."""

    def __init__(self, version: str) -> None:
        self.events: list[Any] = []
        guard = Guard("fastpath", on_event=self.events.append)
        self.engine = Engine(guard._shared, "stdio")
        self.engine.version = version
        anyio.run(self.engine._on_list, 1, {"tools": [ECHO, WEATHER]}, Pending("tools/list"))

    def answer(self, result: Any, tool: str) -> tuple[Any, list[Any]]:
        """What the SDK receives for `result` answering a call of `tool`, and the events."""
        self.events.clear()
        request_id = 2  # answered before the next call: the id is free again

        async def run() -> Any:
            params = {"name": tool, "arguments": {}}
            request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
            gate = await self.engine.outbound({**request, "params": params})
            assert gate.action == "pass"
            return await self.engine.inbound({"jsonrpc": "2.0", "id": request_id, "result": result})

        verdict = anyio.run(run)
        events = [
            (e.kind, e.tool, e.reason, e.decision, e.path, e.message, e.details)
            for e in self.events
        ]
        return (verdict.action, verdict.message), events


_SESSIONS: dict[str, _Session] = {}


def _session(version: str) -> _Session:
    if version not in _SESSIONS:
        _SESSIONS[version] = _Session(version)
    return _SESSIONS[version]


def _verdicts(result: Any, version: str, tool: str, *, fast: bool) -> tuple[Any, list[Any]]:
    """`_Session.answer`, with the fast path on or off."""
    saved = _calls.surely_accepted, _cleaning._text_blocks_only
    if not fast:
        _calls.surely_accepted = lambda result, version: False  # type: ignore[assignment]
        _cleaning._text_blocks_only = lambda result, content: False  # type: ignore[assignment]
    try:
        return _session(version).answer(result, tool)
    finally:
        _calls.surely_accepted, _cleaning._text_blocks_only = saved  # type: ignore[assignment]


def _agree(result: Any, version: str) -> bool:
    """Both paths agree for both tools; whether the fast path took the result."""
    for tool in ("echo", "weather"):
        assert _verdicts(result, version, tool, fast=True) == _verdicts(
            result, version, tool, fast=False
        ), (tool, version)
    return surely_accepted(result, version)


def _unwrapped(data: Any) -> Any:
    return data["result"] if isinstance(data, dict) and "result" in data else data


def test_on_every_corpus_result_both_paths_decide_alike() -> None:
    """The full path as oracle, on the captured results at every version; the fast path fires
    on many of them (a fast path that never fires would prove nothing)."""
    taken = 0
    for capture in results():
        result = _unwrapped(capture.data)
        for version in VERSIONS:
            sent = result
            if isinstance(result, dict) and requires_result_type(version):
                sent = {"resultType": "complete", **result}
            taken += _agree(sent, version)
    assert taken >= 100


_TEXT = st.one_of(
    st.text(max_size=12),
    st.text(alphabet="ab \t\n\x07\x1b\u200b\u202e\ud800é", max_size=8),
    st.sampled_from(["plain", "a\u200bb", "\x1b[2J", "\ud800", "é", "ok\r\n"]),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_STRUCTURED = st.one_of(
    st.builds(
        lambda t, c: {"temperature": t, "conditions": c},
        st.integers() | st.floats(allow_nan=False) | _TEXT,
        _TEXT,
    ),
    st.dictionaries(_TEXT, _JSON, max_size=3),
)


@st.composite
def _near_plain(draw: Any) -> tuple[Any, str]:
    version = draw(st.sampled_from(VERSIONS))
    blocks = st.builds(lambda t: {"type": "text", "text": t}, _TEXT)
    odd = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t, "_meta": {"k": t}}, _TEXT),
        st.just({"type": "image", "data": "AA==", "mimeType": "image/png"}),
    )
    result: dict[str, Any] = {
        "content": draw(st.lists(st.one_of(blocks, blocks, blocks, odd), max_size=3))
    }
    if draw(st.booleans()):
        result["isError"] = draw(st.booleans())
    if draw(st.booleans()):
        result["structuredContent"] = draw(_STRUCTURED)
    if requires_result_type(version) and draw(st.integers(0, 5)):
        result["resultType"] = "complete"
    if not draw(st.integers(0, 7)):
        result["_meta"] = {"conduit-mcp/guard": {"forged": True}}
    return result, version


@bounded(150)
@given(case=_near_plain())
def test_on_made_results_both_paths_decide_alike(case: tuple[Any, str]) -> None:
    """The full path as oracle, on results around the plain shape."""
    result, version = case
    _agree(result, version)


def _cleaned(result: Any, *, fast: bool) -> Any:
    saved = _cleaning._text_blocks_only
    if not fast:
        _cleaning._text_blocks_only = lambda result, content: False  # type: ignore[assignment]
    try:
        return clean_result_text(result)
    finally:
        _cleaning._text_blocks_only = saved  # type: ignore[assignment]


@bounded(200)
@given(case=_near_plain())
def test_the_cleaning_of_made_results_is_the_same_without_the_rest_scan(
    case: tuple[Any, str],
) -> None:
    """`clean_result_text` with its scan of every member as oracle."""
    result, _ = case
    assert _cleaned(result, fast=True) == _cleaned(result, fast=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plain_clean_result_takes_the_fast_path(version: str) -> None:
    """conduit-defined: the common result is decided without the full checks."""
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": "21.5 °C"}],
        "structuredContent": {"temperature": 21.5, "conditions": "clear"},
    }
    if requires_result_type(version):
        result["resultType"] = "complete"
    assert surely_accepted(result, version)
    assert _cleaning._text_blocks_only(result, result["content"])
    assert _agree(result, version)
