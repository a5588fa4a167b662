"""Rows 4 and 6 of the benchmark alone (issue 13), with `run.py`'s method and full sizes.

`.venv/bin/python bench/rows_4_6.py` prints JSON: per row and candidate the median / min wall
time and the median CPU time in µs per item, the ratios, whether the target is met, and row 6's
cold first calls. It writes nothing: `make bench` (all rows, .cache/bench/results.json; the
committed reference: `make bench-reference`) stays the record; this is for measuring validation
and conformance without the ~2 minute full run.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as bench  # noqa: E402
from bench import workload  # noqa: E402


def main() -> int:
    """Measure rows 4 (results, tools) and 6 (warm, cold); print the JSON report."""
    config = bench.FULL
    tools = workload.tools(config.items, config.seed)
    results = workload.results(config.items, config.seed)
    pairs = workload.structured_pairs(config.pairs, config.seed)
    gc.collect()
    gc.freeze()
    report: dict[str, Any] = {"loadavg_start": list(os.getloadavg())}
    rows = (
        bench.row_conformance(results, "result"),
        bench.row_conformance(tools, "tool"),
        bench.row_validate(pairs),
    )
    for row in rows:
        bench.measure(row, config.rounds)
        report[row.id] = {
            "candidates": {
                c.name: {
                    "role": c.role,
                    "median_us": round(c.median, 3),
                    "min_us": round(c.min, 3),
                    "cpu_median_us": round(c.cpu_median, 3),
                }
                for c in row.candidates
            },
            "ratio_median": row.ratio,
            "ratio_min": row.ratio_min,
            "ratio_cpu": row.ratio_cpu,
            "target": row.target,
            "met": row.met,
            "extra": row.extra,
        }
    report["6-cold"] = bench.cold_validation(pairs, max(1, config.rounds // 2))
    report["loadavg_end"] = list(os.getloadavg())
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
