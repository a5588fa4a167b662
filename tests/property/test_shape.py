"""Property tests: `shape_for_llm` on any result a server can send."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, ToolResult
from conduit_mcp.llm import MIN_MAX_CHARS, PROVENANCE_FLAGS, shape_for_llm, shaped_text
from tests.property.hidden import FORBIDDEN, hostile_texts
from tests.property.profiles import bounded
from tests.property.strategies import json_values, real_or_mutated, real_results, texts

# Characters no model may receive from shaping: `FORBIDDEN`, derived in tests/property/hidden.py
# from the UCD extracts independently of `_unicode` (default-ignorables, format characters, C0
# and C1 controls and DEL).
_HOSTILE = hostile_texts()
_STRUCTURED = st.recursive(
    st.one_of(_HOSTILE, st.integers(), st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(_HOSTILE, children, max_size=3)
    ),
    max_leaves=8,
)
_BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x", 5])},
    optional={
        "text": st.one_of(
            texts(wire=False, max_size=300), _HOSTILE, json_values(wire=False, max_leaves=3)
        ),
        "data": st.sampled_from(
            ["iVBORw0KGgo=", "/9j/4AAQSkZJRgABAQ==", "UklGRiQAAABXQVZFZm10IA==", "", "A", 7]
        ),
        "mimeType": st.one_of(
            st.sampled_from(["image/png", "IMAGE/PNG; q=1", "image/jpeg", "audio/wav", "", None]),
            _HOSTILE,
        ),
        "uri": st.one_of(texts(wire=False), _HOSTILE),
        "name": st.one_of(texts(wire=False), _HOSTILE),
        "annotations": st.one_of(
            st.fixed_dictionaries(
                {"audience": st.lists(st.sampled_from(["user", "assistant", "x"]), max_size=2)}
            ),
            json_values(wire=False, max_leaves=2),
        ),
        "resource": st.one_of(
            st.fixed_dictionaries(
                {"uri": st.one_of(texts(wire=False), _HOSTILE)},
                optional={
                    "text": _HOSTILE,
                    "blob": st.just("AA=="),
                    "mimeType": _HOSTILE,
                },
            ),
            json_values(wire=False, max_leaves=3),
        ),
    },
)
results = st.one_of(
    real_or_mutated(real_results(), wire=False),
    st.fixed_dictionaries(
        {"content": st.lists(st.one_of(_BLOCK, json_values(wire=False, max_leaves=3)), max_size=4)},
        optional={
            "structuredContent": st.one_of(json_values(wire=False), _STRUCTURED),
            "isError": st.booleans(),
        },
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
    characters of text, no invisible, control or unencodable characters (issue 10: nothing of
    the UCD-derived tables, from text, links, resources, MIME labels or serialized structured
    content), kept media only with a normalized accepted type, known provenance flags, the
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
            assert not any(ord(c) in FORBIDDEN for c in text)
        else:
            assert set(block) == {"type", "data", "mimeType"}
            assert block["mimeType"] in {"image/png", "image/jpeg", "image/gif", "image/webp"}
    assert text_total <= max_chars
    assert shaped.provenance is not None
    assert set(shaped.provenance.flags) <= PROVENANCE_FLAGS
    assert shaped.provenance.truncated is ("truncated" in shaped.provenance.flags)
    assert (shaped.is_error, shaped.raw, shaped.extra) == (result.is_error, raw, result.extra)
    assert isinstance(shaped_text(shaped), str)
    assert shape_for_llm(shaped, server_id="s", max_chars=max_chars).provenance is not None
    assert repr(raw) == before


@bounded(100)
@given(
    text=_HOSTILE,
    structured=_STRUCTURED,
    mime=_HOSTILE,
    audience=st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
)
def test_no_character_of_the_tables_survives_shaping(
    text: str, structured: Any, mime: str, audience: list[str]
) -> None:
    """conduit-defined (issue 10, "Done when"): hostile text in a text block, a resource link,
    an embedded resource, a MIME label and serialized `structuredContent` (always shown here)
    never brings a character of the UCD-derived tables to the model; a block whose audience
    lacks "assistant" shows only the placeholder."""
    raw = {
        "content": [
            {"type": "text", "text": text, "annotations": {"audience": audience}},
            {"type": "resource_link", "uri": text, "name": mime},
            {"type": "resource", "resource": {"uri": mime, "blob": "AA==", "mimeType": mime}},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": mime},
        ],
        "structuredContent": structured,
    }
    shaped = shape_for_llm(ToolResult.from_wire(raw), server_id="s", include_structured="always")
    shown = shaped_text(shaped)
    assert not any(ord(c) in FORBIDDEN for c in shown)
    first = shaped.content[0]
    if "assistant" not in audience:
        assert first == {"type": "text", "text": "[content withheld: meant for the user only]"}
    for block in shaped.content:
        if block["type"] == "image":
            assert block["mimeType"] == "image/png"
    # JSON spells C0 controls as escapes (`\\u001b`, `\\b`): read the serialized structured
    # content back, and no string in it may hold a forbidden character either.
    stack = [json.loads(shaped.content[-1]["text"])]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            assert not any(ord(c) in FORBIDDEN for c in value)
        elif isinstance(value, dict):
            assert not any(ord(c) in FORBIDDEN for key in value for c in key)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
