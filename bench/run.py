"""Side-by-side benchmark of conduit-mcp against its peers (`make bench`; issue 5).

One process; candidates of a row interleaved round by round (the starting candidate rotates),
`gc.collect()` before and the collector disabled during each timed batch, `perf_counter_ns` (wall)
and `thread_time_ns` (this thread's CPU, less disturbed by other processes on a shared machine).
Each candidate runs over the whole workload per round; a figure is µs per item. The table gives
median and min over rounds and ratio = peer median / ours median (> 1: we are faster), then
writes the same to `bench/results.json`. Peak memory is measured with `tracemalloc` in a separate,
untimed pass. The machine is shared and noisy: ratios within one run are the figures that count.

A row is called met only on a quiet machine: when the 1-minute load average, at the start or
the end of the run, is above `LOAD_LIMIT` (1.5), a row that reached its target shows `loaded`
instead of `yes` (and `met` is `null` in the JSON, with `met_if_quiet`), unless `--force`.

Usage:
    python bench/run.py                 # full run (~2 minutes on 2 cores), writes .cache/bench/
    python bench/run.py --reference     # the same, and writes the committed bench/results.json
    python bench/run.py --quick         # smoke run: small sizes, 2 rounds, no codegen timing
    python bench/run.py --rounds 9 --output /tmp/results.json
    python bench/run.py --no-proxy      # without the side rows (the proxies, in subprocesses)

Side rows: each module named in `SIDE_ROWS` (bench/proxy.py: the stdio proxy;
bench/proxy_start.py: the proxy's start and `--help`'s CPU; bench/proxy_http.py: the HTTP proxy;
bench/peers.py: the proxy against its peers on three paths, the peers installed under
.cache/bench-peers/ on first use; bench/policy.py: tool-policy decisions and a policy's spread
through a store) measures processes of its own and exposes
`rows(quick) -> list[dict]`; after the main rows, `main` adds what each returns to the report
under `side_rows` (a reached target under load written `met: null`, as above; a module that
judged its own load keeps its `met_if_quiet`) and prints it.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jsonschema  # noqa: E402
import jsonschema_rs  # noqa: E402
import mcp_types  # noqa: E402
import orjson  # noqa: E402
import pydantic  # noqa: E402
import rfc8785  # noqa: E402
from conduit_mcp_wire import VERSIONS, module_for  # noqa: E402
from jsonschema import validators as js_validators  # noqa: E402

from bench import workload  # noqa: E402
from conduit_mcp.client import (  # noqa: E402
    Intake,
    Tool,
    ToolResult,
    conformance_violations,
    fingerprint,
    intake,
    intake_json,
    validate_structured,
)
from conduit_mcp.llm import shape_for_llm  # noqa: E402

#: Where a run writes its JSON: outside the tracked tree, so a run never dirties the checkout.
RESULTS_FILE = ROOT / ".cache" / "bench" / "results.json"
#: The committed reference result, rewritten only on purpose (`make bench-reference`).
REFERENCE_FILE = ROOT / "bench" / "results.json"
#: Modules of bench/ whose `rows(quick)` give the side rows (see the module docstring).
SIDE_ROWS: tuple[str, ...] = ("proxy", "proxy_start", "proxy_http", "peers", "policy")
#: Above this 1-minute load average a row is not called met (the figures are not trustworthy).
LOAD_LIMIT = 1.5
SERVER_ID = "bench"
#: The version results and tools are checked against in row 4: most captures were made under it.
CONFORMANCE_VERSION = "2025-11-25"
#: The version of row 6: structuredContent may be any JSON value (the array spec example).
VALIDATION_VERSION = "2026-07-28"
PACKAGES = (
    "conduit-mcp",
    "pydantic",
    "pydantic-core",
    "mcp-types",
    "rfc8785",
    "jsonschema",
    "jsonschema-rs",
    "referencing",
    "orjson",
    "datamodel-code-generator",
)


@dataclass(frozen=True)
class Config:
    """Sizes and rounds of one run."""

    quick: bool
    rounds: int
    items: int  # rows 1-5, 7
    pairs: int  # row 6 (jsonschema.validate is ~1,000x slower than the rest)
    scale: tuple[int, int]  # row 9
    seed: int = workload.SEED
    generate: bool = True  # row 8: time `codegen/generate.py --check` (~10-20 s)
    import_repeats: int = 5  # row 8: fresh processes timing the import (0: skip)


FULL = Config(quick=False, rounds=11, items=1000, pairs=200, scale=(1000, 10000))
QUICK = Config(quick=True, rounds=2, items=100, pairs=20, scale=(100, 1000), generate=False)


@dataclass
class Candidate:
    """One contender of a row: `fn` runs the row's whole workload once and returns its output."""

    name: str
    role: str  # "ours", "peer", "floor" (a lower bound) or "info" (shown, not compared)
    fn: Callable[[], object]
    times_us: list[float] = field(default_factory=list)  # wall µs per item, one per round
    cpu_us: list[float] = field(default_factory=list)  # this thread's CPU µs per item, per round

    @property
    def median(self) -> float:
        """Median µs per item over rounds."""
        return statistics.median(self.times_us)

    @property
    def min(self) -> float:
        """Fastest round, µs per item."""
        return min(self.times_us)

    @property
    def cpu_median(self) -> float:
        """Median CPU µs per item over rounds (less disturbed by other processes than wall)."""
        return statistics.median(self.cpu_us)


@dataclass
class Row:
    """One line of the table."""

    id: str
    title: str
    items: int
    candidates: list[Candidate]
    target: str
    target_ratio: float | None = None  # peer / ours must reach this (None: report only)
    verify: Callable[[dict[str, object]], None] | None = None  # checks each round's outputs
    extra: dict[str, Any] = field(default_factory=dict)
    met: bool | None = None

    def role(self, role: str) -> Candidate | None:
        """The first candidate with this role."""
        return next((c for c in self.candidates if c.role == role), None)

    @property
    def ratio(self) -> float | None:
        """peer median / ours median."""
        ours, peer = self.role("ours"), self.role("peer")
        return peer.median / ours.median if ours and peer else None

    @property
    def ratio_min(self) -> float | None:
        """peer min / ours min."""
        ours, peer = self.role("ours"), self.role("peer")
        return peer.min / ours.min if ours and peer else None

    @property
    def ratio_cpu(self) -> float | None:
        """peer / ours on median CPU time."""
        ours, peer = self.role("ours"), self.role("peer")
        return peer.cpu_median / ours.cpu_median if ours and peer else None


