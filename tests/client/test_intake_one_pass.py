"""Intake in one pass changed no outcome: every input of `intake_outcomes` against its record.

The record (tests/fixtures/intake_reference.json) holds the digests of the outcomes the intake
gave before the one-pass rewrite; `python -m tests.client.intake_outcomes` re-records it (only
on purpose: a changed digest is a changed verdict, warning, fingerprint or error).
"""

from __future__ import annotations

import json

import pytest

from conduit_mcp.client import intake, intake_json
from conduit_mcp.client._engine import clear_cache
from tests.client.intake_outcomes import RECORD, digest, inputs

_RECORDED: dict[str, str] = json.loads(RECORD.read_text(encoding="utf-8"))


def test_the_record_covers_every_input() -> None:
    """conduit-defined: no input was added or dropped since the record was made."""
    assert sorted(name for name, _ in inputs()) == sorted(_RECORDED)


@pytest.mark.parametrize("seen_before", [False, True], ids=["first-sight", "seen-before"])
def test_every_outcome_is_the_recorded_one(seen_before: bool) -> None:
    """The previous implementation's outcomes (recorded): identical at first sight (caches
    cleared) and when every tool was seen before (the per-tool memo and the verdict caches
    answer)."""
    clear_cache()
    differ = []
    for name, data in inputs():
        if seen_before:
            digest(data)  # warm every cache with this very input
        if digest(data) != _RECORDED[name]:
            differ.append(name)
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
