"""Property tests: `shape_for_llm` on any result a server can send."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import (
    MIN_MAX_CHARS,
    PROVENANCE_FLAGS,
    Error,
    ToolResult,
    shape_for_llm,
    shaped_text,
)
from tests.property.profiles import bounded
from tests.property.strategies import json_values, real_or_mutated, real_results, texts

# Characters no model may receive from shaping, checked independently of `_unicode`: zero-width
# and bidi controls, word joiner and invisible operators, BOM, tag characters.
_FORBIDDEN = (
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0xFEFF, 0xFEFF),
    (0xE0000, 0xE007F),
)
_BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x", 5])},
    optional={
        "text": st.one_of(texts(wire=False, max_size=300), json_values(wire=False, max_leaves=3)),
        "data": st.sampled_from(["iVBORw0KGgo=", "", "data:image/png;base64,AA==", "A", 7]),
        "mimeType": st.sampled_from(["image/png", "IMAGE/PNG; q=1", "audio/wav", "", None]),
        "uri": texts(wire=False),
        "name": texts(wire=False),
        "resource": st.one_of(
            st.fixed_dictionaries(
                {"uri": texts(wire=False)},
                optional={"text": texts(wire=False), "blob": st.just("AA==")},
            ),
            json_values(wire=False, max_leaves=3),
        ),
    },
)
results = st.one_of(
    real_or_mutated(real_results(), wire=False),
    st.fixed_dictionaries(
        {"content": st.lists(st.one_of(_BLOCK, json_values(wire=False, max_leaves=3)), max_size=4)},
        optional={"structuredContent": json_values(wire=False), "isError": st.booleans()},
    ),
)


@bounded(60)
@given(
    raw=results,
    max_chars=st.integers(MIN_MAX_CHARS, 400),
    include=st.sampled_from(["auto", "always", "never"]),
)
def test_shape_for_llm_never_raises_and_caps_cleans_and_flags(
    raw: Any, max_chars: int, include: Any
) -> None:
    """conduit-defined (`shape_for_llm` rules; 2026-07-28 server/tools "Security
    Considerations": clients SHOULD validate tool results before passing them to the LLM):
    for any result, shaping returns text and media blocks only, at most `max_chars`
    characters of text, no invisible or unencodable characters, known provenance flags, the
    same `is_error`/`raw`/`extra`; the input is not mutated."""
    try:
        result = ToolResult.from_wire(raw)
    except Error:
        return
    before = repr(raw)
    shaped = shape_for_llm(result, server_id="s", max_chars=max_chars, include_structured=include)
    text_total = 0
    for block in shaped.content:
        assert block["type"] in ("text", "image", "audio")
        if block["type"] == "text":
            text = block["text"]
            text_total += len(text)
            text.encode("utf-8")  # no lone surrogate reaches the model
            assert not any(low <= ord(c) <= high for c in text for low, high in _FORBIDDEN)
        else:
            assert block["mimeType"].split(";")[0].strip().lower() in {
                "image/png",
                "image/jpeg",
                "image/gif",
                "image/webp",
            }
    assert text_total <= max_chars
    assert shaped.provenance is not None
    assert set(shaped.provenance.flags) <= PROVENANCE_FLAGS
    assert shaped.provenance.truncated is ("truncated" in shaped.provenance.flags)
    assert (shaped.is_error, shaped.raw, shaped.extra) == (result.is_error, raw, result.extra)
    assert isinstance(shaped_text(shaped), str)
    assert shape_for_llm(shaped, server_id="s", max_chars=max_chars).provenance is not None
    assert repr(raw) == before
