"""shape_for_llm, shaped_text, Provenance, is_strict_base64 and ToolResult.withheld (_shape.py).

Expected shaped texts are written from the placeholder formats documented in `_shape.py` and from
reading the captures by hand, never from what the code printed.
"""

from __future__ import annotations

import base64
import binascii
import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool, ToolResult, canonical_json, validate_structured
from conduit_mcp.llm import (
    DEFAULT_ACCEPTED_MIME_TYPES,
    DEFAULT_MAX_CHARS,
    MIN_MAX_CHARS,
    PROVENANCE_FLAGS,
    Provenance,
    is_strict_base64,
    shape_for_llm,
    shaped_text,
)
from tests.corpus import CORPUS, cases, results
from tests.property.profiles import bounded

SERVER = "srv"
PNG_1X1 = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def result_of(raw: dict[str, Any]) -> ToolResult:
    return ToolResult.from_wire(raw)


def shape(raw: dict[str, Any], **options: Any) -> ToolResult:
    return shape_for_llm(result_of(raw), server_id=SERVER, **options)


def texts(result: ToolResult) -> list[str]:
    return [block["text"] for block in result.content if block["type"] == "text"]


def flags(result: ToolResult) -> tuple[str, ...]:
    assert result.provenance is not None
    return result.provenance.flags


def load(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / "results" / path).read_text(encoding="utf-8"))
    return data


# -- handed cases (tests/fixtures/cases) ----------------------------------------------------

SHAPING_KEYS = {
    "structured_content",
    "has_structured_content",
    "warnings_include",
    "content0_text_len",
    "llm_contains",
    "llm_forbidden_codepoint_ranges",
    "llm_limit_chars",
    "llm_truncated",
    "llm_max_chars",
    "llm_images",
}
SHAPING_CASES = [
    (name, case)
    for name, case in cases()
    if case["kind"] == "result"
    and case["expect"]["ok"]
    and SHAPING_KEYS & case["expect"]["checks"].keys()
]

#: Result warning codes of the cases README mapped onto provenance flags.
WARNING_FLAGS = {
    "unknown_content_type": {"unknown_content_type"},
    "invalid_base64": {"invalid_base64"},
    "resource_link_incomplete": {"resource_link_incomplete"},
    "invisible_unicode": {"invisible_unicode", "invisible_unicode_removed"},
}


def code_point(value: Any) -> int:
    if isinstance(value, int):
        return value
    text = str(value).upper().removeprefix("U+").removeprefix("0X")
    return int(text, 16)


def test_shaping_cases_are_found() -> None:
    """conduit-defined: the case loader sees the handed shaping cases (guards the filter)."""
    assert {"28-result-unknown-block-type", "36-result-image-data-uri", "39-result-large-text"} <= {
        name for name, _ in SHAPING_CASES
    }


@pytest.mark.parametrize(("name", "case"), SHAPING_CASES, ids=[n for n, _ in SHAPING_CASES])
def test_case_shapes_as_documented(name: str, case: dict[str, Any]) -> None:
    """Spec-mandated (2026-07-28 server/tools "Security Considerations": clients SHOULD
    "Validate tool results before passing to LLM"): each handed case's shaping checks hold."""
    raw = case["input"]
    before = copy.deepcopy(raw)
    checks = case["expect"]["checks"]
    result = result_of(raw)
    options: dict[str, Any] = {}
    if "llm_limit_chars" in checks:
        options["max_chars"] = checks["llm_limit_chars"]
    shaped = shape_for_llm(result, server_id=SERVER, **options)
    text = shaped_text(shaped)
    assert shaped.provenance is not None
    for key, expected in checks.items():
        if key == "structured_content":
            assert shaped.structured == expected
        elif key == "has_structured_content":
            assert shaped.has_structured is expected
        elif key == "warnings_include":
            for code in expected:
                assert WARNING_FLAGS.get(code, {code}) & set(shaped.provenance.flags), code
        elif key == "content0_text_len":
            assert len(shaped.raw["content"][0]["text"]) == expected
        elif key == "llm_contains":
            for needle in expected:
                assert needle in text
        elif key == "llm_forbidden_codepoint_ranges":
            for low, high in expected:
                lo, hi = code_point(low), code_point(high)
                assert not any(lo <= ord(c) <= hi for c in text), (low, high)
        elif key == "llm_truncated":
            assert shaped.provenance.truncated is expected
        elif key == "llm_max_chars":
            assert len(text) <= expected
        elif key == "llm_images":
            assert sum(block["type"] == "image" for block in shaped.content) == expected
    assert raw == before


