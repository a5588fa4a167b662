"""Rows 2 (every tool new), 4 (tools, results) and 6 cold, before and after, in one process.

`.venv/bin/python bench/before_after.py REV [--rounds N] [--cold-batches N]` extracts
`src/conduit_mcp` at git revision REV into a temporary directory as the package
`conduit_mcp_before`, then times the same workload through both packages with `run.py`'s method
(interleaved rounds, the starting candidate rotating, GC frozen and off, CPU beside wall), beside
the rows' peers, and prints JSON: per row and candidate the median wall and CPU µs per item, and
the peer's ratios to each. Row 6 cold runs `run.cold_validation` once per package per batch,
alternating which goes first, each batch on schemas no package saw before. A probe for
comparing a change on a loaded machine, where only figures taken side by side mean anything;
`make bench` stays the record.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mcp_types  # noqa: E402

from bench import run as bench  # noqa: E402
from bench import workload  # noqa: E402


def _before(rev: str, into: Path) -> ModuleType:
    """`conduit_mcp.client` as it was at `rev`, importable as `conduit_mcp_before.client`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src/conduit_mcp"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "conduit_mcp_before"
    (into / "src" / "conduit_mcp").rename(package)
    (package / "_schema").symlink_to(ROOT / "schema")  # the vendored schemas, for conformance
    sys.path.insert(0, str(into))
    return importlib.import_module("conduit_mcp_before.client")