def timed(fn: Callable[[], object]) -> tuple[int, int, object]:
    """Run `fn` once with the collector off: (wall ns, this thread's CPU ns, output)."""
    gc.collect()
    gc.disable()
    try:
        cpu = time.thread_time_ns()
        start = time.perf_counter_ns()
        out = fn()
        elapsed = time.perf_counter_ns() - start
        cpu = time.thread_time_ns() - cpu
    finally:
        gc.enable()
    return elapsed, cpu, out


def measure(row: Row, rounds: int) -> Row:
    """Warm every candidate once, then time `rounds` interleaved rounds (A B C, B C A, ...)."""
    outputs: dict[str, object] = {c.name: c.fn() for c in row.candidates}
    if row.verify is not None:
        row.verify(outputs)
    count = len(row.candidates)
    for r in range(rounds):
        outputs = {}
        for i in range(count):
            candidate = row.candidates[(r + i) % count]
            elapsed, cpu, outputs[candidate.name] = timed(candidate.fn)
            candidate.times_us.append(elapsed / 1000 / row.items)
            candidate.cpu_us.append(cpu / 1000 / row.items)
        if row.verify is not None:
            row.verify(outputs)
    if row.target_ratio is not None and row.ratio is not None:
        row.met = row.ratio >= row.target_ratio
    return row


# -- rows --------------------------------------------------------------------------------------


def row_tool_from_wire(tools: list[dict[str, Any]]) -> Row:
    """1. `Tool.from_wire` over dicts vs `mcp_types.Tool.model_validate`."""
    from_wire, validate = Tool.from_wire, mcp_types.Tool.model_validate
    return Row(
        "1-tool-from-wire",
        "Tool.from_wire (dicts)",
        len(tools),
        [
            Candidate("Tool.from_wire", "ours", lambda: [from_wire(SERVER_ID, t) for t in tools]),
            Candidate(
                "mcp_types.Tool.model_validate", "peer", lambda: [validate(t) for t in tools]
            ),
        ],
        ">= 2x faster",
        2.0,
    )


def row_tools_list_bytes(page: bytes, n: int, rounds: int) -> Row:
    """2. `intake_json` of a whole page vs json.loads + ListToolsResult; floor orjson.loads.

    `ours` is a re-listing (the same page text again: what a client sees on every
    `tools/list` after the first); two `info` candidates give the other cases: every tool seen
    before but the page text new (one top-level member of the page differs), and every tool
    new (a round-specific member in each tool, so its bytes and fingerprint are new; its
    schemas were seen). Each call of those takes the next of `rounds + 2` prepared pages.
    """
    model = mcp_types.ListToolsResult
    tools = orjson.loads(page)["tools"]
    relisted = [orjson.dumps({"tools": tools, "nextCursor": None, "_r": r}) for r in range(9)]
    fresh = [
        orjson.dumps({"tools": [{**t, "x-bench-round": r} for t in tools]})
        for r in range(rounds + 2)
    ]
    turn = {"relisted": 0, "fresh": 0}

    def next_page(kind: str, pages: list[bytes]) -> bytes:
        turn[kind] += 1
        return pages[turn[kind] % len(pages)]

    def verify(outputs: dict[str, object]) -> None:
        got = outputs["intake_json (re-listing)"]
        assert isinstance(got, Intake)
        accepted = len(got.tools)
        assert accepted + len(got.rejected) == n
        assert all(t.fingerprint for t in got.tools)
        row.extra["accepted"] = accepted
        for name in ("intake_json, tools seen, page text new", "intake_json, every tool new"):
            other = outputs[name]
            assert isinstance(other, Intake) and len(other.tools) == accepted

    def intake_of(data: bytes) -> Intake:
        return intake_json(
            SERVER_ID, data, transport="streamable-http", protocol_version="2026-07-28"
        )

    row = Row(
        "2-tools-list-bytes",
        "tools/list from bytes (intake_json, fingerprints)",
        n,
        [
            Candidate("intake_json (re-listing)", "ours", lambda: intake_of(page)),
            Candidate(
                "json.loads + ListToolsResult.model_validate",
                "peer",
                lambda: model.model_validate(json.loads(page)),
            ),
            Candidate("orjson.loads (parse floor)", "floor", lambda: orjson.loads(page)),
            Candidate(
                "ListToolsResult.model_validate_json",
                "info",
                lambda: model.model_validate_json(page),
            ),
            Candidate(
                "intake_json, tools seen, page text new",
                "info",
                lambda: intake_of(next_page("relisted", relisted)),
            ),
            Candidate(
                "intake_json, every tool new",
                "info",
                lambda: intake_of(next_page("fresh", fresh)),
            ),
        ],
        "faster than peer; <= 3x orjson.loads",
        1.0,
        verify,
        {"page_bytes": len(page)},
    )
    return row


def finish_row_2(row: Row) -> None:
    """Row 2 has two targets: beat the peer, and stay within 3x of the parse floor."""
    ours, floor = row.role("ours"), row.role("floor")
    assert ours is not None and floor is not None
    over_floor = ours.median / floor.median
    row.extra["ours_over_floor"] = over_floor
    row.extra["ours_over_floor_min"] = ours.min / floor.min
    row.extra["met_vs_peer"] = row.ratio is not None and row.ratio > 1.0
    row.extra["met_vs_floor"] = over_floor <= 3.0
    row.met = row.extra["met_vs_peer"] and row.extra["met_vs_floor"]


