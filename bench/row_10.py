"""Row 10 of the benchmark alone, with `run.py`'s method and full sizes, and its instruction counts.

`.venv/bin/python bench/row_10.py [--version V ...]` prints JSON: per spec version, the generated
`Tool.model_validate` against `mcp_types.Tool.model_validate` on the real corpus tools both accept
(median / min wall and median CPU µs per tool, the ratios; at 2026-07-28 also the memory 10,000
models of each retain). It writes nothing: `make bench` stays the record.

`--instructions` also counts the CPU instructions each candidate executes per tool under valgrind
(callgrind, one child process: `bench/callgrind_segments.py`), `--repeats` passes over the tools
after one warm-up pass. Unlike time, the count does not move with the load of a shared machine
(about a minute). `bench/profile_models.py` breaks the count down (what each exactness costs).
"""

from __future__ import annotations

import argparse
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


def _child(versions: list[str], repeats: int) -> None:
    """The callgrind child: per version, the generated model's passes, then the peer's."""
    import mcp_types
    from conduit_mcp_wire import module_for

    from bench.callgrind_segments import mark

    work = []
    for version in versions:
        tools = bench.generated_tool_inputs(version)
        work.append((module_for(version).Tool.model_validate, tools))
        work.append((mcp_types.Tool.model_validate, tools))
    for validate, tools in work:  # warm-up: every validator built, every cache touched
        for tool in tools:
            validate(tool)
    gc.collect()  # as the timed rows: the collector off (it would run in any segment)
    gc.disable()
    mark()
    for validate, tools in work:
        for _ in range(repeats):  # as the timed row: every model kept until the pass ends
            built = [validate(tool) for tool in tools]
            del built
        mark()


def instructions(versions: list[str], repeats: int) -> dict[str, dict[str, int]]:
    """Per version, the instructions per tool of `ours` and `peer` (callgrind)."""
    from bench.callgrind_segments import count

    labels = [f"{version} {who}" for version in versions for who in ("ours", "peer")]
    script = [sys.executable, __file__, "--child", str(repeats), *versions]
    counts = count(script, labels)
    out: dict[str, dict[str, int]] = {}
    for version in versions:
        items = repeats * len(bench.generated_tool_inputs(version))
        out[version] = {who: counts[f"{version} {who}"] // items for who in ("ours", "peer")}
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure row 10 (and, on request, its instruction counts); print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", help="a spec version (default: all)")
    parser.add_argument("--instructions", action="store_true", help="count under valgrind too")
    parser.add_argument("--repeats", type=int, default=3, help="passes counted per candidate")
    parser.add_argument("--rounds", type=int, default=bench.FULL.rounds)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[1:], int(args.child[0]))
        return 0
    versions = args.version or list(bench.GENERATED_VERSIONS)
    report: dict[str, Any] = {"loadavg_start": list(os.getloadavg())}
    for version in versions:
        row = bench.row_generated_tool(
            version,
            bench.generated_tool_inputs(version),
            memory=version == bench.GENERATED_VERSION,
        )
        bench.measure(row, args.rounds)
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
        counts = instructions(versions, args.repeats)
        report["instructions_per_tool"] = counts
        report["instructions_ratio"] = {
            version: round(c["peer"] / c["ours"], 3) for version, c in counts.items()
        }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
