"""Intake in one pass changed no outcome: every input of `intake_outcomes` against its record.

The record (tests/fixtures/intake_reference.json) holds the digests of the outcomes the intake
gave before the one-pass rewrite, per spec version; `python -m tests.client.intake_outcomes`
re-records it (only on purpose: a changed digest is a changed verdict, warning, fingerprint or
error), `--add` records only a new version's or a new input's digests (`make bump` does).
"""

from __future__ import annotations

import json

import pytest

from conduit_mcp.client import KNOWN_VERSIONS, Error, intake, intake_json
from conduit_mcp.client._engine import clear_cache
from conduit_mcp.client._intake import clear_page_memo
from conduit_mcp.client._intake_tool import clear_memo
from tests.client.intake_outcomes import RECORD, digest, inputs

_RECORDED: dict[str, dict[str, str]] = json.loads(RECORD.read_text(encoding="utf-8"))


def test_the_record_covers_every_input_at_every_version() -> None:
    """conduit-defined: no input or version was added or dropped since the record was made."""
    assert sorted(_RECORDED) == sorted(KNOWN_VERSIONS)
    names = sorted(name for name, _ in inputs())
    for version in KNOWN_VERSIONS:
        assert sorted(_RECORDED[version]) == names, version


@pytest.mark.parametrize("seen_before", [False, True], ids=["first-sight", "seen-before"])
def test_every_outcome_is_the_recorded_one(seen_before: bool) -> None:
    """The previous implementation's outcomes (recorded): identical at first sight (caches
    cleared) and when every tool was seen before (the per-tool memo and the verdict caches
    answer)."""
    clear_cache()
    differ = []
    for name, data in inputs():
        if seen_before:
            for version in KNOWN_VERSIONS:
                digest(data, version)  # warm every cache with this very input
        else:
            clear_memo()  # no tool of this input was seen before
            clear_page_memo()
        for version in KNOWN_VERSIONS:
            if digest(data, version) != _RECORDED[version][name]:
                differ.append(f"{version} {name}")
    assert differ == []


def test_accepted_tools_hold_the_very_dicts_sent() -> None:
    """conduit-defined: intake hands `raw` over, never a copy, first sight and seen again."""
    page = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    for _ in range(2):
        got = intake("s", page, transport="stdio", protocol_version="2026-07-28")
        assert got.tools[0].raw is page["tools"][0]
    again = intake_json(
        "s", json.dumps(page).encode(), transport="stdio", protocol_version="2026-07-28"
    )
    assert again.tools[0].raw == page["tools"][0]


def test_a_memo_hit_never_stands_for_a_different_value() -> None:
    """conduit-defined: a hand-built tool whose orjson bytes equal a tool seen before (NaN is
    written `null`, a tuple as an array) is checked afresh, never given the memo's verdict."""
    clear_memo()
    seen = {"name": "t", "inputSchema": {"type": "object", "default": None, "enum": ["\u200b"]}}
    first = intake("s", {"tools": [seen]}, transport="stdio", protocol_version="2026-07-28")
    assert [x.code for x in first.warnings] == ["invisible_unicode"] and first.tools
    nan = {"name": "t", "inputSchema": {"type": "object", "default": float("nan")}}
    intake(
        "s",
        {"tools": [{**nan, "inputSchema": {"type": "object", "default": None}}]},
        transport="stdio",
        protocol_version="2026-07-28",
    )
    got = intake("s", {"tools": [nan]}, transport="stdio", protocol_version="2026-07-28")
    assert [r.reason for r in got.rejected] == ["invalid_json"] and not got.tools
    as_tuple = {
        "name": "t",
        "inputSchema": {"type": "object", "default": None, "enum": ("\u200b",)},
    }
    got = intake("s", {"tools": [as_tuple]}, transport="stdio", protocol_version="2026-07-28")
    # A tuple is not walked as an array by the model view (no JSON parser makes one): no
    # warning, and in particular not the memo's answer for the list.
    assert got.warnings == () and got.tools
    again = intake("s", {"tools": [seen]}, transport="stdio", protocol_version="2026-07-28")
    assert [x.code for x in again.warnings] == ["invisible_unicode"]
    try:
        intake("s", {"tools": [nan]}, transport="stdio", protocol_version="2026-07-28")
    except Error:  # pragma: no cover - intake rejects the tool, it does not raise
        raise AssertionError("intake raised") from None
