"""check_tool_name: the spec's SHOULD rules on tool names, as warnings that never reject.

Spec text: 2026-07-28 server/tools "Tool Names".
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import IntakeWarning, Tool, check_tool_name
from tests.corpus import all_tools, cases
from tests.property.profiles import bounded

ALLOWED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list"])
def test_the_spec_example_names_draw_no_warning(name: str) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": example valid tool names)."""
    assert check_tool_name(name) == ()


@pytest.mark.parametrize("name", ["a", "a" * 128, ALLOWED, "-", ".", "_", "0"])
def test_names_of_allowed_characters_and_length_draw_no_warning(name: str) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": 1 to 128 characters inclusive;
    A-Z, a-z, 0-9, underscore, hyphen and dot)."""
    assert check_tool_name(name) == ()


@pytest.mark.parametrize(("name", "length"), [("", 0), ("a" * 129, 129), ("b" * 5000, 5000)])
def test_a_name_outside_1_to_128_characters_warns_on_length(name: str, length: int) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": names SHOULD be between 1 and 128
    characters in length (inclusive))."""
    found = check_tool_name(name)
    assert [w.code for w in found] == ["tool_name_length"]
    assert found[0].path == ("name",)
    assert dict(found[0].details) == {"length": length, "min": 1, "max": 128}


@pytest.mark.parametrize(
    ("name", "index", "char", "codepoint"),
    [
        pytest.param("Create File Share", 6, " ", "U+0020", id="space"),
        pytest.param("a,b", 1, ",", "U+002C", id="comma"),
        pytest.param("ns/tool", 2, "/", "U+002F", id="slash"),
        pytest.param("tool:x", 4, ":", "U+003A", id="colon"),
        pytest.param("héllo", 1, "é", "U+00E9", id="latin-1"),
        pytest.param("a\u200bb", 1, "\u200b", "U+200B", id="zero-width-space"),
        pytest.param("ab\x00", 2, "\x00", "U+0000", id="nul"),
        pytest.param("a😀b", 1, "😀", "U+1F600", id="astral"),
        pytest.param("x y,z", 1, " ", "U+0020", id="first-of-several"),
        pytest.param("ＡＢ", 0, "Ａ", "U+FF21", id="fullwidth-letter"),
        pytest.param("٣", 0, "٣", "U+0663", id="arabic-indic-digit"),
    ],
)
def test_a_character_outside_the_set_warns_with_the_first_one_and_its_index(
    name: str, index: int, char: str, codepoint: str
) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": A-Z a-z 0-9 _ - . SHOULD be the
    only allowed characters; names SHOULD NOT contain spaces, commas, or other special
    characters); conduit-defined: the first offending character and its code-point index."""
    found = check_tool_name(name)
    assert [w.code for w in found] == ["tool_name_charset"]
    warning = found[0]
    assert warning.path == ("name",)
    assert dict(warning.details) == {"index": index, "char": char, "codepoint": codepoint}
    assert codepoint in warning.message
    if not (char.isascii() and char.isprintable()):
        assert char not in warning.message  # may be invisible or a control character


def test_a_long_name_with_a_bad_character_draws_both_warnings_in_order() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": both SHOULD rules apply)."""
    found = check_tool_name("a" * 200 + " ")
    assert [w.code for w in found] == ["tool_name_length", "tool_name_charset"]
    assert found[1].details["index"] == 200


def test_length_counts_code_points() -> None:
    """conduit-defined: "characters" are Unicode code points. 65 astral characters are 130
    UTF-16 units and 260 UTF-8 bytes, yet 65 characters: only the charset rule warns."""
    assert [w.code for w in check_tool_name("😀" * 65)] == ["tool_name_charset"]
    assert [w.code for w in check_tool_name("é" * 129)] == [
        "tool_name_length",
        "tool_name_charset",
    ]


def test_a_non_string_name_is_a_caller_bug() -> None:
    """conduit-defined: `Tool.name` is always a str."""
    for bad in (None, 5, b"name", ["a"]):
        with pytest.raises(TypeError):
            check_tool_name(bad)  # type: ignore[arg-type]


def test_the_name_is_never_rewritten() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": names SHOULD be considered
    case-sensitive); conduit-defined: checking never normalizes, so names cannot collide."""
    raw = {"name": "Create File Share", "inputSchema": {"type": "object"}}
    before = copy.deepcopy(raw)
    tool = Tool.from_wire("s", raw)
    assert check_tool_name(tool.name)
    assert tool.name == "Create File Share"
    assert raw == before


@bounded(200)
@given(st.text(alphabet=ALLOWED, min_size=1, max_size=128))
def test_every_conforming_name_draws_no_warning(name: str) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names")."""
    assert check_tool_name(name) == ()


@bounded(200)
@given(st.text(max_size=300))
def test_warnings_match_an_independent_reading_of_the_rules(name: str) -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names"), checked against a plain-Python
    reading of the two rules."""
    bad = [i for i, c in enumerate(name) if c not in ALLOWED]
    expected = []
    if not 1 <= len(name) <= 128:
        expected.append("tool_name_length")
    if bad:
        expected.append("tool_name_charset")
    found = check_tool_name(name)
    assert [w.code for w in found] == expected
    if bad:
        assert found[-1].details["index"] == bad[0]
    assert all(isinstance(w, IntakeWarning) for w in found)


NAME_CASES = [
    (stem, case)
    for stem, case in cases()
    if case["kind"] == "tool" and "name_check" in case["expect"]["checks"]
]


@pytest.mark.parametrize(("stem", "case"), NAME_CASES, ids=[s for s, _ in NAME_CASES])
def test_name_cases_behave_as_expected(stem: str, case: dict[str, Any]) -> None:
    """Spec-mandated (tests/fixtures/cases; 2026-07-28 server/tools "Tool Names": warn, never
    reject)."""
    tool = Tool.from_wire("srv", case["input"])
    found = check_tool_name(tool.name)
    if case["expect"]["checks"]["name_check"] == "ok":
        assert found == ()
    else:
        assert found
        assert all(w.code.startswith("tool_name_") for w in found)
    assert tool.name == case["input"]["name"]


def test_every_corpus_tool_name_is_checked_like_an_independent_regex() -> None:
    """conduit-defined: real tools (tests/fixtures/corpus); a name warns exactly when it fails
    `[A-Za-z0-9_.-]{1,128}` (all 1,000-odd captured names pass it)."""
    pattern = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
    warned = 0
    for _capture, _index, raw in all_tools():
        found = check_tool_name(Tool.from_wire("srv", raw).name)
        assert bool(found) == (pattern.fullmatch(raw["name"]) is None)
        warned += bool(found)
    assert warned == 0
