"""bench/guard.py keeps working: one tiny, untimed round of its rows. Nothing here asserts a
speed; `python bench/guard.py` is the benchmark."""

from __future__ import annotations

import anyio
import pytest

from bench import guard as bench_guard


@pytest.mark.slow  # a round of make bench's guard rows
def test_one_tiny_round_of_the_guard_bench_runs() -> None:
    lines = anyio.run(bench_guard.main, 1, 3, 1)
    assert [line.split("  ")[0].strip() for line in lines[:3]] == [
        "G1 tools/call echo (no outputSchema)",
        "G1 tools/call weather (outputSchema)",
        "G2 list_tools, page of 100 corpus tools",
    ]
    assert lines[-1].startswith("clock:")
