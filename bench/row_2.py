"""Row 2 of the benchmark alone (`intake_json` of a tools/list page), with `run.py`'s method.

`.venv/bin/python bench/row_2.py` prints JSON: per candidate (`intake_json` of a re-listing, of a
page whose text is new but whose tools were seen, of a page of tools never seen; the SDK's
`json.loads` + `ListToolsResult.model_validate` and its `model_validate_json`; `orjson.loads`) the
median / min wall and median CPU µs per tool over the 1,000 workload tools, 11 rounds, and each
`intake_json` case's ratio to each SDK parse (above 1: `intake_json` is faster), with the load
average at the start and the end. It writes nothing: `make bench` stays the record.
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

#: The SDK's two ways to read a page, the peers each `intake_json` case is compared with.
SDK_PARSES = ("json.loads + ListToolsResult.model_validate", "ListToolsResult.model_validate_json")


def main() -> int:
    """Measure row 2; print the JSON report."""
    config = bench.FULL
    tools = workload.tools(config.items, config.seed)
    page = workload.page_bytes(tools)
    gc.collect()
    gc.freeze()
    report: dict[str, Any] = {"loadavg_start": list(os.getloadavg())}
    row = bench.measure(
        bench.row_tools_list_bytes(page, config.items, config.rounds), config.rounds
    )
    bench.finish_row_2(row)
    by_name = {c.name: c for c in row.candidates}
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
        "ratios_median": {
            f"{sdk} / {c.name}": round(by_name[sdk].median / c.median, 3)
            for c in row.candidates
            if c.name.startswith("intake_json")
            for sdk in SDK_PARSES
        },
        "ratios_cpu": {
            f"{sdk} / {c.name}": round(by_name[sdk].cpu_median / c.cpu_median, 3)
            for c in row.candidates
            if c.name.startswith("intake_json")
            for sdk in SDK_PARSES
        },
        "extra": row.extra,
        "met": row.met,
    }
    report["loadavg_end"] = list(os.getloadavg())
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
