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

# The members a plain result may have, per negotiated version. Up to 2025-11-25 the SDK's
# surface type is 2025-11-25's `CallToolResult` (content required; isError a bool;
# structuredContent an object). From 2026-07-28 the surface `CallToolResult` also requires
# `resultType` (a string): the fast path takes only `"complete"`.
_PLAIN: Final = frozenset({"content", "isError", "structuredContent"})
_PLAIN_2026: Final = frozenset({"content", "isError", "structuredContent", "resultType"})
_MEMBERS: Final[dict[str, frozenset[str]]] = {
    "2024-11-05": _PLAIN,
    "2025-03-26": _PLAIN,
    "2025-06-18": _PLAIN,
    "2025-11-25": _PLAIN,
    "2026-07-28": _PLAIN_2026,
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
        `structuredContent` (an object), and on 2026-07-28 also `resultType` (required there:
        `"complete"`), at a version listed here. `False` for everything else, which is not a
        refusal: the caller then asks the models.

    Total: one pass over the content blocks; the strings are checked for encodability only
    when not ASCII.
    """
    members = _MEMBERS.get(version)
    if members is None or type(result) is not dict or not members.issuperset(result):
        return False
    content = result.get("content")
    if type(content) is not list:
        return False
    if members is _PLAIN_2026 and result.get("resultType") != "complete":
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