def row_tool_result(results: list[dict[str, Any]]) -> Row:
    """3. `ToolResult.from_wire` vs `mcp_types.CallToolResult.model_validate`."""
    from_wire, validate = ToolResult.from_wire, mcp_types.CallToolResult.model_validate
    return Row(
        "3-tool-result-from-wire",
        "ToolResult.from_wire",
        len(results),
        [
            Candidate("ToolResult.from_wire", "ours", lambda: [from_wire(r) for r in results]),
            Candidate(
                "mcp_types.CallToolResult.model_validate",
                "peer",
                lambda: [validate(r) for r in results],
            ),
        ],
        ">= 2x faster",
        2.0,
    )


def _strict(model: Any, items: Sequence[Any]) -> list[bool]:
    out = []
    for item in items:
        try:
            model.model_validate(item, strict=True)
            out.append(True)
        except pydantic.ValidationError:
            out.append(False)
    return out


def _oracle_conformant(version: str, definition: str, items: Sequence[Any]) -> list[bool]:
    """jsonschema's verdicts on the definition of the official schema.json (the oracle)."""
    doc = json.loads((ROOT / "schema" / version / "schema.json").read_text(encoding="utf-8"))
    defs = "$defs" if "$defs" in doc else "definitions"
    full = {**doc, "allOf": [{"$ref": f"#/{defs}/{definition}"}]}
    validator = js_validators.validator_for(full)(full)
    return [validator.is_valid(x) for x in items]


def row_conformance(items: list[dict[str, Any]], kind: str) -> Row:
    """4. `conformance_violations` vs mcp-types' own validation of the same objects."""
    definition = "CallToolResult" if kind == "result" else "Tool"
    generated = getattr(module_for(CONFORMANCE_VERSION), definition)
    peer_model = mcp_types.CallToolResult if kind == "result" else mcp_types.Tool
    version = CONFORMANCE_VERSION
    oracle: list[bool] = []

    def ours() -> list[tuple[Any, ...]]:
        return [conformance_violations(x, kind=kind, protocol_version=version) for x in items]  # type: ignore[arg-type]

    def verify(outputs: dict[str, object]) -> None:
        # Exactly JSON Schema's verdicts (issue 13): checked against jsonschema, computed once.
        if not oracle:
            oracle.extend(_oracle_conformant(version, definition, items))
        ours_ok = [not v for v in outputs["conformance_violations"]]  # type: ignore[attr-defined]
        assert ours_ok == oracle, "conformance verdicts differ from jsonschema's"
        row.extra["conformant"] = sum(ours_ok)
        generated_ok: list[bool] = outputs["generated model_validate(strict=True)"]  # type: ignore[assignment]
        row.extra["generated_model_disagreements"] = sum(
            a != b for a, b in zip(ours_ok, generated_ok, strict=True)
        )

    row = Row(
        f"4-conformance-{kind}s",
        f"strict conformance, {kind}s ({CONFORMANCE_VERSION})",
        len(items),
        [
            Candidate("conformance_violations", "ours", ours),
            Candidate(
                f"mcp_types.{peer_model.__name__}.model_validate",
                "peer",
                lambda: [peer_model.model_validate(x) for x in items],
            ),
            Candidate(
                "generated model_validate(strict=True)", "info", lambda: _strict(generated, items)
            ),
        ],
        ">= 3x faster",
        3.0,
        verify,
    )
    return row


def _rfc8785_fingerprint(raw: Any) -> str:
    return "jcs-sha256:" + hashlib.sha256(rfc8785.dumps(raw)).hexdigest()


def row_fingerprint(tools: list[dict[str, Any]]) -> Row:
    """5. `fingerprint` vs `rfc8785.dumps` + `hashlib.sha256`, byte-identical on every item."""

    def verify(outputs: dict[str, object]) -> None:
        ours, peer = outputs["fingerprint"], outputs["rfc8785.dumps + sha256"]
        assert ours == peer, "fingerprint differs from rfc8785 + sha256"

    return Row(
        "5-fingerprint",
        "fingerprint (RFC 8785 + SHA-256)",
        len(tools),
        [
            Candidate("fingerprint", "ours", lambda: [fingerprint(t) for t in tools]),
            Candidate(
                "rfc8785.dumps + sha256", "peer", lambda: [_rfc8785_fingerprint(t) for t in tools]
            ),
        ],
        ">= 10x faster, identical",
        10.0,
        verify,
    )


def _js_validate(pairs: Sequence[workload.Pair]) -> list[bool]:
    out = []
    for pair in pairs:
        try:
            jsonschema.validate(pair.instance, pair.schema)
            out.append(True)
        except jsonschema.ValidationError:
            out.append(False)
    return out


def row_validate(pairs: list[workload.Pair]) -> Row:
    """6. `validate_structured` (warm) vs jsonschema-rs's bare compiled `is_valid` (the cost of
    our layer) and jsonschema's compiled validator; cold cost in `extra`."""
    prepared = [(Tool.from_wire(SERVER_ID, p.tool), ToolResult.from_wire(p.result)) for p in pairs]
    version = VALIDATION_VERSION
    # Both peers compiled once per schema (what a careful caller writes); no retrieval.
    rs: dict[int, Any] = {}
    js: dict[int, Any] = {}
    for p in pairs:
        if id(p.schema) not in rs:
            rs[id(p.schema)] = jsonschema_rs.validator_for(p.schema, validate_formats=False)
            js[id(p.schema)] = js_validators.validator_for(p.schema)(p.schema)

    def ours() -> list[bool]:
        return [validate_structured(r, t, protocol_version=version).valid for t, r in prepared]

    def bare_rs() -> list[bool]:
        return [rs[id(p.schema)].is_valid(p.instance) for p in pairs]

    def compiled_js() -> list[bool]:
        return [js[id(p.schema)].is_valid(p.instance) for p in pairs]

    def verify(outputs: dict[str, object]) -> None:
        assert outputs["validate_structured (warm)"] == outputs["jsonschema, compiled once"]
        assert outputs["validate_structured (warm)"] == outputs["jsonschema-rs is_valid, compiled"]

    row = Row(
        "6-validate-structured",
        "validate_structured, warm cache",
        len(pairs),
        [
            Candidate("validate_structured (warm)", "ours", ours),
            Candidate("jsonschema-rs is_valid, compiled", "peer", bare_rs),
            Candidate("jsonschema, compiled once", "info", compiled_js),
        ],
        "<= 1.5x jsonschema-rs (ratio >= 0.67)",
        1 / 1.5,
        verify,
    )
    return row


