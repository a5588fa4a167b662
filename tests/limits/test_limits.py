"""Resource limits (issue 6, "Limits"): deep, huge and wide inputs finish, linearly, or stop at
a documented limit with `limit_exceeded` and a path. No wall-clock assertions: growth is
checked by counting operations (calls seen by a profile hook) and peak memory at n and 4n.

`make test` runs each case at `CI` sizes (the issue's full size for depth, smaller otherwise);
`LIMITS_FULL=1` runs every case at the issue's sizes. Figures: `tests/limits/measure.py`.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from typing import Any

import pytest

from conduit_mcp.client import Error, intake_json, parse_json
from tests.limits.scenarios import CASES, CI, FULL, GROWTH, Case, count_operations

SIZES = FULL if os.environ.get("LIMITS_FULL") else CI
IDS = [f"{case.scenario}-{case.entry}" for case in CASES]

#: Operation and memory growth from n to 4n: 4 is linear; n log n stays under 5.5 at these
#: sizes; quadratic would be 16.
MAX_GROWTH = 5.5
#: Fixed costs (caches, interned strings) that do not grow with n.
MEMORY_SLACK = 256 * 1024


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_scenario_completes_or_stops_at_its_documented_limit(case: Case) -> None:
    """conduit-defined (issue 6 "Limits": 10,000 levels, a 50 MB text block, 100,000 tools, a
    1 MB name, 100,000 properties): no RecursionError, no other exception; where a limit
    applies, `Error` with reason `limit_exceeded` and the path to the place."""
    size = SIZES[case.scenario] if SIZES is FULL else case.ci_size or SIZES[case.scenario]
    value = case.build(size)
    expected = case.expected(value)
    if expected is None:
        case.run(value)
        return
    with pytest.raises(Error) as info:
        case.run(value)
    assert info.value.reason == expected
    if expected == "limit_exceeded":
        # Issue 15 item 1: a reason implies its kind, and the limit is always a number.
        assert info.value.kind == "policy"
        # The CLI's one-line message carries the code, not the details.
        cli = "/limit_exceeded at " in info.value.message
        assert cli or type(info.value.details["limit"]) is int


def _peak(case: Case, value: Any) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        case.run(value)
    except Error:
        pass
    finally:
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return top


@pytest.mark.slow  # operation counting and tracemalloc at n and 4n, 51 cases
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_work_and_memory_grow_linearly_with_the_input(case: Case) -> None:
    """conduit-defined (issue 6: "no quadratic blow-up, memory bounded by the input size"):
    from n to 4n, the calls made and the peak memory allocated grow at most 5.5 times."""
    n = case.growth_size or GROWTH[case.scenario]
    small, large = case.build(n), case.build(4 * n)
    ops = (count_operations(case, small), count_operations(case, large))
    assert ops[1] <= MAX_GROWTH * max(ops[0], 1), ops
    peaks = (_peak(case, small), _peak(case, large))
    assert peaks[1] <= MAX_GROWTH * peaks[0] + MEMORY_SLACK, peaks


# -- parse_json's own limits (regressions of what the limit work changed) -------------------


def test_parse_json_reports_the_path_of_the_first_container_too_deep() -> None:
    """conduit-defined (parse_json Raises; RFC 8259 section 9): past 1,024 levels, kind
    `policy`, reason `limit_exceeded`, the path to the 1,025th container."""
    data = b'{"tools": [{"inputSchema": ' + b"[" * 1100 + b"]" * 1100 + b"}]}"
    with pytest.raises(Error) as info:
        intake_json("s", data, transport="stdio", protocol_version="2026-07-28")
    error = info.value
    assert (error.kind, error.reason, error.details["limit"]) == ("policy", "limit_exceeded", 1024)
    assert error.path == ("tools", 0, "inputSchema") + (0,) * 1021


def test_parse_json_max_depth_can_be_lowered_and_is_checked() -> None:
    """conduit-defined (parse_json `max_depth`: 1 to 1,024)."""
    assert parse_json(b"[[1]]", max_depth=2) == [[1]]
    with pytest.raises(Error) as info:
        parse_json(b'{"a": [[1]]}', max_depth=2)
    assert info.value.path == ("a", 0)
    for bad, exc in ((0, ValueError), (1025, ValueError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(exc):
            parse_json(b"1", max_depth=bad)


def test_an_integer_beyond_the_digit_limit_is_a_limit_not_a_syntax_error() -> None:
    """conduit-defined (parse_json Raises): more digits than `sys.get_int_max_str_digits()`
    (4,300) is `limit_exceeded` with the path to the number, not `invalid_json`."""
    with pytest.raises(Error) as info:
        parse_json(b'{"a": [1, ' + b"7" * 5000 + b"]}")
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "policy",
        "limit_exceeded",
        ("a", 1),
    )
    assert info.value.details == {"limit": 4300, "digits": 5000}


@pytest.mark.parametrize(
    "text",
    [
        '["\\ud800"]',  # a lone high surrogate escape
        '["\\udc00x"]',  # a lone low surrogate escape
        '{"\\ud800": 1}',  # in a key
        '["\ud800"]',  # a raw lone surrogate in str input
    ],
)
def test_lone_surrogates_are_refused_whichever_parser_runs(text: str) -> None:
    """Spec-mandated (RFC 8259 section 8.2: strings of unpaired surrogates are not
    interoperable; parse_json: "lone surrogates (raw or escaped) are refused"): refused by
    orjson, and by the exact parser that a 20-digit integer sends the text to (it used to
    accept them)."""
    long_int = text.replace("[", "[123456789012345678901, ", 1) if text[0] == "[" else None
    for variant in filter(None, (text, long_int)):
        with pytest.raises(Error) as info:
            parse_json(variant)
        assert info.value.reason == "invalid_json"