def test_case_36_keeps_the_raw_image_block_and_sends_no_image() -> None:
    """conduit-defined (cases/36): a `data:` URI is not base64; the parsed result keeps the block
    verbatim, the shaped view has a placeholder instead."""
    raw = {
        "content": [
            {"type": "image", "data": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png"}
        ]
    }
    shaped = shape(raw)
    assert shaped.content == [{"type": "text", "text": "[image omitted: data is not valid base64]"}]
    assert shaped.raw["content"][0]["data"] == "data:image/png;base64,iVBORw0KGgo="
    assert flags(shaped) == ("invalid_base64",)


def test_case_39_keeps_the_head_and_the_marker_within_the_cap() -> None:
    """conduit-defined (cases/39): 60,024 characters capped at 20,000, head kept."""
    (case,) = [c for n, c in cases() if n == "39-result-large-text"]
    shaped = shape(case["input"], max_chars=20_000)
    (text,) = texts(shaped)
    # marker for (20000, 60024) is 49 characters, so 19951 are shown: 19951 + 48 = 19999.
    assert text.endswith("\n[… truncated: showing 19951 of 60024 characters]")
    assert text.startswith("HEAD-MARKER row,")
    assert len(text) == 19951 + len("\n[… truncated: showing 19951 of 60024 characters]")
    assert shaped.provenance == Provenance(SERVER, True, ("truncated",))


# -- the whole captured corpus --------------------------------------------------------------

RESULTS = results()


@pytest.mark.parametrize("capture", RESULTS, ids=[c.id for c in RESULTS])
def test_every_captured_result_shapes_without_error_or_mutation(capture: Any) -> None:
    """conduit-defined: every real tools/call result shapes; the input is untouched, `raw` is the
    original object, and the shaped content holds only text and kept media blocks."""
    raw = capture.data
    before = copy.deepcopy(raw)
    result = result_of(raw)
    shaped = shape_for_llm(result, server_id="corpus")
    assert raw == before
    assert shaped.raw is raw
    assert shaped.provenance is not None and shaped.provenance.server_id == "corpus"
    assert set(shaped.provenance.flags) <= PROVENANCE_FLAGS
    assert sum(len(t) for t in texts(shaped)) <= DEFAULT_MAX_CHARS
    for block in shaped.content:
        if block["type"] == "text":
            assert set(block) == {"type", "text"} and isinstance(block["text"], str)
        else:
            assert block["type"] in ("image", "audio")
            assert set(block) == {"type", "data", "mimeType"}
            assert is_strict_base64(block["data"])
        assert all(block is not original for original in result.content)
    assert shaped.is_error is result.is_error
    # Nothing is lost silently: a result with something to say never shapes to nothing.
    if result.content or result.has_structured:
        assert shaped.content


def test_corpus_holds_results_with_media_and_resources() -> None:
    """conduit-defined: guards the corpus test above against an empty or media-free corpus."""
    types = {
        block.get("type")
        for capture in RESULTS
        for block in capture.data.get("content", [])
        if isinstance(block, dict)
    }
    assert {"text", "image", "audio", "resource", "resource_link"} <= types
    assert len(RESULTS) >= 170


# -- snapshots of real captures (expected values read off the capture files) ----------------


def test_snapshot_get_resource_links_3() -> None:
    """Spec-mandated (2026-07-28 server/tools "Resource Links": a tool MAY return links; the
    client shows each by URI and name)."""
    shaped = shape(load("server-everything/get-resource-links--3.json"))
    assert shaped.content == [
        {
            "type": "text",
            "text": "Here are 3 resource links to resources available in this server:",
        },
        {"type": "text", "text": "[resource link: Blob Resource 1] demo://resource/dynamic/blob/1"},
        {"type": "text", "text": "[resource link: Text Resource 2] demo://resource/dynamic/text/2"},
        {"type": "text", "text": "[resource link: Blob Resource 3] demo://resource/dynamic/blob/3"},
    ]
    assert shaped.provenance == Provenance(SERVER, False, ())


def test_snapshot_get_tiny_image_keeps_the_png() -> None:
    """Spec-mandated (2026-07-28 schema `ImageContent`: base64 `data` and `mimeType`): a valid
    PNG is passed to the model between its two texts."""
    raw = load("server-everything/get-tiny-image--ok.json")
    shaped = shape(raw)
    assert shaped.content == [
        {"type": "text", "text": "Here's the image you requested:"},
        {"type": "image", "data": raw["content"][1]["data"], "mimeType": "image/png"},
        {"type": "text", "text": "The image above is the MCP logo."},
    ]
    assert shaped.content[1] is not raw["content"][1]
    assert flags(shaped) == ()


def test_snapshot_gzip_file_as_embedded_resource_is_a_placeholder() -> None:
    """conduit-defined (2026-07-28 schema `EmbeddedResource`: "It is up to the client how best
    to render embedded resources"): a gzip blob is not shown, only its URI and type."""
    shaped = shape(load("server-everything/gzip-file-as-resource--embedded-resource.json"))
    assert shaped.content == [
        {
            "type": "text",
            "text": "[embedded resource] demo://resource/session/hello.txt.gz "
            "(application/gzip, binary content omitted)",
        }
    ]
    assert flags(shaped) == ("binary_omitted",)


def test_snapshot_embedded_text_resource_shows_uri_and_text() -> None:
    """conduit-defined (schema `EmbeddedResource`, `TextResourceContents`)."""
    shaped = shape(load("server-everything/get-resource-reference--text.json"))
    assert texts(shaped) == [
        "Returning resource reference for Resource 1:",
        "[embedded resource] demo://resource/dynamic/text/1\n"
        "Resource 1: This is a plaintext resource created at 9:18:38 PM",
        "You can access this resource using the URI: demo://resource/dynamic/text/1",
    ]
    assert flags(shaped) == ()


def test_snapshot_wav_audio_is_omitted_by_default() -> None:
    """conduit-defined: audio is opt-in (`DEFAULT_ACCEPTED_MIME_TYPES` holds images only)."""
    raw = load("server-filesystem/read_media_file--wav-audio.json")
    shaped = shape(raw)
    assert texts(shaped) == ["[audio omitted: audio/wav is not an accepted type]"]
    assert flags(shaped) == ("binary_omitted",)
    kept = shape(raw, accepted_mime_types={"audio/wav"})
    assert kept.content[0] == {
        "type": "audio",
        "data": raw["content"][0]["data"],
        "mimeType": "audio/wav",
    }


def test_snapshot_structured_with_text_equivalent_is_not_repeated() -> None:
    """Spec-mandated (2026-07-28 server/tools "Structured Content": a tool returning structured
    content SHOULD also return the serialized JSON in a TextContent block): the text stands."""
    shaped = shape(load("server-everything/get-structured-content--new-york.json"))
    assert texts(shaped) == ['{"temperature":33,"conditions":"Cloudy","humidity":82}']
    assert flags(shaped) == ()


def test_snapshot_empty_file_gets_its_structured_content() -> None:
    """conduit-defined: a blank text block says nothing, so the structured content is shown."""
    shaped = shape(load("server-filesystem/read_text_file--empty-file.json"))
    assert texts(shaped) == ["", '{"content":""}']
    assert flags(shaped) == ("structured_serialized",)


def test_snapshot_user_only_annotated_blocks_are_withheld_from_the_model() -> None:
    """Spec (2026-07-28 schema `Annotations.audience`: who the data is for): both blocks of the
    reference server's annotated message say `"audience": ["user"]`, so the model sees a
    placeholder for each; `raw` keeps them and their annotations."""
    raw = load("server-everything/get-annotated-message--success-with-image.json")
    shaped = shape(raw)
    assert texts(shaped) == ["[content withheld: meant for the user only]"] * 2
    assert flags(shaped) == ("audience_withheld",)
    assert shaped.raw["content"][1]["annotations"] == {"audience": ["user"], "priority": 0.5}


def test_annotated_blocks_for_the_assistant_keep_only_what_a_model_reads() -> None:
    """conduit-defined: shaped blocks carry only what a model reads; `raw` keeps annotations.
    The image is the reference server's (a real PNG), re-annotated for both audiences."""
    raw = copy.deepcopy(load("server-everything/get-annotated-message--success-with-image.json"))
    for block in raw["content"]:
        block["annotations"]["audience"] = ["user", "assistant"]
    shaped = shape(raw)
    assert shaped.content[0] == {"type": "text", "text": "Operation completed successfully"}
    assert set(shaped.content[1]) == {"type", "data", "mimeType"}
    assert shaped.content[1]["mimeType"] == "image/png"
    assert flags(shaped) == ()


# -- text -----------------------------------------------------------------------------------


def test_invisible_characters_are_removed_from_the_shaped_view_only() -> None:
    """conduit-defined (tool poisoning: zero-width, bidi override, tag characters)."""
    raw = {"content": [{"type": "text", "text": "a\u200bb\u202ec\U000e0041d\ufe0f"}]}
    shaped = shape(raw)
    assert texts(shaped) == ["abcd"]
    assert flags(shaped) == ("invisible_unicode_removed",)
    assert raw["content"][0]["text"] == "a\u200bb\u202ec\U000e0041d\ufe0f"


def test_lone_surrogates_become_replacement_characters() -> None:
    """conduit-defined: a lone surrogate (which JSON `\\ud800` escapes can carry) cannot be
    encoded as UTF-8 for a model API."""
    raw = json.loads('{"content": [{"type": "text", "text": "x\\ud800y\\udfffz"}]}')
    shaped = shape(raw)
    assert texts(shaped) == ["x\ufffdy\ufffdz"]
    assert flags(shaped) == ("lone_surrogate_replaced",)
    shaped_text(shaped).encode("utf-8")


def test_a_surrogate_pair_from_json_is_one_character_and_kept() -> None:
    """conduit-defined: `\\ud83d\\ude00` in JSON is U+1F600, not two lone surrogates."""
    raw = json.loads('{"content": [{"type": "text", "text": "\\ud83d\\ude00"}]}')
    assert texts(shape(raw)) == ["\U0001f600"]


def test_non_ascii_visible_text_is_kept_exactly() -> None:
    """conduit-defined: only the invisible set is removed (the corpus's own echo capture)."""
    raw = load("server-everything/echo--unicode-and-escapes.json")
    shaped = shape(raw)
    assert texts(shaped) == [raw["content"][0]["text"]]
    assert flags(shaped) == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("benign\r\x1b[2Kmalicious\x08\x00", "benign\rmalicious"),
        ("ok\x1b[8m hidden\x1b[0m \x07done", "ok hidden done"),
        ("\x1b]8;;https://attacker.invalid/x\x07docs\x1b]8;;\x07", "docs"),
        ("caf\u00e9\x9b31m\u0085!", "caf\u00e9!"),
    ],
    ids=["issue-example", "conceal-and-bell", "osc8-hyperlink", "c1-in-non-ascii"],
)
def test_escape_sequences_and_controls_are_removed_ascii_included(text: str, expected: str) -> None:
    """conduit-defined (issue 10; ECMA-48 sequences removed whole, values by hand): what a
    terminal hides from the person does not reach the model either; raw is kept."""
    raw = {"content": [{"type": "text", "text": text}]}
    shaped = shape(raw)
    assert texts(shaped) == [expected]
    assert flags(shaped) == ("control_characters_removed",)
    assert raw["content"][0]["text"] == text


