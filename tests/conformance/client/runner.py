"""Run the official MCP conformance scenarios against `python -m tests.conformance.client`.

`python -m tests.conformance.client.runner` (what `make conformance` runs) installs what it needs
(see `install`), runs every entry of `RUNS` concurrently — one `conformance client --scenario S
--spec-version V` process each, with its own mock server on a free port — prints one line per
run and exits 1 when any run differs from `EXPECTED_CHECKS`.

A run is judged on the suite's `checks.json`: every check must appear with exactly the status
`EXPECTED_CHECKS` gives it (so a scenario the suite skipped, a check that vanished and a check
that newly appeared all show), and the suite must exit 0 — or 1 when the run has a listed
expected failure. An expected failure is a check the suite fails for a reason outside this
library (a bug in the suite); each one is listed, with its reason, in `EXPECTED_FAILURES`, and
a listed check that starts passing is reported, so the table never goes stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .install import REPO_ROOT, Installed, install_conformance, install_node, require_npm

SUCCESS: Final = "SUCCESS"
FAILURE: Final = "FAILURE"
SKIPPED: Final = "SKIPPED"
WARNING: Final = "WARNING"
# Worst first: when a check name repeats, its worst status is its verdict.
_SEVERITY: Final = {FAILURE: 0, WARNING: 1, SUCCESS: 2, SKIPPED: 3, "INFO": 4}

#: Seconds the suite gives the client per scenario (its `--timeout`, in ms on the command line).
CLIENT_TIMEOUT_S: Final = 60
#: Seconds before one whole suite process is killed.
RUN_TIMEOUT_S: Final = 180


@dataclass(frozen=True, slots=True, order=True)
class Run:
    """One scenario at one protocol version."""

    scenario: str
    version: str

    def __str__(self) -> str:
        return f"{self.scenario}@{self.version}"


#: What `make conformance` runs: the issue's six scenarios, each at every protocol version of
#: 2025-11-25 and 2026-07-28 the suite lists it for (`conformance list`: tools_call
#: [2025-06-18, 2025-11-25, 2026-07-28], json-schema-2020-12-preservation [2025-11-25,
#: 2026-07-28], the other four [2026-07-28]). 2025-11-25 runs the initialize handshake,
#: 2026-07-28 the stateless per-request-metadata wire.
RUNS: Final = (
    Run("tools_call", "2025-11-25"),
    Run("tools_call", "2026-07-28"),
    Run("http-standard-headers", "2026-07-28"),
    Run("http-custom-headers", "2026-07-28"),
    Run("http-invalid-tool-headers", "2026-07-28"),
    Run("json-schema-ref-no-deref", "2026-07-28"),
    Run("json-schema-2020-12-preservation", "2025-11-25"),
    Run("json-schema-2020-12-preservation", "2026-07-28"),
)

_PRESERVATION: Final = {
    name: SUCCESS
    for name in (
        "JsonSchema2020_12ClientToolFound",
        "JsonSchema2020_12ClientEchoCompleted",
        "JsonSchema2020_12Client$SchemaPreserved",
        "JsonSchema2020_12Client$DefsPreserved",
        "JsonSchema2020_12ClientAdditionalPropertiesPreserved",
        "JsonSchema2020_12ClientCompositionKeywordsPreserved",
        "JsonSchema2020_12ClientConditionalKeywordsPreserved",
        "JsonSchema2020_12ClientAnchorKeywordPreserved",
        "WireSchemaValid",
    )
}

#: Every check (by its `name`, unique within a run) each run must report, with its status.
#: Worked out from the scenario sources of 0.2.0-alpha.12 (dist/index.js: each scenario's
#: `getChecks`, and `WireSchemaValid` for the scenarios whose mock server validates the wire):
#: - tools_call: `ToolAddNumbers`; its mock server (stateful or stateless) validates the wire.
#: - http-standard-headers: one `ClientMcpMethodHeader_<method>` per method sent and one
#:   `ClientMcpNameHeader_<method>` for tools/call, resources/read, prompts/get; the methods of
#:   the 2025 handshake (initialize, notifications/initialized) are SKIPPED on the 2026 wire,
#:   which has no handshake. No wire validation (the scenario's own HTTP server).
#: - http-custom-headers: `ClientSupportsCustomHeaders`, one `ClientCustomHeader_<Header>` per
#:   annotated argument sent with a non-null value (14), `ClientCustomHeaderNoMirrorNumber`,
#:   `ClientCustomHeaderNoMirrorUnannotated`, `ClientCustomHeaderOmitNull`.
#: - http-invalid-tool-headers: `ClientKeepsValidTool` and `ClientRejectsInvalidTool_<tool>`
#:   for the 11 invalid tools (the tools/list gate check appears only when it fails).
#: - json-schema-ref-no-deref: `NoNetworkRefDereference`.
#: - json-schema-2020-12-preservation: 8 checks, plus `WireSchemaValid`; the SEP-2106 ones are
#:   SUCCESS at 2025-11-25 too when the keywords survive (SKIPPED there only on a miss).
EXPECTED_CHECKS: Final[Mapping[Run, Mapping[str, str]]] = {
    Run("tools_call", "2025-11-25"): {"ToolAddNumbers": SUCCESS, "WireSchemaValid": SUCCESS},
    Run("tools_call", "2026-07-28"): {"ToolAddNumbers": SUCCESS, "WireSchemaValid": SUCCESS},
    Run("http-standard-headers", "2026-07-28"): {
        "ClientMcpMethodHeader_tools_list": SUCCESS,
        "ClientMcpMethodHeader_tools_call": SUCCESS,
        "ClientMcpNameHeader_tools_call": SUCCESS,
        "ClientMcpMethodHeader_resources_list": SUCCESS,
        "ClientMcpMethodHeader_resources_read": SUCCESS,
        "ClientMcpNameHeader_resources_read": SUCCESS,
        "ClientMcpMethodHeader_prompts_list": SUCCESS,
        "ClientMcpMethodHeader_prompts_get": SUCCESS,
        "ClientMcpNameHeader_prompts_get": SUCCESS,
        "ClientMcpMethodHeader_initialize": SKIPPED,
        "ClientMcpMethodHeader_notifications_initialized": SKIPPED,
    },
    Run("http-custom-headers", "2026-07-28"): {
        "ClientSupportsCustomHeaders": SUCCESS,
        "ClientCustomHeader_Region": SUCCESS,
        "ClientCustomHeader_Priority": SUCCESS,
        "ClientCustomHeader_Verbose": SUCCESS,
        "ClientCustomHeader_Debug": SUCCESS,
        "ClientCustomHeader_EmptyVal": SUCCESS,
        "ClientCustomHeader_Method": SUCCESS,
        "ClientCustomHeaderNoMirrorNumber": SUCCESS,
        "ClientCustomHeader_NonAscii": SUCCESS,
        "ClientCustomHeader_Whitespace": SUCCESS,
        "ClientCustomHeader_LeadingSpace": SUCCESS,
        "ClientCustomHeader_TrailingSpace": SUCCESS,
        "ClientCustomHeader_InternalSpace": SUCCESS,
        "ClientCustomHeader_ControlChar": SUCCESS,
        "ClientCustomHeader_CrLf": SUCCESS,
        "ClientCustomHeader_Tab": SUCCESS,
        "ClientCustomHeaderNoMirrorUnannotated": SUCCESS,
        "ClientCustomHeaderOmitNull": SUCCESS,
    },
    Run("http-invalid-tool-headers", "2026-07-28"): {
        "ClientKeepsValidTool": SUCCESS,
        **{
            f"ClientRejectsInvalidTool_{tool}": SUCCESS
            for tool in (
                "invalid_empty_header",
                "invalid_object_header",
                "invalid_array_header",
                "invalid_null_header",
                "invalid_number_header",
                "invalid_duplicate_same_case",
                "invalid_duplicate_diff_case",
                "invalid_space_in_name",
                "invalid_colon_in_name",
                "invalid_non_ascii_name",
                "invalid_control_char_name",
            )
        },
    },
    Run("json-schema-ref-no-deref", "2026-07-28"): {"NoNetworkRefDereference": SUCCESS},
    Run("json-schema-2020-12-preservation", "2025-11-25"): _PRESERVATION,
    Run("json-schema-2020-12-preservation", "2026-07-28"): _PRESERVATION,
}

#: Checks the suite fails for a reason outside this library: {run: {check name: reason}}.
#: Each one must also be `FAILURE` in `EXPECTED_CHECKS`. None so far: all runs pass.
EXPECTED_FAILURES: Final[Mapping[Run, Mapping[str, str]]] = {}


@dataclass(frozen=True)
class RunResult:
    """What one suite process did.

    Attributes:
        run: the scenario and version.
        exit_code: the suite's exit status (`None`: killed after `RUN_TIMEOUT_S`).
        statuses: check name -> status (the worst one when a name repeats).
        seconds: wall time of the suite process.
        output: the suite's own stdout and stderr.
        client_stderr: the client's stderr as the suite saved it (`""` when none).
    """

    run: Run
    exit_code: int | None
    statuses: dict[str, str]
    seconds: float
    output: str
    client_stderr: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)


def client_command() -> str:
    """The command line the suite runs (it splits it on spaces and appends the server URL).

    Raises:
        RuntimeError: the Python path holds a space, which the suite's split would break.
    """
    if " " in sys.executable:
        raise RuntimeError(f"the conformance runner cannot run a Python at {sys.executable!r}")
    return f"{sys.executable} -m tests.conformance.client"


def _environment() -> dict[str, str]:
    # The suite sets the MCP_CONFORMANCE_* variables itself; stale ones must not leak in.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_CONFORMANCE_")}
    env["NODE_NO_WARNINGS"] = "1"
    env["NO_COLOR"] = "1"
    return env


def run_one(node: Path, suite: Path, run: Run, out_dir: Path) -> RunResult:
    """Run one scenario at one version and read its `checks.json`."""
    results = out_dir / f"{run.scenario}-{run.version}"
    results.mkdir(parents=True)
    argv = [
        str(node),
        str(suite),
        "client",
        "--command",
        client_command(),
        "--scenario",
        run.scenario,
        "--spec-version",
        run.version,
        "--timeout",
        str(CLIENT_TIMEOUT_S * 1000),
        "-o",
        str(results),
    ]
    start = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            cwd=REPO_ROOT,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        exit_code: int | None = proc.returncode
        output = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        exit_code, output = None, f"killed after {RUN_TIMEOUT_S} s: {exc}"
    seconds = time.monotonic() - start
    checks: list[dict[str, Any]] = []
    client_stderr = ""
    for found in results.glob("*/checks.json"):  # one folder: <scenario>-<timestamp>
        checks = json.loads(found.read_text(encoding="utf-8"))
        stderr = found.parent / "stderr.txt"
        client_stderr = stderr.read_text(encoding="utf-8") if stderr.is_file() else ""
    statuses: dict[str, str] = {}
    for check in checks:
        name, status = str(check.get("name")), str(check.get("status"))
        if name not in statuses or _SEVERITY.get(status, 0) < _SEVERITY.get(statuses[name], 0):
            statuses[name] = status
    return RunResult(run, exit_code, statuses, seconds, output, client_stderr, checks)


def problems(result: RunResult) -> list[str]:
    """Everything about a run that differs from `EXPECTED_CHECKS` / `EXPECTED_FAILURES`."""
    expected = EXPECTED_CHECKS[result.run]
    allowed = EXPECTED_FAILURES.get(result.run, {})
    found: list[str] = []
    for name, want in expected.items():
        got = result.statuses.get(name, "missing")
        if got != want:
            if name in allowed and got == SUCCESS:
                found.append(f"{name}: listed as an expected failure ({allowed[name]}) but passed")
            else:
                found.append(f"{name}: expected {want}, got {got}")
        elif want == FAILURE and name not in allowed:
            found.append(f"{name}: expected FAILURE without a reason in EXPECTED_FAILURES")
    for name, got in sorted(result.statuses.items()):
        if name not in expected:
            found.append(f"{name}: unexpected check ({got})")
    want_exit = 1 if allowed else 0
    if result.exit_code != want_exit:
        found.append(f"the suite exited {result.exit_code}, expected {want_exit}")
    return found


def run_all(node: Path, suite: Path, runs: tuple[Run, ...] = RUNS) -> list[RunResult]:
    """Run every scenario concurrently (each has its own server on a free port)."""
    with tempfile.TemporaryDirectory(prefix="conduit-conformance-") as tmp:
        workers = min(len(runs), max(2, os.cpu_count() or 2))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_one, node, suite, run, Path(tmp)) for run in runs]
            return [future.result() for future in futures]


def install_all() -> tuple[Installed, Installed]:
    """Resolve Node >= 22 and the suite, installing both at once when cold."""
    npm = require_npm()
    with ThreadPoolExecutor(max_workers=2) as pool:
        node = pool.submit(install_node, npm)
        suite = pool.submit(install_conformance, npm)
        return node.result(), suite.result()


def main() -> int:
    """Install, run, print one line per run; 0 when every run is as expected, else 1."""
    start = time.monotonic()
    node, suite = install_all()
    print(f"node: {node.path} ({node.how}, {node.seconds:.1f} s)")
    print(f"suite: {suite.path.parents[1]} ({suite.how}, {suite.seconds:.1f} s)")
    results = run_all(node.path, suite.path)
    failed = 0
    for result in results:
        issues = problems(result)
        passed = sum(1 for s in result.statuses.values() if s == SUCCESS)
        skipped = sum(1 for s in result.statuses.values() if s == SKIPPED)
        xfail = len(EXPECTED_FAILURES.get(result.run, {}))
        verdict = "ok" if not issues else "UNEXPECTED"
        print(
            f"{verdict:<10} {result.run!s:<45} {passed:>3} passed {skipped:>2} skipped "
            f"{xfail:>2} expected failures  {result.seconds:5.1f} s"
        )
        for issue in issues:
            print(f"           - {issue}")
        if issues:
            failed += 1
            print(f"           client stderr:\n{result.client_stderr}")
            print(f"           suite output (tail):\n{result.output[-3000:]}")
    seconds = time.monotonic() - start
    print(f"{len(results) - failed}/{len(results)} runs as expected in {seconds:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