def cold_validation(pairs: list[workload.Pair], rounds: int) -> dict[str, Any]:
    """First-call cost (a cache miss) per distinct schema: ours, jsonschema-rs, jsonschema.

    Each round gives every schema a fresh `$comment` (an annotation: the verdict is unchanged),
    so its first call misses our validator cache; this uses only the public API (no cache
    clearing). The peers compile the same schemas from scratch. The three candidates run in
    each of their six orders in turn, one order per schema, so each follows each other one
    equally often: the first to touch a fresh schema pays its cache misses, and the one right
    after jsonschema (which churns through the CPU caches) pays about twice the time; a fixed
    order or a rotation (ours, peer, jsonschema) would charge that to one candidate more often.
    """
    firsts: dict[bytes, workload.Pair] = {}
    for p in pairs:
        firsts.setdefault(orjson.dumps(p.schema, option=orjson.OPT_SORT_KEYS), p)
    chosen = list(firsts.values())
    ours_us: list[float] = []
    rs_us: list[float] = []
    js_us: list[float] = []
    ours_cpu: list[float] = []
    rs_cpu: list[float] = []
    version = VALIDATION_VERSION

    def rs_cold(pair: workload.Pair) -> bool:
        return bool(jsonschema_rs.validator_for(pair.schema).is_valid(pair.instance))

    def js_cold(pair: workload.Pair) -> bool:
        cls = js_validators.validator_for(pair.schema)
        cls.check_schema(pair.schema)
        return bool(cls(pair.schema).is_valid(pair.instance))

    orders = list(itertools.permutations(range(3)))
    turn = 0
    for round_index in range(rounds):
        fresh = [_with_comment(p, f"bench cold round {round_index}") for p in chosen]
        prepared = [
            (Tool.from_wire(SERVER_ID, p.tool), ToolResult.from_wire(p.result)) for p in fresh
        ]
        for (tool, result), pair in zip(prepared, fresh, strict=True):
            candidates = [
                (
                    partial(validate_structured, result, tool, protocol_version=version),
                    ours_us,
                    ours_cpu,
                ),
                (partial(rs_cold, pair), rs_us, rs_cpu),
                (partial(js_cold, pair), js_us, None),
            ]
            for index in orders[turn]:
                fn, walls, cpus = candidates[index]
                ns, cpu, _ = timed(fn)
                walls.append(ns / 1000)
                if cpus is not None:
                    cpus.append(cpu / 1000)
            turn = (turn + 1) % len(orders)
    return {
        "schemas": len(chosen),
        "cold_median_us": statistics.median(ours_us),
        "cold_min_us": min(ours_us),
        "cold_cpu_median_us": statistics.median(ours_cpu),
        "jsonschema_rs_cold_median_us": statistics.median(rs_us),
        "jsonschema_rs_cold_cpu_median_us": statistics.median(rs_cpu),
        "jsonschema_cold_median_us": statistics.median(js_us),
        "cold_met": statistics.median(ours_us) <= 100
        and statistics.median(ours_us) <= 2 * statistics.median(rs_us),
    }


def _with_comment(pair: workload.Pair, comment: str) -> workload.Pair:
    """`pair` with `"$comment": comment` in its outputSchema (a copy; `pair` is unchanged)."""
    tool = {**pair.tool, "outputSchema": {**pair.schema, "$comment": comment}}
    return dataclasses.replace(pair, tool=tool)


def row_shape(results: list[dict[str, Any]]) -> Row:
    """7. `shape_for_llm` per result; µs per KB of content in `extra`."""
    prepared = [ToolResult.from_wire(r) for r in results]
    size = 0
    for r in prepared:
        size += len(json.dumps(r.content, ensure_ascii=False).encode())
        if r.has_structured:
            size += len(json.dumps(r.structured, ensure_ascii=False).encode())
    row = Row(
        "7-shape-for-llm",
        "shape_for_llm per result",
        len(prepared),
        [
            Candidate(
                "shape_for_llm",
                "ours",
                lambda: [shape_for_llm(r, server_id=SERVER_ID) for r in prepared],
            )
        ],
        "report us/KB",
        extra={"content_kib_total": size / 1024, "content_bytes_per_result": size / len(prepared)},
    )
    return row


#: The version whose row 10 also measures memory (the latest released, as a new user imports).
GENERATED_VERSION = "2026-07-28"
#: Every version with generated models: row 10 has one line each (issue 33).
GENERATED_VERSIONS: tuple[str, ...] = VERSIONS


def _retained_mib(build: Callable[[], object]) -> float:
    """MiB still allocated after `build()` returns, while its output is kept (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    kept = build()
    retained, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return retained / 2**20


def _accepted(validate: Callable[[Any], object], tools: list[dict[str, Any]]) -> list[bool]:
    out = []
    for tool in tools:
        try:
            validate(tool)
            out.append(True)
        except pydantic.ValidationError:
            out.append(False)
    return out


def generated_tool_inputs(version: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The real corpus tools (`workload.base_tools()`, as captured) that both the generated
    `Tool` of `version` and `mcp_types.Tool` accept, in corpus order, the first `limit`."""
    tools = workload.base_tools()
    ours = _accepted(module_for(version).Tool.model_validate, tools)
    peer = _accepted(mcp_types.Tool.model_validate, tools)
    both = [t for t, a, b in zip(tools, ours, peer, strict=True) if a and b]
    return both[:limit]


