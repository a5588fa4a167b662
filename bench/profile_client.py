"""cProfile of two client paths the benchmark times: row 2 "every tool new" and row 6 cold.

`.venv/bin/python bench/profile_client.py row2|row6cold [--top N] [--output FILE]` prints (or
writes) the top entries by internal time, with the command, the load average and the wall /
CPU time of the profiled run. Profiles, not timings: cProfile adds a fixed cost per Python call,
so Python-heavy paths look heavier than they are; the figures that count are `make bench`'s.

- `row2`: `intake_json` of the bench's 1,000-tool page (bench/workload.py), each tool with a
  member that is new on every page (so its bytes and fingerprint are new; its schemas were
  seen), the way row 2's "every tool new" candidate does it; 5 pages after one warm-up page.
- `row2parts`: not a profile: each step of a new tool's intake timed alone (CPU µs per tool).
- `row6cold`: `validate_structured` on the first call for each of the 38 distinct output
  schemas of row 6 (each round gives every schema a fresh `$comment`: a cache miss), 40 rounds.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench import run as bench  # noqa: E402
from bench import workload  # noqa: E402
from conduit_mcp.client import Tool, ToolResult, intake_json, validate_structured  # noqa: E402


def _row2() -> Callable[[], object]:
    tools = workload.tools(bench.FULL.items, bench.FULL.seed)
    pages = [
        orjson.dumps({"tools": [{**t, "x-profile-round": r} for t in tools]}) for r in range(6)
    ]

    def intake(data: bytes) -> object:
        return intake_json(
            bench.SERVER_ID, data, transport="streamable-http", protocol_version="2026-07-28"
        )

    intake(pages[0])  # schemas seen, as in the bench's warm-up

    def go() -> object:
        return [intake(p) for p in pages[1:]]

    return go


def _row6cold() -> Callable[[], object]:
    pairs = workload.structured_pairs(bench.FULL.pairs, bench.FULL.seed)
    firsts: dict[bytes, workload.Pair] = {}
    for p in pairs:
        firsts.setdefault(orjson.dumps(p.schema, option=orjson.OPT_SORT_KEYS), p)
    prepared = []
    for r in range(40):
        fresh = [bench._with_comment(p, f"profile round {r}") for p in firsts.values()]
        prepared.append(
            [
                (Tool.from_wire(bench.SERVER_ID, p.tool), ToolResult.from_wire(p.result))
                for p in fresh
            ]
        )
    version = bench.VALIDATION_VERSION

    def go() -> object:
        return [
            validate_structured(result, tool, protocol_version=version)
            for batch in prepared
            for tool, result in batch
        ]

    return go


def _steps(page: bytes, exact: int, sorted_keys: int) -> dict[str, Callable[[], object]]:
    """The steps `_row2_parts` times, each over every tool of `page`."""
    from conduit_mcp.client import _fingerprint, _intake_tool, _jcs, _model_view, _validate

    raws = orjson.loads(page)["tools"]
    datas = [orjson.dumps(t, option=exact) for t in raws]
    sorted_bytes = [orjson.dumps(t, option=sorted_keys) for t in raws]
    canonicals = [_jcs.canonical_json(t) for t in raws]
    table, delete = _jcs._SCAN_TABLE, _jcs._SCAN_DELETE
    return {
        "orjson.loads of the page (per tool)": lambda: orjson.loads(page),
        "exact bytes (the tool memo's key)": lambda: [orjson.dumps(t, option=exact) for t in raws],
        "sorted bytes (orjson, RFC 8785's order)": lambda: [
            orjson.dumps(t, option=sorted_keys) for t in raws
        ],
        "float / astral scan of the sorted bytes": lambda: [
            _jcs._find_float_or_null(b.translate(table, delete)) for b in sorted_bytes
        ],
        "SHA-256 + hex (fingerprint_of)": lambda: [
            _fingerprint.fingerprint_of(c) for c in canonicals
        ],
        "hidden-text prefilter (maybe_hidden_json)": lambda: [
            _model_view.maybe_hidden_json(d) for d in datas
        ],
        "schema_warnings (meta verdicts, all cached)": lambda: [
            _validate.schema_warnings(t, "2026-07-28") for t in raws
        ],
        "the schema's bytes alone (its verdict's key)": lambda: [
            orjson.dumps(t["inputSchema"]) for t in raws
        ],
        "_check (all of a new tool's checks)": lambda: [
            _intake_tool._check(t, d, "2026-07-28", False) for t, d in zip(raws, datas, strict=True)
        ],
    }


def _row2_parts(rounds: int) -> str:
    """CPU µs per tool of each step intake takes for a tool not seen before, each timed alone.

    Over the same 1,000 tools as `row2` (each with a member new on every page, schemas seen),
    fastest and median of `rounds` rounds (this thread's CPU time, GC frozen and off). The
    steps overlap nothing: their sum is the per-tool work apart from the page's parse and loop.
    """
    from conduit_mcp.client import _intake_tool, _jcs

    tools = workload.tools(bench.FULL.items, bench.FULL.seed)
    pages = [
        orjson.dumps({"tools": [{**t, "x-profile-round": r} for t in tools]})
        for r in range(rounds + 1)
    ]
    intake_json(bench.SERVER_ID, pages[0], transport="stdio", protocol_version="2026-07-28")
    exact = _intake_tool._EXACT
    sorted_keys = _jcs._ORJSON_OPTIONS
    found: dict[str, list[float]] = {}
    for r in range(1, rounds + 1):
        steps = _steps(pages[r], exact, sorted_keys)
        for name, step in steps.items():
            gc.collect()
            gc.disable()
            cpu = time.thread_time_ns()
            step()
            cpu = time.thread_time_ns() - cpu
            gc.enable()
            found.setdefault(name, []).append(cpu / 1000 / len(tools))
    width = max(len(name) for name in found)
    lines = [f"{'step':{width}}  fastest  median  (CPU µs per tool)"]
    for name, values in found.items():
        values.sort()
        lines.append(f"{name:{width}}  {values[0]:7.2f}  {values[len(values) // 2]:6.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Profile one path; print or write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", choices=("row2", "row6cold", "row2parts"))
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.path == "row2parts":
        load = os.getloadavg()
        body = _row2_parts(11)
        report = (
            "# .venv/bin/python bench/profile_client.py row2parts\n"
            f"# load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; 11 rounds\n"
            + body
            + "\n"
        )
        if args.output is None:
            print(report, end="")
        else:
            args.output.write_text(report, encoding="utf-8")
        return 0
    go = _row2() if args.path == "row2" else _row6cold()
    gc.collect()
    gc.freeze()
    load = os.getloadavg()
    profile = cProfile.Profile()
    wall, cpu = time.perf_counter(), time.thread_time()
    profile.enable()
    go()
    profile.disable()
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.strip_dirs().sort_stats("tottime").print_stats(args.top)
    head = (
        f"# .venv/bin/python bench/profile_client.py {args.path} --top {args.top}\n"
        f"# load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"profiled run: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (with cProfile)\n"
    )
    body = "\n".join(line.rstrip() for line in text.getvalue().strip().splitlines())
    report = head + body + "\n"
    if args.output is None:
        print(report, end="")
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
