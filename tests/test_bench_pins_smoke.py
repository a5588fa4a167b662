"""bench/pins.py keeps working: one quick untimed-in-spirit run on sqlite (no speed asserted)."""

from __future__ import annotations

import pytest

from bench import pins


@pytest.mark.slow  # a round of make bench's pin rows
def test_the_pin_bench_quick_run_checks_a_page_and_reports_a_row() -> None:
    report = pins.main(["--quick"])
    (row,) = report["rows"]
    assert (row["backend"], row["tools"]) == ("sqlite", 100)
    assert row["page_ms"] > 0 and row["target_ms"] == 5.0