def _summary(row: bench.Row) -> dict[str, Any]:
    peer = row.role("peer")
    assert peer is not None
    out: dict[str, Any] = {}
    for c in row.candidates:
        out[c.name] = {
            "median_us": round(c.median, 3),
            "cpu_median_us": round(c.cpu_median, 3),
            "min_us": round(c.min, 3),
        }
        if c.role in ("ours", "info") and c is not peer:
            out[c.name]["peer_ratio"] = round(peer.median / c.median, 3)
            out[c.name]["peer_ratio_cpu"] = round(peer.cpu_median / c.cpu_median, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    """Time both packages side by side; print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the git revision to compare against (e.g. main)")
    parser.add_argument("--rounds", type=int, default=bench.FULL.rounds)
    parser.add_argument("--cold-batches", type=int, default=4)
    args = parser.parse_args(argv)
    import conduit_mcp.client as after

    with tempfile.TemporaryDirectory() as tmp:
        before = _before(args.rev, Path(tmp))
        packages = {"before": before, "after": after}
        config = bench.FULL
        tools = workload.tools(config.items, config.seed)
        results = workload.results(config.items, config.seed)
        pairs = workload.structured_pairs(config.pairs, config.seed)
        pages = [
            orjson.dumps({"tools": [{**t, "x-bench-round": r} for t in tools]})
            for r in range(2 * args.rounds + 4)
        ]
        turn = {name: 0 for name in packages}

        def fresh_intake(name: str) -> object:
            turn[name] += 1
            return packages[name].intake_json(
                bench.SERVER_ID,
                pages[turn[name] % len(pages)],
                transport="streamable-http",
                protocol_version="2026-07-28",
            )

        gc.collect()
        gc.freeze()
        report: dict[str, Any] = {"rev": args.rev, "loadavg_start": list(os.getloadavg())}
        row2 = bench.Row(
            "2-every-tool-new",
            "intake_json of a page of tools never seen (schemas seen)",
            len(tools),
            [
                bench.Candidate(
                    f"intake_json {name}", "ours" if name == "after" else "info", fresh_intake_of
                )
                for name, fresh_intake_of in (
                    ("before", lambda: fresh_intake("before")),
                    ("after", lambda: fresh_intake("after")),
                )
            ]
            + [
                bench.Candidate(
                    "json.loads + ListToolsResult.model_validate",
                    "peer",
                    lambda: mcp_types.ListToolsResult.model_validate(json.loads(pages[0])),
                ),
                bench.Candidate("orjson.loads", "floor", lambda: orjson.loads(pages[0])),
            ],
            "report",
        )
        bench.measure(row2, args.rounds)
        report[row2.id] = _summary(row2)
        for kind, items, peer in (
            ("tool", tools, mcp_types.Tool),
            ("result", results, mcp_types.CallToolResult),
        ):
            version = bench.CONFORMANCE_VERSION
            row4 = bench.Row(
                f"4-conformance-{kind}s",
                f"strict conformance, {kind}s ({version})",
                len(items),
                [
                    bench.Candidate(
                        f"conformance_violations {name}",
                        "ours" if name == "after" else "info",
                        lambda check=package.conformance_violations, k=kind, xs=items, v=version: [
                            check(x, kind=k, protocol_version=v) for x in xs
                        ],
                    )
                    for name, package in packages.items()
                ]
                + [
                    bench.Candidate(
                        "jsonschema-rs is_valid alone (the engine, no wrapper)",
                        "info",
                        lambda k=kind, xs=items, v=version: _bare(after, k, v, xs),
                    ),
                    bench.Candidate(
                        f"mcp_types.{peer.__name__}.model_validate",
                        "peer",
                        lambda model=peer, xs=items: [model.model_validate(x) for x in xs],
                    ),
                ],
                "report",
            )
            bench.measure(row4, args.rounds)
            report[row4.id] = _summary(row4)
        report["6-cold"] = _cold(packages, pairs, args.cold_batches)
        report["loadavg_end"] = list(os.getloadavg())
    print(json.dumps(report, indent=1))
    return 0


def _bare(package: ModuleType, kind: str, version: str, items: list[Any]) -> list[bool]:
    """The compiled conformance validator's `is_valid` over `items`, called directly."""
    package.conformance_violations(items[0], kind=kind, protocol_version=version)  # compiled
    validator = importlib.import_module(package.__name__ + "._conformance")._validators[
        (version, kind)
    ]
    is_valid = validator.is_valid
    return [is_valid(x) for x in items]


def _cold(
    packages: dict[str, ModuleType], pairs: list[workload.Pair], batches: int
) -> dict[str, Any]:
    """`run.cold_validation` per package, alternating, each batch on never-seen schemas."""
    original = bench._with_comment
    saved = bench.validate_structured, bench.Tool, bench.ToolResult
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in packages}
    salt = [0]

    def salted(pair: workload.Pair, comment: str) -> workload.Pair:
        return original(pair, f"{comment} (batch {salt[0]})")

    bench._with_comment = salted
    try:
        names = list(packages)
        for batch in range(batches):
            for name in names if batch % 2 == 0 else reversed(names):
                salt[0] += 1
                package = packages[name]
                bench.validate_structured = package.validate_structured
                bench.Tool, bench.ToolResult = package.Tool, package.ToolResult
                found[name].append(bench.cold_validation(pairs, 3))
    finally:
        bench._with_comment = original
        bench.validate_structured, bench.Tool, bench.ToolResult = saved
    out: dict[str, Any] = {}
    for name, runs in found.items():
        ours = statistics.median(r["cold_median_us"] for r in runs)
        peer = statistics.median(r["jsonschema_rs_cold_median_us"] for r in runs)
        ours_cpu = statistics.median(r["cold_cpu_median_us"] for r in runs)
        peer_cpu = statistics.median(r["jsonschema_rs_cold_cpu_median_us"] for r in runs)
        out[name] = {
            "cold_median_us": round(ours, 1),
            "cold_cpu_median_us": round(ours_cpu, 1),
            "jsonschema_rs_cold_median_us": round(peer, 1),
            "jsonschema_rs_cold_cpu_median_us": round(peer_cpu, 1),
            "ratio_to_jsonschema_rs": round(ours / peer, 2),
            "ratio_to_jsonschema_rs_cpu": round(ours_cpu / peer_cpu, 2),
            "per_batch_ratio": [
                round(r["cold_median_us"] / r["jsonschema_rs_cold_median_us"], 2) for r in runs
            ],
        }
    return out


if __name__ == "__main__":
    raise SystemExit(main())