def row_generated_tool(version: str, tools: list[dict[str, Any]], memory: bool = False) -> Row:
    """10. The generated `Tool.model_validate` of `version` vs `mcp_types.Tool.model_validate` on
    the same real corpus tools; with `memory`, the memory 10,000 models of each retain in `extra`
    (an untimed tracemalloc pass)."""
    ours_model = module_for(version).Tool
    ours_validate, peer_validate = ours_model.model_validate, mcp_types.Tool.model_validate
    ours_name = f"conduit_mcp_wire.{ours_model.__module__.rsplit('.', 1)[1]}.Tool"

    def verify(outputs: dict[str, object]) -> None:
        for name in (ours_name, "mcp_types.Tool.model_validate"):
            built = outputs[name]
            assert isinstance(built, list) and len(built) == len(tools)

    row = Row(
        f"10-generated-tool-{version}",
        f"generated Tool.model_validate ({version}, corpus tools)",
        len(tools),
        [
            Candidate(ours_name, "ours", lambda: [ours_validate(t) for t in tools]),
            Candidate(
                "mcp_types.Tool.model_validate", "peer", lambda: [peer_validate(t) for t in tools]
            ),
        ],
        ">= 1x (as fast)" + ("; memory <= peer" if memory else ""),
        1.0,
        verify,
        {"version": version, "corpus_tools": len(tools)},
    )
    if memory:
        many = (tools * (10_000 // max(1, len(tools)) + 1))[:10_000]
        row.extra["mib_per_10000_ours"] = _retained_mib(lambda: [ours_validate(t) for t in many])
        row.extra["mib_per_10000_peer"] = _retained_mib(lambda: [peer_validate(t) for t in many])
    return row


def finish_row_10(row: Row) -> None:
    """Row 10 is as fast as the peer; its memory line also retains no more than the peer's."""
    if "mib_per_10000_ours" in row.extra:
        memory_ok = row.extra["mib_per_10000_ours"] <= row.extra["mib_per_10000_peer"]
        row.extra["met_memory"] = memory_ok
        row.met = bool(row.met) and memory_ok


def finish_row_7(row: Row) -> None:
    """µs per KiB of content (content blocks + structuredContent as compact JSON)."""
    ours = row.role("ours")
    assert ours is not None
    per_result_kib = row.extra["content_bytes_per_result"] / 1024
    row.extra["us_per_kib_median"] = ours.median / per_result_kib
    row.extra["us_per_kib_min"] = ours.min / per_result_kib


def _subprocess_seconds(
    args: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """Run a child to completion: (wall s, CPU s of the child and its children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{args} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


_IMPORT_PROBE = """
import sys, time
if sys.argv[1] == "warm":
    import pydantic  # noqa: F401
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[2] == "peer":
    import mcp_types  # noqa: F401
else:
    import conduit_mcp_wire.v2026_07_28  # noqa: F401
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def codegen_and_import(config: Config) -> dict[str, Any]:
    """8. `codegen/generate.py --check` wall time; import time of the 2026-07-28 models.

    `--check` does all the work of `make generate` (schema pins, patches, pruning,
    datamodel-code-generator for six versions, formatting) but writes nothing.
    """
    out: dict[str, Any] = {
        "generate_check_s": None,
        "generate_check_cpu_s": None,
        "import_repeats": config.import_repeats,
    }
    if config.generate:
        seconds, cpu, _ = _subprocess_seconds([sys.executable, "codegen/generate.py", "--check"])
        out["generate_check_s"] = seconds
        # CPU time of generate.py and its datamodel-codegen children (run in parallel threads):
        # what a quiet machine with as many cores would approach; the wall time is the target.
        out["generate_check_cpu_s"] = cpu
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    # ours: conduit_mcp_wire.v2026_07_28; peer: mcp_types (keys `import_peer_...`), alternating.
    for mode in ("cold", "warm"):
        for who, prefix in (("ours", "import"), ("peer", "import_peer")):
            samples: list[float] = []
            cpu_samples: list[float] = []
            for _ in range(config.import_repeats):
                args = [sys.executable, "-c", _IMPORT_PROBE, mode, who]
                _, _, stdout = _subprocess_seconds(args, env)
                wall, cpu = (float(x) * 1000 for x in stdout.split())
                samples.append(wall)
                cpu_samples.append(cpu)
            # cold: pydantic imported too; warm: pydantic already imported, the module's own cost.
            out[f"{prefix}_{mode}_ms_median"] = statistics.median(samples) if samples else None
            out[f"{prefix}_{mode}_ms_min"] = min(samples) if samples else None
            out[f"{prefix}_{mode}_cpu_ms_median"] = (
                statistics.median(cpu_samples) if samples else None
            )
    out.update(client_import(config.import_repeats))
    return out


def client_import(repeats: int) -> dict[str, Any]:
    """`import conduit_mcp.client` in a fresh process: whole-process wall and CPU time (ms).

    Bytecode as an installed package has it (written by a first, untimed run; the inherited
    `PYTHONDONTWRITEBYTECODE` is dropped), so the figure is the import, not the compiler.
    Target: <= 100 ms whole process. `python -c pass` is measured alongside (the interpreter's
    own start).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out: dict[str, Any] = {}
    if repeats <= 0:
        return out
    _subprocess_seconds([sys.executable, "-c", "import conduit_mcp.client"], env)  # bytecode
    samples: dict[str, tuple[list[float], list[float]]] = {"client": ([], []), "bare": ([], [])}
    for _ in range(repeats):
        for name, code in (("client", "import conduit_mcp.client"), ("bare", "pass")):
            wall, cpu, _ = _subprocess_seconds([sys.executable, "-c", code], env)
            samples[name][0].append(wall * 1000)
            samples[name][1].append(cpu * 1000)
    for name, (wall_ms, cpu_ms) in samples.items():
        out[f"import_{name}_process_ms_median"] = statistics.median(wall_ms)
        out[f"import_{name}_process_ms_min"] = min(wall_ms)
        out[f"import_{name}_process_cpu_ms_median"] = statistics.median(cpu_ms)
    out["import_client_met"] = out["import_client_process_ms_median"] <= 100
    return out


def scale(config: Config, pages: dict[int, bytes]) -> dict[str, Any]:
    """9. `intake_json` (and `intake` of parsed dicts) of 1,000 and 10,000 tools."""
    small, large = config.scale
    parsed = {n: orjson.loads(pages[n]) for n in (small, large)}
    candidates = [
        (
            f"intake_json {n}",
            n,
            lambda n=n: intake_json(
                SERVER_ID, pages[n], transport="streamable-http", protocol_version="2026-07-28"
            ),
        )
        for n in (small, large)
    ] + [
        (
            f"intake {n}",
            n,
            lambda n=n: intake(
                SERVER_ID, parsed[n], transport="streamable-http", protocol_version="2026-07-28"
            ),
        )
        for n in (small, large)
    ]
    # The parse floor at both sizes: how much of any growth is the parser's (and the memory's).
    candidates += [
        (f"orjson.loads {n}", n, lambda n=n: orjson.loads(pages[n])) for n in (small, large)
    ]
    times: dict[str, list[float]] = {name: [] for name, _, _ in candidates}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in candidates}
    for _, _, fn in candidates:
        fn()  # warm
    for r in range(config.rounds):
        for i in range(len(candidates)):
            name, _, fn = candidates[(r + i) % len(candidates)]
            ns, cpu_ns, _ = timed(fn)
            times[name].append(ns / 1e6)
            cpu[name].append(cpu_ns / 1e6)
    out: dict[str, Any] = {"sizes": [small, large]}
    for name, n, _ in candidates:
        key = name.replace(" ", "_")
        out[f"{key}_ms_median"] = statistics.median(times[name])
        out[f"{key}_ms_min"] = min(times[name])
        out[f"{key}_cpu_ms_median"] = statistics.median(cpu[name])
        out[f"{key}_us_per_tool_median"] = statistics.median(times[name]) * 1000 / n
    for fn_name in ("intake_json", "intake", "orjson.loads"):
        for kind in ("", "cpu_"):
            ratio = (
                out[f"{fn_name}_{large}_{kind}ms_median"]
                / out[f"{fn_name}_{small}_{kind}ms_median"]
            )
            out[f"{fn_name}_{kind}ratio_large_over_small"] = ratio
            out[f"{fn_name}_{kind}per_item_ratio"] = ratio / (large / small)
    # Peak memory: separate, untimed passes (tracemalloc slows allocation several-fold).
    for n in (small, large):
        data = pages[n]
        gc.collect()
        tracemalloc.start()
        result = intake_json(
            SERVER_ID, data, transport="streamable-http", protocol_version="2026-07-28"
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[f"intake_json_{n}_peak_mib"] = peak / 2**20
        del result
        gc.collect()
        tracemalloc.start()
        tree = orjson.loads(data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[f"orjson_loads_{n}_peak_mib"] = peak / 2**20
        out[f"page_{n}_mib"] = len(data) / 2**20
        del tree
    return out


# -- machine, report ---------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": versions,
        "git_commit": commit or None,
        "git_dirty": dirty,
    }


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _met(value: bool | None, loaded: bool = False) -> str:
    if value and loaded:
        return "loaded"  # reached, but not claimed on a busy machine
    return "-" if value is None else ("yes" if value else "NO")


def claim(met: bool | None, loaded: bool) -> bool | None:
    """What the JSON may say of a target: a target reached under load is `None` (not judged)."""
    return None if (met and loaded) else met


def table(rows: list[Row], extras: dict[str, Any], loaded: bool = False) -> str:
    """The table as GitHub markdown (also readable on a terminal); `loaded`: see `LOAD_LIMIT`."""
    lines = [
        "| # | row | ratio (median) | ratio (min) | ratio (CPU) | target | met"
        " | ours median / min µs | ours CPU µs | peer median / min µs | peer CPU µs | peer |",
        "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        ours, peer = row.role("ours"), row.role("peer")
        lines.append(
            f"| {row.id.split('-', 1)[0]} | {row.title} | {_fmt(row.ratio)}x | "
            f"{_fmt(row.ratio_min)}x | {_fmt(row.ratio_cpu)}x | {row.target} | "
            f"{_met(row.met, loaded)} | "
            f"{_fmt(ours.median if ours else None)} / {_fmt(ours.min if ours else None)} | "
            f"{_fmt(ours.cpu_median if ours else None)} | "
            f"{_fmt(peer.median if peer else None)} / {_fmt(peer.min if peer else None)} | "
            f"{_fmt(peer.cpu_median if peer else None)} | {peer.name if peer else '-'} |"
        )
    lines.append("")
    lines.append("Other candidates (µs per item, median / min wall, median CPU):")
    lines.append("")
    for row in rows:
        for c in row.candidates:
            if c.role in ("floor", "info"):
                lines.append(
                    f"- row {row.id.split('-', 1)[0]} ({row.title}), {c.name} ({c.role}): "
                    f"{_fmt(c.median)} / {_fmt(c.min)} (CPU {_fmt(c.cpu_median)})"
                )
    r2 = next(r for r in rows if r.id.startswith("2-"))
    lines.append(
        f"- row 2, intake_json / orjson.loads: {_fmt(r2.extra['ours_over_floor'])}x "
        f"(target <= 3x: {_met(r2.extra['met_vs_floor'], loaded)}); beats peer: "
        f"{_met(r2.extra['met_vs_peer'], loaded)}"
    )
    cold = extras["row6_cold"]
    lines.append(
        f"- row 6, cold first call (cache miss), {cold['schemas']} distinct schemas: "
        f"{_fmt(cold['cold_median_us'], 0)} µs median, CPU {_fmt(cold['cold_cpu_median_us'], 0)}"
        f" µs (target <= 100 µs and <= 2x jsonschema-rs: {_met(cold['cold_met'], loaded)}; "
        f"jsonschema-rs compile + is_valid {_fmt(cold['jsonschema_rs_cold_median_us'], 0)} µs, "
        f"CPU {_fmt(cold['jsonschema_rs_cold_cpu_median_us'], 0)} µs; jsonschema check_schema "
        "+ compile "
        f"+ is_valid {_fmt(cold['jsonschema_cold_median_us'], 0)} µs)"
    )
    r7 = next(r for r in rows if r.id.startswith("7-"))
    lines.append(
        f"- row 7, shape_for_llm: {_fmt(r7.extra['us_per_kib_median'])} µs per KiB of content "
        f"(median; {_fmt(r7.extra['content_bytes_per_result'], 0)} bytes per result on average)"
    )
    r10 = next(r for r in rows if "mib_per_10000_ours" in r.extra)
    lines.append(
        f"- row 10, memory retained by 10,000 Tool models from dicts: "
        f"{_fmt(r10.extra['mib_per_10000_ours'], 1)} MiB generated, "
        f"{_fmt(r10.extra['mib_per_10000_peer'], 1)} MiB mcp_types "
        f"(target <= peer: {_met(r10.extra['met_memory'])})"
    )
    gen = extras["row8"]
    gen_s = gen["generate_check_s"]
    lines.append(
        f"- row 8, codegen/generate.py --check (six versions): "
        f"{'skipped' if gen_s is None else f'{gen_s:.1f} s'} wall, "
        f"{_fmt(gen['generate_check_cpu_s'], 1)} s CPU (target < 15 s: "
        f"{_met(None if gen_s is None else gen_s < 15, loaded)}); "
        f"import conduit_mcp_wire.v2026_07_28: "
        f"{_fmt(gen['import_cold_ms_median'], 0)} ms with pydantic, "
        f"{_fmt(gen['import_warm_ms_median'], 0)} ms after pydantic "
        f"({_fmt(gen['import_warm_cpu_ms_median'], 0)} ms CPU; median of "
        f"{gen['import_repeats']} fresh processes); import mcp_types: "
        f"{_fmt(gen['import_peer_cold_ms_median'], 0)} / "
        f"{_fmt(gen['import_peer_warm_ms_median'], 0)} ms"
    )
    if "import_client_met" in gen:
        lines.append(
            f"- import conduit_mcp.client, whole process: "
            f"{_fmt(gen['import_client_process_ms_median'], 0)} ms median wall "
            f"(min {_fmt(gen['import_client_process_ms_min'], 0)}), "
            f"{_fmt(gen['import_client_process_cpu_ms_median'], 0)} ms CPU; `python -c pass` "
            f"{_fmt(gen['import_bare_process_ms_median'], 0)} ms (target <= 100 ms: "
            f"{_met(gen['import_client_met'], loaded)})"
        )
    sc = extras["row9"]
    small, large = sc["sizes"]
    lines.append(
        f"- row 9, intake_json of {small:,} / {large:,} tools: "
        f"{_fmt(sc[f'intake_json_{small}_ms_median'], 1)} / "
        f"{_fmt(sc[f'intake_json_{large}_ms_median'], 1)} ms "
        f"(ratio {_fmt(sc['intake_json_ratio_large_over_small'])}, per tool "
        f"{_fmt(sc['intake_json_per_item_ratio'])}x; on CPU time "
        f"{_fmt(sc['intake_json_cpu_per_item_ratio'])}x; orjson.loads alone "
        f"{_fmt(sc['orjson.loads_per_item_ratio'])}x); intake of parsed dicts "
        f"{_fmt(sc[f'intake_{small}_ms_median'], 1)} / {_fmt(sc[f'intake_{large}_ms_median'], 1)}"
        f" ms; peak memory {_fmt(sc[f'intake_json_{small}_peak_mib'], 1)} / "
        f"{_fmt(sc[f'intake_json_{large}_peak_mib'], 1)} MiB for pages of "
        f"{_fmt(sc[f'page_{small}_mib'], 1)} / {_fmt(sc[f'page_{large}_mib'], 1)} MiB "
        f"(orjson.loads alone {_fmt(sc[f'orjson_loads_{large}_peak_mib'], 1)} MiB); "
        f"targets: {large:,} in < 1 s: {_met(extras['row9_met_time'], loaded)}, linear: "
        f"{_met(extras['row9_met_linear'], loaded)}"
    )
    return "\n".join(lines)


def row_json(row: Row, loaded: bool = False) -> dict[str, Any]:
    """One row as JSON; `loaded`: a reached target is written `met: null`, `met_if_quiet`."""
    return {
        "id": row.id,
        "title": row.title,
        "items": row.items,
        "unit": "us per item",
        "candidates": [
            {
                "name": c.name,
                "role": c.role,
                "median_us": c.median,
                "min_us": c.min,
                "cpu_median_us": c.cpu_median,
                "rounds_us": c.times_us,
                "rounds_cpu_us": c.cpu_us,
            }
            for c in row.candidates
        ],
        "ratio": row.ratio,
        "ratio_min": row.ratio_min,
        "ratio_cpu": row.ratio_cpu,
        "target": row.target,
        "met": claim(row.met, loaded),
        "met_if_quiet": row.met,
        **({"extra": row.extra} if row.extra else {}),
    }


def _measure_all(
    config: Config,
    tools: list[dict[str, Any]],
    pages: dict[int, bytes],
    results: list[dict[str, Any]],
    pairs: list[workload.Pair],
    log: Callable[[str], None],
) -> tuple[list[Row], dict[str, Any]]:
    """Every row, in order: the timed rows, then row 6's cold calls, row 8 and row 9."""
    rows: list[Row] = []
    steps: list[Callable[[], Row]] = [
        lambda: row_tool_from_wire(tools),
        lambda: row_tools_list_bytes(pages[config.items], config.items, config.rounds),
        lambda: row_tool_result(results),
        lambda: row_conformance(results, "result"),
        lambda: row_conformance(tools, "tool"),
        lambda: row_fingerprint(tools),
        lambda: row_validate(pairs),
        lambda: row_shape(results),
    ]
    limit = config.items if config.quick else None
    steps += [
        partial(
            row_generated_tool,
            version,
            generated_tool_inputs(version, limit),
            memory=version == GENERATED_VERSION,
        )
        for version in GENERATED_VERSIONS
    ]
    for step in steps:
        row = step()
        log(f"row {row.id} ({row.items} items x {config.rounds} rounds) ...")
        rows.append(measure(row, config.rounds))
    by_id = {row.id.split("-", 1)[0]: row for row in rows}
    finish_row_2(by_id["2"])
    finish_row_7(by_id["7"])
    for row in rows:
        if row.id.startswith("10-"):
            finish_row_10(row)
    extras: dict[str, Any] = {}
    log("row 6: cold first calls ...")
    extras["row6_cold"] = cold_validation(pairs, max(1, config.rounds // 2))
    rows[6].extra["cold"] = extras["row6_cold"]
    log("row 8: codegen and import time ...")
    extras["row8"] = codegen_and_import(config)
    log("row 9: scale ...")
    extras["row9"] = sc = scale(config, pages)
    large = config.scale[1]
    extras["row9_met_time"] = sc[f"intake_json_{large}_ms_median"] < 1000
    extras["row9_met_linear"] = sc["intake_json_per_item_ratio"] <= 1.3
    return rows, extras


def run(
    config: Config, log: Callable[[str], None] = print, *, force: bool = False
) -> dict[str, Any]:
    """Build the workload, measure every row; returns the JSON report (and prints the table).

    `force`: call rows met even when the machine is loaded (see `LOAD_LIMIT`).
    """
    started = time.perf_counter()
    info = machine()
    log(f"load average {', '.join(f'{x:.2f}' for x in info['loadavg_start'])} (1, 5, 15 min)")
    log(f"building workload (seed {config.seed}) ...")
    small, large = config.scale
    tools = workload.tools(max(config.items, large), config.seed)
    pages = {n: workload.page_bytes(tools[:n]) for n in {config.items, small, large}}
    tools = tools[: config.items]
    results = workload.results(config.items, config.seed)
    pairs = workload.structured_pairs(config.pairs, config.seed)
    # The workload lives for the whole run: freeze it out of the collector, so that the
    # gc.collect() before each timed batch stays cheap and collects only what a batch made.
    gc.collect()
    gc.freeze()
    try:
        rows, extras = _measure_all(config, tools, pages, results, pairs, log)
    finally:
        gc.unfreeze()
    sc = extras["row9"]
    info["loadavg_end"] = list(os.getloadavg())
    peak_load = max(info["loadavg_start"][0], info["loadavg_end"][0])
    loaded = peak_load > LOAD_LIMIT and not force
    info["load_limit"] = LOAD_LIMIT
    info["loaded"] = loaded
    info["forced"] = force
    gen_s = extras["row8"]["generate_check_s"]
    report = {
        "machine": info,
        "config": {
            "quick": config.quick,
            "rounds": config.rounds,
            "items": config.items,
            "pairs": config.pairs,
            "scale": list(config.scale),
            "seed": config.seed,
            "conformance_version": CONFORMANCE_VERSION,
            "validation_version": VALIDATION_VERSION,
        },
        "workload": workload.pool_summary(config.seed),
        "rows": [row_json(r, loaded) for r in rows],
        "codegen": {
            **extras["row8"],
            "target": "generate < 15 s",
            "met": claim(None if gen_s is None else gen_s < 15, loaded),
        },
        "scale": {
            **sc,
            "target": "10,000 tools < 1 s; linear (per-tool ratio large/small <= 1.3)",
            "met_time": claim(extras["row9_met_time"], loaded),
            "met_linear": claim(extras["row9_met_linear"], loaded),
        },
        "wall_s": time.perf_counter() - started,
    }
    text = table(rows, extras, loaded)
    report["table_markdown"] = text
    log("")
    load = ", ".join(f"{x:.1f}" for x in info["loadavg_start"])
    end = ", ".join(f"{x:.1f}" for x in info["loadavg_end"])
    log(
        f"{info['cpu']} ({info['cpus']} CPUs), Python {info['python']}, load average {load} at the"
        f" start, {end} at the end"
    )
    if loaded:
        log(
            f"LOADED: 1-minute load {peak_load:.1f} > {LOAD_LIMIT}: no row is called met "
            "('loaded' where the target was reached; --force to judge anyway)"
        )
    log(text)
    log(f"\nwall time {report['wall_s']:.0f} s")
    return report


def side_rows(
    quick: bool, loaded: bool, log: Callable[[str], None] = print
) -> list[dict[str, Any]]:
    """The rows of every module in `SIDE_ROWS`, in order, each printed as one JSON line;
    `loaded`: a reached target is written `met: null` with `met_if_quiet` (see `claim`)."""
    import importlib

    found: list[dict[str, Any]] = []
    for name in SIDE_ROWS:
        module = importlib.import_module(f"bench.{name}")
        log(f"side rows: bench/{name}.py ...")
        for row in module.rows(quick):
            # A module that judged its own load already wrote `met: null` and `met_if_quiet`.
            row["met_if_quiet"] = row.get("met_if_quiet", row.get("met"))
            row["met"] = claim(row.get("met"), loaded)
            log(json.dumps(row))
            found.append(row)
    return found


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 2 rounds, no codegen")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per row")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the JSON (default .cache/bench/results.json; --quick writes none)",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also write the committed reference result, bench/results.json",
    )
    parser.add_argument(
        "--force", action="store_true", help=f"call rows met even under load > {LOAD_LIMIT}"
    )
    parser.add_argument(
        "--no-proxy",
        action="store_true",
        help=f"leave out the side rows ({', '.join(f'bench/{n}.py' for n in SIDE_ROWS)})",
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else FULL
    if args.rounds is not None:
        config = dataclasses.replace(config, rounds=args.rounds)
    report = run(config, force=args.force)
    if not args.no_proxy:
        report["side_rows"] = side_rows(config.quick, bool(report["machine"]["loaded"]))
    output = args.output if args.output is not None else (None if config.quick else RESULTS_FILE)
    outputs = [output] if output is not None else []
    if args.reference:
        outputs.append(REFERENCE_FILE)
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
