"""Property tests: intake reports hidden characters wherever a model reads a tool."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import intake
from tests.property.hidden import CONTROLS, INVISIBLE, hostile_texts
from tests.property.profiles import bounded

_TEXT = hostile_texts(max_pieces=4)


@bounded(100)
@given(
    description=_TEXT,
    name=_TEXT,
    param_description=_TEXT,
    enum_value=_TEXT,
    default=_TEXT,
    out_title=_TEXT,
)
def test_every_hidden_character_a_model_reads_is_reported_at_its_path(
    description: str,
    name: str,
    param_description: str,
    enum_value: str,
    default: str,
    out_title: str,
) -> None:
    """conduit-defined (issue 10 item 1): for hostile strings at six places a model reads, the
    intake warnings are exactly one `invisible_unicode` per string holding a character of the
    UCD-derived invisible set and one `control_characters` per string holding a control, at
    that string's path (the oracle sets are derived from ucd/ in tests/property/hidden.py)."""
    placed: dict[tuple[Any, ...], str] = {
        ("description",): description,
        ("inputSchema", "properties", name): name,
        ("inputSchema", "properties", name, "description"): param_description,
        ("inputSchema", "properties", name, "enum", 0): enum_value,
        ("inputSchema", "properties", name, "default"): default,
        ("outputSchema", "title"): out_title,
    }
    tool = {
        "name": "t",
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                name: {"description": param_description, "enum": [enum_value], "default": default}
            },
        },
        "outputSchema": {"type": "object", "title": out_title},
    }
    got = intake("s", {"tools": [tool]}, transport="stdio", protocol_version="2026-07-28")
    found = {
        (x.code, x.path[2:])
        for x in got.warnings
        if x.code in ("invisible_unicode", "control_characters")
    }
    expected = set()
    for path, text in placed.items():
        if any(ord(c) in INVISIBLE for c in text):
            expected.add(("invisible_unicode", path))
        if any(ord(c) in CONTROLS for c in text):
            expected.add(("control_characters", path))
    assert found == expected
    for warning in got.warnings:
        if warning.code == "invisible_unicode":
            text = placed[warning.path[2:]]
            assert warning.details["count"] == sum(ord(c) in INVISIBLE for c in text)


@bounded(30)
@given(st.integers(1, 3))
def test_nothing_is_reported_for_clean_text_in_any_script(copies: int) -> None:
    """conduit-defined: visible non-ASCII text (accents, CJK, dashes, emoji) is no finding."""
    text = "Café — 漢字 ✓ 😀 naïve\n\t" * copies
    tool = {"name": "t", "description": text, "inputSchema": {"type": "object", "title": text}}
    assert (
        intake("s", {"tools": [tool]}, transport="stdio", protocol_version="2026-07-28").warnings
        == ()
    )
