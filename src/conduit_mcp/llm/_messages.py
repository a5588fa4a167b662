"""Shared pieces of the tool-result messages (`to_openai_tool_message`, ...).

A message is built from a shaped `ToolResult` (`shape_for_llm`): its content then holds only
text blocks and media blocks whose `data` is strict base64 of an accepted MIME type, and its
`provenance` says what shaping changed. Each provider takes a different set of media; what it
cannot take becomes a text placeholder and a note.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from ..client import _wire as w
from ..client._provenance import Provenance
from ..client._result import ToolResult

JSONObject = dict[str, Any]

#: The text sent when a shaped result has no block at all (providers refuse empty text).
EMPTY_RESULT: Final = "(the tool returned no content)"


class AdaptedResult(NamedTuple):
    """A tool result as one provider's message.

    Attributes:
        message: the JSON-ready message (or content item) for the provider's API.
        notes: one line per change made for this provider (e.g. a media block the provider
            cannot take, replaced by a text placeholder), in content order.
        provenance: the shaped result's `Provenance` (server id and what shaping changed), kept
            beside the message so the caller can log or show it.
    """

    message: JSONObject
    notes: tuple[str, ...]
    provenance: Provenance


def check_shaped(result: object, id_name: str, id_value: object) -> tuple[ToolResult, Provenance]:
    """The shaped result and its provenance, or TypeError/ValueError for caller bugs."""
    if not isinstance(result, ToolResult):
        raise TypeError(f"result must be a ToolResult, got {type(result).__name__}")
    if result.provenance is None:
        raise ValueError("result is not shaped: pass it through shape_for_llm first")
    if not isinstance(id_value, str):
        raise TypeError(f"{id_name} must be a str, got {type(id_value).__name__}")
    if not id_value:
        raise ValueError(f"{id_name} must not be empty")
    return result, result.provenance


class Block(NamedTuple):
    """One block of shaped content: text, or media (kind, MIME type, base64 data)."""

    kind: str  # "text", "image" or "audio"
    text: str
    mime_type: str
    data: str


def blocks(result: ToolResult) -> Iterator[Block]:
    """The blocks of a shaped result, in order (anything else shaping never emits: skipped)."""
    content = result.content
    if not isinstance(content, (list, tuple)):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get(w.BLOCK_TYPE)
        if kind == w.TYPE_TEXT and isinstance(block.get(w.BLOCK_TEXT), str):
            yield Block("text", block[w.BLOCK_TEXT], "", "")
        elif kind in ("image", "audio"):
            mime, data = block.get("mimeType"), block.get("data")
            if isinstance(mime, str) and isinstance(data, str):
                yield Block(kind, "", mime.split(";", 1)[0].strip().lower(), data)


def placeholder(block: Block, provider: str) -> str:
    """The text that stands for a media block a provider's message cannot carry."""
    return f"[{block.kind} omitted: {provider} does not take {block.mime_type} here]"


ERROR_PREFIX: Final = "[the tool reported an error]"
"""First text of a message built from an `isError` result, for providers with no error flag."""