def test_tab_newline_and_carriage_return_stay() -> None:
    """conduit-defined: layout controls hide nothing."""
    shaped = shape({"content": [{"type": "text", "text": "a\tb\nc\r\n"}]})
    assert texts(shaped) == ["a\tb\nc\r\n"] and flags(shaped) == ()


def test_resource_links_and_embedded_text_are_cleaned_too() -> None:
    """conduit-defined: every string that reaches the model goes through the same cleaning."""
    shaped = shape(
        {
            "content": [
                {"type": "resource_link", "uri": "u:/a\x1b[2J", "name": "n\u200b"},
                {"type": "resource", "resource": {"uri": "u:/b", "text": "t\x1b]0;x\x07!"}},
            ]
        }
    )
    assert texts(shaped) == ["[resource link: n] u:/a", "[embedded resource] u:/b\nt!"]
    assert flags(shaped) == ("control_characters_removed", "invisible_unicode_removed")


# -- audience -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "withheld"),
    [
        ({"audience": ["user"]}, True),
        ({"audience": []}, True),
        ({"audience": ["user", "other"]}, True),
        ({"audience": ["assistant"]}, False),
        ({"audience": ["user", "assistant"]}, False),
        ({"priority": 1}, False),
        ({"audience": "user"}, False),
        (None, False),
    ],
    ids=[
        "user",
        "empty",
        "user-and-unknown",
        "assistant",
        "both",
        "no-audience",
        "malformed",
        "none",
    ],
)
@pytest.mark.parametrize(
    "block",
    [
        {"type": "text", "text": "for the eyes of"},
        {"type": "resource_link", "uri": "u:/x", "name": "x"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ],
    ids=["text", "resource_link", "image"],
)
def test_blocks_not_meant_for_the_assistant_are_withheld(
    annotations: Any, withheld: bool, block: dict[str, Any]
) -> None:
    """Spec (2026-07-28 schema `Annotations.audience`: "Describes who the intended audience of
    this object or data is"): a list without "assistant" is not for the model; a missing or
    malformed audience says nothing and the block stays."""
    raw = {"content": [{**block, "annotations": annotations}]}
    if annotations is None:
        raw = {"content": [block]}
    shaped = shape(raw)
    if withheld:
        assert shaped.content == [
            {"type": "text", "text": "[content withheld: meant for the user only]"}
        ]
        assert flags(shaped) == ("audience_withheld",)
    else:
        assert "audience_withheld" not in flags(shaped)
        assert shaped.content[0]["type"] == ("image" if block["type"] == "image" else "text")


def test_a_result_withheld_by_audience_shows_its_structured_content_when_nothing_else() -> None:
    """conduit-defined: placeholders count as showing something (the `auto` rule), so the
    structured content of a user-only result is not serialized for the model behind its back."""
    raw = {
        "content": [{"type": "text", "text": "secret", "annotations": {"audience": ["user"]}}],
        "structuredContent": {"secret": True},
    }
    assert texts(shape(raw)) == ["[content withheld: meant for the user only]"]


# -- truncation -----------------------------------------------------------------------------


def test_one_long_text_is_cut_with_the_marker_counted_in_the_cap() -> None:
    """conduit-defined: max_chars counts the marker. Marker for (100, 1000) has 46 characters,
    so 54 are shown and the marker for (54, 1000) has 45: 99 in all."""
    shaped = shape({"content": [{"type": "text", "text": "x" * 1000}]}, max_chars=100)
    assert texts(shaped) == ["x" * 54 + "\n[… truncated: showing 54 of 1000 characters]"]
    assert shaped.provenance == Provenance(SERVER, True, ("truncated",))


def test_truncation_drops_later_text_blocks_and_keeps_media() -> None:
    """conduit-defined: 90 characters capped at 80; marker (80, 90) has 43, so 37 are shown."""
    raw = {
        "content": [
            {"type": "text", "text": "a" * 30},
            {"type": "text", "text": "b" * 30},
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            {"type": "text", "text": "c" * 30},
        ]
    }
    shaped = shape(raw, max_chars=80)
    assert shaped.content == [
        {"type": "text", "text": "a" * 30},
        {"type": "text", "text": "b" * 7 + "\n[… truncated: showing 37 of 90 characters]"},
        {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
    ]


def test_a_cut_on_a_block_boundary_gives_a_marker_block_without_leading_newline() -> None:
    """conduit-defined: 97 characters capped at 80: the first 37 fill the budget exactly."""
    raw = {"content": [{"type": "text", "text": "a" * 37}, {"type": "text", "text": "b" * 60}]}
    shaped = shape(raw, max_chars=80)
    assert texts(shaped) == ["a" * 37, "[… truncated: showing 37 of 97 characters]"]


def test_text_exactly_at_the_cap_is_not_truncated() -> None:
    """conduit-defined: the cap is inclusive."""
    shaped = shape({"content": [{"type": "text", "text": "y" * 80}]}, max_chars=80)
    assert texts(shaped) == ["y" * 80]
    assert shaped.provenance == Provenance(SERVER, False, ())


def test_truncation_counts_an_emoji_outside_the_bmp_as_one_character() -> None:
    """conduit-defined: max_chars counts code points, so U+1F600 (a surrogate pair in UTF-16,
    four bytes in UTF-8) is one character, whole or absent. As in the (100, 1000) case above:
    the marker for (100, 500) has 23 + 3 + 19 = 45 characters, so 55 are shown; counting
    UTF-16 units would show 27 emoji, counting UTF-8 bytes 13."""
    shaped = shape({"content": [{"type": "text", "text": "\U0001f600" * 500}]}, max_chars=100)
    assert texts(shaped) == ["\U0001f600" * 55 + "\n[… truncated: showing 55 of 500 characters]"]
    shaped_text(shaped).encode("utf-8")


@pytest.mark.parametrize("bad", [79, 0, -5])
def test_max_chars_below_the_minimum_is_a_value_error(bad: int) -> None:
    """conduit-defined: the cap must leave room for the marker."""
    assert MIN_MAX_CHARS == 80
    with pytest.raises(ValueError):
        shape({"content": []}, max_chars=bad)


@pytest.mark.parametrize("bad", [True, 100.0, "100", None])
def test_max_chars_of_another_type_is_a_type_error(bad: object) -> None:
    """conduit-defined: caller bug."""
    with pytest.raises(TypeError):
        shape({"content": []}, max_chars=bad)


@bounded(200)
@given(
    st.lists(st.text(max_size=120), max_size=8),
    st.integers(min_value=MIN_MAX_CHARS, max_value=400),
)
def test_capped_text_is_a_prefix_within_the_cap(parts: list[str], max_chars: int) -> None:
    """conduit-defined: shaped text never exceeds max_chars, and apart from the marker it is a
    prefix of the cleaned original text; truncated exactly when the original was longer."""
    raw = {"content": [{"type": "text", "text": p} for p in parts]}
    shaped = shape(raw, max_chars=max_chars)
    cleaned = texts(shape(raw, max_chars=10**9))
    got = texts(shaped)
    total = sum(map(len, cleaned))
    assert sum(map(len, got)) <= max_chars
    assert shaped.provenance is not None
    assert shaped.provenance.truncated is (total > max_chars)
    if total <= max_chars:
        assert got == cleaned
    else:
        marker_at = got[-1].rfind("[… truncated: showing ")
        head = "".join(got[:-1]) + got[-1][:marker_at].removesuffix("\n")
        assert "".join(cleaned).startswith(head)
        assert got[-1].endswith(f"showing {len(head)} of {total} characters]")


# -- structuredContent ----------------------------------------------------------------------


def test_structured_only_result_is_serialized_not_empty() -> None:
    """conduit-defined (issue: a result with only structuredContent must not shape to an empty
    message)."""
    shaped = shape({"content": [], "structuredContent": {"b": 1, "a": [True, None, "é"]}})
    assert texts(shaped) == ['{"b":1,"a":[true,null,"é"]}']
    assert flags(shaped) == ("structured_serialized",)


def test_structured_content_null_is_shown_when_present() -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.structuredContent`: any JSON value,
    null included)."""
    assert texts(shape({"content": [], "structuredContent": None})) == ["null"]
    assert shape({"content": []}).content == []


def test_structured_content_huge_integers_stay_exact() -> None:
    """conduit-defined: integers are never rounded through floats, even past Python's
    int-to-str digit limit."""
    big = 2**200
    assert texts(shape({"content": [], "structuredContent": [big, -(2**64) - 1]})) == [
        "[1606938044258990275541962092341162602522202993782792835301376,-18446744073709551617]"
    ]
    huge = 10**5000
    assert texts(shape({"content": [], "structuredContent": huge})) == ["1" + "0" * 5000]
    assert texts(shape({"content": [], "structuredContent": -huge - 7})) == [
        "-1" + "0" * 4999 + "7"
    ]


@pytest.mark.parametrize("depth", [10_000])
def test_deeply_nested_structured_content_does_not_recurse(depth: int) -> None:
    """conduit-defined: 10,000 levels serialize with an explicit stack."""
    array: Any = 1
    obj: Any = "x"
    for _ in range(depth):
        array = [array]
        obj = {"k": obj}
    assert texts(shape({"content": [], "structuredContent": array})) == [
        "[" * depth + "1" + "]" * depth
    ]
    (text,) = texts(shape({"content": [], "structuredContent": obj}, max_chars=10**6))
    assert text == '{"k":' * depth + '"x"' + "}" * depth


def test_structured_content_that_json_cannot_hold_still_shapes() -> None:
    """conduit-defined: values a caller built by hand (tuples, sets, bytes, odd keys) never
    make shaping raise."""
    value = {"t": (1, 2), "s": {3}, "b": b"x", 1: "int key", (1,): "tuple key"}
    (text,) = texts(shape({"content": [], "structuredContent": value}))
    assert text == '{"t":[1,2],"s":"<set>","b":"<bytes>","1":"int key","<tuple>":"tuple key"}'


def test_cyclic_structured_content_is_the_one_cycle_error() -> None:
    """conduit-defined (issue 15 item 1): a cycle gets the treatment it gets everywhere (as
    canonical_json): Error protocol/invalid_json at the container met again; sharing is fine."""
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    with pytest.raises(Error) as info:
        shape({"content": [], "structuredContent": {"s": {3}, "c": cyclic}})
    got = (info.value.kind, info.value.reason, info.value.path, dict(info.value.details))
    assert got == (
        "protocol",
        "invalid_json",
        ("structuredContent", "c", 1),
        {"expected": "a JSON value", "got": "cycle"},
    )
    with pytest.raises(Error) as info:
        canonical_json({"c": cyclic})
    assert info.value.path == ("c", 1)
    shared = [1]
    (text,) = texts(
        shape({"content": [], "structuredContent": {"s": {3}, "a": shared, "b": shared}})
    )
    assert text == '{"s":"<set>","a":[1],"b":[1]}'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (float("nan"), "null"),
        ([float("inf"), float("-inf"), 0.5], "[null,null,0.5]"),
        ({"k": 2**70, "n": float("nan")}, '{"k":1180591620717411303424,"n":null}'),
        ({1: "a", None: "b"}, '{"1":"a","null":"b"}'),
    ],
)
def test_structured_content_non_json_numbers_and_keys(value: Any, expected: str) -> None:
    """conduit-defined: NaN and infinities (not JSON) are written as null on every path;
    non-string keys become their JSON text, as `json.dumps` does."""
    assert texts(shape({"content": [], "structuredContent": value})) == [expected]


def test_structured_content_between_the_fast_and_deep_paths() -> None:
    """conduit-defined: 600 levels (past orjson's 255, within the C encoder's limit)."""
    value: Any = "v"
    for _ in range(600):
        value = {"k": value}
    assert texts(shape({"content": [], "structuredContent": value})) == [
        '{"k":' * 600 + '"v"' + "}" * 600
    ]


def test_structured_content_lone_surrogate_is_replaced() -> None:
    """conduit-defined: as for text blocks."""
    raw = json.loads('{"content": [], "structuredContent": {"s": "a\\udc00"}}')
    shaped = shape(raw)
    assert texts(shaped) == ['{"s":"a\ufffd"}']
    assert flags(shaped) == ("lone_surrogate_replaced", "structured_serialized")


def test_structured_content_strings_lose_invisible_characters() -> None:
    """conduit-defined: serialized structured content reaches the model like any text."""
    shaped = shape({"content": [], "structuredContent": {"k\u200b": "v\u202e"}})
    assert texts(shaped) == ['{"k":"v"}']
    assert flags(shaped) == ("invisible_unicode_removed", "structured_serialized")


def test_include_structured_always_and_never() -> None:
    """conduit-defined: the caller can force or suppress the serialized structured content."""
    raw = {"content": [{"type": "text", "text": "Found 1"}], "structuredContent": [{"id": "1"}]}
    assert texts(shape(raw, include_structured="always")) == ["Found 1", '[{"id":"1"}]']
    assert texts(shape(raw, include_structured="auto")) == ["Found 1"]
    assert texts(shape({"content": [], "structuredContent": 1}, include_structured="never")) == []
    with pytest.raises(ValueError):
        shape(raw, include_structured="sometimes")


def test_media_with_structured_wrapper_is_not_sent_twice() -> None:
    """conduit-defined: a kept image is the equivalent of a structured wrapper around it (the
    filesystem server's read_media_file sends both)."""
    raw = load("server-filesystem/read_media_file--png-image.json")
    shaped = shape(raw)
    assert [block["type"] for block in shaped.content] == ["image"]
    assert flags(shaped) == ()


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [("invalid", ("structured_invalid",)), ("valid", ()), ("skipped", ())],
)
def test_validation_outcome_invalid_is_flagged(outcome: str, expected: tuple[str, ...]) -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": clients SHOULD validate
    structured results): an invalid outcome is reported in provenance, content still shown."""

    @dataclasses.dataclass
    class Outcome:
        outcome: str

    raw = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}
    shaped = shape(raw, validation=Outcome(outcome))
    assert flags(shaped) == expected
    assert texts(shaped) == ["{}"]


def test_validate_structured_outcome_feeds_the_flag() -> None:
    """Spec-mandated (2026-07-28 server/tools "Output Schema": "Clients SHOULD validate
    structured results against this schema"): the real validator's `invalid` is flagged."""
    tool = Tool.from_wire(
        SERVER,
        {
            "name": "t",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "required": ["things"]},
        },
    )
    raw = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}
    result = result_of(raw)
    validation = validate_structured(result, tool, protocol_version="2026-07-28")
    assert validation.outcome == "invalid"
    shaped = shape_for_llm(result, server_id=SERVER, validation=validation)
    assert flags(shaped) == ("structured_invalid",)


def test_error_result_keeps_its_content_for_the_model() -> None:
    """Spec-mandated (2026-07-28 server/tools "Error Handling": clients SHOULD provide tool
    execution errors to language models)."""
    raw = {
        "content": [{"type": "text", "text": "NOT_FOUND: no such item"}],
        "structuredContent": {"error": {"code": "NOT_FOUND"}},
        "isError": True,
    }
    shaped = shape(raw)
    assert shaped.is_error is True
    assert texts(shaped) == ["NOT_FOUND: no such item"]
    assert shaped.structured == {"error": {"code": "NOT_FOUND"}}


def test_controls_in_structured_content_are_removed_before_serializing() -> None:
    """conduit-defined (issue 10): JSON would spell ESC as `\\u001b` and the model would read the
    sequence; strings (member names included) are cleaned first. raw and `structured` kept."""
    structured = {"msg": "ok\x1b[8m hidden\x1b[0m", "k\x00": ["\u200bv", 1]}
    raw = {"content": [], "structuredContent": structured}
    shaped = shape(raw)
    assert texts(shaped) == ['{"msg":"ok hidden","k":["v",1]}']
    assert flags(shaped) == (
        "control_characters_removed",
        "invisible_unicode_removed",
        "structured_serialized",
    )
    assert shaped.structured is structured
    assert structured == {"msg": "ok\x1b[8m hidden\x1b[0m", "k\x00": ["\u200bv", 1]}


def test_member_names_that_clean_to_the_same_name_keep_the_first() -> None:
    """conduit-defined: the cleaned view cannot hold two equal names; the first member wins."""
    raw = {"content": [], "structuredContent": {"a": 1, "a\x1b": 2}}
    assert texts(shape(raw)) == ['{"a":1}']


# -- images and audio -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("data:image/png;base64,iVBORw0KGgo=", "data URI"),
        ("", "empty"),
        ("iVBORw0KGgo", "length not a multiple of 4"),
        ("iVBO\nRw0KGgo=", "line break"),
        ("iVBO Rw0KGgo=", "space"),
        ("iVBORw0-Kgo=", "url-safe alphabet"),
        ("iVB=Rw0KGgo=", "inner padding"),
        ("iVBORw0KG===", "three padding characters"),
        (5, "not a string"),
        (None, "null"),
    ],
)
def test_image_with_invalid_base64_becomes_a_placeholder(data: object, reason: str) -> None:
    """Spec-mandated (2026-07-28 schema `ImageContent.data`: "The base64-encoded image data",
    `format: byte`)."""
    shaped = shape({"content": [{"type": "image", "data": data, "mimeType": "image/png"}]})
    assert shaped.content == [{"type": "text", "text": "[image omitted: data is not valid base64]"}]
    assert flags(shaped) == ("invalid_base64",)


@pytest.mark.parametrize(
    ("mime", "expected"),
    [
        ("image/svg+xml", "[image omitted: image/svg+xml is not an accepted type]"),
        ("image/JXL; q=1", "[image omitted: image/jxl is not an accepted type]"),
        ("", "[image omitted: no MIME type]"),
        (None, "[image omitted: no MIME type]"),
        (7, "[image omitted: no MIME type]"),
    ],
)
def test_image_of_a_type_the_model_does_not_accept_is_omitted(mime: object, expected: str) -> None:
    """conduit-defined: only the caller's accepted MIME types reach the model. The data is
    unknown bytes, so no signature speaks for or against the declared type."""
    shaped = shape({"content": [{"type": "image", "data": "AAAAAAAA", "mimeType": mime}]})
    assert texts(shaped) == [expected]
    assert flags(shaped) == ("binary_omitted",)


@pytest.mark.parametrize(
    "mime", ["IMAGE/PNG", "image/png; charset=binary", " image/png ", " IMAGE/PNG\n", "image/x-png"]
)
def test_mime_types_compare_case_insensitively_without_parameters(mime: str) -> None:
    """Spec-mandated (RFC 2045 section 5.1: type and subtype are case-insensitive); the kept
    block carries the normalized type, not the server's spelling."""
    shaped = shape({"content": [{"type": "image", "data": PNG_1X1, "mimeType": mime}]})
    assert shaped.content == [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}]
    assert flags(shaped) == ()


def test_default_accepted_mime_types_are_the_four_common_images() -> None:
    """conduit-defined."""
    assert DEFAULT_ACCEPTED_MIME_TYPES == {"image/png", "image/jpeg", "image/gif", "image/webp"}


def test_accepted_mime_types_must_be_a_collection_of_strings() -> None:
    """conduit-defined: a bare str is a caller bug (it would iterate characters)."""
    with pytest.raises(TypeError):
        shape({"content": []}, accepted_mime_types="image/png")
    with pytest.raises(TypeError):
        shape({"content": []}, accepted_mime_types=[b"image/png"])


@bounded(200)
@given(st.text(alphabet="ABCDabcd0189+/=-_ \n:;.\u00e9", max_size=16))
def test_strict_base64_agrees_with_b64decode_validate(text: str) -> None:
    """Spec-mandated (RFC 4648 section 4: the standard alphabet, output a multiple of four
    characters): `is_strict_base64` accepts exactly the non-empty strings that
    `base64.b64decode(..., validate=True)` decodes and whose length is a multiple of four
    (`validate=True` alone tolerates excess padding such as `"00000000="`)."""
    try:
        base64.b64decode(text, validate=True)
        decodes = len(text) % 4 == 0
    except (binascii.Error, ValueError):
        decodes = False
    assert is_strict_base64(text) is (decodes and text != "")


@bounded(200)
@given(st.binary(min_size=1, max_size=64))
def test_strict_base64_accepts_every_encoding(payload: bytes) -> None:
    """Spec-mandated (RFC 4648 section 4): any standard encoding is valid."""
    assert is_strict_base64(base64.b64encode(payload).decode("ascii"))


# Minimal files by their format specs (the signatures `filetype` reads): PNG (RFC 2083 3.1),
# JPEG (JFIF SOI + APP0), GIF89a, RIFF/WAVE, BMP (BITMAPFILEHEADER "BM").
JPEG_HEAD = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01").decode()
GIF_HEAD = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x00\x00\x00").decode()
WAV_HEAD = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00").decode()
BMP_HEAD = base64.b64encode(b"BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00").decode()


@pytest.mark.parametrize(
    ("data", "declared", "expected_mime"),
    [
        (PNG_1X1, "image/jpeg", "image/png"),
        (JPEG_HEAD, "image/png", "image/jpeg"),
        (GIF_HEAD, "image/webp", "image/gif"),
    ],
    ids=["png-says-jpeg", "jpeg-says-png", "gif-says-webp"],
)
def test_media_whose_bytes_are_another_accepted_type_are_sent_as_what_they_are(
    data: str, declared: str, expected_mime: str
) -> None:
    """conduit-defined (issue 10: providers refuse a block whose bytes do not match its type):
    the signature wins when the model accepts that type; flagged."""
    shaped = shape({"content": [{"type": "image", "data": data, "mimeType": declared}]})
    assert shaped.content == [{"type": "image", "data": data, "mimeType": expected_mime}]
    assert flags(shaped) == ("mime_type_mismatch",)


def test_media_whose_bytes_are_a_type_not_accepted_become_a_placeholder() -> None:
    """conduit-defined: BMP bytes labelled PNG; BMP is not accepted."""
    shaped = shape({"content": [{"type": "image", "data": BMP_HEAD, "mimeType": "image/png"}]})
    assert texts(shaped) == ["[image omitted: image/bmp is not an accepted type]"]
    assert flags(shaped) == ("binary_omitted", "mime_type_mismatch")


def test_media_whose_bytes_have_no_signature_of_the_declared_type_become_a_placeholder() -> None:
    """conduit-defined: `AAAAAAAA` decodes to six zero bytes, which no image format starts with."""
    shaped = shape({"content": [{"type": "image", "data": "AAAAAAAA", "mimeType": "image/png"}]})
    assert texts(shaped) == ["[image omitted: data is not image/png]"]
    assert flags(shaped) == ("binary_omitted", "mime_type_mismatch")


def test_audio_in_an_image_block_is_not_an_image() -> None:
    """conduit-defined: only the block's own family of signatures is tried."""
    shaped = shape({"content": [{"type": "image", "data": WAV_HEAD, "mimeType": "image/png"}]})
    assert texts(shaped) == ["[image omitted: data is not image/png]"]


@pytest.mark.parametrize("declared", ["audio/wav", "audio/x-wav", "AUDIO/WAVE", "audio/vnd.wave"])
def test_audio_is_checked_and_named_canonically(declared: str) -> None:
    """conduit-defined: the spellings of WAV in use are one type (`audio/wav`, RFC 2361)."""
    shaped = shape(
        {"content": [{"type": "audio", "data": WAV_HEAD, "mimeType": declared}]},
        accepted_mime_types={"audio/x-wav"},
    )
    assert shaped.content == [{"type": "audio", "data": WAV_HEAD, "mimeType": "audio/wav"}]
    assert flags(shaped) == ()


def test_a_type_without_a_known_signature_is_kept_when_accepted() -> None:
    """conduit-defined: no signature can speak against `image/svg+xml` (text), so the caller's
    acceptance decides."""
    svg = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode()
    shaped = shape(
        {"content": [{"type": "image", "data": svg, "mimeType": "image/svg+xml"}]},
        accepted_mime_types={"image/svg+xml"},
    )
    assert shaped.content == [{"type": "image", "data": svg, "mimeType": "image/svg+xml"}]


@pytest.mark.parametrize(
    "mime",
    [
        "image/png" + "\u202e\U000e0041" * 250_000,
        "image/png\ud800",
        "image png",
        "image/png/x",
        "\u0456mage/png",
        "image/" + "p" * 200,
    ],
    ids=["500k-bidi-and-tags", "lone-surrogate", "no-slash", "two-slashes", "cyrillic", "too-long"],
)
def test_a_mime_type_that_is_not_a_clean_token_is_never_echoed(mime: str) -> None:
    """conduit-defined (issue 10; RFC 6838 4.2 restricted names, at most 127 characters each):
    the label is normalized and bounded before anything reads it, so no such value reaches the
    model, escapes `max_chars` or breaks the caller's UTF-8 encoding."""
    shaped = shape({"content": [{"type": "image", "data": PNG_1X1, "mimeType": mime}]})
    if mime == "image/png\ud800":  # a lone surrogate is not hidden: the token is invalid
        assert texts(shaped) == ["[image omitted: not a valid MIME type]"]
    assert shaped.content[0]["type"] == "text"
    text = shaped_text(shaped)
    assert len(text) < 80 and text.isascii()
    assert "binary_omitted" in flags(shaped)


def test_invisible_characters_inside_a_mime_type_are_cleaned_before_it_is_read() -> None:
    """conduit-defined: `image/\u200bpng` is `image/png` once cleaned, and the PNG bytes agree."""
    shaped = shape({"content": [{"type": "image", "data": PNG_1X1, "mimeType": "image/\u200bpng"}]})
    assert shaped.content == [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}]


def test_an_embedded_blob_shows_its_normalized_mime_type_only() -> None:
    """conduit-defined: the label is the normalized token or nothing."""
    good = {"uri": "u:/x", "blob": "AAAA", "mimeType": " Application/PDF; x=1"}
    bad = {"uri": "u:/y", "blob": "AAAA", "mimeType": "\u202e" * 1000}
    shaped = shape({"content": [{"type": "resource", "resource": r} for r in (good, bad)]})
    assert texts(shaped) == [
        "[embedded resource] u:/x (application/pdf, binary content omitted)",
        "[embedded resource] u:/y (binary content omitted)",
    ]


# -- resource links and embedded resources --------------------------------------------------


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"type": "resource_link", "uri": "file:///a"}, "[resource link] file:///a"),
        ({"type": "resource_link", "name": "a.txt"}, "[resource link: a.txt] (no URI)"),
        ({"type": "resource_link", "uri": 5, "name": None}, "[resource link] (no URI)"),
        ({"type": "resource_link", "uri": "", "name": "a"}, "[resource link: a] (no URI)"),
    ],
)
def test_incomplete_resource_link_is_shown_and_flagged(block: object, expected: str) -> None:
    """Spec-mandated (2026-07-28 schema `ResourceLink`: `name` and `uri` are required)."""
    shaped = shape({"content": [block]})
    assert texts(shaped) == [expected]
    assert flags(shaped) == ("resource_link_incomplete",)


def test_resource_link_name_and_uri_lose_invisible_characters() -> None:
    """conduit-defined: server strings in placeholders are cleaned like any text."""
    block = {"type": "resource_link", "uri": "file:///a\u200b", "name": "n\u2066"}
    shaped = shape({"content": [block]})
    assert texts(shaped) == ["[resource link: n] file:///a"]
    assert flags(shaped) == ("invisible_unicode_removed",)


@pytest.mark.parametrize(
    ("resource", "expected", "flag"),
    [
        ({"uri": "u:/x", "text": "hi"}, "[embedded resource] u:/x\nhi", ()),
        ({"text": "hi"}, "[embedded resource]\nhi", ()),
        (
            {"uri": "u:/x", "blob": "AAAA"},
            "[embedded resource] u:/x (binary content omitted)",
            ("binary_omitted",),
        ),
        (
            {"uri": "u:/x", "blob": "AAAA", "mimeType": "image/png"},
            "[embedded resource] u:/x (image/png, binary content omitted)",
            ("binary_omitted",),
        ),
        (
            {"uri": "u:/x"},
            "[content block omitted: malformed resource block]",
            ("unknown_content_type",),
        ),
        (
            {"uri": "u:/x", "text": 5},
            "[content block omitted: malformed resource block]",
            ("unknown_content_type",),
        ),
        ("text", "[content block omitted: malformed resource block]", ("unknown_content_type",)),
    ],
)
def test_embedded_resources_show_text_and_omit_blobs(
    resource: object, expected: str, flag: tuple[str, ...]
) -> None:
    """conduit-defined (2026-07-28 schema `EmbeddedResource`: "It is up to the client how best
    to render embedded resources for the benefit of the LLM")."""
    shaped = shape({"content": [{"type": "resource", "resource": resource}]})
    assert texts(shaped) == [expected]
    assert flags(shaped) == flag


# -- unknown and malformed blocks -----------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"type": "json", "json": {"a": 1}}, '[content block omitted: unsupported type "json"]'),
        ({"type": "Text", "text": "x"}, '[content block omitted: unsupported type "Text"]'),
        ({"text": "no type"}, "[content block omitted: no type]"),
        ({"type": 3}, "[content block omitted: no type]"),
        ({"type": "text", "text": 5}, "[content block omitted: malformed text block]"),
        ({"type": "text"}, "[content block omitted: malformed text block]"),
        ("a bare string", "[content block omitted: not an object]"),
        (42, "[content block omitted: not an object]"),
        (None, "[content block omitted: not an object]"),
        ([{"type": "text", "text": "x"}], "[content block omitted: not an object]"),
    ],
)
def test_unknown_or_malformed_blocks_are_placeholders(block: object, expected: str) -> None:
    """conduit-defined (cases/28: unknown block type is warned, never fatal)."""
    shaped = shape({"content": [block]})
    assert texts(shaped) == [expected]
    assert flags(shaped) == ("unknown_content_type",)


def test_unknown_type_label_is_capped_and_cleaned() -> None:
    """conduit-defined: a server-chosen type name is a label, at most 64 characters."""
    shaped = shape({"content": [{"type": "\u200b" + "t" * 100}]})
    assert texts(shaped) == ['[content block omitted: unsupported type "' + "t" * 64 + '…"]']
    assert flags(shaped) == ("invisible_unicode_removed", "unknown_content_type")


def test_content_that_is_not_a_list_does_not_crash() -> None:
    """conduit-defined: a hand-built ToolResult with odd content still shapes."""
    result = result_of({"content": []}).replace(content="oops")
    shaped = shape_for_llm(result, server_id=SERVER)
    assert texts(shaped) == ["[content omitted: not an array]"]
    assert flags(shaped) == ("unknown_content_type",)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=8,
)
BLOCK = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image", "audio", "resource_link", "resource", "x"])},
        optional={
            "text": JSON,
            "data": st.sampled_from([PNG_1X1, "data:,", "", 1]) | JSON,
            "mimeType": st.sampled_from(["image/png", "audio/wav", "IMAGE/GIF"]) | JSON,
            "uri": JSON,
            "name": JSON,
            "resource": st.fixed_dictionaries(
                {}, optional={"uri": JSON, "text": JSON, "blob": JSON}
            )
            | JSON,
        },
    ),
)


@bounded(100)
@given(
    st.lists(BLOCK, max_size=6),
    st.one_of(st.just({}), st.fixed_dictionaries({"structuredContent": JSON})),
    st.booleans(),
)
def test_any_content_shapes_without_error_or_mutation(
    blocks: list[Any], structured: dict[str, Any], is_error: bool
) -> None:
    """conduit-defined: bad input never crashes and is never mutated; re-shaping is stable."""
    raw = {"content": blocks, "isError": is_error, **structured}
    before = copy.deepcopy(raw)
    shaped = shape(raw, max_chars=200)
    assert raw == before
    assert sum(len(t) for t in texts(shaped)) <= 200
    again = shape_for_llm(shaped, server_id=SERVER, max_chars=200)
    assert again.content == shaped.content
    assert again.provenance == shaped.provenance


# -- shaped result as a whole ---------------------------------------------------------------


def test_shaped_result_keeps_raw_meta_extra_and_structured() -> None:
    """conduit-defined: only `content` and `provenance` change."""
    raw = {
        "content": [{"type": "text", "text": "t"}],
        "structuredContent": {"a": 1},
        "_meta": {"k": "v"},
        "other": [1],
        "isError": False,
    }
    result = result_of(raw)
    shaped = shape_for_llm(result, server_id=SERVER)
    assert shaped.raw is raw
    assert shaped.meta is result.meta and shaped.extra is result.extra
    assert shaped.structured is result.structured
    assert result.provenance is None and result.content is raw["content"]


def test_shape_rejects_caller_bugs() -> None:
    """conduit-defined."""
    with pytest.raises(TypeError):
        shape_for_llm({"content": []}, server_id=SERVER)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        shape_for_llm(result_of({"content": []}), server_id="")
    with pytest.raises(TypeError):
        shape_for_llm(result_of({"content": []}), server_id=5)  # type: ignore[arg-type]


def test_shaped_text_joins_text_blocks_and_skips_others() -> None:
    """conduit-defined."""
    result = result_of(
        {
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image"},
                5,
                {"type": "text", "text": "b"},
            ]
        }
    )
    assert shaped_text(result) == "a\nb"
    assert shaped_text(result_of({"content": []})) == ""
    with pytest.raises(TypeError):
        shaped_text("a")  # type: ignore[arg-type]


# -- provenance -----------------------------------------------------------------------------


def test_provenance_sorts_and_deduplicates_flags() -> None:
    """conduit-defined."""
    provenance = Provenance("s", True, ("truncated", "binary_omitted", "truncated"))
    assert provenance.flags == ("binary_omitted", "truncated")
    assert provenance.as_dict() == {
        "server_id": "s",
        "truncated": True,
        "flags": ["binary_omitted", "truncated"],
    }


def test_provenance_is_frozen() -> None:
    """conduit-defined."""
    provenance = Provenance("s", False, ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        provenance.server_id = "t"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("", False, ()), ValueError),
        ((5, False, ()), TypeError),
        (("s", 1, ()), TypeError),
        (("s", False, ("nope",)), ValueError),
        (("s", False, (1,)), TypeError),
        (("s", True, ()), ValueError),
        (("s", False, ("truncated",)), ValueError),
    ],
)
def test_provenance_rejects_bad_fields(args: tuple[Any, ...], error: type[Exception]) -> None:
    """conduit-defined: a non-empty server id, a real bool, flags from the closed set, and
    `truncated` agreeing with the flag."""
    with pytest.raises(error):
        Provenance(*args)


def test_provenance_flags_are_the_documented_closed_set() -> None:
    """conduit-defined."""
    assert PROVENANCE_FLAGS == {
        "audience_withheld",
        "binary_omitted",
        "control_characters_removed",
        "invalid_base64",
        "invisible_unicode_removed",
        "lone_surrogate_replaced",
        "mime_type_mismatch",
        "resource_link_incomplete",
        "structured_invalid",
        "structured_serialized",
        "truncated",
        "unknown_content_type",
        "withheld",
    }


# -- withheld -------------------------------------------------------------------------------


def test_withheld_result_is_an_error_saying_so() -> None:
    """conduit-defined (issue): the synthetic result when a post-call hook failed."""
    result = ToolResult.withheld("srv", "the output filter failed")
    assert result.is_error is True
    assert result.content == [
        {"type": "text", "text": "[result withheld by the client: the output filter failed]"}
    ]
    assert result.provenance == Provenance("srv", False, ("withheld",))
    assert result.has_structured is False and result.structured is None
    assert result.raw == {"content": result.content, "isError": True}
    assert result.raw["content"] is not result.content


def test_withheld_without_reason_and_with_invisible_characters() -> None:
    """conduit-defined."""
    assert texts(ToolResult.withheld("srv", "")) == ["[result withheld by the client]"]
    hidden = ToolResult.withheld("srv", "x\u200b")
    assert texts(hidden) == ["[result withheld by the client: x]"]
    assert flags(hidden) == ("invisible_unicode_removed", "withheld")


def test_reshaping_a_withheld_result_keeps_the_flag() -> None:
    """conduit-defined: earlier provenance flags survive shaping again."""
    shaped = shape_for_llm(ToolResult.withheld("srv", "r"), server_id="srv")
    assert flags(shaped) == ("withheld",)
    assert shaped.is_error is True


@pytest.mark.parametrize(
    ("server_id", "reason", "error"),
    [("", "r", ValueError), (None, "r", TypeError), ("srv", None, TypeError)],
)
def test_withheld_rejects_caller_bugs(server_id: Any, reason: Any, error: type[Exception]) -> None:
    """conduit-defined."""
    with pytest.raises(error):
        ToolResult.withheld(server_id, reason)
