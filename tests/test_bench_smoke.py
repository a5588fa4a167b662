"""The benchmark script (bench/) keeps working: builders and one tiny, untimed round of every row.

Nothing here asserts a speed; `make bench` is the benchmark.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

from conduit_mcp_wire import VERSIONS

from bench import run, workload

ROOT = Path(__file__).resolve().parent.parent


def test_workload_builders_are_deterministic_for_a_seed() -> None:
    """conduit-defined: the same seed gives the same objects and the same page bytes."""
    assert workload.tools(25) == workload.tools(25)
    assert workload.tools_page(7) == workload.tools_page(7)
    assert workload.results(9) == workload.results(9)
    assert workload.tools(25, seed=1) != workload.tools(25, seed=2)


def test_tool_variants_have_unique_names_and_keep_the_spec_charset() -> None:
    """conduit-defined: variants differ (so fingerprints differ) and stay valid tool names."""
    tools = workload.tools(2500)  # more than the corpus holds: it cycles
    names = [t["name"] for t in tools]
    assert len(set(names)) == len(names)
    assert all(name.rsplit("_v", 1)[1].isdigit() for name in names)
    assert json.loads(workload.tools_page(3)) == {"tools": workload.tools(3)}


def test_structured_pairs_hold_a_schema_and_an_instance() -> None:
    """conduit-defined: every pair has an object outputSchema and a structuredContent."""
    pairs = workload.structured_pairs(40)
    assert len(pairs) == 40
    assert all(isinstance(p.schema, dict) and "structuredContent" in p.result for p in pairs)
    summary = workload.pool_summary()
    assert summary["pairs_corpus"] > 0 and summary["pairs_spec_example"] == 2
    assert summary["pairs_synthetic"] > 0


def test_one_tiny_round_of_every_row_runs_and_serializes() -> None:
    """conduit-defined: the whole script runs on tiny sizes (no subprocesses) and its report is
    JSON with every row, a ratio where there is a peer, and the row-2 fingerprint check."""
    config = run.Config(
        quick=True,
        rounds=1,
        items=6,
        pairs=3,
        scale=(4, 8),
        generate=False,
        import_repeats=0,
    )
    report = run.run(config, log=lambda _line: None)
    assert "loaded" in report["machine"] and "loadavg_end" in report["machine"]
    assert all("met_if_quiet" in row for row in report["rows"])
    assert [row["id"] for row in report["rows"]] == [
        "1-tool-from-wire",
        "2-tools-list-bytes",
        "3-tool-result-from-wire",
        "4-conformance-results",
        "4-conformance-tools",
        "5-fingerprint",
        "6-validate-structured",
        "7-shape-for-llm",
        *(f"10-generated-tool-{version}" for version in run.GENERATED_VERSIONS),
    ]
    assert run.GENERATED_VERSIONS == VERSIONS  # issue 33: one row-10 line per spec version
    for row in report["rows"]:
        assert all(c["median_us"] > 0 for c in row["candidates"])
        assert (row["ratio"] is None) == (row["id"] == "7-shape-for-llm")
    assert report["scale"]["sizes"] == [4, 8]
    json.dumps(report)


def test_a_loaded_machine_never_calls_a_row_met() -> None:
    """conduit-defined (bench method): a target reached under load is shown `loaded` and written
    `null`; a missed one stays a miss; `--force` judges anyway."""
    assert run._met(True, loaded=True) == "loaded"
    assert run._met(False, loaded=True) == "NO"
    assert run._met(True, loaded=False) == "yes"
    assert run.claim(True, loaded=True) is None
    assert run.claim(False, loaded=True) is False
    assert run.claim(True, loaded=False) is True


def test_a_run_writes_outside_the_tracked_tree_by_default() -> None:
    """conduit-defined (bench method): the default output is under .cache/ (ignored by git);
    the committed reference is written only on request."""
    assert run.RESULTS_FILE.is_relative_to(run.ROOT / ".cache")
    assert run.REFERENCE_FILE == run.ROOT / "bench" / "results.json"


def test_side_rows_are_collected_and_judged_like_the_main_rows(monkeypatch: Any) -> None:
    """conduit-defined (bench method): `make bench` adds each side-row module's `rows(quick)`
    in order; a target reached under load is written `null`, as for the main rows."""
    side = types.ModuleType("bench.side_for_test")
    side.rows = lambda quick: [{"id": "S1", "met": True, "quick": quick}]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.side_for_test", side)
    monkeypatch.setattr(run, "SIDE_ROWS", ("side_for_test",))
    rows = run.side_rows(True, loaded=True, log=lambda _line: None)
    assert rows == [{"id": "S1", "met": None, "met_if_quiet": True, "quick": True}]
    assert run.side_rows(False, loaded=False, log=lambda _line: None)[0]["met"] is True


def test_every_side_row_module_exposes_rows() -> None:
    """conduit-defined: each module `make bench` names gives its rows through `rows(quick)`."""
    for name in run.SIDE_ROWS:
        assert callable(importlib.import_module(f"bench.{name}").rows)


def test_policy_rows_run_once() -> None:
    """conduit-defined: bench/policy.py's rows run (one tiny round; no speed asserted), and
    its policy of 100 rules is one the policy room accepts, every rule applying in its second
    form."""
    from bench import policy as bench_policy
    from conduit_mcp.policy import Caller, Policy

    assert len(Policy.parse(bench_policy.hundred_rules()).rules) == 100
    every = Policy.parse(bench_policy.hundred_rules("everyone"))
    assert len(every.view(Caller("x", frozenset({"everyone"}))).rules) == 100
    # In a fresh interpreter: each timed round starts with `gc.collect()`, which in an xdist
    # worker holding thousands of tests' objects cost ~1 s a time (43 s for the test; 4 s alone).
    done = subprocess.run(
        [sys.executable, "-m", "bench.policy", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["id"] for row in rows] == [
        "I1",
        "I1b",
        "I1c",
        "I1",
        "I1b",
        "I1c",
        "I3",
        "I3b",
        "I3",
        "I3b",
        "I2",
    ]
