"""Print time, peak memory and outcome of every limits scenario (issue 6, "Limits").

    python tests/limits/measure.py                # the issue's sizes
    python tests/limits/measure.py --scale 0.1    # a tenth of them
    python tests/limits/measure.py --only deep

Columns: the scenario and its size, the entry point, wall time (median of `--repeat` runs,
without tracing; compiled output-schema validators are dropped before each run), peak memory
of Python allocations during the call (tracemalloc, a separate run; orjson reserves buffers it
never touches, so its figures overstate resident memory), the operation-count growth from n
to 4n at the growth size (calls seen by a profile hook: ~4 means linear), and the outcome.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conduit_mcp.client import Error
from conduit_mcp.client._validate import clear_validator_cache
from tests.limits.scenarios import CASES, FULL, GROWTH, Case, count_operations


def outcome(case: Case, value: Any) -> str:
    """Run once; describe the result."""
    try:
        case.run(value)
    except Error as exc:
        return f"{exc.kind}/{exc.reason} at path of {len(exc.path)} steps"
    return "ok"


def timed(case: Case, value: Any, repeat: int) -> float:
    """Median wall time of `repeat` runs, in seconds (cold: compiled validators dropped)."""
    times = []
    for _ in range(repeat):
        clear_validator_cache()
        gc.collect()
        start = time.perf_counter()
        try:
            case.run(value)
        except Error:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak(case: Case, value: Any) -> int:
    """Peak bytes allocated by Python during one run (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        case.run(value)
    except Error:
        pass
    finally:
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return top


def operations(case: Case, n: int) -> int:
    """Python and C calls during one run on an input of size `n`."""
    return count_operations(case, case.build(n))


def growth(case: Case) -> float:
    """Operation-count ratio from the growth size n to 4n (4 for linear, 16 for quadratic)."""
    n = case.growth_size or GROWTH[case.scenario]
    return operations(case, 4 * n) / max(1, operations(case, n))


def main() -> None:
    """Measure and print every selected case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", choices=sorted(FULL), action="append")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'scenario':<24} {'entry point':<38} {'time s':>8} {'peak MB':>9} {'growth':>6}  outcome"
    )
    for case in CASES:
        if args.only and case.scenario not in args.only:
            continue
        n = max(1, int(FULL[case.scenario] * args.scale))
        value = case.build(n)
        result = outcome(case, value)
        seconds = timed(case, value, args.repeat)
        top = peak(case, value)
        del value
        label = f"{case.scenario} n={n:,}"
        print(
            f"{label:<24} {case.entry:<38} {seconds:8.3f} {top / 1e6:9.1f} {growth(case):6.2f}  "
            f"{result}",
            flush=True,
        )


if __name__ == "__main__":
    main()
