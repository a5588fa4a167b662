"""A `tools/call` result the SDK's own models surely accept, told from its raw JSON cheaply.

Not a public module. `_sdkcheck.sdk_result_refusal` asks the SDK's models (mcp 2.3.0: the
negotiated version's surface type, then `CallToolResult | InputRequiredResult`), which costs
tens of microseconds per call. Most results are plain: text blocks, maybe `isError` and a
`structuredContent` object. For exactly those shapes the answer is known without pydantic;
anything else (another block type, `_meta`, `annotations`, a `null`, an unknown member, a
string that is not valid Unicode) goes to the models. `tests/guard/test_sdkfast.py` checks the
claim against the SDK's models on the corpus results and on hypothesis-made results.
"""

from __future__ import annotations

from typing import Any, Final

from conduit_mcp_wire import CALL_TOOL_RESULT_REQUIRED

# The members a plain result may have: `content` (an array of text blocks), `isError` (a bool),
# `structuredContent` (an object), and the other members the version's `CallToolResult`
# requires, where the fast path knows them: `resultType` (2026-07-28 on), taken only as
# `"complete"`. Up to 2025-11-25 the SDK's surface type is 2025-11-25's `CallToolResult`
# (content required; isError a bool; structuredContent an object).
_PLAIN: Final = frozenset({"content", "isError", "structuredContent"})
#: The required members beyond `content` the fast path can check.
_KNOWN_REQUIRED: Final = frozenset({"content", "resultType"})


def _members(required: tuple[str, ...]) -> frozenset[str] | None:
    """The members a plain result may have at a version whose `CallToolResult` requires
    `required`; `None` (no fast path: the models decide) when `content` is not required there or
    another required member is one the fast path does not know (a spec bump that reshapes
    results, e.g. SEP-3279's `outputs`, turns the fast path off by itself)."""
    if "content" not in required or not _KNOWN_REQUIRED.issuperset(required):
        return None
    return _PLAIN | frozenset(required)


#: Per negotiated version: the members of a plain result (from the generated package's
#: `CALL_TOOL_RESULT_REQUIRED`, read from each version's schema), for the versions with a fast
#: path.
_MEMBERS: Final[dict[str, frozenset[str]]] = {
    version: members
    for version, required in CALL_TOOL_RESULT_REQUIRED.items()
    if (members := _members(required)) is not None
}
_TEXT_BLOCK: Final = frozenset({"type", "text"})


def surely_accepted(result: Any, version: str) -> bool:
    """Whether the SDK's models surely accept `result` at `version` (`False`: they decide).

    Args:
        result: the response's `result`, as parsed (not mutated).
        version: the negotiated protocol version.

    Returns:
        `True` only for an object whose members are among `content` (required: an array of
        `{"type": "text", "text": <valid Unicode string>}` blocks), `isError` (a boolean) and
        `structuredContent` (an object), and where the version's schema requires it (2026-07-28
        on) also `resultType` (`"complete"`), at a version with a fast path (`_MEMBERS`). `False`
        for everything else, which is not a refusal: the caller then asks the models.

    Total: one pass over the content blocks; the strings are checked for encodability only
    when not ASCII.
    """
    members = _MEMBERS.get(version)
    if members is None or type(result) is not dict or not members.issuperset(result):
        return False
    content = result.get("content")
    if type(content) is not list:
        return False
    if "resultType" in members and result.get("resultType") != "complete":
        return False
    if "isError" in result and type(result["isError"]) is not bool:
        return False
    if "structuredContent" in result and type(result["structuredContent"]) is not dict:
        return False
    for block in content:
        if type(block) is not dict or block.get("type") != "text":
            return False
        text = block.get("text")
        if type(text) is not str or not _TEXT_BLOCK.issuperset(block):
            return False
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: not a JSON string
                return False
    return True
