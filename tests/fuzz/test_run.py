"""The fuzz runner's summary: libFuzzer's final stats read from its log."""

from __future__ import annotations

from tests.fuzz.run import _final_stats

# The end of one worker's output (the parse_json target, 1 s, `-print_final_stats=1`), copied
# from a run of `python tests/fuzz/run.py --seconds 6 --target all --log ...` with atheris 3.0.0.
OUTPUT = b"""###### End of recommended dictionary. ######
Done 3551 runs in 2 second(s)
stat::number_of_executed_units: 3551
stat::average_exec_per_sec:     1775
stat::new_units_added:          73
stat::slowest_unit_time_sec:    0
stat::peak_rss_mb:              72
"""


def test_final_stats_are_read_from_the_log() -> None:
    """conduit-defined: the integers of the `stat::` lines, by name."""
    assert _final_stats(OUTPUT) == {
        "number_of_executed_units": 3551,
        "average_exec_per_sec": 1775,
        "new_units_added": 73,
        "slowest_unit_time_sec": 0,
        "peak_rss_mb": 72,
    }


def test_a_worker_killed_before_its_stats_counts_nothing() -> None:
    """conduit-defined: a crash before the final stats leaves no `stat::` lines."""
    assert _final_stats(b"==1== ERROR: libFuzzer: deadly signal\n") == {}
