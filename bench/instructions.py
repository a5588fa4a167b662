"""Instructions per item (valgrind callgrind), before and after: figures no other job can move.

`.venv/bin/python bench/instructions.py REV` extracts `src/conduit_mcp` at git revision REV (as
`bench/before_after.py` does) and counts, under `valgrind --tool=callgrind`, the instructions
one item costs through each package: row 2 "every tool new" (`intake_json` of 1,000-tool pages
whose every tool is new, schemas seen; per tool, the parse included) and row 6 cold
(`validate_structured` on the first call for each of the 38 distinct output schemas, per call),
beside jsonschema-rs compile + `is_valid` on the same schemas. Each figure is the difference of
two runs (N items and none, everything else equal: imports, workload, warm-up), divided by N.
Instructions are not time: a cache miss costs hundreds of cycles and no instructions, which is
where a cold call spends much of its time; but on a machine shared with other jobs, they are the
one before/after comparison that does not move with the load. Takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PAGES = 3  # row 2: pages of 1,000 new tools counted
ROUNDS = 8  # row 6: rounds of 38 fresh schemas counted


def _child(package: str, what: str, count: int) -> None:
    """The measured program: warm up, then `count` units of `what` through `package`."""
    import importlib

    import orjson

    from bench import run as bench
    from bench import workload

    client = importlib.import_module(f"{package}.client")
    if what == "row2":
        tools = workload.tools(bench.FULL.items, bench.FULL.seed)
        pages = [
            orjson.dumps({"tools": [{**t, "x-bench-round": r} for t in tools]})
            for r in range(PAGES + 1)
        ]
        for page in pages[: 1 + count]:  # the first page: the warm-up (schemas seen)
            client.intake_json(
                bench.SERVER_ID, page, transport="streamable-http", protocol_version="2026-07-28"
            )
        return
    import jsonschema_rs

    pairs = workload.structured_pairs(bench.FULL.pairs, bench.FULL.seed)
    firsts: dict[bytes, workload.Pair] = {}
    for p in pairs:
        firsts.setdefault(orjson.dumps(p.schema, option=orjson.OPT_SORT_KEYS), p)
    prepared = []
    for r in range(ROUNDS):
        fresh = [bench._with_comment(p, f"instructions {r}") for p in firsts.values()]
        prepared.append(
            [
                (
                    client.Tool.from_wire(bench.SERVER_ID, p.tool),
                    client.ToolResult.from_wire(p.result),
                )
                for p in fresh
            ]
        )
    warm = bench._with_comment(next(iter(firsts.values())), "warm-up")
    tool, result = client.Tool.from_wire("s", warm.tool), client.ToolResult.from_wire(warm.result)
    client.validate_structured(result, tool, protocol_version=bench.VALIDATION_VERSION)
    jsonschema_rs.validator_for(warm.schema).is_valid(warm.instance)
    for batch in prepared[:count]:
        for tool, result in batch:
            if what == "row6":
                client.validate_structured(result, tool, protocol_version=bench.VALIDATION_VERSION)
            else:  # "row6-peer"
                jsonschema_rs.validator_for(tool.raw["outputSchema"]).is_valid(result.structured)


def _instructions(path: str, package: str, what: str, count: int) -> int:
    with tempfile.NamedTemporaryFile() as out:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out.name}",
                sys.executable,
                __file__,
                "--child",
                path,
                package,
                what,
                str(count),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    """Count both packages; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?")
    parser.add_argument("--child", nargs=4, metavar=("PATH", "PACKAGE", "WHAT", "COUNT"))
    args = parser.parse_args(argv)
    if args.child:
        path, package, what, count = args.child
        sys.path.insert(0, path)
        _child(package, what, int(count))
        return 0
    from bench.before_after import _before

    report: dict[str, object] = {"rev": args.rev}
    with tempfile.TemporaryDirectory() as tmp:
        _before(args.rev, Path(tmp))
        for name, path, package in (
            ("before", tmp, "conduit_mcp_before"),
            ("after", str(ROOT / "src"), "conduit_mcp"),
        ):
            for what, count, items in (
                ("row2", PAGES, PAGES * 1000),
                ("row6", ROUNDS, ROUNDS * 38),
            ):
                base = _instructions(path, package, what, 0)
                full = _instructions(path, package, what, count)
                report[f"{what} {name}"] = round((full - base) / items)
        base = _instructions(str(ROOT / "src"), "conduit_mcp", "row6-peer", 0)
        full = _instructions(str(ROOT / "src"), "conduit_mcp", "row6-peer", ROUNDS)
        report["row6 jsonschema-rs compile + is_valid"] = round((full - base) / (ROUNDS * 38))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
