"""Row 10 of the benchmark alone, with `run.py`'s method and full sizes, and its instruction count.

`.venv/bin/python bench/row_10.py` prints JSON: the generated `v2026_07_28.Tool.model_validate`
against `mcp_types.Tool.model_validate` on the 1,000 workload tools (median / min wall and median
CPU µs per tool, the ratios, the memory 10,000 models of each retain). It writes nothing: `make
bench` stays the record.

`--instructions` also counts the CPU instructions each candidate executes per tool under
valgrind (`cachegrind`, no cache simulation): a child process reads the tools `--repeats` times
and once with none, and the difference is divided by the tools read. Unlike time, the count
does not move with the load of a shared machine (it takes about a minute per child).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as bench  # noqa: E402
from bench import workload  # noqa: E402

CANDIDATES = ("ours", "peer")


def _validator(candidate: str) -> Any:
    import mcp_types
    from conduit_mcp_wire import module_for

    if candidate == "ours":
        return module_for(bench.GENERATED_VERSION).Tool.model_validate
    return mcp_types.Tool.model_validate


def _read(candidate: str, repeats: int) -> None:
    """The valgrind child: build both validators (one warm pass), then `repeats` passes."""
    tools = workload.tools(bench.FULL.items, bench.FULL.seed)
    validate = _validator(candidate)
    for tool in tools:
        validate(tool)
    for _ in range(repeats):
        for tool in tools:
            validate(tool)


def _instructions(candidate: str, repeats: int) -> int:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind on PATH")
    command = [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    script = [sys.executable, __file__, "--child", candidate]
    counts = []
    for passes in (0, repeats):
        done = subprocess.run(
            [*command, *script, str(passes)], capture_output=True, text=True, check=True
        )
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) // (repeats * bench.FULL.items)


def main(argv: list[str] | None = None) -> int:
    """Measure row 10 (and, on request, its instruction counts); print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", action="store_true", help="count under valgrind too")
    parser.add_argument("--repeats", type=int, default=3, help="passes counted per child")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _read(args.child[0], int(args.child[1]))
        return 0
    report: dict[str, Any] = {"loadavg_start": list(os.getloadavg())}
    row = bench.measure(bench.row_generated_tool(workload.tools(bench.FULL.items)), 11)
    bench.finish_row_10(row)
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
        "extra": row.extra,
        "met": row.met,
    }
    report["loadavg_end"] = list(os.getloadavg())
    if args.instructions:
        counts = {c: _instructions(c, args.repeats) for c in CANDIDATES}
        report["instructions_per_tool"] = counts
        report["instructions_ratio"] = counts["peer"] / counts["ours"]
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
